//! Repeated collection: the memoized protocols (`ldp.longitudinal`), the exact ASR after t
//! linked reports (`ldp.asr_after`), and its measurement (`ldp.simulate_linked`).

use crate::threads::{InPool, Stop};
use ldp_analytic::longitudinal as closed_forms;
use ldp_attack::longitudinal::{Collection, LinkedConfig, measure_linked};
use ldp_core::longitudinal::{Longitudinal as Inner, LongitudinalProtocol, Memoized, Refreshable};
use ldp_core::simulation::{BatchStreams, Role, USERS_PER_STREAM};
use ldp_core::{
    Aggregator, FamilyMechanism, Grr, GrrReport, LocalHashing, Mechanism as _, OnesReport, Support,
    UnaryEncoding, dispatch, parallel, with_batch_rng,
};
use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::columns::{Columnar, Columns};
use crate::errors::{aggregate, param, report};
use crate::mechanism::Mechanism;
use crate::options::domain;
use crate::reports::Reports;

/// A memoized protocol (L-GRR, L-SUE, L-OUE, L-OSUE, L-SOUE, L-OLH, L-BLH, or L-ADP's
/// choice): each
/// user perturbs its value once at `eps_perm` (the memo) and sends a fresh perturbation
/// of the memo, `eps_1`-LDP, at every collection.
#[pyclass(module = "ldp._ldp", frozen)]
#[derive(Clone)]
pub(crate) struct Longitudinal {
    pub(crate) inner: Inner,
}

/// A memoized protocol: `protocol` is l-grr, l-sue, l-oue, l-osue, l-soue, l-olh, l-blh
/// (LOLOHA and BiLOLOHA: local hashing, one seed per user) or l-adp.
///
/// >>> import ldp
/// >>> l = ldp.longitudinal("l-osue", k=100, eps_perm=2.0, eps_1=1.0)
/// >>> round(l.asr_limit, 4)
/// 0.0419
#[pyfunction]
#[pyo3(signature = (protocol, k, eps_perm, eps_1))]
pub(crate) fn longitudinal(
    protocol: &str,
    #[pyo3(from_py_with = crate::args::k)] k: i64,
    #[pyo3(from_py_with = crate::args::eps_perm)] eps_perm: f64,
    #[pyo3(from_py_with = crate::args::eps_1)] eps_1: f64,
) -> PyResult<Longitudinal> {
    let p: LongitudinalProtocol = protocol.parse().map_err(param)?;
    let eps_perm = ldp_core::Epsilon::new(eps_perm).map_err(|e| param(format!("eps_perm: {e}")))?;
    let eps_1 = ldp_core::Epsilon::new(eps_1).map_err(|e| param(format!("eps_1: {e}")))?;
    Ok(Longitudinal {
        inner: Inner::new(p, domain(k)?, eps_perm, eps_1).map_err(param)?,
    })
}

/// Each number of collections in `1..=MAX_COLLECTIONS`.
pub(crate) fn check_collections(collections: &[u32]) -> PyResult<()> {
    closed_forms::check_collections(collections).map_err(|e| param(format!("collections: {e}")))
}

/// Runs `$body` with `$m` the chain's [`Memoized`] combinator over its first round's
/// family: GRR for L-GRR (reports are items), LH for L-OLH and L-BLH (a seed and a
/// value), UE for the unary chains (reports are bits).
macro_rules! with_memoized {
    ($l:expr, $m:ident => $body:expr) => {
        if $l.reports_items() {
            let $m = $l.memoized::<Grr>().map_err(param)?;
            $body
        } else if $l.hash_range().is_some() {
            let $m = $l.memoized::<LocalHashing>().map_err(param)?;
            $body
        } else {
            let $m = $l.memoized::<UnaryEncoding>().map_err(param)?;
            $body
        }
    };
}

/// Every user's `collections` reports, batch b of users drawing from `make(b)` (fewer once
/// asked to stop).
fn draw_users<M, R>(
    m: &Memoized<M>,
    items: &[u32],
    collections: u32,
    make: impl Fn(u64) -> R + Sync,
    stop: Stop<'_>,
) -> Vec<Vec<M::Report>>
where
    M: FamilyMechanism,
    M::Report: Refreshable,
    R: rand::Rng,
{
    parallel::map_chunks(items, USERS_PER_STREAM, |b, chunk| {
        if stop() {
            return Vec::new();
        }
        let mut rng = make(b as u64);
        let users: Vec<Vec<M::Report>> = chunk
            .iter()
            .map(|&x| collect_user(m, x, collections, &mut rng))
            .collect();
        users
    })
    .into_iter()
    .flatten()
    .collect()
}

/// The user's memo then `collections` reports, from one stream per batch of users.
fn collect_user<M, R>(m: &Memoized<M>, x: u32, collections: u32, rng: &mut R) -> Vec<M::Report>
where
    M: FamilyMechanism,
    M::Report: Refreshable,
    R: rand::Rng,
{
    let memo = m.memoize(x, rng).expect("items are checked against k");
    (0..collections).map(|_| m.refresh(&memo, rng)).collect()
}

impl Longitudinal {
    /// Every user's memo then `collections` reports, `reports[u][c]`: batch b of 4096
    /// users from the seeded stream b, or with no seed from ChaCha20 keyed by the
    /// operating system.
    fn draw<M>(
        m: &Memoized<M>,
        py: Python<'_>,
        items: &[u32],
        collections: u32,
        seed: Option<u64>,
    ) -> PyResult<Vec<Vec<M::Report>>>
    where
        M: FamilyMechanism,
        M::Report: Refreshable,
    {
        let streams = BatchStreams::new(seed, Role::Genuine).map_err(param)?;
        py.detach_interruptibly(
            |stop| with_batch_rng!(streams, make => draw_users(m, items, collections, make, stop)),
        )
    }

    /// The arrays of `collect` and `estimate` hold items or bits; a hashed chain's report
    /// is a seed and a value, which `collect_reports` returns as `ldp.Reports`.
    fn arrays(&self, method: &str) -> PyResult<()> {
        match self.inner.hash_range() {
            Some(_) => Err(param(format!(
                "{method}: {} reports are a seed and a hashed value, not items or bits: use collect_reports, whose reports aggregate and estimate as report_mechanism's",
                self.inner.protocol().name()
            ))),
            None => Ok(()),
        }
    }

    /// The one-shot protocol one report follows, as an `ldp.Mechanism`, named as
    /// `Mechanism.from_spec` names a spec: a classic protocol when it is one (GRR; SUE or
    /// OUE when the chained p is theirs), else AUE, the UE protocol that takes any p.
    fn one_shot(&self) -> PyResult<Mechanism> {
        Mechanism::named(self.inner.report_spec().map_err(param)?, None)
    }
}

#[pymethods]
impl Longitudinal {
    /// The chain in use (L-ADP reports the one it picked).
    #[getter]
    fn protocol(&self) -> &'static str {
        self.inner.protocol().name()
    }

    /// The domain size.
    #[getter]
    fn k(&self) -> u32 {
        self.inner.domain_size().get()
    }

    /// The memo's budget.
    #[getter]
    fn eps_perm(&self) -> f64 {
        self.inner.eps_perm().get()
    }

    /// One report's budget.
    #[getter]
    fn eps_1(&self) -> f64 {
        self.inner.eps_1().get()
    }

    /// The rounds' probabilities: p1, q1 (memo), p2, q2 (report given the memo), and the
    /// chained p_s, q_s of one report given the value.
    fn rounds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let (a, b, c) = (
            self.inner.first_round(),
            self.inner.second_round(),
            self.inner.chained(),
        );
        for (name, v) in [
            ("p1", a.p),
            ("q1", a.q),
            ("p2", b.p),
            ("q2", b.q),
            ("p_s", c.p),
            ("q_s", c.q),
        ] {
            d.set_item(name, v)?;
        }
        Ok(d)
    }

    /// Approximate variance per user of one collection's estimate.
    #[getter]
    fn variance(&self) -> f64 {
        closed_forms::memoized_variance(&self.inner)
    }

    /// The exact ASR of the attack that links `collections` reports of one value.
    fn asr_after(&self, collections: u32) -> PyResult<f64> {
        check_collections(&[collections])?;
        Ok(closed_forms::memoized(&self.inner, collections))
    }

    /// The ASR's limit as the collections grow: the memo's one-shot ASR.
    #[getter]
    fn asr_limit(&self) -> f64 {
        closed_forms::memoized_limit(&self.inner)
    }

    /// Memoizes every user's item and returns `collections` reports per user, as a list
    /// (one entry per collection) of arrays: the reported items (L-GRR, int64, one per
    /// user) or the report bits (the unary chains, users x k, float64 as multi-freq-ldpy's
    /// L-* clients return them, whose aggregators add them up; `dtype="uint8"` takes an
    /// eighth of the memory, for this package's `estimate` only). With a seed, batch b of
    /// 4096 users draws from the seeded stream b; without, from ChaCha20 seeded by the
    /// operating system.
    ///
    /// >>> import ldp, numpy as np
    /// >>> l = ldp.longitudinal("l-grr", k=5, eps_perm=3.0, eps_1=1.0)
    /// >>> days = l.collect(np.arange(10) % 5, collections=3, seed=1)
    /// >>> len(days), days[0].shape
    /// (3, (10,))
    #[pyo3(signature = (items, collections=1, seed=None, *, dtype="float64"))]
    fn collect<'py>(
        &self,
        py: Python<'py>,
        items: &Bound<'py, PyAny>,
        collections: u32,
        #[pyo3(from_py_with = crate::args::optional_seed)] seed: Option<u64>,
        dtype: &str,
    ) -> PyResult<Bound<'py, PyList>> {
        self.arrays("collect")?;
        let k = self.inner.domain_size().get();
        let (narrow, bytes_per_bit) = match dtype {
            "float64" => (false, 8),
            "uint8" => (true, 1),
            other => {
                return Err(param(format!(
                    "dtype = {other:?}: \"float64\" (multi-freq-ldpy's) or \"uint8\""
                )));
            }
        };
        let items = crate::items::items(items, k, "items")?;
        check_collections(&[collections])?;
        // Each (user, collection) holds a report, and a dense row of k bytes for the
        // unary chains' output.
        let each = if self.inner.reports_items() {
            40
        } else {
            40 + (4 + bytes_per_bit) * u64::from(k)
        };
        crate::errors::fits(
            "collect: users x collections",
            (items.len() as u64).saturating_mul(u64::from(collections)),
            each,
        )?;
        let list = PyList::empty(py);
        let n = items.len();
        with_memoized!(self.inner, m => {
            let reports = Self::draw(&m, py, &items, collections, seed)?;
            let support = m.one_report();
            for c in 0..collections as usize {
                if self.inner.reports_items() {
                    let mut ys: Vec<i64> = Vec::with_capacity(n);
                    for r in &reports {
                        support.for_each_supported(&r[c], |y| ys.push(i64::from(y)));
                    }
                    list.append(ys.into_pyarray(py))?;
                } else if narrow {
                    let mut bits = vec![0u8; n * k as usize];
                    for (u, r) in reports.iter().enumerate() {
                        support.for_each_supported(&r[c], |i| bits[u * k as usize + i as usize] = 1);
                    }
                    list.append(bits.into_pyarray(py).reshape([n, k as usize])?)?;
                } else {
                    let mut bits = vec![0f64; n * k as usize];
                    for (u, r) in reports.iter().enumerate() {
                        support.for_each_supported(&r[c], |i| bits[u * k as usize + i as usize] = 1.0);
                    }
                    list.append(bits.into_pyarray(py).reshape([n, k as usize])?)?;
                }
            }
        });
        Ok(list)
    }

    /// The one-shot protocol one report follows, as an `ldp.Mechanism`: GRR at `eps_1`
    /// (L-GRR), or UE at `eps_1` with the chained true-bit probability (the unary chains;
    /// protocol "aue", the UE protocol that takes any p, unless the chained p is SUE's or
    /// OUE's; below 1/2 for L-OUE and L-SOUE).
    /// One collection's reports are its reports: `collect_reports` returns them as such.
    ///
    /// >>> import ldp
    /// >>> l = ldp.longitudinal("l-oue", k=10, eps_perm=2.0, eps_1=1.0)
    /// >>> m = l.report_mechanism
    /// >>> m.protocol, m.eps, round(m.param, 4)
    /// ('aue', 1.0, 0.2905)
    #[getter]
    fn report_mechanism(&self) -> PyResult<Mechanism> {
        self.one_shot()
    }

    /// The reports of `collect` (the same draws for the same seed), as one `ldp.Reports`
    /// per collection, of `report_mechanism`: they aggregate (`report_mechanism.aggregator()`,
    /// whose unbiased estimate equals `estimate`'s), merge, pickle, and go to Arrow and
    /// Parquet as any reports do. One user's reports at several collections share its
    /// memo: pooled, they still estimate without bias, but are not independent.
    ///
    /// >>> import ldp, numpy as np
    /// >>> l = ldp.longitudinal("l-osue", k=5, eps_perm=3.0, eps_1=1.0)
    /// >>> days = l.collect_reports(np.arange(10) % 5, collections=3, seed=1)
    /// >>> len(days), len(days[0]), days[0].mechanism == l.report_mechanism
    /// (3, 10, True)
    #[pyo3(signature = (items, collections=1, seed=None))]
    fn collect_reports(
        &self,
        py: Python<'_>,
        items: &Bound<'_, PyAny>,
        collections: u32,
        #[pyo3(from_py_with = crate::args::optional_seed)] seed: Option<u64>,
    ) -> PyResult<Vec<Reports>> {
        let k = self.inner.domain_size().get();
        let items = crate::items::items(items, k, "items")?;
        check_collections(&[collections])?;
        // Each (user, collection) holds a report and its columns: an item, or up to k
        // indices.
        let each = if self.inner.reports_items() {
            48
        } else {
            48 + 8 * u64::from(k)
        };
        crate::errors::fits(
            "collect_reports: users x collections",
            (items.len() as u64).saturating_mul(u64::from(collections)),
            each,
        )?;
        let mechanism = self.one_shot()?;
        with_memoized!(self.inner, m => {
            let reports = Self::draw(&m, py, &items, collections, seed)?;
            Ok((0..collections as usize)
                .map(|c| {
                    let mut data = dispatch!(&mechanism.any, m => m.with_capacity(reports.len()));
                    for user in &reports {
                        user[c].push(&mut data);
                    }
                    Reports::new(mechanism.clone(), data)
                })
                .collect())
        })
    }

    /// The frequency estimate of one collection's reports (an int array of items for
    /// L-GRR, a users x k 0/1 array for the unary chains), or of several pooled (a list
    /// of them, as `collect` returns), with the chained probabilities;
    /// `estimator` is any of `Aggregator.estimate`'s ("clip" is multi-freq-ldpy's MI),
    /// "ibu" and "mle" bounded by `max_iterations` and `tolerance` (a `RuntimeWarning`
    /// says when the cap stopped them, as `Aggregator.estimate` does).
    #[pyo3(signature = (reports, estimator="unbiased", *, max_iterations=None, tolerance=None))]
    fn estimate<'py>(
        &self,
        py: Python<'py>,
        reports: &Bound<'py, PyAny>,
        estimator: &str,
        max_iterations: Option<i64>,
        tolerance: Option<f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.arrays("estimate")?;
        let name = estimator;
        let estimator = crate::aggregator::estimator(name)?;
        let options = crate::aggregator::fit_options(estimator, max_iterations, tolerance)?;
        let k = self.inner.domain_size().get();
        // A list of collections: their reports pooled, one report per row.
        let numpy = py.import("numpy")?;
        let mut reports = numpy.call_method1("asarray", (reports,))?;
        let ndim: usize = reports.getattr("ndim")?.extract()?;
        let per_report = if self.inner.reports_items() { 1 } else { 2 };
        if ndim == per_report + 1 {
            let columns: Vec<usize> = reports.getattr("shape")?.extract()?;
            if per_report == 2 && columns[2] != k as usize {
                return Err(report(format!(
                    "reports: {} columns for k = {k}",
                    columns[2]
                )));
            }
            let shape = if per_report == 1 {
                vec![-1i64]
            } else {
                vec![-1i64, i64::from(k)]
            };
            reports = reports.call_method1("reshape", (shape,))?;
        }
        let reports = &reports;
        let fit = if self.inner.reports_items() {
            let mut agg = self
                .inner
                .memoized::<Grr>()
                .map_err(param)?
                .one_report()
                .aggregator();
            for y in crate::items::items(reports, k, "reports")? {
                agg.add(&GrrReport { y }).map_err(aggregate)?;
            }
            agg.fit(estimator, &options).map_err(aggregate)?
        } else {
            let mut agg = self
                .inner
                .memoized::<UnaryEncoding>()
                .map_err(param)?
                .one_report()
                .aggregator();
            let bits: PyReadonlyArray2<'py, i64> = reports
                .call_method1("astype", ("int64",))?
                .extract()
                .map_err(|_| report("reports: a users x k array of 0/1 bits"))?;
            if bits.shape()[1] != k as usize {
                return Err(report(format!(
                    "reports: {} columns for k = {k}",
                    bits.shape()[1]
                )));
            }
            for row in bits.as_array().rows() {
                let mut ones = Vec::new();
                for (i, &b) in row.iter().enumerate() {
                    match b {
                        0 => {}
                        1 => ones.push(i as u32),
                        other => return Err(report(format!("reports: bit {other} is not 0 or 1"))),
                    }
                }
                agg.add(&OnesReport { ones }).map_err(aggregate)?;
            }
            agg.fit(estimator, &options).map_err(aggregate)?
        };
        crate::aggregator::warn_at_cap(py, name, &fit)?;
        Ok(fit.values.into_pyarray(py))
    }

    fn __repr__(&self) -> String {
        format!(
            "ldp.longitudinal({:?}, k={}, eps_perm={}, eps_1={})",
            self.protocol(),
            self.k(),
            self.eps_perm(),
            self.eps_1()
        )
    }
}

/// The exact ASR after linked reports of one unchanged value, for a one-shot mechanism
/// without memoization (None where no exact form exists: SS with omega > 1, SHE) or a
/// memoized protocol. `collections` is one number (the result is one float, or None) or a
/// sequence of them (a list, one entry each), as `Longitudinal.asr_after` takes it.
///
/// >>> import ldp
/// >>> round(ldp.asr_after(ldp.mechanism("grr", k=100, eps=1.0), [1, 365])[1], 4)
/// 0.5514
/// >>> round(ldp.asr_after(ldp.mechanism("oue", k=100, eps=1.0), 30), 4)
/// 0.5641
#[pyfunction]
pub(crate) fn asr_after<'py>(
    py: Python<'py>,
    target: &Bound<'py, PyAny>,
    collections: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(t) = collections.extract::<u32>() {
        let values = asr_after_each(target, vec![t])?;
        return Ok(values[0].into_pyobject(py)?.into_any());
    }
    let collections: Vec<u32> = collections.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "collections must be a whole number of reports or a sequence of them",
        )
    })?;
    asr_after_each(target, collections)?
        .into_pyobject(py)
        .map(|v| v.into_any())
}

fn asr_after_each(target: &Bound<'_, PyAny>, collections: Vec<u32>) -> PyResult<Vec<Option<f64>>> {
    check_collections(&collections)?;
    if let Ok(m) = target.cast::<Mechanism>() {
        let spec = m.get().spec;
        Ok(collections
            .iter()
            .map(|&t| closed_forms::asr_after(&spec, t))
            .collect())
    } else if let Ok(l) = target.cast::<Longitudinal>() {
        let l = &l.get().inner;
        Ok(collections
            .iter()
            .map(|&t| Some(closed_forms::memoized(l, t)))
            .collect())
    } else {
        Err(param(
            "target: an ldp.Mechanism or an ldp.longitudinal protocol",
        ))
    }
}

/// The attack that links each user's reports of an unchanged value, measured on
/// `dataset="adult-age"` or `items`: ASR (with its SE) after each number of collections,
/// beside the exact closed form (None where there is none), as `ldp simulate
/// --collections`. `users` attacks that many users spread evenly over the data.
///
/// >>> import ldp
/// >>> l = ldp.longitudinal("l-grr", k=100, eps_perm=2.0, eps_1=1.0)
/// >>> s = ldp.simulate_linked(l, [1, 50], dataset="adult-age", users=2000, seed=1)
/// >>> s["collections"].tolist()
/// [1, 50]
#[pyfunction]
#[pyo3(signature = (target, collections, items=None, *, dataset=None, users=None, runs=1, seed=0))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate_linked<'py>(
    py: Python<'py>,
    target: &Bound<'py, PyAny>,
    collections: Vec<u32>,
    items: Option<&Bound<'py, PyAny>>,
    dataset: Option<&str>,
    users: Option<usize>,
    runs: u64,
    #[pyo3(from_py_with = crate::args::seed)] seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let (collection, k) = if let Ok(m) = target.cast::<Mechanism>() {
        let spec = m.get().spec;
        (Collection::OneShot(spec), spec.k())
    } else if let Ok(l) = target.cast::<Longitudinal>() {
        let l = l.get().inner.clone();
        let k = l.domain_size();
        (Collection::Memoized(l), k)
    } else {
        return Err(param(
            "target: an ldp.Mechanism or an ldp.longitudinal protocol",
        ));
    };
    check_collections(&collections)?;
    let pop = crate::analysis::population(items, dataset, k, "the target")?;
    let config = LinkedConfig::new(runs, seed, users, &collections);
    let sorted = config.collections.clone();
    let m = py
        .detach_in_pool(|| measure_linked(&collection, &pop, &config))
        .map_err(param)?;
    let expected: Vec<f64> = sorted
        .iter()
        .map(|&t| match &collection {
            Collection::OneShot(spec) => closed_forms::asr_after(spec, t).unwrap_or(f64::NAN),
            // Replayed reports reveal what one does.
            Collection::Permanent(spec) => closed_forms::asr_after(spec, 1).unwrap_or(f64::NAN),
            Collection::Memoized(l) => closed_forms::memoized(l, t),
        })
        .collect();
    let d = PyDict::new(py);
    d.set_item("collections", sorted.into_pyarray(py))?;
    d.set_item(
        "asr",
        m.asr
            .iter()
            .map(|e| e.mean)
            .collect::<Vec<_>>()
            .into_pyarray(py),
    )?;
    d.set_item(
        "asr_se",
        m.asr
            .iter()
            .map(|e| e.se)
            .collect::<Vec<_>>()
            .into_pyarray(py),
    )?;
    d.set_item("asr_expected", expected.into_pyarray(py))?;
    d.set_item("users", m.users)?;
    d.set_item("runs", m.runs)?;
    Ok(d)
}

/// The change detector of the paper's Example 2, measured: each user reports on `days`
/// days, its value changing each day with probability `change_rate` to another value of
/// the data, and the attacker flags the days its reconstruction moves. As `ldp simulate
/// --days D --change-rate R`. `target` is an `ldp.Mechanism` (a fresh report each day, or
/// with `permanent=True` its first report of a value replayed; dBitFlip's is dBitFlipPM,
/// which keeps its buckets and a memo per class of values) or an `ldp.longitudinal`
/// protocol. The dict holds `detect`, `false_alarm`, `precision`, `flag_rate` (each with
/// `_se`, and `_expected` from the closed form, NaN where there is none), the simulated
/// `change_rate_measured`, `values_per_user` and `budget_per_user`.
///
/// >>> import ldp
/// >>> pm = ldp.mechanism("dbitflip", k=100, eps=2.0)
/// >>> s = ldp.simulate_changes(pm, 10, 0.2, dataset="adult-age", users=2000, permanent=True)
/// >>> s["false_alarm"], s["budget_per_user"] <= 4.0
/// (0.0, True)
#[pyfunction]
#[pyo3(signature = (target, days, change_rate, items=None, *, dataset=None, users=None, runs=1, seed=0, permanent=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate_changes<'py>(
    py: Python<'py>,
    target: &Bound<'py, PyAny>,
    days: u32,
    change_rate: f64,
    items: Option<&Bound<'py, PyAny>>,
    dataset: Option<&str>,
    users: Option<usize>,
    runs: u64,
    #[pyo3(from_py_with = crate::args::seed)] seed: u64,
    permanent: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (collection, k, exact) = change_target(target, permanent)?;
    let pop = crate::analysis::population(items, dataset, k, "the target")?;
    let config = ldp_attack::change::ChangeConfig {
        runs,
        seed,
        users,
        days,
        change_rate,
    };
    let m = py
        .detach_in_pool(|| ldp_attack::change::measure_changes(&collection, &pop, &config))
        .map_err(param)?;
    change_dict(py, &m, exact, change_rate)
}

/// The change detector on recorded values, replayed: `trajectories` holds each user's
/// value on consecutive days (a list of sequences, of any lengths, or a 2-D array of
/// users by days), and the attacker flags the days its reconstruction moves. As
/// `ldp simulate --trajectories FILE.csv`; `target` and the dict as
/// `ldp.simulate_changes`, the closed forms at the recorded change rate.
///
/// >>> import ldp
/// >>> grr = ldp.mechanism("grr", k=4, eps=3.0)
/// >>> s = ldp.replay_changes(grr, [[0, 0, 1, 1, 0], [2, 2, 2, 2, 2]], runs=100, permanent=True)
/// >>> s["change_rate_measured"], s["false_alarm"]
/// (0.25, 0.0)
#[pyfunction]
#[pyo3(signature = (target, trajectories, *, runs=1, seed=0, permanent=false))]
pub(crate) fn replay_changes<'py>(
    py: Python<'py>,
    target: &Bound<'py, PyAny>,
    trajectories: &Bound<'py, PyAny>,
    runs: u64,
    #[pyo3(from_py_with = crate::args::seed)] seed: u64,
    permanent: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (collection, k, exact) = change_target(target, permanent)?;
    let mut users: Vec<Vec<u32>> = Vec::new();
    for (i, user) in trajectories
        .try_iter()
        .map_err(|_| param("trajectories: a list of each user's values, one per day"))?
        .enumerate()
    {
        let values: Vec<u32> = user?.extract().map_err(|_| {
            param(format!(
                "trajectories[{i}]: a sequence of items in 0..{k}, one per day"
            ))
        })?;
        users.push(values);
    }
    let trajectories = ldp_attack::data::Trajectories::new(k, users)
        .map_err(|e| param(format!("trajectories: {e}")))?;
    let (changes, pairs) = trajectories.changes();
    let config = ldp_attack::change::ReplayConfig { runs, seed };
    let m = py
        .detach_in_pool(|| {
            ldp_attack::change::measure_replayed(&collection, &trajectories, &config)
        })
        .map_err(param)?;
    change_dict(py, &m, exact, changes as f64 / pairs as f64)
}

/// What `target` sends each day, the domain size, and the detector's closed form if any.
fn change_target(
    target: &Bound<'_, PyAny>,
    permanent: bool,
) -> PyResult<(
    Collection,
    ldp_core::DomainSize,
    Option<ldp_analytic::change::ChangeRates>,
)> {
    use ldp_analytic::change;
    Ok(if let Ok(m) = target.cast::<Mechanism>() {
        let spec = m.get().spec;
        if permanent {
            (
                Collection::Permanent(spec),
                spec.k(),
                change::permanent(&spec),
            )
        } else {
            (Collection::OneShot(spec), spec.k(), change::one_shot(&spec))
        }
    } else if let Ok(l) = target.cast::<Longitudinal>() {
        if permanent {
            return Err(param(
                "permanent=True replays a one-shot mechanism's report; a longitudinal protocol memoizes already",
            ));
        }
        let l = l.get().inner.clone();
        let (k, exact) = (l.domain_size(), change::memoized(&l));
        (Collection::Memoized(l), k, exact)
    } else {
        return Err(param(
            "target: an ldp.Mechanism or an ldp.longitudinal protocol",
        ));
    })
}

/// The detector's measured rates beside their closed forms at `change_rate`.
fn change_dict<'py>(
    py: Python<'py>,
    m: &ldp_attack::change::ChangeMeasurement,
    exact: Option<ldp_analytic::change::ChangeRates>,
    change_rate: f64,
) -> PyResult<Bound<'py, PyDict>> {
    use ldp_analytic::change;
    let d = PyDict::new(py);
    let closed = |f: &dyn Fn(&change::ChangeRates) -> Option<f64>| {
        exact.as_ref().and_then(f).unwrap_or(f64::NAN)
    };
    let nan = ldp_attack::Estimate {
        mean: f64::NAN,
        se: f64::NAN,
    };
    for (name, e, expected) in [
        ("detect", &m.detect, closed(&|r| Some(r.detect))),
        (
            "false_alarm",
            &m.false_alarm,
            closed(&|r| Some(r.false_alarm)),
        ),
        (
            "precision",
            m.precision.as_ref().unwrap_or(&nan),
            closed(&|r| r.precision(change_rate)),
        ),
        (
            "flag_rate",
            &m.flag_rate,
            closed(&|r| Some(r.flag_rate(change_rate))),
        ),
    ] {
        d.set_item(name, e.mean)?;
        d.set_item(format!("{name}_se"), e.se)?;
        d.set_item(format!("{name}_expected"), expected)?;
    }
    d.set_item("change_rate_measured", m.change_rate.mean)?;
    d.set_item("change_rate_se", m.change_rate.se)?;
    d.set_item("values_per_user", m.values_per_user)?;
    d.set_item("budget_per_user", m.budget_per_user)?;
    d.set_item("users", m.users)?;
    d.set_item("runs", m.runs)?;
    d.set_item("days", m.days)?;
    Ok(d)
}
