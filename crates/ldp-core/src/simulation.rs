//! Reproducible randomness: seeded ChaCha streams and parallel simulation of many users.
//!
//! Every random draw of a simulation comes from a stream named by
//! `(master seed, run, role, batch)`. The four numbers form the 256-bit ChaCha key, so
//! distinct names give independent streams, and the batching is fixed (not tied to the
//! number of threads): a simulation returns identical results on any thread count. The
//! genuine users of a run draw from [`Role::Genuine`] streams whatever else happens in the
//! run, so adding fake users leaves their reports unchanged (common random numbers).
//!
//! Deployed clients should not use these deterministic streams: seed a ChaCha20 generator
//! from the operating system instead, e.g. `rand::make_rng::<rand_chacha::ChaCha20Rng>()`.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

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

/// Batches processed between two in-order merges; bounds memory at this many aggregators.
const BATCHES_PER_WAVE: usize = 64;

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

/// Perturbs user `i`'s item `items[i]` for every user, in parallel, and returns the reports
/// in user order. User `i` draws from batch `i / USERS_PER_STREAM` of the `role` stream.
pub fn perturb_all<M: Mechanism>(
    mechanism: &M,
    items: &[u32],
    master_seed: u64,
    run: u64,
    role: Role,
) -> Result<Vec<M::Report>, ItemOutOfRange> {
    let batches: Vec<Result<Vec<M::Report>, ItemOutOfRange>> = items
        .par_chunks(USERS_PER_STREAM)
        .enumerate()
        .map(|(b, chunk)| {
            let mut rng = stream_rng(master_seed, run, role, b as u64);
            chunk
                .iter()
                .map(|&x| mechanism.perturb(x, &mut rng))
                .collect()
        })
        .collect();
    let mut reports = Vec::with_capacity(items.len());
    for batch in batches {
        reports.extend(batch?);
    }
    Ok(reports)
}

/// Perturbs and aggregates every user's item without storing the reports. Same streams as
/// [`perturb_all`], so `simulate` equals aggregating `perturb_all`'s reports.
///
/// ```
/// use ldp_core::{Aggregator, DomainSize, Epsilon, UnaryEncoding};
/// use ldp_core::simulation::{simulate, Role};
/// let oue = UnaryEncoding::optimized(DomainSize::new(4)?, Epsilon::new(2.0)?);
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
    let mut total = mechanism.aggregator();
    let chunks: Vec<&[u32]> = items.chunks(USERS_PER_STREAM).collect();
    for (wave_index, wave) in chunks.chunks(BATCHES_PER_WAVE).enumerate() {
        let first = wave_index * BATCHES_PER_WAVE;
        let partials: Vec<Result<M::Aggregator, ItemOutOfRange>> = wave
            .par_iter()
            .enumerate()
            .map(|(offset, chunk)| {
                let mut rng = stream_rng(master_seed, run, role, (first + offset) as u64);
                let mut agg = mechanism.aggregator();
                for &x in *chunk {
                    let report = mechanism.perturb(x, &mut rng)?;
                    agg.add(&report)
                        .expect("a mechanism's own reports are valid");
                }
                Ok(agg)
            })
            .collect();
        // Merge in batch order: floating-point sums (SHE) are then thread-count independent.
        for partial in partials {
            total
                .merge(&partial?)
                .expect("partials share the mechanism");
        }
    }
    Ok(total)
}
