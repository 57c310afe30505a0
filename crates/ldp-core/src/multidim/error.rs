//! What can go wrong with several attributes, each error naming the attribute.

use crate::error::{AggregateError, ItemOutOfRange, ParamError, ReportError};
use crate::families::{Family, NotClassic, WrongFamily};

/// An error of a multidimensional client or server.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MultidimError {
    /// A user must have at least one attribute.
    #[error("no attributes: a multidimensional collection needs at least one")]
    NoAttributes,
    /// Building an attribute's mechanism failed.
    #[error("attribute {attribute}: {source}")]
    Param {
        /// The attribute's index.
        attribute: u32,
        /// Why.
        source: ParamError,
    },
    /// An adaptive protocol given where a preset is needed.
    #[error(transparent)]
    NotClassic(NotClassic),
    /// Attributes of different families.
    #[error("attribute {attribute}: {source}")]
    Family {
        /// The attribute.
        attribute: u32,
        /// The families.
        source: WrongFamily,
    },
    /// The per-report budget could not be formed from the total one.
    #[error("the per-report budget: {0}")]
    Budget(ParamError),
    /// A user's items do not match the attributes.
    #[error("expected {expected} items, one per attribute, got {found}")]
    Arity {
        /// The number of attributes.
        expected: usize,
        /// The number of items given.
        found: usize,
    },
    /// An attribute index beyond the client's attributes.
    #[error("attribute {attribute} does not exist: the client has {d} attributes (0..{d})")]
    NoSuchAttribute {
        /// The index asked for.
        attribute: usize,
        /// The number of attributes.
        d: usize,
    },
    /// An item outside its attribute's domain.
    #[error("attribute {attribute}: {source}")]
    Item {
        /// The attribute's index.
        attribute: u32,
        /// Why.
        source: ItemOutOfRange,
    },
    /// RS+FD-z asked of a family without a null input.
    #[error(
        "RS+FD-z needs a report of no item, which the {family:?} family does not have \
         (UE and THE do); use rsfd or rsrfd"
    )]
    NoNullInput {
        /// The family.
        family: Family,
    },
    /// RS+RFD without priors, or priors for another solution.
    #[error("{0}")]
    Priors(&'static str),
    /// A prior that is no distribution over its attribute's domain.
    #[error("prior of attribute {attribute}: {reason}")]
    Prior {
        /// The attribute's index.
        attribute: u32,
        /// Why.
        reason: String,
    },
    /// A report of the wrong shape, or one of whose attribute reports is invalid.
    #[error("{}{source}", at(*.attribute))]
    Report {
        /// The attribute whose report is invalid, when one is.
        attribute: Option<u32>,
        /// Why.
        source: ReportError,
    },
    /// An attribute's aggregation or estimate failed.
    #[error("{}{source}", at(*.attribute))]
    Aggregate {
        /// The attribute, when one is concerned.
        attribute: Option<u32>,
        /// Why.
        source: AggregateError,
    },
}

fn at(attribute: Option<u32>) -> String {
    attribute.map_or_else(String::new, |a| format!("attribute {a}: "))
}

impl MultidimError {
    pub(crate) fn report(attribute: Option<usize>, source: ReportError) -> Self {
        MultidimError::Report {
            attribute: attribute.map(|a| a as u32),
            source,
        }
    }

    pub(crate) fn aggregate(attribute: Option<usize>, source: AggregateError) -> Self {
        MultidimError::Aggregate {
            attribute: attribute.map(|a| a as u32),
            source,
        }
    }
}
