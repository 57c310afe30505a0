//! Estimation error: the approximate per-user variance (paper Eq. "approx_var"), which the
//! paper calls the MSE, and the exact variance with the frequency term (Eq. "var").
//!
//! Each family's closed form is written in a numerically stable shape; the tests check
//! every one against `q*(1-q*)/(p*-q*)^2` and against the paper's printed equation.

use ldp_core::{DomainSize, Epsilon, FamilyParams, Spec};

use crate::pure::{self, one_minus_t, t};

/// GRR, Eq. "var_grr": `(e^eps + k - 2) / (e^eps - 1)^2` per user.
pub fn grr(k: DomainSize, eps: Epsilon) -> f64 {
    let t = t(eps);
    t * (1.0 + (k.as_f64() - 2.0) * t) / one_minus_t(eps).powi(2)
}

/// SS: `q*(1-q*)/(p*-q*)^2`, which simplifies to
/// `(w e^eps - e^eps + k - w)(w e^eps + k - w - 1) / (w (e^eps - 1)^2 (k - w))`
/// and equals GRR's at `w = 1`.
///
/// # Erratum
/// The paper's Eq. "var_ss" does not reduce to GRR at `w = 1`; it is not used.
pub fn subset(k: DomainSize, eps: Epsilon, omega: u32) -> f64 {
    let (t, k, w) = (t(eps), k.as_f64(), f64::from(omega));
    // Numerator and denominator divided by e^(2 eps).
    (w - 1.0 + (k - w) * t) * (w + (k - w - 1.0) * t) / (w * (k - w) * one_minus_t(eps).powi(2))
}

/// UE, Eq. "var_ue": `((e^eps - 1) q + 1)^2 / ((e^eps - 1)^2 (1 - q) q)`, which for
/// `q = p / (e^eps (1-p) + p)` equals `e^-eps / (p (1 - p) (1 - e^-eps)^2)`.
pub fn unary(eps: Epsilon, p: f64) -> f64 {
    t(eps) / (p * (1.0 - p) * one_minus_t(eps).powi(2))
}

/// LH, Eq. "var_lh": `(e^eps - 1 + g)^2 / ((e^eps - 1)^2 (g - 1))`.
pub fn local_hash(eps: Epsilon, g: u32) -> f64 {
    let (t, g) = (t(eps), f64::from(g));
    (1.0 + (g - 1.0) * t).powi(2) / (one_minus_t(eps).powi(2) * (g - 1.0))
}

/// SHE, Eq. "var_she": `8 / eps^2` (the variance of Laplace noise of scale `2 / eps`).
pub fn summation(eps: Epsilon) -> f64 {
    8.0 / eps.get().powi(2)
}

/// THE, Eq. "var_the": `q(1-q)/(p-q)^2` with THE's p and q, equal to
/// `(2 e^(eps theta/2) - 1) / (1 + e^(eps (theta - 1/2)) - 2 e^(eps theta/2))^2`.
pub fn threshold(eps: Epsilon, theta: f64) -> f64 {
    let (p, q) = pure::threshold(eps, theta);
    q * (1.0 - q) / (p - q).powi(2)
}

/// Approximate variance of one item's estimate per user (n = 1): the paper's "MSE".
/// Divide by n for n users.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let spec = Spec::classic(Protocol::Oue, DomainSize::new(100)?, Epsilon::new(1.0)?)?;
/// let e = 1f64.exp();
/// assert!((ldp_analytic::variance::approx_per_user(&spec) - 4.0 * e / (e - 1.0).powi(2)).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn approx_per_user(spec: &Spec) -> f64 {
    match spec.family() {
        FamilyParams::Grr => grr(spec.k(), spec.eps()),
        FamilyParams::SubsetSelection { omega } => subset(spec.k(), spec.eps(), omega),
        FamilyParams::UnaryEncoding { p } => unary(spec.eps(), p),
        FamilyParams::LocalHashing { g } => local_hash(spec.eps(), g),
        FamilyParams::SummationHistogram => summation(spec.eps()),
        FamilyParams::ThresholdHistogram { theta } => threshold(spec.eps(), theta),
    }
}

/// Approximate variance for `n` users, Eq. "approx_var": `q*(1-q*) / (n (p*-q*)^2)`.
pub fn approx(spec: &Spec, n: f64) -> f64 {
    approx_per_user(spec) / n
}

/// Exact variance of item i's raw estimate for `n` users when its true frequency is `f`,
/// Eq. "var": `q*(1-q*) / (n (p*-q*)^2) + f (1 - p* - q*) / (n (p*-q*))`.
/// SHE's variance does not depend on `f`.
pub fn exact(spec: &Spec, n: f64, f: f64) -> f64 {
    match pure::pq(spec) {
        Some((p, q)) => approx(spec, n) + f * (1.0 - p - q) / (n * (p - q)),
        None => approx(spec, n),
    }
}

/// Expected mean squared error of the raw estimate over the k items for `n` users with
/// true frequencies `f`: `(1/k) sum_i Var[f_i]` with the exact variance (Eq. "var").
/// The estimate is unbiased, so this is its MSE (paper Eq. "mse_var").
pub fn expected_mse(spec: &Spec, n: f64, f: &[f64]) -> f64 {
    f.iter().map(|&fi| exact(spec, n, fi)).sum::<f64>() / f.len() as f64
}
