//! A report's tags ([`ReportTags`]) as columns beside `report`: `user` and `survey`
//! (`Utf8`) and `day` (`UInt32`), each nullable, each present only when some report has it.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt32Type;
use arrow_array::{Array, ArrayRef, StringArray, UInt32Array};
use arrow_schema::{DataType, Field};
use ldp_core::ReportTags;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::ArrowLdpError;
use crate::files::{column_index, in_file, io};

/// The column of the sender's id.
pub const USER_COLUMN: &str = "user";
/// The column of the survey's id.
pub const SURVEY_COLUMN: &str = "survey";
/// The column of the report's day.
pub const DAY_COLUMN: &str = "day";

/// The fields of the tags `tags` sets, in the order user, survey, day.
pub fn tag_fields(tags: &ReportTags) -> Vec<Field> {
    let mut fields = Vec::new();
    if tags.user.is_some() {
        fields.push(Field::new(USER_COLUMN, DataType::Utf8, true));
    }
    if tags.survey.is_some() {
        fields.push(Field::new(SURVEY_COLUMN, DataType::Utf8, true));
    }
    if tags.day.is_some() {
        fields.push(Field::new(DAY_COLUMN, DataType::UInt32, true));
    }
    fields
}

/// The columns of [`tag_fields`], `rows` long, every row tagged with `tags`.
pub fn constant_tag_columns(tags: &ReportTags, rows: usize) -> Vec<ArrayRef> {
    let mut columns: Vec<ArrayRef> = Vec::new();
    for text in [&tags.user, &tags.survey].into_iter().flatten() {
        columns.push(Arc::new(StringArray::from_iter_values(
            std::iter::repeat_n(text.as_str(), rows),
        )));
    }
    if let Some(day) = tags.day {
        columns.push(Arc::new(UInt32Array::from_value(day, rows)));
    }
    columns
}

/// Calls `f(row, tags)` for every row of the Parquet file at `path`, reading only its tag
/// columns (a column the file lacks, or a null, leaves that tag unset). The reports are
/// not read: a ledger of budgets needs only who, which survey and when.
///
/// # Errors
/// An unreadable file, a tag column of another type ([`ArrowLdpError::TagType`] naming
/// it), a name given to two columns (each in [`ArrowLdpError::InFile`]), or the first
/// error of `f`, as it is.
pub fn for_each_tags<E: From<ArrowLdpError>>(
    path: &Path,
    mut f: impl FnMut(u64, ReportTags) -> Result<(), E>,
) -> Result<(), E> {
    // The file's own errors name it; `f`'s come through as they are.
    let fail = |e: ArrowLdpError| E::from(in_file(path, e));
    let file = File::open(path).map_err(|e| fail(io(path)(e)))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| fail(e.into()))?;
    let schema = builder.schema().clone();
    let mut wanted = Vec::new();
    for (name, kind) in [
        (USER_COLUMN, DataType::Utf8),
        (SURVEY_COLUMN, DataType::Utf8),
        (DAY_COLUMN, DataType::UInt32),
    ] {
        match column_index(&schema, name) {
            Ok(i) => {
                let found = schema.field(i).data_type();
                if *found != kind {
                    return Err(fail(ArrowLdpError::TagType {
                        column: name.to_owned(),
                        expected: kind,
                        found: found.clone(),
                    }));
                }
                wanted.push((name, i));
            }
            Err(ArrowLdpError::NoColumn(_)) => {}
            Err(e) => return Err(fail(e)),
        }
    }
    // The projected batch holds the wanted columns in the file's order.
    wanted.sort_by_key(|w| w.1);
    let rows = builder.metadata().file_metadata().num_rows();
    if wanted.is_empty() {
        for row in 0..u64::try_from(rows).unwrap_or(0) {
            f(row, ReportTags::default())?;
        }
        return Ok(());
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), wanted.iter().map(|w| w.1));
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| fail(e.into()))?;
    let mut row = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| fail(e.into()))?;
        let column = |name: &str| -> Option<&ArrayRef> {
            wanted
                .iter()
                .position(|w| w.0 == name)
                .map(|i| batch.column(i))
        };
        let user = column(USER_COLUMN).map(|c| c.as_string::<i32>());
        let survey = column(SURVEY_COLUMN).map(|c| c.as_string::<i32>());
        let day = column(DAY_COLUMN).map(|c| c.as_primitive::<UInt32Type>());
        for i in 0..batch.num_rows() {
            let text = |c: Option<&StringArray>| {
                c.filter(|c| c.is_valid(i)).map(|c| c.value(i).to_owned())
            };
            let tags = ReportTags {
                user: text(user),
                survey: text(survey),
                day: day.filter(|c| c.is_valid(i)).map(|c| c.value(i)),
            };
            f(row, tags)?;
            row += 1;
        }
    }
    Ok(())
}
