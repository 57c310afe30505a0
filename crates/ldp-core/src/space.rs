//! Where a family parameter may range: the spaces adaptive protocols are tuned over.
//!
//! A family declares the paper's space of its adaptive protocol in the registry
//! ([`crate::families`]); `ldp-optimize` searches it.

use crate::error::ParamError;

/// Where a family parameter may range. Validated at construction (and when deserialized):
/// a space holds at least one value.
///
/// ```
/// use ldp_core::ParameterSpace;
/// let omega = ParameterSpace::integers(1, 99)?;
/// assert_eq!(omega.len(), 99);
/// let p = ParameterSpace::interval(0.5, 0.9, 5)?;
/// assert_eq!(p.grid(), vec![0.5, 0.6, 0.7, 0.8, 0.9]);
/// assert!(ParameterSpace::integers(5, 4).is_err());
/// assert!(ParameterSpace::interval(0.5, f64::NAN, 5).is_err());
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "SpaceFields", into = "SpaceFields")
)]
pub struct ParameterSpace(SpaceFields);

/// The serialized form of [`ParameterSpace`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case", deny_unknown_fields)
)]
enum SpaceFields {
    /// Every integer in `[lo, hi]` (omega, g).
    Integers { lo: u32, hi: u32 },
    /// A closed interval of reals scanned by `points` evenly spaced values (p, theta).
    Interval { lo: f64, hi: f64, points: usize },
}

impl TryFrom<SpaceFields> for ParameterSpace {
    type Error = ParamError;
    fn try_from(f: SpaceFields) -> Result<Self, ParamError> {
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

impl ParameterSpace {
    /// Every integer in `[lo, hi]`.
    pub fn integers(lo: u32, hi: u32) -> Result<Self, ParamError> {
        if lo > hi {
            return Err(ParamError::EmptyRange {
                lo: f64::from(lo),
                hi: f64::from(hi),
            });
        }
        Ok(Self(SpaceFields::Integers { lo, hi }))
    }

    /// `points` evenly spaced values from `lo` to `hi` (both included).
    pub fn interval(lo: f64, hi: f64, points: usize) -> Result<Self, ParamError> {
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) || points == 0 {
            return Err(ParamError::EmptyRange { lo, hi });
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
