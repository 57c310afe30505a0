//! Expected success rate of the data reconstruction attack under a uniform prior
//! (paper Eq. "ASR" with the attack of Section "ldp_protocols"). Each family's form is in
//! its module ([`crate::grr::asr`], [`crate::local_hash::asr_paper`], ...).

use ldp_core::{DomainSize, Spec, dispatch_family};
use serde::{Deserialize, Serialize};

use crate::family::ClosedForms;

/// UE and THE, Eq. "exp_asr_ue" / "exp_asr_the": a uniform guess among the one-bits
/// (uniform over the domain when there are none),
/// `[(1-p)(1-q)^(k-1) + (p/q)(1 - (1-q)^k)] / k`.
///
/// Evaluated with `ln_1p` and `exp_m1`: O(1) and accurate for k up to 1e9 and q -> 0
/// (where it tends to p). Summing the appendix's binomial series term by term instead
/// underflows to zero for k above about 1000. The same form gives LH's exact ASR under an
/// ideal hash, with q = 1/g.
pub fn ones(k: DomainSize, p: f64, q: f64) -> f64 {
    let k = k.as_f64();
    let ln_clear = (-q).ln_1p();
    let none_set = ((k - 1.0) * ln_clear).exp();
    // E[1 / (1 + Bin(k-1, q))] = (1 - (1-q)^k) / (k q); its limit at q = 0 is 1.
    let mean_inverse = if q > 0.0 {
        -(k * ln_clear).exp_m1() / (k * q)
    } else {
        1.0
    };
    (1.0 - p) * none_set / k + p * mean_inverse
}

/// Which closed form to use for the local-hashing ASR.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LhAsr {
    /// The paper's Eq. "exp_asr_lh", which ignores hash collisions (the default, as in
    /// the paper's figures).
    #[default]
    Paper,
    /// The exact expectation of the uniform-over-support attack with an ideal hash.
    Exact,
}

impl LhAsr {
    /// Both forms.
    pub const ALL: [LhAsr; 2] = [LhAsr::Paper, LhAsr::Exact];

    /// The name front ends use (`paper`, `exact`).
    pub fn name(self) -> &'static str {
        match self {
            LhAsr::Paper => "paper",
            LhAsr::Exact => "exact",
        }
    }
}

ldp_core::named_knob!(LhAsr, "LH ASR form");

/// Expected ASR of the paper's reconstruction attack for any protocol instance.
///
/// ```
/// use ldp_analytic::asr::{expected, LhAsr};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let olh = Spec::classic(Protocol::Olh, DomainSize::new(100)?, Epsilon::new(4.0)?)?;
/// assert!((expected(&olh, LhAsr::Paper) - 0.279).abs() < 1e-3);
/// assert!((expected(&olh, LhAsr::Exact) - 0.234).abs() < 1e-3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn expected(spec: &Spec, lh: LhAsr) -> f64 {
    let (k, eps) = (spec.k(), spec.eps());
    dispatch_family!(spec.params(), F, param => F::asr(k, eps, param, lh))
}
