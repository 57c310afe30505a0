//! The server's O(k) scan: which items of `0..k` a report `(seed, y)` supports, i.e.
//! `XXH32(decimal(v), seed) % g == y`. It is the whole cost of LH aggregation and of the
//! attack on it, so it is written for throughput:
//!
//! - Items are taken in groups of ten that share every decimal digit but the last. The
//!   hash state before the last byte is computed once per group; each item then costs one
//!   round, the final mix and a divisibility test.
//! - `h % g == y` becomes `h >= y` and `g | h - y`, tested with one multiplication by the
//!   inverse of g's odd part (Granlund and Montgomery 1994), so that everything is 32-bit
//!   lane arithmetic.
//! - A block of [`BLOCK`] items runs as one branch-free loop over fixed-size arrays, which
//!   the compiler turns into SIMD on any target; matches come out as a bit mask.
//! - The scan is compiled three times, for the baseline x86-64 (SSE2: four lanes, and no
//!   32-bit lane multiply), for AVX2 and for AVX-512, and the best one this CPU runs is
//!   chosen on the first call (`multiversion`). Integer arithmetic: every version finds
//!   the same items.
//!
//! [`for_each_hash`] runs the same groups and blocks for the values `h % g` themselves
//! (the count-mean sketches' exact ASR counts the columns each row gives the domain).

use std::ops::ControlFlow;

use multiversion::multiversion;

use super::xxh32::{
    Decimal, PRIME1, PRIME3, PRIME4, PRIME5, avalanche, initial, round1, round4, word,
};

/// Items per block: eight groups of ten (at most 128, the mask's width).
const BLOCK: usize = 80;
/// Items per block at the end of a length class: two groups of ten.
const SMALL_BLOCK: usize = 20;

/// Calls `visit(v)`, in increasing order, for every item `v < k` with
/// `XXH32(decimal(v), seed) % g == y`; none when `y >= g`.
#[inline]
pub(crate) fn for_each_match(k: u32, g: u32, seed: u32, y: u32, mut visit: impl FnMut(u32)) {
    if y < g {
        scan(k, g, seed, y, |base, _, mask| {
            visit_bits(base, mask, &mut visit)
        });
    }
}

/// Adds 1 to `counts[v]` for every match `v` (as [`for_each_match`] finds them) and
/// calls `visit(v)` on each, in increasing order. `counts` has k entries. A block with
/// at least one match in [`DENSE`] items is added as a whole (one vector addition of its
/// hits: BLH's blocks are half matches), a sparser one match by match (OLH's at large g).
#[inline]
pub(crate) fn add_matches(
    k: u32,
    g: u32,
    seed: u32,
    y: u32,
    counts: &mut [u64],
    mut visit: impl FnMut(u32),
) {
    if y < g {
        scan(k, g, seed, y, |base, hits, mask| {
            if mask.count_ones() as usize * DENSE >= hits.len() {
                for (c, &h) in counts[base as usize..].iter_mut().zip(hits) {
                    *c += u64::from(h);
                }
                visit_bits(base, mask, &mut visit);
            } else {
                visit_bits(base, mask, &mut |v| {
                    counts[v as usize] += 1;
                    visit(v);
                });
            }
        });
    }
}

/// Calls `visit(base, values)` on consecutive blocks of the items `0..k`, in increasing
/// order, with `values[i] = XXH32(decimal(base + i), seed) % g` (`g >= 1`), until it
/// breaks: the hashes themselves, for callers that need every item's value (the
/// sketches' exact ASR counts the columns a row gives the domain). The same groups of ten
/// and blocks as the match scan, without the target.
#[inline]
pub(crate) fn for_each_hash(
    k: u32,
    g: u32,
    seed: u32,
    visit: impl FnMut(u32, &[u32]) -> ControlFlow<()>,
) {
    hashes(k, g, seed, visit);
}

/// A block is added as a whole when at least one in this many of its items match: the
/// vector addition then costs about what the scattered increments would.
const DENSE: usize = 16;

/// `visit(base + i)` for every set bit i of `mask`, increasingly.
#[inline(always)]
fn visit_bits(base: u32, mut mask: u128, visit: &mut impl FnMut(u32)) {
    while mask != 0 {
        visit(base + mask.trailing_zeros());
        mask &= mask - 1;
    }
}

/// The scan itself: `block(base, hits, mask)` for consecutive blocks of the domain, in
/// increasing order, where `hits[i]` is 1 when item `base + i` matches and 0 otherwise
/// (cut at k) and `mask` holds the same as bits.
#[multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl+avx512dq+avx2+fma+bmi1+bmi2",
    "x86_64+avx2+fma+bmi1+bmi2",
))]
fn scan<F: FnMut(u32, &[u8], u128)>(k: u32, g: u32, seed: u32, y: u32, mut block: F) {
    let divisor = Divisor::new(g);
    let target = Target { y, divisor };
    // Items of equal decimal length: 0..10, 10..100, ..., up to k.
    let (mut lo, mut len, mut ten_pow) = (0u64, 1usize, 10u64);
    while lo < u64::from(k) {
        let hi = u64::from(k).min(ten_pow);
        // The last digit opens a 4-byte word when the length is a multiple of 4.
        if len % 4 == 0 {
            scan_length::<true>(lo as u32, hi, len, seed, target, &mut block);
        } else {
            scan_length::<false>(lo as u32, hi, len, seed, target, &mut block);
        }
        (lo, len, ten_pow) = (hi, len + 1, ten_pow * 10);
    }
}

/// [`for_each_hash`]'s scan: the length classes of [`scan`], each block's values reduced
/// modulo g (a mask when g is a power of two, as the sketches' widths are).
#[multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl+avx512dq+avx2+fma+bmi1+bmi2",
    "x86_64+avx2+fma+bmi1+bmi2",
))]
fn hashes<F: FnMut(u32, &[u32]) -> ControlFlow<()>>(k: u32, g: u32, seed: u32, mut visit: F) {
    let (mut lo, mut len, mut ten_pow) = (0u64, 1usize, 10u64);
    while lo < u64::from(k) {
        let hi = u64::from(k).min(ten_pow);
        let mut group = Decimal::power_of_ten(len - 1);
        let mut base = lo;
        while base < hi {
            let word = len % 4 == 0;
            let small = hi - base <= SMALL_BLOCK as u64;
            let flow = match (word, small) {
                (true, false) => {
                    hash_block::<true, BLOCK>(base, hi, &mut group, seed, g, &mut visit)
                }
                (false, false) => {
                    hash_block::<false, BLOCK>(base, hi, &mut group, seed, g, &mut visit)
                }
                (true, true) => {
                    hash_block::<true, SMALL_BLOCK>(base, hi, &mut group, seed, g, &mut visit)
                }
                (false, true) => {
                    hash_block::<false, SMALL_BLOCK>(base, hi, &mut group, seed, g, &mut visit)
                }
            };
            match flow {
                ControlFlow::Continue(next) => base = next,
                ControlFlow::Break(()) => return,
            }
        }
        (lo, len, ten_pow) = (hi, len + 1, ten_pow * 10);
    }
}

/// The values modulo g of the `N` items from `base` (as [`scan_block`] takes them; the
/// group's digits give the length), passed to `visit` up to `hi`. Returns the next base.
#[inline(always)]
fn hash_block<const WORD: bool, const N: usize>(
    base: u64,
    hi: u64,
    group: &mut Decimal,
    seed: u32,
    g: u32,
    visit: &mut impl FnMut(u32, &[u32]) -> ControlFlow<()>,
) -> ControlFlow<(), u64> {
    let last: &[u32; N] = (if WORD { &LAST_IN_WORD } else { &LAST_BYTE })[..N]
        .try_into()
        .expect("blocks are at most BLOCK items");
    let len = group.len;
    let mut before = [0u32; N];
    for chunk in before.chunks_exact_mut(10) {
        chunk.fill(state_before_last::<WORD>(group, seed));
        group.increment_prefix(len - 1);
    }
    let mut values = [0u32; N];
    for i in 0..N {
        values[i] = finish::<WORD>(before[i], last[i]);
    }
    if g.is_power_of_two() {
        values.iter_mut().for_each(|v| *v &= g - 1);
    } else {
        values.iter_mut().for_each(|v| *v %= g);
    }
    let valid = (hi - base).min(N as u64) as usize;
    visit(base as u32, &values[..valid])?;
    ControlFlow::Continue(base + N as u64)
}

/// What the last digit adds to the state, by item (digit `i % 10`), over one block:
/// as a single-byte round and as the top byte of a 4-byte round.
const LAST_BYTE: [u32; BLOCK] = last_digit_terms(false);
const LAST_IN_WORD: [u32; BLOCK] = last_digit_terms(true);

const fn last_digit_terms(word: bool) -> [u32; BLOCK] {
    let mut terms = [0u32; BLOCK];
    let mut i = 0;
    while i < BLOCK {
        let byte = (b'0' + (i % 10) as u8) as u32;
        terms[i] = if word {
            (byte << 24).wrapping_mul(PRIME3)
        } else {
            byte.wrapping_mul(PRIME5)
        };
        i += 1;
    }
    terms
}

/// The report's hash value and the hash range.
#[derive(Clone, Copy)]
struct Target {
    y: u32,
    divisor: Divisor,
}

impl Target {
    #[inline(always)]
    fn matches(self, h: u32) -> bool {
        (h >= self.y) & self.divisor.divides(h.wrapping_sub(self.y))
    }
}

/// Scans the items `lo..hi`, all of `len` decimal digits (`lo` is 0 or `10^(len - 1)`, so
/// groups of ten start at multiples of ten and the first group's prefix is that of
/// `10^(len - 1)`). `WORD`: the last digit is the top byte of a 4-byte round rather than a
/// single-byte round.
#[inline(always)]
fn scan_length<const WORD: bool>(
    lo: u32,
    hi: u64,
    len: usize,
    seed: u32,
    target: Target,
    block: &mut impl FnMut(u32, &[u8], u128),
) {
    let mut group = Decimal::power_of_ten(len - 1);
    let mut base = u64::from(lo);
    while base < hi {
        // Short tails (the ten one-digit items, the end of the domain) in small blocks,
        // so that k = 100 does not hash 240 lanes.
        base = if hi - base > SMALL_BLOCK as u64 {
            scan_block::<WORD, BLOCK>(base, hi, len, &mut group, seed, target, block)
        } else {
            scan_block::<WORD, SMALL_BLOCK>(base, hi, len, &mut group, seed, target, block)
        };
    }
}

/// Scans the `N` items from `base` (a multiple of ten; those at `hi` or beyond are
/// ignored) whose first group has the prefix of `group`, which it advances. Returns
/// the next base.
#[inline(always)]
fn scan_block<const WORD: bool, const N: usize>(
    base: u64,
    hi: u64,
    len: usize,
    group: &mut Decimal,
    seed: u32,
    target: Target,
    block: &mut impl FnMut(u32, &[u8], u128),
) -> u64 {
    let last: &[u32; N] = (if WORD { &LAST_IN_WORD } else { &LAST_BYTE })[..N]
        .try_into()
        .expect("blocks are at most BLOCK items");
    let mut before = [0u32; N];
    for chunk in before.chunks_exact_mut(10) {
        chunk.fill(state_before_last::<WORD>(group, seed));
        group.increment_prefix(len - 1);
    }
    let (hits, mut mask) = block_matches::<WORD, N>(&before, last, target);
    let valid = (hi - base).min(N as u64) as u32;
    if valid < N as u32 {
        mask &= (1u128 << valid) - 1;
    }
    block(base as u32, &hits[..valid as usize], mask);
    base + N as u64
}

/// The hash state just before the last digit of the group's items is mixed in (for
/// `WORD`, with the word's lower three bytes already added).
#[inline(always)]
fn state_before_last<const WORD: bool>(d: &Decimal, seed: u32) -> u32 {
    let len = d.len;
    let mut h = initial(len, seed);
    let mut i = 0;
    while i + 4 < len || (!WORD && i + 4 == len) {
        h = round4(h, word(&d.digits, i));
        i += 4;
    }
    if WORD {
        // The last word without its top byte (the last digit, added per item).
        let low = word(&d.digits, i) & 0x00FF_FFFF;
        return h.wrapping_add(low.wrapping_mul(PRIME3));
    }
    while i + 1 < len {
        h = round1(h, d.digits[i]);
        i += 1;
    }
    h
}

/// The hash from the state before an item's last input and that input: its last round
/// (a whole word, or one byte) and the avalanche. Inlined into the vectorized loops.
#[inline(always)]
fn finish<const WORD: bool>(before: u32, last: u32) -> u32 {
    let h = before.wrapping_add(last);
    let h = if WORD {
        h.rotate_left(17).wrapping_mul(PRIME4)
    } else {
        h.rotate_left(11).wrapping_mul(PRIME1)
    };
    avalanche(h)
}

/// The matches of one block as bytes (1 for a match) and as a bit mask: one branch-free
/// loop over fixed-size arrays (vectorized), then each 8 match bytes gathered into 8 mask
/// bits.
#[inline(always)]
fn block_matches<const WORD: bool, const N: usize>(
    before: &[u32; N],
    last: &[u32; N],
    target: Target,
) -> ([u8; N], u128) {
    let mut hit = [0u8; N];
    for i in 0..N {
        hit[i] = u8::from(target.matches(finish::<WORD>(before[i], last[i])));
    }
    let mut mask = 0u128;
    for (j, bytes) in hit.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..bytes.len()].copy_from_slice(bytes);
        mask |= u128::from(gather_bits(u64::from_le_bytes(word))) << (8 * j);
    }
    (hit, mask)
}

/// Byte i of `bytes` (each 0 or 1) as bit i of the result: the multiplication moves byte i
/// to bit 56 + i; the other partial products fall below bit 56 without carries, or above
/// bit 63.
#[inline(always)]
fn gather_bits(bytes: u64) -> u8 {
    (bytes.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

/// Divisibility by a fixed `d >= 1`: with `d = 2^s d'` (d' odd) and `inv` the inverse of d'
/// modulo 2^32, `d | n` exactly when `rotr(n * inv, s) <= (2^32 - 1) / d` (Granlund and
/// Montgomery 1994; Hacker's Delight 10-17).
#[derive(Clone, Copy)]
struct Divisor {
    inv: u32,
    shift: u32,
    limit: u32,
}

impl Divisor {
    fn new(d: u32) -> Self {
        debug_assert!(d >= 1);
        let shift = d.trailing_zeros();
        let odd = d >> shift;
        // Newton's iteration doubles the correct low bits: 3 (x = odd) -> 6 -> 12 -> 24 -> 48.
        let mut inv = odd;
        for _ in 0..4 {
            inv = inv.wrapping_mul(2u32.wrapping_sub(odd.wrapping_mul(inv)));
        }
        Divisor {
            inv,
            shift,
            limit: u32::MAX / d,
        }
    }

    #[inline(always)]
    fn divides(self, n: u32) -> bool {
        n.wrapping_mul(self.inv).rotate_right(self.shift) <= self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::local_hash::hash_item;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn naive(k: u32, g: u32, seed: u32, y: u32) -> Vec<u32> {
        (0..k).filter(|&v| hash_item(v, seed, g) == y).collect()
    }

    fn scanned(k: u32, g: u32, seed: u32, y: u32) -> Vec<u32> {
        let mut out = Vec::new();
        for_each_match(k, g, seed, y, |v| out.push(v));
        out
    }

    #[test]
    fn gathering_bits_takes_byte_i_to_bit_i() {
        for m in 0..=255u8 {
            let bytes = (0..8).fold(0u64, |b, i| b | (u64::from((m >> i) & 1) << (8 * i)));
            assert_eq!(gather_bits(bytes), m);
        }
    }

    #[test]
    fn divisibility_matches_the_remainder() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let divisors = (1..=300u32).chain([
            1 << 20,
            3 << 20,
            1_000_003,
            u32::MAX / 2,
            u32::MAX - 1,
            u32::MAX,
        ]);
        for d in divisors {
            let div = Divisor::new(d);
            let edges = [
                0,
                1,
                d - 1,
                d,
                d.wrapping_add(1),
                u32::MAX,
                u32::MAX - u32::MAX % d,
            ];
            for n in edges
                .into_iter()
                .chain((0..2000).map(|_| rng.random::<u32>()))
            {
                assert_eq!(div.divides(n), n % d == 0, "d = {d}, n = {n}");
            }
        }
    }

    #[test]
    fn the_scan_finds_exactly_the_items_that_hash_to_y() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        // Domain sizes around every length boundary and block edge, both round kinds
        // (lengths 4 and 5 exercise the 4-byte word), and small and large hash ranges.
        let ks = [
            1, 2, 9, 10, 11, 79, 80, 81, 99, 100, 101, 999, 1000, 1001, 10_000, 10_001, 12_345,
        ];
        for k in ks {
            for g in [2, 3, 7, 13, 56, 256, 1_000_003, u32::MAX] {
                for _ in 0..3 {
                    let seed = rng.random::<u32>();
                    let y = rng.random_range(0..g);
                    assert_eq!(scanned(k, g, seed, y), naive(k, g, seed, y), "k {k}, g {g}");
                }
            }
        }
    }

    #[test]
    fn adding_matches_counts_and_lists_what_the_scan_finds() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        // g = 2: dense blocks; g = 97 at k = 12,345: mostly sparse blocks, about half of
        // them with a match; both kinds at g = 7.
        for k in [1, 10, 20, 81, 100, 101, 1001, 12_345] {
            for g in [2, 7, 97, 1_000_003] {
                let (seed, y) = (rng.random::<u32>(), rng.random_range(0..g));
                let mut counts = vec![1u64; k as usize];
                let mut listed = Vec::new();
                add_matches(k, g, seed, y, &mut counts, |v| listed.push(v));
                let want = naive(k, g, seed, y);
                assert_eq!(listed, want, "k {k}, g {g}");
                for (v, &c) in counts.iter().enumerate() {
                    let matched = want.binary_search(&(v as u32)).is_ok();
                    assert_eq!(c, 1 + u64::from(matched), "k {k}, v {v}");
                }
            }
        }
        // A value out of range matches nothing.
        let mut counts = vec![0u64; 50];
        add_matches(50, 2, 9, 2, &mut counts, |_| panic!("no match"));
        assert!(counts.iter().all(|&c| c == 0));
    }

    #[test]
    fn the_hash_scan_gives_every_item_its_value_in_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for k in [
            0, 1, 9, 10, 11, 20, 21, 79, 80, 81, 99, 100, 101, 1000, 1001, 12_345,
        ] {
            for g in [1, 2, 7, 1024, 1000, 1_000_003, u32::MAX] {
                let seed = rng.random::<u32>();
                let mut got = Vec::new();
                for_each_hash(k, g, seed, |base, values| {
                    assert_eq!(base as usize, got.len());
                    got.extend_from_slice(values);
                    ControlFlow::Continue(())
                });
                let want: Vec<u32> = (0..k).map(|v| hash_item(v, seed, g)).collect();
                assert_eq!(got, want, "k {k}, g {g}");
            }
        }
        // Long decimals, and a scan that stops early stops there.
        let (k, seed) = (1_000_000_123, 77);
        let mut blocks = 0;
        for_each_hash(k, 4096, seed, |base, values| {
            for (i, &v) in values.iter().enumerate() {
                assert_eq!(v, hash_item(base + i as u32, seed, 4096));
            }
            blocks += 1;
            if blocks == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!(blocks, 3);
        // Across 7 to 8 digits (the second 4-byte word).
        let mut tail = Vec::new();
        for_each_hash(10_000_100, 1000, seed, |base, values| {
            let items = (base..).zip(values.iter().copied());
            tail.extend(items.filter(|&(v, _)| v >= 9_999_900));
            ControlFlow::Continue(())
        });
        assert_eq!(tail.len(), 200);
        for (v, h) in tail {
            assert_eq!(h, hash_item(v, seed, 1000), "{v}");
        }
    }

    #[test]
    fn the_scan_is_right_for_long_decimals() {
        // Items of 8 to 10 digits: the second 4-byte word, and lengths past it.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (lo, hi) in [
            (9_999_000u32, 10_001_000u32),
            (99_999_000, 100_001_000),
            (999_999_000, 1_000_001_000),
        ] {
            let (seed, g) = (rng.random::<u32>(), 5);
            let y = rng.random_range(0..g);
            let mut got = Vec::new();
            for_each_match(hi, g, seed, y, |v| {
                if v >= lo {
                    got.push(v)
                }
            });
            let want: Vec<u32> = (lo..hi).filter(|&v| hash_item(v, seed, g) == y).collect();
            assert_eq!(got, want, "{lo}..{hi}");
        }
    }
}
