//! Errors of tuning and selection.

use ldp_analytic::PoisoningError;
use ldp_core::{Family, Protocol};

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
    /// The parameter space is too large to scan, and the request needs every point (only
    /// the weighted and Tchebycheff scalarizations on raw objectives, and the
    /// epsilon-constraint on one report's ASR, are searched without a full scan).
    #[error(
        "{protocol}: the parameter space has {points} values, more than the {limit} a full scan evaluates, and {reason}"
    )]
    SpaceTooLarge {
        /// The protocol being tuned.
        protocol: Protocol,
        /// Values in the space.
        points: u64,
        /// The limit.
        limit: u64,
        /// Why every point is needed, and what would do instead.
        reason: FullScan,
    },
    /// A bound of the epsilon-constraint is out of range.
    #[error("the bound on {objective} must be {expected}, got {value}")]
    Bound {
        /// The bounded objective.
        objective: &'static str,
        /// What is required.
        expected: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// The epsilon-constraint needs at least one bound.
    #[error("the epsilon-constraint needs at least one bound (ASR, EPG or bits)")]
    NoBounds,
    /// The hypervolume reference point must be finite.
    #[error("the hypervolume reference point must be finite, got ({0}, {1})")]
    Reference(f64, f64),
    /// Rho of the augmented Tchebycheff scalarization must be finite and >= 0.
    #[error("rho must be finite and >= 0, got {0}")]
    Rho(f64),
    /// The strategy has no meaning for this many objectives.
    #[error(
        "the {strategy} strategy is defined for two objectives, not {objectives}: weight only two, or use weighted, tchebycheff, utopia or eps-constraint"
    )]
    Dimensions {
        /// The strategy.
        strategy: &'static str,
        /// How many objectives were weighted.
        objectives: usize,
    },
    /// The ASR objective after t collections needs at least one collection.
    #[error("the number of collections must be at least 1")]
    NoCollections,
    /// The ASR after several collections has no exact form for this protocol (SS with
    /// omega > 1, SHE), so it cannot be an objective.
    #[error(
        "the {family:?} family has no exact ASR after {collections} linked reports (only after one); tune {}, or measure it with ldp-attack's linked module",
        adaptive_labels_beside(*family)
    )]
    NoRepeatedForm {
        /// The family.
        family: Family,
        /// The number of collections asked for.
        collections: u32,
    },
    /// The protocol has no free parameter to tune.
    #[error(
        "{0} has no parameter to tune; adaptive protocols are {list}",
        list = listed(Protocol::ADAPTIVE.map(Protocol::label), "and")
    )]
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

/// `items` as a sentence's list: `a`, `a or b`, `a, b and c` (`last` joins the last two).
pub(crate) fn listed<'a>(items: impl IntoIterator<Item = &'a str>, last: &str) -> String {
    let items: Vec<&str> = items.into_iter().collect();
    match items.as_slice() {
        [] => "none".to_owned(),
        [one] => (*one).to_owned(),
        [rest @ .., end] => format!("{} {last} {end}", rest.join(", ")),
    }
}

/// The adaptive protocols of the families other than `family`, by label (`AUE, ALH or
/// ATHE` beside subset selection): what to tune instead of `family`'s.
fn adaptive_labels_beside(family: Family) -> String {
    let others = Protocol::ADAPTIVE
        .into_iter()
        .filter(|p| p.family() != family)
        .map(Protocol::label);
    listed(others, "or")
}

/// Why a request needs every point of a parameter space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FullScan {
    /// A Pareto frontier.
    Frontier,
    /// A strategy that compares every point (utopia, elbow, hypervolume, normalized
    /// objectives).
    Strategy,
    /// The ASR after several linked reports, which has no bound to prune a search with.
    RepeatedAsr,
}

impl std::fmt::Display for FullScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FullScan::Frontier => "a frontier needs every point: use a smaller k or eps",
            FullScan::Strategy => {
                "this strategy needs every point: use the weighted or tchebycheff strategy (searched without a full scan), give the parameter explicitly, or use a smaller k or eps"
            }
            FullScan::RepeatedAsr => {
                "the ASR after several reports has no bound to prune a search with, so every point is evaluated: give the parameter explicitly, or use a smaller k or eps"
            }
        })
    }
}

impl OptimizeError {
    /// The same error, a too-large space blamed on `reason`.
    pub(crate) fn for_scan(self, reason: FullScan) -> Self {
        match self {
            OptimizeError::SpaceTooLarge {
                protocol,
                points,
                limit,
                ..
            } => OptimizeError::SpaceTooLarge {
                protocol,
                points,
                limit,
                reason,
            },
            other => other,
        }
    }
}
