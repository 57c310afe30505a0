//! Generalized randomized response: p* and q*, MSE, ASR, EPG, costs and repeated
//! collection, side by side.

use ldp_core::{DomainSize, Epsilon, Grr, families};

use crate::asr::LhAsr;
use crate::cost::{Encoding, index_bits};
use crate::family::ClosedForms;
use crate::pure::{one_minus_t, t};
use crate::support::SupportLaw;

/// GRR's `(p, q)`: the report is the true item w.p. p, any other item w.p. q each.
///
/// # Formula
///
/// ```text
/// p = e^eps / (e^eps + k - 1)
/// q = 1 / (e^eps + k - 1)
/// ```
///
/// Paper Eq. "grr"; GRR is pure with `p* = p`, `q* = q`.
pub fn probabilities(k: DomainSize, eps: Epsilon) -> (f64, f64) {
    families::grr::probabilities(k, eps)
}

/// GRR's approximate variance per user (n = 1): the paper's MSE.
///
/// # Formula
///
/// ```text
/// Var = (e^eps + k - 2) / (e^eps - 1)^2
/// ```
///
/// Paper Eq. "var_grr" (Eq. "approx_var" at GRR's p and q), computed in `t = e^-eps`.
pub fn variance(k: DomainSize, eps: Epsilon) -> f64 {
    let t = t(eps);
    t * (1.0 + (k.as_f64() - 2.0) * t) / one_minus_t(eps).powi(2)
}

/// GRR's expected ASR: the attacker guesses the reported item.
///
/// # Formula
///
/// ```text
/// ASR = p = e^eps / (e^eps + k - 1)
/// ```
///
/// Paper Eq. "exp_asr_grr".
pub fn asr(k: DomainSize, eps: Epsilon) -> f64 {
    probabilities(k, eps).0
}

/// The support law: one item per report, the true one with probability p.
fn law(k: DomainSize, eps: Epsilon) -> SupportLaw {
    SupportLaw::UniformSubset {
        size: 1,
        p: probabilities(k, eps).0,
    }
}

impl ClosedForms for Grr {
    fn variance(k: DomainSize, eps: Epsilon, (): ()) -> f64 {
        variance(k, eps)
    }

    fn asr(k: DomainSize, eps: Epsilon, (): (), _: LhAsr) -> f64 {
        asr(k, eps)
    }

    /// A GRR report supports one item.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = (1 - r q) / (p - q) = (1 + (k - 1 - r) t) / (1 - t),   t = e^-eps
    /// ```
    ///
    /// Cao et al.'s maximal gain of one fake report, `(s - r q*) / (p* - q*)` with
    /// `s = 1` (paper Section "results_poisoning").
    fn fake_report_gain(k: DomainSize, eps: Epsilon, (): (), targets: u32) -> Option<f64> {
        let r = f64::from(targets);
        Some((1.0 + (k.as_f64() - 1.0 - r) * t(eps)) / one_minus_t(eps))
    }

    /// The item's index.
    ///
    /// # Formula
    ///
    /// ```text
    /// bits = ceil(log2 k)
    /// ```
    fn encodings(k: DomainSize, _: Epsilon, (): ()) -> Vec<(Encoding, f64)> {
        vec![(Encoding::Index, index_bits(k.as_f64()))]
    }

    fn bits(k: DomainSize, _: Epsilon, (): ()) -> f64 {
        index_bits(k.as_f64())
    }

    /// One counter increment.
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = 1
    /// ```
    fn server_ops(_: DomainSize, _: Epsilon, (): ()) -> f64 {
        1.0
    }

    /// A coin, and another item when it says not to keep the true one.
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 1 + (1 - p) = 2 - p
    /// ```
    fn client_draws(k: DomainSize, eps: Epsilon, (): ()) -> f64 {
        2.0 - probabilities(k, eps).0
    }

    fn asr_after(k: DomainSize, eps: Epsilon, (): (), t: u32) -> Option<f64> {
        law(k, eps).asr_after(k, t)
    }

    fn pairwise_support(k: DomainSize, eps: Epsilon, (): ()) -> Option<(f64, f64)> {
        Some(law(k, eps).pairwise(k))
    }

    fn map_asr(k: DomainSize, eps: Epsilon, (): (), sorted_prior: &[f64]) -> Option<f64> {
        Some(law(k, eps).map_asr(sorted_prior))
    }
}
