//! Thresholding with histogram encoding (THE, ATHE): p* and q*, MSE, ASR, EPG, costs and
//! repeated collection, side by side.

use ldp_core::{DomainSize, Epsilon, ThresholdHistogram, families};

use crate::asr::LhAsr;
use crate::cost::Encoding;
use crate::family::ClosedForms;
use crate::ones::OneBits;

/// Eq. "the_parameters": `p = 1 - e^(eps (theta - 1) / 2) / 2`, `q = e^(-eps theta / 2) / 2`.
pub fn probabilities(eps: Epsilon, theta: f64) -> (f64, f64) {
    families::threshold::probabilities(eps, theta)
}

/// Eq. "var_the": `q(1-q)/(p-q)^2` with THE's p and q, equal to
/// `(2 e^(eps theta/2) - 1) / (1 + e^(eps (theta - 1/2)) - 2 e^(eps theta/2))^2`.
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

    /// Eq. "exp_asr_the", in closed form ([`crate::asr::ones`]).
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
