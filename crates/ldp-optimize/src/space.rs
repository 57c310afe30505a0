//! Parameter spaces of the adaptive protocols and the two search modes.

use ldp_core::{DomainSize, Epsilon, FamilyParams, ParameterSpace, Protocol};
use serde::{Deserialize, Serialize};

use crate::error::OptimizeError;

/// How to search a parameter space.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Search {
    /// The paper's grids: every integer, or 100 evenly spaced reals.
    #[default]
    Paper,
    /// The paper's grid, then golden-section search on continuous parameters between the
    /// grid neighbours of the best point. Never returns a worse objective than `Paper`.
    Refined,
}

impl Search {
    /// Both modes.
    pub const ALL: [Search; 2] = [Search::Paper, Search::Refined];

    /// The name front ends use: `paper`, `refined`.
    pub fn name(self) -> &'static str {
        match self {
            Search::Paper => "paper",
            Search::Refined => "refined",
        }
    }
}

ldp_core::named_knob!(Search, "search mode");

/// The most grid points a full scan evaluates (the strategies that need the whole
/// frontier). The paper's ALH space, `[2, max(k, round(e^eps) + 1)]`, passes it above eps
/// of about 16; the scalarizations search it without a full scan.
pub const MAX_GRID_POINTS: u64 = 10_000_000;

/// The paper's parameter space of an adaptive protocol at (k, eps), as its family's
/// registry entry declares it ([`Protocol::paper_space`]): ASS omega in `[1, k-1]`; AUE p
/// on 100 points of `[0.5, 0.999999]`; ALH g in `[2, max(k, round(e^eps) + 1)]`; ATHE
/// theta on 100 points of `[0.5, 1]`.
pub fn paper_space(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
) -> Result<ParameterSpace, OptimizeError> {
    protocol
        .paper_space(k, eps)
        .ok_or(OptimizeError::NotAdaptive(protocol))
}

/// The family parameters of `protocol` at value `v` (whole for integer parameters).
pub(crate) fn params_at(protocol: Protocol, v: f64) -> FamilyParams {
    FamilyParams::with_value(protocol.family(), v).expect("grid values fit their family")
}
