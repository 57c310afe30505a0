//! Estimation error: the approximate per-user variance (paper Eq. "approx_var"), which the
//! paper calls the MSE, and the exact variance with the frequency term (Eq. "var").
//!
//! Each family's closed form is in its module ([`crate::grr::variance`], ...), written in a
//! numerically stable shape; the tests check every one against `q*(1-q*)/(p*-q*)^2` and
//! against the paper's printed equation.

use ldp_core::{DomainSize, Spec, dispatch_family};
use serde::{Deserialize, Serialize};

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

/// The mean over the k items of the squared bias that a fixed public set of hashes gives
/// the estimates (fast local hashing's seeds, the sketches' rows), in expectation over an
/// ideal hash, for a population of collision mass `sum_x f_x^2` ([`Prior`]); zero for the
/// unbiased families. Unlike the variance it does not shrink with the users: at n users
/// the MSE is `approx_per_user / n + expected_squared_bias`.
///
/// ```
/// use ldp_analytic::variance::{Prior, expected_squared_bias};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let (k, eps) = (DomainSize::new(1000)?, Epsilon::new(1.0)?);
/// let mass = Prior::Zipf(1.1).collision_mass(k);
/// let flh = Spec::classic(Protocol::Flh, k, eps)?;
/// let olh = Spec::classic(Protocol::Olh, k, eps)?;
/// assert!(expected_squared_bias(&flh, mass) > 0.0);
/// assert_eq!(expected_squared_bias(&olh, mass), 0.0); // a fresh seed per user
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn expected_squared_bias(spec: &Spec, collision_mass: f64) -> f64 {
    let (k, eps) = (spec.k(), spec.eps());
    dispatch_family!(spec.params(), F, param => F::expected_squared_bias(k, eps, param, collision_mass))
}

/// The mean squared collision bias of an estimator that assumes two items collide under
/// exactly `1/g` of `s` fixed hashes of range g (`ldp_core::families::local_hash::collision_bias`),
/// in expectation over an ideal hash.
///
/// # Formula
///
/// ```text
/// E[(1/k) sum_x b_x^2] = (k - 1) sum_u f_u^2 / (k (g - 1) s)
/// ```
///
/// Derived here: `b_x = (g / (g - 1)) sum_{u != x} f_u (rho_ux - 1/g)` with `rho_ux` the
/// share of the s hashes under which u and x collide; under an ideal hash the collisions
/// of distinct u with x are independent, each `rho_ux` of variance `(1/g)(1 - 1/g)/s`, so
/// `E[b_x^2] = sum_{u != x} f_u^2 / ((g - 1) s)`, and the mean over x counts each `f_u^2`
/// k - 1 times.
pub fn collision_squared_bias(k: DomainSize, g: u32, s: u32, collision_mass: f64) -> f64 {
    let kf = k.as_f64();
    (kf - 1.0) * collision_mass / (kf * (f64::from(g) - 1.0) * f64::from(s))
}

/// How concentrated the users' values are, for the bias of the fixed-hash families: all
/// that matters is the collision mass `sum_x f_x^2`, from `1/k` (uniform) to 1 (everyone
/// holds one value, the worst case).
///
/// ```
/// use ldp_analytic::variance::Prior;
/// use ldp_core::DomainSize;
/// let k = DomainSize::new(4)?;
/// assert_eq!(Prior::Uniform.collision_mass(k), 0.25);
/// assert_eq!(Prior::PointMass.collision_mass(k), 1.0);
/// assert_eq!("zipf:1.1".parse::<Prior>()?, Prior::Zipf(1.1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Prior {
    /// Every value equally often: `1/k`.
    Uniform,
    /// Zipf with this exponent over the items in order (item i has weight `(i + 1)^-s`).
    Zipf(f64),
    /// Everyone holds one value: 1, the worst case.
    PointMass,
    /// A given collision mass `sum_x f_x^2`, in `[1/k, 1]` (from data: [`collision_mass`]).
    Mass(f64),
}

impl Prior {
    /// The default of the front ends: Zipf with exponent 1.1.
    pub const DEFAULT: Prior = Prior::Zipf(1.1);

    /// `sum_x f_x^2` over the k items (a given mass is clamped to `[1/k, 1]`).
    pub fn collision_mass(self, k: DomainSize) -> f64 {
        let kf = k.as_f64();
        match self {
            Prior::Uniform => 1.0 / kf,
            Prior::PointMass => 1.0,
            Prior::Mass(m) => m.clamp(1.0 / kf, 1.0),
            // Beyond this every item past the first has weight below 2^-600: one value.
            Prior::Zipf(s) if s > 600.0 => 1.0,
            Prior::Zipf(s) => {
                let h = |exponent: f64| zipf_sum(k.get(), exponent);
                (h(2.0 * s) / (h(s) * h(s))).clamp(1.0 / kf, 1.0)
            }
        }
    }
}

/// Why a [`Prior`] was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("prior {given:?}: {why} (uniform, point, zipf:S with S >= 0, or mass:M in (0, 1])")]
pub struct PriorError {
    /// What was given.
    pub given: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl std::str::FromStr for Prior {
    type Err = PriorError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fault = |why| PriorError {
            given: text.to_owned(),
            why,
        };
        let number = |v: &str| v.trim().parse::<f64>().map_err(|_| fault("not a number"));
        match text.trim().split_once(':') {
            None if text.trim() == "uniform" => Ok(Prior::Uniform),
            None if text.trim() == "point" => Ok(Prior::PointMass),
            Some(("zipf", v)) => match number(v)? {
                s if s.is_finite() && s >= 0.0 => Ok(Prior::Zipf(s)),
                _ => Err(fault("a Zipf exponent is finite and at least 0")),
            },
            Some(("mass", v)) => match number(v)? {
                m if m > 0.0 && m <= 1.0 => Ok(Prior::Mass(m)),
                _ => Err(fault("a collision mass lies in (0, 1]")),
            },
            _ => Err(fault("unknown prior")),
        }
    }
}

/// The users and prior behind the bias term of the MSE, for the families whose fixed public
/// hashes bias every estimate ([`expected_squared_bias`]).
///
/// The paper's MSE is a variance per user (n = 1), which shrinks as 1/n; the bias does
/// not. [`BiasSetting::per_user`] puts it in the same units, `users` times the mean squared
/// bias, so that the variance per user plus it is `users` times the MSE at `users` users:
/// what `ldp analyze` and `ldp tune` rank by.
///
/// ```
/// use ldp_analytic::variance::{BiasSetting, approx_per_user};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let (k, eps) = (DomainSize::new(1000)?, Epsilon::new(1.0)?);
/// let flh = Spec::classic(Protocol::Flh, k, eps)?;
/// let olh = Spec::classic(Protocol::Olh, k, eps)?;
/// let at = BiasSetting { users: 200_000.0, ..BiasSetting::DEFAULT };
/// // FLH's seeds are a sample of OLH's hash family: the same variance, and a bias that
/// // nearly doubles the MSE at 200,000 users of a Zipf(1.1) population.
/// assert_eq!(approx_per_user(&flh), approx_per_user(&olh));
/// let ratio = (approx_per_user(&flh) + at.per_user(&flh)) / approx_per_user(&olh);
/// assert!((1.8..1.9).contains(&ratio), "{ratio}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BiasSetting {
    /// The users n.
    pub users: f64,
    /// How concentrated their values are.
    pub prior: Prior,
}

impl BiasSetting {
    /// The front ends' default: 10,000 users of a Zipf(1.1) population.
    pub const DEFAULT: BiasSetting = BiasSetting {
        users: 10_000.0,
        prior: Prior::DEFAULT,
    };

    /// `users` times the mean squared bias: the bias in the units of the variance per user.
    pub fn per_user(&self, spec: &Spec) -> f64 {
        // Most families have none: skip the prior's sum.
        if expected_squared_bias(spec, 1.0) == 0.0 {
            return 0.0;
        }
        self.users * expected_squared_bias(spec, self.prior.collision_mass(spec.k()))
    }
}

/// `sum_x f_x^2` of a distribution (shares summing to 1).
pub fn collision_mass(f: &[f64]) -> f64 {
    f.iter().map(|x| x * x).sum()
}

/// `sum_{r=1}^{k} r^-s`: the first 100 terms summed, the rest by the midpoint integral
/// with its first Euler-Maclaurin correction,
/// `int_{N+1/2}^{k+1/2} x^-s dx - (f'(k + 1/2) - f'(N + 1/2)) / 24`, whose error is about
/// `s^4 N^(-s-3) / 1000` relative: a few microseconds whatever k.
fn zipf_sum(k: u32, s: f64) -> f64 {
    const SUMMED: u32 = 100;
    let head: f64 = (1..=k.min(SUMMED)).map(|r| f64::from(r).powf(-s)).sum();
    if k <= SUMMED {
        return head;
    }
    let (a, b) = (f64::from(SUMMED) + 0.5, f64::from(k) + 0.5);
    // (b^(1-s) - a^(1-s)) / (1-s), without cancellation near s = 1 (ln(b/a) at s = 1).
    let (t, span) = (1.0 - s, (b / a).ln());
    let integral = if t == 0.0 {
        span
    } else {
        a.powf(t) * (t * span).exp_m1() / t
    };
    let slope = |x: f64| -s * x.powf(-s - 1.0);
    head + integral - (slope(b) - slope(a)) / 24.0
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
