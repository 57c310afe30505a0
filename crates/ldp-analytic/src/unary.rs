//! Unary encoding (SUE, OUE, AUE): p* and q*, MSE, ASR, EPG, costs and repeated
//! collection, side by side.

use ldp_core::{DomainSize, Epsilon, UnaryEncoding, families};

use crate::asr::LhAsr;
use crate::cost::Encoding;
use crate::family::ClosedForms;
use crate::ones::OneBits;
use crate::pure::{one_minus_t, t};

/// Eq. "ue_parameters" with the LDP constraint of Eq. "optimization_aue":
/// `q = p / (e^eps (1 - p) + p)`.
pub fn probabilities(eps: Epsilon, p: f64) -> (f64, f64) {
    families::unary::probabilities(eps, p)
}

/// Eq. "var_ue": `((e^eps - 1) q + 1)^2 / ((e^eps - 1)^2 (1 - q) q)`, which for
/// `q = p / (e^eps (1-p) + p)` equals `e^-eps / (p (1 - p) (1 - e^-eps)^2)`.
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

    /// Eq. "exp_asr_ue", in closed form ([`crate::asr::ones`]).
    fn asr(k: DomainSize, eps: Epsilon, p: f64, _: LhAsr) -> f64 {
        bits(k, eps, p).law().asr(k)
    }

    /// Every target bit set: `r (1 - q) / (p - q) = r / (p (1 - e^-eps))`.
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
