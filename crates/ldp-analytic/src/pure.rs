//! The pure-protocol probabilities p* and q* of every family (paper Section "Pure LDP"),
//! written in terms of `t = e^-eps` so that they neither overflow for large eps nor
//! cancel for small eps.

use ldp_core::{DomainSize, Epsilon, FamilyParams, Spec};

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
    let t = t(eps);
    let d = 1.0 + (k.as_f64() - 1.0) * t;
    (1.0 / d, t / d)
}

/// SS (Section "SS"): `p = w e^eps / (w e^eps + k - w)`,
/// `q = (w e^eps (w - 1) + (k - w) w) / ((k - 1)(w e^eps + k - w))`.
pub fn subset(k: DomainSize, eps: Epsilon, omega: u32) -> (f64, f64) {
    let (t, k, w) = (t(eps), k.as_f64(), f64::from(omega));
    let d = w + (k - w) * t;
    (w / d, w * ((w - 1.0) + (k - w) * t) / ((k - 1.0) * d))
}

/// UE (Eq. "ue_parameters" with the LDP constraint of Eq. "optimization_aue"):
/// `q = p / (e^eps (1 - p) + p)`.
pub fn unary(eps: Epsilon, p: f64) -> (f64, f64) {
    let t = t(eps);
    (p, p * t / ((1.0 - p) + p * t))
}

/// LH (Section "LH"): `p* = e^eps / (e^eps + g - 1)`, `q* = 1/g`.
pub fn local_hash(eps: Epsilon, g: u32) -> (f64, f64) {
    let g = f64::from(g);
    (1.0 / (1.0 + (g - 1.0) * t(eps)), 1.0 / g)
}

/// THE (Eq. "the_parameters"): `p = 1 - e^(eps (theta - 1) / 2) / 2`, `q = e^(-eps theta / 2) / 2`.
pub fn threshold(eps: Epsilon, theta: f64) -> (f64, f64) {
    ldp_core::families::histogram::threshold_pq(eps, theta)
}

/// `(p*, q*)` of a protocol instance; `None` for SHE, which is not pure.
pub fn pq(spec: &Spec) -> Option<(f64, f64)> {
    Some(match spec.family() {
        FamilyParams::Grr => grr(spec.k(), spec.eps()),
        FamilyParams::SubsetSelection { omega } => subset(spec.k(), spec.eps(), omega),
        FamilyParams::UnaryEncoding { p } => unary(spec.eps(), p),
        FamilyParams::LocalHashing { g } => local_hash(spec.eps(), g),
        FamilyParams::ThresholdHistogram { theta } => threshold(spec.eps(), theta),
        FamilyParams::SummationHistogram => return None,
    })
}
