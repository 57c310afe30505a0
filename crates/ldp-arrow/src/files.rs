//! Parquet files of reports: the spec in the metadata, streaming reads in bounded memory.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use ldp_core::{ReportTags, Spec};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::{
    ArrowLdpError, ArrowReports, ENCODING_KEY, MULTIDIM_KEY, REPORT_COLUMN, SPEC_KEY, SetEncoding,
};

pub(crate) fn io(path: &Path) -> impl Fn(std::io::Error) -> ArrowLdpError + '_ {
    move |error| ArrowLdpError::Io {
        path: path.display().to_string(),
        error,
    }
}

/// Writes the reports of one mechanism to a Parquet file, its spec in the metadata.
///
/// ```
/// use ldp_arrow::{ParquetReports, ReportWriter};
/// use ldp_core::{DomainSize, Epsilon, GrrReport, Grr, Mechanism};
/// let grr = Grr::new(DomainSize::new(5)?, Epsilon::new(1.0)?)?;
/// let path = std::env::temp_dir().join(format!("ldp-arrow-doc-{}.parquet", std::process::id()));
/// let mut w = ReportWriter::create(&path, grr.clone(), None)?;
/// w.write(&[GrrReport { y: 1 }, GrrReport { y: 4 }])?;
/// w.finish()?;
/// let mut server = grr.aggregator();
/// ParquetReports::open(&path, &grr.spec())?.aggregate(&grr, &mut server)?;
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ReportWriter<M> {
    mechanism: M,
    encoding: SetEncoding,
    schema: SchemaRef,
    writer: ArrowWriter<File>,
    /// Tags every row carries ([`crate::tags`]), as columns after `report`.
    tags: ReportTags,
}

/// The `report` field of `mechanism`'s reports.
pub fn report_field<M: ArrowReports>(mechanism: &M, encoding: SetEncoding) -> Field {
    Field::new(REPORT_COLUMN, mechanism.report_type(encoding), false)
}

/// The schema of a table of `mechanism`'s reports: the `report` field, and the spec and
/// the set encoding in the schema's metadata (under [`SPEC_KEY`] and [`ENCODING_KEY`]),
/// where pyarrow, pandas and DataFusion carry them along.
///
/// ```
/// use ldp_arrow::{report_schema, SetEncoding, SPEC_KEY};
/// use ldp_core::{DomainSize, Epsilon, Grr};
/// let grr = Grr::new(DomainSize::new(4)?, Epsilon::new(1.0)?)?;
/// let schema = report_schema(&grr, SetEncoding::List);
/// assert_eq!(schema.metadata()[SPEC_KEY], r#"{"k":4,"eps":1.0,"family":"grr"}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn report_schema<M: ArrowReports>(mechanism: &M, encoding: SetEncoding) -> Schema {
    let metadata = [
        (
            SPEC_KEY.to_owned(),
            serde_json::to_string(&mechanism.spec()).expect("a spec serializes"),
        ),
        (ENCODING_KEY.to_owned(), encoding.name().to_owned()),
    ];
    Schema::new(vec![report_field(mechanism, encoding)]).with_metadata(metadata.into())
}

/// Parquet writer properties that record `spec` and `encoding` in the file (Snappy
/// compression). For writers of files with more columns than the reports (a day, a
/// cohort).
pub fn writer_properties(spec: &Spec, encoding: SetEncoding) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(rows_within(spec, ROW_GROUP_BYTES, 1 << 20)))
        .set_key_value_metadata(Some(vec![
            KeyValue::new(
                SPEC_KEY.to_owned(),
                serde_json::to_string(spec).expect("a spec serializes"),
            ),
            KeyValue::new(ENCODING_KEY.to_owned(), encoding.name().to_owned()),
        ]))
        .build()
}

/// Bytes of reports a writer holds before it writes a row group.
pub(crate) const ROW_GROUP_BYTES: usize = 64 << 20;

/// Bytes of reports a reader decodes in one batch.
pub(crate) const BATCH_BYTES: usize = 16 << 20;

/// How many reports of `spec` fit in `bytes` at their largest in memory (8 bytes per
/// entry, plus the row's own), between 1 and `most`: row groups and batches are sized in
/// bytes, so that SHE at k = 10^4 is not held 65,536 reports (5 GB) at a time.
fn rows_within(spec: &Spec, bytes: usize, most: usize) -> usize {
    rows_of(report_bytes(spec), bytes, most)
}

/// The bytes of one report of `spec` at its largest in memory.
pub(crate) fn report_bytes(spec: &Spec) -> usize {
    16 + 8 * spec.report_limits().entries as usize
}

/// How many rows of `per_row` bytes fit in `bytes`, between 1 and `most`.
pub(crate) fn rows_of(per_row: usize, bytes: usize, most: usize) -> usize {
    (bytes / per_row.max(1)).clamp(1, most)
}

impl<M: ArrowReports> ReportWriter<M> {
    /// A new file at `path` for `mechanism`'s reports; `encoding` defaults to
    /// [`SetEncoding::smaller_for`] the mechanism.
    pub fn create(
        path: &Path,
        mechanism: M,
        encoding: Option<SetEncoding>,
    ) -> Result<Self, ArrowLdpError> {
        Self::create_tagged(path, mechanism, encoding, ReportTags::default())
    }

    /// As [`ReportWriter::create`], every row tagged with `tags` (the columns `user`,
    /// `survey` and `day` of the tags set, after `report`; see [`crate::tags`]).
    ///
    /// ```
    /// use ldp_arrow::ReportWriter;
    /// use ldp_arrow::tags::for_each_tags;
    /// use ldp_core::{DomainSize, Epsilon, Grr, GrrReport, ReportTags};
    /// let grr = Grr::new(DomainSize::new(5)?, Epsilon::new(1.0)?)?;
    /// let path = std::env::temp_dir().join(format!("ldp-arrow-tags-{}.parquet", std::process::id()));
    /// let tags = ReportTags { user: Some("u1".into()), survey: None, day: Some(9) };
    /// let mut w = ReportWriter::create_tagged(&path, grr, None, tags.clone())?;
    /// w.write(&[GrrReport { y: 1 }, GrrReport { y: 4 }])?;
    /// w.finish()?;
    /// let mut read = Vec::new();
    /// for_each_tags::<ldp_arrow::ArrowLdpError>(&path, |_, t| Ok(read.push(t)))?;
    /// assert_eq!(read, vec![tags.clone(), tags]);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create_tagged(
        path: &Path,
        mechanism: M,
        encoding: Option<SetEncoding>,
        tags: ReportTags,
    ) -> Result<Self, ArrowLdpError> {
        let spec = mechanism.spec();
        let encoding = encoding.unwrap_or_else(|| SetEncoding::smaller_for(&spec));
        let plain = report_schema(&mechanism, encoding);
        let mut fields: Vec<Field> = plain.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.extend(crate::tags::tag_fields(&tags));
        let schema = Arc::new(Schema::new(fields).with_metadata(plain.metadata().clone()));
        let file = File::create(path).map_err(io(path))?;
        let writer = ArrowWriter::try_new(
            file,
            schema.clone(),
            Some(writer_properties(&spec, encoding)),
        )?;
        Ok(Self {
            mechanism,
            encoding,
            schema,
            writer,
            tags,
        })
    }

    /// The set encoding the file uses.
    pub fn encoding(&self) -> SetEncoding {
        self.encoding
    }

    /// Appends `reports` (one record batch).
    pub fn write(&mut self, reports: &[M::Report]) -> Result<(), ArrowLdpError> {
        let column: ArrayRef = self.mechanism.to_array(reports, self.encoding);
        let mut columns = vec![column];
        columns.extend(crate::tags::constant_tag_columns(&self.tags, reports.len()));
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

/// The Parquet files a path names: the file itself, or a directory's `*.parquet` files
/// (recursively, sorted by path).
///
/// Each file is read once: links to directories are not followed (a `latest -> day2`
/// link beside `day2`, or `loop -> .`, would count reports twice or forever), a link to a
/// file already listed is left out, and the walk stays on the directory's own file system
/// (on Unix: `--input /` does not descend into `/proc`). Anything named `*.parquet` that
/// is not a regular file (a FIFO, a device) is refused.
pub fn parquet_files(path: &Path) -> Result<Vec<PathBuf>, ArrowLdpError> {
    let meta = std::fs::metadata(path).map_err(io(path))?;
    if !meta.is_dir() {
        if !meta.is_file() {
            return Err(ArrowLdpError::NotAFile(path.display().to_string()));
        }
        return Ok(vec![path.to_path_buf()]);
    }
    let root_device = device(&meta);
    let mut out = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io(&dir))? {
            let entry = entry.map_err(io(&dir))?;
            let p = entry.path();
            let kind = entry.file_type().map_err(io(&p))?;
            if kind.is_dir() {
                let meta = entry.metadata().map_err(io(&p))?;
                if device(&meta) == root_device {
                    pending.push(p);
                }
                continue;
            }
            if p.extension().is_none_or(|e| e != "parquet") {
                continue;
            }
            // Follows a link to its target: a link to a directory is skipped.
            let meta = std::fs::metadata(&p).map_err(io(&p))?;
            if meta.is_dir() {
                continue;
            }
            if !meta.is_file() {
                return Err(ArrowLdpError::NotAFile(p.display().to_string()));
            }
            out.push(p);
        }
    }
    out.sort();
    // Among a file and links to it, the first path in order is kept.
    let mut kept = std::collections::HashSet::new();
    out.retain(|p| std::fs::canonicalize(p).is_ok_and(|c| kept.insert(c)));
    if out.is_empty() {
        return Err(ArrowLdpError::NoFiles(path.display().to_string()));
    }
    Ok(out)
}

/// The file system a file lives on, where the platform says.
#[cfg(unix)]
fn device(meta: &std::fs::Metadata) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    Some(meta.dev())
}

#[cfg(not(unix))]
fn device(_: &std::fs::Metadata) -> Option<u64> {
    None
}

/// The spec a Parquet file of reports records.
pub fn read_spec(path: &Path) -> Result<Spec, ArrowLdpError> {
    let file = File::open(path).map_err(io(path))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
    spec_of(builder.metadata().file_metadata().key_value_metadata())
}

fn spec_of(metadata: Option<&Vec<KeyValue>>) -> Result<Spec, ArrowLdpError> {
    let Some(text) = metadata_value(metadata, SPEC_KEY) else {
        // A file of several attributes is no file of one.
        return match metadata_value(metadata, MULTIDIM_KEY) {
            Some(found) => Err(ArrowLdpError::SeveralAttributes { found }),
            None => Err(ArrowLdpError::NoSpec),
        };
    };
    serde_json::from_str(&text).map_err(|e| ArrowLdpError::BadSpec(e.to_string()))
}

/// The value of `key` in a file's key-value metadata.
pub(crate) fn metadata_value(metadata: Option<&Vec<KeyValue>>, key: &str) -> Option<String> {
    metadata
        .and_then(|kv| kv.iter().find(|e| e.key == key))
        .and_then(|e| e.value.clone())
}

/// The reports of one or more Parquet files, read batch by batch (memory: one batch).
pub struct ParquetReports {
    files: Vec<PathBuf>,
    unrecorded: Vec<PathBuf>,
    batch_size: usize,
}

impl ParquetReports {
    /// The files at `path` (a file or a directory), each checked to hold reports of
    /// `expected`. A file that records no spec (written by a tool that dropped the
    /// metadata) is read as `expected`'s and listed in [`ParquetReports::unrecorded`],
    /// for the caller to say so; a file recording another spec is refused.
    pub fn open(path: &Path, expected: &Spec) -> Result<Self, ArrowLdpError> {
        let files = parquet_files(path)?;
        let mut unrecorded = Vec::new();
        for f in &files {
            let found = match read_spec(f) {
                Err(ArrowLdpError::NoSpec) => {
                    unrecorded.push(f.clone());
                    continue;
                }
                other => other.map_err(|e| in_file(f, e))?,
            };
            if &found != expected {
                return Err(in_file(
                    f,
                    ArrowLdpError::SpecMismatch {
                        expected: serde_json::to_string(expected).expect("serializes"),
                        found: serde_json::to_string(&found).expect("serializes"),
                    },
                ));
            }
        }
        Ok(Self {
            files,
            unrecorded,
            batch_size: rows_within(expected, BATCH_BYTES, 65_536),
        })
    }

    /// The files, in reading order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The files that record no spec, read as the expected mechanism's.
    pub fn unrecorded(&self) -> &[PathBuf] {
        &self.unrecorded
    }

    /// The row groups of every file, in reading order: the units a caller may read in
    /// parallel (merging the partial aggregates in this order keeps SHE's float sums
    /// independent of the number of threads).
    pub fn parts(&self) -> Result<Vec<Part>, ArrowLdpError> {
        row_groups(&self.files)
    }

    /// Calls `f(report_column, first_row_of_the_batch_in_its_file)` for every batch of
    /// one part.
    pub fn for_each_batch_of(
        &self,
        part: &Part,
        mut f: impl FnMut(&dyn Array, u64) -> Result<(), ArrowLdpError>,
    ) -> Result<(), ArrowLdpError> {
        let path = &self.files[part.file];
        let mut read = || -> Result<(), ArrowLdpError> {
            let file = File::open(path).map_err(io(path))?;
            let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
            let index = match column_index(builder.schema(), REPORT_COLUMN) {
                Err(ArrowLdpError::NoColumn(_)) => return Err(ArrowLdpError::NoReportColumn),
                other => other?,
            };
            let mask = parquet::arrow::ProjectionMask::roots(builder.parquet_schema(), [index]);
            let reader = builder
                .with_projection(mask)
                .with_row_groups(vec![part.row_group])
                .with_batch_size(self.batch_size)
                .build()?;
            let mut row = part.first_row;
            for batch in reader {
                let batch = batch?;
                f(batch.column(0).as_ref(), row)?;
                row += batch.num_rows() as u64;
            }
            Ok(())
        };
        read().map_err(|e| in_file(path, e))
    }

    /// Calls `f(report_column, first_row_of_the_batch_in_its_file)` for every batch, file
    /// by file.
    pub fn for_each_batch(
        &self,
        mut f: impl FnMut(&dyn Array, u64) -> Result<(), ArrowLdpError>,
    ) -> Result<(), ArrowLdpError> {
        for part in self.parts()? {
            self.for_each_batch_of(&part, &mut f)?;
        }
        Ok(())
    }

    /// Adds every report to `server`, validated.
    pub fn aggregate<M: ArrowReports>(
        &self,
        mechanism: &M,
        server: &mut M::Aggregator,
    ) -> Result<(), ArrowLdpError> {
        self.for_each_batch(|column, row| mechanism.aggregate_array(server, column, row))
    }
}

/// The index of the one column named `name`: [`ArrowLdpError::NoColumn`] when there is
/// none, [`ArrowLdpError::DuplicateColumn`] when there are several (Arrow's own
/// `index_of` would take the first silently).
///
/// ```
/// use arrow_schema::{DataType, Field, Schema};
/// use ldp_arrow::{column_index, ArrowLdpError};
/// let one = Schema::new(vec![Field::new("report", DataType::UInt32, false)]);
/// assert_eq!(column_index(&one, "report")?, 0);
/// let two = Schema::new(vec![
///     Field::new("report", DataType::UInt32, false),
///     Field::new("report", DataType::UInt32, false),
/// ]);
/// assert!(matches!(column_index(&two, "report"), Err(ArrowLdpError::DuplicateColumn { count: 2, .. })));
/// # Ok::<(), ArrowLdpError>(())
/// ```
pub fn column_index(schema: &Schema, name: &str) -> Result<usize, ArrowLdpError> {
    let mut found = schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name() == name)
        .map(|(i, _)| i);
    match (found.next(), found.count()) {
        (None, _) => Err(ArrowLdpError::NoColumn(name.to_string())),
        (Some(i), 0) => Ok(i),
        (Some(_), more) => Err(ArrowLdpError::DuplicateColumn {
            column: name.to_string(),
            count: more + 1,
        }),
    }
}

/// The row groups of `files`, in order.
pub(crate) fn row_groups(files: &[PathBuf]) -> Result<Vec<Part>, ArrowLdpError> {
    let mut parts = Vec::new();
    for (file, path) in files.iter().enumerate() {
        let handle = File::open(path).map_err(io(path))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(handle)
            .map_err(|e| in_file(path, e.into()))?;
        let mut first_row = 0u64;
        for (row_group, meta) in builder.metadata().row_groups().iter().enumerate() {
            parts.push(Part {
                file,
                row_group,
                first_row,
            });
            first_row += u64::try_from(meta.num_rows()).unwrap_or(0);
        }
    }
    Ok(parts)
}

/// One row group of one file of a [`ParquetReports`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// Index into [`ParquetReports::files`].
    pub file: usize,
    /// Row group within the file.
    pub row_group: usize,
    /// Index of its first row in the file.
    pub first_row: u64,
}

/// An error of one file, prefixed with its path (I/O errors carry it already).
pub(crate) fn in_file(path: &Path, e: ArrowLdpError) -> ArrowLdpError {
    match e {
        ArrowLdpError::Io { .. } | ArrowLdpError::InFile { .. } => e,
        other => ArrowLdpError::InFile {
            path: path.display().to_string(),
            error: Box::new(other),
        },
    }
}
