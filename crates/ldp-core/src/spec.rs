//! A protocol instance as data: domain size, budget, family and family parameter.
//!
//! [`Spec`] is what analysis, tuning and the command line pass around, and what identifies
//! a mechanism; [`Spec::build`] turns it into a runnable one. Code that holds a mechanism
//! of a family chosen at run time matches [`AnyMechanism`] once, with [`dispatch!`](crate::dispatch), and
//! runs monomorphized from there.

use crate::error::ParamError;
use crate::families::grr;
use crate::families::local_hash::{self, check_hash_range};
use crate::families::subset::{self, check_subset_size};
use crate::families::threshold::{self, check_threshold};
use crate::families::unary::{self, check_unary_p};
use crate::families::{
    grr::Grr, local_hash::LocalHashing, subset::SubsetSelection, summation::SummationHistogram,
    threshold::ThresholdHistogram, unary::UnaryEncoding,
};
use crate::vocab::{DomainSize, Epsilon, Family, Protocol};

/// A family and the value of its free parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum FamilyParams {
    /// GRR has no free parameter.
    Grr,
    /// Subset selection with subset size omega in `[1, k-1]`.
    SubsetSelection {
        /// Subset size.
        omega: u32,
    },
    /// Unary encoding with true-bit probability p in `[0.5, 1)`.
    UnaryEncoding {
        /// Probability of keeping the true bit.
        p: f64,
    },
    /// Local hashing with hash range g >= 2.
    LocalHashing {
        /// Hash range.
        g: u32,
    },
    /// SHE has no free parameter.
    SummationHistogram,
    /// THE with threshold theta in `[0.5, 1]`.
    ThresholdHistogram {
        /// Threshold.
        theta: f64,
    },
}

impl FamilyParams {
    /// The family these parameters belong to.
    pub fn family(&self) -> Family {
        match self {
            FamilyParams::Grr => Family::Grr,
            FamilyParams::SubsetSelection { .. } => Family::SubsetSelection,
            FamilyParams::UnaryEncoding { .. } => Family::UnaryEncoding,
            FamilyParams::LocalHashing { .. } => Family::LocalHashing,
            FamilyParams::SummationHistogram => Family::SummationHistogram,
            FamilyParams::ThresholdHistogram { .. } => Family::ThresholdHistogram,
        }
    }

    /// The free parameter as a number (omega, p, g or theta); `None` for GRR and SHE.
    pub fn value(&self) -> Option<f64> {
        match *self {
            FamilyParams::Grr | FamilyParams::SummationHistogram => None,
            FamilyParams::SubsetSelection { omega } => Some(f64::from(omega)),
            FamilyParams::UnaryEncoding { p } => Some(p),
            FamilyParams::LocalHashing { g } => Some(f64::from(g)),
            FamilyParams::ThresholdHistogram { theta } => Some(theta),
        }
    }

    /// The parameters of `family` with the free parameter set to `value` (omega and g must
    /// be whole numbers); `None` for GRR and SHE, which take no value, and for a value that
    /// is not a whole number where one is needed. The range is checked by [`Spec::new`].
    pub fn with_value(family: Family, value: f64) -> Option<Self> {
        let whole = || {
            (value.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&value))
                .then_some(value as u32)
        };
        match family {
            Family::Grr | Family::SummationHistogram => None,
            Family::SubsetSelection => Some(FamilyParams::SubsetSelection { omega: whole()? }),
            Family::UnaryEncoding => Some(FamilyParams::UnaryEncoding { p: value }),
            Family::LocalHashing => Some(FamilyParams::LocalHashing { g: whole()? }),
            Family::ThresholdHistogram => Some(FamilyParams::ThresholdHistogram { theta: value }),
        }
    }
}

/// A validated protocol instance: the identity of a mechanism.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Protocol, spec::{FamilyParams, Spec}};
/// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(4.0)?);
/// let olh = Spec::classic(Protocol::Olh, k, eps)?;
/// assert_eq!(olh.family(), FamilyParams::LocalHashing { g: 56 });
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

/// The protocol asked for has no fixed preset (it is adaptive: tune it with ldp-optimize).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0} is adaptive: its parameter is chosen by tuning, not by a preset")]
pub struct NotClassic(pub Protocol);

impl Spec {
    /// Validates the parameter against its family's range.
    pub fn new(k: DomainSize, eps: Epsilon, family: FamilyParams) -> Result<Self, ParamError> {
        match family {
            FamilyParams::Grr | FamilyParams::SummationHistogram => {}
            FamilyParams::SubsetSelection { omega } => check_subset_size(k, omega)?,
            FamilyParams::UnaryEncoding { p } => check_unary_p(p)?,
            FamilyParams::LocalHashing { g } => check_hash_range(g)?,
            FamilyParams::ThresholdHistogram { theta } => check_threshold(theta)?,
        }
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

    /// Family and parameter.
    pub fn family(&self) -> FamilyParams {
        self.family
    }

    /// One of the eight classic protocols with the paper's preset parameter.
    pub fn classic(protocol: Protocol, k: DomainSize, eps: Epsilon) -> Result<Self, NotClassic> {
        let family = match protocol {
            Protocol::Grr => FamilyParams::Grr,
            Protocol::Ss => FamilyParams::SubsetSelection {
                omega: subset::optimal_size(k, eps),
            },
            Protocol::Sue => FamilyParams::UnaryEncoding {
                p: unary::symmetric_p(eps),
            },
            Protocol::Oue => FamilyParams::UnaryEncoding {
                p: unary::OPTIMIZED_P,
            },
            Protocol::Blh => FamilyParams::LocalHashing {
                g: local_hash::BINARY_RANGE,
            },
            Protocol::Olh => FamilyParams::LocalHashing {
                g: local_hash::optimal_range(eps),
            },
            Protocol::She => FamilyParams::SummationHistogram,
            Protocol::The => FamilyParams::ThresholdHistogram {
                theta: threshold::optimal_threshold(eps),
            },
            adaptive => return Err(NotClassic(adaptive)),
        };
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
        let (k, eps) = (self.k, self.eps);
        Some(match self.family {
            FamilyParams::Grr => grr::probabilities(k, eps),
            FamilyParams::SubsetSelection { omega } => subset::probabilities(k, eps, omega),
            FamilyParams::UnaryEncoding { p } => unary::probabilities(eps, p),
            FamilyParams::LocalHashing { g } => local_hash::probabilities(eps, g),
            FamilyParams::ThresholdHistogram { theta } => threshold::probabilities(eps, theta),
            FamilyParams::SummationHistogram => return None,
        })
    }

    /// The runnable mechanism. Fails when k exceeds [`crate::MAX_RUNNABLE_DOMAIN`], or for
    /// SHE below [`crate::families::summation::MIN_EPS`]; every other check was done by
    /// [`Spec::new`].
    pub fn build(&self) -> Result<AnyMechanism, ParamError> {
        let (k, eps) = (self.k, self.eps);
        Ok(match self.family {
            FamilyParams::Grr => AnyMechanism::Grr(Grr::new(k, eps)?),
            FamilyParams::SubsetSelection { omega } => {
                AnyMechanism::SubsetSelection(SubsetSelection::new(k, eps, omega)?)
            }
            FamilyParams::UnaryEncoding { p } => {
                AnyMechanism::UnaryEncoding(UnaryEncoding::new(k, eps, p)?)
            }
            FamilyParams::LocalHashing { g } => {
                AnyMechanism::LocalHashing(LocalHashing::new(k, eps, g)?)
            }
            FamilyParams::SummationHistogram => {
                AnyMechanism::SummationHistogram(SummationHistogram::new(k, eps)?)
            }
            FamilyParams::ThresholdHistogram { theta } => {
                AnyMechanism::ThresholdHistogram(ThresholdHistogram::new(k, eps, theta)?)
            }
        })
    }
}

/// Any of the six mechanisms, for code that chooses the family at run time. Match it with
/// [`dispatch!`](crate::dispatch) and run generic code monomorphized from there.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum AnyMechanism {
    Grr(Grr),
    SubsetSelection(SubsetSelection),
    UnaryEncoding(UnaryEncoding),
    LocalHashing(LocalHashing),
    SummationHistogram(SummationHistogram),
    ThresholdHistogram(ThresholdHistogram),
}

impl AnyMechanism {
    /// The mechanism's defining parameters.
    pub fn spec(&self) -> Spec {
        crate::dispatch!(self, m => crate::Mechanism::spec(m))
    }
}

/// Runs `$body` with `$m` bound to the concrete mechanism inside an [`AnyMechanism`]
/// (by value or by reference, as `$any` is given): the one place that lists the families.
///
/// ```
/// use ldp_core::{dispatch, AnyMechanism, DomainSize, Epsilon, Mechanism, Protocol, Spec};
/// fn describe<M: Mechanism>(m: &M) -> String { format!("k = {}", m.domain_size()) }
/// let any = Spec::classic(Protocol::Olh, DomainSize::new(8)?, Epsilon::new(1.0)?)?.build()?;
/// assert_eq!(dispatch!(&any, m => describe(m)), "k = 8");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[macro_export]
macro_rules! dispatch {
    ($any:expr, $m:ident => $body:expr) => {
        match $any {
            $crate::AnyMechanism::Grr($m) => $body,
            $crate::AnyMechanism::SubsetSelection($m) => $body,
            $crate::AnyMechanism::UnaryEncoding($m) => $body,
            $crate::AnyMechanism::LocalHashing($m) => $body,
            $crate::AnyMechanism::SummationHistogram($m) => $body,
            $crate::AnyMechanism::ThresholdHistogram($m) => $body,
        }
    };
}
