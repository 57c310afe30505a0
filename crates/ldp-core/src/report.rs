//! Typed, canonical, serde-serializable reports, one per family.
//!
//! Set-valued reports are sorted lists of distinct indices, so that the order of a report
//! never leaks anything (the paper's reference code writes SS's true value first).

use serde::{Deserialize, Serialize};

use crate::error::ReportError;

/// Generalized randomized response: the reported item. JSON: `{"y": 17}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrrReport {
    /// The reported item in `0..k`.
    pub y: u32,
}

/// Subset selection: exactly omega distinct items, sorted. JSON: `{"subset": [3, 17, 42]}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubsetReport {
    /// The reported subset, strictly increasing.
    pub subset: Vec<u32>,
}

/// Unary encoding and thresholding: the indices of the one-bits, sorted. JSON: `{"ones": [3, 17]}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnesReport {
    /// Indices of the bits set to one, strictly increasing (possibly empty).
    pub ones: Vec<u32>,
}

/// Local hashing: the hash seed and the perturbed hash value. JSON: `{"seed": 1234567, "y": 4}`.
///
/// A seed that does not fit in 32 bits is rejected when deserializing, with
/// [`ReportError::SeedOutOfRange`] in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "WideLhReport")]
pub struct LhReport {
    /// Seed of the hash function, `h_seed(v) = XXH32(decimal(v), seed) mod g`.
    pub seed: u32,
    /// Perturbed hash value in `0..g`.
    pub y: u32,
}

/// The wire form of [`LhReport`] before the seed width is checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WideLhReport {
    seed: i128,
    y: u32,
}

impl TryFrom<WideLhReport> for LhReport {
    type Error = ReportError;
    fn try_from(w: WideLhReport) -> Result<Self, ReportError> {
        let seed =
            u32::try_from(w.seed).map_err(|_| ReportError::SeedOutOfRange { value: w.seed })?;
        Ok(LhReport { seed, y: w.y })
    }
}

/// Summation with histogram encoding: the noisy one-hot vector. JSON: `{"y": [0.12, -1.3, ...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SheReport {
    /// Exactly k finite numbers.
    pub y: Vec<f64>,
}

/// Checks that `list` is strictly increasing with every entry in `0..bound`.
pub(crate) fn check_sorted_distinct(
    field: &'static str,
    list: &[u32],
    bound: u32,
) -> Result<(), ReportError> {
    // Fast path without early exits, which the compiler vectorizes: strictly increasing
    // and below the bound is everything this function checks.
    let increasing = list.windows(2).fold(true, |ok, w| ok & (w[0] < w[1]));
    if increasing && list.last().is_none_or(|&last| last < bound) {
        return Ok(());
    }
    // Slow path: name the first violation.
    let mut previous: Option<u32> = None;
    for (position, &value) in list.iter().enumerate() {
        if value >= bound {
            return Err(ReportError::OutOfRange {
                field,
                value: u64::from(value),
                bound: u64::from(bound),
            });
        }
        if let Some(prev) = previous {
            if value == prev {
                return Err(ReportError::Duplicate { field, value });
            }
            if value < prev {
                return Err(ReportError::Unsorted {
                    field,
                    position,
                    value,
                });
            }
        }
        previous = Some(value);
    }
    Ok(())
}
