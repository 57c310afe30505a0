//! The accumulator: ldp-core's aggregator fed with Arrow arrays by ldp-arrow, its state
//! shipped between partitions (and Ballista executors) as `(n, counts, skipped)`.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Float64Array, ListArray, StructArray, UInt64Array,
};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, UInt64Type};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::Accumulator;
use ldp_arrow::{ArrowLdpError, ArrowReports};
use ldp_core::estimate::FitOptions;
use ldp_core::multidim::{Multidim, MultidimError, MultidimSpec};
use ldp_core::{
    AggregateError, Aggregator, Clip, Estimator, FamilyMechanism, OnInvalid, Reason, Rejections,
    Spec, StateValues, dispatch, dispatch_multidim,
};

use crate::udaf::{Options, Output, execution_error, reason_fields};

/// An accumulator for `spec`'s reports.
pub(crate) fn accumulator_for(
    spec: &Spec,
    output: Output,
    options: &Options,
    clip: Clip,
    name: &'static str,
) -> Result<Box<dyn Accumulator>> {
    let mechanism = spec.build().map_err(|e| {
        datafusion::error::DataFusionError::Plan(format!("{name}: the spec cannot run: {e}"))
    })?;
    let (estimator, skip) = (options.estimator, options.on_invalid == OnInvalid::Skip);
    Ok(dispatch!(mechanism, m => {
        let server = m.server(clip);
        Box::new(LdpAccumulator {
            mechanism: m,
            server,
            rows: 0,
            skip,
            skipped: Rejections::default(),
            merged_skipped: [0; Reason::ALL.len()],
            output,
            estimator,
            fit: options.fit,
            name,
            multidim: None,
        }) as Box<dyn Accumulator>
    }))
}

/// An accumulator for the reports of attribute `attribute` of `multidim`'s collection:
/// the attribute's mechanism over its column, and at the end ldp-core's
/// [`Multidim::fit_attribute`] (the RS+ solutions' correction for the fakes).
pub(crate) fn attribute_accumulator_for(
    multidim: &MultidimSpec,
    attribute: usize,
    output: Output,
    options: &Options,
    clip: Clip,
    name: &'static str,
) -> Result<Box<dyn Accumulator>> {
    let cannot_run = |e: MultidimError| {
        datafusion::error::DataFusionError::Plan(format!("{name}: the spec cannot run: {e}"))
    };
    let (estimator, skip) = (options.estimator, options.on_invalid == OnInvalid::Skip);
    dispatch_multidim!(multidim, md => {
        let m = md.attribute(attribute).map_err(cannot_run)?.clone();
        let server = m.server(clip);
        Box::new(LdpAccumulator {
            mechanism: m,
            server,
            rows: 0,
            skip,
            skipped: Rejections::default(),
            merged_skipped: [0; Reason::ALL.len()],
            output,
            estimator,
            fit: options.fit,
            name,
            multidim: Some((md, attribute)),
        }) as Box<dyn Accumulator>
    })
    .map_err(cannot_run)
}

/// A mechanism the accumulator runs: its reports come from Arrow, its server (from
/// ldp-core, clipping as the options say) ships its state as `(n, values)`.
trait Server: FamilyMechanism + ArrowReports<Aggregator: State> + 'static {}

impl<M: FamilyMechanism + ArrowReports<Aggregator: State> + 'static> Server for M {}

/// An aggregator's state as `(n, values)`, and back: ldp-core's
/// [`Aggregator::state_values`] and [`Aggregator::merge_state`] as Arrow arrays, for
/// every aggregator (support counts, output counts, SHE's sums).
trait State: Aggregator {
    /// The values' Arrow type (`UInt64` counts or `Float64` sums).
    fn value_type(&self) -> DataType {
        match self.state_values() {
            StateValues::Counts(_) => DataType::UInt64,
            StateValues::Sums(_) => DataType::Float64,
        }
    }

    /// The counts (or sums) as one array.
    fn values(&self) -> ArrayRef {
        match self.state_values() {
            StateValues::Counts(c) => Arc::new(UInt64Array::from(c.to_vec())),
            StateValues::Sums(s) => Arc::new(Float64Array::from(s.to_vec())),
        }
    }

    /// Merges a partial state shipped as `(n, values)`, checked for consistency first.
    fn merge_parts(&mut self, n: u64, values: &dyn Array) -> Result<(), AggregateError> {
        let state = match self.state_values() {
            StateValues::Counts(_) => StateValues::Counts(
                values
                    .as_primitive_opt::<UInt64Type>()
                    .filter(|c| c.null_count() == 0)
                    .ok_or_else(|| corrupt("the counts are not a list of UInt64 without nulls"))?
                    .values(),
            ),
            StateValues::Sums(_) => StateValues::Sums(
                values
                    .as_primitive_opt::<Float64Type>()
                    .filter(|s| s.null_count() == 0)
                    .ok_or_else(|| corrupt("the sums are not a list of Float64 without nulls"))?
                    .values(),
            ),
        };
        self.merge_state(n, state)
    }
}

impl<A: Aggregator> State for A {}

fn corrupt(reason: &str) -> AggregateError {
    AggregateError::CorruptState {
        reason: reason.to_owned(),
    }
}

/// One-row `List<item>` holding `values`.
fn list_scalar(item: DataType, values: ArrayRef) -> ScalarValue {
    let list = ListArray::new(
        Arc::new(Field::new("item", item, true)),
        OffsetBuffer::from_lengths([values.len()]),
        values,
        None,
    );
    ScalarValue::List(Arc::new(list))
}

fn list_array(item: DataType, values: ArrayRef) -> ArrayRef {
    Arc::new(ListArray::new(
        Arc::new(Field::new("item", item, true)),
        OffsetBuffer::from_lengths([values.len()]),
        values,
        None,
    ))
}

struct LdpAccumulator<M: Server> {
    mechanism: M,
    server: M::Aggregator,
    /// Rows seen, to name an invalid one.
    rows: u64,
    /// Skip invalid reports (`"on_invalid": "skip"`) instead of failing the query.
    skip: bool,
    /// The reports this accumulator skipped, by reason.
    skipped: Rejections,
    /// Reports skipped by the partial states merged into this one, per [`Reason::ALL`].
    merged_skipped: [u64; Reason::ALL.len()],
    output: Output,
    estimator: Estimator,
    fit: FitOptions,
    name: &'static str,
    /// For one attribute of reports of several attributes: the collection and the
    /// attribute.
    multidim: Option<(Multidim<M>, usize)>,
}

impl<M: Server> std::fmt::Debug for LdpAccumulator<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LdpAccumulator")
            .field("spec", &self.mechanism.spec())
            .field("n", &self.server.count())
            .field("output", &self.output)
            .finish()
    }
}

impl<M: Server> LdpAccumulator<M> {
    /// Reports skipped here and in the partial states merged in, per [`Reason::ALL`].
    fn skipped_by_reason(&self) -> [u64; Reason::ALL.len()] {
        let mut counts = self.merged_skipped;
        for (c, &reason) in counts.iter_mut().zip(&Reason::ALL) {
            *c = c.saturating_add(self.skipped.count(reason));
        }
        counts
    }

    /// Whether a NULL row is no report of this column's attribute rather than a missing
    /// one: SMP's users report the attribute they sampled only.
    fn nulls_are_other_attributes(&self) -> bool {
        self.multidim
            .as_ref()
            .is_some_and(|(md, _)| md.solution().names_its_attribute())
    }

    /// Adds the rows of `column`, its first row being row `first_row` of the partition.
    fn add_rows(&mut self, column: &dyn Array, first_row: u64) -> Result<()> {
        let added = if self.skip {
            let at = |row: u64| format!("row {row} of the partition");
            self.mechanism.aggregate_array_skipping(
                &mut self.server,
                column,
                first_row,
                0,
                &mut self.skipped,
                &at,
            )
        } else {
            self.mechanism
                .aggregate_array(&mut self.server, column, first_row)
        };
        added.map_err(|e| match e {
            ArrowLdpError::Row { .. }
            | ArrowLdpError::Null { .. }
            | ArrowLdpError::OutOfRange { .. } => execution_error(
                self.name,
                format!("{e} (rows counted from the start of the partition)"),
            ),
            other => execution_error(self.name, other),
        })
    }
}

impl<M: Server> Accumulator for LdpAccumulator<M> {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let column = values[0].as_ref();
        match column.logical_nulls() {
            Some(nulls) if self.nulls_are_other_attributes() && nulls.null_count() > 0 => {
                // The column's type is checked even when every row is null.
                self.add_rows(column.slice(0, 0).as_ref(), self.rows)?;
                // Each run of rows with a report is read as a column of its own (a
                // zero-copy slice), its rows numbered in the partition.
                let mut start = 0;
                while start < column.len() {
                    if nulls.is_null(start) {
                        start += 1;
                        continue;
                    }
                    let end = (start..column.len())
                        .find(|&i| nulls.is_null(i))
                        .unwrap_or(column.len());
                    let run = column.slice(start, end - start);
                    self.add_rows(run.as_ref(), self.rows + start as u64)?;
                    start = end;
                }
            }
            _ => self.add_rows(column, self.rows)?,
        }
        self.rows += column.len() as u64;
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let bad = |what: &str| execution_error(self.name, format!("partial state: {what}"));
        let ns = states[0]
            .as_primitive_opt::<UInt64Type>()
            .ok_or_else(|| bad("n is not UInt64"))?;
        let lists = states[1]
            .as_list_opt::<i32>()
            .ok_or_else(|| bad("the values are not a list"))?;
        let skipped = states[2]
            .as_list_opt::<i32>()
            .ok_or_else(|| bad("skipped is not a list"))?;
        for row in 0..ns.len() {
            if ns.is_null(row) || lists.is_null(row) || skipped.is_null(row) {
                return Err(bad("a NULL entry"));
            }
            self.server
                .merge_parts(ns.value(row), lists.value(row).as_ref())
                .map_err(|e| execution_error(self.name, format!("partial state: {e}")))?;
            let by_reason = skipped.value(row);
            let by_reason = by_reason
                .as_primitive_opt::<UInt64Type>()
                .filter(|c| c.len() == Reason::ALL.len() && c.null_count() == 0)
                .ok_or_else(|| bad("skipped is not one UInt64 per reason"))?;
            for (total, c) in self.merged_skipped.iter_mut().zip(by_reason.values()) {
                *total = total
                    .checked_add(*c)
                    .ok_or_else(|| bad("skipped overflows"))?;
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::UInt64(Some(self.server.count())),
            list_scalar(self.server.value_type(), self.server.values()),
            list_scalar(
                DataType::UInt64,
                Arc::new(UInt64Array::from(self.skipped_by_reason().to_vec())),
            ),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        match self.output {
            Output::Estimate if self.server.count() == 0 => Ok(ScalarValue::List(Arc::new(
                ListArray::new_null(Arc::new(Field::new("item", DataType::Float64, true)), 1),
            ))),
            Output::Estimate => {
                let estimate = match &self.multidim {
                    Some((md, attribute)) => md
                        .fit_attribute(*attribute, &self.server, self.estimator, &self.fit)
                        .map_err(|e| execution_error(self.name, e)),
                    None => self
                        .server
                        .fit(self.estimator, &self.fit)
                        .map_err(|e| execution_error(self.name, e)),
                }?
                .values;
                Ok(list_scalar(
                    DataType::Float64,
                    Arc::new(Float64Array::from(estimate)),
                ))
            }
            Output::Counts => {
                let value_name = if self.server.value_type() == DataType::Float64 {
                    "sums"
                } else {
                    "counts"
                };
                let values = list_array(self.server.value_type(), self.server.values());
                let by_reason = self.skipped_by_reason();
                let total = by_reason.iter().fold(0u64, |a, &c| a.saturating_add(c));
                let fields = vec![
                    Field::new("n", DataType::UInt64, false),
                    Field::new(value_name, values.data_type().clone(), false),
                    Field::new("skipped", DataType::UInt64, false),
                    Field::new(
                        "skipped_by_reason",
                        DataType::Struct(reason_fields()),
                        false,
                    ),
                ];
                let one = |c: u64| -> ArrayRef { Arc::new(UInt64Array::from(vec![c])) };
                let reasons = StructArray::new(
                    reason_fields(),
                    by_reason.iter().map(|&c| one(c)).collect(),
                    None,
                );
                Ok(ScalarValue::Struct(Arc::new(StructArray::new(
                    fields.into(),
                    vec![
                        one(self.server.count()),
                        values,
                        one(total),
                        Arc::new(reasons),
                    ],
                    None,
                ))))
            }
        }
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + 8 * self.mechanism.domain_size().as_usize()
    }
}
