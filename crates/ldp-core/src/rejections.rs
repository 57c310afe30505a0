//! Reports a server skipped instead of refusing the whole input, counted by reason.
//!
//! A server aggregates reports from clients it does not trust. Refusing the whole input
//! at the first invalid report ([`OnInvalid::Refuse`]) is right for a file a researcher
//! made; for a day of telemetry it lets one malicious client deny the estimate to
//! everyone. With [`OnInvalid::Skip`] every server path (the `ldp` tool, Python, the
//! DataFusion functions) leaves invalid reports out, aggregates the rest exactly as if
//! the invalid ones had never been sent, and returns these [`Rejections`] beside the
//! estimate.
//!
//! Skipping an invalid report costs the estimate nothing it could have trusted: a valid
//! report's influence is bounded by its family (one count per supported item, SHE's
//! coordinates clipped), and an invalid one would have been refused anyway.

use std::collections::BTreeMap;
use std::fmt;

use crate::error::{AggregateError, ReportError};

/// What a server does with a report that fails parsing or validation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum OnInvalid {
    /// Refuse the whole input, naming the first invalid report: nothing is aggregated.
    #[default]
    Refuse,
    /// Leave invalid reports out, count them by reason ([`Rejections`]), aggregate the rest.
    Skip,
}

impl OnInvalid {
    /// Both policies.
    pub const ALL: [OnInvalid; 2] = [OnInvalid::Refuse, OnInvalid::Skip];

    /// The name front ends use: `refuse`, `skip`.
    pub fn name(self) -> &'static str {
        // A new reason must join ALL: this match and ALL's length name it together.
        match self {
            OnInvalid::Refuse => "refuse",
            OnInvalid::Skip => "skip",
        }
    }
}

crate::named_knob!(OnInvalid, "invalid-report policy");

/// Why a report was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
#[non_exhaustive]
pub enum Reason {
    /// Not a report of this family's form at all (bad JSON, a wrong field, not UTF-8).
    Malformed,
    /// A line longer than any valid report can be.
    TooLong,
    /// A null in a column of reports.
    Null,
    /// A report of another family's shape ([`ReportError::Shape`]).
    Shape,
    /// A list of the wrong length ([`ReportError::Length`]).
    Length,
    /// An index or value outside its range ([`ReportError::OutOfRange`]).
    OutOfRange,
    /// Indices not sorted increasingly ([`ReportError::Unsorted`]).
    Unsorted,
    /// A repeated index ([`ReportError::Duplicate`]), or a bucket sampled twice
    /// ([`ReportError::SameBucket`]).
    Duplicate,
    /// A NaN or infinite number ([`ReportError::NonFinite`]).
    NonFinite,
    /// A number larger in magnitude than any report can be ([`ReportError::Magnitude`]).
    Magnitude,
}

impl Reason {
    /// Every reason, in order (the order of summaries and of the columns the DataFusion
    /// functions give per reason).
    pub const ALL: [Reason; 10] = [
        Reason::Malformed,
        Reason::TooLong,
        Reason::Null,
        Reason::Shape,
        Reason::Length,
        Reason::OutOfRange,
        Reason::Unsorted,
        Reason::Duplicate,
        Reason::NonFinite,
        Reason::Magnitude,
    ];

    /// The reason's name in summaries: `malformed`, `too-long`, `null`, `shape`,
    /// `length`, `out-of-range`, `unsorted`, `duplicate`, `non-finite`, `magnitude`.
    pub fn name(self) -> &'static str {
        // A new reason must join ALL: this match and ALL's length name it together.
        match self {
            Reason::Malformed => "malformed",
            Reason::TooLong => "too-long",
            Reason::Null => "null",
            Reason::Shape => "shape",
            Reason::Length => "length",
            Reason::OutOfRange => "out-of-range",
            Reason::Unsorted => "unsorted",
            Reason::Duplicate => "duplicate",
            Reason::NonFinite => "non-finite",
            Reason::Magnitude => "magnitude",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<&ReportError> for Reason {
    fn from(e: &ReportError) -> Self {
        match e {
            ReportError::Shape { .. } => Reason::Shape,
            ReportError::Length { .. } => Reason::Length,
            ReportError::OutOfRange { .. } => Reason::OutOfRange,
            ReportError::Unsorted { .. } => Reason::Unsorted,
            ReportError::Duplicate { .. } | ReportError::SameBucket { .. } => Reason::Duplicate,
            ReportError::NonFinite { .. } => Reason::NonFinite,
            ReportError::Magnitude { .. } => Reason::Magnitude,
        }
    }
}

/// The reports of one reason: how many, and the first of them.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Rejected {
    /// Reports skipped for this reason.
    pub count: u64,
    /// Where the first of them was (`line 17`, `day2.parquet row 5`).
    pub first_at: String,
    /// What was wrong with it.
    pub first_error: String,
    /// The first one's position in the input, for merging partial counts in any order.
    #[cfg_attr(feature = "serde", serde(skip))]
    position: u64,
}

/// Reports a server skipped, by reason (module docs).
///
/// ```
/// use ldp_core::{Aggregator, DomainSize, Epsilon, Grr, GrrReport, Mechanism, Rejections};
/// let grr = Grr::new(DomainSize::new(5)?, Epsilon::new(1.0)?)?;
/// let mut server = grr.aggregator();
/// let mut skipped = Rejections::default();
/// for (line, y) in [(1, 2), (2, 9), (3, 4)] {
///     skipped.add_or_record(&mut server, &GrrReport { y }, line, || format!("line {line}"))?;
/// }
/// assert_eq!((server.count(), skipped.total()), (2, 1));
/// assert_eq!(skipped.to_string(), "1 out-of-range (first at line 2: field `y`: value 9 is outside 0..5)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Rejections {
    by_reason: BTreeMap<Reason, Rejected>,
}

impl Rejections {
    /// Records one skipped report at `position` (its line or row number in the whole
    /// input, which orders the "first" of each reason), described by `at()`.
    pub fn record(
        &mut self,
        reason: Reason,
        position: u64,
        at: impl FnOnce() -> String,
        error: &dyn fmt::Display,
    ) {
        match self.by_reason.get_mut(&reason) {
            Some(r) => {
                r.count += 1;
                if position < r.position {
                    r.first_at = at();
                    r.first_error = error.to_string();
                    r.position = position;
                }
            }
            None => {
                self.by_reason.insert(
                    reason,
                    Rejected {
                        count: 1,
                        first_at: at(),
                        first_error: error.to_string(),
                        position,
                    },
                );
            }
        }
    }

    /// Adds `report` to `server`, or records why it was refused; only an invalid report
    /// is recorded (an overflowing count is still an error). Returns whether it was
    /// added.
    pub fn add_or_record<A: crate::Aggregator>(
        &mut self,
        server: &mut A,
        report: &<A::Mechanism as crate::Mechanism>::Report,
        position: u64,
        at: impl FnOnce() -> String,
    ) -> Result<bool, AggregateError> {
        match server.add(report) {
            Ok(()) => Ok(true),
            Err(AggregateError::Report(e)) => {
                self.record(Reason::from(&e), position, at, &e);
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Adds the counts of `other`; each reason's first report is the earlier of the two.
    pub fn merge(&mut self, other: &Rejections) {
        for (&reason, theirs) in &other.by_reason {
            match self.by_reason.get_mut(&reason) {
                Some(mine) => {
                    mine.count += theirs.count;
                    if theirs.position < mine.position {
                        mine.first_at.clone_from(&theirs.first_at);
                        mine.first_error.clone_from(&theirs.first_error);
                        mine.position = theirs.position;
                    }
                }
                None => {
                    self.by_reason.insert(reason, theirs.clone());
                }
            }
        }
    }

    /// Reports skipped in all.
    pub fn total(&self) -> u64 {
        self.by_reason.values().map(|r| r.count).sum()
    }

    /// Whether nothing was skipped.
    pub fn is_empty(&self) -> bool {
        self.by_reason.is_empty()
    }

    /// The count of one reason (0 if none).
    pub fn count(&self, reason: Reason) -> u64 {
        self.by_reason.get(&reason).map_or(0, |r| r.count)
    }

    /// Every reason with skipped reports, in [`Reason`]'s order.
    pub fn iter(&self) -> impl Iterator<Item = (Reason, &Rejected)> {
        self.by_reason.iter().map(|(&reason, r)| (reason, r))
    }
}

/// `2 out-of-range (first at line 17: ...); 1 malformed (first at ...)`, or `none`.
impl fmt::Display for Rejections {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        for (i, (reason, r)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(
                f,
                "{} {reason} (first at {}: {})",
                r.count, r.first_at, r.first_error
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_the_earliest_first_report_and_sums_counts() {
        let mut early = Rejections::default();
        early.record(Reason::Malformed, 3, || "line 3".into(), &"bad");
        let mut late = Rejections::default();
        late.record(Reason::Malformed, 9, || "line 9".into(), &"worse");
        late.record(Reason::Null, 10, || "row 10".into(), &"null");
        // Merged in either order: line 3 is the first malformed report.
        for (mut a, b) in [(early.clone(), &late), (late.clone(), &early)] {
            a.merge(b);
            assert_eq!(a.total(), 3);
            assert_eq!(a.count(Reason::Malformed), 2);
            let (_, first) = a.iter().next().unwrap();
            assert_eq!(
                (first.first_at.as_str(), first.first_error.as_str()),
                ("line 3", "bad")
            );
        }
    }

    #[test]
    fn every_report_error_has_its_reason() {
        let e = ReportError::Duplicate {
            field: "ones",
            value: 3,
        };
        assert_eq!(Reason::from(&e), Reason::Duplicate);
        assert_eq!("skip".parse::<OnInvalid>().unwrap(), OnInvalid::Skip);
        assert!("ignore".parse::<OnInvalid>().is_err());
    }
}
