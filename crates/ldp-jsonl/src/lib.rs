//! # ldp-jsonl
//!
//! The JSON-lines report format of the `ldp` tool and its Python package: one JSON object
//! per line, with lists sorted and distinct.
//!
//! | family | report |
//! |---|---|
//! | GRR | `{"y":17}` |
//! | SS | `{"subset":[3,17,42]}` |
//! | UE, THE | `{"ones":[3,17]}` |
//! | LH | `{"seed":1234567,"y":4}` |
//! | SHE | `{"y":[0.12,-1.3,...]}` |
//!
//! [`JsonReport::write_json`] writes exactly what `serde_json::to_writer` writes for the
//! report types of `ldp-core` (integers by itoa, floats by zmij's shortest round-trip
//! form, as serde_json does), about five times faster. [`JsonReport::parse_json`] reads the canonical shape
//! with a specialized scanner and hands anything else (other key orders, escapes, odd
//! spacing, and every error) to serde_json, so it accepts exactly what serde_json accepts
//! and returns the same value; its errors name the field (`` field `y[3]`: ... ``) and never
//! quote the line. Reports are objects: a JSON array is refused even though serde would
//! read it as a struct.
//!
//! ```
//! use ldp_core::OnesReport;
//! use ldp_jsonl::JsonReport;
//! let report = OnesReport { ones: vec![3, 17] };
//! let mut line = Vec::new();
//! report.write_json(&mut line);
//! assert_eq!(line, br#"{"ones":[3,17]}"#);
//! assert_eq!(OnesReport::parse_json(b"{ \"ones\" : [3, 17] }")?, report);
//! let err = OnesReport::parse_json(br#"{"ones":[3,-1]}"#).unwrap_err();
//! assert_eq!(err.to_string(), "field `ones[1]`: invalid value: integer `-1`, expected u32");
//! # Ok::<(), ldp_jsonl::JsonError>(())
//! ```
//!
//! Validation against a mechanism (range, order, length) is the mechanism's job
//! (`Mechanism::validate`); this crate only reads and writes.
//!
//! With the feature `lines`, the module `lines` reads a stream of lines by the rules every front
//! end shares: the cap on a line's length ([`max_line_len`] for reports), a byte-order mark
//! at the start, blank lines at the end only, and a skip mode that counts overlong lines in
//! a `Rejections`.

#[cfg(feature = "lines")]
pub mod lines;
mod parse;
mod tags;
mod write;

use ldp_core::report::ReportLimits;
use ldp_core::{
    GrrReport, LhReport, Mechanism, OnesReport, ReportTags, SheReport, Spec, SubsetReport,
    dispatch_family,
};

/// A report that could not be read: what is wrong, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JsonError(pub(crate) String);

pub use tags::{TAG_KEYS, read_tags, write_tagged};
pub use write::Digits;

/// A report type of `ldp-core` in the JSON-lines format.
pub trait JsonReport: Sized {
    /// Appends the report's canonical JSON object (without a newline) to `out`.
    fn write_json(&self, out: &mut Vec<u8>) {
        self.write_json_with(&Digits::default(), out);
    }

    /// [`JsonReport::write_json`] with a table of the domain's indices
    /// ([`Digits::for_domain`]), for writing many reports; the bytes are the same.
    fn write_json_with(&self, digits: &Digits, out: &mut Vec<u8>);

    /// Reads one report from a line (without its newline).
    fn parse_json(line: &[u8]) -> Result<Self, JsonError>;

    /// Reads one report and its tags ([`ReportTags`]: `user`, `survey`, `day`, written
    /// by [`write_tagged`]) from a line; a line without tags reads as
    /// [`JsonReport::parse_json`] reads it, with empty tags. Tags may stand anywhere in
    /// the object; any other unknown field is refused as before.
    ///
    /// ```
    /// use ldp_core::{LhReport, ReportTags};
    /// use ldp_jsonl::JsonReport;
    /// let (tags, report) = LhReport::parse_tagged(br#"{"seed":7,"y":1,"day":12}"#)?;
    /// assert_eq!((tags.day, tags.user), (Some(12), None));
    /// assert_eq!(report, LhReport { seed: 7, y: 1 });
    /// let err = LhReport::parse_tagged(br#"{"day":"monday","seed":7,"y":1}"#).unwrap_err();
    /// assert!(err.to_string().starts_with("field `day`: expected an integer"));
    /// # Ok::<(), ldp_jsonl::JsonError>(())
    /// ```
    fn parse_tagged(line: &[u8]) -> Result<(ReportTags, Self), JsonError> {
        let (tags, body) = tags::split_leading(line)?;
        match Self::parse_json(&body) {
            Ok(report) => Ok((tags, report)),
            // Tags after the report's fields too, or escaped: read the whole object. A line
            // that names no tag keeps the report's own error.
            Err(err) => {
                if tags.is_empty() && !tags::names_a_tag(line) {
                    return Err(err);
                }
                let (tags, body) = tags::split_anywhere(line)?;
                if tags.is_empty() {
                    return Err(err);
                }
                Self::parse_json(&body).map(|report| (tags, report))
            }
        }
    }

    /// The longest canonical line of a report within `limits` (without its newline).
    fn max_canonical_len(limits: &ReportLimits) -> usize;
}

impl JsonReport for GrrReport {
    fn write_json_with(&self, _: &Digits, out: &mut Vec<u8>) {
        write::grr(self, out);
    }
    fn parse_json(line: &[u8]) -> Result<Self, JsonError> {
        parse::with_fallback(line, parse::grr)
    }

    fn max_canonical_len(limits: &ReportLimits) -> usize {
        "{\"y\":}".len() + largest(limits.values)
    }
}

impl JsonReport for SubsetReport {
    fn write_json_with(&self, digits: &Digits, out: &mut Vec<u8>) {
        write::index_list(b"{\"subset\":[", &self.subset, digits, out);
    }
    fn parse_json(line: &[u8]) -> Result<Self, JsonError> {
        parse::with_fallback(line, |c| {
            parse::index_list(c, b"subset").map(|subset| SubsetReport { subset })
        })
    }

    fn max_canonical_len(limits: &ReportLimits) -> usize {
        "{\"subset\":[]}".len() + list(limits)
    }
}

impl JsonReport for OnesReport {
    fn write_json_with(&self, digits: &Digits, out: &mut Vec<u8>) {
        write::index_list(b"{\"ones\":[", &self.ones, digits, out);
    }
    fn parse_json(line: &[u8]) -> Result<Self, JsonError> {
        parse::with_fallback(line, |c| {
            parse::index_list(c, b"ones").map(|ones| OnesReport { ones })
        })
    }

    fn max_canonical_len(limits: &ReportLimits) -> usize {
        "{\"ones\":[]}".len() + list(limits)
    }
}

impl JsonReport for LhReport {
    fn write_json_with(&self, _: &Digits, out: &mut Vec<u8>) {
        write::lh(self, out);
    }
    fn parse_json(line: &[u8]) -> Result<Self, JsonError> {
        parse::with_fallback(line, parse::lh)
    }

    fn max_canonical_len(limits: &ReportLimits) -> usize {
        "{\"seed\":,\"y\":}".len() + digits(limits.seeds.saturating_sub(1)) + largest(limits.values)
    }
}

impl JsonReport for SheReport {
    fn write_json_with(&self, _: &Digits, out: &mut Vec<u8>) {
        write::she(self, out);
    }
    fn parse_json(line: &[u8]) -> Result<Self, JsonError> {
        parse::with_fallback(line, parse::she)
    }

    fn max_canonical_len(limits: &ReportLimits) -> usize {
        // The longest shortest-round-trip output, "-1.2345678901234567e-308", and a comma.
        "{\"y\":[]}".len() + limits.entries as usize * 25
    }
}

/// The longest line a report of `spec`'s mechanism may take: four times its longest
/// canonical line plus 256 bytes, room for spaces after every comma and colon and any
/// number spelling serde_json accepts within reason, plus [`TAG_ROOM`] for its tags. A
/// longer line cannot be a sensible report; readers reject it without reading it whole.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let grr = Spec::classic(Protocol::Grr, DomainSize::new(100)?, Epsilon::new(1.0)?)?;
/// assert_eq!(ldp_jsonl::max_line_len(&grr), 4 * r#"{"y":99}"#.len() + 256 + ldp_jsonl::TAG_ROOM);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn max_line_len(spec: &Spec) -> usize {
    let limits = spec.report_limits();
    let canonical = dispatch_family!(spec.params(), F, _param => {
        <<F as Mechanism>::Report as JsonReport>::max_canonical_len(&limits)
    });
    4 * canonical + 256 + TAG_ROOM
}

/// The room a line leaves for its tags ([`write_tagged`]): a user and a survey id of up
/// to [`MAX_TAG_BYTES`] bytes each, every byte escaped at its longest (`\u00XX`), and a
/// day.
pub const TAG_ROOM: usize = 2 * (6 * MAX_TAG_BYTES + 16) + 24;

/// The longest user or survey id a writer should tag reports with, in bytes (`ldp
/// perturb` refuses a longer one), so that every tagged line stays within
/// [`max_line_len`].
pub const MAX_TAG_BYTES: usize = 256;

/// Decimal digits of the largest value below `bound`.
fn largest(bound: u32) -> usize {
    digits(u64::from(bound.saturating_sub(1)))
}

/// A list of up to `limits.entries` indices below `limits.values`, each with its comma.
fn list(limits: &ReportLimits) -> usize {
    limits.entries as usize * (largest(limits.values) + 1)
}

/// Decimal digits of `v`.
fn digits(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |d| d as usize + 1)
}
