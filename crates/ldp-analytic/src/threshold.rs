//! Thresholding with histogram encoding (THE, ATHE): p* and q*, MSE, ASR, EPG, costs and
//! repeated collection, side by side.

use ldp_core::{DomainSize, Epsilon, ThresholdHistogram, families};

use crate::asr::LhAsr;
use crate::cost::Encoding;
use crate::family::ClosedForms;
use crate::ones::OneBits;

/// THE's `(p, q)`: the probabilities that a coordinate with Laplace noise of scale
/// `2 / eps` exceeds the threshold theta where the true item's is 1, and where it is 0.
///
/// # Formula
///
/// ```text
/// p = 1 - e^(eps (theta - 1) / 2) / 2
/// q = e^(-eps theta / 2) / 2
/// ```
///
/// Paper Eq. "the_parameters"; THE is pure with `p* = p`, `q* = q`.
pub fn probabilities(eps: Epsilon, theta: f64) -> (f64, f64) {
    families::threshold::probabilities(eps, theta)
}

/// THE's approximate variance per user (n = 1): the paper's MSE.
///
/// # Formula
///
/// ```text
/// Var = q (1 - q) / (p - q)^2
///     = (2 e^(eps theta / 2) - 1) / (1 + e^(eps (theta - 1/2)) - 2 e^(eps theta / 2))^2
/// ```
///
/// Paper Eq. "var_the".
pub fn variance(eps: Epsilon, theta: f64) -> f64 {
    let (p, q) = probabilities(eps, theta);
    q * (1.0 - q) / (p - q).powi(2)
}

fn bits(k: DomainSize, eps: Epsilon, theta: f64) -> OneBits {
    let (p, q) = probabilities(eps, theta);
    OneBits { k, p, q }
}

impl ClosedForms for ThresholdHistogram {
    fn variance(_: DomainSize, eps: Epsilon, theta: f64) -> f64 {
        variance(eps, theta)
    }

    /// A uniform guess among the set bits, or among all items when none is set.
    ///
    /// # Formula
    ///
    /// ```text
    /// ASR = (1/k) [ (1 - p) (1 - q)^(k-1) + (p / q) (1 - (1 - q)^k) ]
    /// ```
    ///
    /// Paper Eq. "exp_asr_the_closed" (the closed form of Eq. "exp_asr_the"), through
    /// [`crate::asr::ones`].
    fn asr(k: DomainSize, eps: Epsilon, theta: f64, _: LhAsr) -> f64 {
        bits(k, eps, theta).law().asr(k)
    }

    fn fake_report_gain(k: DomainSize, eps: Epsilon, theta: f64, targets: u32) -> Option<f64> {
        Some(bits(k, eps, theta).fake_report_gain(targets))
    }

    fn encodings(k: DomainSize, eps: Epsilon, theta: f64) -> Vec<(Encoding, f64)> {
        bits(k, eps, theta).encodings()
    }

    fn bits(k: DomainSize, eps: Epsilon, theta: f64) -> f64 {
        bits(k, eps, theta).bits()
    }

    fn server_ops(k: DomainSize, eps: Epsilon, theta: f64) -> f64 {
        bits(k, eps, theta).server_ops()
    }

    fn client_draws(k: DomainSize, eps: Epsilon, theta: f64) -> f64 {
        bits(k, eps, theta).client_draws()
    }

    fn asr_after(k: DomainSize, eps: Epsilon, theta: f64, t: u32) -> Option<f64> {
        bits(k, eps, theta).law().asr_after(k, t)
    }

    fn pairwise_support(k: DomainSize, eps: Epsilon, theta: f64) -> Option<(f64, f64)> {
        Some(bits(k, eps, theta).law().pairwise(k))
    }

    fn map_asr(k: DomainSize, eps: Epsilon, theta: f64, sorted_prior: &[f64]) -> Option<f64> {
        Some(bits(k, eps, theta).law().map_asr(sorted_prior))
    }
}
