//! The audit's errors: each names the setting or the report at fault.

/// Why an audit could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The caller's `stop` turned true ([`audit_mechanism_until`](crate::audit_mechanism_until),
    /// [`audit_multidim_until`](crate::audit_multidim_until)): the remaining batches were
    /// skipped and nothing was measured.
    #[error("stopped before the end: nothing was measured")]
    Stopped,
    /// alpha outside [1e-100, 1) ([`MIN_ALPHA`](crate::MIN_ALPHA)).
    #[error("alpha = {0:?} is not in [1e-100, 1): the bounds hold with confidence 1 - alpha")]
    Alpha(f64),
    /// No trials, or more than [`MAX_TRIALS`](crate::MAX_TRIALS).
    #[error("trials = {0}: every input needs between 1 and 10^12 reports")]
    Trials(u64),
    /// A batch of no items, or more than [`MAX_BATCH`](crate::MAX_BATCH).
    #[error("batch = {0}: a batch holds between 1 and 2^24 items")]
    Batch(u64),
    /// Counts that are not a binomial outcome.
    #[error("{successes} successes in {trials} trials")]
    Counts {
        /// Successes.
        successes: u64,
        /// Trials.
        trials: u64,
    },
    /// A domain with fewer than two items.
    #[error("k = {0}: a distinguishing test needs two items")]
    Domain(u32),
    /// An empty list of pairs.
    #[error("no input pairs to distinguish")]
    NoPairs,
    /// An empty list of statistics.
    #[error("no statistic to count: choose lr, guess or both")]
    NoStatistics,
    /// A statistic that does not apply.
    #[error("the statistic {statistic} does not apply: {reason}")]
    Statistic {
        /// The statistic.
        statistic: crate::Statistic,
        /// Why.
        reason: &'static str,
    },
    /// A pair outside the domain or of one item.
    #[error("the pair ({v1}, {v2}) is not two distinct items of 0 to {}", k - 1)]
    Pair {
        /// First input.
        v1: u32,
        /// Second input.
        v2: u32,
        /// Domain size.
        k: u32,
    },
    /// A number of linked reports below 1 or above [`MAX_LINKED`](crate::MAX_LINKED).
    #[error("{0} collections: between 1 and 10^7 reports can be linked")]
    Collections(u32),
    /// A hash range below 2.
    #[error("g = {0}: a hashed report needs a range of at least 2 values")]
    HashRange(u32),
    /// A client returned the wrong number of reports.
    #[error("the client returned {got} reports for {expected} items of input {input}")]
    ReportCount {
        /// The input of the batch.
        input: u32,
        /// Items sent.
        expected: usize,
        /// Reports returned.
        got: usize,
    },
    /// A client's report does not have the audited shape.
    #[error("report {line} of a batch of input {input}: {reason}")]
    Report {
        /// The input of the batch.
        input: u32,
        /// The report's position in the batch, from 1.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// An external client failed.
    #[error("the client `{command}` (a batch of input {input}): {reason}")]
    Command {
        /// The command line.
        command: String,
        /// The input of the batch.
        input: u32,
        /// What went wrong, with the output line where there is one.
        reason: String,
    },
    /// Input pairs given for a client of several attributes, whose pairs are fixed.
    #[error(
        "a client of several attributes is audited on fixed tuples (all first items against all last, and each attribute's change alone): leave the pairs at extremes"
    )]
    MultidimPairs,
    /// An RS+ client whose family does not list every output: a fake's likelihood
    /// depends on the whole report, so outputs listed by symmetry or by seed are not enough.
    #[error(
        "the exact audit of an RS+ solution needs every output of each attribute, and this family lists them {0}: use the statistical audit"
    )]
    ExactFakes(&'static str),
    /// An exact audit too large to enumerate.
    #[error(
        "an exact audit of {outputs} outputs at k = {k} needs more than {} likelihood evaluations: use a smaller k or the statistical audit",
        crate::exact::EXACT_LIMIT
    )]
    ExactTooLarge {
        /// Outputs to enumerate.
        outputs: u64,
        /// Domain size.
        k: u32,
    },
    /// The mechanism could not be built.
    #[error(transparent)]
    Param(#[from] ldp_core::ParamError),
}
