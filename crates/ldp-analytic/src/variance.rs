//! Estimation error: the approximate per-user variance (paper Eq. "approx_var"), which the
//! paper calls the MSE, and the exact variance with the frequency term (Eq. "var").
//!
//! Each family's closed form is in its module ([`crate::grr::variance`], ...), written in a
//! numerically stable shape; the tests check every one against `q*(1-q*)/(p*-q*)^2` and
//! against the paper's printed equation.

use ldp_core::{Spec, dispatch_family};

use crate::family::ClosedForms;

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
    let (k, eps) = (spec.k(), spec.eps());
    dispatch_family!(spec.params(), F, param => F::variance(k, eps, param))
}

/// Approximate variance for `n` users, Eq. "approx_var": `q*(1-q*) / (n (p*-q*)^2)`.
pub fn approx(spec: &Spec, n: f64) -> f64 {
    approx_per_user(spec) / n
}

/// Exact variance of item i's raw estimate for `n` users when its true frequency is `f`,
/// Eq. "var": `q*(1-q*) / (n (p*-q*)^2) + f (1 - p* - q*) / (n (p*-q*))`.
/// SHE's variance does not depend on `f`.
pub fn exact(spec: &Spec, n: f64, f: f64) -> f64 {
    match spec.pure_probabilities() {
        Some((p, q)) => approx(spec, n) + f * (1.0 - p - q) / (n * (p - q)),
        None => approx(spec, n),
    }
}

/// Expected mean squared error of the raw estimate over the k items for `n` users with
/// true frequencies `f`: `(1/k) sum_i Var[f_i]` with the exact variance (Eq. "var" for the
/// pure protocols; each family's [`ClosedForms::expected_mse`]). The estimate is unbiased,
/// so this is its MSE (paper Eq. "mse_var").
pub fn expected_mse(spec: &Spec, n: f64, f: &[f64]) -> f64 {
    let (k, eps) = (spec.k(), spec.eps());
    dispatch_family!(spec.params(), F, param => F::expected_mse(k, eps, param, n, f))
}
