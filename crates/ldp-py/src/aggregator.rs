//! `ldp.Aggregator`: a mergeable, picklable server.

use crate::threads::InPool;
use ldp_core::estimate::{Fit, FitKnob, FitOptions, FitOptionsError};
use ldp_core::{
    Aggregator as _, AnyAggregator, Clip, ClipBound, Estimator, Spec, StateValues,
    dispatch_aggregator,
};
use pyo3::types::{PyDict, PyTuple};
use std::sync::{Mutex, MutexGuard, PoisonError};

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::columns::Columns;
use crate::errors::{aggregate, param, report};
use crate::mechanism::Mechanism;
use crate::reports::{Labels, Reports, same_labels};

/// The server's clipping from `she_clip` (None: the recommended 1 + 40/eps; "none": no
/// clipping; "recommended"; or a number: that bound), as the bound it resolves to. Only
/// families whose servers clip (SHE) take one.
pub(crate) fn she_clip(spec: &Spec, arg: Option<&Bound<'_, PyAny>>) -> PyResult<Option<ClipBound>> {
    let clip = match arg {
        None => Clip::Recommended,
        Some(arg) => {
            let clip = match arg.extract::<String>() {
                Ok(text) => text
                    .parse::<Clip>()
                    .map_err(|e| param(format!("she_clip = {text:?}: {e}")))?,
                Err(_) => {
                    let bound: f64 = arg.extract()?;
                    Clip::At(
                        ClipBound::new(bound)
                            .map_err(|e| param(format!("she_clip = {bound}: {e}")))?,
                    )
                }
            };
            clip.check_for(spec.family())
                .map_err(|e| param(format!("she_clip: {e}")))?
        }
    };
    Ok(spec
        .family()
        .clips()
        .then(|| clip.bound(spec.eps()))
        .flatten())
}

/// A resolved clipping bound as the server option (no bound: no clipping).
pub(crate) fn as_clip(bound: Option<ClipBound>) -> Clip {
    bound.map_or(Clip::Off, Clip::At)
}

pub(crate) fn estimator(name: &str) -> PyResult<Estimator> {
    crate::options::named("estimator", Some(name)).map(|e| e.expect("given"))
}

/// `max_iterations` and `tolerance`, which only "ibu", "ibu-squarem" and "mle" read.
pub(crate) fn fit_options(
    estimator: Estimator,
    max_iterations: Option<i64>,
    tolerance: Option<f64>,
) -> PyResult<FitOptions> {
    let max_iterations = max_iterations
        .map(|m| {
            u32::try_from(m).map_err(|_| {
                param(format!(
                    "max_iterations must lie in 1..={}, got {m}",
                    u32::MAX
                ))
            })
        })
        .transpose()?;
    FitOptions::for_estimator(estimator, max_iterations, tolerance).map_err(|e| match e {
        FitOptionsError::NotIterative { knob, estimator } => param(format!(
            "{}: only the \"ibu\", \"ibu-squarem\" and \"mle\" estimators iterate, not \"{estimator}\"",
            keyword(knob)
        )),
        FitOptionsError::Invalid { knob, reason } => param(format!("{}: {reason}", keyword(knob))),
    })
}

/// The Python keyword of a fit setting.
fn keyword(knob: FitKnob) -> &'static str {
    match knob {
        FitKnob::MaxIterations => "max_iterations",
        FitKnob::Tolerance => "tolerance",
    }
}

/// `{"estimate": array, "iterations": int, "stop": "direct" | "tolerance" | "cap"}`.
pub(crate) fn fit_dict<'py>(py: Python<'py>, fit: Fit) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("estimate", fit.values.into_pyarray(py))?;
    d.set_item("iterations", fit.iterations)?;
    d.set_item("stop", fit.stop.name())?;
    Ok(d)
}

/// Reports per parallel piece of `add`.
const PIECE: usize = 1 << 14;

/// The server of one mechanism: add reports, merge other servers, estimate.
///
/// Adding is all or nothing: a batch with an invalid report leaves the state unchanged
/// and the error names the report, and so does Ctrl-C during `add` (it stops the batch
/// and adds none of it). An aggregator may be shared between threads: `add`,
/// `merge` and `estimate` take a lock (the reports are checked and counted before it, with
/// the GIL released), so concurrent batches all count. Aggregators pickle (their state is
/// checked when unpickled), so partial aggregates can be computed in other processes and
/// merged.
///
/// >>> import ldp, numpy as np, pickle
/// >>> m = ldp.mechanism("oue", k=4, eps=2.0)
/// >>> a, b = m.aggregator(), m.aggregator()
/// >>> a.add(m.perturb(np.zeros(1000, dtype=int), seed=1))
/// >>> b.add(m.perturb(np.ones(1000, dtype=int), seed=2))
/// >>> a.merge(pickle.loads(pickle.dumps(b)))
/// >>> a.n
/// 2000
#[pyclass(module = "ldp._ldp", frozen)]
#[derive(Debug)]
pub struct Aggregator {
    mechanism: Mechanism,
    clip: Option<ClipBound>,
    state: Mutex<AnyAggregator>,
    /// The items' labels, given or taken from the reports added. Locked before `state`.
    labels: Mutex<Option<Labels>>,
}

impl Aggregator {
    pub(crate) fn new(
        mechanism: &Mechanism,
        clip: Option<ClipBound>,
        labels: Option<Labels>,
    ) -> Self {
        let state = mechanism.any.server(as_clip(clip));
        Self {
            mechanism: mechanism.clone(),
            clip,
            state: Mutex::new(state),
            labels: Mutex::new(labels),
        }
    }

    /// The labels, locked.
    fn labels(&self) -> MutexGuard<'_, Option<Labels>> {
        self.labels.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The bytes of one state: its counters or sums (k of them, or the cells of a family
    /// that counts outputs: k' g for FLH, h (m + 1) for CMS, whatever k is).
    fn state_bytes(&self) -> u64 {
        let state = self.state();
        let values = dispatch_aggregator!(&*state, a => match a.state_values() {
            StateValues::Counts(c) => c.len(),
            StateValues::Sums(s) => s.len(),
        });
        8 * values as u64
    }

    /// The state, locked. A panic while it was held cannot leave it half-changed (every
    /// change is a whole replacement), so a poisoned lock is taken as it is.
    fn state(&self) -> MutexGuard<'_, AnyAggregator> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A copy of the state, taken without the GIL (an `add` in another thread may hold
    /// the lock while it merges).
    fn snapshot(&self, py: Python<'_>) -> AnyAggregator {
        py.detach_in_pool(|| self.state().clone())
    }

    /// The fit of `estimator` on a snapshot, computed without the GIL.
    fn fit_values(
        &self,
        py: Python<'_>,
        estimator: &str,
        max_iterations: Option<i64>,
        tolerance: Option<f64>,
    ) -> PyResult<Fit> {
        let e = self::estimator(estimator)?;
        let options = fit_options(e, max_iterations, tolerance)?;
        let state = self.snapshot(py);
        py.detach_in_pool(|| dispatch_aggregator!(&state, a => a.fit(e, &options)))
            .map_err(aggregate)
    }
}

/// A `RuntimeWarning` when an iterative estimator stopped at its cap: the estimate is
/// then its last iterate, not converged (for IBU often near its uniform start).
/// `Aggregator.fit` says so in its `stop` instead.
pub(crate) fn warn_at_cap(py: Python<'_>, estimator: &str, fit: &Fit) -> PyResult<()> {
    warn_at_cap_of(py, "", estimator, fit)
}

/// [`warn_at_cap`] for the estimate of `what` (an attribute, `attribute 1 ("MAR"): `).
pub(crate) fn warn_at_cap_of(
    py: Python<'_>,
    what: &str,
    estimator: &str,
    fit: &Fit,
) -> PyResult<()> {
    if fit.stop != ldp_core::estimate::likelihood::Stop::Cap {
        return Ok(());
    }
    let advice = if estimator.trim() == "ibu" {
        "IBU creeps towards estimates with some frequency 0; \"ibu-squarem\" reaches the same \
         fixed point in far fewer steps, and \"mle\" maximizes the likelihood directly"
    } else {
        "raise max_iterations"
    };
    let message = format!(
        "{what}{} stopped at the cap of {} iterations, not converged: {advice}",
        estimator.trim(),
        fit.iterations
    );
    let message = std::ffi::CString::new(message).expect("no NUL in the message");
    PyErr::warn(
        py,
        &py.get_type::<pyo3::exceptions::PyRuntimeWarning>(),
        &message,
        1,
    )
}

#[pymethods]
impl Aggregator {
    /// The mechanism whose reports this aggregates.
    #[getter]
    fn mechanism(&self) -> Mechanism {
        self.mechanism.clone()
    }

    /// Number of reports aggregated.
    #[getter]
    fn n(&self, py: Python<'_>) -> u64 {
        py.detach_in_pool(|| dispatch_aggregator!(&*self.state(), a => a.count()))
    }

    /// Support count of every item (uint64), or None for SHE.
    #[getter]
    fn counts<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<u64>>> {
        let state = self.snapshot(py);
        let counts = dispatch_aggregator!(&state, a => a.support_counts())?;
        Some(PyArray1::from_slice(py, &counts))
    }

    /// SHE's coordinate-wise sums (after clipping), or None for the other families.
    #[getter]
    fn sums<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        let state = self.snapshot(py);
        let sums = dispatch_aggregator!(&state, a => a.coordinate_sums())?;
        Some(PyArray1::from_slice(py, sums))
    }

    /// Adds every report of `reports` (of this mechanism), validated; all or nothing.
    /// The GIL is released while they are added, and Ctrl-C stops it: then none is added.
    /// The aggregator takes the reports' labels, if they carry any (`categories`).
    fn add(&self, py: Python<'_>, reports: &Reports) -> PyResult<()> {
        if reports.mechanism.spec != self.mechanism.spec {
            return Err(report(format!(
                "reports of {} cannot go into an aggregator of {}: {}",
                reports.mechanism.spec_json(),
                self.mechanism.spec_json(),
                crate::mechanism::spec_difference(
                    &reports.mechanism.spec,
                    &self.mechanism.spec,
                    "the reports",
                    "the aggregator"
                )
            )));
        }
        let labels = same_labels(
            self.labels().clone(),
            &reports.labels,
            "the reports",
            "this aggregator",
        )
        .map_err(report)?;
        let clip = as_clip(self.clip);
        let data = &reports.data;
        let n = data.len();
        let any = &self.mechanism.any;
        let state_bytes = self.state_bytes();
        // Each piece is counted in a whole state of its own: as many at once as memory
        // holds beside the batch's total, the state and its update, at most four a thread.
        crate::errors::fits("add: the partial aggregates", 4, state_bytes)?;
        let fit = ldp_core::memory::available().map_or(u64::MAX, |free| free / state_bytes.max(1));
        let batch = py.detach_interruptibly(|stop| -> PyResult<AnyAggregator> {
            let pieces = n.div_ceil(PIECE);
            let round = (fit.saturating_sub(3).min(usize::MAX as u64) as usize)
                .clamp(1, 4 * rayon::current_num_threads());
            let mut batch = any.server(clip);
            for first in (0..pieces).step_by(round) {
                let partials: Vec<AnyAggregator> = (first..pieces.min(first + round))
                    .into_par_iter()
                    .map(|piece| {
                        if stop() {
                            return Err(crate::threads::stopped());
                        }
                        let mut partial = any.server(clip);
                        dispatch_aggregator!(&mut partial, a => {
                            let m = a.mechanism().clone();
                            m.add_rows(a, data, piece * PIECE..n.min((piece + 1) * PIECE))
                                .map_err(|(i, e)| report(format!("report {i}: {e}")))?;
                        });
                        Ok(partial)
                    })
                    .collect::<PyResult<_>>()?;
                // In order, so that SHE's float sums do not depend on the threads.
                for partial in &partials {
                    batch.merge(partial).map_err(aggregate)?;
                }
            }
            Ok(batch)
        })??;
        // A signal that came as the work ended is raised here, before anything is added;
        // one during the merge below (one state's time) comes after the batch is in.
        py.check_signals()?;
        py.detach(|| {
            let mut known = self.labels();
            let labels = same_labels(known.clone(), &labels, "the reports", "this aggregator")
                .map_err(report)?;
            let mut state = self.state();
            let mut total = state.clone();
            total.merge(&batch).map_err(aggregate)?;
            *state = total;
            *known = labels;
            Ok(())
        })
    }

    /// Adds everything `other` (of the same mechanism and clipping) has aggregated
    /// (`a.merge(a)` doubles `a`).
    fn merge(&self, py: Python<'_>, other: &Aggregator) -> PyResult<()> {
        if self.clip != other.clip {
            return Err(aggregate(format!(
                "aggregators with different SHE clipping ({:?} and {:?}) cannot merge",
                self.clip.map(ClipBound::get),
                other.clip.map(ClipBound::get)
            )));
        }
        // A copy first: `other` may be `self`, whose locks are taken next.
        let theirs = other.snapshot(py);
        let their_labels = other.labels().clone();
        py.detach_in_pool(|| {
            let mut labels = self.labels();
            let joined = same_labels(
                labels.clone(),
                &their_labels,
                "the other",
                "this aggregator",
            )
            .map_err(aggregate)?;
            let mut state = self.state();
            let mut merged = state.clone();
            merged.merge(&theirs).map_err(|e| match e {
                ldp_core::AggregateError::Incompatible { .. } => aggregate(format!(
                    "an aggregator of {} cannot merge one of {}: {}",
                    self.mechanism.spec_json(),
                    other.mechanism.spec_json(),
                    crate::mechanism::spec_difference(
                        &self.mechanism.spec,
                        &other.mechanism.spec,
                        "this aggregator",
                        "the other"
                    )
                )),
                e => aggregate(e),
            })?;
            *state = merged;
            *labels = joined;
            Ok(())
        })
    }

    /// The frequency estimate of every item: "unbiased" (may be negative); the
    /// consistency methods "base-pos", "norm", "clip" (Norm-Mul: multi-freq-ldpy's MI
    /// estimator), "norm-cut", "norm-sub", "simplex" (projection onto the probability
    /// simplex); and, reading the support counts through the channel, "base-cut",
    /// "mle-apx", "ibu" (iterative Bayesian update, as multi-freq-ldpy's IBU),
    /// "ibu-squarem" (IBU's fixed point in far fewer steps) and "mle".
    /// `max_iterations` (default 10000) and `tolerance` (default 1e-12) bound the three;
    /// `fit` also says what stopped them, and `estimate` warns (`RuntimeWarning`) when
    /// the cap did: the estimate is then not converged.
    ///
    /// With `labelled=True`, the estimate is a pandas Series indexed by the labels of the
    /// items (`categories`: given to `Mechanism.aggregator` or carried by the reports
    /// added).
    ///
    /// >>> import ldp, numpy as np
    /// >>> m = ldp.mechanism("grr", k=3, eps=2.0)
    /// >>> agg = m.aggregator(); agg.add(m.perturb(np.array([0] * 80 + [1] * 20), seed=1))
    /// >>> est = agg.estimate("ibu")
    /// >>> bool(abs(est.sum() - 1) < 1e-9 and est.min() >= 0)
    /// True
    #[pyo3(signature = (estimator="unbiased", *, max_iterations=None, tolerance=None, labelled=false))]
    fn estimate<'py>(
        &self,
        py: Python<'py>,
        estimator: &str,
        max_iterations: Option<i64>,
        tolerance: Option<f64>,
        labelled: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let labels = match labelled {
            true => Some(self.labels().clone().ok_or_else(|| {
                param(
                    "labelled=True: the aggregator has no labels; give them to \
                     mechanism.aggregator(categories=...) or add reports that carry them",
                )
            })?),
            false => None,
        };
        let fit = self.fit_values(py, estimator, max_iterations, tolerance)?;
        warn_at_cap(py, estimator, &fit)?;
        let values = fit.values.into_pyarray(py).into_any();
        match labels {
            Some(labels) => labels.categories(py)?.call_method1("label", (values,)),
            None => Ok(values),
        }
    }

    /// The labels of the items (an `ldp.Categories`), or None: those given to
    /// `Mechanism.aggregator`, or taken from the first labelled reports added (reports
    /// labelled otherwise are then refused; unlabelled ones are welcome).
    #[getter]
    fn categories<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let labels = self.labels().clone();
        labels.map(|l| l.categories(py)).transpose()
    }

    /// `estimate` and how it was reached: a dict with "estimate" (the array),
    /// "iterations" (0 unless the estimator iterates) and "stop" ("direct", "tolerance",
    /// or "cap" when the iteration cap stopped "ibu" or "mle" first).
    #[pyo3(signature = (estimator="unbiased", *, max_iterations=None, tolerance=None))]
    fn fit<'py>(
        &self,
        py: Python<'py>,
        estimator: &str,
        max_iterations: Option<i64>,
        tolerance: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let fit = self.fit_values(py, estimator, max_iterations, tolerance)?;
        fit_dict(py, fit)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "<ldp.Aggregator of {:?}, n={}>",
            self.mechanism.protocol.name(),
            self.n(py)
        )
    }

    /// Pickling: the state (JSON), the protocol's name, the SHE clipping bound, and the
    /// labels when there are some.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Py<PyAny>, Bound<'py, PyTuple>)> {
        let restore = py
            .import("ldp._ldp")?
            .getattr("_aggregator_from_state")?
            .unbind();
        let state = serde_json::to_string(&self.snapshot(py)).map_err(aggregate)?;
        let mut args = vec![
            state.into_pyobject(py)?.into_any(),
            self.mechanism.protocol.name().into_pyobject(py)?.into_any(),
            self.clip.map(ClipBound::get).into_pyobject(py)?.into_any(),
        ];
        if let Some(labels) = self.labels().as_ref() {
            args.push(labels.parts().into_pyobject(py)?.into_any());
        }
        Ok((restore, PyTuple::new(py, args)?))
    }
}

/// Unpickling: the state is checked as any shipped state is.
#[pyfunction]
#[pyo3(signature = (state, protocol, clip, labels=None))]
pub(crate) fn _aggregator_from_state(
    py: Python<'_>,
    state: &str,
    protocol: &str,
    clip: Option<f64>,
    labels: Option<(String, bool)>,
) -> PyResult<Aggregator> {
    let state: AnyAggregator = serde_json::from_str(state).map_err(aggregate)?;
    let spec = dispatch_aggregator!(&state, a => ldp_core::Mechanism::spec(a.mechanism()));
    let p = crate::options::protocol(protocol)?;
    if p.family() != spec.family() {
        return Err(aggregate(format!(
            "the state holds reports of {}, not of protocol {:?}",
            serde_json::to_string(&spec).expect("a spec serializes"),
            p.name()
        )));
    }
    let mechanism = Mechanism::build(p, spec, None)?;
    let clip = clip.map(ClipBound::new).transpose().map_err(aggregate)?;
    let labels = labels
        .map(|l| Labels::from_parts(py, l, &mechanism, "the pickled aggregator"))
        .transpose()?;
    Ok(Aggregator {
        mechanism,
        clip,
        state: Mutex::new(state),
        labels: Mutex::new(labels),
    })
}
