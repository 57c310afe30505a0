//! Measurement on real reports, as `ldp simulate --items FILE` gives it: the same library
//! call (`ldp_attack::measure`), the same seeds, the same column names. A page measures
//! every protocol on the user's own table by calling [`measure`] from Web Workers, one
//! instance per call; cancelling is terminating the worker.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use ldp_analytic::compare::Row;
use ldp_attack::{MeasureConfig, Prior, ReconstructionAttack};
use ldp_core::Spec;
use serde::Deserialize;
use serde_json::json;
use wasm_bindgen::prelude::*;

use crate::args;
use crate::error::{Kind, error};
use crate::to_js;

/// The users of one attribute: each user's item, in the order they report, as the lines
/// of `ldp simulate --items FILE`.
///
/// ```js
/// const users = new Population(3, new Uint32Array([0, 0, 1, 2, 0]));
/// users.users; // 5
/// ```
#[wasm_bindgen]
pub struct Population {
    inner: ldp_attack::Population,
}

#[wasm_bindgen]
impl Population {
    /// The users holding `items` (a `Uint32Array`, each below `k`).
    #[wasm_bindgen(constructor)]
    pub fn new(k: f64, items: &[u32]) -> Result<Population, JsValue> {
        let k = args::domain(k)?;
        ldp_attack::Population::from_items(k, items.to_vec())
            .map(|inner| Population { inner })
            .map_err(|e| error(Kind::Input, format!("items: {e}")))
    }

    /// The domain size.
    #[wasm_bindgen(getter)]
    pub fn k(&self) -> u32 {
        self.inner.k().get()
    }

    /// The number of users.
    #[wasm_bindgen(getter)]
    pub fn users(&self) -> usize {
        self.inner.len()
    }
}

/// The options of [`measure`]: `ldp simulate`'s flags of the same names.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct MeasureOptions {
    runs: f64,
    seed: f64,
    /// `"paper"` (uniform prior) or `"map"` (the population's own distribution as the
    /// prior: `--attack map --prior-from-data`).
    attack: String,
}

impl Default for MeasureOptions {
    fn default() -> Self {
        MeasureOptions {
            runs: 10.0,
            seed: 0.0,
            attack: "paper".into(),
        }
    }
}

/// The most runs one call measures: enough for any band, small enough to answer.
const MAX_RUNS: f64 = 10_000.0;

thread_local! {
    /// The `onRun` callback of the [`measure`] call under way.
    static ON_RUN: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
}

/// Calls the `onRun` callback of the [`measure`] call under way, if any, with the runs
/// done. A callback that throws is not the measurement's failure: it is ignored.
fn runs_done(done: u64) {
    ON_RUN.with(|f| {
        if let Some(f) = &*f.borrow() {
            let _ = f.call1(&JsValue::NULL, &JsValue::from_f64(done as f64));
        }
    });
}

/// Holds `on_run` as the callback of the call under way, until dropped.
struct OnRun;

impl OnRun {
    fn set(on_run: Option<js_sys::Function>) -> OnRun {
        ON_RUN.with(|f| *f.borrow_mut() = on_run);
        OnRun
    }
}

impl Drop for OnRun {
    fn drop(&mut self) {
        ON_RUN.with(|f| *f.borrow_mut() = None);
    }
}

/// `ldp simulate --items FILE --runs R --seed S [--attack map --prior-from-data]` for the
/// instance `spec` (its JSON form, as `analyze` rows and `Client.spec` give it): `{runs,
/// users, asr, asr_se, asr_expected, mse, mse_se, mse_expected, kl, kl_se, rank_corr,
/// rank_corr_se}`, the CLI's columns and numbers. A standard error after one run is
/// `null`, and so is `rank_corr` where the top items' true frequencies all tie.
/// `options`: `runs` (default 10), `seed` (default 0), `attack` (`"paper"` or `"map"`).
/// `onRun`, if given, is called with the number of runs done before each run starts
/// (0, 1, ..., runs - 1): a progress bar within one long call.
///
/// ```js
/// const spec = analyze("oue", 3, 1.0)[0].spec;
/// const m = measure(JSON.stringify(spec), users, { runs: 20, seed: 1, attack: "map" },
///   (done) => postMessage({ done }));
/// m.mse; m.mse_se; m.asr; m.asr_expected;
/// ```
#[wasm_bindgen]
pub fn measure(
    spec: &str,
    population: &Population,
    options: JsValue,
    #[wasm_bindgen(js_name = onRun)] on_run: Option<js_sys::Function>,
) -> Result<JsValue, JsValue> {
    let spec: Spec =
        serde_json::from_str(spec).map_err(|e| error(Kind::Param, format!("spec: {e}")))?;
    let o: MeasureOptions = args::options(&options)?;
    let (runs, seed) = args::runs_and_seed(o.runs, o.seed, MAX_RUNS)?;
    let pop = &population.inner;
    let prior = match o.attack.as_str() {
        "paper" => None,
        "map" => Some(Prior::from_population(pop)),
        other => {
            return Err(error(
                Kind::Param,
                format!("attack: expected \"paper\" or \"map\", got {other:?}"),
            ));
        }
    };
    let config = MeasureConfig {
        runs,
        seed,
        attack: prior
            .clone()
            .map_or(ReconstructionAttack::Paper, ReconstructionAttack::Map),
        poisoning: None,
    };
    // Asked before each run, on this thread: the runs started so far are the runs done.
    let _on_run = OnRun::set(on_run);
    let started = AtomicU64::new(0);
    let before_run = || {
        runs_done(started.fetch_add(1, Ordering::Relaxed));
        false
    };
    let m = ldp_attack::measure_until(&spec, pop, &config, &before_run)
        .map_err(|e| error(Kind::Param, e))?;
    let asr = match &prior {
        None => Row::asr(&spec, m.asr),
        Some(p) => {
            Row::map_asr(&spec, p.probabilities(), m.asr).map_err(|e| error(Kind::Param, e))?
        }
    };
    let mse = Row::mse(&spec, &pop.frequencies(), pop.len(), m.mse);
    to_js(&json!({
        "runs": runs,
        "users": pop.len(),
        "asr": m.asr.mean,
        "asr_se": asr.se(),
        "asr_expected": asr.expected(),
        "mse": m.mse.mean,
        "mse_se": mse.se(),
        "mse_expected": mse.expected(),
        "kl": m.kl.mean,
        "kl_se": m.kl.se.is_finite().then_some(m.kl.se),
        "rank_corr": m.rank_correlation.map(|r| r.mean),
        "rank_corr_se": m.rank_correlation.and_then(|r| r.se.is_finite().then_some(r.se)),
    }))
}

/// The options of [`measure_linked`]: `ldp simulate --collections`'s flags.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct LinkedOptions {
    runs: f64,
    seed: f64,
    /// The numbers of linked reports at which the attack guesses.
    collections: Vec<f64>,
}

impl Default for LinkedOptions {
    fn default() -> Self {
        LinkedOptions {
            runs: 10.0,
            seed: 0.0,
            collections: vec![1.0],
        }
    }
}

/// The most linked reports one call draws per user.
const MAX_COLLECTIONS: f64 = 10_000.0;

/// `ldp simulate --items FILE --runs R --seed S --collections T1,T2,...` for the instance
/// `spec`: each user sends a fresh report of the same value at every collection, and an
/// attacker who links them guesses the value of highest joint likelihood (uniform prior).
/// Returns `{runs, users, collections, asr, asr_se, asr_expected}`, one entry of the last
/// four per number of collections (sorted, without repeats), with the closed form where
/// there is one (else `null`), as the CLI's rows.
///
/// ```js
/// const m = measureLinked(JSON.stringify(spec), users, { runs: 20, seed: 1, collections: [1, 10] });
/// m.asr[1]; // after 10 linked reports
/// ```
#[wasm_bindgen(js_name = measureLinked)]
pub fn measure_linked(
    spec: &str,
    population: &Population,
    options: JsValue,
) -> Result<JsValue, JsValue> {
    use ldp_attack::longitudinal::{Collection, LinkedConfig};
    let spec: Spec =
        serde_json::from_str(spec).map_err(|e| error(Kind::Param, format!("spec: {e}")))?;
    let o: LinkedOptions = args::options(&options)?;
    let (runs, seed) = args::runs_and_seed(o.runs, o.seed, MAX_RUNS)?;
    let collections = o
        .collections
        .iter()
        .map(|&t| match args::whole("collections", t, MAX_COLLECTIONS)? {
            0.0 => Err(error(Kind::Param, "collections: at least one report")),
            t => Ok(t as u32),
        })
        .collect::<Result<Vec<u32>, _>>()?;
    let config = LinkedConfig::new(runs, seed, None, &collections);
    let m = ldp_attack::longitudinal::measure_linked(
        &Collection::OneShot(spec),
        &population.inner,
        &config,
    )
    .map_err(|e| error(Kind::Param, e))?;
    let asr_expected: Vec<Option<f64>> = (config.collections.iter())
        .map(|&t| ldp_analytic::longitudinal::asr_after(&spec, t))
        .collect();
    to_js(&json!({
        "runs": runs,
        "users": m.users,
        "collections": config.collections,
        "asr": m.asr.iter().map(|e| e.mean).collect::<Vec<_>>(),
        "asr_se": m.asr.iter().map(|e| e.se.is_finite().then_some(e.se)).collect::<Vec<_>>(),
        "asr_expected": asr_expected,
    }))
}
