//! `ldp.Mechanism`: a validated protocol instance, its client and its server.

use crate::threads::{InPool, Stop};
use ldp_core::simulation::{BatchStreams, Role, USERS_PER_STREAM};
use ldp_core::{AnyMechanism, Protocol, Spec, dispatch, parallel, with_batch_rng};
use ldp_optimize::Tuned;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rand::Rng;

use crate::aggregator::Aggregator;
use crate::columns::{Columns, Data};
use crate::errors::param;
use crate::options::{budget, domain, resolve};
use crate::reports::Reports;

/// A protocol instance: its client (`perturb`) and its server (`aggregator`).
///
/// Build one with `ldp.mechanism(...)`; two mechanisms are equal when their specs are.
///
/// >>> import ldp
/// >>> m = ldp.mechanism("oue", k=10, eps=1.0)
/// >>> m.protocol, m.k, m.eps
/// ('oue', 10, 1.0)
#[pyclass(module = "ldp._ldp", frozen, eq)]
#[derive(Debug, Clone)]
pub struct Mechanism {
    pub(crate) protocol: Protocol,
    pub(crate) spec: Spec,
    pub(crate) any: AnyMechanism,
    pub(crate) tuned: Option<Tuned>,
}

impl PartialEq for Mechanism {
    fn eq(&self, other: &Self) -> bool {
        self.spec == other.spec
    }
}

impl Mechanism {
    /// A mechanism from its spec JSON (see `from_spec`).
    pub(crate) fn parse_spec(spec: &str, protocol: Option<&str>) -> PyResult<Self> {
        let parsed: Spec =
            serde_json::from_str(spec).map_err(|e| param(format!("not a spec: {e}")))?;
        Self::named(parsed, protocol)
    }

    /// A mechanism of `parsed`, under `protocol` or, without one, the protocol whose spec
    /// it is: a classic protocol's preset, else the family's adaptive protocol (or one
    /// that takes any value of its parameter).
    pub(crate) fn named(parsed: Spec, protocol: Option<&str>) -> PyResult<Self> {
        let p = match protocol {
            Some(name) => crate::options::protocol(name)?,
            None => Protocol::CLASSIC
                .into_iter()
                .find(|p| Spec::classic(*p, parsed.k(), parsed.eps()).ok() == Some(parsed))
                .or_else(|| {
                    // Another parameter: the family's adaptive protocol, else a protocol
                    // of the family that takes any value of it.
                    let family = parsed.family();
                    Protocol::ALL
                        .into_iter()
                        .find(|p| p.is_adaptive() && p.family() == family)
                        .or_else(|| {
                            Protocol::CLASSIC
                                .into_iter()
                                .find(|p| p.family() == family && !p.fixes_parameter())
                        })
                })
                .ok_or_else(|| param("no protocol has this spec's family"))?,
        };
        if p.family() != parsed.family() {
            return Err(param(format!(
                "protocol {:?} is not of the spec's family",
                p.name()
            )));
        }
        Mechanism::build(p, parsed, None)
    }

    pub(crate) fn build(protocol: Protocol, spec: Spec, tuned: Option<Tuned>) -> PyResult<Self> {
        let any = spec.build().map_err(param)?;
        Ok(Self {
            protocol,
            spec,
            any,
            tuned,
        })
    }
}

/// The reports of `items`, batch b drawing from `make(b)`: the CLI's and `perturb_all`'s
/// streams, in parallel, in order; `None` once asked to stop.
fn perturb_columns<M: Columns, R: Rng>(
    m: &M,
    items: &[u32],
    make: impl Fn(u64) -> R + Sync,
    stop: Stop<'_>,
) -> Option<Data> {
    let parts: Option<Vec<Data>> = crate::threads::install(|| {
        parallel::map_chunks(items, USERS_PER_STREAM, |b, chunk| {
            if stop() {
                return None;
            }
            let mut rng = make(b as u64);
            let mut data = m.with_capacity(chunk.len());
            for &x in chunk {
                let r = m.perturb(x, &mut rng).expect("items are checked against k");
                m.push(&mut data, &r);
            }
            Some(data)
        })
        .into_iter()
        .collect()
    });
    Some(Data::concat(m.empty(), &parts?))
}

#[pymethods]
impl Mechanism {
    /// The protocol's name, as `ldp.mechanism` takes it.
    #[getter]
    fn protocol(&self) -> &'static str {
        self.protocol.name()
    }

    /// The domain size: items are 0..k-1.
    #[getter]
    fn k(&self) -> u32 {
        self.spec.k().get()
    }

    /// The privacy budget epsilon.
    #[getter]
    fn eps(&self) -> f64 {
        self.spec.eps().get()
    }

    /// The family parameter (omega, p, g, theta or blocks), None for a family without one
    /// (GRR, SHE, HM), or a dict by name for a family with several.
    #[getter]
    fn param<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        family_param(py, &self.spec.params())
    }

    /// The spec as JSON: what Parquet files record under `ldp.spec`, and what
    /// `ldp.Mechanism.from_spec` reads.
    #[getter(spec)]
    pub(crate) fn spec_json(&self) -> String {
        serde_json::to_string(&self.spec).expect("a spec serializes")
    }

    /// How an adaptive protocol was tuned (strategy, objectives at the chosen parameter,
    /// whether the bounds could not be met), or None.
    #[getter]
    fn tuning<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(t) = &self.tuned else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("strategy", t.strategy.name())?;
        d.set_item("param", family_param(py, &t.spec.params())?)?;
        d.set_item("asr", t.objectives.asr)?;
        d.set_item("mse", t.objectives.mse)?;
        d.set_item("epg", t.objectives.epg)?;
        d.set_item("bits", t.objectives.bits)?;
        d.set_item("fell_back", t.fell_back)?;
        Ok(Some(d))
    }

    /// A mechanism from its spec JSON, as a string or as bytes (what pyarrow's schema
    /// metadata holds under `b"ldp.spec"`). `protocol` names it when several protocols
    /// share the spec, e.g. "aue" for a unary encoding with p = 1/2; default: the classic
    /// one.
    #[staticmethod]
    #[pyo3(signature = (spec, protocol=None))]
    fn from_spec(spec: &Bound<'_, PyAny>, protocol: Option<&str>) -> PyResult<Self> {
        let text = match spec.extract::<String>() {
            Ok(text) => text,
            Err(_) => {
                let bytes: Vec<u8> = spec.extract().map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err("spec: a JSON string (str or bytes)")
                })?;
                String::from_utf8(bytes).map_err(|_| param("spec: not UTF-8"))?
            }
        };
        Self::parse_spec(&text, protocol)
    }

    /// Perturbs every item (a numpy integer array in 0..k) and returns the reports.
    ///
    /// With `seed`, the reports are exactly those of `ldp perturb --seed SEED` on the same
    /// items (item n draws from the ChaCha8 stream of batch n // 4096), whatever the number
    /// of threads; without, each batch draws from ChaCha20 keyed by the operating system.
    /// The GIL is released while the reports are made, and Ctrl-C stops it. Reports that
    /// cannot fit in the memory available (a few, perturbed first, show what one takes)
    /// are a `MemoryError`, raised before any is made.
    ///
    /// With `categories` (an `ldp.Categories` of k labels), `items` are labels, encoded
    /// by it, and the reports carry it (`Reports.categories`).
    ///
    /// >>> import ldp, numpy as np
    /// >>> r = ldp.mechanism("grr", k=4, eps=1.0).perturb(np.array([0, 1, 2, 3]), seed=7)
    /// >>> len(r)
    /// 4
    #[pyo3(signature = (items, seed=None, *, categories=None))]
    fn perturb(
        &self,
        py: Python<'_>,
        items: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = crate::args::optional_seed)] seed: Option<u64>,
        categories: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Reports> {
        let labels = categories
            .map(|c| crate::reports::Labels::of(c, self))
            .transpose()?;
        let items = match categories {
            Some(c) => {
                let codes = c.call_method1("encode", (items,))?;
                crate::items::items(&codes, self.spec.k().get(), "items")?
            }
            None => crate::items::items(items, self.spec.k().get(), "items")?,
        };
        let streams = BatchStreams::new(seed, Role::Genuine).map_err(param)?;
        let what = format!("perturb: {} reports", self.protocol.name().to_uppercase());
        let data = py.detach_interruptibly(|stop| {
            dispatch!(&self.any, m => {
                crate::columns::room_to_perturb(m, &items, &what)?;
                Ok::<_, PyErr>(with_batch_rng!(streams, make => perturb_columns(m, &items, make, stop)))
            })
        })??;
        let mut reports = Reports::new(self.clone(), data.ok_or_else(crate::threads::stopped)?);
        reports.labels = labels;
        Ok(reports)
    }

    /// An empty server. SHE servers clip every coordinate to [-C, C] with C = 1 + 40/eps
    /// unless `she_clip` is a number (another C) or "none" (sum as the paper does).
    /// `categories` (an `ldp.Categories` of k labels) labels its estimates; without, it
    /// takes the labels of the reports added, if they carry any.
    #[pyo3(signature = (she_clip=None, *, categories=None))]
    fn aggregator(
        &self,
        she_clip: Option<&Bound<'_, PyAny>>,
        categories: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Aggregator> {
        let clip = crate::aggregator::she_clip(&self.spec, she_clip)?;
        let labels = categories
            .map(|c| crate::reports::Labels::of(c, self))
            .transpose()?;
        // The state: a count (or a sum) per item, about.
        crate::errors::fits("aggregator", u64::from(self.spec.k().get()), 8)?;
        Ok(Aggregator::new(self, clip, labels))
    }

    /// The probabilities of the mechanism's pure form, (p*, q*), or None for SHE.
    fn probabilities(&self) -> Option<(f64, f64)> {
        self.spec.pure_probabilities()
    }

    fn __repr__(&self) -> String {
        let mut s = format!(
            "ldp.mechanism({:?}, k={}, eps={}",
            self.protocol.name(),
            self.spec.k(),
            self.spec.eps().get()
        );
        if !self.protocol.fixes_parameter() {
            match self.spec.params().named_values().as_slice() {
                [] => {}
                [(_, v)] => s += &format!(", param={v}"),
                named => {
                    let pairs: Vec<String> =
                        named.iter().map(|(n, v)| format!("{n:?}: {v}")).collect();
                    s += &format!(", param={{{}}}", pairs.join(", "));
                }
            }
        }
        s + ")"
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.spec_json().hash(&mut h);
        h.finish()
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (String, &'static str))> {
        let from_spec = py.get_type::<Mechanism>().getattr("from_spec")?.unbind();
        Ok((from_spec, (self.spec_json(), self.protocol.name())))
    }
}

/// A protocol instance by name, with the `ldp` tool's names in any case (an unknown
/// name's error lists them all):
///
/// - the paper's twelve: ``grr``; ``ss`` (``param``: omega, the subset size); ``sue`` and
///   ``oue``; ``blh`` and ``olh``; ``she``; ``the`` (``param``: theta, the threshold); and the
///   adaptive ``ass`` (omega), ``aue`` (p), ``alh`` (g) and ``athe`` (theta);
/// - the oracles for large domains: ``hr``, Hadamard response (``param``: blocks); ``hm``,
///   the Hadamard mechanism (no parameter); ``flh``, fast local hashing
///   (``param={"g": ..., "seeds": ...}``); ``cms`` and ``hcms``, Apple's count-mean sketches
///   (``param={"hashes": ..., "width": ...}``); and ``dbitflip``, Ding et al.'s dBitFlip
///   (``param``: d, the buckets sampled).
///
/// ``param`` is a number for a family with one parameter, or a dict of name to value for a
/// family with several (those left out keep the preset's values); ``.param`` reads it back
/// the same way. Without it, the classic protocols take their presets and the adaptive ones
/// are tuned on construction with the arguments of ``ldp.tune`` (``w_asr``, ``asr_max``,
/// ``bits_max``, ...; the choice is in ``.param`` and ``.tuning``).
///
/// >>> import ldp
/// >>> ldp.mechanism("ss", k=100, eps=4.0, param=7).param
/// 7
/// >>> ldp.mechanism("aue", k=100, eps=4.0, w_asr=0.5, strategy="weighted").tuning["strategy"]
/// 'weighted'
/// >>> ldp.mechanism("cms", k=1000, eps=2.0, param={"hashes": 16, "width": 256}).param
/// {'hashes': 16, 'width': 256}
#[pyfunction]
#[pyo3(signature = (protocol, k, eps, param=None, **options))]
pub(crate) fn mechanism(
    py: Python<'_>,
    protocol: &str,
    #[pyo3(from_py_with = crate::args::k)] k: i64,
    #[pyo3(from_py_with = crate::args::eps)] eps: f64,
    param: Option<&Bound<'_, PyAny>>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Mechanism> {
    let p = crate::options::protocol(protocol)?;
    let (k, eps) = (domain(k)?, budget(eps)?);
    let param = crate::options::param_values(param)?;
    let tuning = crate::options::settings("mechanism", options, &ldp_optimize::SettingGroup::ALL)?;
    let (spec, tuned) = py.detach_in_pool(|| resolve(p, k, eps, param, tuning))?;
    Mechanism::build(p, spec, tuned)
}

/// A family's parameter as Python sees it: None for a family without one, the number for
/// a family with one, a dict by name for a family with several.
pub(crate) fn family_param<'py>(
    py: Python<'py>,
    family: &ldp_core::FamilyParams,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let whole = family.family().parameter_is_whole();
    let value = |i: usize, v: f64| -> PyResult<Bound<'py, PyAny>> {
        Ok(if whole[i] {
            (v as u64).into_pyobject(py)?.into_any()
        } else {
            v.into_pyobject(py)?.into_any()
        })
    };
    let named = family.named_values();
    Ok(match named.as_slice() {
        [] => None,
        [(_, v)] => Some(value(0, *v)?),
        _ => {
            let d = PyDict::new(py);
            for (i, (name, v)) in named.iter().enumerate() {
                d.set_item(name, value(i, *v)?)?;
            }
            Some(d.into_any())
        }
    })
}

/// What differs between two specs, field by field, in words: `k = 10 in the reports, 20
/// in the aggregator; eps = ...`, so that a mismatch names its cause.
pub(crate) fn spec_difference(a: &Spec, b: &Spec, a_name: &str, b_name: &str) -> String {
    let number = |v: f64| format!("{v}");
    let mut parts = Vec::new();
    let mut field = |name: &str, x: String, y: String| {
        if x != y {
            parts.push(format!("{name} = {x} in {a_name}, {y} in {b_name}"));
        }
    };
    field("k", a.k().get().to_string(), b.k().get().to_string());
    field("eps", number(a.eps().get()), number(b.eps().get()));
    let (fa, fb) = (a.params(), b.params());
    if fa.family() != fb.family() {
        field(
            "the family",
            format!("{:?}", fa.family()),
            format!("{:?}", fb.family()),
        );
    } else {
        for ((name, x), (_, y)) in fa.named_values().into_iter().zip(fb.named_values()) {
            field(name, number(x), number(y));
        }
    }
    parts.join("; ")
}
