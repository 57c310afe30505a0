//! Exact samplers shared by the mechanisms.

use std::fmt;
use std::sync::Arc;

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Geometric};

/// Draws each index of `0..len` independently with probability `q`, in increasing order,
/// in O(1 + len * q) expected time: the gaps between chosen indices are geometric.
///
/// Gaps come from a [`GapTable`]: Walker's alias table (1977) over the values
/// `0..TABLE - 1` plus a tail bucket meaning "at least `TABLE - 1`, then memorylessly
/// again", read through a lookup table so that a gap costs 14 random bits and one load.
/// When q is so small that the tail bucket would dominate, gaps come from rand_distr's
/// exact geometric (Bringmann and Friedrich 2013) instead. Either way the chosen set has
/// the product-Bernoulli law, up to the f64 rounding of the probabilities.
#[derive(Debug, Clone)]
pub(crate) struct BernoulliSet {
    q: f64,
    gap: GapSampler,
}

/// Gap outcomes in the table: `0..TABLE - 1` and the tail bucket `TABLE - 1`.
const TABLE: usize = 64;
const TABLE_BITS: u32 = 6;
/// The tail bucket's code: the gap is at least this, and the excess is again geometric.
const TAIL: u8 = (TABLE - 1) as u8;

/// Bits of a 64-bit draw spent on one gap: `TABLE_BITS` pick the column, the other
/// `PREFIX_BITS` are the leading bits of the uniform deciding column or alias.
const CHUNK_BITS: u32 = 14;
const CHUNK_MASK: u64 = (1 << CHUNK_BITS) - 1;
const CHUNKS_PER_DRAW: u32 = 64 / CHUNK_BITS;
const PREFIX_BITS: u32 = CHUNK_BITS - TABLE_BITS;
const PREFIX_MASK: usize = (1 << PREFIX_BITS) - 1;
/// Precision of the keep thresholds, and the bits left after the prefix.
const KEEP_BITS: u32 = 53;
const KEEP_MASK: u64 = (1 << KEEP_BITS) - 1;
const SUFFIX_BITS: u32 = KEEP_BITS - PREFIX_BITS;
const SUFFIX_MASK: u64 = (1 << SUFFIX_BITS) - 1;
/// Lookup code of a chunk whose prefix equals its column's threshold prefix.
const TIE: u8 = u8::MAX;

#[derive(Debug, Clone)]
enum GapSampler {
    /// q == 0: nothing is ever chosen.
    Never,
    /// Shared, so that cloning a mechanism does not copy the 16 KiB lookup table.
    Table(Arc<GapTable>),
    Geometric(Geometric),
}

/// Walker's alias table over `TABLE` gap outcomes, and a lookup table that reads it in one
/// load.
///
/// A draw of the alias table is a uniform column and a 53-bit uniform U compared with the
/// column's keep threshold: below it the column is the outcome, otherwise its alias. The
/// lookup table is indexed by a chunk holding the column and the top `PREFIX_BITS` of U.
/// Those bits decide the comparison unless they equal the threshold's own top bits
/// (probability 2^-8); only then is a fresh draw spent on the remaining bits of U. The
/// outcome therefore has exactly the alias table's law, from 14 bits per gap instead of 64.
struct GapTable {
    /// Per column: the alias in the top `TABLE_BITS` bits, the keep threshold in the low 53.
    entries: [u64; TABLE],
    /// Per chunk: the gap outcome, or `TIE`.
    lookup: Box<[u8; 1 << CHUNK_BITS]>,
}

impl fmt::Debug for GapTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GapTable").finish_non_exhaustive()
    }
}

impl GapTable {
    fn new(q: f64) -> Self {
        // P[gap = j] = q (1-q)^j for j < TABLE - 1; the tail holds (1-q)^(TABLE-1).
        let mut probs = [0.0f64; TABLE];
        let mut survive = 1.0;
        for p in probs.iter_mut().take(TABLE - 1) {
            *p = q * survive;
            survive *= 1.0 - q;
        }
        probs[TABLE - 1] = survive;
        let entries = alias_entries(&probs);

        let mut lookup = Box::new([0u8; 1 << CHUNK_BITS]);
        for (chunk, slot) in lookup.iter_mut().enumerate() {
            let column = chunk >> PREFIX_BITS;
            let (alias, keep) = split_entry(entries[column]);
            let threshold_prefix = (keep >> SUFFIX_BITS) as usize;
            let prefix = chunk & PREFIX_MASK;
            *slot = if alias == column || prefix < threshold_prefix {
                column as u8
            } else if prefix > threshold_prefix {
                alias as u8
            } else {
                TIE
            };
        }
        Self { entries, lookup }
    }

    /// The outcome of a tied chunk: the fresh draw's top bits complete U.
    #[cold]
    fn resolve_tie(&self, chunk: usize, fresh: u64) -> u8 {
        let column = chunk >> PREFIX_BITS;
        let (alias, keep) = split_entry(self.entries[column]);
        let suffix = fresh >> (64 - SUFFIX_BITS);
        if suffix < keep & SUFFIX_MASK {
            column as u8
        } else {
            alias as u8
        }
    }

    /// Calls `visit` with each chosen index of `0..len`, increasingly.
    #[inline]
    fn for_each<R: Rng + ?Sized>(&self, len: u64, rng: &mut R, mut visit: impl FnMut(u32)) {
        // `start` is the first index not yet decided; each gap skips that many indices.
        let mut start = 0u64;
        let (mut word, mut chunks_left) = (0u64, 0u32);
        loop {
            if chunks_left == 0 {
                word = rng.next_u64();
                chunks_left = CHUNKS_PER_DRAW;
            }
            let chunk = (word & CHUNK_MASK) as usize;
            word >>= CHUNK_BITS;
            chunks_left -= 1;
            let mut gap = self.lookup[chunk];
            // One rare branch covers both ties and the tail bucket.
            if gap >= TAIL {
                if gap == TIE {
                    gap = self.resolve_tie(chunk, rng.next_u64());
                }
                if gap == TAIL {
                    start += u64::from(TAIL);
                    if start >= len {
                        return;
                    }
                    continue;
                }
            }
            start += u64::from(gap);
            if start >= len {
                return;
            }
            visit(start as u32);
            start += 1;
        }
    }
}

/// Walker's alias table for `probs` (summing to 1), packed as in [`GapTable::entries`].
fn alias_entries(probs: &[f64; TABLE]) -> [u64; TABLE] {
    let mut scaled: Vec<f64> = probs.iter().map(|p| p * TABLE as f64).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) =
        (0..TABLE).partition(|&i| scaled[i] < 1.0);
    // Columns never paired keep their own outcome with probability one.
    let mut keep = [1u64 << KEEP_BITS; TABLE];
    let mut alias: [usize; TABLE] = std::array::from_fn(|i| i);
    while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
        keep[s] = (scaled[s] * (1u64 << KEEP_BITS) as f64) as u64;
        alias[s] = l;
        scaled[l] -= 1.0 - scaled[s];
        if scaled[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // An unpaired column (keep = 2^53) is its own alias, so capping its threshold at
    // 2^53 - 1 changes nothing.
    std::array::from_fn(|i| ((alias[i] as u64) << (64 - TABLE_BITS)) | keep[i].min(KEEP_MASK))
}

/// `(alias, keep threshold)` of a packed entry.
fn split_entry(entry: u64) -> (usize, u64) {
    ((entry >> (64 - TABLE_BITS)) as usize, entry & KEEP_MASK)
}

impl BernoulliSet {
    /// `q` must lie in `[0, 1]`.
    pub(crate) fn new(q: f64) -> Self {
        let gap = if q <= 0.0 {
            GapSampler::Never
        } else if (1.0 - q).powi(TABLE as i32 - 1) < 0.25 {
            GapSampler::Table(Arc::new(GapTable::new(q)))
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
        match &self.gap {
            GapSampler::Never => {}
            GapSampler::Table(table) => table.for_each(len, rng, visit),
            GapSampler::Geometric(geometric) => {
                let mut next = geometric.sample(rng);
                while next < len {
                    visit(next as u32);
                    next = next.saturating_add(1).saturating_add(geometric.sample(rng));
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Units of probability 2^-(TABLE_BITS + KEEP_BITS), in which both laws are exact.
    const UNIT_BITS: u32 = TABLE_BITS + KEEP_BITS;

    /// The law of a gap outcome drawn from the alias table itself.
    fn alias_law(table: &GapTable) -> [u128; TABLE] {
        let mut law = [0u128; TABLE];
        for (column, &entry) in table.entries.iter().enumerate() {
            let (alias, keep) = split_entry(entry);
            law[column] += u128::from(keep);
            law[alias] += (1u128 << KEEP_BITS) - u128::from(keep);
        }
        law
    }

    /// The law of a gap outcome drawn through the lookup table and tie resolution.
    fn lookup_law(table: &GapTable) -> ([u128; TABLE], usize) {
        let mut law = [0u128; TABLE];
        let mut ties = 0;
        let chunk_mass = 1u128 << (UNIT_BITS - CHUNK_BITS);
        for (chunk, &outcome) in table.lookup.iter().enumerate() {
            if outcome == TIE {
                ties += 1;
                // The fresh bits complete U: below the threshold's suffix keeps the column.
                let column = chunk >> PREFIX_BITS;
                let (alias, keep) = split_entry(table.entries[column]);
                let kept = u128::from(keep & SUFFIX_MASK);
                law[column] += kept;
                law[alias] += chunk_mass - kept;
            } else {
                law[usize::from(outcome)] += chunk_mass;
            }
        }
        (law, ties)
    }

    #[test]
    fn lookup_table_has_exactly_the_alias_law_and_the_geometric_law() {
        let mut ties_seen = 0;
        for q in [0.022, 0.05, 0.1192, 0.3, 0.5, 0.77, 0.999, 1.0] {
            let table = GapTable::new(q);
            let (law, ties) = lookup_law(&table);
            ties_seen += ties;
            assert_eq!(law, alias_law(&table), "q = {q}");
            assert_eq!(law.iter().sum::<u128>(), 1 << UNIT_BITS);
            for (j, &mass) in law.iter().enumerate() {
                let exact = if j < TABLE - 1 {
                    q * (1.0 - q).powi(j as i32)
                } else {
                    (1.0 - q).powi(TABLE as i32 - 1)
                };
                let got = mass as f64 / (1u128 << UNIT_BITS) as f64;
                assert!(
                    (got - exact).abs() < 1e-15,
                    "q = {q}, gap {j}: {got} vs {exact}"
                );
            }
        }
        assert!(ties_seen > 0, "the tie path must be exercised");
    }

    #[test]
    fn a_tie_is_decided_by_the_fresh_bits() {
        let table = GapTable::new(0.1192);
        let chunk = table
            .lookup
            .iter()
            .position(|&o| o == TIE)
            .expect("a tied chunk");
        let column = chunk >> PREFIX_BITS;
        let (alias, keep) = split_entry(table.entries[column]);
        assert_ne!(alias, column);
        let suffix = keep & SUFFIX_MASK;
        assert!(suffix > 0);
        let fresh = |s: u64| s << (64 - SUFFIX_BITS);
        assert_eq!(
            usize::from(table.resolve_tie(chunk, fresh(suffix - 1))),
            column
        );
        assert_eq!(usize::from(table.resolve_tie(chunk, fresh(suffix))), alias);
    }
}
