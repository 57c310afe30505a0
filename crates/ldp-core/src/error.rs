//! Error types. Every fallible public function returns one of these; none panics on user input.

use thiserror::Error;

/// A number in its shortest round-trip form, in exponent form below 1e-5 and from 1e16
/// in magnitude (so that messages never print 300 digits).
pub(crate) fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-5..1e16).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A protocol parameter is outside the range where the mechanism is defined.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ParamError {
    /// The privacy budget must be finite and strictly positive.
    #[error("epsilon must be finite and > 0, got {}", num(*.value))]
    Epsilon {
        /// The rejected value.
        value: f64,
    },
    /// A runnable mechanism whose probabilities are written in `e^eps` needs `e^eps > 1`
    /// in floating point: below about 1.1e-16 its reports would carry no signal.
    #[error(
        "epsilon = {} is so small that e^eps = 1 in floating point: reports would carry no signal",
        num(*.value)
    )]
    NoSignal {
        /// The rejected value.
        value: f64,
    },
    /// The domain must hold at least two items.
    #[error("domain size k must be at least 2 (and at most 2^32 - 1), got {value}")]
    DomainSize {
        /// The rejected value.
        value: u64,
    },
    /// A runnable mechanism's aggregator holds one counter per item (and an SHE report one
    /// number per item), so its domain is capped; closed forms take any k.
    #[error(
        "domain size k = {value} is too large for a runnable mechanism (at most {max}: its aggregator holds k counters)"
    )]
    DomainTooLarge {
        /// The rejected value.
        value: u32,
        /// The largest runnable domain, [`crate::MAX_RUNNABLE_DOMAIN`].
        max: u32,
    },
    /// SHE's Laplace noise of scale 2/eps must stay within the report bound.
    #[error(
        "epsilon = {} is too small for SHE: its noise (scale 2/eps) would exceed the report bound; SHE needs eps >= {}",
        num(*.value),
        num(*.min)
    )]
    SheBudget {
        /// The rejected budget.
        value: f64,
        /// The smallest budget SHE accepts.
        min: f64,
    },
    /// The fraction of fake users of a poisoning attack must lie in `[0, 1)`.
    #[error("fake-user fraction beta must lie in [0, 1), got {}", num(*.value))]
    FakeFraction {
        /// The rejected value.
        value: f64,
    },
    /// A family parameter lies outside the range where the mechanism is defined.
    #[error("{description} must {requirement}, got {}", num(*.value))]
    Parameter {
        /// The parameter's name, as [`crate::FamilyParams`] spells it (`omega`, `p`, ...).
        name: &'static str,
        /// How messages describe it (`subset size omega`).
        description: &'static str,
        /// What is required of it (`lie in [1, 9] (k - 1)`).
        requirement: String,
        /// The rejected value.
        value: f64,
    },
    /// A parameter space holds no value.
    #[error("the parameter range [{}, {}] is empty", num(*.lo), num(*.hi))]
    EmptyRange {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
    },
    /// A SHE server's clipping bound must lie in `[1, SHE_REPORT_BOUND]`.
    #[error("SHE clipping bound must lie in [1, 1e150], got {}", num(*.value))]
    ClipBound {
        /// The rejected value.
        value: f64,
    },
    /// A longitudinal protocol cannot spend exactly `eps_1` per report after a memo at
    /// `eps_perm`: every chain needs `eps_1 < eps_perm`, some a little less.
    #[error(
        "{protocol} with eps_perm = {} needs a per-report budget eps_1 below {}, got {}",
        num(*.eps_perm),
        num(*.max),
        num(*.eps_1)
    )]
    LongitudinalBudget {
        /// The protocol's label.
        protocol: &'static str,
        /// The rejected per-report budget.
        eps_1: f64,
        /// The permanent budget.
        eps_perm: f64,
        /// The supremum of the per-report budgets this chain reaches.
        max: f64,
    },
    /// Memoization was asked to refresh reports that have no second round.
    #[error(
        "the {family:?} family's reports have no second round to refresh a memo with: memoize them permanently"
    )]
    NoRefresh {
        /// The family.
        family: crate::Family,
    },
    /// A per-user hash with memos per hashed value (LOLOHA's device) runs only the
    /// hashed chains.
    #[error(
        "{protocol} memoizes per value; one hash per user with a memo per hashed value runs l-olh or l-blh"
    )]
    NotHashed {
        /// The chain given.
        protocol: &'static str,
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
    /// A report or memo of another protocol's shape (one-bits where an item is expected,
    /// or the reverse).
    #[error("expected {expected}")]
    Shape {
        /// What the protocol expects.
        expected: &'static str,
    },
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
    /// Two cells of a dBitFlip report name one bucket (`2j` and `2j + 1`): a report
    /// samples each bucket at most once.
    #[error("field `{field}`: cells {} and {} both name bucket {bucket}; a bucket is sampled at most once", 2 * u64::from(*.bucket), 2 * u64::from(*.bucket) + 1)]
    SameBucket {
        /// Offending field.
        field: &'static str,
        /// The bucket named twice.
        bucket: u32,
    },
    /// A real-valued entry is NaN or infinite.
    #[error("field `{field}`: entry {position} is not a finite number")]
    NonFinite {
        /// Offending field.
        field: &'static str,
        /// Position of the entry.
        position: usize,
    },
    /// A real-valued entry is finite but larger in magnitude than any report can be.
    #[error("field `{field}`: entry {position} ({}) is outside [-{}, {}]", num(*.value), num(*.bound), num(*.bound))]
    Magnitude {
        /// Offending field.
        field: &'static str,
        /// Position of the entry.
        position: usize,
        /// The value received.
        value: f64,
        /// The largest admissible magnitude.
        bound: f64,
    },
}

/// Aggregation or estimation could not proceed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum AggregateError {
    /// A report was rejected; the aggregator is unchanged.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// The number of reports would exceed `u64::MAX` (only a restored state can get here).
    #[error("the report count would exceed 2^64 - 1")]
    CountOverflow,
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
    /// The estimator reads support counts through the mechanism's `(p*, q*)`, which this
    /// aggregator does not have (SHE keeps sums; the sketches and blocked HR have no single
    /// pair), or it was asked of the raw estimate alone.
    #[error("the {estimator} estimator needs support counts and the channel (p*, q*): {why}")]
    NeedsChannel {
        /// The estimator's name.
        estimator: &'static str,
        /// What is missing.
        why: String,
    },
    /// An iterative estimator's cap or tolerance is out of range.
    #[error("estimator options: {reason}")]
    BadFitOptions {
        /// What is wrong.
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
    /// See [`crate::NotClassic`].
    #[error(transparent)]
    NotClassic(#[from] crate::NotClassic),
    /// See [`crate::WrongFamily`].
    #[error(transparent)]
    WrongFamily(#[from] crate::WrongFamily),
    /// See [`crate::multidim::MultidimError`].
    #[error(transparent)]
    Multidim(#[from] crate::multidim::MultidimError),
}
