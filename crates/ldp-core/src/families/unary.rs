//! Unary encoding (RAPPOR's SUE, Wang et al.'s OUE, and any p), paper Eq. "ue_parameters".

use crate::error::ParamError;
use crate::families::bits::{IndependentBits, independent_bits_mechanism};
use crate::families::{FamilyMechanism, FamilyParams};
use crate::longitudinal::{MemoShape, Refresh};
use crate::report::ReportLimits;
use crate::space::ParameterSpace;
use crate::vocab::{DomainSize, Epsilon};

/// UE's `(p, q)` for true-bit probability `p`: `q = p / (e^eps (1 - p) + p)`, the largest q
/// with `p (1 - q) / ((1 - p) q) <= e^eps` (the constraint of Eq. "optimization_aue"),
/// divided through by e^eps so that it cannot overflow. These are also `(p*, q*)`.
pub fn probabilities(eps: Epsilon, p: f64) -> (f64, f64) {
    let t = (-eps.get()).exp();
    (p, p * t / ((1.0 - p) + p * t))
}

/// SUE's `p = e^(eps/2) / (e^(eps/2) + 1)`. Above eps of about 73 it rounds to 1 in f64,
/// outside UE's range `(0, 1)`; the largest double below 1 is used instead.
pub fn symmetric_p(eps: Epsilon) -> f64 {
    (1.0 / (1.0 + (-eps.get() / 2.0).exp())).min(1.0 - f64::EPSILON / 2.0)
}

/// OUE's `p = 1/2`, which minimizes the variance.
pub const OPTIMIZED_P: f64 = 0.5;

/// The paper's space for AUE: 100 evenly spaced values of p in `[0.5, 0.999999]`.
pub fn paper_space(_: DomainSize, _: Epsilon) -> ParameterSpace {
    ParameterSpace::interval(0.5, 0.999_999, 100).expect("a valid interval")
}

/// UE: one-hot encode the item, then keep the true bit with probability `p` and set every
/// other bit with probability `q = p / (e^eps (1 - p) + p)`.
///
/// Privacy: `p (1 - q) / ((1 - p) q) = e^eps` for this `q`, which is the largest ratio of
/// two inputs' probabilities for any bit vector.
///
/// Sampling is exact and costs O(1 + kq): only the one-bits are drawn (geometric gaps).
/// Every preset goes through [`UnaryEncoding::new`], so a mechanism is determined by
/// (k, eps, p) and restores bit for bit from its serialized form.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, PureProtocol, UnaryEncoding};
/// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(2.0)?);
/// let oue = UnaryEncoding::optimized(k, eps)?;
/// assert_eq!(oue.p_star(), 0.5);
/// let aue = UnaryEncoding::new(k, eps, 0.818)?;
/// assert!(aue.q_star() > oue.q_star());
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct UnaryEncoding {
    bits: IndependentBits,
}

impl UnaryEncoding {
    /// UE with true-bit probability `p` in `(0, 1)`; `q` follows from `eps`. The paper's
    /// protocols keep `p` in `[0.5, 1)` (below 1/2 the variance only grows); a lower `p`
    /// is the law of one report of the memoized chains L-OUE and L-SOUE
    /// ([`crate::longitudinal::Longitudinal::report_spec`]).
    pub fn new(k: DomainSize, eps: Epsilon, p: f64) -> Result<Self, ParamError> {
        check_unary_p(p)?;
        let (p, q) = probabilities(eps, p);
        Ok(Self {
            bits: IndependentBits::new(k, eps, p, q)?,
        })
    }

    /// Symmetric UE (RAPPOR): `p = e^(eps/2) / (e^(eps/2) + 1)` ([`symmetric_p`]), for which
    /// `q = 1 - p`.
    pub fn symmetric(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        Self::new(k, eps, symmetric_p(eps))
    }

    /// Optimized UE: `p = 1/2`, `q = 1 / (e^eps + 1)`, which minimizes the variance.
    pub fn optimized(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        Self::new(k, eps, OPTIMIZED_P)
    }

    /// The probability p of keeping the true bit.
    pub fn keep_probability(&self) -> f64 {
        self.bits.p
    }

    fn family_params(&self) -> FamilyParams {
        FamilyParams::UnaryEncoding { p: self.bits.p }
    }
}

impl FamilyMechanism for UnaryEncoding {
    const RELABELLING_INVARIANT: bool = true;

    fn check(_: DomainSize, _: Epsilon, p: f64) -> Result<(), ParamError> {
        check_unary_p(p)
    }

    fn build(k: DomainSize, eps: Epsilon, p: f64) -> Result<Self, ParamError> {
        Self::new(k, eps, p)
    }

    fn probabilities(_: DomainSize, eps: Epsilon, p: f64) -> Option<(f64, f64)> {
        Some(probabilities(eps, p))
    }

    fn support_size_range(k: DomainSize, _: f64) -> Option<(u32, u32)> {
        Some((0, k.get()))
    }

    /// Up to k one-bits.
    fn report_limits(k: DomainSize, _: f64) -> ReportLimits {
        ReportLimits {
            values: k.get(),
            entries: k.get(),
            seeds: 0,
        }
    }

    /// A memo is refreshed bit by bit; one report is UE at the chained `p`.
    fn refresh(k: DomainSize, _: f64) -> Option<Refresh<f64>> {
        Some(Refresh {
            shape: MemoShape::Bits { bits: k.get() },
            chained: |_, chained| chained.p,
        })
    }
}

/// The true-bit probability must lie in `(0, 1)`: any such `p`, with its `q < p`, is
/// eps-LDP.
pub(crate) fn check_unary_p(p: f64) -> Result<(), ParamError> {
    if p > 0.0 && p < 1.0 {
        Ok(())
    } else {
        Err(ParamError::Parameter {
            name: "p",
            description: "unary-encoding probability p",
            requirement: "lie in (0, 1)".into(),
            value: p,
        })
    }
}

independent_bits_mechanism!(UnaryEncoding);
