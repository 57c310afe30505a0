//! Parameter spaces of the adaptive protocols and the two search modes.

use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol, families::local_hash};
use serde::{Deserialize, Serialize};

use crate::error::OptimizeError;

/// Where a family parameter may range. Validated at construction (and when deserialized):
/// a space holds at least one value.
///
/// ```
/// use ldp_optimize::ParameterSpace;
/// let omega = ParameterSpace::integers(1, 99)?;
/// assert_eq!(omega.len(), 99);
/// let p = ParameterSpace::interval(0.5, 0.9, 5)?;
/// assert_eq!(p.grid(), vec![0.5, 0.6, 0.7, 0.8, 0.9]);
/// assert!(ParameterSpace::integers(5, 4).is_err());
/// assert!(ParameterSpace::interval(0.5, f64::NAN, 5).is_err());
/// # Ok::<(), ldp_optimize::OptimizeError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SpaceFields", into = "SpaceFields")]
pub struct ParameterSpace(SpaceFields);

/// The serialized form of [`ParameterSpace`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum SpaceFields {
    /// Every integer in `[lo, hi]` (omega, g).
    Integers { lo: u32, hi: u32 },
    /// A closed interval of reals scanned by `points` evenly spaced values (p, theta).
    Interval { lo: f64, hi: f64, points: usize },
}

impl TryFrom<SpaceFields> for ParameterSpace {
    type Error = OptimizeError;
    fn try_from(f: SpaceFields) -> Result<Self, OptimizeError> {
        match f {
            SpaceFields::Integers { lo, hi } => Self::integers(lo, hi),
            SpaceFields::Interval { lo, hi, points } => Self::interval(lo, hi, points),
        }
    }
}

impl From<ParameterSpace> for SpaceFields {
    fn from(s: ParameterSpace) -> Self {
        s.0
    }
}

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

/// The most grid points a full scan evaluates (the strategies that need the whole
/// frontier). The paper's ALH space, `[2, max(k, round(e^eps) + 1)]`, passes it above eps
/// of about 16; the scalarizations search it without a full scan.
pub const MAX_GRID_POINTS: u64 = 10_000_000;

impl ParameterSpace {
    /// Every integer in `[lo, hi]`.
    pub fn integers(lo: u32, hi: u32) -> Result<Self, OptimizeError> {
        if lo > hi {
            return Err(OptimizeError::EmptyRange {
                lo: f64::from(lo),
                hi: f64::from(hi),
            });
        }
        Ok(Self(SpaceFields::Integers { lo, hi }))
    }

    /// `points` evenly spaced values from `lo` to `hi` (both included).
    pub fn interval(lo: f64, hi: f64, points: usize) -> Result<Self, OptimizeError> {
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) || points == 0 {
            return Err(OptimizeError::EmptyRange { lo, hi });
        }
        Ok(Self(SpaceFields::Interval { lo, hi, points }))
    }

    /// Number of grid points.
    pub fn len(&self) -> u64 {
        match self.0 {
            SpaceFields::Integers { lo, hi } => u64::from(hi) - u64::from(lo) + 1,
            SpaceFields::Interval { points, .. } => points as u64,
        }
    }

    /// Never true: a space holds at least one value.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// `Some((lo, hi))` for an integer space.
    pub fn integer_bounds(&self) -> Option<(u32, u32)> {
        match self.0 {
            SpaceFields::Integers { lo, hi } => Some((lo, hi)),
            SpaceFields::Interval { .. } => None,
        }
    }

    /// `Some((lo, hi))` for a continuous space.
    pub fn interval_bounds(&self) -> Option<(f64, f64)> {
        match self.0 {
            SpaceFields::Interval { lo, hi, .. } => Some((lo, hi)),
            SpaceFields::Integers { .. } => None,
        }
    }

    /// The first grid value.
    pub fn first(&self) -> f64 {
        match self.0 {
            SpaceFields::Integers { lo, .. } => f64::from(lo),
            SpaceFields::Interval { lo, .. } => lo,
        }
    }

    /// The last grid value.
    pub fn last(&self) -> f64 {
        match self.0 {
            SpaceFields::Integers { hi, .. } => f64::from(hi),
            SpaceFields::Interval { hi, .. } => hi,
        }
    }

    /// The grid values, in scan order.
    pub fn grid(&self) -> Vec<f64> {
        match self.0 {
            SpaceFields::Integers { lo, hi } => (lo..=hi).map(f64::from).collect(),
            SpaceFields::Interval { lo, hi, points } => {
                if points == 1 {
                    return vec![lo];
                }
                // As numpy.linspace: lo + i * step, with the last point exactly hi.
                let step = (hi - lo) / (points - 1) as f64;
                (0..points)
                    .map(|i| {
                        if i + 1 == points {
                            hi
                        } else {
                            lo + i as f64 * step
                        }
                    })
                    .collect()
            }
        }
    }
}

/// The paper's parameter space of an adaptive protocol at (k, eps): ASS omega in
/// `[1, k-1]`; AUE p on 100 points of `[0.5, 0.999999]`; ALH g in
/// `[2, max(k, round(e^eps) + 1)]`; ATHE theta on 100 points of `[0.5, 1]`.
pub fn paper_space(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
) -> Result<ParameterSpace, OptimizeError> {
    match protocol {
        Protocol::Ass => ParameterSpace::integers(1, k.get() - 1),
        Protocol::Aue => ParameterSpace::interval(0.5, 0.999_999, 100),
        Protocol::Alh => ParameterSpace::integers(2, k.get().max(local_hash::optimal_range(eps))),
        Protocol::Athe => ParameterSpace::interval(0.5, 1.0, 100),
        other => Err(OptimizeError::NotAdaptive(other)),
    }
}

/// The family parameters of `protocol` at value `v` (whole for integer parameters).
pub(crate) fn params_at(protocol: Protocol, v: f64) -> FamilyParams {
    FamilyParams::with_value(protocol.family(), v).expect("grid values fit their family")
}
