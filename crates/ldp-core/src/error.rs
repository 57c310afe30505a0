//! Error types. Every fallible public function returns one of these; none panics on user input.

use thiserror::Error;

/// A protocol parameter is outside the range where the mechanism is defined.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ParamError {
    /// The privacy budget must be finite and strictly positive.
    #[error("epsilon must be finite and > 0, got {value}")]
    Epsilon {
        /// The rejected value.
        value: f64,
    },
    /// The domain must hold at least two items.
    #[error("domain size k must be at least 2, got {value}")]
    DomainSize {
        /// The rejected value.
        value: u64,
    },
    /// Subset selection needs 1 <= omega <= k - 1.
    #[error("subset size omega must lie in [1, {max}] (k - 1), got {value}")]
    SubsetSize {
        /// The rejected value.
        value: u64,
        /// The largest admissible value, k - 1.
        max: u32,
    },
    /// Unary encoding needs p in [0.5, 1).
    #[error("unary-encoding probability p must lie in [0.5, 1), got {value}")]
    UnaryP {
        /// The rejected value.
        value: f64,
    },
    /// Local hashing needs a hash range of at least 2.
    #[error("hash range g must be at least 2, got {value}")]
    HashRange {
        /// The rejected value.
        value: u64,
    },
    /// A SHE server's clipping bound must be finite and at least 1.
    #[error("clipping bound must be finite and >= 1, got {value}")]
    ClipBound {
        /// The rejected value.
        value: f64,
    },
    /// Thresholding needs theta in [0.5, 1].
    #[error("threshold theta must lie in [0.5, 1], got {value}")]
    Threshold {
        /// The rejected value.
        value: f64,
    },
}

/// An item handed to a client is not in `0..k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("item {item} is outside the domain 0..{k}")]
pub struct ItemOutOfRange {
    /// The rejected item.
    pub item: u64,
    /// The domain size.
    pub k: u32,
}

/// A report that arrived from outside does not belong to the mechanism's output space.
///
/// `field` names the report field at fault, as it is spelled in the serialized form.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A list has the wrong number of entries.
    #[error("field `{field}`: expected {expected} entries, found {found}")]
    Length {
        /// Offending field.
        field: &'static str,
        /// Required length.
        expected: usize,
        /// Length received.
        found: usize,
    },
    /// An index or value is outside its range `0..bound`.
    #[error("field `{field}`: value {value} is outside 0..{bound}")]
    OutOfRange {
        /// Offending field.
        field: &'static str,
        /// The value received.
        value: u64,
        /// Exclusive upper bound.
        bound: u64,
    },
    /// A list of indices is not strictly increasing (canonical reports are sorted).
    #[error(
        "field `{field}`: entries must be sorted increasingly; entry {position} ({value}) breaks the order"
    )]
    Unsorted {
        /// Offending field.
        field: &'static str,
        /// Position of the first entry out of order.
        position: usize,
        /// That entry.
        value: u32,
    },
    /// A list of indices repeats an entry.
    #[error("field `{field}`: entry {value} appears more than once")]
    Duplicate {
        /// Offending field.
        field: &'static str,
        /// The repeated entry.
        value: u32,
    },
    /// A real-valued entry is NaN or infinite.
    #[error("field `{field}`: entry {position} is not a finite number")]
    NonFinite {
        /// Offending field.
        field: &'static str,
        /// Position of the entry.
        position: usize,
    },
    /// A local-hashing seed does not fit in 32 bits.
    #[error("field `seed`: {value} does not fit in an unsigned 32-bit integer")]
    SeedOutOfRange {
        /// The value received.
        value: i128,
    },
}

/// Aggregation or estimation could not proceed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum AggregateError {
    /// Estimation needs at least one report.
    #[error("no reports have been aggregated; an estimate needs at least one")]
    Empty,
    /// The budget is so small that p* and q* are equal in floating point: the reports
    /// carry no signal the estimator can use.
    #[error(
        "epsilon is too small to estimate anything: p* = {p} and q* = {q} are equal in floating point"
    )]
    Uninformative {
        /// P[report supports x | x].
        p: f64,
        /// P[report supports x | x' != x].
        q: f64,
    },
    /// Two aggregators built for different mechanisms cannot be merged.

    #[error("cannot merge aggregators of different mechanisms: {left} vs {right}")]
    Incompatible {
        /// Description of the receiving aggregator's mechanism.
        left: String,
        /// Description of the other aggregator's mechanism.
        right: String,
    },
    /// A serialized aggregator state is inconsistent.
    #[error("corrupt aggregator state: {reason}")]
    CorruptState {
        /// What is inconsistent.
        reason: String,
    },
}

/// Any error of this crate, for callers who want a single type.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// See [`ParamError`].
    #[error(transparent)]
    Param(#[from] ParamError),
    /// See [`ItemOutOfRange`].
    #[error(transparent)]
    Item(#[from] ItemOutOfRange),
    /// See [`ReportError`].
    #[error(transparent)]
    Report(#[from] ReportError),
    /// See [`AggregateError`].
    #[error(transparent)]
    Aggregate(#[from] AggregateError),
}
