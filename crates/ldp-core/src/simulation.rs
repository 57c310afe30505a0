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
//! Deployed clients must not use these deterministic streams: see [`crate::Client`].

use std::ops::Range;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

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

/// The ChaCha8 stream named by `(master_seed, run, role, batch)`.
///
/// ChaCha8 is a cryptographically designed generator with a 256-bit key; eight rounds are
/// ample for simulation (Aumasson 2019, "Too Much Crypto").
pub fn stream_rng(master_seed: u64, run: u64, role: Role, batch: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&master_seed.to_le_bytes());
    key[8..16].copy_from_slice(&run.to_le_bytes());
    key[16..24].copy_from_slice(&role.code().to_le_bytes());
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(batch);
    rng
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
    pub fn batch(&self, b: u64) -> ChaCha8Rng {
        stream_rng(self.seed, self.run, self.role, b)
    }
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
    let range = |b: usize| b * USERS_PER_STREAM..users.min((b + 1) * USERS_PER_STREAM);
    let mut first = 0;
    while first < batches {
        let last = batches.min(first + BATCHES_PER_WAVE);
        #[cfg(feature = "parallel")]
        let results: Vec<Result<T, E>> = {
            use rayon::prelude::*;
            (first..last)
                .into_par_iter()
                .map(|b| work(b as u64, range(b)))
                .collect()
        };
        #[cfg(not(feature = "parallel"))]
        let results = (first..last).map(|b| work(b as u64, range(b)));
        for result in results {
            merge(result?)?;
        }
        first = last;
    }
    Ok(())
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
