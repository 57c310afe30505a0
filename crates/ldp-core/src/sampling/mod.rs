//! Exact samplers shared by the mechanisms.

mod bernoulli_set;
mod laplace;
mod ziggurat_tables;

/// The chi-square helpers of the integration tests, for the samplers' unit tests.
#[cfg(test)]
#[path = "../../tests/integration/common.rs"]
mod test_stats;

pub(crate) use bernoulli_set::BernoulliSet;
pub(crate) use laplace::{CHUNK as LAPLACE_CHUNK, fill_laplace};
use rand::{Rng, RngExt};

/// Draws `m` distinct items uniformly from `0..n` by Floyd's algorithm, O(m) expected
/// time, into `chosen` (cleared first), sorted. `m <= n` is required. The list gets room
/// for one more item, which [`lift_around`] inserts without reallocating (glibc's realloc
/// takes a lock that threads perturbing side by side queue on); a list reused from report
/// to report allocates nothing once it is large enough.
pub(crate) fn floyd_sorted<R: Rng + ?Sized>(n: u32, m: u32, rng: &mut R, chosen: &mut Vec<u32>) {
    debug_assert!(m <= n);
    chosen.clear();
    chosen.reserve(m as usize + 1);
    // Membership structure: a short vector for tiny m, a bitmap when m is a sizeable
    // fraction of n (the bitmap's n/64 words then cost no more than m), a hash set otherwise.
    if m <= 16 {
        for j in (n - m)..n {
            let t = rng.random_range(0..=j);
            chosen.push(if chosen.contains(&t) { j } else { t });
        }
        chosen.sort_unstable();
    } else if u64::from(m) * 64 >= u64::from(n) {
        let mut bits = vec![0u64; (n as usize).div_ceil(64)];
        for j in (n - m)..n {
            let t = rng.random_range(0..=j);
            let pick = if bits[(t / 64) as usize] >> (t % 64) & 1 == 1 {
                j
            } else {
                t
            };
            bits[(pick / 64) as usize] |= 1 << (pick % 64);
        }
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                chosen.push(w as u32 * 64 + word.trailing_zeros());
                word &= word - 1;
            }
        }
    } else {
        let mut set = std::collections::HashSet::with_capacity(m as usize);
        for j in (n - m)..n {
            let t = rng.random_range(0..=j);
            if !set.insert(t) {
                set.insert(j);
            }
        }
        chosen.extend(set);
        chosen.sort_unstable();
    }
}

/// A uniform draw from `0..n` excluding `skip` (`skip < n`, `n >= 2`).
#[inline]
pub(crate) fn uniform_other<R: Rng + ?Sized>(n: u32, skip: u32, rng: &mut R) -> u32 {
    let r = rng.random_range(0..n - 1);
    r + u32::from(r >= skip)
}

/// Shifts a sorted list of indices drawn from `0..k-1` (the domain without `x`) back into
/// `0..k`, inserting `x` itself when `with_x`. Keeps the list sorted.
pub(crate) fn lift_around(others: &mut Vec<u32>, x: u32, with_x: bool) {
    let split = others.partition_point(|&v| v < x);
    for v in &mut others[split..] {
        *v += 1;
    }
    if with_x {
        others.insert(split, x);
    }
}

/// Value stability of Floyd's sampler on each of its three membership structures.
#[cfg(test)]
mod golden {
    use rand::Rng;

    use super::floyd_sorted;
    use crate::simulation::{Role, stream_rng};

    /// The first and last few draws (at most 4 of each), the size, and the next draw.
    fn pin(n: u32, m: u32) -> (Vec<u32>, Vec<u32>, usize, u64) {
        let mut rng = stream_rng(2026, 11, Role::Other(8), 0);
        let mut chosen = vec![7; 50]; // stale contents are cleared
        floyd_sorted(n, m, &mut rng, &mut chosen);
        assert!(chosen.windows(2).all(|w| w[0] < w[1]) && chosen.len() == m as usize);
        let head = chosen.iter().take(4).copied().collect();
        let tail = chosen.iter().rev().take(4).rev().copied().collect();
        (head, tail, chosen.len(), rng.next_u64())
    }

    #[test]
    fn every_membership_structure_is_pinned() {
        let got = [pin(10, 3), pin(99, 40), pin(4999, 40)];
        let want: [(Vec<u32>, Vec<u32>, usize, u64); 3] = [
            // m <= 16: a short vector.
            (vec![1, 4, 9], vec![1, 4, 9], 3, 9836031993962201524),
            // 64 m >= n: a bitmap.
            (
                vec![1, 4, 5, 6],
                vec![92, 93, 96, 97],
                40,
                11610852119442985532,
            ),
            // otherwise: a hash set.
            (
                vec![116, 234, 311, 430],
                vec![4408, 4606, 4854, 4909],
                40,
                11610852119442985532,
            ),
        ];
        assert_eq!(got, want);
    }
}
