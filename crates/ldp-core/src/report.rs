//! Typed, canonical, serde-serializable reports, one per family.
//!
//! Set-valued reports are sorted lists of distinct indices, so that the order of a report
//! never leaks anything (the paper's reference code writes SS's true value first).

use crate::error::ReportError;

/// How large a mechanism's reports can be: what readers of JSON lines and Arrow columns
/// need to bound a line or a row before reading it, and to lay out a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReportLimits {
    /// Exclusive bound of every index or value a report holds (k for items, g for a hashed
    /// value).
    pub values: u32,
    /// The most entries of a report's list (SS: omega, UE and THE: k, SHE: k numbers); 1
    /// for reports of one value.
    pub entries: u32,
    /// Exclusive bound of a report's seed (LH: 2^32), 0 for reports without one.
    pub seeds: u64,
}

/// Generalized randomized response: the reported item. JSON: `{"y": 17}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct GrrReport {
    /// The reported item in `0..k`.
    pub y: u32,
}

/// Subset selection: exactly omega distinct items, sorted. JSON: `{"subset": [3, 17, 42]}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct SubsetReport {
    /// The reported subset, strictly increasing.
    pub subset: Vec<u32>,
}

/// Unary encoding and thresholding: the indices of the one-bits, sorted. JSON: `{"ones": [3, 17]}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct OnesReport {
    /// Indices of the bits set to one, strictly increasing (possibly empty).
    pub ones: Vec<u32>,
}

/// Local hashing: the hash seed and the perturbed hash value. JSON: `{"seed": 1234567, "y": 4}`.
///
/// The same shape, a public index and a value, serves the families whose report names one
/// of many public functions of the item: the Hadamard mechanism's `seed` is the column j
/// and `y` the sign bit.
///
/// A seed that is not a whole number in `0..2^32` is rejected when deserializing, with a
/// message saying so (Python peers draw 64-bit seeds: reduce them mod 2^32 first, as
/// python-xxhash does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct LhReport {
    /// Seed of the hash function, `h_seed(v) = XXH32(decimal(v), seed) mod g` (the
    /// Hadamard mechanism: the column).
    #[cfg_attr(feature = "serde", serde(deserialize_with = "seed32::deserialize"))]
    pub seed: u32,
    /// Perturbed hash value in `0..g` (the Hadamard mechanism: the sign bit).
    pub y: u32,
}

impl LhReport {
    /// Checks `seed < seeds` and `y < values`, naming the field out of range: the whole
    /// validation of a family whose reports are any (seed, value) pair in those ranges.
    pub(crate) fn check_within(&self, seeds: u64, values: u32) -> Result<(), ReportError> {
        let (field, value, bound) = if u64::from(self.seed) >= seeds {
            ("seed", u64::from(self.seed), seeds)
        } else if self.y >= values {
            ("y", u64::from(self.y), u64::from(values))
        } else {
            return Ok(());
        };
        Err(ReportError::OutOfRange {
            field,
            value,
            bound,
        })
    }
}

/// A 32-bit seed from any number, with a message that says what is wrong with it.
#[cfg(feature = "serde")]
mod seed32 {
    use std::fmt;

    use serde::de::{self, Deserializer, Visitor};

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        d.deserialize_u64(Seed)
    }

    struct Seed;

    impl Visitor<'_> for Seed {
        type Value = u32;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a whole number in 0..2^32")
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u32, E> {
            u32::try_from(v).map_err(|_| {
                E::custom(format_args!(
                    "{v} is not a valid seed: seeds are 32-bit (reduce 64-bit seeds mod 2^32)"
                ))
            })
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u32, E> {
            match u64::try_from(v) {
                Ok(v) => self.visit_u64(v),
                Err(_) => Err(E::custom(format_args!(
                    "{v} is not a valid seed: seeds are whole numbers in 0..2^32"
                ))),
            }
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u32, E> {
            if v.fract() == 0.0 && (0.0..4294967296.0).contains(&v) {
                Ok(v as u32)
            } else {
                Err(E::custom(format_args!(
                    "{v} is not a valid seed: seeds are whole numbers in 0..2^32"
                )))
            }
        }
    }
}

/// Summation with histogram encoding: the noisy one-hot vector. JSON: `{"y": [0.12, -1.3, ...]}`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct SheReport {
    /// Exactly k finite numbers, each at most [`REPORT_BOUND`] in magnitude.
    pub y: Vec<f64>,
}

/// What a collector records beside a report: who sent it, in which survey, on which day.
/// A ledger of budgets spent over surveys needs all three (`ldp ledger --reports`); the
/// report itself says nothing of them, and estimates ignore them.
///
/// JSON lines carry them before the report's own fields
/// (`{"user":"u17","survey":"daily","day":3,"y":4}`), Parquet files as the columns
/// `user`, `survey` and `day` beside `report`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ReportTags {
    /// The sender's id.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub user: Option<String>,
    /// The survey's id.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub survey: Option<String>,
    /// The day of the report (any day numbering the surveys share).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub day: Option<u32>,
}

impl ReportTags {
    /// True when no tag is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.user.is_none() && self.survey.is_none() && self.day.is_none()
    }
}

/// The largest magnitude of a coordinate of a valid [`SheReport`], and so of a server's
/// clipping bound ([`crate::ClipBound`]).
///
/// Honest noise never comes near it (see
/// [`MIN_EPS`](crate::families::summation::MIN_EPS)); a report beyond it can only be
/// forged, and rejecting it keeps every sum of up to 2^64 reports, and every estimate
/// made from them, finite.
pub const REPORT_BOUND: f64 = 1e150;

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
