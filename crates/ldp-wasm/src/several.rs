//! Several attributes per user, measured on a table, as `ldp simulate --dataset FILE.csv
//! --solution NAME` gives it: the same library calls (`ldp_attack::Table::from_csv_labels`,
//! `ldp_attack::multidim::measure_table`), the same seeds, the same numbers (to rounding:
//! the attribute-inference attacker's posteriors go through `exp` and `ln`, which
//! WebAssembly's math library may round otherwise than the system's, so a near tie can
//! fall the other way).

use ldp_attack::Table;
use ldp_attack::multidim::{TableMeasurement, measure_table};
use ldp_core::multidim::{MultidimSpec, Priors, Solution};
use ldp_core::{ParamError, Spec, dispatch_multidim};
use ldp_optimize::{InstanceRequest, TuneRequest};
use serde::Deserialize;
use serde_json::json;
use wasm_bindgen::prelude::*;

use crate::args;
use crate::error::{Kind, error};
use crate::to_js;

/// A table of several attributes: a header line of names, then one line of labels per
/// user, coded as `ldp simulate --dataset FILE.csv` codes it (each column's distinct
/// values sorted, numerically when they are all numbers).
///
/// ```js
/// const t = SeveralColumns.fromCsv("sex,age\nF,30\nM,40\nF,40\n");
/// t.names;   // ["sex", "age"]
/// t.domains; // [2, 2]
/// ```
#[wasm_bindgen]
pub struct SeveralColumns {
    table: Table,
}

#[wasm_bindgen]
impl SeveralColumns {
    /// The table of a CSV text.
    #[wasm_bindgen(js_name = fromCsv)]
    pub fn from_csv(text: &str) -> Result<SeveralColumns, JsValue> {
        Table::from_csv_labels(text)
            .map(|table| SeveralColumns { table })
            .map_err(|e| error(Kind::Input, format!("table: {e}")))
    }

    /// The attributes' names.
    #[wasm_bindgen(getter)]
    pub fn names(&self) -> Vec<String> {
        self.table.names().to_vec()
    }

    /// Each attribute's domain size.
    #[wasm_bindgen(getter)]
    pub fn domains(&self) -> Vec<u32> {
        self.table.domain_sizes().iter().map(|k| k.get()).collect()
    }

    /// The number of users (rows).
    #[wasm_bindgen(getter)]
    pub fn users(&self) -> usize {
        self.table.len()
    }
}

/// The options of [`measure_several`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Options {
    runs: f64,
    seed: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            runs: 10.0,
            seed: 0.0,
        }
    }
}

/// The most runs one call measures.
const MAX_RUNS: f64 = 10_000.0;

/// `ldp simulate --dataset FILE.csv --solution SOLUTION --protocol PROTOCOL --eps EPS
/// --runs R --seed S` (with `--prior-from-data` for rsrfd, whose fakes follow the table's
/// own marginals): `{solution, protocol, eps, runs, users, attributes, joint_asr,
/// joint_asr_se, inference, inference_se, inference_baseline}`, `attributes` holding per
/// attribute `{attribute, k, eps_report, mse, mse_se, asr, asr_se}` as the CLI's columns.
/// A standard error after one run is `null`; `inference` is `null` outside the RS+
/// solutions. An adaptive protocol is tuned per attribute with the default weights.
///
/// ```js
/// measureSeveral("rsfd", "oue", 2, t, { runs: 10, seed: 1 }).joint_asr;
/// ```
#[wasm_bindgen(js_name = measureSeveral)]
pub fn measure_several(
    solution: &str,
    protocol: &str,
    eps: f64,
    table: &SeveralColumns,
    options: JsValue,
) -> Result<JsValue, JsValue> {
    let solution: Solution = solution
        .parse()
        .map_err(|e| error(Kind::Param, format!("solution: {e}")))?;
    let protocol = args::protocol(protocol)?;
    let eps = args::budget(eps)?;
    let o: Options = args::options(&options)?;
    let (runs, seed) = args::runs_and_seed(o.runs, o.seed, MAX_RUNS)?;
    let t = &table.table;
    let priors = match solution {
        Solution::RsRfd => Some(
            Priors::new(t.marginals()).map_err(|e| error(Kind::Input, format!("priors: {e}")))?,
        ),
        _ => None,
    };
    let spec_of = |k, e| -> Result<Spec, ParamError> {
        let request = InstanceRequest {
            protocol,
            k,
            eps: e,
            param: None,
            tuning: TuneRequest::default(),
        };
        request
            .resolve()
            .map(|i| i.spec)
            .map_err(|e| ParamError::Parameter {
                name: "protocol",
                description: "the attribute's instance",
                requirement: format!("be resolved ({e})"),
                value: f64::NAN,
            })
    };
    let spec = MultidimSpec::new(solution, eps, t.domain_sizes(), priors, spec_of)
        .map_err(|e| error(Kind::Param, e))?;
    let m = dispatch_multidim!(&spec, m => measure_table(&m, t, runs, seed, &|| false))
        .map_err(|e| error(Kind::Param, e))?
        .map_err(|e| error(Kind::Input, e))?;
    let summary = TableMeasurement::summary;
    let se = |e: ldp_core::simulation::Estimate| e.se.is_finite().then_some(e.se);
    let attributes: Vec<_> = (0..t.dimensions())
        .map(|j| {
            let s = &spec.specs()[j];
            let (mse, asr) = (summary(&m.mse[j]), summary(&m.asr[j]));
            json!({
                "attribute": t.names()[j],
                "k": s.k().get(),
                "eps_report": s.eps().get(),
                "mse": mse.mean,
                "mse_se": se(mse),
                "asr": asr.mean,
                "asr_se": se(asr),
            })
        })
        .collect();
    let joint = summary(&m.joint);
    let inference = m.inference.as_deref().map(summary);
    to_js(&json!({
        "solution": solution.name(),
        "protocol": protocol.name(),
        "eps": eps.get(),
        "runs": runs,
        "users": t.len(),
        "attributes": attributes,
        "joint_asr": joint.mean,
        "joint_asr_se": se(joint),
        "inference": inference.map(|e| e.mean),
        "inference_se": inference.and_then(se),
        "inference_baseline": inference.map(|_| 1.0 / t.dimensions() as f64),
    }))
}
