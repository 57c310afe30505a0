//! Summation with histogram encoding (SHE): MSE, ASR, EPG (unbounded, and clipped) and
//! costs, side by side. SHE is not pure: its reports support no items, so it has no
//! support law, no exact form after several reports and no tractable MAP form.

use ldp_core::{DomainSize, Epsilon, SummationHistogram};

use crate::asr::LhAsr;
use crate::cost::Encoding;
use crate::family::ClosedForms;
use crate::quad;

/// SHE's variance per user (n = 1): that of Laplace noise of scale `2 / eps`.
///
/// # Formula
///
/// ```text
/// Var = 8 / eps^2
/// ```
///
/// Paper Eq. "var_she".
pub fn variance(eps: Epsilon) -> f64 {
    8.0 / eps.get().powi(2)
}

/// SHE's expected ASR: the attacker guesses the largest coordinate.
///
/// # Formula
///
/// ```text
/// ASR = P[1 + Z_x > max_{i != x} Z_i] = integral f(z) F(z + 1)^(k-1) dz
/// ```
///
/// with `f` and `F` the density and distribution of Laplace noise of scale `b = 2 / eps`.
/// Paper Eq. "exp_asr_she", whose integral is Eq. "full_exp_asr_she".
///
/// # Evaluation
/// With `c = e^(-1/b) / 2`, the integral splits at the kinks z = -1 and z = 0 into
/// `c 2^(1-k) / k` (z < -1) + `(1 - (1 - c)^k) / (2 c k)` (z > 0), both exact, plus the
/// middle piece, which the substitution `u = c / s`, `u = e^(-(z+1)/b) / 2` turns into
/// `(1/2) integral_{2c}^{1} (1 - c/s)^(k-1) ds`, a smooth integrand in [0, 1]; it is
/// integrated by adaptive tanh-sinh quadrature in `ln s` to an absolute error of 1e-12.
/// For large k the ASR tends to `e^(eps/2) / k`.
pub fn asr(k: DomainSize, eps: Epsilon) -> f64 {
    let k = k.as_f64();
    let b = 2.0 / eps.get();
    let c = 0.5 * (-1.0 / b).exp();
    // The attack misses with probability O(k c): below 1e-15 the answer is 1 to double
    // precision, while the quadrature's tolerance is 1e-12 and c underflows to 0 from
    // eps of about 1500 (which made the forms below NaN).
    if k * c < 1e-15 {
        return 1.0;
    }
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

impl ClosedForms for SummationHistogram {
    fn variance(_: DomainSize, eps: Epsilon, (): ()) -> f64 {
        variance(eps)
    }

    fn asr(k: DomainSize, eps: Epsilon, (): (), _: LhAsr) -> f64 {
        asr(k, eps)
    }

    /// Unbounded: a fake report may carry any real number on the target coordinates
    /// (see [`crate::epg::expected_she_clipped`] for a clipping server).
    fn fake_report_gain(_: DomainSize, _: Epsilon, (): (), _: u32) -> Option<f64> {
        None
    }

    /// k IEEE doubles, as this toolkit sends them, or k singles if a deployment rounds;
    /// the doubles first although they are larger.
    ///
    /// # Formula
    ///
    /// ```text
    /// bits = 64 k   (or 32 k)
    /// ```
    fn encodings(k: DomainSize, _: Epsilon, (): ()) -> Vec<(Encoding, f64)> {
        let k = k.as_f64();
        vec![(Encoding::Float64, 64.0 * k), (Encoding::Float32, 32.0 * k)]
    }

    fn bits(k: DomainSize, _: Epsilon, (): ()) -> f64 {
        64.0 * k.as_f64()
    }

    /// k floating-point additions.
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = k
    /// ```
    fn server_ops(k: DomainSize, _: Epsilon, (): ()) -> f64 {
        k.as_f64()
    }

    /// Two exponentials per coordinate.
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 2 k
    /// ```
    fn client_draws(k: DomainSize, _: Epsilon, (): ()) -> f64 {
        2.0 * k.as_f64()
    }

    /// No closed form (continuous reports): `ldp-attack` measures it.
    fn asr_after(_: DomainSize, _: Epsilon, (): (), _: u32) -> Option<f64> {
        None
    }

    fn pairwise_support(_: DomainSize, _: Epsilon, (): ()) -> Option<(f64, f64)> {
        None
    }

    fn map_asr(_: DomainSize, _: Epsilon, (): (), _: &[f64]) -> Option<f64> {
        None
    }
}
