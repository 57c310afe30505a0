//! Laplace noise drawn in bulk: rand_distr's exponential ziggurat run over 64-bit words
//! taken from the generator [`CHUNK`] at a time, with the sign from a bit the ziggurat
//! leaves unused.
//!
//! rand_distr's `Exp1` draws its word inside each call, and a block generator's
//! position then goes through memory on every coordinate; SHE draws k coordinates per
//! report, which made this loop most of SHE's cost. Drawing the words of a chunk with
//! one `fill` and testing them in a loop without calls (which the compiler vectorizes,
//! with gathers where AVX-512 has them) made SHE's simulated user about 1.7 times
//! faster (`cargo bench -p ldp-attack --bench she`).
//!
//! The law is rand_distr's: a word gives the layer `i` (its low 8 bits) and `u` (its top
//! 52 bits); `x = u X[i]` is returned when it lies inside the layer's rectangle
//! (probability about 0.99); otherwise, after the chunk, the same word goes through the
//! ziggurat's slow path (the tail for the base layer, the wedge test for the others),
//! and a rejected candidate starts the ziggurat over from a fresh word, as rand_distr
//! does. The sign is bit 8 of the word, independent of the 60 bits the magnitude's first
//! try uses and of every later word.
//!
//! The slow path's `ln` and `exp` come from the `libm` crate rather than the platform's
//! maths library (glibc natively, a port of musl in WebAssembly), whose last bits
//! differ: with them the browser client and `ldp perturb` sent different SHE reports for
//! the same seed (one coordinate in 320,000, a tail draw).

use multiversion::multiversion;
use rand::{Rng, RngExt};

use super::ziggurat_tables::{ZIG_EXP_F, ZIG_EXP_R, ZIG_EXP_X};

/// Words drawn per `fill`: 512 bytes of stack.
pub(crate) const CHUNK: usize = 64;

/// Fills `out` with independent draws of `b S E`: E standard exponential, S a fair sign.
///
/// E is below 44.44 (the tail's `R - ln U` with U at least 2^-53 is at most
/// `R + 53 ln 2 = 44.43`), so `|out[i]| < 44.44 b`. Compiled for AVX-512 and AVX2
/// besides the baseline and chosen at run time (`multiversion`); no floating-point
/// operation is fused or reordered in any version, so all draw the same values.
#[multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl+avx512dq+avx2+fma+bmi1+bmi2",
    "x86_64+avx2+fma+bmi1+bmi2",
))]
pub(crate) fn fill_laplace<R: Rng + ?Sized>(b: f64, rng: &mut R, out: &mut [f64]) {
    let mut words = [0u64; CHUNK];
    for chunk in out.chunks_mut(CHUNK) {
        let words = &mut words[..chunk.len()];
        rng.fill(words);
        // Lanes outside their layer's rectangle, finished after the loop.
        let mut slow = 0u64;
        for (j, (v, &w)) in chunk.iter_mut().zip(words.iter()).enumerate() {
            let i = (w & 0xff) as usize;
            let x = uniform(w) * ZIG_EXP_X[i];
            slow |= u64::from(x >= ZIG_EXP_X[i + 1]) << j;
            *v = signed(w, x * b);
        }
        while slow != 0 {
            let j = slow.trailing_zeros() as usize;
            chunk[j] = signed(words[j], slow_path(words[j], rng) * b);
            slow &= slow - 1;
        }
    }
}

/// The word's top 52 bits as a uniform in (0, 1), as rand_distr's ziggurat forms it.
#[inline(always)]
fn uniform(w: u64) -> f64 {
    f64::from_bits(0x3FF0_0000_0000_0000 | (w >> 12)) - (1.0 - f64::EPSILON / 2.0)
}

/// `magnitude` with the sign of the word's bit 8 (a sign flip, exact).
#[inline(always)]
fn signed(w: u64, magnitude: f64) -> f64 {
    f64::from_bits(magnitude.to_bits() ^ ((w >> 8) & 1) << 63)
}

/// The ziggurat's answer for a word whose candidate left its layer's rectangle: the tail
/// for the base layer, the wedge test for the others, and on rejection the whole
/// ziggurat again from a fresh word.
#[cold]
#[inline(never)]
fn slow_path<R: Rng + ?Sized>(mut w: u64, rng: &mut R) -> f64 {
    loop {
        let i = (w & 0xff) as usize;
        let x = uniform(w) * ZIG_EXP_X[i];
        if x < ZIG_EXP_X[i + 1] {
            return x;
        }
        if i == 0 {
            // The tail beyond R. U = 0 (probability 2^-53) would give infinity: drawn again.
            loop {
                let u: f64 = rng.random();
                if u > 0.0 {
                    return ZIG_EXP_R - libm::log(u);
                }
            }
        }
        let f = ZIG_EXP_F[i + 1] + (ZIG_EXP_F[i] - ZIG_EXP_F[i + 1]) * rng.random::<f64>();
        if f < libm::exp(-x) {
            return x;
        }
        w = rng.next_u64();
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_stats::{ALPHA, chi_square_p};
    use super::*;
    use crate::simulation::{Role, stream_rng};

    /// Laplace(1) CDF.
    fn cdf(x: f64) -> f64 {
        if x < 0.0 {
            0.5 * x.exp()
        } else {
            1.0 - 0.5 * (-x).exp()
        }
    }

    fn draws(n: usize, b: f64, seed: u64) -> Vec<f64> {
        let mut rng = stream_rng(seed, 0, Role::Genuine, 0);
        let mut out = vec![0.0; n];
        // Uneven lengths: whole chunks and a partial one.
        for part in out.chunks_mut(1000) {
            fill_laplace(b, &mut rng, part);
        }
        out
    }

    #[test]
    fn the_draws_follow_the_laplace_law_into_the_tail() {
        // Bins of equal mass 1/200 plus the tails beyond |x| = 7.7 (the ziggurat's R,
        // where its tail sampler takes over): the layers, the wedges and the tail all
        // count.
        let n = 2_000_000;
        let xs = draws(n, 1.0, 11);
        let mut edges: Vec<f64> = (1..200)
            .map(|j| {
                let p = f64::from(j) / 200.0;
                if p < 0.5 {
                    (2.0 * p).ln()
                } else {
                    -(2.0 * (1.0 - p)).ln()
                }
            })
            .collect();
        edges.extend([-ZIG_EXP_R, ZIG_EXP_R]);
        edges.sort_by(f64::total_cmp);
        let mut observed = vec![0u64; edges.len() + 1];
        for &x in &xs {
            observed[edges.partition_point(|&e| e <= x)] += 1;
        }
        let probs: Vec<f64> = (0..=edges.len())
            .map(|j| {
                let lo = if j == 0 { 0.0 } else { cdf(edges[j - 1]) };
                let hi = if j == edges.len() { 1.0 } else { cdf(edges[j]) };
                hi - lo
            })
            .collect();
        let p = chi_square_p(&observed, &probs);
        assert!(p > ALPHA, "p = {p}");
        // The tail is reached on both sides (expected count e^-R n / 2 = 454 each).
        assert!(observed[0] > 350 && observed[edges.len()] > 350);
    }

    #[test]
    fn the_sign_is_independent_of_the_magnitude() {
        // Sign x magnitude decile: 20 cells of expected mass 1/20.
        let n = 400_000;
        let xs = draws(n, 0.5, 12);
        let deciles: Vec<f64> = (1..10).map(|j| -(1.0 - f64::from(j) / 10.0).ln()).collect();
        let mut observed = vec![0u64; 20];
        for &x in &xs {
            let m = deciles.partition_point(|&d| d <= x.abs() / 0.5);
            observed[m + 10 * usize::from(x < 0.0)] += 1;
        }
        let p = chi_square_p(&observed, &[1.0 / 20.0; 20]);
        assert!(p > ALPHA, "p = {p}");
    }

    #[test]
    fn the_scale_multiplies_and_nothing_is_unbounded() {
        let a = draws(10_000, 1.0, 13);
        let b = draws(10_000, 3.0, 13);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(*y, x * 3.0, "same stream, scaled");
            assert!(x.is_finite() && x.abs() < 44.44);
        }
    }
}
