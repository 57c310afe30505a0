//! Parameter spaces of the adaptive protocols and the two search modes.

use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol};
use serde::{Deserialize, Serialize};

use crate::error::OptimizeError;

/// Where a family parameter may range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ParameterSpace {
    /// Every integer in `[lo, hi]` (omega, g).
    Integers {
        /// Smallest value.
        lo: u32,
        /// Largest value.
        hi: u32,
    },
    /// A closed interval of reals scanned by `points` evenly spaced values (p, theta).
    Interval {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
        /// Grid size of the scan.
        points: usize,
    },
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

/// The most grid points a search evaluates. The paper's ALH space,
/// `[2, max(k, round(e^eps) + 1)]`, passes it above eps of about 16.
pub const MAX_GRID_POINTS: u64 = 10_000_000;

impl ParameterSpace {
    /// Number of grid points.
    pub fn len(&self) -> u64 {
        match *self {
            ParameterSpace::Integers { lo, hi } => {
                (u64::from(hi) + 1).saturating_sub(u64::from(lo))
            }
            ParameterSpace::Interval { points, .. } => points as u64,
        }
    }

    /// Whether the space holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that the space holds at least one value and at most [`MAX_GRID_POINTS`].
    pub fn validate(&self) -> Result<(), OptimizeError> {
        if self.len() > MAX_GRID_POINTS {
            return Err(OptimizeError::SpaceTooLarge {
                points: self.len(),
                limit: MAX_GRID_POINTS,
            });
        }
        match *self {
            ParameterSpace::Integers { lo, hi } if lo > hi => Err(OptimizeError::EmptyRange {
                lo: f64::from(lo),
                hi: f64::from(hi),
            }),
            ParameterSpace::Interval { lo, hi, points }
                if !(lo.is_finite() && hi.is_finite() && lo <= hi) || points == 0 =>
            {
                Err(OptimizeError::EmptyRange { lo, hi })
            }
            _ => Ok(()),
        }
    }

    /// The grid values, in scan order.
    pub fn grid(&self) -> Vec<f64> {
        match *self {
            ParameterSpace::Integers { lo, hi } => (lo..=hi).map(f64::from).collect(),
            ParameterSpace::Interval { lo, hi, points } => {
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
    Ok(match protocol {
        Protocol::Ass => ParameterSpace::Integers {
            lo: 1,
            hi: k.get() - 1,
        },
        Protocol::Aue => ParameterSpace::Interval {
            lo: 0.5,
            hi: 0.999_999,
            points: 100,
        },
        Protocol::Alh => {
            let olh = (eps.exp().round() + 1.0).min(f64::from(u32::MAX)) as u32;
            ParameterSpace::Integers {
                lo: 2,
                hi: k.get().max(olh),
            }
        }
        Protocol::Athe => ParameterSpace::Interval {
            lo: 0.5,
            hi: 1.0,
            points: 100,
        },
        other => return Err(OptimizeError::NotAdaptive(other)),
    })
}

/// The family parameters of `protocol` at value `v` (rounded for integer parameters).
pub(crate) fn params_at(protocol: Protocol, v: f64) -> FamilyParams {
    match protocol {
        Protocol::Ass => FamilyParams::SubsetSelection { omega: v as u32 },
        Protocol::Aue => FamilyParams::UnaryEncoding { p: v },
        Protocol::Alh => FamilyParams::LocalHashing { g: v as u32 },
        _ => FamilyParams::ThresholdHistogram { theta: v },
    }
}
