//! Reproducible randomness: seeded ChaCha streams and batched simulation of many users.
//!
//! # The reproducibility contract
//!
//! Every random draw of a simulation comes from a stream named by
//! `(master seed, run, role, batch)`. The four numbers form the 256-bit ChaCha key and
//! stream id, so distinct names give independent streams. Users are cut into batches of
//! [`USERS_PER_STREAM`] (fixed, not tied to the number of threads), batch b drawing from
//! stream b; batches run in parallel (feature `parallel`) and their results are merged in
//! batch order. A simulation therefore returns identical results on any thread count. The
//! genuine users of a run draw from [`Role::Genuine`] streams whatever else happens in the
//! run, so adding fake users leaves their reports unchanged (common random numbers).
//!
//! [`for_each_batch`] is that contract as one function; [`simulate`], [`perturb_all`] and
//! the measurements of `ldp-attack` are built on it.
//!
//! The front ends (the `ldp` tool, the Python package) draw batch by batch too:
//! [`BatchStreams`] is batch b's generator, seeded stream b when a seed is given, else
//! ChaCha20 keyed by the operating system with stream id b ([`OsStreams`]); the macro
//! [`with_batch_rng!`](crate::with_batch_rng) runs code with it.
//!
//! Deployed clients must not use these deterministic streams: see [`crate::Client`].

use std::fmt;
use std::ops::Range;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

mod stream_rng;
pub use stream_rng::StreamRng;

use crate::aggregate::Aggregator;
use crate::error::ItemOutOfRange;
use crate::mechanism::Mechanism;

/// Who draws from a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Genuine users perturbing their items.
    Genuine,
    /// Fake users injected by a poisoning attacker.
    Fake,
    /// The adversary's own coin flips (e.g. tie-breaking in a reconstruction attack).
    Attacker,
    /// Anything else an experiment needs, numbered by the caller.
    Other(u32),
}

impl Role {
    fn code(self) -> u64 {
        match self {
            Role::Genuine => 1,
            Role::Fake => 2,
            Role::Attacker => 3,
            Role::Other(n) => (1 << 32) | u64::from(n),
        }
    }
}

/// Users handled by one stream. Fixed, so results do not depend on the thread count.
pub const USERS_PER_STREAM: usize = 4096;

/// Batches processed between two in-order merges; bounds memory at this many partial
/// results.
pub const BATCHES_PER_WAVE: usize = 64;

/// The ChaCha8 stream named by `(master_seed, run, role, batch)`: the key holds the
/// first three as little-endian 64-bit words (its last 8 bytes zero) and the stream id is
/// the batch, so its words are those of `rand_chacha::ChaCha8Rng` so keyed ([`StreamRng`]).
///
/// ChaCha8 is a cryptographically designed generator with a 256-bit key; eight rounds are
/// ample for simulation (Aumasson 2019, "Too Much Crypto").
pub fn stream_rng(master_seed: u64, run: u64, role: Role, batch: u64) -> StreamRng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&master_seed.to_le_bytes());
    key[8..16].copy_from_slice(&run.to_le_bytes());
    key[16..24].copy_from_slice(&role.code().to_le_bytes());
    StreamRng::new(key, batch)
}

/// The streams of one role in one run: batch b draws from
/// `stream_rng(seed, run, role, b)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Streams {
    /// Master seed.
    pub seed: u64,
    /// Run number.
    pub run: u64,
    /// Who draws.
    pub role: Role,
}

impl Streams {
    /// The streams of `role` in `run` under `seed`.
    pub fn new(seed: u64, run: u64, role: Role) -> Self {
        Self { seed, run, role }
    }

    /// The stream of batch `b`.
    pub fn batch(&self, b: u64) -> StreamRng {
        stream_rng(self.seed, self.run, self.role, b)
    }
}

/// ChaCha20 keyed once by the operating system, batch b drawing from stream id b: the
/// randomness of the front ends (the `ldp` tool, the Python package) when no seed is
/// given. Not reproducible, by design; the key is never shown (`Debug` leaves it out).
#[derive(Clone)]
pub struct OsStreams {
    key: [u8; 32],
}

impl OsStreams {
    /// Streams under a fresh key from the operating system. Fails only when the
    /// operating system cannot supply entropy.
    pub fn new() -> Result<Self, NoEntropy> {
        use rand::TryRng;
        let mut key = [0u8; 32];
        rand::rngs::SysRng
            .try_fill_bytes(&mut key)
            .map_err(NoEntropy)?;
        Ok(Self { key })
    }

    /// The stream of batch `b`.
    pub fn batch(&self, b: u64) -> ChaCha20Rng {
        let mut rng = ChaCha20Rng::from_seed(self.key);
        rng.set_stream(b);
        rng
    }
}

impl fmt::Debug for OsStreams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OsStreams").finish_non_exhaustive()
    }
}

/// The operating system could not supply entropy for [`OsStreams`].
#[derive(Debug, thiserror::Error)]
#[error("the operating system gave no entropy: {0}")]
pub struct NoEntropy(#[source] pub rand::rngs::SysError);

/// Where each batch of users draws its randomness: batch b draws from seeded stream b
/// when a seed is given ([`Streams`], so the draws are those of [`perturb_all`] and
/// [`simulate`] with that seed, on any thread count), otherwise from OS-keyed ChaCha20
/// stream b ([`OsStreams`]). The front ends take their randomness from here; run the work
/// with [`with_batch_rng!`](crate::with_batch_rng), which hands it batch b's generator.
#[derive(Debug, Clone)]
pub enum BatchStreams {
    /// Batch b draws from `stream_rng(seed, run, role, b)`: reproducible.
    Seeded(Streams),
    /// Batch b draws from OS-keyed ChaCha20 stream b.
    Os(OsStreams),
}

impl BatchStreams {
    /// With `seed`, the streams of `role` in run 0 under it (those of
    /// `perturb_all(m, items, seed, 0, role)`); without, fresh [`OsStreams`].
    pub fn new(seed: Option<u64>, role: Role) -> Result<Self, NoEntropy> {
        Ok(match seed {
            Some(seed) => BatchStreams::Seeded(Streams::new(seed, 0, role)),
            None => BatchStreams::Os(OsStreams::new()?),
        })
    }
}

/// Evaluates `$body` with `$make`, a closure `Fn(u64) -> R + Sync + Copy` giving batch
/// b's generator of a [`BatchStreams`](crate::simulation::BatchStreams): a seeded ChaCha8
/// stream or an OS-keyed ChaCha20 stream. The body is compiled once for each generator
/// type, so hot loops draw from a concrete generator, not through a branch per draw.
///
/// ```
/// use ldp_core::simulation::{BatchStreams, Role, USERS_PER_STREAM, perturb_all};
/// use ldp_core::{DomainSize, Epsilon, Grr, Mechanism, with_batch_rng};
///
/// let grr = Grr::new(DomainSize::new(4)?, Epsilon::new(1.0)?)?;
/// let items: Vec<u32> = (0..10_000).map(|i| i % 4).collect();
/// // Batch b of 4096 users draws from batch b's generator.
/// let perturb = |streams: BatchStreams| {
///     with_batch_rng!(streams, make => {
///         let mut reports = Vec::new();
///         for (b, batch) in items.chunks(USERS_PER_STREAM).enumerate() {
///             let mut rng = make(b as u64);
///             for &x in batch {
///                 reports.push(grr.perturb(x, &mut rng)?);
///             }
///         }
///         Ok::<_, ldp_core::ItemOutOfRange>(reports)
///     })
/// };
/// // With a seed: exactly the reports of `perturb_all` with that seed.
/// let seeded = perturb(BatchStreams::new(Some(7), Role::Genuine)?)?;
/// assert_eq!(seeded, perturb_all(&grr, &items, 7, 0, Role::Genuine)?);
/// // Without: ChaCha20 keyed by the operating system.
/// let fresh = perturb(BatchStreams::new(None, Role::Genuine)?)?;
/// assert_eq!(fresh.len(), items.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[macro_export]
macro_rules! with_batch_rng {
    ($streams:expr, $make:ident => $body:expr) => {
        match &$streams {
            $crate::simulation::BatchStreams::Seeded(streams) => {
                let $make = move |b: u64| streams.batch(b);
                $body
            }
            $crate::simulation::BatchStreams::Os(streams) => {
                let $make = move |b: u64| streams.batch(b);
                $body
            }
        }
    };
}

/// Runs `work(b, users)` for every batch b of `users` users (the index range of batch b:
/// `b * USERS_PER_STREAM ..`), and hands the results to `merge` in batch order.
///
/// With the `parallel` feature the batches of a wave of [`BATCHES_PER_WAVE`] run on every
/// core, so memory stays bounded by one wave of partial results. `work` should draw its
/// randomness from the streams of batch b ([`Streams::batch`]); the outcome is then the
/// same for any thread count. The first error (in batch order) stops the run.
///
/// ```
/// use ldp_core::simulation::{for_each_batch, Role, Streams, USERS_PER_STREAM};
/// use rand::Rng;
/// let streams = Streams::new(7, 0, Role::Other(1));
/// let mut draws = Vec::new();
/// for_each_batch(10_000, |b, users| Ok::<_, ()>((users.len(), streams.batch(b).next_u32())), |d| {
///     draws.push(d);
///     Ok(())
/// })?;
/// assert_eq!(draws.len(), 3);
/// assert_eq!(draws[2].0, 10_000 - 2 * USERS_PER_STREAM);
/// # Ok::<(), ()>(())
/// ```
pub fn for_each_batch<T, E>(
    users: usize,
    work: impl Fn(u64, Range<usize>) -> Result<T, E> + Sync,
    mut merge: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E>
where
    T: Send,
    E: Send,
{
    let batches = users.div_ceil(USERS_PER_STREAM);
    let range = |b| batch_range(users, b);
    let mut first = 0;
    while first < batches {
        let last = batches.min(first + BATCHES_PER_WAVE);
        #[cfg(feature = "parallel")]
        let results =
            crate::parallel::map(last - first, |j| work((first + j) as u64, range(first + j)));
        #[cfg(not(feature = "parallel"))]
        let results = (first..last).map(|b| work(b as u64, range(b)));
        for result in results {
            merge(result?)?;
        }
        first = last;
    }
    Ok(())
}

/// Batch b's users, `b USERS_PER_STREAM..` up to `users`.
fn batch_range(users: usize, b: usize) -> Range<usize> {
    b * USERS_PER_STREAM..users.min((b + 1) * USERS_PER_STREAM)
}

/// [`for_each_batch`] for results whose merge is exact however the batches are grouped
/// (integer counts, [`Aggregator::EXACT_MERGE`]): the batches fold into one accumulator
/// per share of the work (a few per thread: [`parallel::fold`](crate::parallel::fold)),
/// made by `init`, instead of one each, and `merge` adds them. Each batch still draws
/// from its own stream, so the result is `for_each_batch`'s on any thread count, without
/// a fresh accumulator (a server of many cells: a sketch, FLH's seeds by values) per
/// batch. `add(acc, b, users)` folds batch b in. None for no users.
///
/// ```
/// use ldp_core::simulation::fold_batches;
/// let count = |n: &mut usize, _, users: std::ops::Range<usize>| *n += users.len();
/// let users = fold_batches(10_000, || 0, count, |n, more| *n += more);
/// assert_eq!(users, Some(10_000));
/// ```
pub fn fold_batches<T: Send>(
    users: usize,
    init: impl Fn() -> T + Sync + Send,
    add: impl Fn(&mut T, u64, Range<usize>) + Sync + Send,
    merge: impl Fn(&mut T, T) + Sync + Send,
) -> Option<T> {
    crate::parallel::fold(
        users.div_ceil(USERS_PER_STREAM),
        init,
        |acc, b| add(acc, b as u64, batch_range(users, b)),
        merge,
    )
}

/// Perturbs user `i`'s item `items[i]` for every user and returns the reports in user
/// order. User `i` draws from batch `i / USERS_PER_STREAM` of the `role` stream.
pub fn perturb_all<M: Mechanism>(
    mechanism: &M,
    items: &[u32],
    master_seed: u64,
    run: u64,
    role: Role,
) -> Result<Vec<M::Report>, ItemOutOfRange> {
    let streams = Streams::new(master_seed, run, role);
    let mut reports = Vec::with_capacity(items.len());
    for_each_batch(
        items.len(),
        |b, users| {
            let mut rng = streams.batch(b);
            items[users]
                .iter()
                .map(|&x| mechanism.perturb(x, &mut rng))
                .collect::<Result<Vec<_>, _>>()
        },
        |batch| {
            reports.extend(batch);
            Ok(())
        },
    )?;
    Ok(reports)
}

/// Perturbs and aggregates every user's item without storing the reports. Same streams as
/// [`perturb_all`], so `simulate` equals aggregating `perturb_all`'s reports (SHE's sums up
/// to rounding: they add per batch, then in batch order).
///
/// ```
/// use ldp_core::{Aggregator, DomainSize, Epsilon, UnaryEncoding};
/// use ldp_core::simulation::{simulate, Role};
/// let oue = UnaryEncoding::optimized(DomainSize::new(4)?, Epsilon::new(2.0)?)?;
/// let items: Vec<u32> = (0..10_000).map(|i| i % 4).collect();
/// let agg = simulate(&oue, &items, 1, 0, Role::Genuine)?;
/// assert_eq!(agg.count(), 10_000);
/// let f = agg.raw_estimate()?;
/// assert!(f.iter().all(|&fi| (fi - 0.25).abs() < 0.05));
/// # Ok::<(), ldp_core::Error>(())
/// ```
pub fn simulate<M: Mechanism>(
    mechanism: &M,
    items: &[u32],
    master_seed: u64,
    run: u64,
    role: Role,
) -> Result<M::Aggregator, ItemOutOfRange> {
    let streams = Streams::new(master_seed, run, role);
    let mut total = mechanism.aggregator();
    for_each_batch(
        items.len(),
        |b, users| {
            let mut rng = streams.batch(b);
            let mut partial = mechanism.aggregator();
            // One report's memory, refilled for every user of the batch.
            let mut report: Option<M::Report> = None;
            for &x in &items[users] {
                let report = mechanism.perturb_reusing(x, &mut rng, &mut report)?;
                partial
                    .add(report)
                    .expect("a mechanism's own reports are valid");
            }
            Ok(partial)
        },
        // In batch order: floating-point sums (SHE) are then thread-count independent.
        |partial| {
            total
                .merge(&partial)
                .expect("partials share the mechanism and hold fewer than 2^64 reports");
            Ok(())
        },
    )?;
    Ok(total)
}

/// A mean over runs and its standard error: what a simulation measures, and the measured
/// side of `ldp_analytic::compare`'s rows.
///
/// ```
/// use ldp_core::simulation::Estimate;
/// let e = Estimate::from_runs([0.2, 0.4].into_iter());
/// assert!((e.mean - 0.3).abs() < 1e-12 && (e.se - 0.1).abs() < 1e-12);
/// assert!(Estimate::from_runs([0.2].into_iter()).se.is_nan());
/// // One run of 100 trials with 20 successes: the binomial standard error.
/// let one = Estimate::rate_from_runs([0.2].into_iter(), 100);
/// assert_eq!(one, Estimate::binomial(0.2, 100));
/// assert!((one.se - 0.04).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Estimate {
    /// Mean over runs.
    pub mean: f64,
    /// Standard error of the mean (NaN when it cannot be estimated from one run).
    pub se: f64,
}

impl Estimate {
    /// The mean of per-run values and its standard error (NaN for one run), as
    /// measurements report them.
    pub fn from_runs(values: impl Iterator<Item = f64>) -> Self {
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

    /// A success rate measured on `trials` independent trials, with its binomial standard
    /// error `sqrt(rate (1 - rate) / trials)`.
    pub fn binomial(rate: f64, trials: usize) -> Self {
        Estimate {
            mean: rate,
            se: (rate * (1.0 - rate) / trials as f64).sqrt(),
        }
    }

    /// A success rate over runs of `trials` trials each: [`Estimate::from_runs`], except
    /// that one run, which gives no spread between runs, has the binomial standard error
    /// of its trials ([`Estimate::binomial`]).
    pub fn rate_from_runs(values: impl Iterator<Item = f64>, trials: usize) -> Self {
        let v: Vec<f64> = values.collect();
        match v[..] {
            [rate] => Estimate::binomial(rate, trials),
            _ => Estimate::from_runs(v.into_iter()),
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::Rng;

    use super::*;

    fn draws<R: Rng>(mut rng: R) -> [u64; 4] {
        std::array::from_fn(|_| rng.next_u64())
    }

    #[test]
    fn seeded_batches_draw_from_the_seeded_streams_of_run_0() {
        let streams = BatchStreams::new(Some(42), Role::Attacker).unwrap();
        let got: Vec<[u64; 4]> =
            with_batch_rng!(streams, make => (0..3).map(|b| draws(make(b))).collect());
        let expected: Vec<[u64; 4]> = (0..3)
            .map(|b| draws(stream_rng(42, 0, Role::Attacker, b)))
            .collect();
        assert_eq!(got, expected);
        assert_ne!(expected[0], draws(stream_rng(42, 0, Role::Genuine, 0)));
    }

    #[test]
    fn os_batches_are_the_chacha20_streams_of_one_fresh_key() {
        let a = OsStreams::new().unwrap();
        let mut stream_5 = ChaCha20Rng::from_seed(a.key);
        stream_5.set_stream(5);
        assert_eq!(draws(a.batch(5)), draws(stream_5));
        assert_eq!(draws(a.batch(3)), draws(a.clone().batch(3)));
        assert_ne!(draws(a.batch(0)), draws(a.batch(1)));
        let b = OsStreams::new().unwrap();
        assert_ne!(draws(a.batch(0)), draws(b.batch(0)));
        let streams = BatchStreams::Os(a.clone());
        assert_eq!(
            with_batch_rng!(streams, make => draws(make(2))),
            draws(a.batch(2))
        );
        // The key is never shown.
        assert_eq!(format!("{a:?}"), "OsStreams { .. }");
        assert!(matches!(
            BatchStreams::new(None, Role::Genuine),
            Ok(BatchStreams::Os(_))
        ));
    }
}
