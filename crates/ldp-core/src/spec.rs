//! A protocol instance as data: domain size, budget, family and family parameter.
//!
//! [`Spec`] is what analysis, tuning and the command line pass around, and what identifies
//! a mechanism; [`Spec::build`] turns it into a runnable one. Code that holds a mechanism
//! of a family chosen at run time matches [`AnyMechanism`] once, with [`dispatch!`](crate::dispatch), and
//! runs monomorphized from there.

use crate::error::ParamError;
pub use crate::families::{AnyMechanism, FamilyParams, NotClassic};
use crate::report::ReportLimits;
use crate::vocab::{DomainSize, Epsilon, Family, Protocol};

/// A validated protocol instance: the identity of a mechanism.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Protocol, spec::{FamilyParams, Spec}};
/// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(4.0)?);
/// let olh = Spec::classic(Protocol::Olh, k, eps)?;
/// assert_eq!(olh.params(), FamilyParams::LocalHashing { g: 56 });
/// let alh = Spec::new(k, eps, FamilyParams::LocalHashing { g: 13 })?;
/// assert!(Spec::new(k, eps, FamilyParams::LocalHashing { g: 1 }).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "SpecFields")
)]
pub struct Spec {
    k: DomainSize,
    eps: Epsilon,
    family: FamilyParams,
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFields {
    k: DomainSize,
    eps: Epsilon,
    family: FamilyParams,
}

#[cfg(feature = "serde")]
impl TryFrom<SpecFields> for Spec {
    type Error = ParamError;
    fn try_from(f: SpecFields) -> Result<Self, ParamError> {
        Spec::new(f.k, f.eps, f.family)
    }
}

impl Spec {
    /// Validates the parameter against its family's range.
    #[inline]
    pub fn new(k: DomainSize, eps: Epsilon, family: FamilyParams) -> Result<Self, ParamError> {
        family.check(k, eps)?;
        Ok(Spec { k, eps, family })
    }

    /// For parameters a mechanism already validated.
    pub(crate) fn from_parts(k: DomainSize, eps: Epsilon, family: FamilyParams) -> Self {
        Spec { k, eps, family }
    }

    /// Domain size.
    pub fn k(&self) -> DomainSize {
        self.k
    }

    /// Privacy budget.
    pub fn eps(&self) -> Epsilon {
        self.eps
    }

    /// The family with its parameter values.
    pub fn params(&self) -> FamilyParams {
        self.family
    }

    /// The family.
    pub fn family(&self) -> Family {
        self.family.family()
    }

    /// A classic protocol at its preset parameter (for the paper's eight, the paper's
    /// presets); [`NotClassic`] for an adaptive protocol.
    pub fn classic(protocol: Protocol, k: DomainSize, eps: Epsilon) -> Result<Self, NotClassic> {
        let family = protocol.preset(k, eps)?;
        Ok(Spec { k, eps, family })
    }

    /// `(p*, q*)` of a pure protocol, by the same functions the mechanisms use, without
    /// building one; `None` for SHE, which is not pure.
    ///
    /// ```
    /// use ldp_core::{DomainSize, Epsilon, Protocol, PureProtocol, Spec, UnaryEncoding};
    /// let (k, eps) = (DomainSize::new(50)?, Epsilon::new(1.5)?);
    /// let sue = Spec::classic(Protocol::Sue, k, eps)?;
    /// let mech = UnaryEncoding::symmetric(k, eps)?;
    /// assert_eq!(sue.pure_probabilities(), Some((mech.p_star(), mech.q_star())));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pure_probabilities(&self) -> Option<(f64, f64)> {
        self.family.probabilities(self.k, self.eps)
    }

    /// The fewest and the most items one report supports (GRR exactly one, SS exactly
    /// omega, UE and THE between 0 and k); `None` for SHE, whose reports support no items.
    pub fn support_size_range(&self) -> Option<(u32, u32)> {
        self.family.support_size_range(self.k)
    }

    /// How large a report can be ([`crate::report::ReportLimits`]).
    pub fn report_limits(&self) -> ReportLimits {
        self.family.report_limits(self.k)
    }

    /// The runnable mechanism. Fails when k exceeds [`crate::MAX_RUNNABLE_DOMAIN`], or for
    /// SHE below [`crate::families::summation::MIN_EPS`]; every other check was done by
    /// [`Spec::new`].
    pub fn build(&self) -> Result<AnyMechanism, ParamError> {
        self.family.build(self.k, self.eps)
    }
}
