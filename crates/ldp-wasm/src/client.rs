//! The client: what runs on the device, where the raw value never leaves it.

use ldp_analytic::compare::Row;
use ldp_core::simulation::{Estimate, Role, perturb_all};
use ldp_core::{AnyMechanism, AttackSurface, Mechanism, Protocol, Spec, dispatch};
use ldp_jsonl::{Digits, JsonReport};
use ldp_optimize::InstanceRequest;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::args;
use crate::error::{Kind, error, request};

/// One protocol instance on the device: perturbs values into reports in the JSON-lines
/// form of `ldp perturb` (`{"y":17}`, `{"ones":[3,17]}`, `{"seed":123,"y":4}`, ...).
///
/// Unseeded reports draw from ChaCha20 keyed once by the browser's CSPRNG
/// (`crypto.getRandomValues`, through getrandom's WebAssembly backend), never from
/// JavaScript's non-cryptographic generator. Seeded ones ([`Client::perturb_seeded`]) are the reports of
/// `ldp perturb --seed`, for tests and reproducible demonstrations only: a deployed
/// client must not be predictable.
///
/// ```js
/// import init, { Client } from "./pkg/ldp_wasm.js";
/// await init();
/// const client = new Client("oue", 100, 1.0);
/// const report = client.perturb(42);    // '{"ones":[3,42,...]}': send this
/// ```
#[wasm_bindgen]
pub struct Client {
    protocol: Option<Protocol>,
    mechanism: AnyMechanism,
    rng: ChaCha20Rng,
}

/// The most reports [`Client::attack`] draws at once: a few seconds in a browser tab.
const MAX_DRAWS: f64 = 1e7;

/// The reconstruction attack measured on one value ([`Client::attack`]).
#[derive(Debug, Serialize)]
struct Measured {
    /// The value perturbed.
    item: u32,
    /// Reports drawn.
    draws: u32,
    /// Reports from which the attacker's guess was the value.
    hits: u32,
    /// hits / draws.
    asr: f64,
    /// Its standard error, sqrt(asr (1 - asr) / draws).
    se: f64,
    /// The closed form, as `ldp simulate` pairs it ([`Row::asr`]; LH: the exact
    /// expectation over hash functions, which a measurement estimates; `analyze`'s
    /// default is the paper's approximation).
    expected: Option<f64>,
}

impl Client {
    fn with(protocol: Option<Protocol>, spec: Spec) -> Result<Client, JsValue> {
        let mechanism = spec
            .build()
            .map_err(|e| error(Kind::Param, format!("spec: {e}")))?;
        let rng = ChaCha20Rng::try_from_rng(&mut rand::rngs::SysRng).map_err(|e| {
            error(
                Kind::Param,
                format!("the browser gave no randomness (crypto.getRandomValues): {e}"),
            )
        })?;
        Ok(Client {
            protocol,
            mechanism,
            rng,
        })
    }

    fn spec_of(&self) -> Spec {
        dispatch!(&self.mechanism, m => m.spec())
    }

    fn item(&self, value: f64) -> Result<u32, JsValue> {
        let k = self.spec_of().k();
        args::items(&[value], k).map(|v| v[0])
    }
}

#[wasm_bindgen]
impl Client {
    /// A protocol at (k, eps), as `ldp perturb --protocol P --k K --eps E [--param V]`
    /// chooses it: a classic protocol at its preset, an adaptive one tuned with the default
    /// objective unless `param` is given (`"0.8"`, or `"h=256,m=1024"`).
    #[wasm_bindgen(constructor)]
    pub fn new(protocol: &str, k: f64, eps: f64, param: Option<String>) -> Result<Client, JsValue> {
        let protocol = args::protocol(protocol)?;
        let param = match param.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(text) => Some(
                text.parse()
                    .map_err(|e| error(Kind::Param, format!("param: {e}")))?,
            ),
        };
        let instance = InstanceRequest {
            protocol,
            k: args::domain(k)?,
            eps: args::budget(eps)?,
            param,
            tuning: Default::default(),
        }
        .resolve()
        .map_err(request)?;
        Client::with(Some(protocol), instance.spec)
    }

    /// The instance of a spec in its JSON form (`{"k":4,"eps":1.0,"family":"grr"}`, the
    /// `ldp.spec` of a Parquet file, or the `spec` of [`crate::choose`]).
    #[wasm_bindgen(js_name = fromSpec)]
    pub fn from_spec(json: &str) -> Result<Client, JsValue> {
        let spec: Spec =
            serde_json::from_str(json).map_err(|e| error(Kind::Param, format!("spec: {e}")))?;
        Client::with(None, spec)
    }

    /// The protocol's name (`"oue"`), or the family's (the spec's `family`, `"ue"`) for a
    /// client made from a spec.
    #[wasm_bindgen(getter)]
    pub fn protocol(&self) -> String {
        match self.protocol {
            Some(p) => p.name().to_owned(),
            None => {
                let spec = serde_json::to_value(self.spec_of()).expect("a spec serializes");
                spec["family"].as_str().unwrap_or_default().to_owned()
            }
        }
    }

    /// The instance in its JSON form: what the server needs to aggregate.
    #[wasm_bindgen(getter)]
    pub fn spec(&self) -> String {
        serde_json::to_string(&self.spec_of()).expect("a spec serializes")
    }

    /// The domain size.
    #[wasm_bindgen(getter)]
    pub fn k(&self) -> u32 {
        self.spec_of().k().get()
    }

    /// The privacy budget.
    #[wasm_bindgen(getter)]
    pub fn eps(&self) -> f64 {
        self.spec_of().eps().get()
    }

    /// One report of `item` (a whole number from 0 to k - 1), as a JSON object's text.
    pub fn perturb(&mut self, item: f64) -> Result<String, JsValue> {
        let x = self.item(item)?;
        let rng = &mut self.rng;
        let mut line = Vec::new();
        dispatch!(&self.mechanism, m => {
            let report = m.perturb(x, rng).expect("the item is checked against k");
            report.write_json(&mut line);
        });
        Ok(String::from_utf8(line).expect("reports are ASCII"))
    }

    /// One report per item, as JSON lines (each ended by a newline): the input of
    /// `ldp aggregate`.
    #[wasm_bindgen(js_name = perturbBatch)]
    pub fn perturb_batch(&mut self, items: &[f64]) -> Result<String, JsValue> {
        let items = args::items(items, self.spec_of().k())?;
        let rng = &mut self.rng;
        let lines = dispatch!(&self.mechanism, m => {
            let digits = Digits::for_domain(m.spec().report_limits().values);
            let mut out = Vec::new();
            for &x in &items {
                let report = m.perturb(x, rng).expect("items are checked against k");
                report.write_json_with(&digits, &mut out);
                out.push(b'\n');
            }
            out
        });
        Ok(String::from_utf8(lines).expect("reports are ASCII"))
    }

    /// The reports of `ldp perturb --seed SEED` for these items, byte for byte (JSON
    /// lines, ldp-core's seeded ChaCha streams). For tests and demonstrations: anyone who
    /// knows the seed can undo the noise. `seed` is a safe integer or a BigInt.
    #[wasm_bindgen(js_name = perturbSeeded)]
    pub fn perturb_seeded(&self, items: &[f64], seed: JsValue) -> Result<String, JsValue> {
        let seed = args::seed(&seed)?;
        let items = args::items(items, self.spec_of().k())?;
        let lines = dispatch!(&self.mechanism, m => {
            let digits = Digits::for_domain(m.spec().report_limits().values);
            let reports = perturb_all(m, &items, seed, 0, Role::Genuine)
                .expect("items are checked against k");
            let mut out = Vec::new();
            for report in &reports {
                report.write_json_with(&digits, &mut out);
                out.push(b'\n');
            }
            out
        });
        Ok(String::from_utf8(lines).expect("reports are ASCII"))
    }

    /// The reconstruction attacker's guess of the value behind `report` (a JSON report of
    /// this instance): the item the report supports most, ties broken at random.
    pub fn guess(&mut self, report: &str) -> Result<u32, JsValue> {
        let rng = &mut self.rng;
        dispatch!(&self.mechanism, m => guess_json(m, report.trim().as_bytes(), rng))
    }

    /// The attack measured on `item`: `draws` fresh reports (1 to 10^7), each guessed,
    /// beside the closed form. Returns `{item, draws, hits, asr, se, expected}`.
    pub fn attack(&mut self, item: f64, draws: f64) -> Result<JsValue, JsValue> {
        let x = self.item(item)?;
        let draws = args::whole("draws", draws, MAX_DRAWS)? as u32;
        if draws == 0 {
            return Err(error(Kind::Param, "draws: at least one report is needed"));
        }
        let spec = self.spec_of();
        let rng = &mut self.rng;
        let hits = dispatch!(&self.mechanism, m => {
            (0..draws)
                .filter(|_| {
                    let report = m.perturb(x, rng).expect("the item is checked against k");
                    m.guess(&report, rng) == x
                })
                .count() as u32
        });
        let rate = Estimate::binomial(f64::from(hits) / f64::from(draws), draws as usize);
        let row = Row::asr(&spec, rate);
        crate::to_js(&Measured {
            item: x,
            draws,
            hits,
            asr: row.measured.mean,
            se: row.measured.se,
            expected: row.expected(),
        })
    }
}

/// Parses and validates one report of `m`, then guesses.
fn guess_json<M>(m: &M, line: &[u8], rng: &mut ChaCha20Rng) -> Result<u32, JsValue>
where
    M: AttackSurface,
    M::Report: JsonReport,
{
    let report = M::Report::parse_tagged(line)
        .map_err(|e| error(Kind::Input, format!("report: {e}")))?
        .1;
    m.validate(&report)
        .map_err(|e| error(Kind::Input, format!("report: {e}")))?;
    Ok(m.guess(&report, rng))
}
