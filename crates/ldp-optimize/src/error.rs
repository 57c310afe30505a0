//! Errors of tuning and selection.

use ldp_analytic::PoisoningError;
use ldp_core::Protocol;

/// Invalid tuning input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OptimizeError {
    /// A weight is negative or not finite.
    #[error("weight `{name}` must be finite and >= 0, got {value}")]
    Weight {
        /// Which weight.
        name: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// Every weight is zero.
    #[error("at least one weight must be positive")]
    AllWeightsZero,
    /// A parameter range holds no value.
    #[error("the parameter range [{lo}, {hi}] is empty")]
    EmptyRange {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
    },
    /// The parameter space is too large to scan (e.g. ALH's `[2, round(e^eps) + 1]` at
    /// large eps).
    #[error(
        "the parameter space has {points} values, more than the {limit} a scan evaluates; give the parameter explicitly (or a narrower space) or use a smaller eps"
    )]
    SpaceTooLarge {
        /// Values in the space.
        points: u64,
        /// The limit.
        limit: u64,
    },
    /// The epsilon-constraint bound must be a probability.

    #[error("the ASR bound must lie in [0, 1], got {0}")]
    AsrBound(f64),
    /// The hypervolume reference point must be finite.
    #[error("the hypervolume reference point must be finite, got ({0}, {1})")]
    Reference(f64, f64),
    /// Rho of the augmented Tchebycheff scalarization must be finite and >= 0.
    #[error("rho must be finite and >= 0, got {0}")]
    Rho(f64),
    /// The protocol has no free parameter to tune.
    #[error("{0} has no parameter to tune; adaptive protocols are ASS, AUE, ALH and ATHE")]
    NotAdaptive(Protocol),
    /// An empty candidate set was given to a selection strategy.
    #[error("no candidates to select from")]
    NoCandidates,
    /// A parameter value lies outside its family's range.
    #[error(transparent)]
    Param(#[from] ldp_core::ParamError),
    /// The poisoning setting is invalid.
    #[error(transparent)]
    Poisoning(#[from] PoisoningError),
}
