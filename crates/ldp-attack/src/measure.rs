//! Empirical measurement: perturb, aggregate, estimate and attack real reports.
//!
//! Every run follows ldp-core's reproducibility contract
//! ([`ldp_core::simulation::for_each_batch`]): genuine users draw from the `Genuine`
//! streams of (seed, run), the attacker's guesses from `Attacker` and fake users from
//! `Fake`, batch by batch. Runs are reproducible and independent of the thread count, and
//! the genuine reports are the same with or without poisoning (common random numbers), so
//! the poisoning gain is measured as a paired difference.

use std::ops::Range;

pub use ldp_core::simulation::Estimate;
use ldp_core::simulation::{Role, Streams, fold_batches, for_each_batch};
use ldp_core::{
    Aggregator, AttackSurface, Clip, FamilyMechanism, MaxGain, Spec, dispatch, parallel,
};
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::data::Population;
use crate::map::{Prior, PriorError, map_guess};
use crate::poison::{PoisonConfig, PoisonKind};
use crate::shape::{TopItems, kl_divergence};

/// The reconstruction attack to run on every genuine report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ReconstructionAttack {
    /// The paper's attack (uniform prior).
    Paper,
    /// The MAP attack with this prior.
    Map(Prior),
}

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureConfig {
    /// Independent runs (at least 1).
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
    /// Reconstruction attack.
    pub attack: ReconstructionAttack,
    /// Optional poisoning attack.
    pub poisoning: Option<PoisonConfig>,
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
    /// KL divergence from the true distribution to the estimate made a distribution
    /// ([`crate::shape::kl_divergence`]).
    pub kl: Estimate,
    /// Spearman's rank correlation of the most frequent items' true and estimated
    /// frequencies ([`crate::shape::TopItems`]); `None` when their true frequencies all
    /// tie.
    pub rank_correlation: Option<Estimate>,
    /// Gain on the target set: the increase of the targets' total estimated frequency
    /// caused by the fake reports.
    pub gain: Option<Estimate>,
    /// Targets each fake report of the maximal gain attack supports. Below the number of
    /// targets when no report supports them all: for local hashing when the seed search
    /// of [`ldp_core::attack_surface::best_seed`] found no seed hashing them all
    /// together, for Hadamard response when they lie in several blocks. The closed form
    /// at this count is `ldp_analytic::epg::expected_with_support`.
    pub targets_supported: Option<u32>,
}

/// Bytes of memory one run's result occupies while a measurement runs (its runs are
/// summarized only at the end).
pub const BYTES_PER_RUN: usize = std::mem::size_of::<Option<RunResult>>();

/// The most fake users one run simulates: at beta near 1, n beta / (1 - beta) has no
/// bound (beta = 0.999999999 at n = 48,842 asks for 5e13).
pub const MAX_FAKE_USERS: u64 = 1_000_000_000;

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
    #[error("at least one run is needed")]
    NoRuns,
    /// The per-run results do not fit in memory.
    #[error("{runs} runs need more memory than can be allocated ({BYTES_PER_RUN} bytes per run)")]
    TooManyRuns {
        /// Runs asked for.
        runs: u64,
    },
    /// The fake fraction asks for more fake users than one run simulates
    /// ([`MAX_FAKE_USERS`]); at beta near 1 their number has no bound.
    #[error(
        "beta = {beta} means {fakes} fake users beside {genuine} genuine ones in every run, more than the {MAX_FAKE_USERS} one run simulates; beta at most {max_beta} fits"
    )]
    TooManyFakes {
        /// The fake fraction.
        beta: f64,
        /// Fake users it asks for.
        fakes: u64,
        /// Genuine users.
        genuine: u64,
        /// The largest fraction that fits.
        max_beta: f64,
    },
    /// The spec cannot run (see [`ldp_core::Spec::build`]).
    #[error(transparent)]
    Param(#[from] ldp_core::ParamError),
    /// A target lies outside the domain.
    #[error("target {target} is outside the domain 0..{k}")]
    TargetOutsideDomain {
        /// The target.
        target: u32,
        /// Domain size.
        k: u32,
    },
    /// The MAP attack's prior does not fit the domain.
    #[error(transparent)]
    Prior(#[from] PriorError),
    /// The numbers of linked reports must be strictly increasing and at least 1.
    #[error("collections must be strictly increasing numbers >= 1, got {collections:?}")]
    Collections {
        /// The numbers given.
        collections: Vec<u32>,
    },
    /// At least one user is needed.
    #[error("at least one user is needed")]
    NoUsers,
    /// A change needs two days.
    #[error("days must be at least 2 (a change is seen between two days), got {days}")]
    Days {
        /// The days given.
        days: u32,
    },
    /// A change rate is a probability.
    #[error("the change rate must lie in [0, 1], got {rate}")]
    ChangeRate {
        /// The rate given.
        rate: f64,
    },
    /// Values cannot change in a population holding one value.
    #[error("every user holds item {item}: a value cannot change to another of the population")]
    OneValue {
        /// The one item.
        item: u32,
    },
    /// The caller asked the measurement to stop (see [`measure_until`]).
    #[error("stopped before every run finished")]
    Stopped,
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
    measure_until(spec, population, config, &|| false)
}

/// [`measure`], giving up with [`MeasureError::Stopped`] once `stop()` returns true (it is
/// asked before each run starts): for interactive callers that let a user interrupt a
/// long simulation. The runs that do complete are those of [`measure`].
pub fn measure_until(
    spec: &Spec,
    population: &Population,
    config: &MeasureConfig,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Measurement, MeasureError> {
    let k = spec.k().get();
    check_setting(k, population, config.runs)?;
    if let ReconstructionAttack::Map(prior) = &config.attack {
        prior.check_len(k as usize)?;
    }
    let poisoning = match &config.poisoning {
        None => None,
        Some(p) => {
            let target = p.targets().max();
            if target >= k {
                return Err(MeasureError::TargetOutsideDomain { target, k });
            }
            // Under attack, an SHE server clips (at the recommended bound unless told).
            Some((p, p.clip()))
        }
    };
    dispatch!(spec.build()?, m => run_all(&m, population, config, poisoning, stop))
}

/// One run's outcome.
#[derive(Debug, Clone, Copy)]
struct RunResult {
    asr: f64,
    mse: f64,
    kl: f64,
    rank_correlation: f64,
    gain: Option<f64>,
}

fn run_all<M: FamilyMechanism + AttackSurface>(
    m: &M,
    pop: &Population,
    config: &MeasureConfig,
    poisoning: Option<(&PoisonConfig, Clip)>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Measurement, MeasureError> {
    if let Some((p, _)) = poisoning {
        let genuine = pop.len() as u64;
        let fakes = p.beta().fake_users(genuine);
        if fakes > MAX_FAKE_USERS {
            let most = MAX_FAKE_USERS as f64;
            return Err(MeasureError::TooManyFakes {
                beta: f64::from(p.beta()),
                fakes,
                genuine,
                max_beta: most / (most + genuine as f64),
            });
        }
    }
    let truth = pop.frequencies();
    let top = TopItems::of(&truth);
    // Prepared once: for LH the maximal gain attack searches seeds.
    let attack = poisoning.map(|(p, clip)| Attack {
        config: p,
        clip,
        plan: (p.kind() == PoisonKind::Mga).then(|| m.plan_max_gain(p.targets().items(), clip)),
        fakes: p.beta().fake_users(pop.len() as u64) as usize,
    });
    let runs = run_count(config.runs)?;
    let mut results: Vec<Option<RunResult>> = Vec::new();
    results
        .try_reserve_exact(runs)
        .map_err(|_| MeasureError::TooManyRuns { runs: config.runs })?;
    results.extend(parallel::map(runs, |run| {
        (!stop()).then(|| {
            one_run(
                m,
                pop,
                &truth,
                top.as_ref(),
                config,
                run as u64,
                attack.as_ref(),
            )
        })
    }));
    let results: Vec<RunResult> = results
        .into_iter()
        .collect::<Option<_>>()
        .ok_or(MeasureError::Stopped)?;
    let asr = Estimate::rate_from_runs(results.iter().map(|r| r.asr), pop.len());
    Ok(Measurement {
        runs: config.runs,
        users: pop.len(),
        fake_users: attack.as_ref().map_or(0, |a| a.fakes),
        asr,
        mse: Estimate::from_runs(results.iter().map(|r| r.mse)),
        kl: Estimate::from_runs(results.iter().map(|r| r.kl)),
        rank_correlation: top
            .as_ref()
            .map(|_| Estimate::from_runs(results.iter().map(|r| r.rank_correlation))),
        gain: attack
            .as_ref()
            .map(|_| Estimate::from_runs(results.iter().filter_map(|r| r.gain))),
        targets_supported: attack
            .as_ref()
            .and_then(|a| a.plan.as_ref().map(|p| p.supported)),
    })
}

/// A poisoning attack ready to run.
struct Attack<'a, R> {
    config: &'a PoisonConfig,
    clip: Clip,
    plan: Option<MaxGain<R>>,
    fakes: usize,
}

fn one_run<M: FamilyMechanism + AttackSurface>(
    m: &M,
    pop: &Population,
    truth: &[f64],
    top: Option<&TopItems>,
    config: &MeasureConfig,
    run: u64,
    attack: Option<&Attack<'_, M::Report>>,
) -> RunResult {
    let genuine = Streams::new(config.seed, run, Role::Genuine);
    let attacker = Streams::new(config.seed, run, Role::Attacker);
    // Without an attack, the paper's server: SHE sums reports unclipped.
    let clip = attack.map_or(Clip::Off, |a| a.clip);
    let items = pop.items();
    // Batch b's users, aggregated into `partial`: the attack's hits.
    let batch = |partial: &mut M::Aggregator, b: u64, users: Range<usize>| {
        let (mut rng, mut attacker_rng) = (genuine.batch(b), attacker.batch(b));
        let (mut scratch, mut likelihoods) = (Vec::new(), Vec::new());
        let mut report = None;
        let mut hits = 0u64;
        for &x in &items[users] {
            let guess = match &config.attack {
                ReconstructionAttack::Paper => m.genuine_user(
                    x,
                    partial,
                    &mut rng,
                    &mut attacker_rng,
                    &mut report,
                    &mut scratch,
                ),
                ReconstructionAttack::Map(prior) => {
                    let report = m
                        .perturb_reusing(x, &mut rng, &mut report)
                        .expect("population items are in the domain");
                    partial
                        .add(report)
                        .expect("genuine reports are valid and fewer than 2^64");
                    map_guess(m, report, prior, &mut likelihoods, &mut attacker_rng)
                }
            };
            hits += u64::from(guess == x);
        }
        hits
    };
    let (server, hits) = if M::Aggregator::EXACT_MERGE {
        fold_batches(
            items.len(),
            || (m.server(clip), 0),
            |(server, hits), b, users| *hits += batch(server, b, users),
            |(server, hits), (other, more)| {
                server.merge(&other).expect("same mechanism");
                *hits += more;
            },
        )
        .expect("at least one user")
    } else {
        // Sums merge in batch order, as any thread count gives them.
        let (mut server, mut hits) = (m.server(clip), 0);
        let outcome: Result<(), std::convert::Infallible> = for_each_batch(
            items.len(),
            |b, users| {
                let mut partial = m.server(clip);
                let h = batch(&mut partial, b, users);
                Ok((partial, h))
            },
            |(partial, h)| {
                server.merge(&partial).expect("same mechanism");
                hits += h;
                Ok(())
            },
        );
        let Ok(()) = outcome;
        (server, hits)
    };
    let clean = server.raw_estimate().expect("at least one user");
    let mse = clean
        .iter()
        .zip(truth)
        .map(|(e, f)| (e - f).powi(2))
        .sum::<f64>()
        / truth.len() as f64;
    let gain = attack.map(|a| {
        let attacked = poison(m, &server, a, config.seed, run);
        a.config
            .targets()
            .items()
            .iter()
            .map(|&t| attacked[t as usize] - clean[t as usize])
            .sum()
    });
    RunResult {
        asr: hits as f64 / pop.len() as f64,
        mse,
        kl: kl_divergence(truth, &clean, pop.len()),
        rank_correlation: top.map_or(f64::NAN, |t| t.rank_correlation(&clean)),
        gain,
    }
}

/// The raw estimate after adding the attack's fake reports to a copy of `clean`. Fake
/// users follow the same batch contract, on the `Fake` streams.
fn poison<M: FamilyMechanism + AttackSurface>(
    m: &M,
    clean: &M::Aggregator,
    attack: &Attack<'_, M::Report>,
    seed: u64,
    run: u64,
) -> Vec<f64> {
    let fake = Streams::new(seed, run, Role::Fake);
    let targets = attack.config.targets();
    let mut server = clean.clone();
    let outcome: Result<(), std::convert::Infallible> = for_each_batch(
        attack.fakes,
        |b, users| {
            let mut rng = fake.batch(b);
            let mut partial = m.server(attack.clip);
            for _ in users {
                let report = match (&attack.plan, attack.config.kind()) {
                    (Some(plan), _) => m.max_gain_report(plan, targets.items(), &mut rng),
                    (None, PoisonKind::Ria) => {
                        let t = targets.items()[rng.random_range(0..targets.len())];
                        m.perturb(t, &mut rng).expect("targets are in the domain")
                    }
                    (None, _) => m.random_output(attack.clip, &mut rng),
                };
                // Fake reports pass the same validation as genuine ones.
                partial
                    .add(&report)
                    .expect("fake reports are valid reports");
            }
            Ok(partial)
        },
        |partial| {
            server.merge(&partial).expect("same mechanism");
            Ok(())
        },
    );
    let Ok(()) = outcome;
    server.raw_estimate().expect("at least one user")
}

/// The checks every measurement makes: the protocol's k is the data's, and a run is asked.
pub(crate) fn check_setting(
    k: u32,
    population: &Population,
    runs: u64,
) -> Result<(), MeasureError> {
    if population.k().get() != k {
        return Err(MeasureError::DomainMismatch {
            spec: k,
            data: population.k().get(),
        });
    }
    if runs == 0 {
        return Err(MeasureError::NoRuns);
    }
    Ok(())
}

/// `runs` as a count of this platform's: one it cannot count cannot be held either.
pub(crate) fn run_count(runs: u64) -> Result<usize, MeasureError> {
    usize::try_from(runs).map_err(|_| MeasureError::TooManyRuns { runs })
}

/// `users` users spread evenly over `all` (user `i * len / users`), or every user with
/// `None` or more users than there are.
pub(crate) fn spread_users(all: &[u32], users: Option<usize>) -> Result<Vec<u32>, MeasureError> {
    Ok(match users {
        Some(0) => return Err(MeasureError::NoUsers),
        Some(n) if n < all.len() => (0..n).map(|i| all[i * all.len() / n]).collect(),
        _ => all.to_vec(),
    })
}
