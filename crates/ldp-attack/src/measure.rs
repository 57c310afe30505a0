//! Empirical measurement: perturb, aggregate, estimate and attack real reports.
//!
//! Every run draws its genuine users' randomness from the `Genuine` streams of
//! (seed, run), the attacker's guesses from `Attacker` and fake users from `Fake`
//! (ldp-core's `simulation` module): runs are reproducible, independent of the thread
//! count, and the genuine reports are the same with or without poisoning (common random
//! numbers), so the poisoning gain is measured as a paired difference.

use ldp_core::simulation::{Role, USERS_PER_STREAM, stream_rng};
use ldp_core::{Aggregator, AnyMechanism, Spec};
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::adversary::Adversary;
use crate::data::Population;
use crate::map::map_guess;
use crate::poison::{PoisonConfig, PoisonKind};

/// The reconstruction attack to run on every genuine report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ReconstructionAttack {
    /// The paper's attack (uniform prior).
    Paper,
    /// The MAP attack with this prior: non-negative weights per item.
    Map(Vec<f64>),
}

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureConfig {
    /// Independent runs.
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
    /// Reconstruction attack.
    pub attack: ReconstructionAttack,
    /// Optional poisoning attack.
    pub poisoning: Option<PoisonConfig>,
}

/// A mean over runs and its standard error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Mean over runs.
    pub mean: f64,
    /// Standard error of the mean (NaN when it cannot be estimated from one run).
    pub se: f64,
}

/// What a simulation measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Runs.
    pub runs: u64,
    /// Genuine users per run.
    pub users: usize,
    /// Fake users per run (0 without poisoning).
    pub fake_users: usize,
    /// Reconstruction-attack success rate. With one run its SE is the binomial one.
    pub asr: Estimate,
    /// Mean squared error of the raw unbiased estimate over the k items.
    pub mse: Estimate,
    /// Gain on the target set: the increase of the targets' total estimated frequency
    /// caused by the fake reports.
    pub gain: Option<Estimate>,
}

/// Invalid measurement input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MeasureError {
    /// The protocol and the data disagree on k.
    #[error("the protocol has k = {spec} but the data has k = {data}")]
    DomainMismatch {
        /// k of the protocol.
        spec: u32,
        /// k of the data.
        data: u32,
    },
    /// At least one run is needed.
    #[error("runs must be at least 1")]
    NoRuns,
    /// The fake-user fraction must lie in [0, 1).
    #[error("beta must lie in [0, 1), got {0}")]
    Beta(f64),
    /// Targets must be non-empty, distinct and in 0..k.
    #[error("targets must be non-empty, distinct and in 0..{k}: {targets:?}")]
    Targets {
        /// Domain size.
        k: u32,
        /// The targets given.
        targets: Vec<u32>,
    },
    /// The SHE clipping bound must be finite and at least 1.
    #[error("the SHE clipping bound must be finite and >= 1, got {0}")]
    Clip(f64),
    /// The MAP prior must have k non-negative finite weights, not all zero.
    #[error("the prior must have {k} non-negative weights, not all zero")]
    Prior {
        /// Domain size.
        k: u32,
    },
}

/// Runs the simulation of `config` for the protocol instance `spec` on `population`.
///
/// ```
/// use ldp_attack::{measure, MeasureConfig, Population, ReconstructionAttack};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let pop = Population::adult_age();
/// let grr = Spec::classic(Protocol::Grr, pop.k(), Epsilon::new(4.0)?)?;
/// let config = MeasureConfig { runs: 2, seed: 1, attack: ReconstructionAttack::Paper, poisoning: None };
/// let m = measure(&grr, &pop, &config)?;
/// let expected = 4f64.exp() / (4f64.exp() + 99.0); // GRR's ASR is p
/// assert!((m.asr.mean - expected).abs() < 0.01);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn measure(
    spec: &Spec,
    population: &Population,
    config: &MeasureConfig,
) -> Result<Measurement, MeasureError> {
    let k = spec.k().get();
    if population.k().get() != k {
        return Err(MeasureError::DomainMismatch {
            spec: k,
            data: population.k().get(),
        });
    }
    if config.runs == 0 {
        return Err(MeasureError::NoRuns);
    }
    if let ReconstructionAttack::Map(prior) = &config.attack
        && (prior.len() != k as usize
            || prior.iter().any(|w| !(w.is_finite() && *w >= 0.0))
            || prior.iter().sum::<f64>() <= 0.0)
    {
        return Err(MeasureError::Prior { k });
    }
    let clip = match &config.poisoning {
        None => None,
        Some(p) => Some(check_poisoning(p, k, spec.eps().get())?),
    };
    match spec.build() {
        AnyMechanism::Grr(m) => Ok(run_all(&m, population, config, clip)),
        AnyMechanism::SubsetSelection(m) => Ok(run_all(&m, population, config, clip)),
        AnyMechanism::UnaryEncoding(m) => Ok(run_all(&m, population, config, clip)),
        AnyMechanism::LocalHashing(m) => Ok(run_all(&m, population, config, clip)),
        AnyMechanism::SummationHistogram(m) => Ok(run_all(&m, population, config, clip)),
        AnyMechanism::ThresholdHistogram(m) => Ok(run_all(&m, population, config, clip)),
    }
}

/// Validates the poisoning setting; returns the SHE clipping bound to use.
fn check_poisoning(p: &PoisonConfig, k: u32, eps: f64) -> Result<f64, MeasureError> {
    if !(0.0..1.0).contains(&p.beta) {
        return Err(MeasureError::Beta(p.beta));
    }
    let mut sorted = p.targets.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.is_empty() || sorted.len() != p.targets.len() || sorted.iter().any(|&t| t >= k) {
        return Err(MeasureError::Targets {
            k,
            targets: p.targets.clone(),
        });
    }
    let clip = p.she_clip.unwrap_or(1.0 + 20.0 * 2.0 / eps);
    if !(clip.is_finite() && clip >= 1.0) {
        return Err(MeasureError::Clip(clip));
    }
    Ok(clip)
}

struct RunResult {
    asr: f64,
    mse: f64,
    gain: Option<f64>,
}

fn run_all<M: Adversary>(
    m: &M,
    pop: &Population,
    config: &MeasureConfig,
    clip: Option<f64>,
) -> Measurement {
    let log_prior = match &config.attack {
        ReconstructionAttack::Paper => None,
        ReconstructionAttack::Map(w) => Some(crate::map::log_prior(w)),
    };
    let truth = pop.frequencies();
    let results: Vec<RunResult> = (0..config.runs)
        .into_par_iter()
        .map(|run| one_run(m, pop, &truth, config, run, clip, log_prior.as_deref()))
        .collect();
    let fake_users = config
        .poisoning
        .as_ref()
        .map_or(0, |p| fake_count(p.beta, pop.len()));
    let asr = summarize(results.iter().map(|r| r.asr));
    let asr = if config.runs == 1 {
        Estimate {
            se: (asr.mean * (1.0 - asr.mean) / pop.len() as f64).sqrt(),
            ..asr
        }
    } else {
        asr
    };
    Measurement {
        runs: config.runs,
        users: pop.len(),
        fake_users,
        asr,
        mse: summarize(results.iter().map(|r| r.mse)),
        gain: config
            .poisoning
            .as_ref()
            .map(|_| summarize(results.iter().filter_map(|r| r.gain))),
    }
}

/// Fake users so that they are a fraction `beta` of all users.
fn fake_count(beta: f64, genuine: usize) -> usize {
    (beta * genuine as f64 / (1.0 - beta)).round() as usize
}

fn summarize(values: impl Iterator<Item = f64>) -> Estimate {
    let v: Vec<f64> = values.collect();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let se = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt()
    } else {
        f64::NAN
    };
    Estimate { mean, se }
}

fn one_run<M: Adversary>(
    m: &M,
    pop: &Population,
    truth: &[f64],
    config: &MeasureConfig,
    run: u64,
    clip: Option<f64>,
    log_prior: Option<&[f64]>,
) -> RunResult {
    let seed = config.seed;
    let partials: Vec<(M::Aggregator, u64)> = pop
        .items()
        .par_chunks(USERS_PER_STREAM)
        .enumerate()
        .map(|(b, chunk)| {
            let mut genuine = stream_rng(seed, run, Role::Genuine, b as u64);
            let mut attacker = stream_rng(seed, run, Role::Attacker, b as u64);
            let mut server = m.server(clip);
            let mut scratch = Vec::new();
            let mut likelihoods = Vec::new();
            let mut hits = 0u64;
            for &x in chunk {
                let report = m
                    .perturb(x, &mut genuine)
                    .expect("population items are in the domain");
                let guess = match log_prior {
                    None => m.observe_and_guess(&mut server, &report, &mut scratch, &mut attacker),
                    Some(lp) => {
                        server.add(&report).expect("genuine reports are valid");
                        map_guess(m, &report, lp, &mut likelihoods, &mut attacker)
                    }
                };
                hits += u64::from(guess == x);
            }
            (server, hits)
        })
        .collect();
    let mut server = m.server(clip);
    let mut hits = 0;
    for (partial, h) in partials {
        server.merge(&partial).expect("same mechanism");
        hits += h;
    }
    let clean = server.raw_estimate().expect("at least one user");
    let mse = clean
        .iter()
        .zip(truth)
        .map(|(e, f)| (e - f).powi(2))
        .sum::<f64>()
        / truth.len() as f64;
    let gain = config.poisoning.as_ref().map(|p| {
        let attacked = poison(
            m,
            &server,
            p,
            clip.unwrap_or(1.0),
            fake_count(p.beta, pop.len()),
            seed,
            run,
        );
        p.targets
            .iter()
            .map(|&t| attacked[t as usize] - clean[t as usize])
            .sum()
    });
    RunResult {
        asr: hits as f64 / pop.len() as f64,
        mse,
        gain,
    }
}

/// The raw estimate after adding `fakes` fake reports to a copy of `clean`.
fn poison<M: Adversary>(
    m: &M,
    clean: &M::Aggregator,
    p: &PoisonConfig,
    clip: f64,
    fakes: usize,
    seed: u64,
    run: u64,
) -> Vec<f64> {
    let mut server = clean.clone();
    let mut b = 0u64;
    let mut left = fakes;
    while left > 0 {
        let mut rng = stream_rng(seed, run, Role::Fake, b);
        for _ in 0..left.min(USERS_PER_STREAM) {
            let report = match p.kind {
                PoisonKind::Mga => m.max_gain_report(&p.targets, clip, &mut rng),
                PoisonKind::Ria => {
                    let t = p.targets[rng.random_range(0..p.targets.len())];
                    m.perturb(t, &mut rng).expect("targets are in the domain")
                }
                PoisonKind::Roa => m.random_output(clip, &mut rng),
            };
            // Fake reports pass the same validation as genuine ones.
            server.add(&report).expect("fake reports are valid reports");
        }
        left = left.saturating_sub(USERS_PER_STREAM);
        b += 1;
    }
    server.raw_estimate().expect("at least one user")
}
