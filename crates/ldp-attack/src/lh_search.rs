//! The maximal gain attack on local hashing: a bounded, deterministic search for the seed
//! that hashes the most targets to one value.
//!
//! A fake LH report `(seed, y)` supports every item hashing to y under the seed, so the
//! best fake report supports as many targets as share one hash value. The chance that a
//! given seed hashes all r targets together is `g^-(r-1)`: trying seeds until one does is
//! quick for small g^(r-1) (OLH at eps = 4 has g = 56; two targets take 56 tries on
//! average) and hopeless for large (ten targets: 5e15 tries).
//!
//! # The search
//! Seeds 0, 1, 2, ... are tried in order, at most [`SEED_BUDGET`] of them; the search
//! stops at the first seed hashing all targets together, and otherwise keeps the earliest
//! of the seeds that hash the most targets together. It runs on every core in fixed
//! chunks, so its result does not depend on the thread count. It finds a seed supporting
//! all r targets with probability `1 - (1 - g^-(r-1))^budget`, above `1 - e^-16` whenever
//! `g^(r-1) <= 2^20`; beyond that it reports how many it supports, and measurements say
//! so ([`crate::Measurement::targets_supported`]). The search runs once per attack:
//! every fake user sends the same report, which changes nothing in expectation (each
//! fake report's effect on the estimate is fixed by the targets it supports).

use ldp_core::LhReport;
use ldp_core::families::local_hash::hash_item;
use rayon::prelude::*;

/// Seeds the search tries at most: 2^24.
pub const SEED_BUDGET: u64 = 1 << 24;

/// Seeds per parallel chunk.
const CHUNK: u64 = 1 << 16;

/// The best report for `targets` (non-empty, distinct) under hash range `g`, and the
/// number of targets it supports.
///
/// ```
/// use ldp_attack::lh_search::max_gain_seed;
/// use ldp_core::families::local_hash::hash_item;
/// let (report, supported) = max_gain_seed(56, &[20, 21]);
/// assert_eq!(supported, 2);
/// assert_eq!(hash_item(20, report.seed, 56), report.y);
/// assert_eq!(hash_item(21, report.seed, 56), report.y);
/// ```
pub fn max_gain_seed(g: u32, targets: &[u32]) -> (LhReport, u32) {
    let r = targets.len() as u32;
    // (supported, seed, value), the earliest seed winning ties.
    let mut best = (0u32, 0u32, 0u32);
    let mut start = 0u64;
    while start < SEED_BUDGET {
        let wave_end = SEED_BUDGET.min(start + 64 * CHUNK);
        let wave: Vec<(u32, u32, u32)> = (start..wave_end)
            .step_by(CHUNK as usize)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|from| best_in(g, targets, from, (from + CHUNK).min(wave_end)))
            .collect();
        for candidate in wave {
            if candidate.0 > best.0 {
                best = candidate;
            }
        }
        if best.0 == r {
            break;
        }
        start = wave_end;
    }
    let (supported, seed, y) = best;
    (LhReport { seed, y }, supported)
}

/// The earliest best seed of `from..to`.
fn best_in(g: u32, targets: &[u32], from: u64, to: u64) -> (u32, u32, u32) {
    let r = targets.len() as u32;
    let mut best = (0u32, 0u32, 0u32);
    let mut hashes = vec![0u32; targets.len()];
    for seed in from..to {
        let seed = seed as u32;
        for (h, &t) in hashes.iter_mut().zip(targets) {
            *h = hash_item(t, seed, g);
        }
        let (count, value) = mode(&mut hashes);
        if count > best.0 {
            best = (count, seed, value);
            if count == r {
                break;
            }
        }
    }
    best
}

/// The most frequent value and its count (the smallest value among equals).
fn mode(values: &mut [u32]) -> (u32, u32) {
    values.sort_unstable();
    let mut best = (0u32, values[0]);
    let mut run = 0u32;
    for i in 0..values.len() {
        run = if i > 0 && values[i] == values[i - 1] {
            run + 1
        } else {
            1
        };
        if run > best.0 {
            best = (run, values[i]);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_collision_is_found_when_one_is_likely() {
        // g^(r-1) = 56^3 = 175,616 tries expected: far inside the budget.
        let targets = [20, 21, 22, 23];
        let (report, supported) = max_gain_seed(56, &targets);
        assert_eq!(supported, 4);
        assert!(
            targets
                .iter()
                .all(|&t| hash_item(t, report.seed, 56) == report.y)
        );
        // Deterministic: the earliest such seed.
        assert!((0..report.seed).all(|s| {
            let h = hash_item(20, s, 56);
            !targets.iter().all(|&t| hash_item(t, s, 56) == h)
        }));
    }

    #[test]
    fn beyond_the_budget_the_best_partial_collision_is_kept() {
        // g^9 = 1e18 tries would be needed for all ten targets at g = 100.
        let targets: Vec<u32> = (40..50).collect();
        let (report, supported) = max_gain_seed(100, &targets);
        assert!((2..10).contains(&supported), "{supported}");
        let hits = targets
            .iter()
            .filter(|&&t| hash_item(t, report.seed, 100) == report.y)
            .count();
        assert_eq!(hits as u32, supported);
    }

    #[test]
    fn one_target_needs_no_search() {
        let (report, supported) = max_gain_seed(7, &[3]);
        assert_eq!((report.seed, supported), (0, 1));
        assert_eq!(report.y, hash_item(3, 0, 7));
    }
}
