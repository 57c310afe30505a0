//! Exact samplers shared by the mechanisms.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Geometric};

/// Draws each index of `0..len` independently with probability `q`, in increasing order,
/// in O(1 + len * q) expected time: the gaps between chosen indices are geometric.
///
/// Gaps come from an alias table (Walker 1977) over the values `0..TABLE - 1` plus a tail
/// bucket meaning "at least `TABLE - 1`, then memorylessly again": one 64-bit draw per
/// gap. When q is so small that the tail bucket would dominate, gaps come from
/// rand_distr's exact geometric (Bringmann and Friedrich 2013) instead. Either way the
/// chosen set has the product-Bernoulli law, up to the f64 rounding of the probabilities.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BernoulliSet {
    q: f64,
    gap: GapSampler,
}

const TABLE: usize = 64;
const TABLE_BITS: u32 = 6;

#[derive(Debug, Clone, PartialEq)]
enum GapSampler {
    /// q == 0: nothing is ever chosen.
    Never,
    Alias(Box<AliasTable>),
    Geometric(Geometric),
}

/// Walker's alias table over `TABLE` outcomes; the last outcome is the tail bucket.
/// Each entry packs the column's alias (top 6 bits) with the 53-bit probability of keeping
/// the column itself, so a draw costs one load and no branch.
#[derive(Debug, Clone, PartialEq)]
struct AliasTable {
    entries: [u64; TABLE],
}

const KEEP_MASK: u64 = (1 << 53) - 1;

impl AliasTable {
    fn new(q: f64) -> Self {
        // P[gap = j] = q (1-q)^j for j < TABLE - 1; the tail holds (1-q)^(TABLE-1).
        let mut probs = [0.0f64; TABLE];
        let mut survive = 1.0;
        for p in probs.iter_mut().take(TABLE - 1) {
            *p = q * survive;
            survive *= 1.0 - q;
        }
        probs[TABLE - 1] = survive;
        let mut scaled: Vec<f64> = probs.iter().map(|p| p * TABLE as f64).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..TABLE).partition(|&i| scaled[i] < 1.0);
        // Columns never paired keep their own outcome with probability one.
        let mut keep = [1u64 << 53; TABLE];
        let mut alias: [u8; TABLE] = std::array::from_fn(|i| i as u8);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            keep[s] = (scaled[s] * (1u64 << 53) as f64) as u64;
            alias[s] = l as u8;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // An unpaired column (keep = 2^53) is its own alias, so capping its threshold at
        // 2^53 - 1 changes nothing.
        let entries = std::array::from_fn(|i| {
            (u64::from(alias[i]) << (64 - TABLE_BITS)) | keep[i].min(KEEP_MASK)
        });
        Self { entries }
    }

    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let mut total = 0u64;
        loop {
            // Top 6 bits pick the column, the low 53 bits decide column or alias.
            let r = rng.next_u64();
            let column = (r >> (64 - TABLE_BITS)) as usize;
            let entry = self.entries[column];
            let use_alias = ((r & KEEP_MASK) >= (entry & KEEP_MASK)) as usize;
            let alias = (entry >> (64 - TABLE_BITS)) as usize;
            let j = column ^ ((column ^ alias) & use_alias.wrapping_neg());

            if j < TABLE - 1 {
                return total + j as u64;
            }
            total += (TABLE - 1) as u64;
        }
    }
}

impl GapSampler {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self {
            GapSampler::Never => u64::MAX,
            GapSampler::Alias(t) => t.sample(rng),
            GapSampler::Geometric(g) => g.sample(rng),
        }
    }
}

impl BernoulliSet {
    /// `q` must lie in `[0, 1]`.
    pub(crate) fn new(q: f64) -> Self {
        let gap = if q <= 0.0 {
            GapSampler::Never
        } else if (1.0 - q).powi(TABLE as i32 - 1) < 0.25 {
            GapSampler::Alias(Box::new(AliasTable::new(q)))
        } else {
            GapSampler::Geometric(Geometric::new(q).expect("q validated in (0, 1]"))
        };
        Self { q, gap }
    }

    /// Expected number of indices chosen from `0..len`.
    pub(crate) fn mean_count(&self, len: u32) -> f64 {
        f64::from(len) * self.q
    }

    /// Calls `visit` with each chosen index of `0..len`, increasingly.
    #[inline]
    pub(crate) fn for_each<R: Rng + ?Sized>(
        &self,
        len: u32,
        rng: &mut R,
        mut visit: impl FnMut(u32),
    ) {
        let len = u64::from(len);
        let mut next = self.gap.sample(rng);
        while next < len {
            visit(next as u32);
            next = next.saturating_add(1).saturating_add(self.gap.sample(rng));
        }
    }
}

/// Draws `m` distinct items uniformly from `0..n` by Floyd's algorithm, O(m) expected
/// time, and returns them sorted. `m <= n` is required.
pub(crate) fn floyd_sorted<R: Rng + ?Sized>(n: u32, m: u32, rng: &mut R) -> Vec<u32> {
    debug_assert!(m <= n);
    // Membership structure: a short vector for tiny m, a bitmap when m is a sizeable
    // fraction of n (the bitmap's n/64 words then cost no more than m), a hash set otherwise.
    if m <= 16 {
        let mut chosen: Vec<u32> = Vec::with_capacity(m as usize);
        for j in (n - m)..n {
            let t = rng.random_range(0..=j);
            chosen.push(if chosen.contains(&t) { j } else { t });
        }
        chosen.sort_unstable();
        chosen
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
        let mut chosen = Vec::with_capacity(m as usize);
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                chosen.push(w as u32 * 64 + word.trailing_zeros());
                word &= word - 1;
            }
        }
        chosen
    } else {
        let mut set = std::collections::HashSet::with_capacity(m as usize);
        for j in (n - m)..n {
            let t = rng.random_range(0..=j);
            if !set.insert(t) {
                set.insert(j);
            }
        }
        let mut chosen: Vec<u32> = set.into_iter().collect();
        chosen.sort_unstable();
        chosen
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
pub(crate) fn lift_around(mut others: Vec<u32>, x: u32, with_x: bool) -> Vec<u32> {
    let split = others.partition_point(|&v| v < x);
    for v in &mut others[split..] {
        *v += 1;
    }
    if with_x {
        others.insert(split, x);
    }
    others
}
