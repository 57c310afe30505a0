//! A protocol instance as data: domain size, budget, family and family parameter.
//!
//! [`Spec`] is what analysis, tuning and the command line pass around; [`Spec::build`]
//! turns it into a runnable mechanism.

use serde::{Deserialize, Serialize};

use crate::error::ParamError;
use crate::families::histogram::{
    SummationHistogram, ThresholdHistogram, check_threshold, optimal_threshold,
};
use crate::families::local_hash::check_hash_range;
use crate::families::subset::check_subset_size;
use crate::families::unary::{check_unary_p, symmetric_p};

use crate::families::{
    grr::Grr, local_hash::LocalHashing, subset::SubsetSelection, unary::UnaryEncoding,
};
use crate::vocab::{DomainSize, Epsilon, Family, Protocol};

/// A family and the value of its free parameter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
}

/// A validated protocol instance.
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SpecFields")]
pub struct Spec {
    k: DomainSize,
    eps: Epsilon,
    family: FamilyParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFields {
    k: DomainSize,
    eps: Epsilon,
    family: FamilyParams,
}

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
                omega: SubsetSelection::with_optimal_size(k, eps).subset_size(),
            },
            Protocol::Sue => FamilyParams::UnaryEncoding {
                p: symmetric_p(eps),
            },

            Protocol::Oue => FamilyParams::UnaryEncoding { p: 0.5 },
            Protocol::Blh => FamilyParams::LocalHashing { g: 2 },
            Protocol::Olh => FamilyParams::LocalHashing {
                g: LocalHashing::optimized(k, eps).hash_range(),
            },
            Protocol::She => FamilyParams::SummationHistogram,
            Protocol::The => FamilyParams::ThresholdHistogram {
                theta: optimal_threshold(eps),
            },
            adaptive => return Err(NotClassic(adaptive)),
        };
        Ok(Spec { k, eps, family })
    }

    /// The runnable mechanism.
    pub fn build(&self) -> AnyMechanism {
        self.try_build().expect("validated in Spec::new")
    }

    fn try_build(&self) -> Result<AnyMechanism, ParamError> {
        let (k, eps) = (self.k, self.eps);
        Ok(match self.family {
            FamilyParams::Grr => AnyMechanism::Grr(Grr::new(k, eps)),
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
                AnyMechanism::SummationHistogram(SummationHistogram::new(k, eps))
            }
            FamilyParams::ThresholdHistogram { theta } => {
                AnyMechanism::ThresholdHistogram(ThresholdHistogram::new(k, eps, theta)?)
            }
        })
    }
}

/// Any of the six mechanisms, for code that chooses the family at run time.
/// Generic code matches once and then runs monomorphized.
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
