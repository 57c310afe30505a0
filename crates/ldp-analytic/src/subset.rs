//! Subset selection: p* and q*, MSE, ASR, EPG, costs and repeated collection, side by side.

use ldp_core::families::subset::ln_binomial;
use ldp_core::{DomainSize, Epsilon, SubsetSelection, families};

use crate::asr::LhAsr;
use crate::bounds::{LowerBounds, Wanted};
use crate::cost::{Encoding, index_bits, whole_bits};
use crate::epg::Poisoning;
use crate::family::ClosedForms;
use crate::pure::{one_minus_t, t};
use crate::support::SupportLaw;

/// SS's `(p*, q*)`: the probabilities that a report's subset holds the true item, and
/// any other given item.
///
/// # Formula
///
/// ```text
/// p* = w e^eps / (w e^eps + k - w)
/// q* = (w e^eps (w - 1) + (k - w) w) / ((k - 1) (w e^eps + k - w))
/// ```
///
/// with `w` the subset size omega (paper Section "ss_protocol").
pub fn probabilities(k: DomainSize, eps: Epsilon, omega: u32) -> (f64, f64) {
    families::subset::probabilities(k, eps, omega)
}

/// SS's approximate variance per user (n = 1): the paper's MSE.
///
/// # Formula
///
/// ```text
/// Var = q* (1 - q*) / (p* - q*)^2
///     = (w e^eps - e^eps + k - w) (w e^eps + k - w - 1) / (w (e^eps - 1)^2 (k - w))
/// ```
///
/// Paper Eq. "approx_var" at SS's p* and q*; it equals GRR's at `w = 1`.
///
/// # Erratum
/// The paper's Eq. "var_ss" does not reduce to GRR at `w = 1`; it is not used.
pub fn variance(k: DomainSize, eps: Epsilon, omega: u32) -> f64 {
    let (t, k, w) = (t(eps), k.as_f64(), f64::from(omega));
    // Numerator and denominator divided by e^(2 eps).
    (w - 1.0 + (k - w) * t) * (w + (k - w - 1.0) * t) / (w * (k - w) * one_minus_t(eps).powi(2))
}

/// SS's expected ASR: a uniform guess in the reported subset.
///
/// # Formula
///
/// ```text
/// ASR = e^eps / (w e^eps + k - w)
/// ```
///
/// Paper Eq. "exp_asr_ss".
pub fn asr(k: DomainSize, eps: Epsilon, omega: u32) -> f64 {
    let w = f64::from(omega);
    1.0 / (w + (k.as_f64() - w) * t(eps))
}

/// The rank of the subset among all subsets of its size.
///
/// # Formula
///
/// ```text
/// bits = ceil(log2 C(k, w))
/// ```
pub(crate) fn rank_bits(k: DomainSize, omega: u32) -> f64 {
    whole_bits(ln_binomial(u64::from(k.get()), u64::from(omega)) / std::f64::consts::LN_2)
}

fn law(k: DomainSize, eps: Epsilon, omega: u32) -> SupportLaw {
    SupportLaw::UniformSubset {
        size: omega,
        p: probabilities(k, eps, omega).0,
    }
}

impl ClosedForms for SubsetSelection {
    fn variance(k: DomainSize, eps: Epsilon, omega: u32) -> f64 {
        variance(k, eps, omega)
    }

    fn asr(k: DomainSize, eps: Epsilon, omega: u32, _: LhAsr) -> f64 {
        asr(k, eps, omega)
    }

    /// An SS report holds at most omega targets.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = (s - r q*) / (p* - q*),   s = min(r, w)
    /// ```
    ///
    /// Cao et al.'s maximal gain of one fake report (paper Section "results_poisoning").
    fn fake_report_gain(k: DomainSize, eps: Epsilon, omega: u32, targets: u32) -> Option<f64> {
        let (p, q) = probabilities(k, eps, omega);
        let r = f64::from(targets);
        let s = r.min(f64::from(omega));
        Some((s - r * q) / (p - q))
    }

    /// The subset's rank, or its w indices, the smaller first.
    ///
    /// # Formula
    ///
    /// ```text
    /// bits = min(ceil(log2 C(k, w)), w ceil(log2 k))
    /// ```
    fn encodings(k: DomainSize, _: Epsilon, omega: u32) -> Vec<(Encoding, f64)> {
        let mut out = vec![
            (Encoding::SubsetRank, rank_bits(k, omega)),
            (
                Encoding::SubsetIndices,
                f64::from(omega) * index_bits(k.as_f64()),
            ),
        ];
        out.sort_by(|a, b| a.1.total_cmp(&b.1));
        out
    }

    fn bits(k: DomainSize, _: Epsilon, omega: u32) -> f64 {
        rank_bits(k, omega).min(f64::from(omega) * index_bits(k.as_f64()))
    }

    /// One counter increment per item of the subset.
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = w
    /// ```
    fn server_ops(_: DomainSize, _: Epsilon, omega: u32) -> f64 {
        f64::from(omega)
    }

    /// A coin, then omega - 1 or omega draws of Floyd's algorithm.
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 1 + p* (w - 1) + (1 - p*) w = 1 + w - p*
    /// ```
    fn client_draws(k: DomainSize, eps: Epsilon, omega: u32) -> f64 {
        1.0 + f64::from(omega) - probabilities(k, eps, omega).0
    }

    /// Exact at omega = 1 (multinomial counts, as GRR); `None` above, where the counts of
    /// one report's subset are dependent.
    fn asr_after(k: DomainSize, eps: Epsilon, omega: u32, t: u32) -> Option<f64> {
        law(k, eps, omega).asr_after(k, t)
    }

    fn pairwise_support(k: DomainSize, eps: Epsilon, omega: u32) -> Option<(f64, f64)> {
        Some(law(k, eps, omega).pairwise(k))
    }

    fn map_asr(k: DomainSize, eps: Epsilon, omega: u32, sorted_prior: &[f64]) -> Option<f64> {
        Some(law(k, eps, omega).map_asr(sorted_prior))
    }

    /// ASR, MSE and bits over omega in `[a, b]` (the EPG is not monotone in omega).
    fn lower_bounds(
        k: DomainSize,
        eps: Epsilon,
        a: u32,
        b: u32,
        wanted: Wanted,
        _: LhAsr,
        _: &Poisoning,
    ) -> LowerBounds {
        let (t, s) = (t(eps), one_minus_t(eps));
        let kf = k.as_f64();
        let (af, bf) = (f64::from(a), f64::from(b));
        LowerBounds {
            // 1 / (omega s + k t): decreasing in omega.
            asr: wanted.asr.then(|| 1.0 / (bf * s + kf * t)),
            // (s w + k t - 1)(s w + (k - 1) t) / (w (k - w) s^2): both numerator factors
            // are nonnegative and increasing, the denominator concave with its largest
            // value at w = k/2.
            mse: wanted.mse.then(|| {
                let w_max = (kf / 2.0).clamp(af, bf);
                let numerator = (s * af + kf * t - 1.0).max(0.0) * (s * af + (kf - 1.0) * t);
                numerator / (w_max * (kf - w_max) * s * s)
            }),
            epg: None,
            // ceil(log2 C(k, w)) is unimodal in w: smallest at an end (and the index list
            // is never smaller than the rank).
            bits: wanted.bits.then(|| rank_bits(k, a).min(rank_bits(k, b))),
        }
    }
}
