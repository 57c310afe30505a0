//! The aggregate functions `ldp_estimate` and `ldp_counts`: their signature, return
//! types, partial state, and the arguments read from the query.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, TypeSignature, Volatility,
};
use datafusion::physical_expr::expressions::Literal;
use ldp_core::estimate::{FitOptions, FitOptionsError};
use ldp_core::multidim::{MultidimError, MultidimSpec};
use ldp_core::{Clip, ClipBound, Estimator, OnInvalid, Reason, Spec};

use crate::accumulator::{accumulator_for, attribute_accumulator_for};

/// The name of the function returning the estimate.
pub const ESTIMATE: &str = "ldp_estimate";
/// The name of the function returning the mergeable state.
pub const COUNTS: &str = "ldp_counts";

/// What an [`LdpAggregate`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Output {
    /// `List<Float64>`: the frequency estimate of every item (NULL over no rows).
    Estimate,
    /// `Struct<n: UInt64, counts: List<UInt64>, skipped: UInt64, skipped_by_reason:
    /// Struct<malformed: UInt64, too_long: UInt64, null, shape, length, out_of_range,
    /// unsorted, duplicate, non_finite, magnitude>>` (SHE: `sums: List<Float64>` for
    /// `counts`): the state that callers merge or post-process themselves, and the reports
    /// skipped as invalid (`"on_invalid": "skip"`), in all and by
    /// [`Reason`](ldp_core::Reason).
    Counts,
}

impl Output {
    /// The SQL name of the function with this output.
    pub fn function_name(self) -> &'static str {
        match self {
            Output::Estimate => ESTIMATE,
            Output::Counts => COUNTS,
        }
    }
}

/// `ldp_estimate(report, spec [, options])` or `ldp_counts(report, spec [, options])`.
///
/// - `report`: the report column as `ldp-arrow` writes it.
/// - `spec`: the mechanism's spec as a JSON string literal, as stored under `ldp.spec` in
///   the files ([`crate::spec_literal`] quotes it for SQL); or, over column `report_j` of
///   reports of several attributes per user ([`crate::register_multidim_reports`]),
///   `{"multidim": <the ldp.multidim spec of the files>, "attribute": j}`
///   ([`crate::attribute_literal`]). Attribute `j` is then estimated as
///   [`MultidimAggregator::fit`](ldp_core::multidim::MultidimAggregator::fit) does, by
///   ldp-core's [`Multidim::fit_attribute`](ldp_core::multidim::Multidim::fit_attribute):
///   SPL and SMP as the attribute's mechanism does (SMP over the users who sampled it:
///   a NULL is another attribute's user, neither counted nor skipped), the RS+
///   solutions with the fakes taken out. SHE needs `"she_clip": "none"` there, as
///   `ldp aggregate --attributes` does. Each column is read and validated on its own:
///   the checks that need the whole row (an SMP row of no report or two) are
///   `ldp aggregate --attributes`'s.
/// - `options` (optional JSON string literal): `{"estimator": "unbiased" | "base-pos" |
///   "norm" | "clip" | "norm-cut" | "norm-sub" | "simplex" | "base-cut" | "mle-apx" |
///   "ibu" | "ibu-squarem" | "mle", "max_iterations": <n>, "tolerance": <t>, "she_clip":
///   <number> | "none" | "recommended", "on_invalid": "refuse" | "skip"}` (the older
///   `"clip-renormalize"` and `"norm-mul"` are read as `"clip"`; the cap and tolerance
///   bound `"ibu"`, `"ibu-squarem"` and `"mle"` only).
///   SHE reports are clipped at the server to `[-C, C]` with `C = 1 + 40/eps` unless
///   `she_clip` says otherwise, as the `ldp` tool does.
///
/// The partial state is `(n: UInt64, counts: List<UInt64>, skipped: List<UInt64>)` (SHE:
/// float sums; `skipped` one count per [`Reason`](ldp_core::Reason), in `Reason::ALL`'s
/// order), merged element-wise after a consistency check, so the functions run over any
/// number of partitions and under Ballista. Every report is validated: by default
/// (`"on_invalid": "refuse"`) an invalid one fails the query with an error naming its row;
/// with `"skip"` invalid and NULL reports are left out and counted, and
/// `ldp_counts(...)['skipped']` says how many and
/// `ldp_counts(...)['skipped_by_reason']['out_of_range']` how many for one reason (the
/// estimate is that of the valid reports).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LdpAggregate {
    output: Output,
    signature: Signature,
}

impl LdpAggregate {
    /// The function that returns `output`.
    pub fn new(output: Output) -> Self {
        Self {
            output,
            signature: Signature::one_of(
                vec![TypeSignature::Any(2), TypeSignature::Any(3)],
                Volatility::Immutable,
            ),
        }
    }
}

/// `ldp_estimate` as a DataFusion aggregate function.
pub fn ldp_estimate() -> Arc<AggregateUDF> {
    Arc::new(AggregateUDF::from(LdpAggregate::new(Output::Estimate)))
}

/// `ldp_counts` as a DataFusion aggregate function.
pub fn ldp_counts() -> Arc<AggregateUDF> {
    Arc::new(AggregateUDF::from(LdpAggregate::new(Output::Counts)))
}

/// Both functions.
pub fn functions() -> [Arc<AggregateUDF>; 2] {
    [ldp_estimate(), ldp_counts()]
}

/// SHE reports are float vectors; every other family's state is integer counts.
fn is_she_column(report: &DataType) -> bool {
    matches!(report, DataType::FixedSizeList(item, _) | DataType::List(item)
        if item.data_type() == &DataType::Float64)
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

/// The state's (name, type) pairs, for a report column of type `report`.
fn state_parts(report: &DataType) -> [(&'static str, DataType); 3] {
    let values = if is_she_column(report) {
        ("sums", list_of(DataType::Float64))
    } else {
        ("counts", list_of(DataType::UInt64))
    };
    [
        ("n", DataType::UInt64),
        values,
        ("skipped", list_of(DataType::UInt64)),
    ]
}

/// `ldp_counts`'s fields: `n`, `counts` (or `sums`), `skipped` and `skipped_by_reason`.
pub(crate) fn counts_fields(report: &DataType) -> Fields {
    let [n, values, _] = state_parts(report);
    Fields::from(vec![
        Field::new(n.0, n.1, false),
        Field::new(values.0, values.1, false),
        Field::new("skipped", DataType::UInt64, false),
        Field::new(
            "skipped_by_reason",
            DataType::Struct(reason_fields()),
            false,
        ),
    ])
}

/// The SQL field name of a reason's count in `skipped_by_reason` (`out_of_range`).
fn reason_field(reason: Reason) -> String {
    reason.name().replace('-', "_")
}

/// The fields of `skipped_by_reason`: `malformed: UInt64, too_long: UInt64, ...`, one
/// count per [`Reason`].
pub(crate) fn reason_fields() -> Fields {
    Reason::ALL
        .iter()
        .map(|&r| Field::new(reason_field(r), DataType::UInt64, false))
        .collect()
}

fn is_string(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
    )
}

impl AggregateUDFImpl for LdpAggregate {
    fn name(&self) -> &str {
        self.output.function_name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        let name = self.name();
        if !(2..=3).contains(&arg_types.len()) {
            return plan_err!("{name}(report, spec [, options]) takes 2 or 3 arguments");
        }
        if let Some(t) = arg_types[1..].iter().find(|t| !is_string(t)) {
            return plan_err!("{name}: the spec and options are JSON string literals, not {t}");
        }
        Ok(match self.output {
            Output::Estimate => list_of(DataType::Float64),
            Output::Counts => DataType::Struct(counts_fields(&arg_types[0])),
        })
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let report = args
            .input_fields
            .first()
            .map(|f| f.data_type().clone())
            .unwrap_or(DataType::Null);
        Ok(state_parts(&report)
            .map(|(part, t)| Arc::new(Field::new(format_state_name(args.name, part), t, true)))
            .to_vec())
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let name = self.output.function_name();
        let spec_text = literal_text(&args, 1, name, "spec")?.ok_or_else(|| {
            datafusion::error::DataFusionError::Plan(format!("{name}: the spec is NULL"))
        })?;
        let target = Target::parse(&spec_text, name)?;
        let options = match literal_text(&args, 2, name, "options")? {
            Some(text) => Options::parse(&text, name)?,
            None => Options::default(),
        };
        let family = match &target {
            Target::Spec(spec) => spec.family(),
            Target::Attribute { spec, .. } => spec.family(),
        };
        let clip = match options.she_clip {
            None => Clip::Recommended,
            Some(clip) => clip
                .check_for(family)
                .map_err(|e| plan_error(format!("{name}: she_clip: {e}")))?,
        };
        if matches!(target, Target::Attribute { .. }) && family.clips() && clip != Clip::Off {
            // As `ldp aggregate --attributes`: the RS+ correction is that of the paper's
            // unclipped sums.
            return plan_err!(
                "{name}: the server of several attributes cannot clip SHE's coordinates: give the options '{{\"she_clip\": \"none\"}}'"
            );
        }
        match &target {
            Target::Spec(spec) => accumulator_for(spec, self.output, &options, clip, name),
            Target::Attribute {
                multidim,
                attribute,
                ..
            } => attribute_accumulator_for(multidim, *attribute, self.output, &options, clip, name),
        }
    }
}

/// What the second argument names: one mechanism's reports, or one attribute of reports
/// of several attributes per user.
#[derive(Debug)]
enum Target {
    /// A spec, as `ldp.spec` records it.
    Spec(Spec),
    /// `{"multidim": <MultidimSpec>, "attribute": j}` ([`crate::attribute_literal`]).
    Attribute {
        multidim: MultidimSpec,
        attribute: usize,
        /// The attribute's spec (at the solution's per-report budget).
        spec: Spec,
    },
}

impl Target {
    fn parse(text: &str, name: &str) -> Result<Self> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Attribute {
            multidim: MultidimSpec,
            attribute: usize,
        }
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| plan_error(format!("{name}: the spec {text} is not a valid spec: {e}")))?;
        if !value.get("multidim").is_some_and(|_| value.is_object()) {
            let spec = serde_json::from_value(value).map_err(|e| {
                plan_error(format!("{name}: the spec {text} is not a valid spec: {e}"))
            })?;
            return Ok(Target::Spec(spec));
        }
        let Attribute {
            multidim,
            attribute,
        } = serde_json::from_value(value).map_err(|e| {
            plan_error(format!(
                "{name}: {text} does not name an attribute of reports of several attributes: {e} (expected {{\"multidim\": <the ldp.multidim spec of the files>, \"attribute\": <j>}})"
            ))
        })?;
        let spec = *multidim.specs().get(attribute).ok_or_else(|| {
            plan_error(format!(
                "{name}: {}",
                MultidimError::NoSuchAttribute {
                    attribute,
                    d: multidim.specs().len(),
                }
            ))
        })?;
        Ok(Target::Attribute {
            multidim,
            attribute,
            spec,
        })
    }
}

fn plan_error(message: String) -> datafusion::error::DataFusionError {
    datafusion::error::DataFusionError::Plan(message)
}

/// The text of string-literal argument `index`, if the call has it (`Some(None)` never:
/// a NULL literal is `None`, as if absent).
fn literal_text(
    args: &AccumulatorArgs,
    index: usize,
    name: &str,
    what: &str,
) -> Result<Option<String>> {
    let Some(expr) = args.exprs.get(index) else {
        return Ok(None);
    };
    let Some(literal) = expr.downcast_ref::<Literal>() else {
        return plan_err!("{name}: the {what} must be a string literal, not {expr}");
    };
    match literal.value() {
        v if v.is_null() => Ok(None),
        v => match v.try_as_str() {
            Some(Some(text)) => Ok(Some(text.to_owned())),
            _ => plan_err!("{name}: the {what} must be a string literal, not {v}"),
        },
    }
}

/// The third argument.
#[derive(Debug, Default)]
pub(crate) struct Options {
    pub(crate) estimator: Estimator,
    /// The iterative estimators' cap and tolerance.
    pub(crate) fit: FitOptions,
    /// `None`: not given (the recommended bound).
    she_clip: Option<Clip>,
    pub(crate) on_invalid: OnInvalid,
}

impl Options {
    fn parse(text: &str, name: &str) -> Result<Self> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            #[serde(default)]
            estimator: Estimator,
            #[serde(default)]
            she_clip: Option<serde_json::Value>,
            #[serde(default)]
            on_invalid: OnInvalid,
            #[serde(default)]
            max_iterations: Option<u32>,
            #[serde(default)]
            tolerance: Option<f64>,
        }
        let raw: Raw = serde_json::from_str(text).map_err(|e| {
            let estimators = Estimator::ALL.map(Estimator::name).join(" | ");
            plan_error(format!(
                "{name}: options {text}: {e} (expected {{\"estimator\": {estimators}, \"max_iterations\": <n>, \"tolerance\": <t>, \"she_clip\": <number> | \"none\" | \"recommended\", \"on_invalid\": \"refuse\" | \"skip\"}})"
            ))
        })?;
        let she_clip = match raw.she_clip {
            None => None,
            Some(serde_json::Value::String(s)) => Some(
                s.parse::<Clip>()
                    .map_err(|e| plan_error(format!("{name}: she_clip {s:?}: {e}")))?,
            ),
            Some(serde_json::Value::Number(n)) => {
                let bound = n.as_f64().unwrap_or(f64::NAN);
                Some(Clip::At(ClipBound::new(bound).map_err(|e| {
                    plan_error(format!("{name}: she_clip {bound}: {e}"))
                })?))
            }
            Some(other) => {
                return plan_err!(
                    "{name}: she_clip must be a number, \"none\" or \"recommended\", not {other}"
                );
            }
        };
        let fit = FitOptions::for_estimator(raw.estimator, raw.max_iterations, raw.tolerance)
            .map_err(|e| match e {
                FitOptionsError::NotIterative { estimator, .. } => plan_error(format!(
                    "{name}: max_iterations and tolerance bound the \"ibu\" and \"mle\" estimators, not {:?}",
                    estimator.name()
                )),
                FitOptionsError::Invalid { reason, .. } => plan_error(format!("{name}: {reason}")),
            })?;
        Ok(Self {
            estimator: raw.estimator,
            fit,
            she_clip,
            on_invalid: raw.on_invalid,
        })
    }
}

/// An execution error of `name` (an invalid report, a corrupt partial state).
pub(crate) fn execution_error(
    name: &str,
    e: impl std::fmt::Display,
) -> datafusion::error::DataFusionError {
    datafusion::error::DataFusionError::Execution(format!("{name}: {e}"))
}
