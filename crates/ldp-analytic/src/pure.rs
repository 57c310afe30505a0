//! The pure-protocol probabilities p* and q* of every family (paper Section "Pure LDP").
//!
//! They are the very functions the mechanisms of `ldp-core` use (one formula each,
//! written in `t = e^-eps` so that they neither overflow for large eps nor cancel for
//! small eps), so a closed form and a simulation can never disagree on them.

use ldp_core::{DomainSize, Epsilon, Spec, families};

/// `e^-eps`.
#[inline]
pub(crate) fn t(eps: Epsilon) -> f64 {
    (-eps.get()).exp()
}

/// `1 - e^-eps`, accurate for small eps.
#[inline]
pub(crate) fn one_minus_t(eps: Epsilon) -> f64 {
    -(-eps.get()).exp_m1()
}

/// GRR (Eq. "grr"): `p = e^eps / (e^eps + k - 1)`, `q = 1 / (e^eps + k - 1)`.
pub fn grr(k: DomainSize, eps: Epsilon) -> (f64, f64) {
    families::grr::probabilities(k, eps)
}

/// SS (Section "SS"): `p = w e^eps / (w e^eps + k - w)`,
/// `q = (w e^eps (w - 1) + (k - w) w) / ((k - 1)(w e^eps + k - w))`.
pub fn subset(k: DomainSize, eps: Epsilon, omega: u32) -> (f64, f64) {
    families::subset::probabilities(k, eps, omega)
}

/// UE (Eq. "ue_parameters" with the LDP constraint of Eq. "optimization_aue"):
/// `q = p / (e^eps (1 - p) + p)`.
pub fn unary(eps: Epsilon, p: f64) -> (f64, f64) {
    families::unary::probabilities(eps, p)
}

/// LH (Section "LH"): `p* = e^eps / (e^eps + g - 1)`, `q* = 1/g`.
pub fn local_hash(eps: Epsilon, g: u32) -> (f64, f64) {
    families::local_hash::probabilities(eps, g)
}

/// THE (Eq. "the_parameters"): `p = 1 - e^(eps (theta - 1) / 2) / 2`, `q = e^(-eps theta / 2) / 2`.
pub fn threshold(eps: Epsilon, theta: f64) -> (f64, f64) {
    families::threshold::probabilities(eps, theta)
}

/// `(p*, q*)` of a protocol instance; `None` for SHE, which is not pure.
pub fn pq(spec: &Spec) -> Option<(f64, f64)> {
    spec.pure_probabilities()
}
