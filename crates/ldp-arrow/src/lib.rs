//! # ldp-arrow
//!
//! LDP reports as Arrow arrays and Parquet files, for deployments that keep reports in a
//! columnar store and aggregate them where they lie (the `ldp-datafusion` adapter builds
//! on this crate and adds no algorithm of its own).
//!
//! One column, `report`, holds the reports; its Arrow type depends on the report's shape
//! ([`ArrowShape`]), not on the family:
//!
//! | report | families | `report` column |
//! |---|---|---|
//! | a value ([`ldp_core::GrrReport`]) | GRR | `UInt32` |
//! | a seed and a value ([`ldp_core::LhReport`]) | LH | `Struct<seed: UInt32, y: UInt32>` |
//! | real numbers ([`ldp_core::SheReport`]) | SHE | `FixedSizeList<Float64, k>` |
//! | a set of indices ([`ldp_core::SubsetReport`], [`ldp_core::OnesReport`]) | SS, UE, THE | `List<UInt32>` (the sorted indices) or `FixedSizeBinary(ceil(k/8))` (a bitmap, bit i of byte i/8, lowest bit first) |
//!
//! A Parquet file of reports stores the mechanism's [`Spec`] as JSON in its key-value
//! metadata under [`SPEC_KEY`], and the set encoding under [`ENCODING_KEY`]; a reader
//! built for one mechanism refuses a file of another. Every report read is validated as
//! the mechanism validates reports from outside, and an error names the row.
//!
//! Reports of several attributes per user ([`ldp_core::multidim`]) are in [`multidim`]:
//! one row per user, a nullable column `report_j` per attribute in that attribute's type
//! above (SMP fills one column of a row, the other solutions every column), and the
//! collection's [`ldp_core::multidim::MultidimSpec`] under [`MULTIDIM_KEY`] in place of
//! [`SPEC_KEY`]; the reader of either kind refuses a file of the other. Each row is rebuilt
//! into a [`ldp_core::multidim::MultidimReport`] and validated as
//! [`ldp_core::multidim::Multidim::validate`] does:
//!
//! ```
//! use ldp_arrow::SetEncoding;
//! use ldp_arrow::multidim::{reports_from_columns, to_columns};
//! use ldp_core::multidim::{Multidim, MultidimReport, Solution};
//! use ldp_core::{DomainSize, Epsilon, OnesReport, UnaryEncoding};
//! let domains = [DomainSize::new(4)?, DomainSize::new(9)?];
//! let smp = Multidim::new(Solution::Smp, Epsilon::new(1.0)?, &domains, UnaryEncoding::optimized)?;
//! let reports = vec![
//!     MultidimReport::Sampled { attribute: 1, report: OnesReport { ones: vec![0, 8] } },
//!     MultidimReport::Sampled { attribute: 0, report: OnesReport { ones: vec![2] } },
//! ];
//! let columns = to_columns(&smp, &reports, SetEncoding::Bitmap)?;
//! assert_eq!((columns[0].null_count(), columns[1].null_count()), (1, 1));
//! let views: Vec<&dyn arrow_array::Array> = columns.iter().map(|c| c.as_ref()).collect();
//! assert_eq!(reports_from_columns(&smp, &views)?, reports);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ```
//! use ldp_arrow::{ArrowReports, SetEncoding};
//! use ldp_core::{Aggregator, DomainSize, Epsilon, Mechanism, OnesReport, UnaryEncoding};
//! let oue = UnaryEncoding::optimized(DomainSize::new(10)?, Epsilon::new(1.0)?)?;
//! let reports = vec![OnesReport { ones: vec![1, 4] }, OnesReport { ones: vec![] }];
//! let array = oue.to_array(&reports, SetEncoding::Bitmap);
//! assert_eq!(oue.reports_from_array(&array)?, reports);
//! let mut server = oue.aggregator();
//! oue.aggregate_array(&mut server, &array, 0)?;
//! assert_eq!(server.count(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod convert;
mod files;
pub mod multidim;
pub mod tags;

use arrow_schema::DataType;
use ldp_core::multidim::MultidimError;
use ldp_core::{AggregateError, Spec};

pub use convert::{ArrowReports, ArrowShape, NullableVisitor};
pub use files::{
    ParquetReports, Part, ReportWriter, column_index, parquet_files, read_spec, report_field,
    report_schema, writer_properties,
};

/// The Parquet key-value metadata key holding the mechanism's spec (JSON).
pub const SPEC_KEY: &str = "ldp.spec";

/// The Parquet key-value metadata key holding the [`ldp_core::multidim::MultidimSpec`]
/// (JSON) of a file of reports of several attributes ([`multidim`]), in place of
/// [`SPEC_KEY`].
pub const MULTIDIM_KEY: &str = "ldp.multidim";

/// The Parquet key-value metadata key holding the set encoding (`list` or `bitmap`).
pub const ENCODING_KEY: &str = "ldp.encoding";

/// The name of the column of reports.
pub const REPORT_COLUMN: &str = "report";

/// How a set-valued report (SS, UE, THE) is laid out in Arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SetEncoding {
    /// `List<UInt32>`: the sorted indices.
    List,
    /// `FixedSizeBinary(ceil(k/8))`: one bit per item.
    Bitmap,
}

impl SetEncoding {
    /// Its name in the file metadata.
    pub fn name(self) -> &'static str {
        match self {
            SetEncoding::List => "list",
            SetEncoding::Bitmap => "bitmap",
        }
    }

    /// The encoding named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "list" => Some(SetEncoding::List),
            "bitmap" => Some(SetEncoding::Bitmap),
            _ => None,
        }
    }

    /// The encoding that makes the smaller Parquet file for `spec`'s reports: a bitmap
    /// (k bits, incompressible) when a report holds more than k/32 indices on average,
    /// the list otherwise (each index costs about 4 bytes before and a little over 1
    /// byte after compression; measured in this crate's tests at k = 100, 1000, 10000).
    pub fn smaller_for(spec: &Spec) -> SetEncoding {
        let k = spec.k().as_f64();
        // A report supports its item w.p. p* and each other w.p. q*: p* + (k - 1) q* items
        // on average (exactly omega for SS).
        let Some((p, q)) = spec.pure_probabilities() else {
            return SetEncoding::List;
        };
        let per_report = p + (k - 1.0) * q;
        if per_report > k / 32.0 {
            SetEncoding::Bitmap
        } else {
            SetEncoding::List
        }
    }
}

/// Reports that could not be converted, read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArrowLdpError {
    /// A report of the column is invalid for the mechanism.
    #[error("row {row}: {error}")]
    Row {
        /// Row index (from the start of the file for file readers).
        row: u64,
        /// What is wrong with it.
        error: AggregateError,
    },
    /// A report is null.
    #[error("row {row}: the report is null")]
    Null {
        /// Row index.
        row: u64,
    },
    /// The column does not have the family's type.
    #[error("column `report` has type {found}, but reports of this mechanism are {expected}")]
    Type {
        /// The family's type(s).
        expected: String,
        /// The column's type.
        found: DataType,
    },
    /// An integer column of another type than `UInt32` holds a value that does not fit
    /// in one (the others are cast).
    #[error(
        "row {row}: {field} = {value} does not fit in UInt32 (the column is {found}: its values from 0 to 4294967295 are taken as they are, others refused)"
    )]
    OutOfRange {
        /// Row index.
        row: u64,
        /// The field (`y`, `seed`).
        field: String,
        /// The value.
        value: String,
        /// The column's type.
        found: DataType,
    },
    /// The file holds reports of another mechanism.
    #[error("the file holds reports of {found}, not of {expected}")]
    SpecMismatch {
        /// The mechanism asked for.
        expected: String,
        /// The file's.
        found: String,
    },
    /// A user's report of several attributes is invalid (its shape, or an attribute's
    /// report).
    #[error("row {row}: {error}")]
    MultidimRow {
        /// Row index (from the start of the file for file readers).
        row: u64,
        /// What is wrong with it.
        error: MultidimError,
    },
    /// A row of SMP, whose user reports one attribute, has no report or several.
    #[error(
        "row {row}: an SMP report holds the report of exactly one attribute, but {found} of its {d} columns hold one"
    )]
    Sampled {
        /// Row index.
        row: u64,
        /// The columns that hold a report.
        found: usize,
        /// The number of attributes.
        d: usize,
    },
    /// A row of SPL or an RS+ solution, whose user reports every attribute, lacks one.
    #[error(
        "row {row}: attribute {attribute}: the report is null, but {solution} reports every attribute"
    )]
    MissingAttribute {
        /// Row index.
        row: u64,
        /// The attribute without a report.
        attribute: u32,
        /// The solution's label.
        solution: &'static str,
    },
    /// A file of one attribute's reports where reports of several were expected.
    #[error("the file holds reports of one attribute ({found}), not of several attributes")]
    OneAttribute {
        /// The file's spec (JSON).
        found: String,
    },
    /// A file of reports of several attributes where one attribute's were expected.
    #[error("the file holds reports of several attributes ({found}), not of one attribute")]
    SeveralAttributes {
        /// The file's multidimensional spec (JSON).
        found: String,
    },
    /// The file's multidimensional spec metadata is not a valid one.
    #[error("the file's `{MULTIDIM_KEY}` metadata is not a valid multidimensional spec: {0}")]
    BadMultidimSpec(String),
    /// A column of reports the file lacks (`report_j` of attribute j).
    #[error("the file has no `{0}` column")]
    NoColumn(String),
    /// A column name the file holds more than once: which one holds the reports is
    /// ambiguous, so neither is read (as pyarrow refuses it).
    #[error("the file has {count} columns named `{column}`: which holds the reports is ambiguous")]
    DuplicateColumn {
        /// The name.
        column: String,
        /// How many columns bear it.
        count: usize,
    },
    /// A column of reports beyond the attributes expected.
    #[error(
        "the file has a column `{column}`: it holds reports of more than the {d} attributes expected"
    )]
    ExtraColumn {
        /// The column.
        column: String,
        /// The number of attributes expected.
        d: usize,
    },
    /// A tag column ([`tags`]) of another type than its own.
    #[error("column `{column}` has type {found}, but its tag is {expected}")]
    TagType {
        /// The column.
        column: String,
        /// Its tag's type.
        expected: DataType,
        /// The file's.
        found: DataType,
    },
    /// Columns of reports of unequal lengths.
    #[error("the columns of reports have unequal lengths ({0:?})")]
    Lengths(Vec<usize>),
    /// A multidimensional client could not be built, or a report not made.
    #[error(transparent)]
    Multidim(#[from] MultidimError),
    /// The file does not say which mechanism made its reports.
    #[error(
        "the file has no `{SPEC_KEY}` metadata: it does not say which mechanism made its reports"
    )]
    NoSpec,
    /// The file's spec metadata is not a valid spec.
    #[error("the file's `{SPEC_KEY}` metadata is not a valid spec: {0}")]
    BadSpec(String),
    /// The file has no `report` column.
    #[error("the file has no `{REPORT_COLUMN}` column")]
    NoReportColumn,
    /// A directory holds no Parquet file.
    #[error("{0}: no .parquet files")]
    NoFiles(String),
    /// A path names something other than a regular file or directory (a FIFO, a device).
    #[error("{0}: not a regular file")]
    NotAFile(String),
    /// Something went wrong in one file of several.
    #[error("{path}: {error}")]
    InFile {
        /// The file.
        path: String,
        /// What went wrong.
        error: Box<ArrowLdpError>,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        error: std::io::Error,
    },
    /// Parquet could not read or write.
    #[error(transparent)]
    Parquet(#[from] parquet::errors::ParquetError),
    /// Arrow could not build a batch.
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
    /// The spec cannot run.
    #[error(transparent)]
    Param(#[from] ldp_core::ParamError),
}

impl ArrowLdpError {
    /// The error with its row counted `by` rows further: for an array read at row `by`
    /// of a file or stream (an error without a row is unchanged).
    #[must_use]
    pub fn offset_rows(self, by: u64) -> Self {
        match self {
            Self::Row { row, error } => Self::Row {
                row: row + by,
                error,
            },
            Self::Null { row } => Self::Null { row: row + by },
            Self::OutOfRange {
                row,
                field,
                value,
                found,
            } => Self::OutOfRange {
                row: row + by,
                field,
                value,
                found,
            },
            e => e,
        }
    }
}
