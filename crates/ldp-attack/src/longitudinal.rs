//! The combined-likelihood attack on t linked reports of one unchanged value, measured on
//! real reports, with and without memoization.
//!
//! The attacker links a user's reports (a device id, a cookie) and guesses the value that
//! maximizes the joint likelihood under a uniform prior. For every pure protocol and every
//! memoized chain that is the item supported by the most reports (`ldp_analytic::longitudinal`
//! shows why), so the attack keeps one score per item: support counts (kept in `f64`,
//! exact below 2^53, so ties stay ties and are broken uniformly); for SHE, the sum of the
//! reports' log-likelihoods. The guess after t reports is evaluated at every requested t
//! on the same reports (common random numbers across t).
//!
//! ```
//! use ldp_attack::longitudinal::{Collection, LinkedConfig, measure_linked};
//! use ldp_attack::Population;
//! use ldp_core::{Epsilon, Protocol, Spec};
//! let pop = Population::adult_age();
//! let oue = Spec::classic(Protocol::Oue, pop.k(), Epsilon::new(1.0)?)?;
//! let config = LinkedConfig { runs: 1, seed: 1, users: Some(500), collections: vec![1, 50] };
//! let m = measure_linked(&Collection::OneShot(oue), &pop, &config)?;
//! assert!(m.asr[0].mean < 0.1 && m.asr[1].mean > 0.8); // fifty linked reports give it away
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ldp_core::longitudinal::{Fresh, Longitudinal, Memoized, Reporter};
use ldp_core::simulation::{Role, Streams, for_each_batch};
use ldp_core::{AttackSurface, Spec, dispatch, dispatch_memoized, parallel};
use serde::{Deserialize, Serialize};

use crate::data::Population;
use crate::map::argmax_uniform;
use crate::measure::{Estimate, MeasureError, check_setting, run_count, spread_users};

/// What each user sends at every collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Collection {
    /// A fresh one-shot report of the value each time (no memoization).
    OneShot(Spec),
    /// A memoized protocol: one memo per user, a fresh report of it each time.
    Memoized(Longitudinal),
    /// A permanent memo: the one-shot report of the value drawn once and replayed each
    /// time (RAPPOR's permanent response alone; for dBitFlip, dBitFlipPM), so linked
    /// reports of one value reveal what one does. When the value changes, a memo is kept
    /// per class of values (`ldp_core::longitudinal::ClassMemo`): per value for most
    /// families, per hashed value for local hashing, dBitFlipPM's for dBitFlip.
    Permanent(Spec),
}

impl Collection {
    /// The domain size.
    pub fn k(&self) -> u32 {
        match self {
            Collection::OneShot(spec) | Collection::Permanent(spec) => spec.k().get(),
            Collection::Memoized(l) => l.domain_size().get(),
        }
    }
}

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkedConfig {
    /// Independent runs (at least 1).
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
    /// Users attacked per run: this many users spread evenly over the population (user
    /// `i * len / users`), or every user with `None`.
    pub users: Option<usize>,
    /// The numbers of linked reports at which to evaluate the attack, strictly increasing
    /// and at least 1. Each user sends as many reports as the largest.
    pub collections: Vec<u32>,
}

impl LinkedConfig {
    /// A configuration evaluating the attack after each of `collections` (in any order,
    /// repeats allowed: they are sorted and deduplicated).
    ///
    /// ```
    /// use ldp_attack::longitudinal::LinkedConfig;
    /// assert_eq!(LinkedConfig::new(2, 7, None, &[30, 1, 30]).collections, vec![1, 30]);
    /// ```
    pub fn new(runs: u64, seed: u64, users: Option<usize>, collections: &[u32]) -> Self {
        let mut sorted = collections.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        Self {
            runs,
            seed,
            users,
            collections: sorted,
        }
    }
}

/// The attack's success rate after each number of collections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkedMeasurement {
    /// Runs.
    pub runs: u64,
    /// Users attacked per run.
    pub users: usize,
    /// The numbers of collections, as asked.
    pub collections: Vec<u32>,
    /// ASR after each number of collections; with one run its SE is the binomial one.
    pub asr: Vec<Estimate>,
}

/// Measures the combined-likelihood attack on `collection`'s reports of `population`.
///
/// Streams: user i's reports come from the `Genuine` stream of its batch (memo first, then
/// the reports in order), the attacker's tie-breaking from `Attacker`: reproducible, and the
/// same on any thread count.
pub fn measure_linked(
    collection: &Collection,
    population: &Population,
    config: &LinkedConfig,
) -> Result<LinkedMeasurement, MeasureError> {
    let k = collection.k();
    check_setting(k, population, config.runs)?;
    if config.collections.first().is_none_or(|&t| t == 0)
        || config.collections.windows(2).any(|w| w[0] >= w[1])
    {
        return Err(MeasureError::Collections {
            collections: config.collections.clone(),
        });
    }
    let all = population.items();
    let items = spread_users(all, config.users)?;
    let count = run_count(config.runs)?;
    let runs: Vec<Vec<f64>> = match collection {
        Collection::OneShot(spec) => {
            dispatch!(spec.build()?, m => run_all(&Fresh(m), k, count, &items, config))
        }
        Collection::Permanent(spec) => {
            dispatch!(spec.build()?, m => run_all(&Memoized::permanent(m), k, count, &items, config))
        }
        Collection::Memoized(l) => {
            dispatch_memoized!(l, m => run_all(&m, k, count, &items, config))?
        }
    };
    let asr = (0..config.collections.len())
        .map(|c| Estimate::rate_from_runs(runs.iter().map(|r| r[c]), items.len()))
        .collect();
    Ok(LinkedMeasurement {
        runs: config.runs,
        users: items.len(),
        collections: config.collections.clone(),
        asr,
    })
}

/// Every run's ASR after each number of collections.
fn run_all<P: Reporter>(
    reporter: &P,
    k: u32,
    runs: usize,
    items: &[u32],
    config: &LinkedConfig,
) -> Vec<Vec<f64>>
where
    P::Mechanism: AttackSurface,
{
    parallel::map(runs, |run| {
        one_run(reporter, k as usize, items, config, run as u64)
    })
}

fn one_run<P: Reporter>(
    reporter: &P,
    k: usize,
    items: &[u32],
    config: &LinkedConfig,
    run: u64,
) -> Vec<f64>
where
    P::Mechanism: AttackSurface,
{
    let genuine = Streams::new(config.seed, run, Role::Genuine);
    let attacker = Streams::new(config.seed, run, Role::Attacker);
    let checkpoints = &config.collections;
    let t_max = *checkpoints.last().expect("validated non-empty");
    let mut hits = vec![0u64; checkpoints.len()];
    let outcome: Result<(), std::convert::Infallible> = for_each_batch(
        items.len(),
        |b, users| {
            let (mut rng, mut attacker_rng) = (genuine.batch(b), attacker.batch(b));
            let mut hits = vec![0u64; checkpoints.len()];
            let (mut scores, mut scratch) = (vec![0.0; k], Vec::new());
            for &x in &items[users] {
                scores.fill(0.0);
                let state = reporter
                    .start(x, &mut rng)
                    .expect("population items are in the domain");
                let mut next = 0;
                for t in 1..=t_max {
                    let report = reporter
                        .report(&state, &mut rng)
                        .expect("population items are in the domain");
                    reporter
                        .mechanism()
                        .add_evidence(&report, &mut scores, &mut scratch);
                    if t == checkpoints[next] {
                        hits[next] += u64::from(
                            argmax_uniform(scores.iter().copied(), &mut attacker_rng) == x,
                        );
                        next += 1;
                    }
                }
            }
            Ok(hits)
        },
        |h| {
            for (total, h) in hits.iter_mut().zip(h) {
                *total += h;
            }
            Ok(())
        },
    );
    let Ok(()) = outcome;
    hits.into_iter()
        .map(|h| h as f64 / items.len() as f64)
        .collect()
}
