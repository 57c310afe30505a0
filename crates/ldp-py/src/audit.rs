//! `ldp.audit`: the statistical privacy audit of `ldp-audit` on a mechanism of this
//! package or on any Python callable, and `ldp.exact_audit`.

use crate::threads::InPool;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};

use ldp_audit::{
    Audit, AuditConfig, AuditError, Client, ClientAudit, MultidimAudit, Observation, Pairs, Shape,
    Statistic,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::param;
use crate::longitudinal::Longitudinal;
use crate::mechanism::Mechanism;
use crate::multidim::Multidim;

/// One batch for the Python client: its items, and where its reports go.
type Request = (Vec<u32>, Sender<Result<Vec<Observation>, AuditError>>);

/// A Python callable as the audited client, seen from the audit's thread: each batch is
/// sent to the calling thread, which runs the callable (Python code runs where Ctrl-C
/// reaches it) and sends the reports back.
struct Callable {
    requests: Mutex<Sender<Request>>,
}

impl Client for Callable {
    fn perturb(&self, items: &[u32]) -> Result<Vec<Observation>, AuditError> {
        let stopped = || AuditError::Command {
            command: "the Python client".into(),
            input: items.first().copied().unwrap_or(0),
            reason: "stopped".into(),
        };
        let (reply, answer) = channel();
        let sent = self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send((items.to_vec(), reply));
        if sent.is_err() {
            return Err(stopped());
        }
        answer.recv().unwrap_or_else(|_| Err(stopped()))
    }
}

/// Runs the callable `function` on this thread for every batch the audit asks for, until
/// the audit ends; checks for signals while it waits. The first exception (the
/// callable's, or `KeyboardInterrupt`) fails every later batch, which stops the audit,
/// and is returned.
fn serve(
    py: Python<'_>,
    function: &Bound<'_, PyAny>,
    requests: &Mutex<Receiver<Request>>,
    shape: Shape,
    k: u32,
) -> Option<PyErr> {
    let mut raised: Option<PyErr> = None;
    loop {
        let next = py.detach(|| {
            let requests = requests.lock().unwrap_or_else(|e| e.into_inner());
            requests.recv_timeout(std::time::Duration::from_millis(50))
        });
        let (items, reply) = match next {
            Ok(request) => request,
            Err(RecvTimeoutError::Timeout) => {
                if raised.is_none()
                    && let Err(e) = py.check_signals()
                {
                    raised = Some(e);
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return raised,
        };
        let input = items.first().copied().unwrap_or(0);
        let result = match &raised {
            Some(_) => Err("stopped".to_owned()),
            None => call(py, function, items, shape, k).map_err(|e| {
                let reason = e.to_string();
                raised = Some(e);
                reason
            }),
        };
        let _ = reply.send(result.map_err(|reason| AuditError::Command {
            command: "the Python client".into(),
            input,
            reason,
        }));
    }
}

/// The callable's reports of `items`.
fn call(
    py: Python<'_>,
    function: &Bound<'_, PyAny>,
    items: Vec<u32>,
    shape: Shape,
    k: u32,
) -> PyResult<Vec<Observation>> {
    let numpy = py.import("numpy")?;
    let array = numpy.call_method1("asarray", (items,))?;
    let array = array.call_method1("astype", ("int64",))?;
    let out = function.call1((array,))?;
    observations(py, &out, shape, k)
}

/// The callable's return value as reports of `shape`.
fn observations(
    py: Python<'_>,
    out: &Bound<'_, PyAny>,
    shape: Shape,
    k: u32,
) -> PyResult<Vec<Observation>> {
    let numpy = py.import("numpy")?;
    let is_matrix = out.is_instance(&numpy.getattr("ndarray")?)?
        && out.getattr("ndim")?.extract::<usize>()? == 2;
    let rows = || -> PyResult<Bound<'_, PyAny>> {
        numpy
            .call_method1("asarray", (out,))?
            .call_method0("tolist")
    };
    Ok(match shape {
        Shape::Value => rows()?.extract::<Vec<i64>>()?
            .into_iter()
            .map(|y| whole(y).map(Observation::Value))
            .collect::<PyResult<_>>()?,
        Shape::Set if is_matrix => rows()?.extract::<Vec<Vec<i64>>>()?
            .into_iter()
            .map(|bits| {
                if bits.len() != k as usize || bits.iter().any(|&b| b != 0 && b != 1) {
                    return Err(param(format!(
                        "a set client's 2-D array holds k = {k} 0/1 columns per report, got a row of {} values",
                        bits.len()
                    )));
                }
                Ok(Observation::Set(
                    bits.iter().enumerate().filter(|(_, b)| **b == 1).map(|(i, _)| i as u32).collect(),
                ))
            })
            .collect::<PyResult<_>>()?,
        Shape::Set => out.extract::<Vec<Vec<i64>>>()?
            .into_iter()
            .map(|items| {
                items
                    .into_iter()
                    .map(whole)
                    .collect::<PyResult<Vec<u32>>>()
                    .map(Observation::Set)
            })
            .collect::<PyResult<_>>()?,
        Shape::Hashed { .. } => rows()?.extract::<Vec<(i64, i64)>>()?
            .into_iter()
            .map(|(seed, y)| {
                Ok(Observation::Hashed {
                    // Seeds reduce mod 2^32, as python-xxhash does.
                    seed: seed.rem_euclid(1 << 32) as u32,
                    y: whole(y)?,
                })
            })
            .collect::<PyResult<_>>()?,
        Shape::Vector => rows()?.extract::<Vec<Vec<f64>>>()?
            .into_iter()
            .map(Observation::Vector)
            .collect(),
    })
}

/// A value the client returned as an item or hash value.
fn whole(v: i64) -> PyResult<u32> {
    u32::try_from(v).map_err(|_| {
        param(format!(
            "the client returned {v}, not an item or hash value (0 to 2**32 - 1)"
        ))
    })
}

/// The result as a dict: one entry per statistic.
fn to_dict<'py>(py: Python<'py>, audit: &Audit) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("claimed_eps", audit.claimed_eps)?;
    dict.set_item("eps_emp", audit.eps_emp())?;
    dict.set_item("flagged", audit.flagged())?;
    dict.set_item("trials", audit.trials)?;
    dict.set_item("alpha", audit.alpha)?;
    let statistics = PyList::empty(py);
    for s in &audit.statistics {
        let worst = s.worst_pair();
        let d = PyDict::new(py);
        d.set_item("statistic", s.statistic.name())?;
        d.set_item("eps_emp", s.eps_emp)?;
        d.set_item("v1", worst.v1)?;
        d.set_item("v2", worst.v2)?;
        d.set_item("hits_v1", worst.hits_v1)?;
        d.set_item("hits_v2", worst.hits_v2)?;
        d.set_item("tpr_low", worst.tpr_low)?;
        d.set_item("fpr_high", worst.fpr_high)?;
        statistics.append(d)?;
    }
    dict.set_item("statistics", statistics)?;
    Ok(dict)
}

/// A client of several attributes' test as a dict: its claims, the tuples run, and per
/// statistic the bound when every attribute changes and the largest when one does, with
/// every pair's counts (pair 0 changes every attribute, pair 1 + j attribute j).
fn multidim_dict<'py>(py: Python<'py>, audit: &MultidimAudit) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("solution", audit.solution)?;
    dict.set_item("claimed_eps", audit.claims.attribute)?;
    dict.set_item("claimed_whole", audit.claims.whole)?;
    dict.set_item("flagged", audit.flagged())?;
    dict.set_item("trials", audit.audit.trials)?;
    dict.set_item("alpha", audit.audit.alpha)?;
    dict.set_item("inputs", audit.inputs.clone())?;
    let statistics = PyList::empty(py);
    for s in &audit.audit.statistics {
        let d = PyDict::new(py);
        d.set_item("statistic", s.statistic.name())?;
        d.set_item("eps_whole", audit.eps_whole(s.statistic))?;
        d.set_item("eps_attribute", audit.eps_attribute(s.statistic))?;
        let pairs = PyList::empty(py);
        for p in &s.pairs {
            let pair = PyDict::new(py);
            pair.set_item("v1", audit.inputs[p.v1 as usize].clone())?;
            pair.set_item("v2", audit.inputs[p.v2 as usize].clone())?;
            pair.set_item("eps_emp", p.eps_emp)?;
            pair.set_item("hits_v1", p.hits_v1)?;
            pair.set_item("hits_v2", p.hits_v2)?;
            pair.set_item("tpr_low", p.tpr_low)?;
            pair.set_item("fpr_high", p.fpr_high)?;
            pairs.append(pair)?;
        }
        d.set_item("pairs", pairs)?;
        statistics.append(d)?;
    }
    dict.set_item("statistics", statistics)?;
    Ok(dict)
}

fn config(
    trials: u64,
    alpha: f64,
    pairs: &Bound<'_, PyAny>,
    statistics: Option<Vec<String>>,
    seed: u64,
    set_client: bool,
) -> PyResult<AuditConfig> {
    let pairs = if let Ok(name) = pairs.extract::<String>() {
        match name.as_str() {
            "extremes" => Pairs::Extremes,
            "cycle" => Pairs::Cycle,
            other => {
                return Err(param(format!(
                    "pairs={other:?}: expected \"extremes\", \"cycle\" or a list of (v1, v2) pairs"
                )));
            }
        }
    } else {
        Pairs::List(pairs.extract::<Vec<(u32, u32)>>().map_err(|_| {
            param("pairs: expected \"extremes\", \"cycle\" or a list of (v1, v2) pairs")
        })?)
    };
    let statistics = match statistics {
        Some(names) => names
            .iter()
            .map(|n| n.parse::<Statistic>().map_err(param))
            .collect::<PyResult<Vec<_>>>()?,
        None => {
            let mut s = Statistic::MECHANISM.to_vec();
            if set_client {
                s.push(Statistic::FirstListed);
            }
            s
        }
    };
    Ok(AuditConfig {
        trials,
        alpha,
        pairs,
        statistics,
        seed,
    })
}

/// Measures the privacy a client really gives: LDP-Auditor's distinguishing test between
/// inputs v1 and v2 (`trials` reports each), with the most powerful event of the report's
/// shape (`"lr"`) beside LDP-Auditor's attack guess (`"guess"`). With confidence
/// 1 - alpha, the client spends at least `eps_emp`; `flagged` when that exceeds `eps`.
/// Ctrl-C stops it (a linked audit of an `ldp.Longitudinal` only once it returns); a
/// callable runs on the calling thread, where Ctrl-C interrupts it.
///
/// `client` is an `ldp.Mechanism` (then `shape`, `k` and `eps` are its own), an
/// `ldp.Multidim` (a client of several attributes, audited for a change of every
/// attribute and of one: see below), an
/// `ldp.Longitudinal` (then `collections` linked reports of one value per trial, default
/// 1, and the claimed budget is their exact one, `exact_audit(l, collections)`), or a callable
/// taking a numpy int64 array of items (all equal) and returning one report per item:
/// `shape="grr"`: a 1-D array of items; `"set"`: a 2-D 0/1 array of shape (n, k), or a
/// list of n lists of items (order kept for the `"first"` statistic); `"lh"`: an (n, 2)
/// array of (seed, hash value), hashed as XXH32 of the decimal item mod `g`; `"vector"`:
/// an (n, k) array of numbers.
///
/// Returns a dict: `claimed_eps`, `eps_emp` (the largest over the statistics), `flagged`,
/// `trials`, `alpha`, and `statistics`, one dict per statistic (`statistic`, `eps_emp`,
/// and the counts and bounds of its worst pair: `v1`, `v2`, `hits_v1`, `hits_v2`,
/// `tpr_low`, `fpr_high`).
///
/// Of an `ldp.Multidim`: LDP-Auditor's tuples (all first items against all last) and one
/// pair per attribute (only attribute j last), each against its own claim, as a dict:
/// `solution`, `claimed_eps` (one attribute), `claimed_whole` (every attribute: eps, or
/// the per-report eps' of the RS+ solutions), `flagged`, `trials`, `alpha`, `inputs` (the
/// tuples), and per statistic `eps_whole`, `eps_attribute` and every pair's counts.
///
/// >>> import ldp
/// >>> r = ldp.audit(ldp.mechanism("grr", k=10, eps=1.0), trials=20_000)
/// >>> r["flagged"], r["statistics"][0]["statistic"]
/// (False, 'lr')
/// >>> r = ldp.audit(lambda items: items, shape="grr", k=10, eps=1.0, trials=2_000)
/// >>> r["flagged"]
/// True
#[pyfunction]
#[pyo3(signature = (client, *, shape=None, k=None, eps=None, g=None, trials=1_000_000, alpha=0.01, pairs=None, statistics=None, seed=0, batch=16_384, collections=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn audit<'py>(
    py: Python<'py>,
    client: &Bound<'py, PyAny>,
    shape: Option<&str>,
    k: Option<u32>,
    eps: Option<f64>,
    g: Option<u32>,
    trials: u64,
    alpha: f64,
    pairs: Option<&Bound<'py, PyAny>>,
    statistics: Option<Vec<String>>,
    #[pyo3(from_py_with = crate::args::seed)] seed: u64,
    batch: u64,
    collections: Option<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let extremes = "extremes".into_pyobject(py)?.into_any();
    let pairs = pairs.unwrap_or(&extremes);
    let own = |what: &str| {
        if shape.is_some() || k.is_some() || eps.is_some() || g.is_some() {
            Err(param(format!(
                "shape, k, eps and g are the {what}'s own: pass them only with a callable"
            )))
        } else {
            Ok(())
        }
    };
    if let Ok(l) = client.cast::<Longitudinal>() {
        own("protocol")?;
        let config = config(trials, alpha, pairs, statistics, seed, false)?;
        let inner = l.get().inner.clone();
        let t = collections.unwrap_or(1);
        // The linked audit has no hook to stop at: Ctrl-C is raised when it returns.
        let audit = py
            .detach_interruptibly(|_| ldp_audit::audit_linked(&inner, t, &config))?
            .map_err(param)?;
        return to_dict(py, &audit);
    }
    if collections.is_some() {
        return Err(param("collections: only an ldp.Longitudinal links reports"));
    }
    if let Ok(m) = client.cast::<Multidim>() {
        own("client")?;
        if !pairs.eq("extremes")? {
            return Err(param(ldp_audit::AuditError::MultidimPairs.to_string()));
        }
        let config = config(trials, alpha, pairs, statistics, seed, false)?;
        let spec = m.get().spec().clone();
        let audit = py
            .detach_interruptibly(|stop| {
                ldp_core::dispatch_multidim!(&spec, c => ldp_audit::audit_multidim_until(
                    &c,
                    &config,
                    &|_| {},
                    stop
                ))
            })?
            .map_err(param)?
            .map_err(param)?;
        return multidim_dict(py, &audit);
    }
    if let Ok(mech) = client.cast::<Mechanism>() {
        own("mechanism")?;
        let config = config(trials, alpha, pairs, statistics, seed, false)?;
        let any = mech.get().any.clone();
        let audit = py
            .detach_interruptibly(|stop| {
                ldp_audit::audit_mechanism_until(&any, &config, &|_| {}, stop)
            })?
            .map_err(param)?;
        return to_dict(py, &audit);
    }
    if !client.is_callable() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "client must be an ldp.Mechanism or a callable from items to reports",
        ));
    }
    let k = k.ok_or_else(|| param("k: the domain size is needed with a callable client"))?;
    let shape =
        match shape.ok_or_else(|| param("shape: one of \"grr\", \"set\", \"lh\", \"vector\""))? {
            "grr" => Shape::Value,
            "set" => Shape::Set,
            "vector" => Shape::Vector,
            "lh" => Shape::Hashed {
                g: g.ok_or_else(|| param("g: an lh client's hash range is needed"))?,
            },
            other => {
                return Err(param(format!(
                    "shape={other:?}: expected \"grr\", \"set\", \"lh\" or \"vector\""
                )));
            }
        };
    if g.is_some() && !matches!(shape, Shape::Hashed { .. }) {
        return Err(param("g: only an lh client has a hash range"));
    }
    let config = config(trials, alpha, pairs, statistics, seed, shape == Shape::Set)?;
    let setup = ClientAudit {
        config,
        shape,
        k,
        claimed_eps: eps,
        batch,
    };
    // One batch at a time, on a thread of its own: the callable runs here, on the
    // calling thread.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| param(e.to_string()))?;
    let (requests, received) = channel();
    let callable = Callable {
        requests: Mutex::new(requests),
    };
    let (result, raised) = std::thread::scope(|s| {
        let audit = s.spawn(|| {
            // The callable's channel closes with it, which ends `serve`.
            let callable = callable;
            pool.install(|| ldp_audit::audit_client(&callable, &setup, &|_| {}))
        });
        let raised = serve(py, client, &Mutex::new(received), shape, k);
        (audit.join().expect("the audit does not panic"), raised)
    });
    if let Some(e) = raised {
        return Err(e);
    }
    to_dict(py, &result.map_err(param)?)
}

/// The exact audit of a mechanism: the worst likelihood ratio over every input pair and
/// output. Returns a dict: `claimed_eps`, `eps_exact`, `worst_output` (the report's
/// JSON), `more_likely` and `less_likely` (the inputs), `outputs` examined, and
/// `flagged`, the verdict `ldp audit --exact` prints (eps_exact above the claim beyond
/// rounding).
///
/// Of an `ldp.Longitudinal`: the exact budget of t linked reports of one value for each t
/// in `collections` (default [1]), as a dict: `eps_1`, `eps_perm`, `budgets`, a list of
/// (t, eps_t), and `flagged`, one verdict per t (eps_t above eps_perm).
///
/// >>> import ldp
/// >>> round(ldp.exact_audit(ldp.mechanism("the", k=25, eps=1.0))["eps_exact"], 3)
/// 0.896
/// >>> l = ldp.longitudinal("l-grr", k=100, eps_perm=2.0, eps_1=1.0)
/// >>> [round(e, 3) for _, e in ldp.exact_audit(l, collections=[1, 2, 5])["budgets"]]
/// [1.0, 1.945, 2.0]
///
/// Of an `ldp.Multidim`: `eps_whole` (every attribute changes) and `eps_attribute` (one
/// does, the worst `worst_attribute`) against `claimed_whole` and `claimed_eps`, with
/// `flagged` and `outputs` examined. The RS+ solutions need every output of each
/// attribute (GRR, HR, HM, FLH, the sketches).
///
/// >>> m = ldp.multidim("grr", 1.0, [2, 100], solution="rsfd")
/// >>> e = ldp.exact_audit(m)
/// >>> round(e["eps_whole"], 3), round(e["eps_attribute"], 3), e["flagged"]
/// (1.49, 1.25, True)
#[pyfunction]
#[pyo3(signature = (mechanism, collections=None))]
pub(crate) fn exact_audit<'py>(
    py: Python<'py>,
    mechanism: &Bound<'py, PyAny>,
    collections: Option<Vec<u32>>,
) -> PyResult<Bound<'py, PyDict>> {
    if let Ok(l) = mechanism.cast::<Longitudinal>() {
        let exact = ldp_audit::exact_linked(&l.get().inner, &collections.unwrap_or(vec![1]))
            .map_err(param)?;
        let dict = PyDict::new(py);
        dict.set_item("eps_1", exact.eps_1)?;
        dict.set_item("eps_perm", exact.eps_perm)?;
        let flagged: Vec<bool> = exact
            .budgets
            .iter()
            .map(|&(_, e)| exact.flagged(e))
            .collect();
        dict.set_item("flagged", flagged)?;
        dict.set_item("budgets", exact.budgets)?;
        return Ok(dict);
    }
    if collections.is_some() {
        return Err(param("collections: only an ldp.Longitudinal links reports"));
    }
    if let Ok(m) = mechanism.cast::<Multidim>() {
        let spec = m.get().spec();
        let exact = ldp_core::dispatch_multidim!(spec, c => ldp_audit::exact_multidim(&c))
            .map_err(param)?
            .map_err(param)?;
        let dict = PyDict::new(py);
        dict.set_item("flagged", exact.flagged())?;
        dict.set_item("claimed_eps", exact.claims.attribute)?;
        dict.set_item("claimed_whole", exact.claims.whole)?;
        dict.set_item("eps_whole", exact.eps_whole)?;
        dict.set_item("eps_attribute", exact.eps_attribute)?;
        dict.set_item("worst_attribute", exact.worst_attribute)?;
        dict.set_item("outputs", exact.outputs)?;
        return Ok(dict);
    }
    let mechanism = mechanism.cast::<Mechanism>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "exact_audit takes an ldp.Mechanism, an ldp.Longitudinal or an ldp.Multidim",
        )
    })?;
    let exact = ldp_audit::exact_audit(&mechanism.get().any).map_err(param)?;
    let dict = PyDict::new(py);
    dict.set_item("flagged", exact.flagged())?;
    dict.set_item("claimed_eps", exact.claimed_eps)?;
    dict.set_item("eps_exact", exact.eps_exact)?;
    dict.set_item("worst_output", exact.worst_output)?;
    dict.set_item("more_likely", exact.more_likely)?;
    dict.set_item("less_likely", exact.less_likely)?;
    dict.set_item("outputs", exact.outputs)?;
    Ok(dict)
}
