//! The closed forms and the choice of protocol, as `ldp analyze`, `ldp tune` and
//! `ldp frontier` give them: the same library calls, the same column names.
//!
//! Every `options` object is read straight into ldp-optimize's `TuneRequest`, with the
//! settings' keyword names as keys (`{asr_max: 0.1, bits_max: 64}`, `{w_asr: 0.7}`): a
//! key left out takes the default, and a misspelt key, or a key the call does not use, is
//! refused by name.

use ldp_core::{FamilyParams, Protocol, ProtocolSet};
use ldp_optimize::{
    ANALYSIS_COLUMNS, AnalysisError, AnalysisRequest, Objective, ObjectiveSet, SettingGroup,
    TuneRequest,
};
use serde_json::{Map, Value, json};
use wasm_bindgen::prelude::*;

use crate::args;
use crate::error::{Kind, error, request};

/// The `param` cell as the CLI prints it: the family's parameter, `null` for a family
/// without one, `name=value` pairs joined by `;` for a family with several.
fn param_cell(params: &FamilyParams) -> Value {
    match params.named_values().as_slice() {
        [] => Value::Null,
        [(_, v)] => json!(v),
        named => Value::String(
            named
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(";"),
        ),
    }
}

/// The protocols of a comma-separated list, or `all`.
fn protocols(list: &str) -> Result<Vec<Protocol>, JsValue> {
    ProtocolSet::one_shot(&[list]).map_err(|e| error(Kind::Param, format!("protocol: {e}")))
}

/// `ldp analyze --protocol LIST --k K --eps E` as an array of rows with its columns
/// (`protocol, k, eps, param, asr, mse, bias, epg, bits, server_cost, client_cost`; `epg`
/// is `null` where it is unbounded), plus `spec`, the instance's JSON form. A row that
/// fails alone (an adaptive protocol with no admissible parameter) has `error` instead of
/// the numbers. `options`: the tuning of adaptive protocols (`w_asr`, `w_epg`, `w_bits`,
/// `search`, `strategy`), `lh_asr` (`"paper"` or `"exact"`), the poisoning setting of
/// the `epg` column (`beta`, `targets`, `target_mass`), and the users and Zipf exponent
/// behind the bias of FLH and the sketches (`bias_users`, `bias_zipf`; `mse` includes
/// `bias`).
///
/// ```js
/// const rows = analyze("all", 100, 1.0, { w_asr: 0.5 });
/// rows.find(r => r.protocol === "oue").mse; // the per-user variance
/// ```
#[wasm_bindgen]
pub fn analyze(protocol: &str, k: f64, eps: f64, options: JsValue) -> Result<JsValue, JsValue> {
    let tuning: TuneRequest = args::options(&options)?;
    if let Some(knob) = tuning.first_given(&[
        SettingGroup::Bounds,
        SettingGroup::Collections,
        SettingGroup::Change,
    ]) {
        return Err(error(
            Kind::Param,
            format!("{}: analyze takes no bounds (choose does)", knob.name()),
        ));
    }
    let asked = AnalysisRequest {
        protocols: protocols(protocol)?,
        ks: vec![args::domain(k)?],
        eps: vec![args::budget(eps)?],
        param: None,
        tuning,
        collections: None,
        keep: Default::default(),
    };
    let rows = ldp_optimize::analyze(&asked).map_err(|e| match e {
        AnalysisError::Request(e) => request(e),
        e => error(Kind::Param, e),
    })?;
    let out: Vec<Value> = rows
        .iter()
        .map(|row| {
            let mut object = Map::new();
            object.insert("protocol".into(), json!(row.protocol.name()));
            object.insert("k".into(), json!(row.k.get()));
            match &row.outcome {
                Ok(a) => {
                    let numbers = a.numbers();
                    for (column, value) in ANALYSIS_COLUMNS[2..].iter().zip(numbers) {
                        object.insert((*column).into(), json!(value));
                    }
                    object.insert("param".into(), param_cell(&a.instance.spec.params()));
                    object.insert("spec".into(), json!(a.instance.spec));
                }
                Err(e) => {
                    object.insert("eps".into(), json!(row.eps.get()));
                    object.insert("error".into(), json!(e.to_string()));
                }
            }
            Value::Object(object)
        })
        .collect();
    crate::to_js(&out)
}

/// `ldp tune --protocol all --k K --eps E --asr-max A [--bits-max B] [--epg-max G]`: the
/// lowest-MSE instance of every protocol under the bounds (`options.asr_max`,
/// `bits_max`, `epg_max`; `asr_after`: the ASR after that many linked reports; `bias_users`,
/// `bias_zipf`: the bias of FLH and the sketches in the MSE). Returns
/// `{protocol, k, eps, strategy, param, asr, mse, bias, epg, bits, spec}` (`mse` includes
/// `bias`); throws a `TuningError` when no instance meets the bounds, saying what is
/// reachable.
#[wasm_bindgen]
pub fn choose(k: f64, eps: f64, options: JsValue) -> Result<JsValue, JsValue> {
    let settings: TuneRequest = args::options(&options)?;
    let choice = settings
        .choose(args::domain(k)?, args::budget(eps)?)
        .map_err(request)?;
    let bias = settings.bias().map_err(request)?.per_user(&choice.spec);
    let o = choice.objectives;
    crate::to_js(&json!({
        "protocol": choice.protocol.name(),
        "k": choice.spec.k().get(),
        "eps": choice.spec.eps().get(),
        "strategy": "eps-constraint",
        "param": param_cell(&choice.spec.params()),
        "asr": o.asr,
        "mse": o.mse,
        "bias": bias,
        "epg": o.epg.is_finite().then_some(o.epg),
        "bits": o.bits,
        "spec": choice.spec,
    }))
}

/// `ldp tune --protocol P --k K --eps E`: an adaptive protocol (the error for another one
/// names them) tuned with `options` (weights, `search`, `strategy`, bounds). Returns
/// `{protocol, k, eps, strategy, param, asr, mse, epg, bits, fell_back, spec}`.
#[wasm_bindgen]
pub fn tune(protocol: &str, k: f64, eps: f64, options: JsValue) -> Result<JsValue, JsValue> {
    let settings: TuneRequest = args::options(&options)?;
    let p = args::protocol(protocol)?;
    let t = settings
        .tune(p, args::domain(k)?, args::budget(eps)?)
        .map_err(request)?;
    let o = t.objectives;
    crate::to_js(&json!({
        "protocol": p.name(),
        "k": t.spec.k().get(),
        "eps": t.spec.eps().get(),
        "strategy": t.strategy.name(),
        "param": t.param(),
        "asr": o.asr,
        "mse": o.mse,
        "epg": o.epg,
        "bits": o.bits,
        "fell_back": t.fell_back,
        "spec": t.spec,
    }))
}

/// `ldp frontier --protocol P --k K --eps E --objectives LIST`: the Pareto frontier of an
/// adaptive protocol's parameter over its paper space, in `objectives` (two or more of
/// `asr, mse, epg, bits`, comma-separated; default `"asr,mse"`). Returns an array of
/// `{param, asr, mse, ...}` in parameter order. With `maxPoints` (at least 2), at most
/// that many, evenly chosen by position with both ends kept: what a plot draws (ASS's
/// frontier has 73,106 points at k = 100,000; thinned here, not after they became
/// JavaScript objects, the page's answer took 117 ms at eps = 2 instead of 339).
#[wasm_bindgen]
pub fn frontier(
    protocol: &str,
    k: f64,
    eps: f64,
    objectives: Option<String>,
    options: JsValue,
    #[wasm_bindgen(js_name = maxPoints)] max_points: Option<f64>,
) -> Result<JsValue, JsValue> {
    let settings: TuneRequest = args::options(&options)?;
    let p = args::protocol(protocol)?;
    let objectives: Vec<Objective> = objectives
        .as_deref()
        .unwrap_or("asr,mse")
        .split(',')
        .map(|o| {
            o.trim()
                .parse()
                .map_err(|e| error(Kind::Param, format!("objectives: {e}")))
        })
        .collect::<Result<_, _>>()?;
    let front = settings
        .frontier(p, args::domain(k)?, args::budget(eps)?, &objectives)
        .map_err(request)?;
    let set = ObjectiveSet::of(&objectives);
    let kept = match max_points {
        None => (0..front.len()).collect(),
        Some(m) => {
            let m = args::whole("maxPoints", m, f64::from(u32::MAX))? as usize;
            if m < 2 {
                return Err(error(Kind::Param, "maxPoints: at least 2 (both ends)"));
            }
            evenly(front.len(), m)
        }
    };
    let rows: Vec<Value> = kept
        .into_iter()
        .map(|i| &front[i])
        .map(|c| {
            let mut object = Map::new();
            object.insert("param".into(), json!(c.param()));
            for o in set.iter() {
                object.insert(o.name().into(), json!(c.objectives.get(o)));
            }
            Value::Object(object)
        })
        .collect();
    crate::to_js(&rows)
}

/// At most `m` (at least 2) of the positions `0..len`, evenly spaced, both ends kept: the
/// page's thinning of a frontier (`round(i (len - 1) / (m - 1))`, as JavaScript rounds).
fn evenly(len: usize, m: usize) -> Vec<usize> {
    if len <= m {
        return (0..len).collect();
    }
    let step = (len - 1) as f64 / (m - 1) as f64;
    (0..m).map(|i| (i as f64 * step).round() as usize).collect()
}
