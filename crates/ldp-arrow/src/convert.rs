//! Reports to Arrow arrays and back, and aggregation straight from arrays, by report
//! shape: every family whose report is one of ldp-core's report types works here without
//! a line of its own.

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type,
    UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, FixedSizeBinaryArray, FixedSizeListArray, Float64Array, ListArray,
    StructArray, UInt32Array,
};
use arrow_buffer::{Buffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields};
use ldp_core::report::ReportLimits;
use ldp_core::{
    AggregateError, Aggregator, FamilyMechanism, GrrReport, LhReport, Mechanism, OnesReport,
    Reason, Rejections, SheReport, SubsetReport,
};

use crate::{ArrowLdpError, SetEncoding};

/// What [`ArrowReports::for_each_nullable`] calls on every row: its index from 0, and its
/// report (`None` for a null row).
pub type NullableVisitor<'a, R> = dyn FnMut(usize, Option<&R>) -> Result<(), ArrowLdpError> + 'a;

/// A mechanism's reports in Arrow. Implemented for every mechanism whose report type has
/// an [`ArrowShape`].
pub trait ArrowReports: Mechanism {
    /// The Arrow type of the `report` column (the encoding matters to set-valued reports).
    fn report_type(&self, encoding: SetEncoding) -> DataType;

    /// The reports as one array.
    fn to_array(&self, reports: &[Self::Report], encoding: SetEncoding) -> ArrayRef;

    /// The rows of `array` as reports, each validated against the mechanism.
    fn reports_from_array(&self, array: &dyn Array) -> Result<Vec<Self::Report>, ArrowLdpError>;

    /// Calls `visit(row, report)` for every row of `array` (rows from 0), `None` for a
    /// null row: for a column in which a row may have no report (a user of several
    /// attributes reports one of them under SMP, see [`crate::multidim`]). The reports
    /// are not validated. A column of the wrong type, or a null inside a row's report (an
    /// index of a list), is an error naming the row, counted from `first_row`.
    fn for_each_nullable(
        &self,
        array: &dyn Array,
        first_row: u64,
        visit: &mut NullableVisitor<'_, Self::Report>,
    ) -> Result<(), ArrowLdpError>;

    /// Adds every row of `array` to `server`, validated as reports from outside are.
    /// `first_row` is the index of the array's first row, for error messages.
    fn aggregate_array(
        &self,
        server: &mut Self::Aggregator,
        array: &dyn Array,
        first_row: u64,
    ) -> Result<(), ArrowLdpError>;

    /// [`ArrowReports::reports_from_array`] in skip mode ([`ldp_core::OnInvalid::Skip`]):
    /// the valid reports, the invalid ones and null rows recorded in `skipped` as
    /// [`ArrowReports::aggregate_array_skipping`] records them.
    fn reports_from_array_skipping(
        &self,
        array: &dyn Array,
        first_row: u64,
        position_base: u64,
        skipped: &mut Rejections,
        at: &dyn Fn(u64) -> String,
    ) -> Result<Vec<Self::Report>, ArrowLdpError>;

    /// [`ArrowReports::aggregate_array`] in skip mode ([`ldp_core::OnInvalid::Skip`]): an
    /// invalid report or a null row is left out and recorded in `skipped`, described by
    /// `at(row)` and ordered by `position_base + row` (rows from `first_row`). A column
    /// of the wrong type is still an error: it is not one client's report.
    fn aggregate_array_skipping(
        &self,
        server: &mut Self::Aggregator,
        array: &dyn Array,
        first_row: u64,
        position_base: u64,
        skipped: &mut Rejections,
        at: &dyn Fn(u64) -> String,
    ) -> Result<(), ArrowLdpError>;
}

impl<M> ArrowReports for M
where
    M: FamilyMechanism,
    M::Report: ArrowShape,
{
    fn report_type(&self, encoding: SetEncoding) -> DataType {
        M::Report::data_type(&self.spec().report_limits(), encoding)
    }

    fn to_array(&self, reports: &[M::Report], encoding: SetEncoding) -> ArrayRef {
        M::Report::to_array(reports, &self.spec().report_limits(), encoding)
    }

    fn reports_from_array(&self, array: &dyn Array) -> Result<Vec<M::Report>, ArrowLdpError> {
        let mut out = Vec::with_capacity(array.len());
        M::Report::for_each_row(array, &self.spec().report_limits(), 0, |row, report| {
            self.validate(report)
                .map_err(|e| row_error(0, row)(e.into()))?;
            out.push(report.clone());
            Ok(())
        })?;
        Ok(out)
    }

    fn for_each_nullable(
        &self,
        array: &dyn Array,
        first_row: u64,
        visit: &mut NullableVisitor<'_, M::Report>,
    ) -> Result<(), ArrowLdpError> {
        let limits = self.spec().report_limits();
        let nulls = match array.logical_nulls() {
            Some(nulls) if nulls.null_count() > 0 => nulls,
            _ => {
                return M::Report::for_each_row(array, &limits, first_row, |row, r| {
                    visit(row, Some(r))
                });
            }
        };
        // The type is checked even when every row is null.
        M::Report::for_each_row(
            array.slice(0, 0).as_ref(),
            &limits,
            first_row,
            |_, _| Ok(()),
        )?;
        // Each run of rows with a report is read as a column of its own (a zero-copy slice).
        let mut i = 0;
        while i < array.len() {
            if nulls.is_null(i) {
                visit(i, None)?;
                i += 1;
                continue;
            }
            let start = i;
            while i < array.len() && nulls.is_valid(i) {
                i += 1;
            }
            let run = array.slice(start, i - start);
            let at = first_row + start as u64;
            M::Report::for_each_row(run.as_ref(), &limits, at, |row, r| {
                visit(start + row, Some(r))
            })?;
        }
        Ok(())
    }

    fn aggregate_array(
        &self,
        server: &mut M::Aggregator,
        array: &dyn Array,
        first_row: u64,
    ) -> Result<(), ArrowLdpError> {
        M::Report::for_each_row(
            array,
            &self.spec().report_limits(),
            first_row,
            |row, report| server.add(report).map_err(row_error(first_row, row)),
        )
    }

    fn reports_from_array_skipping(
        &self,
        array: &dyn Array,
        first_row: u64,
        position_base: u64,
        skipped: &mut Rejections,
        at: &dyn Fn(u64) -> String,
    ) -> Result<Vec<M::Report>, ArrowLdpError> {
        let mut out = Vec::with_capacity(array.len());
        let keep = |r: &M::Report| {
            self.validate(r)?;
            out.push(r.clone());
            Ok(())
        };
        for_each_valid_row(self, array, first_row, position_base, skipped, at, keep)?;
        Ok(out)
    }

    fn aggregate_array_skipping(
        &self,
        server: &mut M::Aggregator,
        array: &dyn Array,
        first_row: u64,
        position_base: u64,
        skipped: &mut Rejections,
        at: &dyn Fn(u64) -> String,
    ) -> Result<(), ArrowLdpError> {
        let add = |r: &M::Report| server.add(r);
        for_each_valid_row(self, array, first_row, position_base, skipped, at, add)
    }
}

/// Calls `visit` on every non-null row of `array`; a row `visit` refuses as an invalid
/// report, a null row, and an integer that does not fit in UInt32, is recorded in
/// `skipped` instead (any other error stops).
fn for_each_valid_row<M>(
    mechanism: &M,
    array: &dyn Array,
    first_row: u64,
    position_base: u64,
    skipped: &mut Rejections,
    at: &dyn Fn(u64) -> String,
    mut visit: impl FnMut(&M::Report) -> Result<(), AggregateError>,
) -> Result<(), ArrowLdpError>
where
    M: FamilyMechanism,
    M::Report: ArrowShape,
{
    let limits = mechanism.spec().report_limits();
    let mut row_of = |skipped: &mut Rejections, row: u64, r: &M::Report| match visit(r) {
        Ok(()) => Ok(()),
        Err(AggregateError::Report(e)) => {
            skipped.record(Reason::from(&e), position_base + row, || at(row), &e);
            Ok(())
        }
        Err(error) => Err(ArrowLdpError::Row { row, error }),
    };
    // Nulls, and integers that do not fit in UInt32, are found before any row is
    // visited; only then go row by row.
    let whole = M::Report::for_each_row(array, &limits, first_row, |i, r| {
        row_of(skipped, first_row + i as u64, r)
    });
    match whole {
        Err(ArrowLdpError::Null { .. } | ArrowLdpError::OutOfRange { .. }) => {
            for i in 0..array.len() {
                let row = first_row + i as u64;
                let one = array.slice(i, 1);
                let visited = M::Report::for_each_row(one.as_ref(), &limits, row, |_, r| {
                    row_of(skipped, row, r)
                });
                match visited {
                    Err(ArrowLdpError::Null { .. }) => skipped.record(
                        Reason::Null,
                        position_base + row,
                        || at(row),
                        &"the report is null",
                    ),
                    Err(e @ ArrowLdpError::OutOfRange { .. }) => {
                        skipped.record(Reason::OutOfRange, position_base + row, || at(row), &e)
                    }
                    other => other?,
                }
            }
            Ok(())
        }
        other => other,
    }
}

/// A report type as a column: its Arrow type, and the conversions both ways. One
/// implementation per report type of ldp-core (a value, a set of indices in either
/// encoding, a seed and a value, a vector of numbers).
pub trait ArrowShape: Sized + Clone {
    /// The Arrow type of a column of these reports within `limits`.
    fn data_type(limits: &ReportLimits, encoding: SetEncoding) -> DataType;

    /// The reports as one array.
    fn to_array(reports: &[Self], limits: &ReportLimits, encoding: SetEncoding) -> ArrayRef;

    /// Calls `visit(row, report)` for every row of `array`, in order (one report buffer
    /// serves every row). Fails on a column of another type or a null, naming the row
    /// counted from `first_row`; the reports are not validated here.
    fn for_each_row(
        array: &dyn Array,
        limits: &ReportLimits,
        first_row: u64,
        visit: impl FnMut(usize, &Self) -> Result<(), ArrowLdpError>,
    ) -> Result<(), ArrowLdpError>;
}

impl ArrowShape for GrrReport {
    fn data_type(_: &ReportLimits, _: SetEncoding) -> DataType {
        DataType::UInt32
    }

    fn to_array(reports: &[Self], _: &ReportLimits, _: SetEncoding) -> ArrayRef {
        Arc::new(UInt32Array::from_iter_values(reports.iter().map(|r| r.y)))
    }

    fn for_each_row(
        array: &dyn Array,
        _: &ReportLimits,
        first_row: u64,
        mut visit: impl FnMut(usize, &Self) -> Result<(), ArrowLdpError>,
    ) -> Result<(), ArrowLdpError> {
        for (row, &y) in grr_values(array, first_row)?.iter().enumerate() {
            visit(row, &GrrReport { y })?;
        }
        Ok(())
    }
}

/// The shape of a report that is a sorted set of indices in its field `$field`.
macro_rules! set_shape {
    ($report:ident, $field:ident) => {
        impl ArrowShape for $report {
            fn data_type(limits: &ReportLimits, encoding: SetEncoding) -> DataType {
                match encoding {
                    SetEncoding::List => list_type(),
                    SetEncoding::Bitmap => bitmap_type(limits.values),
                }
            }

            fn to_array(
                reports: &[Self],
                limits: &ReportLimits,
                encoding: SetEncoding,
            ) -> ArrayRef {
                sets_to_array(
                    limits.values,
                    reports.iter().map(|r| r.$field.as_slice()),
                    encoding,
                )
            }

            fn for_each_row(
                array: &dyn Array,
                limits: &ReportLimits,
                first_row: u64,
                mut visit: impl FnMut(usize, &Self) -> Result<(), ArrowLdpError>,
            ) -> Result<(), ArrowLdpError> {
                let mut report = $report { $field: Vec::new() };
                for_each_set(array, limits.values, first_row, |row, set| {
                    report.$field.clear();
                    report.$field.extend_from_slice(set);
                    visit(row, &report)
                })
            }
        }
    };
}

set_shape!(SubsetReport, subset);
set_shape!(OnesReport, ones);

impl ArrowShape for LhReport {
    fn data_type(_: &ReportLimits, _: SetEncoding) -> DataType {
        DataType::Struct(lh_fields())
    }

    fn to_array(reports: &[Self], _: &ReportLimits, _: SetEncoding) -> ArrayRef {
        let seeds = UInt32Array::from_iter_values(reports.iter().map(|r| r.seed));
        let ys = UInt32Array::from_iter_values(reports.iter().map(|r| r.y));
        Arc::new(StructArray::new(
            lh_fields(),
            vec![Arc::new(seeds), Arc::new(ys)],
            None,
        ))
    }

    fn for_each_row(
        array: &dyn Array,
        _: &ReportLimits,
        first_row: u64,
        mut visit: impl FnMut(usize, &Self) -> Result<(), ArrowLdpError>,
    ) -> Result<(), ArrowLdpError> {
        let (seeds, ys) = lh_columns(array, first_row)?;
        for (row, (&seed, &y)) in seeds.iter().zip(ys.iter()).enumerate() {
            visit(row, &LhReport { seed, y })?;
        }
        Ok(())
    }
}

impl ArrowShape for SheReport {
    fn data_type(limits: &ReportLimits, _: SetEncoding) -> DataType {
        she_type(limits.entries)
    }

    fn to_array(reports: &[Self], limits: &ReportLimits, _: SetEncoding) -> ArrayRef {
        let values =
            Float64Array::from_iter_values(reports.iter().flat_map(|r| r.y.iter().copied()));
        Arc::new(FixedSizeListArray::new(
            Arc::new(Field::new("item", DataType::Float64, false)),
            limits.entries as i32,
            Arc::new(values),
            None,
        ))
    }

    fn for_each_row(
        array: &dyn Array,
        limits: &ReportLimits,
        first_row: u64,
        mut visit: impl FnMut(usize, &Self) -> Result<(), ArrowLdpError>,
    ) -> Result<(), ArrowLdpError> {
        let k = limits.entries as usize;
        let mut report = SheReport {
            y: Vec::with_capacity(k),
        };
        for (row, y) in she_values(array, limits.entries, first_row)?
            .chunks_exact(k)
            .enumerate()
        {
            report.y.clear();
            report.y.extend_from_slice(y);
            visit(row, &report)?;
        }
        Ok(())
    }
}

fn row_error(first_row: u64, i: usize) -> impl Fn(AggregateError) -> ArrowLdpError {
    move |error| ArrowLdpError::Row {
        row: first_row + i as u64,
        error,
    }
}

fn type_error(expected: &str, found: &DataType) -> ArrowLdpError {
    ArrowLdpError::Type {
        expected: expected.to_owned(),
        found: found.clone(),
    }
}

fn check_nulls(array: &dyn Array, first_row: u64) -> Result<(), ArrowLdpError> {
    match array.logical_nulls() {
        Some(nulls) if nulls.null_count() > 0 => {
            let i = (0..array.len())
                .find(|&i| nulls.is_null(i))
                .expect("a null");
            Err(ArrowLdpError::Null {
                row: first_row + i as u64,
            })
        }
        _ => Ok(()),
    }
}

/// `List<UInt32>` of non-null items.
fn list_type() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::UInt32, false)))
}

/// `FixedSizeBinary` wide enough for k bits.
fn bitmap_type(k: u32) -> DataType {
    DataType::FixedSizeBinary(k.div_ceil(8) as i32)
}

/// Set-valued reports to an array.
fn sets_to_array<'a>(
    k: u32,
    sets: impl ExactSizeIterator<Item = &'a [u32]> + Clone,
    encoding: SetEncoding,
) -> ArrayRef {
    match encoding {
        SetEncoding::List => {
            let offsets = OffsetBuffer::from_lengths(sets.clone().map(<[u32]>::len));
            let values: Vec<u32> = sets.flat_map(|s| s.iter().copied()).collect();
            Arc::new(ListArray::new(
                Arc::new(Field::new("item", DataType::UInt32, false)),
                offsets,
                Arc::new(UInt32Array::from(values)),
                None,
            ))
        }
        SetEncoding::Bitmap => {
            let width = k.div_ceil(8) as usize;
            let mut bytes = vec![0u8; width * sets.len()];
            for (row, set) in sets.enumerate() {
                for &i in set {
                    bytes[row * width + i as usize / 8] |= 1 << (i % 8);
                }
            }
            Arc::new(FixedSizeBinaryArray::new(
                width as i32,
                Buffer::from_vec(bytes),
                None,
            ))
        }
    }
}

/// Calls `visit(row, set)` for every row of a set column (either encoding); a bitmap bit
/// beyond k is reported as an index out of range by the validation that follows.
fn for_each_set(
    array: &dyn Array,
    k: u32,
    first_row: u64,
    mut visit: impl FnMut(usize, &[u32]) -> Result<(), ArrowLdpError>,
) -> Result<(), ArrowLdpError> {
    check_nulls(array, first_row)?;
    match array.data_type() {
        DataType::List(item) if item.data_type() == &DataType::UInt32 => {
            let list = array.as_list::<i32>();
            let offsets = list.value_offsets();
            if let Some(nulls) = list.values().logical_nulls() {
                // A null index inside a row: name that row.
                let from = offsets[0] as usize;
                let to = offsets[list.len()] as usize;
                if let Some(at) = (from..to).find(|&i| nulls.is_null(i)) {
                    let row = offsets.partition_point(|&o| o as usize <= at) - 1;
                    return Err(ArrowLdpError::Null {
                        row: first_row + row as u64,
                    });
                }
            }
            let values = list.values().as_primitive::<UInt32Type>().values();
            for row in 0..list.len() {
                let (from, to) = (offsets[row] as usize, offsets[row + 1] as usize);
                visit(row, &values[from..to])?;
            }
            Ok(())
        }
        DataType::FixedSizeBinary(width) if *width as u32 == k.div_ceil(8) => {
            let bitmap = array.as_fixed_size_binary();
            let mut set = Vec::new();
            for row in 0..bitmap.len() {
                set.clear();
                for (byte_index, &byte) in bitmap.value(row).iter().enumerate() {
                    let mut bits = byte;
                    while bits != 0 {
                        set.push(byte_index as u32 * 8 + bits.trailing_zeros());
                        bits &= bits - 1;
                    }
                }
                visit(row, &set)?;
            }
            Ok(())
        }
        other => Err(type_error(
            &format!("List<UInt32> or FixedSizeBinary({})", k.div_ceil(8)),
            other,
        )),
    }
}

/// An integer column's values as `u32`: borrowed from a `UInt32` column, and cast from
/// any other integer type (pandas writes `Int64`) where every value fits, a value that
/// does not refused by row. `None` for a column of another type.
fn u32_values<'a>(
    array: &'a dyn Array,
    field: &str,
    first_row: u64,
) -> Option<Result<Cow<'a, [u32]>, ArrowLdpError>> {
    macro_rules! cast {
        ($t:ty) => {
            array
                .as_primitive::<$t>()
                .values()
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    u32::try_from(v).map_err(|_| ArrowLdpError::OutOfRange {
                        row: first_row + i as u64,
                        field: field.to_owned(),
                        value: v.to_string(),
                        found: array.data_type().clone(),
                    })
                })
                .collect::<Result<Vec<u32>, _>>()
                .map(Cow::Owned)
        };
    }
    Some(match array.data_type() {
        DataType::UInt32 => Ok(Cow::Borrowed(array.as_primitive::<UInt32Type>().values())),
        DataType::Int8 => cast!(Int8Type),
        DataType::Int16 => cast!(Int16Type),
        DataType::Int32 => cast!(Int32Type),
        DataType::Int64 => cast!(Int64Type),
        DataType::UInt8 => cast!(UInt8Type),
        DataType::UInt16 => cast!(UInt16Type),
        DataType::UInt64 => cast!(UInt64Type),
        _ => return None,
    })
}

fn is_integer(data_type: &DataType) -> bool {
    data_type.is_integer()
}

fn grr_values(array: &dyn Array, first_row: u64) -> Result<Cow<'_, [u32]>, ArrowLdpError> {
    if !is_integer(array.data_type()) {
        return Err(type_error(
            "UInt32 (or another integer type whose values fit)",
            array.data_type(),
        ));
    }
    check_nulls(array, first_row)?;
    u32_values(array, "y", first_row).expect("an integer column")
}

fn lh_fields() -> Fields {
    Fields::from(vec![
        Field::new("seed", DataType::UInt32, false),
        Field::new("y", DataType::UInt32, false),
    ])
}

/// `Struct<seed: UInt32, y: UInt32>`, whatever the fields' nullability (nulls are
/// refused row by row), as other writers and query engines may mark them nullable, and
/// with any integer type whose values fit (pandas writes `Int64`).
fn is_lh_type(data_type: &DataType) -> bool {
    match data_type {
        DataType::Struct(fields) => {
            fields.len() == 2
                && fields
                    .iter()
                    .zip(["seed", "y"])
                    .all(|(f, name)| f.name() == name && is_integer(f.data_type()))
        }
        _ => false,
    }
}

/// The seeds and values of an LH column.
#[allow(clippy::type_complexity)]
fn lh_columns(
    array: &dyn Array,
    first_row: u64,
) -> Result<(Cow<'_, [u32]>, Cow<'_, [u32]>), ArrowLdpError> {
    if !is_lh_type(array.data_type()) {
        return Err(type_error(
            "Struct<seed: UInt32, y: UInt32> (or other integer types whose values fit)",
            array.data_type(),
        ));
    }
    check_nulls(array, first_row)?;
    let s = array.as_struct();
    let column = |i: usize, name: &str| -> Result<Cow<'_, [u32]>, ArrowLdpError> {
        check_nulls(s.column(i).as_ref(), first_row)?;
        u32_values(s.column(i).as_ref(), name, first_row).expect("an integer field")
    };
    Ok((column(0, "seed")?, column(1, "y")?))
}

fn she_type(k: u32) -> DataType {
    DataType::FixedSizeList(
        Arc::new(Field::new("item", DataType::Float64, false)),
        k as i32,
    )
}

/// The k values of every row of an SHE column, in one slice.
fn she_values(array: &dyn Array, k: u32, first_row: u64) -> Result<&[f64], ArrowLdpError> {
    let is_she = matches!(array.data_type(),
        DataType::FixedSizeList(item, n) if *n as u32 == k && item.data_type() == &DataType::Float64);
    if !is_she {
        return Err(type_error(
            &format!("FixedSizeList<Float64, {k}>"),
            array.data_type(),
        ));
    }
    check_nulls(array, first_row)?;
    let list = array.as_fixed_size_list();
    if let Some(nulls) = list.values().logical_nulls() {
        if let Some(at) = (0..list.values().len()).find(|&i| nulls.is_null(i)) {
            return Err(ArrowLdpError::Null {
                row: first_row + (at / k as usize) as u64,
            });
        }
    }
    Ok(list.values().as_primitive::<Float64Type>().values())
}
