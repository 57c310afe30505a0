//! Thresholding with histogram encoding (THE), paper Section "the_protocol".

use crate::error::ParamError;
use crate::families::bits::{IndependentBits, independent_bits_mechanism};
use crate::families::{FamilyMechanism, FamilyParams};
use crate::report::ReportLimits;
use crate::space::ParameterSpace;
use crate::vocab::{DomainSize, Epsilon};

/// THE's `(p, q)` at threshold `theta` (paper Eq. "the_parameters"):
/// `p = 1 - e^(eps (theta - 1) / 2) / 2`, `q = e^(-eps theta / 2) / 2`. These are also
/// `(p*, q*)`.
pub fn probabilities(eps: Epsilon, theta: f64) -> (f64, f64) {
    let half = eps.get() / 2.0;
    let p = 1.0 - 0.5 * (half * (theta - 1.0)).exp();
    let q = 0.5 * (-half * theta).exp();
    (p, q)
}

/// The threshold in `[0.5, 1]` minimizing THE's approximate variance `q(1-q)/(p-q)^2`
/// (paper Eq. "var_the"), in closed form.
///
/// # Formula
/// With `u = e^(eps theta / 2)` and `c = e^(-eps/2)`, the variance is
/// `V = (2u - 1) / (2u - 1 - c u^2)^2`, and `dV/du = 0` reduces to the quadratic
/// `3c u^2 - 2(1 + c) u + 1 = 0`. Its larger root, `u = (1 + c + s) / (3c)` with
/// `s = sqrt(1 - c + c^2)`, is the minimizer (the smaller one lies below 1, where p < q),
/// so `theta = 1 + (2 / eps) ln((1 + c + s) / 3)`. It is evaluated as
/// `1 + (2 / eps) ln_1p((c - 1)(1 + c / (1 + s)) / 3)`, accurate for every eps, and lies
/// in `(0.5, 1)` (it tends to 0.5 as eps -> 0 and to `1 - 2 ln(3/2) / eps` as eps grows).
///
/// ```
/// use ldp_core::{Epsilon, families::threshold::optimal_threshold};
/// let theta = optimal_threshold(Epsilon::new(4.0)?);
/// assert!((theta - 0.81568).abs() < 1e-5); // the paper's 0.816
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
pub fn optimal_threshold(eps: Epsilon) -> f64 {
    let e = eps.get();
    let c = (-e / 2.0).exp();
    let c_minus_1 = (-e / 2.0).exp_m1();
    let s = (1.0 - c + c * c).sqrt();
    let theta = 1.0 + 2.0 / e * (c_minus_1 * (1.0 + c / (1.0 + s)) / 3.0).ln_1p();
    theta.clamp(0.5, 1.0)
}

/// The paper's space for ATHE: 100 evenly spaced values of theta in `[0.5, 1]`.
pub fn paper_space(_: DomainSize, _: Epsilon) -> ParameterSpace {
    ParameterSpace::interval(0.5, 1.0, 100).expect("a valid interval")
}

/// THE: SHE's noisy vector thresholded at `theta` on the client, which sends only the
/// indices above the threshold. Bit i is one with probability
/// `p = 1 - e^(eps (theta - 1) / 2) / 2` if it is the true item, `q = e^(-eps theta / 2) / 2`
/// otherwise (paper Eq. "the_parameters").
///
/// The index set is sampled exactly, without drawing k Laplace values: the true index is
/// Bernoulli(p) and the others independent Bernoulli(q) placed by geometric gaps, in
/// O(1 + kq). This has the same law as thresholding Laplace noise, and no floating-point
/// Laplace output ever leaves the client.
///
/// Privacy: post-processing of SHE, hence eps-LDP; directly, `p (1-q) / ((1-p) q)` is at
/// most `(2 e^(eps/4) - 1)^2 <= e^eps`.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, ThresholdHistogram};
/// let the = ThresholdHistogram::optimized(DomainSize::new(100)?, Epsilon::new(4.0)?)?;
/// assert!((the.threshold() - 0.81568).abs() < 1e-5); // paper: 0.816
/// assert!(ThresholdHistogram::new(DomainSize::new(100)?, Epsilon::new(4.0)?, 0.4).is_err());
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ThresholdHistogram {
    theta: f64,
    bits: IndependentBits,
}

/// The threshold must lie in `[0.5, 1]`.
pub(crate) fn check_threshold(theta: f64) -> Result<(), ParamError> {
    if (0.5..=1.0).contains(&theta) {
        Ok(())
    } else {
        Err(ParamError::Parameter {
            name: "theta",
            description: "threshold theta",
            requirement: "lie in [0.5, 1]".into(),
            value: theta,
        })
    }
}

impl ThresholdHistogram {
    /// THE with threshold `theta` in `[0.5, 1]`.
    pub fn new(k: DomainSize, eps: Epsilon, theta: f64) -> Result<Self, ParamError> {
        check_threshold(theta)?;
        let (p, q) = probabilities(eps, theta);
        Ok(Self {
            theta,
            bits: IndependentBits::new(k, eps, p, q)?,
        })
    }

    /// THE with the variance-minimizing threshold, [`optimal_threshold`].
    pub fn optimized(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        Self::new(k, eps, optimal_threshold(eps))
    }

    /// The threshold theta.
    pub fn threshold(&self) -> f64 {
        self.theta
    }

    fn family_params(&self) -> FamilyParams {
        FamilyParams::ThresholdHistogram { theta: self.theta }
    }
}

impl FamilyMechanism for ThresholdHistogram {
    const RELABELLING_INVARIANT: bool = true;

    fn check(_: DomainSize, _: Epsilon, theta: f64) -> Result<(), ParamError> {
        check_threshold(theta)
    }

    fn build(k: DomainSize, eps: Epsilon, theta: f64) -> Result<Self, ParamError> {
        Self::new(k, eps, theta)
    }

    fn probabilities(_: DomainSize, eps: Epsilon, theta: f64) -> Option<(f64, f64)> {
        Some(probabilities(eps, theta))
    }

    fn support_size_range(k: DomainSize, _: f64) -> Option<(u32, u32)> {
        Some((0, k.get()))
    }

    /// Up to k indices above the threshold.
    fn report_limits(k: DomainSize, _: f64) -> ReportLimits {
        ReportLimits {
            values: k.get(),
            entries: k.get(),
            seeds: 0,
        }
    }
}

independent_bits_mechanism!(ThresholdHistogram);
