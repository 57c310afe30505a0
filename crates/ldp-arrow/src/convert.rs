//! Reports to Arrow arrays and back, and aggregation straight from arrays.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt32Type};
use arrow_array::{
    Array, ArrayRef, FixedSizeBinaryArray, FixedSizeListArray, Float64Array, ListArray,
    StructArray, UInt32Array,
};
use arrow_buffer::{Buffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields};
use ldp_core::{
    AggregateError, Aggregator, Grr, GrrReport, LhReport, LocalHashing, Mechanism, OnesReport,
    SetValued, SheReport, SubsetReport, SubsetSelection, SummationHistogram, SupportCounts,
    ThresholdHistogram, UnaryEncoding,
};

use crate::{ArrowLdpError, SetEncoding};

/// A mechanism's reports in Arrow.
pub trait ArrowReports: Mechanism {
    /// The Arrow type of the `report` column (the encoding matters to SS, UE and THE).
    fn report_type(&self, encoding: SetEncoding) -> DataType;

    /// The reports as one array.
    fn to_array(&self, reports: &[Self::Report], encoding: SetEncoding) -> ArrayRef;

    /// The rows of `array` as reports, each validated against the mechanism.
    fn reports_from_array(&self, array: &dyn Array) -> Result<Vec<Self::Report>, ArrowLdpError>;

    /// Adds every row of `array` to `server`, validated as reports from outside are,
    /// without building the reports. `first_row` is the index of the array's first row,
    /// for error messages.
    fn aggregate_array(
        &self,
        server: &mut Self::Aggregator,
        array: &dyn Array,
        first_row: u64,
    ) -> Result<(), ArrowLdpError>;
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

/// The ArrowReports of a family whose report is its support set.
macro_rules! set_valued {
    ($ty:ty, $report:ident, $field:ident) => {
        impl ArrowReports for $ty {
            fn report_type(&self, encoding: SetEncoding) -> DataType {
                match encoding {
                    SetEncoding::List => list_type(),
                    SetEncoding::Bitmap => bitmap_type(self.domain_size().get()),
                }
            }

            fn to_array(&self, reports: &[$report], encoding: SetEncoding) -> ArrayRef {
                sets_to_array(
                    self.domain_size().get(),
                    reports.iter().map(|r| r.$field.as_slice()),
                    encoding,
                )
            }

            fn reports_from_array(&self, array: &dyn Array) -> Result<Vec<$report>, ArrowLdpError> {
                let mut out = Vec::with_capacity(array.len());
                for_each_set(array, self.domain_size().get(), 0, |row, set| {
                    let report = $report {
                        $field: set.to_vec(),
                    };
                    self.validate(&report)
                        .map_err(|e| row_error(0, row)(e.into()))?;
                    out.push(report);
                    Ok(())
                })?;
                Ok(out)
            }

            fn aggregate_array(
                &self,
                server: &mut SupportCounts<$ty>,
                array: &dyn Array,
                first_row: u64,
            ) -> Result<(), ArrowLdpError> {
                add_sets(self, server, array, first_row)
            }
        }
    };
}

fn add_sets<M: SetValued<Aggregator = SupportCounts<M>>>(
    m: &M,
    server: &mut SupportCounts<M>,
    array: &dyn Array,
    first_row: u64,
) -> Result<(), ArrowLdpError> {
    for_each_set(array, m.domain_size().get(), first_row, |row, set| {
        server.add_support(set).map_err(row_error(first_row, row))
    })
}

set_valued!(SubsetSelection, SubsetReport, subset);
set_valued!(UnaryEncoding, OnesReport, ones);
set_valued!(ThresholdHistogram, OnesReport, ones);

fn grr_values(array: &dyn Array, first_row: u64) -> Result<&[u32], ArrowLdpError> {
    if array.data_type() != &DataType::UInt32 {
        return Err(type_error("UInt32", array.data_type()));
    }
    check_nulls(array, first_row)?;
    Ok(array.as_primitive::<UInt32Type>().values())
}

impl ArrowReports for Grr {
    fn report_type(&self, _: SetEncoding) -> DataType {
        DataType::UInt32
    }

    fn to_array(&self, reports: &[GrrReport], _: SetEncoding) -> ArrayRef {
        Arc::new(UInt32Array::from_iter_values(reports.iter().map(|r| r.y)))
    }

    fn reports_from_array(&self, array: &dyn Array) -> Result<Vec<GrrReport>, ArrowLdpError> {
        grr_values(array, 0)?
            .iter()
            .enumerate()
            .map(|(row, &y)| {
                let r = GrrReport { y };
                self.validate(&r).map_err(|e| row_error(0, row)(e.into()))?;
                Ok(r)
            })
            .collect()
    }

    fn aggregate_array(
        &self,
        server: &mut SupportCounts<Grr>,
        array: &dyn Array,
        first_row: u64,
    ) -> Result<(), ArrowLdpError> {
        for (row, &y) in grr_values(array, first_row)?.iter().enumerate() {
            server
                .add_support(&[y])
                .map_err(row_error(first_row, row))?;
        }
        Ok(())
    }
}

fn lh_fields() -> Fields {
    Fields::from(vec![
        Field::new("seed", DataType::UInt32, false),
        Field::new("y", DataType::UInt32, false),
    ])
}

/// `Struct<seed: UInt32, y: UInt32>`, whatever the fields' nullability (nulls are
/// refused row by row), as other writers and query engines may mark them nullable.
fn is_lh_type(data_type: &DataType) -> bool {
    match data_type {
        DataType::Struct(fields) => {
            fields.len() == 2
                && fields
                    .iter()
                    .zip(["seed", "y"])
                    .all(|(f, name)| f.name() == name && f.data_type() == &DataType::UInt32)
        }
        _ => false,
    }
}

/// The seeds and values of an LH column.
fn lh_columns(array: &dyn Array, first_row: u64) -> Result<(&[u32], &[u32]), ArrowLdpError> {
    if !is_lh_type(array.data_type()) {
        return Err(type_error(
            "Struct<seed: UInt32, y: UInt32>",
            array.data_type(),
        ));
    }
    check_nulls(array, first_row)?;
    let s = array.as_struct();
    let column = |i: usize| -> Result<&[u32], ArrowLdpError> {
        check_nulls(s.column(i).as_ref(), first_row)?;
        Ok(s.column(i).as_primitive::<UInt32Type>().values())
    };
    Ok((column(0)?, column(1)?))
}

impl ArrowReports for LocalHashing {
    fn report_type(&self, _: SetEncoding) -> DataType {
        DataType::Struct(lh_fields())
    }

    fn to_array(&self, reports: &[LhReport], _: SetEncoding) -> ArrayRef {
        let seeds = UInt32Array::from_iter_values(reports.iter().map(|r| r.seed));
        let ys = UInt32Array::from_iter_values(reports.iter().map(|r| r.y));
        Arc::new(StructArray::new(
            lh_fields(),
            vec![Arc::new(seeds), Arc::new(ys)],
            None,
        ))
    }

    fn reports_from_array(&self, array: &dyn Array) -> Result<Vec<LhReport>, ArrowLdpError> {
        let (seeds, ys) = lh_columns(array, 0)?;
        seeds
            .iter()
            .zip(ys)
            .enumerate()
            .map(|(row, (&seed, &y))| {
                let r = LhReport { seed, y };
                self.validate(&r).map_err(|e| row_error(0, row)(e.into()))?;
                Ok(r)
            })
            .collect()
    }

    fn aggregate_array(
        &self,
        server: &mut SupportCounts<LocalHashing>,
        array: &dyn Array,
        first_row: u64,
    ) -> Result<(), ArrowLdpError> {
        let (seeds, ys) = lh_columns(array, first_row)?;
        for (row, (&seed, &y)) in seeds.iter().zip(ys).enumerate() {
            server
                .add(&LhReport { seed, y })
                .map_err(row_error(first_row, row))?;
        }
        Ok(())
    }
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

impl ArrowReports for SummationHistogram {
    fn report_type(&self, _: SetEncoding) -> DataType {
        she_type(self.domain_size().get())
    }

    fn to_array(&self, reports: &[SheReport], _: SetEncoding) -> ArrayRef {
        let k = self.domain_size().get();
        let values =
            Float64Array::from_iter_values(reports.iter().flat_map(|r| r.y.iter().copied()));
        Arc::new(FixedSizeListArray::new(
            Arc::new(Field::new("item", DataType::Float64, false)),
            k as i32,
            Arc::new(values),
            None,
        ))
    }

    fn reports_from_array(&self, array: &dyn Array) -> Result<Vec<SheReport>, ArrowLdpError> {
        let k = self.domain_size().as_usize();
        she_values(array, k as u32, 0)?
            .chunks_exact(k)
            .enumerate()
            .map(|(row, y)| {
                let r = SheReport { y: y.to_vec() };
                self.validate(&r).map_err(|e| row_error(0, row)(e.into()))?;
                Ok(r)
            })
            .collect()
    }

    fn aggregate_array(
        &self,
        server: &mut ldp_core::SheSums,
        array: &dyn Array,
        first_row: u64,
    ) -> Result<(), ArrowLdpError> {
        let k = self.domain_size().as_usize();
        for (row, y) in she_values(array, k as u32, first_row)?
            .chunks_exact(k)
            .enumerate()
        {
            server.add_values(y).map_err(row_error(first_row, row))?;
        }
        Ok(())
    }
}
