//! Reports of several attributes per user ([`ldp_core::multidim`]) as Arrow columns and
//! Parquet files.
//!
//! A table of a [`Multidim`] collection over `d` attributes has one row per user and one
//! column per attribute, `report_0 .. report_{d-1}` ([`column_name`]): column `j` holds
//! attribute `j`'s reports in that attribute's own Arrow type (its [`ArrowReports`]
//! shape, in the file's [`SetEncoding`]), and is nullable. SPL and the RS+ solutions
//! fill every column of a row; SMP exactly one, the sampled attribute's (the others are
//! null). The file's key-value metadata holds the collection's
//! [`MultidimSpec`] as JSON under [`MULTIDIM_KEY`] (in place of the one-attribute
//! [`crate::SPEC_KEY`]) and the set encoding under [`ENCODING_KEY`].
//!
//! Reading rebuilds each row's [`MultidimReport`] and validates it as
//! [`Multidim::validate`] does: an SMP row with no report or several, a null in a row of
//! SPL or RS+, and an attribute's invalid report are each an invalid report naming the
//! row (and the attribute, where one is concerned), refused or, in skip mode, counted by
//! reason and left out.
//!
//! ```
//! use ldp_arrow::multidim::{MultidimWriter, ParquetMultidimReports};
//! use ldp_core::multidim::{Multidim, Solution};
//! use ldp_core::simulation::{stream_rng, Role};
//! use ldp_core::{DomainSize, Epsilon, Grr};
//!
//! let domains = [DomainSize::new(4)?, DomainSize::new(3)?];
//! let smp = Multidim::new(Solution::Smp, Epsilon::new(1.0)?, &domains, Grr::new)?;
//! let mut rng = stream_rng(1, 0, Role::Genuine, 0);
//! let reports = (0..100u32)
//!     .map(|u| smp.perturb(&[u % 4, u % 3], &mut rng))
//!     .collect::<Result<Vec<_>, _>>()?;
//! let path = std::env::temp_dir().join(format!("ldp-arrow-md-doc-{}.parquet", std::process::id()));
//! let mut w = MultidimWriter::create(&path, smp.clone(), None)?;
//! w.write(&reports)?;
//! w.finish()?;
//! let mut from_file = smp.aggregator();
//! ParquetMultidimReports::open(&path, &smp.spec())?.aggregate(&mut from_file)?;
//! let mut direct = smp.aggregator();
//! for r in &reports {
//!     direct.add(r)?;
//! }
//! assert_eq!(from_file, direct);
//! assert_eq!(from_file.count(), 100);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, make_array};
use arrow_buffer::NullBuffer;
use arrow_schema::{Field, Schema, SchemaRef};
use ldp_core::multidim::{
    Multidim, MultidimAggregator, MultidimError, MultidimReport, MultidimSpec,
};
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{Mechanism, Reason, Rejections};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::files::{
    BATCH_BYTES, ROW_GROUP_BYTES, column_index, in_file, io, metadata_value, parquet_files,
    report_bytes, rows_of,
};
use crate::{ArrowLdpError, ArrowReports, ENCODING_KEY, MULTIDIM_KEY, Part, SPEC_KEY, SetEncoding};

/// The name of attribute `attribute`'s column: `report_0`, `report_1`, …
pub fn column_name(attribute: usize) -> String {
    format!("report_{attribute}")
}

/// The collection's spec as the file records it.
fn spec_json(spec: &MultidimSpec) -> Result<String, ArrowLdpError> {
    serde_json::to_string(spec).map_err(|e| ArrowLdpError::BadMultidimSpec(e.to_string()))
}

/// The set encoding of the smaller file for `m`'s reports: the one
/// [`SetEncoding::smaller_for`] the attribute of the largest domain, whose reports
/// weigh the most.
pub fn smaller_encoding<M: Mechanism>(m: &Multidim<M>) -> SetEncoding {
    m.attributes()
        .iter()
        .max_by_key(|a| a.domain_size().get())
        .map_or(SetEncoding::List, |a| SetEncoding::smaller_for(&a.spec()))
}

/// The schema of a table of `m`'s reports: the nullable columns `report_0 ..
/// report_{d-1}`, each of its attribute's report type, and the collection's spec and the
/// set encoding in the schema's metadata (under [`MULTIDIM_KEY`] and [`ENCODING_KEY`]).
pub fn multidim_schema<M: ArrowReports>(
    m: &Multidim<M>,
    encoding: SetEncoding,
) -> Result<Schema, ArrowLdpError> {
    let fields: Vec<Field> = m
        .attributes()
        .iter()
        .enumerate()
        .map(|(j, a)| Field::new(column_name(j), a.report_type(encoding), true))
        .collect();
    let metadata = [
        (MULTIDIM_KEY.to_owned(), spec_json(&m.spec())?),
        (ENCODING_KEY.to_owned(), encoding.name().to_owned()),
    ];
    Ok(Schema::new(fields).with_metadata(metadata.into()))
}

/// Parquet writer properties that record `m`'s spec and `encoding` in the file (Snappy
/// compression, row groups of about 64 MiB of reports).
pub fn multidim_writer_properties<M: Mechanism>(
    m: &Multidim<M>,
    encoding: SetEncoding,
) -> Result<WriterProperties, ArrowLdpError> {
    let spec = m.spec();
    Ok(WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(rows_of(row_bytes(&spec), ROW_GROUP_BYTES, 1 << 20)))
        .set_key_value_metadata(Some(vec![
            KeyValue::new(MULTIDIM_KEY.to_owned(), spec_json(&spec)?),
            KeyValue::new(ENCODING_KEY.to_owned(), encoding.name().to_owned()),
        ]))
        .build())
}

/// The bytes of one user's reports at their largest in memory.
fn row_bytes(spec: &MultidimSpec) -> usize {
    spec.specs().iter().map(report_bytes).sum()
}

/// A report of `attribute` to stand under the null rows of its column, where it is
/// never read (Arrow keeps a value beneath every null): a fake of the attribute, from a
/// fixed stream.
fn placeholder<M: Mechanism>(
    m: &Multidim<M>,
    attribute: usize,
) -> Result<M::Report, ArrowLdpError> {
    Ok(m.fake(attribute, &mut stream_rng(0, 0, Role::Genuine, 0))?)
}

/// `reports` as one column per attribute, validated first ([`Multidim::validate`]): an
/// invalid report is an error naming its row, counted from 0.
pub fn to_columns<M: ArrowReports>(
    m: &Multidim<M>,
    reports: &[MultidimReport<M::Report>],
    encoding: SetEncoding,
) -> Result<Vec<ArrayRef>, ArrowLdpError> {
    for (row, r) in reports.iter().enumerate() {
        m.validate(r).map_err(|error| ArrowLdpError::MultidimRow {
            row: row as u64,
            error,
        })?;
    }
    let mut columns = Vec::with_capacity(m.dimensions());
    for (j, a) in m.attributes().iter().enumerate() {
        let present: Vec<bool> = reports.iter().map(|r| r.of(j).is_some()).collect();
        let filler = match reports.iter().find_map(|r| r.of(j)) {
            Some(r) => r.clone(),
            None => placeholder(m, j)?,
        };
        let values: Vec<M::Report> = reports
            .iter()
            .map(|r| r.of(j).unwrap_or(&filler).clone())
            .collect();
        let array = a.to_array(&values, encoding);
        if present.iter().all(|&p| p) {
            columns.push(array);
            continue;
        }
        let data = array
            .to_data()
            .into_builder()
            .nulls(Some(NullBuffer::from(present)))
            .build()?;
        columns.push(make_array(data));
    }
    Ok(columns)
}

/// An invalid row: the reason it is counted under in skip mode, and the error naming it.
type Invalid = (Reason, ArrowLdpError);

/// Calls `visit(row, report)` for every row of `columns` (one per attribute, in order),
/// the row counted from `first_row`: the report rebuilt from the row, or why the row is
/// none of the solution's (an SMP row with no report or several, a null in a row of
/// another solution). The reports of the attributes are not validated here.
fn for_each_row<M: ArrowReports>(
    m: &Multidim<M>,
    columns: &[&dyn Array],
    first_row: u64,
    mut visit: impl FnMut(u64, Result<MultidimReport<M::Report>, Invalid>) -> Result<(), ArrowLdpError>,
) -> Result<(), ArrowLdpError> {
    let d = m.dimensions();
    if columns.len() != d {
        return Err(ArrowLdpError::Multidim(MultidimError::Arity {
            expected: d,
            found: columns.len(),
        }));
    }
    let n = columns.first().map_or(0, |c| c.len());
    if columns.iter().any(|c| c.len() != n) {
        return Err(ArrowLdpError::Lengths(
            columns.iter().map(|c| c.len()).collect(),
        ));
    }
    let mut cells: Vec<Vec<Option<M::Report>>> = Vec::with_capacity(d);
    for (a, column) in m.attributes().iter().zip(columns) {
        let mut cell = Vec::with_capacity(n);
        a.for_each_nullable(*column, first_row, &mut |_, r| {
            cell.push(r.cloned());
            Ok(())
        })?;
        cells.push(cell);
    }
    let sampled = m.solution().names_its_attribute();
    for i in 0..n {
        let row = first_row + i as u64;
        let mut present: Vec<(usize, M::Report)> = cells
            .iter_mut()
            .enumerate()
            .filter_map(|(j, cell)| cell[i].take().map(|r| (j, r)))
            .collect();
        let rebuilt = if sampled {
            match (present.pop(), present.is_empty()) {
                (Some((j, report)), true) => Ok(MultidimReport::Sampled {
                    attribute: j as u32,
                    report,
                }),
                (last, _) => Err((
                    Reason::Length,
                    ArrowLdpError::Sampled {
                        row,
                        found: present.len() + usize::from(last.is_some()),
                        d,
                    },
                )),
            }
        } else if present.len() == d {
            Ok(MultidimReport::Every(
                present.into_iter().map(|(_, r)| r).collect(),
            ))
        } else {
            let missing = present
                .iter()
                .enumerate()
                .find(|(j, (attribute, _))| j != attribute)
                .map_or(present.len(), |(j, _)| j);
            Err((
                Reason::Null,
                ArrowLdpError::MissingAttribute {
                    row,
                    attribute: missing as u32,
                    solution: m.solution().label(),
                },
            ))
        };
        visit(row, rebuilt)?;
    }
    Ok(())
}

/// How a report the server refused is counted: an invalid report (by reason) or a
/// failure of the server (which stops).
fn refused(row: u64, error: MultidimError) -> Result<Invalid, ArrowLdpError> {
    match &error {
        MultidimError::Report { source, .. } => Ok((
            Reason::from(source),
            ArrowLdpError::MultidimRow { row, error },
        )),
        _ => Err(ArrowLdpError::MultidimRow { row, error }),
    }
}

/// The rows of `columns` (one per attribute, in order) as reports, each validated
/// ([`Multidim::validate`]); the first invalid row is the error, counted from 0.
pub fn reports_from_columns<M: ArrowReports>(
    m: &Multidim<M>,
    columns: &[&dyn Array],
) -> Result<Vec<MultidimReport<M::Report>>, ArrowLdpError> {
    let mut out = Vec::with_capacity(columns.first().map_or(0, |c| c.len()));
    for_each_row(m, columns, 0, |row, rebuilt| {
        let report = rebuilt.map_err(|(_, e)| e)?;
        m.validate(&report)
            .map_err(|error| ArrowLdpError::MultidimRow { row, error })?;
        out.push(report);
        Ok(())
    })?;
    Ok(out)
}

/// Adds every row of `columns` (one per attribute, in order) to `server`, validated; the
/// first invalid row is the error (rows counted from `first_row`), and nothing after it
/// is added.
pub fn aggregate_columns<M: ArrowReports>(
    server: &mut MultidimAggregator<M>,
    columns: &[&dyn Array],
    first_row: u64,
) -> Result<(), ArrowLdpError> {
    let m = server.mechanism().clone();
    for_each_row(&m, columns, first_row, |row, rebuilt| {
        let report = rebuilt.map_err(|(_, e)| e)?;
        server
            .add(&report)
            .map_err(|error| ArrowLdpError::MultidimRow { row, error })
    })
}

/// [`aggregate_columns`] in skip mode ([`ldp_core::OnInvalid::Skip`]): an invalid row is
/// left out and recorded in `skipped`, described by `at(row)` and ordered by
/// `position_base + row`. Columns of the wrong type are still an error: they are not one
/// client's report.
pub fn aggregate_columns_skipping<M: ArrowReports>(
    server: &mut MultidimAggregator<M>,
    columns: &[&dyn Array],
    first_row: u64,
    position_base: u64,
    skipped: &mut Rejections,
    at: &dyn Fn(u64) -> String,
) -> Result<(), ArrowLdpError> {
    let m = server.mechanism().clone();
    for_each_row(&m, columns, first_row, |row, rebuilt| {
        let invalid = match rebuilt {
            Ok(report) => match server.add(&report) {
                Ok(()) => return Ok(()),
                Err(error) => refused(row, error)?,
            },
            Err(invalid) => invalid,
        };
        let (reason, error) = invalid;
        // `at(row)` names the row: the error is recorded without it.
        let text = error.to_string();
        let prefix = format!("row {row}: ");
        let error = text.strip_prefix(&prefix).unwrap_or(&text);
        skipped.record(reason, position_base + row, || at(row), &error);
        Ok(())
    })
}

/// Writes the reports of a [`Multidim`] collection to a Parquet file, its spec in the
/// metadata, one row per user.
pub struct MultidimWriter<M: Mechanism> {
    mechanism: Multidim<M>,
    encoding: SetEncoding,
    schema: SchemaRef,
    writer: ArrowWriter<File>,
}

impl<M: ArrowReports> MultidimWriter<M> {
    /// A new file at `path` for `mechanism`'s reports; `encoding` defaults to
    /// [`smaller_encoding`].
    pub fn create(
        path: &Path,
        mechanism: Multidim<M>,
        encoding: Option<SetEncoding>,
    ) -> Result<Self, ArrowLdpError> {
        let encoding = encoding.unwrap_or_else(|| smaller_encoding(&mechanism));
        let schema = Arc::new(multidim_schema(&mechanism, encoding)?);
        let properties = multidim_writer_properties(&mechanism, encoding)?;
        let file = File::create(path).map_err(io(path))?;
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(properties))?;
        Ok(Self {
            mechanism,
            encoding,
            schema,
            writer,
        })
    }

    /// The set encoding the file uses.
    pub fn encoding(&self) -> SetEncoding {
        self.encoding
    }

    /// Appends `reports` (one record batch), each validated first: an invalid one is an
    /// error naming its position in `reports`, and nothing of the call is written.
    pub fn write(&mut self, reports: &[MultidimReport<M::Report>]) -> Result<(), ArrowLdpError> {
        let columns = to_columns(&self.mechanism, reports, self.encoding)?;
        let batch = RecordBatch::try_new(self.schema.clone(), columns)?;
        self.writer.write(&batch)?;
        Ok(())
    }

    /// Closes the file.
    pub fn finish(self) -> Result<(), ArrowLdpError> {
        self.writer.close()?;
        Ok(())
    }
}

/// The multidimensional spec a Parquet file of reports records: an error says when the
/// file holds one attribute's reports instead, or records no spec.
pub fn read_multidim_spec(path: &Path) -> Result<MultidimSpec, ArrowLdpError> {
    let file = File::open(path).map_err(io(path))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
    multidim_spec_of(builder.metadata().file_metadata().key_value_metadata())
}

fn multidim_spec_of(metadata: Option<&Vec<KeyValue>>) -> Result<MultidimSpec, ArrowLdpError> {
    match metadata_value(metadata, MULTIDIM_KEY) {
        Some(text) => {
            serde_json::from_str(&text).map_err(|e| ArrowLdpError::BadMultidimSpec(e.to_string()))
        }
        None => match metadata_value(metadata, SPEC_KEY) {
            Some(found) => Err(ArrowLdpError::OneAttribute { found }),
            None => Err(ArrowLdpError::NoSpec),
        },
    }
}

/// The reports of several attributes in one or more Parquet files, read batch by batch
/// (memory: one batch).
pub struct ParquetMultidimReports {
    files: Vec<PathBuf>,
    unrecorded: Vec<PathBuf>,
    d: usize,
    batch_size: usize,
}

impl ParquetMultidimReports {
    /// The files at `path` (a file or a directory), each checked to hold reports of
    /// `expected` in the columns `report_0 .. report_{d-1}` (and no `report_d`). A file
    /// of one attribute's reports, or of another collection, is refused; a file that
    /// records no spec is read as `expected`'s and listed in
    /// [`ParquetMultidimReports::unrecorded`].
    pub fn open(path: &Path, expected: &MultidimSpec) -> Result<Self, ArrowLdpError> {
        let files = parquet_files(path)?;
        let d = expected.specs().len();
        let mut unrecorded = Vec::new();
        for f in &files {
            check_file(f, expected, d)
                .map(|recorded| {
                    if !recorded {
                        unrecorded.push(f.clone());
                    }
                })
                .map_err(|e| in_file(f, e))?;
        }
        Ok(Self {
            files,
            unrecorded,
            d,
            batch_size: rows_of(row_bytes(expected), BATCH_BYTES, 65_536),
        })
    }

    /// The files, in reading order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The files that record no spec, read as the expected collection's.
    pub fn unrecorded(&self) -> &[PathBuf] {
        &self.unrecorded
    }

    /// The row groups of every file, in reading order.
    pub fn parts(&self) -> Result<Vec<Part>, ArrowLdpError> {
        crate::files::row_groups(&self.files)
    }

    /// Calls `f(columns, first_row_of_the_batch_in_its_file)` for every batch of one
    /// part, `columns` being `report_0 .. report_{d-1}` in order.
    pub fn for_each_batch_of(
        &self,
        part: &Part,
        mut f: impl FnMut(&[&dyn Array], u64) -> Result<(), ArrowLdpError>,
    ) -> Result<(), ArrowLdpError> {
        let path = &self.files[part.file];
        let mut read = || -> Result<(), ArrowLdpError> {
            let file = File::open(path).map_err(io(path))?;
            let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
            let indices = (0..self.d)
                .map(|j| column_index(builder.schema(), &column_name(j)))
                .collect::<Result<Vec<_>, _>>()?;
            let mask = parquet::arrow::ProjectionMask::roots(builder.parquet_schema(), indices);
            let reader = builder
                .with_projection(mask)
                .with_row_groups(vec![part.row_group])
                .with_batch_size(self.batch_size)
                .build()?;
            let mut row = part.first_row;
            for batch in reader {
                let batch = batch?;
                // The projection keeps the file's order of columns: each is found by name.
                let columns = (0..self.d)
                    .map(|j| {
                        let name = column_name(j);
                        batch
                            .column_by_name(&name)
                            .map(|c| c.as_ref())
                            .ok_or(ArrowLdpError::NoColumn(name))
                    })
                    .collect::<Result<Vec<&dyn Array>, _>>()?;
                f(&columns, row)?;
                row += batch.num_rows() as u64;
            }
            Ok(())
        };
        read().map_err(|e| in_file(path, e))
    }

    /// Adds every report to `server`, validated, file by file in order; the first
    /// invalid row is the error, naming its file and row.
    pub fn aggregate<M: ArrowReports>(
        &self,
        server: &mut MultidimAggregator<M>,
    ) -> Result<(), ArrowLdpError> {
        for part in self.parts()? {
            self.for_each_batch_of(&part, |columns, row| {
                aggregate_columns(server, columns, row)
            })?;
        }
        Ok(())
    }

    /// [`ParquetMultidimReports::aggregate`] in skip mode: an invalid row is left out and
    /// recorded in `skipped` as `FILE row N` (rows of a file ordered after those of the
    /// files before it).
    pub fn aggregate_skipping<M: ArrowReports>(
        &self,
        server: &mut MultidimAggregator<M>,
        skipped: &mut Rejections,
    ) -> Result<(), ArrowLdpError> {
        for part in self.parts()? {
            let file = self.files[part.file].display().to_string();
            let at = |row: u64| format!("{file} row {row}");
            let base = (part.file as u64) << 40;
            self.for_each_batch_of(&part, |columns, row| {
                aggregate_columns_skipping(server, columns, row, base, skipped, &at)
            })?;
        }
        Ok(())
    }
}

/// Checks that one file holds reports of `expected` in its `d` columns: whether the file
/// records its spec.
fn check_file(path: &Path, expected: &MultidimSpec, d: usize) -> Result<bool, ArrowLdpError> {
    let file = File::open(path).map_err(io(path))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
    let recorded = match multidim_spec_of(builder.metadata().file_metadata().key_value_metadata()) {
        Ok(found) if &found == expected => true,
        Ok(found) => {
            return Err(ArrowLdpError::SpecMismatch {
                expected: spec_json(expected)?,
                found: spec_json(&found)?,
            });
        }
        Err(ArrowLdpError::NoSpec) => false,
        Err(e) => return Err(e),
    };
    let schema = builder.schema();
    for j in 0..d {
        column_index(schema, &column_name(j))?;
    }
    let beyond = column_name(d);
    if schema.index_of(&beyond).is_ok() {
        return Err(ArrowLdpError::ExtraColumn { column: beyond, d });
    }
    Ok(recorded)
}
