//! dBitFlip (`ldp_core::families::bit_flip`, Ding, Kulkarni and Yekhanin 2017): d sampled
//! buckets, one symmetric bit each, estimated from the users who sampled each bucket.
//! Variance, exact ASR, EPG and costs, side by side.

use ldp_core::families::bit_flip::{DBitFlip, keep_probability};
use ldp_core::{DomainSize, Epsilon};

use crate::asr::LhAsr;
use crate::cost::Encoding;
use crate::family::ClosedForms;
use crate::subset::rank_bits;

/// `e^(eps/2) / (e^(eps/2) - 1)^2 = p q / (p - q)^2`, one sampled bit's variance, in
/// `t = e^(-eps/2)` (no overflow at large eps, no cancellation at small).
fn bit_variance(eps: Epsilon) -> f64 {
    let t = (-eps.get() / 2.0).exp();
    let one_minus_t = -(-eps.get() / 2.0).exp_m1();
    t / (one_minus_t * one_minus_t)
}

/// dBitFlip's variance per user (n = 1) without the frequency term.
///
/// # Formula
///
/// ```text
/// Var = (k / d) e^(eps/2) / (e^(eps/2) - 1)^2
/// ```
///
/// Ding et al.'s estimator `f^(v) = k/(n d) sum_{i samples v} (b_i - q)/(p - q)` sums n
/// terms that are nonzero with probability d/k; a user of another value contributes
/// `(d/k) p q / (p - q)^2` to its second moment. At d = k it is SUE's variance.
pub fn variance(k: DomainSize, eps: Epsilon, bits: u32) -> f64 {
    k.as_f64() / f64::from(bits) * bit_variance(eps)
}

/// The exact variance of one bucket's estimate per user (n = 1) when its frequency is f.
///
/// # Formula
///
/// ```text
/// Var[f^(v)] = (k / d) e^(eps/2) / (e^(eps/2) - 1)^2 + f (k - d) / d
/// ```
///
/// A user of value v contributes `(d/k) ((p - q)^2 + p q) / (p - q)^2` to the second
/// moment and `d/k` to the mean, so `(d/k)(1 - d/k)` more variance than the approximation
/// counts, times `(k/d)^2`.
pub fn exact_variance(k: DomainSize, eps: Epsilon, bits: u32, f: f64) -> f64 {
    let (kf, d) = (k.as_f64(), f64::from(bits));
    variance(k, eps, bits) + f * (kf - d) / d
}

/// The exact expected ASR of the uniform-over-support attack (uniform over the domain
/// when no sampled bit is 1), under a uniform prior.
///
/// # Formula
///
/// ```text
/// ASR = p (1 - p^d) / (k q) + (d q p^(d-1) + (k - d) p^d) / k^2
/// ```
///
/// Derived here: the user's bucket is sampled with probability d/k; with bit 1 (p) it is
/// guessed among itself and the M ~ Bin(d - 1, q) other ones, `E[1/(1 + M)] = (1 -
/// p^d)/(d q)`; with bit 0 it is guessed only when no other bit is 1 (`p^(d-1)`), among
/// all k. Unsampled, it is guessed when no bit is 1 (`p^d`), among all k.
pub fn asr(k: DomainSize, eps: Epsilon, bits: u32) -> f64 {
    let p = keep_probability(eps);
    let q = 1.0 / (1.0 + (eps.get() / 2.0).exp());
    let (kf, d) = (k.as_f64(), f64::from(bits));
    let ln_p = (-q).ln_1p();
    // (1 - p^d) / q without cancellation when p is near 1; d in the limit q -> 0.
    let none_other = if q > 0.0 { -(d * ln_p).exp_m1() / q } else { d };
    p * none_other / kf
        + (d * q * ((d - 1.0) * ln_p).exp() + (kf - d) * (d * ln_p).exp()) / (kf * kf)
}

/// `(P10, P01)` of one report: x's bucket sampled with bit 1 and a given other bucket not,
/// and the reverse.
///
/// # Formula
///
/// ```text
/// P10 = (d/k) p (1 - (d-1)/(k-1) q),   P01 = (d/k) q (1 - (d-1)/(k-1) p)
/// ```
pub fn pairwise_support(k: DomainSize, eps: Epsilon, bits: u32) -> (f64, f64) {
    let p = keep_probability(eps);
    let q = 1.0 / (1.0 + (eps.get() / 2.0).exp());
    let (kf, d) = (k.as_f64(), f64::from(bits));
    let share = d / kf;
    let both = (d - 1.0) / (kf - 1.0);
    (share * p * (1.0 - both * q), share * q * (1.0 - both * p))
}

impl ClosedForms for DBitFlip {
    fn variance(k: DomainSize, eps: Epsilon, bits: u32) -> f64 {
        variance(k, eps, bits)
    }

    /// Ding et al.'s estimator, not the pure one: `(1/k) sum_v Var[f^(v)] / n`.
    ///
    /// # Formula
    ///
    /// ```text
    /// MSE = ((k/d) e^(eps/2) / (e^(eps/2) - 1)^2 + mean(f) (k - d) / d) / n
    /// ```
    fn expected_mse(k: DomainSize, eps: Epsilon, bits: u32, n: f64, f: &[f64]) -> f64 {
        let mean_f = f.iter().sum::<f64>() / f.len() as f64;
        exact_variance(k, eps, bits, mean_f) / n
    }

    fn asr(k: DomainSize, eps: Epsilon, bits: u32, _: LhAsr) -> f64 {
        asr(k, eps, bits)
    }

    /// A fake report samples `s = min(r, d)` targets with bit 1 and no other target.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = (k / d) s p / (p - q),   s = min(r, d)
    /// ```
    ///
    /// Under Ding et al.'s estimator a sampled target with bit 1 adds `(k/d)(1 - q)/(p -
    /// q)` to its count, and an unsampled one nothing (the pure estimator's `- r q*` is
    /// not subtracted from buckets a report did not sample).
    fn fake_report_gain(k: DomainSize, eps: Epsilon, bits: u32, targets: u32) -> Option<f64> {
        Self::fake_report_gain_supporting(k, eps, bits, targets, targets.min(bits))
    }

    /// A fake report that samples `supported` targets with bit 1 and no other target.
    fn fake_report_gain_supporting(
        k: DomainSize,
        eps: Epsilon,
        bits: u32,
        _: u32,
        supported: u32,
    ) -> Option<f64> {
        // p / (p - q) = 1 / (1 - e^(-eps/2)).
        let scale = -1.0 / (-eps.get() / 2.0).exp_m1();
        Some(k.as_f64() / f64::from(bits) * f64::from(supported) * scale)
    }

    /// The rank of the d buckets among the `C(k, d)` sets, and their d bits.
    ///
    /// # Formula
    ///
    /// ```text
    /// bits = ceil(log2 C(k, d)) + d
    /// ```
    fn encodings(k: DomainSize, eps: Epsilon, bits: u32) -> Vec<(Encoding, f64)> {
        vec![(Encoding::SubsetRankAndBits, Self::bits(k, eps, bits))]
    }

    fn bits(k: DomainSize, _: Epsilon, bits: u32) -> f64 {
        rank_bits(k, bits) + f64::from(bits)
    }

    /// One counter increment per (bucket, bit) cell.
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = d
    /// ```
    fn server_ops(_: DomainSize, _: Epsilon, bits: u32) -> f64 {
        f64::from(bits)
    }

    /// d draws of Floyd's algorithm and d coins.
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 2 d
    /// ```
    fn client_draws(_: DomainSize, _: Epsilon, bits: u32) -> f64 {
        2.0 * f64::from(bits)
    }

    /// No exact form implemented: each fresh report draws its own buckets, and the linked
    /// attacker's scores (+1 for a bucket sampled with bit 1, -1 with bit 0) are dependent
    /// through them. Not even at t = 1: with no bucket at 1, that attacker guesses among
    /// the unsampled buckets, where [`asr`]'s guesses among all k.
    fn asr_after(_: DomainSize, _: Epsilon, _: u32, _: u32) -> Option<f64> {
        None
    }

    fn pairwise_support(k: DomainSize, eps: Epsilon, bits: u32) -> Option<(f64, f64)> {
        Some(pairwise_support(k, eps, bits))
    }

    fn map_asr(_: DomainSize, _: Epsilon, _: u32, _: &[f64]) -> Option<f64> {
        None
    }
}
