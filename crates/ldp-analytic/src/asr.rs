//! Expected success rate of the data reconstruction attack under a uniform prior
//! (paper Eq. "ASR" with the attack of Section "ldp_protocols").

use ldp_core::{DomainSize, Epsilon, FamilyParams, Spec};
use serde::{Deserialize, Serialize};

use crate::pure::{self, t};
use crate::quad;

/// GRR, Eq. "exp_asr_grr": the attacker guesses the report, `e^eps / (e^eps + k - 1)`.
pub fn grr(k: DomainSize, eps: Epsilon) -> f64 {
    pure::grr(k, eps).0
}

/// SS, Eq. "exp_asr_ss": a uniform guess in the subset, `e^eps / (w e^eps + k - w)`.
pub fn subset(k: DomainSize, eps: Epsilon, omega: u32) -> f64 {
    let w = f64::from(omega);
    1.0 / (w + (k.as_f64() - w) * t(eps))
}

/// UE and THE, Eq. "exp_asr_ue" / "exp_asr_the": a uniform guess among the one-bits
/// (uniform over the domain when there are none),
/// `[(1-p)(1-q)^(k-1) + (p/q)(1 - (1-q)^k)] / k`.
///
/// Evaluated with `ln_1p` and `exp_m1`: O(1) and accurate for k up to 1e9 and q -> 0
/// (where it tends to p). Summing the appendix's binomial series term by term instead
/// underflows to zero for k above about 1000.
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

/// LH, the paper's Eq. "exp_asr_lh": `e^eps / ((e^eps + g - 1) max(k/g, 1))`.
///
/// # Erratum
/// This treats the support as exactly `max(k/g, 1)` items and ignores that the true item
/// may be missing from it. It overestimates the real attack, e.g. 0.279 against 0.234
/// (exact, and measured) for OLH at k = 100, eps = 4. See [`local_hash_exact`].
pub fn local_hash_paper(k: DomainSize, eps: Epsilon, g: u32) -> f64 {
    let g_f = f64::from(g);
    pure::local_hash(eps, g).0 / (k.as_f64() / g_f).max(1.0)
}

/// LH, exact expectation with an ideal (uniform, independent) hash:
/// `p g (1 - (1 - 1/g)^k) / k + (1 - p)(1 - 1/g)^(k-1) / k`.
///
/// When the hash value is kept (probability p) the support is the true item plus
/// Bin(k-1, 1/g) colliding items; otherwise the true item is not in the support, and the
/// attack succeeds only by the uniform guess when the support is empty.
pub fn local_hash_exact(k: DomainSize, eps: Epsilon, g: u32) -> f64 {
    let (p, _) = pure::local_hash(eps, g);
    let (k, g) = (k.as_f64(), f64::from(g));
    let ln_miss = (-1.0 / g).ln_1p();
    let kept = p * g * -(k * ln_miss).exp_m1() / k;
    let lost = (1.0 - p) * ((k - 1.0) * ln_miss).exp() / k;
    kept + lost
}

/// SHE, Eq. "full_exp_asr_she": the attacker guesses the largest coordinate,
/// `P[1 + Z_x > max_{i != x} Z_i] = integral f(z) F(z + 1)^(k-1) dz` with Laplace noise of
/// scale `b = 2 / eps`.
///
/// # Evaluation
/// With `c = e^(-1/b) / 2`, the integral splits at the kinks z = -1 and z = 0 into
/// `c 2^(1-k) / k` (z < -1) + `(1 - (1 - c)^k) / (2 c k)` (z > 0), both exact, plus the
/// middle piece, which the substitution `u = c / s`, `u = e^(-(z+1)/b) / 2` turns into
/// `(1/2) integral_{2c}^{1} (1 - c/s)^(k-1) ds`, a smooth integrand in [0, 1]; it is
/// integrated by adaptive tanh-sinh quadrature in `ln s` to an absolute error of 1e-12.
/// For large k the ASR tends to `e^(eps/2) / k`.
pub fn summation(k: DomainSize, eps: Epsilon) -> f64 {
    let k = k.as_f64();
    let b = 2.0 / eps.get();
    let c = 0.5 * (-1.0 / b).exp();
    let ln_keep = (-c).ln_1p();
    let below = 2.0 * c * (-(k * std::f64::consts::LN_2)).exp() / k;
    let above = -(k * ln_keep).exp_m1() / (2.0 * c * k);
    let integrand = |ln_s: f64| {
        let s = ln_s.exp();
        0.5 * s * ((k - 1.0) * (-c / s).ln_1p()).exp()
    };
    let middle = quad::adaptive(integrand, (2.0 * c).ln(), 0.0, 1e-12);
    below + middle + above
}

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
    match spec.family() {
        FamilyParams::Grr => grr(k, eps),
        FamilyParams::SubsetSelection { omega } => subset(k, eps, omega),
        FamilyParams::UnaryEncoding { p } => {
            let (p, q) = pure::unary(eps, p);
            ones(k, p, q)
        }
        FamilyParams::ThresholdHistogram { theta } => {
            let (p, q) = pure::threshold(eps, theta);
            ones(k, p, q)
        }
        FamilyParams::LocalHashing { g } => match lh {
            LhAsr::Paper => local_hash_paper(k, eps, g),
            LhAsr::Exact => local_hash_exact(k, eps, g),
        },
        FamilyParams::SummationHistogram => summation(k, eps),
    }
}
