//! The pure-protocol probabilities p* and q* (paper Section "Pure LDP"), and the two
//! quantities every closed form is written in.
//!
//! Each family's p* and q* are the very functions the mechanisms of `ldp-core` use (one
//! formula each, written in `t = e^-eps` so that they neither overflow for large eps nor
//! cancel for small eps), so a closed form and a simulation can never disagree on them;
//! each family's module re-exports its own (`crate::grr::probabilities`, ...).

use ldp_core::{Epsilon, Spec};

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

/// `(p*, q*)` of a protocol instance; `None` for SHE, which is not pure.
pub fn pq(spec: &Spec) -> Option<(f64, f64)> {
    spec.pure_probabilities()
}
