//! Independent Bernoulli(q) indices by geometric gaps, drawn in base 64 from table lookups.

use std::fmt;
use std::sync::Arc;

use rand::Rng;
use rand_distr::{Distribution, Geometric};

/// Draws each index of `0..len` independently with probability `q`, in increasing order,
/// in O(1 + len * q) expected time: the gaps between chosen indices are geometric.
///
/// A gap G (failures before a success, ratio r = 1 - q) is drawn in base 64:
/// `G = 64^L A + sum over l < L of 64^l B_l`, where the digit `B_l` is a geometric of
/// ratio `r^(64^l)` truncated to `0..64`, and `A` a geometric of ratio `r^(64^L)`; all are
/// independent. `L` is the smallest level at which `A` exceeds 62 with probability below
/// 1/4, so for q >= 0.022 there are no digits at all. Each of `A` and the digits comes from a
/// [`ChunkTable`] lookup (14 random bits); `A`'s last outcome is a tail bucket meaning "at
/// least 63, then memorylessly again". The most significant part is drawn first, so a gap
/// that already runs past `len` costs no further draws: at small q a report mostly costs
/// a lookup or two. Beyond `MAX_DIGITS` digits (q below about 1e-13) gaps come from
/// rand_distr's exact geometric (Bringmann and Friedrich 2013) instead.
///
/// The chosen set has the product-Bernoulli law, up to the f64 rounding of the
/// probabilities.
#[derive(Debug, Clone)]
pub(crate) struct BernoulliSet {
    q: f64,
    gap: GapSampler,
}

/// Outcomes of a chunk table: `0..TABLE`.
const TABLE: usize = 64;
const TABLE_BITS: u32 = 6;
/// The top table's tail bucket: the gap is at least this, and the excess is again geometric.
const TAIL: u8 = (TABLE - 1) as u8;
/// The top level is used once its tail bucket has probability below this.
const TAIL_MASS_MAX: f64 = 0.25;
/// At most this many base-64 digits below the top level (each costs a 16 KiB table).
const MAX_DIGITS: usize = 6;

/// Bits of a 64-bit draw spent on one lookup: `TABLE_BITS` pick the column, the other
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
    /// Shared, so that cloning a mechanism does not copy the lookup tables.
    Tables(Arc<GapTables>),
    Geometric(Geometric),
}

/// The tables of one q: the top level `A` and the digits below it.
#[derive(Debug)]
struct GapTables {
    /// `A`, geometric of ratio `r^(64^L)`, with the tail bucket.
    top: ChunkTable,
    /// `B_{L-1}, ..., B_0`: most significant first.
    digits: Vec<ChunkTable>,
}

/// A law over `TABLE` outcomes drawn from one 14-bit chunk: Walker's alias table (1977),
/// read through a lookup table.
///
/// A draw of the alias table is a uniform column and a 53-bit uniform U compared with the
/// column's keep threshold: below it the column is the outcome, otherwise its alias. The
/// lookup table is indexed by a chunk holding the column and the top `PREFIX_BITS` of U.
/// Those bits decide the comparison unless they equal the threshold's own top bits
/// (probability 2^-8); only then is a fresh draw spent on the remaining bits of U. The
/// outcome therefore has exactly the alias table's law, from 14 bits instead of 64.
struct ChunkTable {
    /// Per column: the alias in the top `TABLE_BITS` bits, the keep threshold in the low 53.
    entries: [u64; TABLE],
    /// Per chunk: the outcome, or `TIE`.
    lookup: Box<[u8; 1 << CHUNK_BITS]>,
}

impl fmt::Debug for ChunkTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChunkTable").finish_non_exhaustive()
    }
}

impl ChunkTable {
    /// `probs` must sum to 1.
    fn new(probs: &[f64; TABLE]) -> Self {
        let entries = alias_entries(probs);
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

    #[inline]
    fn draw<R: Rng + ?Sized>(&self, chunk: usize, rng: &mut R) -> u8 {
        match self.lookup[chunk] {
            TIE => self.resolve_tie(chunk, rng.next_u64()),
            outcome => outcome,
        }
    }
}

/// Walker's alias table for `probs` (summing to 1), packed as in [`ChunkTable::entries`].
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

/// The geometric law of ratio `r = exp(ln_r)` on `0..TABLE`: truncated and renormalized,
/// or, `with_tail`, with the last outcome holding all the mass from `TABLE - 1` on.
/// Written in ln r with exp_m1 so that r within 1e-13 of 1 keeps its precision.
fn geometric_law(ln_r: f64, with_tail: bool) -> [f64; TABLE] {
    // r^j, with r^0 = 1 even when r = 0 (ln r = -inf).
    let power = |j: usize| if j == 0 { 1.0 } else { (j as f64 * ln_r).exp() };
    let fail = -ln_r.exp_m1();
    let mass = if with_tail {
        1.0
    } else {
        -(TABLE as f64 * ln_r).exp_m1()
    };
    let mut law = std::array::from_fn(|j| power(j) * fail / mass);
    if with_tail {
        law[TABLE - 1] = power(TABLE - 1);
    }
    law
}

impl GapTables {
    /// The tables for `0 < q <= 1`, or `None` when they would need more than `MAX_DIGITS`
    /// digits.
    fn new(q: f64) -> Option<Self> {
        let ln_r = (-q).ln_1p();
        // ln of the tail mass r^(64^L (TABLE - 1)) must fall below ln TAIL_MASS_MAX.
        let levels = (0..=MAX_DIGITS).find(|&level| {
            let scale = (TABLE as f64).powi(level as i32) * (TABLE - 1) as f64;
            scale * ln_r < TAIL_MASS_MAX.ln()
        })?;
        let ln_r_at = |level: usize| (TABLE as f64).powi(level as i32) * ln_r;
        Some(Self {
            top: ChunkTable::new(&geometric_law(ln_r_at(levels), true)),
            digits: (0..levels)
                .rev()
                .map(|level| ChunkTable::new(&geometric_law(ln_r_at(level), false)))
                .collect(),
        })
    }

    /// Calls `visit` with each chosen index of `0..len`, increasingly.
    #[inline]
    fn for_each<R: Rng + ?Sized>(&self, len: u64, rng: &mut R, visit: impl FnMut(u32)) {
        // Without digits the loop is the hot path of moderate q: compiled separately, it
        // carries no digit loop and no scaling.
        if self.digits.is_empty() {
            self.scan::<false, R>(len, rng, visit);
        } else {
            self.scan_with_digits(len, rng, visit);
        }
    }

    /// Kept out of line so that the hot path's caller stays small.
    #[inline(never)]
    fn scan_with_digits<R: Rng + ?Sized>(&self, len: u64, rng: &mut R, visit: impl FnMut(u32)) {
        self.scan::<true, R>(len, rng, visit);
    }

    #[inline]
    fn scan<const DIGITS: bool, R: Rng + ?Sized>(
        &self,
        len: u64,
        rng: &mut R,
        mut visit: impl FnMut(u32),
    ) {
        let top_unit = if DIGITS {
            1u64 << (TABLE_BITS as usize * self.digits.len())
        } else {
            1
        };
        // `start` is the first index not yet decided; each gap skips that many indices.
        let mut start = 0u64;
        let mut chunks = Chunks::default();
        loop {
            // The top part, 64^L A.
            let chunk = chunks.next(rng);
            let mut top = self.top.lookup[chunk];
            // One rare branch covers both ties and the tail bucket.
            if top >= TAIL {
                if top == TIE {
                    top = self.top.resolve_tie(chunk, rng.next_u64());
                }
                if top == TAIL {
                    start += u64::from(TAIL) * top_unit;
                    if start >= len {
                        return;
                    }
                    continue;
                }
            }
            start += u64::from(top) * top_unit;
            if start >= len {
                return;
            }
            if DIGITS {
                // The digits, most significant first; each may already pass `len`.
                let mut unit = top_unit;
                for digit in &self.digits {
                    unit >>= TABLE_BITS;
                    start += u64::from(digit.draw(chunks.next(rng), rng)) * unit;
                    if start >= len {
                        return;
                    }
                }
            }
            visit(start as u32);
            start += 1;
        }
    }
}

/// 14-bit chunks of 64-bit draws, lowest bits first. What a call leaves is dropped.
#[derive(Default)]
struct Chunks {
    word: u64,
    left: u32,
}

impl Chunks {
    #[inline]
    fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> usize {
        if self.left == 0 {
            self.word = rng.next_u64();
            self.left = CHUNKS_PER_DRAW;
        }
        let chunk = (self.word & CHUNK_MASK) as usize;
        self.word >>= CHUNK_BITS;
        self.left -= 1;
        chunk
    }
}

impl BernoulliSet {
    /// `q` must lie in `[0, 1]`.
    pub(crate) fn new(q: f64) -> Self {
        let gap = if q <= 0.0 {
            GapSampler::Never
        } else if let Some(tables) = GapTables::new(q) {
            GapSampler::Tables(Arc::new(tables))
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
            GapSampler::Tables(tables) => tables.for_each(len, rng, visit),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::test_stats as common;

    /// The gap sampler across its levels, down to q = 1e-10 (five base-64 digits), over a
    /// range of 3/q indices (more than a runnable mechanism's domain): the first chosen
    /// index is G, geometric(q), censored at the end of the range. Fits min(G, len) in
    /// bins of roughly equal probability.
    #[test]
    fn first_gap_is_geometric_at_every_level() {
        use crate::simulation::{Role, stream_rng};
        for (q, seed) in [
            (0.05f64, 41),
            (0.005, 42),
            (1e-4, 43),
            (1e-7, 44),
            (1e-10, 45),
        ] {
            let set = BernoulliSet::new(q);
            let len = (3.0 / q).min(4e9) as u32;
            let len64 = u64::from(len);
            // P[G >= g] = r^g with r = 1 - q.
            let ln_r = (-q).ln_1p();
            let survive = |g: u64| (g as f64 * ln_r).exp();
            let bins = 20;
            let mut edges: Vec<u64> = (0..bins)
                .map(|i| ((1.0 - f64::from(i) / f64::from(bins)).ln() / ln_r).ceil() as u64)
                .filter(|&e| e < len64)
                .collect();
            edges.dedup();
            edges.push(len64); // the last cell holds the censored draws, G >= len
            let mut probs: Vec<f64> = edges
                .windows(2)
                .map(|w| survive(w[0]) - survive(w[1]))
                .collect();
            probs.push(survive(len64));

            let draws = 100_000;
            let mut observed = vec![0u64; probs.len()];
            let mut rng = stream_rng(seed, 0, Role::Other(3), 0);
            for _ in 0..draws {
                let mut first = None;
                set.for_each(len, &mut rng, |i| {
                    first.get_or_insert(u64::from(i));
                });
                let gap = first.unwrap_or(len64);
                observed[edges.partition_point(|&e| e <= gap) - 1] += 1;
            }
            let p = common::chi_square_p(&observed, &probs);
            assert!(p > common::ALPHA, "q = {q}: first-gap chi-square p = {p}");
        }
    }

    /// Units of probability 2^-(TABLE_BITS + KEEP_BITS), in which both laws are exact.
    const UNIT_BITS: u32 = TABLE_BITS + KEEP_BITS;

    /// The law of an outcome drawn from the alias table itself.
    fn alias_law(table: &ChunkTable) -> [u128; TABLE] {
        let mut law = [0u128; TABLE];
        for (column, &entry) in table.entries.iter().enumerate() {
            let (alias, keep) = split_entry(entry);
            law[column] += u128::from(keep);
            law[alias] += (1u128 << KEEP_BITS) - u128::from(keep);
        }
        law
    }

    /// The law of an outcome drawn through the lookup table and tie resolution, and the
    /// number of tied chunks.
    fn lookup_law(table: &ChunkTable) -> ([u128; TABLE], usize) {
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

    /// Checks a table's lookup law against its alias law (exactly) and against `target`.
    fn check_table(table: &ChunkTable, target: &[f64; TABLE], what: &str) -> usize {
        let (law, ties) = lookup_law(table);
        assert_eq!(law, alias_law(table), "{what}");
        assert_eq!(law.iter().sum::<u128>(), 1 << UNIT_BITS, "{what}");
        for (j, (&mass, &exact)) in law.iter().zip(target).enumerate() {
            let got = mass as f64 / (1u128 << UNIT_BITS) as f64;
            assert!(
                (got - exact).abs() < 1e-15,
                "{what}, outcome {j}: {got} vs {exact}"
            );
        }
        ties
    }

    #[test]
    fn lookup_tables_have_exactly_the_alias_law_and_the_geometric_laws() {
        let mut ties_seen = 0;
        for q in [
            1.0, 0.999, 0.77, 0.5, 0.3, 0.1192, 0.05, 0.022, 0.011, 1e-4, 1e-7, 1e-11,
        ] {
            let tables = GapTables::new(q).expect("within MAX_DIGITS");
            let levels = tables.digits.len();
            // The level of A: the first whose tail mass r^(64^L 63) is below 1/4, computed
            // here by repeated powers rather than logarithms.
            let r_at = |level: usize| (0..level).fold(1.0 - q, |r: f64, _| r.powi(64));
            assert!(r_at(levels).powi(63) < TAIL_MASS_MAX, "q = {q}");
            if levels > 0 {
                assert!(r_at(levels - 1).powi(63) >= TAIL_MASS_MAX, "q = {q}");
            }
            // A: geometric with tail; digits: truncated geometrics, most significant first.
            // `1 - q` carries an absolute error of 1e-16, a relative one of 1e-16 / q in
            // q itself, which bounds how closely this crude computation can agree.
            let tolerance = 1e-12 + 1e-13 / q;
            let geometric = |r: f64, tail: bool| -> [f64; TABLE] {
                let norm = if tail { 1.0 } else { 1.0 - r.powi(64) };
                let mut law = std::array::from_fn(|j| (1.0 - r) * r.powi(j as i32) / norm);
                if tail {
                    law[TABLE - 1] = r.powi(63);
                }
                law
            };
            let near = |a: &[f64; TABLE], b: &[f64; TABLE]| {
                a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tolerance * y)
            };
            let top = geometric(r_at(levels), true);
            let ln_r = (-q).ln_1p();
            let top_law = geometric_law(64f64.powi(levels as i32) * ln_r, true);
            assert!(near(&top_law, &top), "q = {q}: top law");
            ties_seen += check_table(&tables.top, &top_law, &format!("q = {q}, top"));
            for (i, table) in tables.digits.iter().enumerate() {
                let level = levels - 1 - i;
                let digit_law = geometric_law(64f64.powi(level as i32) * ln_r, false);
                assert!(
                    near(&digit_law, &geometric(r_at(level), false)),
                    "q = {q}: digit {level}"
                );
                ties_seen += check_table(table, &digit_law, &format!("q = {q}, digit {level}"));
            }
        }
        assert!(ties_seen > 0, "the tie path must be exercised");
    }

    #[test]
    fn levels_grow_as_q_shrinks_and_stop_at_max_digits() {
        let levels = |q: f64| GapTables::new(q).map(|t| t.digits.len());
        assert_eq!(levels(0.5), Some(0));
        assert_eq!(levels(0.022), Some(0));
        assert_eq!(levels(0.011), Some(1));
        assert!(levels(1e-4) > levels(1e-2));
        assert!(levels(1e-7) > levels(1e-4));
        assert_eq!(levels(1e-16), None);
        assert!(matches!(
            BernoulliSet::new(1e-16).gap,
            GapSampler::Geometric(_)
        ));
        assert!(matches!(BernoulliSet::new(0.0).gap, GapSampler::Never));
    }

    #[test]
    fn a_tie_is_decided_by_the_fresh_bits() {
        let tables = GapTables::new(0.1192).unwrap();
        let table = &tables.top;
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

/// Value stability: every regime of the gap sampler pinned, as rand_distr's value-stability
/// tests do. A change here changes every published simulation; make it only on purpose.
#[cfg(test)]
mod golden {
    use rand::Rng;

    use super::BernoulliSet;
    use crate::simulation::{Role, stream_rng};

    /// The first chosen indices (at most 6), how many were chosen, and the stream's next
    /// draw afterwards (which pins how many random bits the sampler consumed).
    fn pin(q: f64, len: u32) -> (Vec<u32>, usize, u64) {
        let mut rng = stream_rng(2026, 11, Role::Other(9), 0);
        let mut chosen = Vec::new();
        BernoulliSet::new(q).for_each(len, &mut rng, |i| chosen.push(i));
        let count = chosen.len();
        chosen.truncate(6);
        (chosen, count, rng.next_u64())
    }

    #[test]
    fn every_gap_regime_is_pinned() {
        let cases: [(f64, u32); 7] = [
            (0.0, 1000),       // never
            (0.5, 40),         // tables, no digits
            (0.05, 400),       // tables, no digits, tail bucket in play
            (0.01, 4_000),     // one base-64 digit
            (1e-4, 400_000),   // two digits
            (1e-9, u32::MAX),  // five digits
            (1e-14, u32::MAX), // beyond MAX_DIGITS: rand_distr's geometric
        ];
        let got: Vec<_> = cases.iter().map(|&(q, len)| pin(q, len)).collect();
        let want: Vec<(Vec<u32>, usize, u64)> = vec![
            (vec![], 0, 14161137049869916642),
            (vec![0, 4, 6, 7, 8, 10], 17, 500980816646435440),
            (vec![25, 30, 37, 39, 52, 57], 25, 17611925461776695345),
            (vec![4, 102, 147, 280, 413, 638], 49, 6907172125361258091),
            (
                vec![305, 5214, 17761, 33922, 39483, 47499],
                44,
                7747912123204020676,
            ),
            (
                vec![80089964, 1221485197, 2679181789, 2860314522, 4159496154],
                5,
                10236593733640194762,
            ),
            (vec![], 0, 1417349164319949069),
        ];
        assert_eq!(got, want);
    }
}
