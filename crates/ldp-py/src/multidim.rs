//! `ldp.Multidim`: several attributes per user (`ldp_core::multidim`), its reports
//! (`ldp.MultidimReports`), their estimates, the closed forms of `ldp_analytic::multidim`
//! and the measurements of `ldp simulate --dataset TABLE --solution NAME`.
//!
//! The client is built as the `ldp` tool builds it (`--attributes ... --solution ...`):
//! every attribute's instance of the protocol at the solution's per-report budget, a
//! classic protocol at its preset, an adaptive one tuned for that attribute's domain.

use crate::threads::{InPool, Stop};
use ldp_analytic::LhAsr;
use ldp_analytic::multidim::{Collection, Population};
use ldp_attack::Table;
use ldp_attack::multidim::{TableMeasureError, measure_table};
use ldp_core::multidim::{
    Multidim as Client, MultidimAggregator, MultidimReport, MultidimSpec, Priors, Solution,
};
use ldp_core::simulation::{BatchStreams, Role, USERS_PER_STREAM, stream_rng};
use ldp_core::{
    AttackSurface, DomainSize, Epsilon, Estimator, ParamError, Protocol, dispatch_multidim,
    parallel, with_batch_rng,
};
use ldp_optimize::Tuned;
use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray2};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rand::Rng;
use rayon::prelude::*;

use crate::columns::{Columns, Data};
use crate::errors::{ItemError, aggregate, param, report};
use crate::mechanism::{Mechanism, family_param};
use crate::options::{budget, domain, named, resolve};
use crate::reports::Reports;

/// A client of several attributes: one protocol instance per attribute, all of one
/// family, spending the user's budget as its solution says (spl, smp, rsfd, rsfd-z,
/// rsrfd). Build one with `ldp.multidim(...)`.
///
/// >>> import ldp, numpy as np
/// >>> m = ldp.multidim("grr", 1.0, [4, 3], solution="spl")
/// >>> m.solution, m.domains, m.report_eps
/// ('spl', [4, 3], 0.5)
#[pyclass(module = "ldp._ldp", frozen)]
#[derive(Debug, Clone)]
pub struct Multidim {
    protocol: Protocol,
    spec: MultidimSpec,
    tuned: Vec<Option<Tuned>>,
    names: Option<Vec<String>>,
    labels: Option<Vec<Vec<String>>>,
    series: bool,
}

/// Reports of several attributes, one per user, as numpy columns: per attribute an
/// `ldp.Reports` of its protocol (every user's for spl and the RS+ solutions, fakes
/// included; those of the users who sampled it for smp) and, for smp, the attribute each
/// user reported. Indexing gives a user's report as the `ldp` tool's JSON:
/// `{"sampled": {"attribute": j, "report": ...}}` (smp) or `{"every": [...]}`.
#[pyclass(module = "ldp._ldp", frozen)]
#[derive(Debug, Clone)]
pub struct MultidimReports {
    client: Multidim,
    /// smp: the attribute each user reported.
    sampled: Option<Vec<u32>>,
    /// Per attribute, its reports in user order.
    parts: Vec<Data>,
}

fn solution_of(name: &str) -> PyResult<Solution> {
    name.parse::<Solution>()
        .map_err(|e| param(format!("solution = {name:?}: {e}")))
}

impl Multidim {
    /// The client's spec, for the audits.
    pub(crate) fn spec(&self) -> &MultidimSpec {
        &self.spec
    }

    fn d(&self) -> usize {
        self.spec.specs().len()
    }

    /// How attribute `j` is named in messages: `attribute 1 ("MAR")`.
    fn attribute_name(&self, j: usize) -> String {
        match &self.names {
            Some(names) => format!("attribute {j} ({:?})", names[j]),
            None => format!("attribute {j}"),
        }
    }

    fn display_name(&self, j: usize) -> String {
        self.names
            .as_ref()
            .map_or_else(|| j.to_string(), |n| n[j].clone())
    }

    /// An attribute by index or by name.
    fn attribute_index(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(name) = key.extract::<String>() {
            return self
                .names
                .as_ref()
                .and_then(|names| names.iter().position(|n| *n == name))
                .ok_or_else(|| {
                    param(format!(
                        "attribute {name:?}: no such attribute (they are {})",
                        (0..self.d())
                            .map(|j| self.display_name(j))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                });
        }
        let j: i64 = key
            .extract()
            .map_err(|_| PyTypeError::new_err("an attribute is an index or a name"))?;
        usize::try_from(j)
            .ok()
            .filter(|&j| j < self.d())
            .ok_or_else(|| {
                PyIndexError::new_err(format!("attribute {j} of {} attributes", self.d()))
            })
    }

    /// Attribute `j`'s mechanism, as `ldp.mechanism` would give it.
    fn mechanism_of(&self, j: usize) -> PyResult<Mechanism> {
        Mechanism::build(self.protocol, self.spec.specs()[j], self.tuned[j])
    }

    /// The users' items: a 2-D integer array (n x d), each column in its attribute's
    /// domain, or a DataFrame converted by `ldp._multidim.frame_codes`. Row-major.
    fn items(&self, obj: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        let py = obj.py();
        let np = py.import("numpy")?;
        let is_frame = obj.hasattr("columns")? && obj.hasattr("dtypes")?;
        let array = if is_frame {
            let names: Option<Vec<String>> = self.names.clone();
            py.import("ldp._multidim")?.call_method1(
                "frame_codes",
                (obj, names, self.labels.clone(), self.domains()),
            )?
        } else {
            np.call_method1("asarray", (obj,))?
        };
        let ndim: usize = array.getattr("ndim")?.extract()?;
        let d = self.d();
        if ndim != 2 {
            return Err(ItemError::new_err(format!(
                "items must be two-dimensional, one row per user and one column per attribute \
                 ({d}), not {ndim}-dimensional"
            )));
        }
        let shape: (usize, usize) = array.getattr("shape")?.extract()?;
        if shape.1 != d {
            return Err(ItemError::new_err(format!(
                "items has {} columns, but the client has {d} attributes: one item per attribute",
                shape.1
            )));
        }
        let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
        if shape.0 > 0 && kind != "i" && kind != "u" {
            let dtype = array.getattr("dtype")?.str()?.to_string();
            return Err(PyTypeError::new_err(format!(
                "items must be integers, not {dtype}"
            )));
        }
        // Unsigned values past i64 are outside every domain: cap them first (the message
        // reads the value given back from the array).
        let wide = if kind == "u" {
            let capped = np.call_method1(
                "minimum",
                (&array, np.getattr("uint64")?.call1((1u64 << 62,))?),
            )?;
            np.call_method1("ascontiguousarray", (capped, "int64"))?
        } else {
            np.call_method1("ascontiguousarray", (&array, "int64"))?
        };
        let a: PyReadonlyArray2<'_, i64> = wide.extract()?;
        let values = a.as_slice()?;
        let ks: Vec<u32> = self.domains();
        let bad = crate::threads::install(|| {
            values
                .par_iter()
                .enumerate()
                .find_first(|&(i, &x)| !(0..i64::from(ks[i % d])).contains(&x))
                .map(|(i, _)| i)
        });
        if let Some(i) = bad {
            let (row, j) = (i / d, i % d);
            let given = array.get_item((row, j))?.str()?.to_string();
            return Err(ItemError::new_err(format!(
                "items[{row}, {j}] = {given} is outside the domain of {}: items are 0 to {} (k = {})",
                self.attribute_name(j),
                ks[j] - 1,
                ks[j]
            )));
        }
        Ok(values.iter().map(|&x| x as u32).collect())
    }

    /// Estimates as Python returns them: a list of arrays, a dict by name, or (built from
    /// a DataFrame) a dict of pandas Series indexed by the labels.
    fn shaped<'py>(&self, py: Python<'py>, values: Vec<Vec<f64>>) -> PyResult<Bound<'py, PyAny>> {
        let Some(names) = &self.names else {
            let list = PyList::empty(py);
            for v in values {
                list.append(v.into_pyarray(py))?;
            }
            return Ok(list.into_any());
        };
        let d = PyDict::new(py);
        for (j, v) in values.into_iter().enumerate() {
            let array = v.into_pyarray(py).into_any();
            match (&self.labels, self.series) {
                (Some(labels), true) => {
                    let pandas = py.import("pandas")?;
                    let index_kwargs = PyDict::new(py);
                    index_kwargs.set_item("name", &names[j])?;
                    let index =
                        pandas.call_method("Index", (labels[j].clone(),), Some(&index_kwargs))?;
                    let kwargs = PyDict::new(py);
                    kwargs.set_item("index", index)?;
                    kwargs.set_item("name", "estimate")?;
                    d.set_item(
                        &names[j],
                        pandas.call_method("Series", (array,), Some(&kwargs))?,
                    )?;
                }
                _ => d.set_item(&names[j], array)?,
            }
        }
        Ok(d.into_any())
    }

    fn collection(&self) -> PyResult<Collection> {
        dispatch_multidim!(&self.spec, m => Collection::of(&m)).map_err(param)
    }

    /// The table of `data`: a shipped table by name, or the users' items with this
    /// client's names and labels.
    fn table(&self, data: &Bound<'_, PyAny>) -> PyResult<Table> {
        let domains = self.domains();
        if let Ok(name) = data.extract::<String>() {
            let table = named_table(&name)?;
            let theirs: Vec<u32> = table.domain_sizes().iter().map(|k| k.get()).collect();
            if theirs != domains {
                return Err(param(format!(
                    "dataset {name:?} has {} attributes of domains {theirs:?}, but this client has \
                     domains {domains:?}: build it with ldp.multidim(..., {name:?}) or select \
                     attributes from ldp.dataset({name:?})",
                    theirs.len()
                )));
            }
            return Ok(table);
        }
        let codes = self.items(data)?;
        let names = (0..self.d()).map(|j| self.display_name(j)).collect();
        let labels = match &self.labels {
            Some(labels) => labels.clone(),
            None => domains
                .iter()
                .map(|&k| (0..k).map(|v| v.to_string()).collect())
                .collect(),
        };
        Table::from_row_major(names, labels, codes).map_err(|e| param(format!("data: {e}")))
    }
}

/// `e` with its message prefixed by `context`, of the same Python class.
fn prefixed(py: Python<'_>, e: PyErr, context: &str) -> PyErr {
    let text = format!("{context}: {}", e.value(py));
    let kind = e.get_type(py);
    kind.call1((text,))
        .map_or_else(|err| err, PyErr::from_value)
}

/// A shipped table of several attributes.
fn named_table(name: &str) -> PyResult<Table> {
    match name {
        "adult" => Ok(Table::adult().clone()),
        "acs-employment" => Ok(Table::acs_employment().clone()),
        other => Err(param(format!(
            "dataset {other:?}: the tables of several attributes are \"adult\" and \"acs-employment\""
        ))),
    }
}

/// `MemoryError` unless the reports of users `rows` fit in the memory available: a few
/// users' reports (made with a throwaway stream) show what a user's take, each attribute's
/// largest (the largest of them for smp, whose users report one attribute). The parts and
/// their concatenation coexist, hence twice.
fn room_to_perturb<M: Columns>(m: &Client<M>, rows: &[u32]) -> PyResult<()> {
    let d = m.dimensions();
    let users = rows.len() / d.max(1);
    let sample = users.min(8);
    if sample == 0 {
        return Ok(());
    }
    let largest: u64 = m
        .attributes()
        .iter()
        .map(|a| {
            a.empty()
                .largest_report_bytes(a.spec().report_limits().entries)
        })
        .sum();
    crate::errors::fits("perturb: the reports", sample as u64, largest)?;
    let picked: Vec<u32> = (0..sample)
        .flat_map(|i| {
            let u = i * users / sample;
            rows[u * d..(u + 1) * d].iter().copied()
        })
        .collect();
    let throwaway = |b| stream_rng(0, 0, Role::Other(0), b);
    let (_, parts) = perturb_rows(m, &picked, throwaway, &|| false).expect("not stopped");
    let each = parts.iter().map(Data::max_report_bytes);
    let per_user = if m.solution().names_its_attribute() {
        each.max().unwrap_or(0)
    } else {
        each.sum()
    };
    crate::errors::fits("perturb: the reports", users as u64, 2 * per_user)
}

/// The reports of users `rows` (row-major items), batch b drawing from `make(b)`:
/// per batch in parallel, in order. Returns smp's sampled attributes and every
/// attribute's reports, or `None` once asked to stop.
fn perturb_rows<M: Columns, R: Rng>(
    m: &Client<M>,
    rows: &[u32],
    make: impl Fn(u64) -> R + Sync,
    stop: Stop<'_>,
) -> Option<(Option<Vec<u32>>, Vec<Data>)> {
    let d = m.dimensions();
    let smp = m.solution().names_its_attribute();
    let parts: Option<Vec<(Vec<u32>, Vec<Data>)>> = crate::threads::install(|| {
        parallel::map_chunks(rows, USERS_PER_STREAM * d, |b, chunk| {
            if stop() {
                return None;
            }
            let mut rng = make(b as u64);
            let mut sampled = Vec::new();
            let mut data: Vec<Data> = m.attributes().iter().map(|a| a.empty()).collect();
            for items in chunk.chunks_exact(d) {
                let r = m.perturb(items, &mut rng).expect("items are checked");
                match r {
                    MultidimReport::Sampled { attribute, report } => {
                        let j = attribute as usize;
                        m.attributes()[j].push(&mut data[j], &report);
                        sampled.push(attribute);
                    }
                    MultidimReport::Every(reports) => {
                        for (j, report) in reports.iter().enumerate() {
                            m.attributes()[j].push(&mut data[j], report);
                        }
                    }
                }
            }
            Some((sampled, data))
        })
        .into_iter()
        .collect()
    });
    let parts = parts?;
    let sampled = smp.then(|| parts.iter().flat_map(|p| p.0.iter().copied()).collect());
    let data = (0..d)
        .map(|j| {
            let pieces: Vec<Data> = parts.iter().map(|p| p.1[j].clone()).collect();
            Data::concat(m.attributes()[j].empty(), &pieces)
        })
        .collect();
    Some((sampled, data))
}

impl MultidimReports {
    /// Every user's report, in order, as `ldp_core`'s type.
    fn each<M: Columns>(&self, m: &Client<M>) -> Vec<MultidimReport<M::Report>> {
        let d = m.dimensions();
        match &self.sampled {
            Some(sampled) => {
                let mut next = vec![0usize; d];
                sampled
                    .iter()
                    .map(|&a| {
                        let j = a as usize;
                        let report = m.attributes()[j].report(&self.parts[j], next[j]);
                        next[j] += 1;
                        MultidimReport::Sampled {
                            attribute: a,
                            report,
                        }
                    })
                    .collect()
            }
            None => (0..self.len_users()).map(|i| self.every_at(m, i)).collect(),
        }
    }

    fn every_at<M: Columns>(&self, m: &Client<M>, i: usize) -> MultidimReport<M::Report> {
        MultidimReport::Every(
            m.attributes()
                .iter()
                .zip(&self.parts)
                .map(|(a, data)| a.report(data, i))
                .collect(),
        )
    }

    fn len_users(&self) -> usize {
        match &self.sampled {
            Some(s) => s.len(),
            None => self.parts.first().map_or(0, Data::len),
        }
    }

    /// The server of these reports, aggregated in parallel batches merged in order (an
    /// error once asked to stop).
    fn aggregate<M: Columns>(
        &self,
        m: &Client<M>,
        stop: Stop<'_>,
    ) -> Result<MultidimAggregator<M>, String> {
        let each = self.each(m);
        let parts: Vec<Result<MultidimAggregator<M>, String>> = crate::threads::install(|| {
            parallel::map_chunks(&each, USERS_PER_STREAM, |b, chunk| {
                if stop() {
                    return Err("stopped".to_owned());
                }
                let mut server = m.aggregator();
                for (i, r) in chunk.iter().enumerate() {
                    server
                        .add(r)
                        .map_err(|e| format!("report {}: {e}", b * USERS_PER_STREAM + i))?;
                }
                Ok(server)
            })
        });
        let mut server = m.aggregator();
        for part in parts {
            server.merge(&part?).map_err(|e| e.to_string())?;
        }
        Ok(server)
    }
}

#[pymethods]
impl Multidim {
    /// The protocol every attribute uses, as `ldp.mechanism` takes it.
    #[getter]
    fn protocol(&self) -> &'static str {
        self.protocol.name()
    }

    /// How the budget is spent: "spl", "smp", "rsfd", "rsfd-z" or "rsrfd".
    #[getter]
    fn solution(&self) -> &'static str {
        self.spec.solution().name()
    }

    /// The user's total budget.
    #[getter]
    fn eps(&self) -> f64 {
        self.spec.epsilon().get()
    }

    /// The budget each attribute's report spends: eps / d (spl), eps (smp),
    /// ln(d (e^eps - 1) + 1) (the RS+ solutions).
    #[getter]
    fn report_eps(&self) -> f64 {
        self.spec.specs()[0].eps().get()
    }

    /// Each attribute's domain size.
    #[getter]
    fn domains(&self) -> Vec<u32> {
        self.spec.specs().iter().map(|s| s.k().get()).collect()
    }

    /// The attributes' names, or None when they were given by their sizes only.
    #[getter]
    fn names(&self) -> Option<Vec<String>> {
        self.names.clone()
    }

    /// Each attribute's labels (item v is labels[j][v]), or None.
    #[getter]
    fn labels(&self) -> Option<Vec<Vec<String>>> {
        self.labels.clone()
    }

    /// Each attribute's family parameter at the report budget (as `Mechanism.param`).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Vec<Option<Bound<'py, PyAny>>>> {
        self.spec
            .specs()
            .iter()
            .map(|s| family_param(py, &s.params()))
            .collect()
    }

    /// RS+RFD's priors, one array per attribute, or None.
    #[getter]
    fn priors<'py>(&self, py: Python<'py>) -> Option<Vec<Bound<'py, PyArray1<f64>>>> {
        self.spec.priors().map(|p| {
            p.values()
                .iter()
                .map(|v| PyArray1::from_slice(py, v))
                .collect()
        })
    }

    /// Attribute `attribute`'s protocol instance (an index or a name), as `ldp.mechanism`
    /// gives it: its reports are those `MultidimReports.reports` holds.
    fn mechanism(&self, attribute: &Bound<'_, PyAny>) -> PyResult<Mechanism> {
        let j = self.attribute_index(attribute)?;
        self.mechanism_of(j)
    }

    /// Perturbs every user's items: a 2-D integer array (one row per user, one column per
    /// attribute, each in its domain) or a pandas DataFrame (see `ldp.multidim`). With
    /// `seed`, the reports are exactly those of `ldp perturb --attributes ... --seed SEED`
    /// (user n draws from the stream of batch n // 4096). The GIL is released, and Ctrl-C
    /// stops it; reports that cannot fit in the memory available are a `MemoryError`.
    #[pyo3(signature = (items, seed=None))]
    fn perturb(
        &self,
        py: Python<'_>,
        items: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = crate::args::optional_seed)] seed: Option<u64>,
    ) -> PyResult<MultidimReports> {
        let rows = self.items(items)?;
        let streams = BatchStreams::new(seed, Role::Genuine).map_err(param)?;
        let (sampled, parts) = py
            .detach_interruptibly(|stop| {
                dispatch_multidim!(&self.spec, m => (|| {
                    room_to_perturb(&m, &rows)?;
                    with_batch_rng!(streams, make => perturb_rows(&m, &rows, make, stop))
                        .ok_or_else(crate::threads::stopped)
                })())
            })?
            .map_err(param)??;
        Ok(MultidimReports {
            client: self.clone(),
            sampled,
            parts,
        })
    }

    /// Every attribute's frequencies from `reports` (of this client), the fakes taken out:
    /// a list of numpy arrays; a dict by attribute name when the attributes are named;
    /// pandas Series indexed by the labels when the client was built from a DataFrame.
    /// Estimators: "unbiased", "clip", "norm-sub", "simplex", and those that read the
    /// channel ("ibu", "mle", "base-cut"; refused for rsrfd), the iterative ones bounded
    /// by `max_iterations` and `tolerance` as in `Aggregator.estimate` (a
    /// `RuntimeWarning` names each attribute whose estimate stopped at the cap).
    #[pyo3(signature = (reports, estimator="unbiased", *, max_iterations=None, tolerance=None))]
    fn estimate<'py>(
        &self,
        py: Python<'py>,
        reports: &MultidimReports,
        estimator: &str,
        max_iterations: Option<i64>,
        tolerance: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let name = estimator;
        let estimator: Estimator = crate::aggregator::estimator(name)?;
        let options = crate::aggregator::fit_options(estimator, max_iterations, tolerance)?;
        if reports.client.spec != self.spec {
            return Err(report(
                "these reports are of another client (another solution, budget, protocol or domains)",
            ));
        }
        // Every user's report is taken out of the columns to be aggregated.
        let bytes: u64 = reports.parts.iter().map(Data::bytes).sum();
        let users = reports.len_users() as u64;
        crate::errors::fits(
            "estimate: the reports",
            users,
            bytes.div_ceil(users.max(1)) + 64,
        )?;
        let fits = py
            .detach_interruptibly(|stop| {
                dispatch_multidim!(&self.spec, m => (|| {
                    let server = reports.aggregate(&m, stop).map_err(report)?;
                    if server.count() == 0 {
                        return Err(aggregate("no reports to estimate from"));
                    }
                    (0..m.dimensions())
                        .map(|j| server.fit(j, estimator, &options).map_err(aggregate))
                        .collect::<PyResult<Vec<_>>>()
                })())
            })?
            .map_err(param)??;
        for (j, fit) in fits.iter().enumerate() {
            let what = format!("{}: ", self.attribute_name(j));
            crate::aggregator::warn_at_cap_of(py, &what, name, fit)?;
        }
        self.shaped(py, fits.into_iter().map(|f| f.values).collect())
    }

    /// The expected success of the reconstruction attack on each attribute, under a
    /// uniform prior (`ldp_analytic::multidim::Collection::asr`); `lh_asr` "paper" or
    /// "exact" for local hashing.
    #[pyo3(signature = (lh_asr="paper"))]
    fn asr<'py>(&self, py: Python<'py>, lh_asr: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let lh: LhAsr = named("lh_asr", Some(lh_asr))?.expect("given");
        let c = self.collection()?;
        let values = (0..self.d())
            .map(|j| c.asr(j, lh).map_err(param))
            .collect::<PyResult<Vec<f64>>>()?;
        Ok(values.into_pyarray(py))
    }

    /// The expected probability that the attack reconstructs every attribute of a user
    /// (uniform, independent attributes; `Collection::asr_joint`).
    #[pyo3(signature = (lh_asr="paper"))]
    fn asr_joint(&self, lh_asr: &str) -> PyResult<f64> {
        let lh: LhAsr = named("lh_asr", Some(lh_asr))?.expect("given");
        self.collection()?.asr_joint(lh).map_err(param)
    }

    /// The variance of the estimate of `item` of `attribute` (an index or a name) for `n`
    /// users of whom a share `f` hold it (`Collection::variance`); `population` "fixed"
    /// (n given users) or "sampled" (items drawn from f: adds f (1 - f) / n).
    #[pyo3(signature = (attribute, item, n, f, population="fixed"))]
    fn variance(
        &self,
        attribute: &Bound<'_, PyAny>,
        item: u32,
        n: f64,
        f: f64,
        population: &str,
    ) -> PyResult<f64> {
        let j = self.attribute_index(attribute)?;
        let population = match population {
            "fixed" => Population::Fixed,
            "sampled" => Population::Sampled,
            other => {
                return Err(param(format!(
                    "population = {other:?}: expected \"fixed\" or \"sampled\""
                )));
            }
        };
        self.collection()?
            .variance(j, item, n, f, population)
            .map_err(param)
    }

    /// Measures `runs` collections of every user of `data` (a 2-D integer array, a
    /// DataFrame, or a shipped table: "adult", "acs-employment", whose domains must be
    /// this client's), as `ldp simulate --dataset ... --solution ...` does: an `ldp.Table`
    /// with one row per attribute and its columns (attribute, k, eps_report, param, mse,
    /// mse_se, asr, asr_se, joint_asr, joint_asr_se, inference, inference_se,
    /// inference_baseline; NaN where the tool prints nothing). The GIL is released, and
    /// Ctrl-C stops it.
    #[pyo3(signature = (data, *, runs=10, seed=0))]
    fn simulate<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        runs: u64,
        #[pyo3(from_py_with = crate::args::seed)] seed: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        if runs == 0 {
            return Err(param("runs = 0: at least one run is needed"));
        }
        crate::errors::fits("simulate: runs", runs, 16 * (self.d() as u64 + 1))?;
        let table = self.table(data)?;
        let measured = py
            .detach_interruptibly(
                |stop| dispatch_multidim!(&self.spec, m => measure(&m, &table, runs, seed, stop)),
            )?
            .map_err(param)?
            .map_err(crate::errors::tuning)?;
        let d = self.d();
        let names: Vec<String> = if data.extract::<String>().is_ok() {
            table.names().to_vec()
        } else {
            (0..d).map(|j| self.display_name(j)).collect()
        };
        let specs = self.spec.specs();
        let cols = PyDict::new(py);
        let nan = f64::NAN;
        let column = |f: &dyn Fn(usize) -> f64| -> Vec<f64> { (0..d).map(f).collect() };
        cols.set_item("attribute", names)?;
        cols.set_item(
            "k",
            specs
                .iter()
                .map(|s| i64::from(s.k().get()))
                .collect::<Vec<_>>()
                .into_pyarray(py),
        )?;
        cols.set_item(
            "eps_report",
            column(&|j| specs[j].eps().get()).into_pyarray(py),
        )?;
        cols.set_item(
            "param",
            column(&|j| match specs[j].params().named_values().as_slice() {
                [(_, v)] => *v,
                _ => nan,
            })
            .into_pyarray(py),
        )?;
        let inference = measured.inference.as_ref();
        let pairs: [(&str, &str, Vec<&Runs>); 3] = [
            ("mse", "mse_se", measured.mse.iter().collect()),
            ("asr", "asr_se", measured.asr.iter().collect()),
            ("joint_asr", "joint_asr_se", vec![&measured.joint; d]),
        ];
        for (mean, se, runs_of) in pairs {
            cols.set_item(mean, column(&|j| runs_of[j].mean()).into_pyarray(py))?;
            cols.set_item(
                se,
                column(&|j| runs_of[j].se().unwrap_or(nan)).into_pyarray(py),
            )?;
        }
        cols.set_item(
            "inference",
            column(&|_| inference.map_or(nan, Runs::mean)).into_pyarray(py),
        )?;
        cols.set_item(
            "inference_se",
            column(&|_| inference.and_then(Runs::se).unwrap_or(nan)).into_pyarray(py),
        )?;
        cols.set_item(
            "inference_baseline",
            column(&|_| inference.map_or(nan, |_| 1.0 / d as f64)).into_pyarray(py),
        )?;
        py.import("ldp._table")?.getattr("Table")?.call1((cols,))
    }

    fn __len__(&self) -> usize {
        self.d()
    }

    fn __repr__(&self) -> String {
        format!(
            "ldp.multidim({:?}, eps={}, domains={:?}, solution={:?})",
            self.protocol.name(),
            self.eps(),
            self.domains(),
            self.solution()
        )
    }
}

#[pymethods]
impl MultidimReports {
    /// The client that made them.
    #[getter]
    fn multidim(&self) -> Multidim {
        self.client.clone()
    }

    fn __len__(&self) -> usize {
        self.len_users()
    }

    /// smp: the attribute each user reported (uint32); None for the other solutions,
    /// whose reports carry every attribute.
    #[getter]
    fn attribute<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<u32>>> {
        self.sampled.as_ref().map(|s| PyArray1::from_slice(py, s))
    }

    /// The reports of `attribute` (an index or a name) as `ldp.Reports` of its mechanism
    /// (`Multidim.mechanism`): every user's for spl and the RS+ solutions (fakes
    /// included), those of the users who reported it for smp, in user order.
    fn reports(&self, attribute: &Bound<'_, PyAny>) -> PyResult<Reports> {
        let j = self.client.attribute_index(attribute)?;
        Ok(Reports::new(
            self.client.mechanism_of(j)?,
            self.parts[j].clone(),
        ))
    }

    /// A user's report as the `ldp` tool's JSON (a dict).
    fn __getitem__<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyAny>> {
        let n = self.len_users();
        let j = if i < 0 { i + n as isize } else { i };
        if !(0..n as isize).contains(&j) {
            return Err(PyIndexError::new_err(format!("report {i} of {n}")));
        }
        let j = j as usize;
        let text = dispatch_multidim!(&self.client.spec, m => {
            let r = match &self.sampled {
                Some(sampled) => {
                    let a = sampled[j] as usize;
                    let at = sampled[..j].iter().filter(|&&s| s as usize == a).count();
                    MultidimReport::Sampled {
                        attribute: sampled[j],
                        report: m.attributes()[a].report(&self.parts[a], at),
                    }
                }
                None => self.every_at(&m, j),
            };
            serde_json::to_string(&r).expect("reports serialize")
        })
        .map_err(param)?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The reports as the `ldp` tool's JSON lines (what `ldp perturb --attributes` writes
    /// and `ldp aggregate --attributes` reads), one per user.
    fn to_jsonl(&self, py: Python<'_>) -> PyResult<String> {
        py.detach_in_pool(|| {
            dispatch_multidim!(&self.client.spec, m => {
                let mut out = String::new();
                for r in self.each(&m) {
                    out.push_str(&serde_json::to_string(&r).expect("reports serialize"));
                    out.push('\n');
                }
                out
            })
        })
        .map_err(param)
    }

    /// Reports from the `ldp` tool's JSON lines (a string), each checked against
    /// `multidim`: a malformed or invalid line is a `ReportError` naming it (and the
    /// attribute at fault).
    #[staticmethod]
    fn from_jsonl(py: Python<'_>, multidim: &Multidim, text: &str) -> PyResult<MultidimReports> {
        let (sampled, parts) = py
            .detach_in_pool(|| {
                dispatch_multidim!(&multidim.spec, m => (|| {
                    let smp = m.solution().names_its_attribute();
                    let mut sampled = Vec::new();
                    let mut parts: Vec<Data> = m.attributes().iter().map(|a| a.empty()).collect();
                    for (number, line) in text.lines().enumerate() {
                        if line.trim().is_empty() {
                            continue;
                        }
                        let at = |e: String| report(format!("line {}: {e}", number + 1));
                        let r: MultidimReport<_> = serde_json::from_str(line)
                            .map_err(|e| at(format!("malformed report: {e}")))?;
                        m.validate(&r).map_err(|e| at(e.to_string()))?;
                        match r {
                            MultidimReport::Sampled { attribute, report } => {
                                let j = attribute as usize;
                                m.attributes()[j].push(&mut parts[j], &report);
                                sampled.push(attribute);
                            }
                            MultidimReport::Every(reports) => {
                                for (j, r) in reports.iter().enumerate() {
                                    m.attributes()[j].push(&mut parts[j], r);
                                }
                            }
                        }
                    }
                    Ok::<_, PyErr>((smp.then_some(sampled), parts))
                })())
            })
            .map_err(param)??;
        Ok(MultidimReports {
            client: multidim.clone(),
            sampled,
            parts,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<ldp.MultidimReports: {} users, {} attributes, {}>",
            self.len_users(),
            self.parts.len(),
            self.client.solution()
        )
    }
}

/// The client of `solution` over `domains` at budget `eps`: every attribute's instance
/// of `protocol` at the per-report budget (a classic protocol at its preset, an adaptive
/// one tuned for its domain with the `ldp.tune` keywords, or `param`), as the `ldp` tool
/// builds it. Called by `ldp.multidim`, which reads `domains` from sizes, a mapping, a
/// DataFrame or a shipped table's name.
#[pyfunction]
#[pyo3(signature = (protocol, eps, domains, solution="smp", prior=None, param=None, *,
    names=None, labels=None, series=false, **options))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn multidim(
    py: Python<'_>,
    protocol: &str,
    #[pyo3(from_py_with = crate::args::eps)] eps: f64,
    domains: Vec<i64>,
    solution: &str,
    prior: Option<Vec<Bound<'_, PyAny>>>,
    param: Option<&Bound<'_, PyAny>>,
    names: Option<Vec<String>>,
    labels: Option<Vec<Vec<String>>>,
    series: bool,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Multidim> {
    let p = crate::options::protocol(protocol)?;
    let eps = budget(eps)?;
    let solution = solution_of(solution)?;
    if domains.is_empty() {
        return Err(crate::errors::param("domains: give at least one attribute"));
    }
    let ks = domains
        .iter()
        .enumerate()
        .map(|(j, &k)| domain(k).map_err(|e| prefixed(py, e, &format!("attribute {j}"))))
        .collect::<PyResult<Vec<DomainSize>>>()?;
    let d = ks.len();
    let total: u64 = ks.iter().map(|k| u64::from(k.get())).sum();
    crate::errors::fits("domains: the items of every attribute", total, 16)?;
    if let Some(names) = &names
        && names.len() != d
    {
        return Err(crate::errors::param(format!(
            "names: {} names for {d} attributes",
            names.len()
        )));
    }
    if let Some(labels) = &labels {
        if labels.len() != d {
            return Err(crate::errors::param(format!(
                "labels: {} lists of labels for {d} attributes",
                labels.len()
            )));
        }
        for (j, (l, k)) in labels.iter().zip(&ks).enumerate() {
            if l.len() != k.as_usize() {
                return Err(crate::errors::param(format!(
                    "labels of attribute {j}: {} labels for a domain of {} items",
                    l.len(),
                    k.get()
                )));
            }
        }
    }
    let priors = match (solution, prior) {
        (Solution::RsRfd, None) => {
            return Err(crate::errors::param(
                "solution \"rsrfd\" draws its fakes from priors: give prior, one array of weights per attribute",
            ));
        }
        (Solution::RsRfd, Some(given)) => {
            if given.len() != d {
                return Err(crate::errors::param(format!(
                    "prior: {} priors for {d} attributes",
                    given.len()
                )));
            }
            let values = given
                .iter()
                .zip(&ks)
                .enumerate()
                .map(|(j, (w, k))| {
                    let w = crate::items::weights(w).map_err(|e| {
                        crate::errors::param(format!("prior of attribute {j}: {e}"))
                    })?;
                    if w.len() != k.as_usize() {
                        return Err(crate::errors::param(format!(
                            "prior of attribute {j}: {} weights, but its domain has {} items",
                            w.len(),
                            k.get()
                        )));
                    }
                    Ok(w)
                })
                .collect::<PyResult<Vec<_>>>()?;
            Some(Priors::new(values).map_err(crate::errors::param)?)
        }
        (_, Some(_)) => {
            return Err(crate::errors::param(
                "prior: only solution \"rsrfd\" draws its fakes from priors",
            ));
        }
        (_, None) => None,
    };
    let value = crate::options::param_values(param)?;
    let tuning = crate::options::settings("multidim", options, &ldp_optimize::SettingGroup::ALL)?;
    // Detached on this thread, not the pool: a failure re-attaches to name its attribute,
    // which a pool worker must not do while a caller holding the interpreter waits on it.
    let (spec, tuned) = py.detach(|| {
        let mut failure: Option<PyErr> = None;
        let mut tuned = Vec::with_capacity(d);
        let spec = MultidimSpec::new(solution, eps, &ks, priors, |k: DomainSize, e: Epsilon| {
            let j = tuned.len();
            match crate::threads::install(|| resolve(p, k, e, value.clone(), tuning)) {
                Ok((spec, t)) => {
                    tuned.push(t);
                    Ok(spec)
                }
                Err(err) => {
                    let message = Python::attach(|py| {
                        let context = format!(
                            "attribute {j} (k = {}, {} report budget {})",
                            k.get(),
                            solution.label(),
                            e.get()
                        );
                        prefixed(py, err, &context)
                    });
                    failure = Some(message);
                    Err(ParamError::Parameter {
                        name: "protocol",
                        description: "the attribute's instance",
                        requirement: "be resolved".into(),
                        value: f64::NAN,
                    })
                }
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let spec = spec.map_err(crate::errors::param)?;
        // Built once, so that a solution the family cannot run is refused here.
        dispatch_multidim!(&spec, m => m.dimensions()).map_err(crate::errors::param)?;
        Ok((spec, tuned))
    })?;
    Ok(Multidim {
        protocol: p,
        spec,
        tuned,
        names,
        labels,
        series,
    })
}

/// A table's attribute names, labels and codes.
type TableParts<'py> = (Vec<String>, Vec<Vec<String>>, Bound<'py, PyAny>);

/// A shipped table of several attributes: its names, each attribute's labels, and its
/// codes (n x d, uint32). `ldp.dataset` makes a DataFrame of it.
#[pyfunction]
pub(crate) fn _table<'py>(py: Python<'py>, name: &str) -> PyResult<TableParts<'py>> {
    let table = named_table(name)?;
    let d = table.dimensions();
    let labels = (0..d).map(|j| table.labels(j).to_vec()).collect();
    let codes: Vec<u32> = table.rows().flatten().copied().collect();
    let array = codes.into_pyarray(py).reshape([table.len(), d])?.into_any();
    Ok((table.names().to_vec(), labels, array))
}

/// One quantity measured once per run.
#[derive(Debug, Clone, Default)]
struct Runs(Vec<f64>);

impl Runs {
    fn mean(&self) -> f64 {
        self.0.iter().sum::<f64>() / self.0.len() as f64
    }

    /// The standard error of the mean over the runs; `None` for a single run.
    fn se(&self) -> Option<f64> {
        if self.0.len() < 2 {
            return None;
        }
        let r = self.0.len() as f64;
        let mean = self.mean();
        let var = self.0.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (r - 1.0);
        Some((var / r).sqrt())
    }
}

struct TableMeasurement {
    mse: Vec<Runs>,
    asr: Vec<Runs>,
    joint: Runs,
    inference: Option<Runs>,
}

/// `ldp simulate --dataset TABLE --solution NAME`'s measurement: the library call the tool
/// makes (`ldp_attack::multidim::measure_table`, the same streams). Asked to stop, it fails
/// at the next batch.
fn measure<M: AttackSurface>(
    m: &Client<M>,
    table: &Table,
    runs: u64,
    seed: u64,
    stop: Stop<'_>,
) -> Result<TableMeasurement, String> {
    let t = measure_table(m, table, runs, seed, stop).map_err(|e| match e {
        TableMeasureError::Stopped => "stopped".to_owned(),
        e => e.to_string(),
    })?;
    Ok(TableMeasurement {
        mse: t.mse.into_iter().map(Runs).collect(),
        asr: t.asr.into_iter().map(Runs).collect(),
        joint: Runs(t.joint),
        inference: t.inference.map(Runs),
    })
}
