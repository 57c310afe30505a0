//! Unary encoding (SUE, OUE, AUE): p* and q*, MSE, ASR, EPG, costs and repeated
//! collection, side by side.

use ldp_core::{DomainSize, Epsilon, UnaryEncoding, families};

use crate::asr::LhAsr;
use crate::cost::Encoding;
use crate::family::ClosedForms;
use crate::ones::OneBits;
use crate::pure::{one_minus_t, t};

/// UE's `(p, q)`: each bit reports 1 w.p. p where the true item's bit is 1, w.p. q
/// elsewhere; q follows from p and the budget.
///
/// # Formula
///
/// ```text
/// q = p / (e^eps (1 - p) + p)
/// ```
///
/// Paper Eq. "ue_parameters" with the LDP constraint of Eq. "optimization_aue",
/// `eps = ln(p (1 - q) / ((1 - p) q))`; UE is pure with `p* = p`, `q* = q`.
pub fn probabilities(eps: Epsilon, p: f64) -> (f64, f64) {
    families::unary::probabilities(eps, p)
}

/// UE's approximate variance per user (n = 1): the paper's MSE.
///
/// # Formula
///
/// ```text
/// Var = ((e^eps - 1) q + 1)^2 / ((e^eps - 1)^2 (1 - q) q)
///     = e^-eps / (p (1 - p) (1 - e^-eps)^2)
/// ```
///
/// Paper Eq. "var_ue"; the second form follows from `q = p / (e^eps (1 - p) + p)`.
pub fn variance(eps: Epsilon, p: f64) -> f64 {
    t(eps) / (p * (1.0 - p) * one_minus_t(eps).powi(2))
}

fn bits(k: DomainSize, eps: Epsilon, p: f64) -> OneBits {
    let (p, q) = probabilities(eps, p);
    OneBits { k, p, q }
}

impl ClosedForms for UnaryEncoding {
    fn variance(_: DomainSize, eps: Epsilon, p: f64) -> f64 {
        variance(eps, p)
    }

    /// A uniform guess among the set bits, or among all items when none is set.
    ///
    /// # Formula
    ///
    /// ```text
    /// ASR = (1/k) [ (1 - p) (1 - q)^(k-1) + (p / q) (1 - (1 - q)^k) ]
    /// ```
    ///
    /// Paper Eq. "exp_asr_ue_closed" (the closed form of Eq. "exp_asr_ue"), through
    /// [`crate::asr::ones`].
    fn asr(k: DomainSize, eps: Epsilon, p: f64, _: LhAsr) -> f64 {
        bits(k, eps, p).law().asr(k)
    }

    /// Every target bit set, and no other.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = r (1 - q) / (p - q) = r / (p (1 - e^-eps))
    /// ```
    ///
    /// Paper Eq. "epg_pq" without its `beta` and `f_T`.
    fn fake_report_gain(_: DomainSize, eps: Epsilon, p: f64, targets: u32) -> Option<f64> {
        Some(f64::from(targets) / (p * one_minus_t(eps)))
    }

    fn encodings(k: DomainSize, eps: Epsilon, p: f64) -> Vec<(Encoding, f64)> {
        bits(k, eps, p).encodings()
    }

    fn bits(k: DomainSize, eps: Epsilon, p: f64) -> f64 {
        bits(k, eps, p).bits()
    }

    fn server_ops(k: DomainSize, eps: Epsilon, p: f64) -> f64 {
        bits(k, eps, p).server_ops()
    }

    fn client_draws(k: DomainSize, eps: Epsilon, p: f64) -> f64 {
        bits(k, eps, p).client_draws()
    }

    fn asr_after(k: DomainSize, eps: Epsilon, p: f64, t: u32) -> Option<f64> {
        bits(k, eps, p).law().asr_after(k, t)
    }

    fn pairwise_support(k: DomainSize, eps: Epsilon, p: f64) -> Option<(f64, f64)> {
        Some(bits(k, eps, p).law().pairwise(k))
    }

    fn map_asr(k: DomainSize, eps: Epsilon, p: f64, sorted_prior: &[f64]) -> Option<f64> {
        Some(bits(k, eps, p).law().map_asr(sorted_prior))
    }
}
