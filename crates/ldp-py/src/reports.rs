//! `ldp.Reports`: the reports of one mechanism as numpy columns.

use crate::threads::InPool;
use std::io::{BufWriter, Write};

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use ldp_arrow::ArrowReports;
use ldp_core::{Mechanism as _, OnInvalid, Reason, Rejections, dispatch};
use ldp_jsonl::lines::{LineChunks, LineError};
use ldp_jsonl::{Digits, JsonReport};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyAttributeError, PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySlice};

use crate::columns::{Columns, Data, Gathered};
use crate::errors::{param, report};
use crate::items::{floats, u32s};
use crate::mechanism::Mechanism;

/// Reports of one mechanism, held as numpy-ready columns: GRR `y`; LH `seed` and `y`; SS,
/// UE and THE a CSR pair `offsets` (int64, n + 1 entries) and `indices` (uint32, sorted
/// within a report); SHE `values` (n x k float64).
///
/// Every report in a `Reports` object is valid for its mechanism: those of `perturb` by
/// construction, those of `from_arrays` and `from_jsonl` checked on the way in.
///
/// >>> import ldp, numpy as np
/// >>> m = ldp.mechanism("olh", k=50, eps=2.0)
/// >>> r = m.perturb(np.arange(50), seed=3)
/// >>> r.seed.dtype, r[:10].y.shape
/// (dtype('uint32'), (10,))
#[pyclass(module = "ldp._ldp")]
#[derive(Debug, Clone)]
pub struct Reports {
    pub(crate) mechanism: Mechanism,
    pub(crate) data: Data,
    /// What a reader in skip mode left out of the input these reports came from.
    pub(crate) skipped: Rejections,
    /// The items' labels, when the reports carry them (`categories`).
    pub(crate) labels: Option<Labels>,
}

/// The Arrow and Parquet metadata key of the items' labels: a JSON list, item i's label
/// at position i.
const LABELS_KEY: &str = "ldp.labels";

/// The metadata key present (`true`) when the last label stands for every label not
/// listed (`ldp.Categories(..., other=...)`).
const OTHER_KEY: &str = "ldp.other";

/// The labels of the items, as reports carry them: an `ldp.Categories` in the form its
/// metadata takes (`LABELS_KEY`, `OTHER_KEY`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Labels {
    /// The JSON list of the k labels.
    list: String,
    /// Whether the last label stands for every label not listed.
    other: bool,
}

impl Labels {
    /// The labels of `categories`, an `ldp.Categories` of the k labels of `mechanism`.
    pub(crate) fn of(categories: &Bound<'_, PyAny>, mechanism: &Mechanism) -> PyResult<Self> {
        let class = categories
            .py()
            .import("ldp._categories")?
            .getattr("Categories")?;
        if !categories.is_instance(&class)? {
            return Err(PyTypeError::new_err(format!(
                "categories must be an ldp.Categories, not {}",
                categories.get_type().name()?
            )));
        }
        let k: u64 = categories.getattr("k")?.extract()?;
        let mechanism_k = u64::from(mechanism.spec.k().get());
        if k != mechanism_k {
            let other = match categories.getattr("other")?.is_none() {
                true => "",
                false => " and other",
            };
            return Err(param(format!(
                "categories has k = {k} ({} labels{other}), but the mechanism has k = \
                 {mechanism_k}: one label per item",
                categories.getattr("labels")?.len()?
            )));
        }
        let (list, other): (String, bool) = categories.call_method0("_metadata")?.extract()?;
        Ok(Self { list, other })
    }

    /// The labels that Arrow or Parquet metadata `metadata` records (from `source`, named
    /// in errors), checked against `mechanism`; `None` when it records none.
    fn read(
        py: Python<'_>,
        metadata: impl Fn(&str) -> Option<String>,
        mechanism: &Mechanism,
        source: &str,
    ) -> PyResult<Option<Self>> {
        let Some(list) = metadata(LABELS_KEY) else {
            return Ok(None);
        };
        let categories = py
            .import("ldp._categories")?
            .getattr("Categories")?
            .call_method1("_from_metadata", (list, metadata(OTHER_KEY), source))?;
        Self::of(&categories, mechanism).map(Some)
    }

    /// The labels as a pickle keeps them: the JSON list, and whether the last stands for
    /// any other.
    pub(crate) fn parts(&self) -> (String, bool) {
        (self.list.clone(), self.other)
    }

    /// The labels of `parts` (see [`Labels::parts`]), checked against `mechanism`.
    pub(crate) fn from_parts(
        py: Python<'_>,
        (list, other): (String, bool),
        mechanism: &Mechanism,
        source: &str,
    ) -> PyResult<Self> {
        let metadata = |key: &str| match key {
            LABELS_KEY => Some(list.clone()),
            OTHER_KEY => other.then(|| "true".to_owned()),
            _ => None,
        };
        Ok(Self::read(py, metadata, mechanism, source)?.expect("labels are recorded"))
    }

    /// The `ldp.Categories` of these labels.
    pub(crate) fn categories<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let other = self.other.then_some("true");
        py.import("ldp._categories")?
            .getattr("Categories")?
            .call_method1("_from_metadata", (&self.list, other, "the reports"))
    }

    /// The labels in a message: their JSON, cut short.
    fn describe(&self) -> String {
        let mut text: String = self.list.chars().take(60).collect();
        if text.len() < self.list.len() {
            text += "...";
        }
        if self.other {
            text += " (the last for any other)";
        }
        text
    }

    /// The metadata entries.
    fn metadata(&self) -> Vec<(String, String)> {
        let mut entries = vec![(LABELS_KEY.to_owned(), self.list.clone())];
        if self.other {
            entries.push((OTHER_KEY.to_owned(), "true".to_owned()));
        }
        entries
    }
}

/// A numpy copy of a column, once it fits in the memory available.
fn column<'py, T: numpy::Element + Copy>(
    py: Python<'py>,
    name: &str,
    values: &[T],
) -> PyResult<Bound<'py, PyArray1<T>>> {
    crate::errors::fits(
        &format!("the column {name}"),
        values.len() as u64,
        std::mem::size_of::<T>() as u64,
    )?;
    Ok(PyArray1::from_slice(py, values))
}

fn no_field(shape: &str, field: &str) -> PyErr {
    PyAttributeError::new_err(format!("reports of shape {shape:?} have no `{field}`"))
}

impl Reports {
    /// Reports with nothing skipped.
    pub(crate) fn new(mechanism: Mechanism, data: Data) -> Self {
        Self {
            mechanism,
            data,
            skipped: Rejections::default(),
            labels: None,
        }
    }

    fn shape_name(&self) -> &'static str {
        match self.data {
            Data::Values { .. } => "value",
            Data::SeedValues { .. } => "seed_value",
            Data::Sets { .. } => "set",
            Data::Vectors { .. } => "vector",
        }
    }

    /// Checks every report of `data` against the mechanism: the first invalid one is an
    /// error, or with `skip` every invalid one is left out and counted.
    fn validated(mechanism: &Mechanism, data: Data, skip: bool) -> PyResult<Self> {
        let mut skipped = Rejections::default();
        let data = dispatch!(&mechanism.any, m => {
            let mut kept = if skip { Some(m.empty()) } else { None };
            for i in 0..data.len() {
                let r = m.report(&data, i);
                match (m.validate(&r), kept.as_mut()) {
                    (Ok(()), Some(kept)) => m.push(kept, &r),
                    (Ok(()), None) => {}
                    (Err(e), Some(_)) => {
                        skipped.record(Reason::from(&e), i as u64, || format!("report {i}"), &e)
                    }
                    (Err(e), None) => return Err(report(format!("report {i}: {e}"))),
                }
            }
            kept.unwrap_or(data)
        });
        Ok(Self {
            mechanism: mechanism.clone(),
            data,
            skipped,
            labels: None,
        })
    }
}

#[pymethods]
impl Reports {
    /// The mechanism that made them.
    #[getter]
    fn mechanism(&self) -> Mechanism {
        self.mechanism.clone()
    }

    /// The reports' shape, which says which columns they have: "value" (y: GRR),
    /// "seed_value" (seed, y: LH), "set" (offsets, indices: SS, UE, THE) or "vector"
    /// (values: SHE).
    #[getter]
    fn shape(&self) -> &'static str {
        self.shape_name()
    }

    fn __len__(&self) -> usize {
        self.data.len()
    }

    /// GRR: the reported item; LH: the hashed value (uint32).
    #[getter]
    fn y<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        match &self.data {
            Data::Values { y } | Data::SeedValues { y, .. } => column(py, "y", y),
            _ => Err(no_field(self.shape_name(), "y")),
        }
    }

    /// LH: the hash seed of every report (uint32).
    #[getter]
    fn seed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        match &self.data {
            Data::SeedValues { seed, .. } => column(py, "seed", seed),
            _ => Err(no_field(self.shape_name(), "seed")),
        }
    }

    /// SS, UE, THE: report i is `indices[offsets[i]:offsets[i + 1]]` (int64).
    #[getter]
    fn offsets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        match &self.data {
            Data::Sets { offsets, .. } => column(py, "offsets", offsets),
            _ => Err(no_field(self.shape_name(), "offsets")),
        }
    }

    /// SS, UE, THE: the reported items of every report, one after another (uint32).
    #[getter]
    fn indices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        match &self.data {
            Data::Sets { indices, .. } => column(py, "indices", indices),
            _ => Err(no_field(self.shape_name(), "indices")),
        }
    }

    /// SHE: the reports as an n x k float64 array.
    #[getter]
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.data {
            Data::Vectors { k, values } => {
                let flat = column(py, "values", values)?;
                Ok(flat.reshape([values.len() / k, *k])?.into_any())
            }
            _ => Err(no_field(self.shape_name(), "values")),
        }
    }

    /// The columns as a dict of numpy arrays.
    fn arrays<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let names: &[&str] = match self.data {
            Data::Values { .. } => &["y"],
            Data::SeedValues { .. } => &["seed", "y"],
            Data::Sets { .. } => &["offsets", "indices"],
            Data::Vectors { .. } => &["values"],
        };
        let me = Bound::new(py, self.clone())?;
        for name in names {
            d.set_item(name, me.getattr(*name)?)?;
        }
        Ok(d)
    }

    /// A slice gives a Reports object; an integer gives one report as a dict, with the
    /// fields of its JSON line.
    fn __getitem__<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Py<PyAny>> {
        let n = self.data.len();
        if let Ok(slice) = key.cast::<PySlice>() {
            let ix = slice.indices(n as isize)?;
            let per = self.data.bytes().div_ceil(n.max(1) as u64);
            crate::errors::fits("a slice of the reports", ix.slicelength as u64, per)?;
            let data = if ix.step == 1 {
                let (start, stop) = (ix.start as usize, (ix.stop.max(ix.start)) as usize);
                self.data.slice(start, stop)
            } else {
                let mut out = dispatch!(&self.mechanism.any, m => m.empty());
                let mut i = ix.start;
                for _ in 0..ix.slicelength {
                    out.extend(&self.data.slice(i as usize, i as usize + 1));
                    i += ix.step;
                }
                out
            };
            let mut part = Reports::new(self.mechanism.clone(), data);
            part.labels = self.labels.clone();
            return Ok(Bound::new(py, part)?.into_any().unbind());
        }
        let i: isize = key
            .extract()
            .map_err(|_| PyTypeError::new_err("reports are indexed by an integer or a slice"))?;
        let j = if i < 0 { i + n as isize } else { i };
        if !(0..n as isize).contains(&j) {
            return Err(PyIndexError::new_err(format!("report {i} of {n}")));
        }
        let line = dispatch!(&self.mechanism.any, m => {
            let mut buf = Vec::new();
            m.report(&self.data, j as usize).write_json(&mut buf);
            buf
        });
        let json = py.import("json")?;
        Ok(json
            .call_method1("loads", (String::from_utf8(line).expect("JSON is UTF-8"),))?
            .unbind())
    }

    /// The reports of several objects of one mechanism, one after another, with the
    /// labels they carry (parts labelled otherwise are refused).
    #[staticmethod]
    fn concat(parts: &Bound<'_, PyList>) -> PyResult<Reports> {
        let parts = parts
            .iter()
            .map(|p| p.extract::<PyRef<'_, Reports>>().map_err(PyErr::from))
            .collect::<PyResult<Vec<_>>>()?;
        let first = parts
            .first()
            .ok_or_else(|| param("concat needs at least one Reports object"))?;
        let mut labels = None;
        for part in &parts {
            if part.mechanism.spec != first.mechanism.spec {
                return Err(report(format!(
                    "reports of {} cannot follow reports of {}: {}",
                    part.mechanism.spec_json(),
                    first.mechanism.spec_json(),
                    crate::mechanism::spec_difference(
                        &part.mechanism.spec,
                        &first.mechanism.spec,
                        "these reports",
                        "the first"
                    )
                )));
            }
            labels = same_labels(labels, &part.labels, "reports", "the reports before")
                .map_err(report)?;
        }
        let n: u64 = parts.iter().map(|p| p.data.len() as u64).sum();
        let bytes: u64 = parts.iter().map(|p| p.data.bytes()).sum();
        // The columns grow as the parts are appended: twice their final size at most.
        crate::errors::fits("concat", n, 2 * bytes.div_ceil(n.max(1)))?;
        let mut out = Reports::new(
            first.mechanism.clone(),
            dispatch!(&first.mechanism.any, m => m.empty()),
        );
        for part in &parts {
            out.data.extend(&part.data);
            out.skipped.merge(&part.skipped);
        }
        out.labels = labels;
        Ok(out)
    }

    /// Reports from their columns, each report checked against `mechanism`: an invalid
    /// one is an error naming it, or with `on_invalid="skip"` it is left out and counted
    /// in `skipped`. LH seeds from 64-bit generators (numpy's, multi-freq-ldpy's) are
    /// reduced mod 2^32, which is what python-xxhash does with a seed.
    #[staticmethod]
    #[pyo3(signature = (mechanism, *, y=None, seed=None, offsets=None, indices=None, values=None, on_invalid="refuse"))]
    #[allow(clippy::too_many_arguments)] // the columns by name, as Python passes them
    fn from_arrays(
        mechanism: &Mechanism,
        y: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        offsets: Option<&Bound<'_, PyAny>>,
        indices: Option<&Bound<'_, PyAny>>,
        values: Option<&Bound<'_, PyAny>>,
        on_invalid: &str,
    ) -> PyResult<Reports> {
        let skip = skipping(on_invalid)?;
        let empty = dispatch!(&mechanism.any, m => m.empty());
        let given: Vec<&str> = [
            ("y", y.is_some()),
            ("seed", seed.is_some()),
            ("offsets", offsets.is_some()),
            ("indices", indices.is_some()),
            ("values", values.is_some()),
        ]
        .into_iter()
        .filter_map(|(n, on)| on.then_some(n))
        .collect();
        let (data, needed): (Option<Data>, &[&str]) = match empty {
            Data::Values { .. } => (
                y.map(|y| u32s(y, "y", false))
                    .transpose()?
                    .map(|y| Data::Values { y }),
                &["y"],
            ),
            Data::SeedValues { .. } => match (seed, y) {
                (Some(s), Some(y)) => {
                    let (seed, y) = (u32s(s, "seed", true)?, u32s(y, "y", false)?);
                    if seed.len() != y.len() {
                        return Err(param(format!(
                            "{} seeds but {} values y",
                            seed.len(),
                            y.len()
                        )));
                    }
                    (Some(Data::SeedValues { seed, y }), &["seed", "y"])
                }
                _ => (None, &["seed", "y"]),
            },
            Data::Sets { .. } => match (offsets, indices) {
                (Some(o), Some(i)) => {
                    let (offsets, indices) =
                        (crate::items::offsets(o)?, u32s(i, "indices", false)?);
                    check_offsets(&offsets, indices.len())?;
                    (
                        Some(Data::Sets { offsets, indices }),
                        &["offsets", "indices"],
                    )
                }
                _ => (None, &["offsets", "indices"]),
            },
            Data::Vectors { k, .. } => match values {
                Some(v) => {
                    let (values, shape) = floats(v)?;
                    if shape.len() != 2 || shape[1] != k {
                        return Err(param(format!(
                            "values must be an n x {k} array, not of shape {shape:?}"
                        )));
                    }
                    (Some(Data::Vectors { k, values }), &["values"])
                }
                None => (None, &["values"]),
            },
        };
        if given.iter().any(|g| !needed.contains(g)) || given.len() != needed.len() {
            return Err(param(format!(
                "{} reports are given as {}, not {}",
                mechanism.protocol.name(),
                needed.join(" and "),
                if given.is_empty() {
                    "nothing".to_owned()
                } else {
                    given.join(", ")
                }
            )));
        }
        Reports::validated(
            mechanism,
            data.expect("the needed columns were given"),
            skip,
        )
    }

    /// Writes the reports as JSON lines, the `ldp` tool's format (`ldp aggregate` reads
    /// the file).
    fn to_jsonl(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        py.detach_in_pool(|| -> PyResult<()> {
            let file = std::fs::File::create(&path).map_err(|e| crate::errors::io(&path, &e))?;
            let mut out = BufWriter::new(file);
            let digits = Digits::for_domain(self.mechanism.spec.report_limits().values);
            dispatch!(&self.mechanism.any, m => {
                let mut buf = Vec::new();
                for i in 0..self.data.len() {
                    buf.clear();
                    m.report(&self.data, i).write_json_with(&digits, &mut buf);
                    buf.push(b'\n');
                    out.write_all(&buf).map_err(|e| crate::errors::io(&path, &e))?;
                }
            });
            out.flush().map_err(|e| crate::errors::io(&path, &e))
        })
    }

    /// Reads JSON lines written by `ldp perturb` (or `to_jsonl`), every report checked
    /// against `mechanism`: an invalid line is an error naming it, or with
    /// `on_invalid="skip"` it is left out and counted in `skipped` (malformed, too long,
    /// or invalid for the mechanism), as `ldp aggregate --on-invalid skip` does. The path
    /// comes first, as in `read_parquet` and `from_arrow` (the former order,
    /// `from_jsonl(mechanism, path)`, works with a `DeprecationWarning`). Ctrl-C stops
    /// it, and reports that cannot fit in the memory available (judged from the file's
    /// size and its first lines) are a `MemoryError`.
    #[staticmethod]
    #[pyo3(signature = (path, mechanism, on_invalid="refuse"))]
    fn from_jsonl<'py>(
        py: Python<'py>,
        path: &Bound<'py, PyAny>,
        mechanism: &Bound<'py, PyAny>,
        on_invalid: &str,
    ) -> PyResult<Reports> {
        let (path, mechanism) = crate::args::path_and_mechanism(path, mechanism)?;
        let mechanism: &Mechanism = &mechanism;
        let skip = skipping(on_invalid)?;
        let (data, skipped) = py.detach_interruptibly(|stop| -> PyResult<(Data, Rejections)> {
            let file = std::fs::File::open(&path).map_err(|e| crate::errors::io(&path, &e))?;
            let size = file.metadata().map_or(0, |m| m.len());
            // The tool's rules (ldp_jsonl::lines): a byte-order mark at the start is not
            // part of the first line; blank lines are accepted at the end only (or
            // anywhere when skipping: they are not reports); a line longer than any report
            // of the mechanism is refused, or skipped and counted.
            let mut input = LineChunks::new(file, ldp_jsonl::max_line_len(&mechanism.spec));
            if skip {
                input = input.lenient();
            }
            let mut skipped = Rejections::default();
            let fail = |e: &dyn std::fmt::Display| report(format!("{}: {e}", path.display()));
            let mut gathered = Gathered::new(format!("from_jsonl: the reports of {}", path.display()));
            dispatch!(&mechanism.any, m => {
                loop {
                    if stop() {
                        return Err(crate::threads::stopped());
                    }
                    let chunk = match input.next_chunk(gathered.next_size(1 << 16)) {
                        Ok(Some(chunk)) => chunk,
                        Ok(None) => break,
                        Err(LineError::Io { source, .. }) => {
                            return Err(crate::errors::io(&path, &source));
                        }
                        Err(e) => return Err(fail(&e)),
                    };
                    let mut data = m.empty();
                    let mut bytes = 0u64;
                    for (number, text) in chunk {
                        bytes += text.len() as u64 + 1;
                        let at = || format!("line {number}");
                        let r = match parse(m, text) {
                            Ok(r) => r,
                            Err(e) if skip => {
                                skipped.record(Reason::Malformed, number, at, &e);
                                continue;
                            }
                            Err(e) => return Err(fail(&format_args!("line {number}: {e}"))),
                        };
                        match m.validate(&r) {
                            Ok(()) => m.push(&mut data, &r),
                            Err(e) if skip => skipped.record(Reason::from(&e), number, at, &e),
                            Err(e) => return Err(fail(&format_args!("line {number}: {e}"))),
                        }
                    }
                    // The file holds about as many reports per byte as these lines.
                    gathered.push(data, |d| {
                        (u128::from(size) * d.len() as u128).div_ceil(u128::from(bytes.max(1))) as u64
                    })?;
                }
                for long in input.take_skipped() {
                    long.record(&mut skipped);
                }
                Ok((gathered.finish(m.empty()), skipped))
            })
        })??;
        Ok(Reports {
            mechanism: mechanism.clone(),
            data,
            skipped,
            labels: None,
        })
    }

    /// The reports as a pyarrow Table with one column, `report`, in the schema of the
    /// `ldp-arrow` crate (sets as `List<UInt32>`, or a bitmap with `encoding="bitmap"`),
    /// the spec in the schema metadata under `ldp.spec`: `pyarrow.parquet.write_table`
    /// makes a file `ldp aggregate --input` reads. Needs pyarrow.
    #[pyo3(signature = (encoding="list"))]
    fn to_arrow<'py>(slf: &Bound<'py, Self>, encoding: &str) -> PyResult<Bound<'py, PyAny>> {
        let stream = slf.borrow().arrow_ipc(slf.py(), encoding)?;
        slf.py()
            .import("ldp._arrow")?
            .call_method1("from_ipc", (stream,))
    }

    /// Reports from a pyarrow Table or RecordBatch with a `report` column in ldp-arrow's
    /// schema (what `to_arrow` makes, or a Parquet file read by pyarrow), or from the path
    /// of a Parquet file or directory (`read_parquet`). The mechanism is the one the data
    /// records under `ldp.spec`, or `mechanism` where it records none; a recorded spec that
    /// contradicts `mechanism` is an error. Every report is checked. Labels the data
    /// records (`ldp.labels`) come with the reports (`categories`).
    ///
    /// >>> import ldp, numpy as np
    /// >>> m = ldp.mechanism("oue", k=8, eps=1.0)
    /// >>> r = m.perturb(np.arange(100) % 8, seed=1)
    /// >>> ldp.Reports.from_arrow(r.to_arrow()) == r
    /// True
    #[staticmethod]
    #[pyo3(signature = (data, mechanism=None, on_invalid="refuse"))]
    fn from_arrow<'py>(
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        mechanism: Option<Bound<'py, Mechanism>>,
        on_invalid: &str,
    ) -> PyResult<Reports> {
        skipping(on_invalid)?;
        let reports = py
            .import("ldp._arrow")?
            .call_method1("from_arrow", (data, mechanism, on_invalid))?;
        let reports = reports.cast::<Reports>()?;
        Ok(reports.borrow().clone())
    }

    /// The reports of an Arrow IPC stream in ldp-arrow's schema, checked on the way in:
    /// what `ldp.Reports.from_arrow` sends. The mechanism is the one given, or the one the
    /// stream's `ldp.spec` metadata names; a spec that contradicts the one given is an
    /// error.
    #[staticmethod]
    #[pyo3(signature = (stream, mechanism=None, on_invalid="refuse"))]
    fn _from_arrow_ipc(
        py: Python<'_>,
        stream: &[u8],
        mechanism: Option<PyRef<'_, Mechanism>>,
        on_invalid: &str,
    ) -> PyResult<Reports> {
        let skip = skipping(on_invalid)?;
        let mechanism = mechanism.map(|m| m.clone());
        let reader = StreamReader::try_new(std::io::Cursor::new(stream), None)
            .map_err(|e| param(format!("not an Arrow IPC stream: {e}")))?;
        let schema = reader.schema();
        let recorded = schema.metadata().get(ldp_arrow::SPEC_KEY).cloned();
        let mechanism = mechanism_for(recorded.as_deref(), mechanism)?;
        let labels = Labels::read(
            py,
            |key| schema.metadata().get(key).cloned(),
            &mechanism,
            "the Arrow data",
        )?;
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| param(format!("the Arrow stream cannot be read: {e}")))?;
        let total: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
        let mut skipped = Rejections::default();
        let data = py.detach_interruptibly(|stop| {
            dispatch!(&mechanism.any, m => {
                let mut gathered = Gathered::new("from_arrow: the reports".to_owned());
                let mut first = 0u64;
                for batch in &batches {
                    // One `report` column: two are ambiguous, as pyarrow says.
                    let column = match ldp_arrow::column_index(batch.schema_ref(), ldp_arrow::REPORT_COLUMN) {
                        Ok(index) => batch.column(index),
                        Err(ldp_arrow::ArrowLdpError::NoColumn(_)) => {
                            return Err(report("the table has no `report` column".to_owned()));
                        }
                        Err(e) => return Err(report(e.to_string())),
                    };
                    // A slice of rows at a time: the reports of one slice are held at once.
                    let mut start = 0;
                    while start < column.len() {
                        if stop() {
                            return Err(crate::threads::stopped());
                        }
                        let rows = gathered.next_size(1 << 16).min(column.len() - start);
                        let slice = column.slice(start, rows);
                        let row = first + start as u64;
                        let reports = if skip {
                            let at = |row: u64| format!("row {row}");
                            m.reports_from_array_skipping(slice.as_ref(), row, 0, &mut skipped, &at)
                        } else {
                            m.reports_from_array(slice.as_ref()).map_err(|e| e.offset_rows(row))
                        }
                        // One error class per cause, whichever reader met it (`read_parquet`'s).
                        .map_err(arrow_error)?;
                        let mut data = m.empty();
                        for r in &reports {
                            m.push(&mut data, r);
                        }
                        gathered.push(data, |_| total)?;
                        start += rows;
                    }
                    first += batch.num_rows() as u64;
                }
                Ok::<_, PyErr>(gathered.finish(m.empty()))
            })
        })??;
        Ok(Reports {
            mechanism,
            data,
            skipped,
            labels,
        })
    }

    /// The reports of a Parquet file, or of every `.parquet` file under a directory, as
    /// `ldp perturb --output` writes them (or pyarrow, with the spec in the metadata):
    /// every file must record the same mechanism, the one given if one is. Labels that
    /// the files record (`ldp.labels`, see `with_categories`) come with the reports; files
    /// that record labels must record the same. Needs no pyarrow. Ctrl-C stops it, and
    /// reports that cannot fit in the memory available (the files' footers give their
    /// number, the first reports read their size) are a `MemoryError`.
    #[staticmethod]
    #[pyo3(signature = (path, mechanism=None, on_invalid="refuse"))]
    fn read_parquet(
        py: Python<'_>,
        path: std::path::PathBuf,
        mechanism: Option<PyRef<'_, Mechanism>>,
        on_invalid: &str,
    ) -> PyResult<Reports> {
        let skip = skipping(on_invalid)?;
        let mechanism = mechanism.map(|m| m.clone());
        let files = ldp_arrow::parquet_files(&path).map_err(arrow_error)?;
        let recorded = match ldp_arrow::read_spec(&files[0]) {
            Ok(spec) => Some(serde_json::to_string(&spec).expect("a spec serializes")),
            Err(ldp_arrow::ArrowLdpError::NoSpec) => None,
            Err(e) => return Err(arrow_error(e)),
        };
        let mechanism = mechanism_for(recorded.as_deref(), mechanism)?;
        // Every file's rows and labels, from its footer.
        let mut total = 0u64;
        let mut labels = None;
        for file in &files {
            let footer = parquet_footer(file)?;
            total += u64::try_from(footer.num_rows()).unwrap_or(0);
            let metadata = |key: &str| {
                footer
                    .key_value_metadata()
                    .and_then(|kv| kv.iter().find(|e| e.key == key))
                    .and_then(|e| e.value.clone())
            };
            let source = file.display().to_string();
            let here = Labels::read(py, metadata, &mechanism, &source)?;
            labels = same_labels(labels, &here, &source, "the files before it").map_err(param)?;
        }
        let mut skipped = Rejections::default();
        let data = py.detach_interruptibly(|stop| {
            let reader =
                ldp_arrow::ParquetReports::open(&path, &mechanism.spec).map_err(arrow_error)?;
            dispatch!(&mechanism.any, m => {
                let mut gathered = Gathered::new("read_parquet: the reports".to_owned());
                // What stopped a file's batches early (Ctrl-C, a MemoryError), beside the
                // reader's own errors: any error ends the reading, this says which.
                let mut refused: Option<PyErr> = None;
                for part in &reader.parts().map_err(arrow_error)? {
                    let file = reader.files()[part.file].display().to_string();
                    let at = |row: u64| format!("{file} row {row}");
                    let base = (part.file as u64) << 40;
                    let read = reader.for_each_batch_of(part, |column, first| {
                        let refuse = |e: PyErr, refused: &mut Option<PyErr>| {
                            *refused = Some(e);
                            ldp_arrow::ArrowLdpError::NoFiles("refused".to_owned())
                        };
                        // Batches are of at most 16 MiB of reports (ldp-arrow's reader).
                        if stop() {
                            return Err(refuse(crate::threads::stopped(), &mut refused));
                        }
                        let reports = if skip {
                            m.reports_from_array_skipping(column, first, base, &mut skipped, &at)?
                        } else {
                            m.reports_from_array(column).map_err(|e| e.offset_rows(first))?
                        };
                        let mut data = m.empty();
                        for r in &reports {
                            m.push(&mut data, r);
                        }
                        gathered
                            .push(data, |_| total)
                            .map_err(|e| refuse(e, &mut refused))
                    });
                    if let Some(e) = refused.take() {
                        return Err(e);
                    }
                    read.map_err(arrow_error)?;
                }
                Ok::<_, PyErr>(gathered.finish(m.empty()))
            })
        })??;
        Ok(Reports {
            mechanism,
            data,
            skipped,
            labels,
        })
    }

    /// What a reader in skip mode (`on_invalid="skip"`) left out of the input: for each
    /// reason ("malformed", "too-long", "null", "out-of-range", ...) the count and the
    /// first such report (`first_at`, `first_error`). Empty when nothing was skipped.
    /// `Reports.concat` adds the parts' counts; a slice has none, since no skipped report
    /// is in it.
    ///
    /// >>> import ldp, numpy as np
    /// >>> m = ldp.mechanism("grr", k=4, eps=1.0)
    /// >>> r = ldp.Reports.from_arrays(m, y=np.array([1, 7, 2]), on_invalid="skip")
    /// >>> len(r), r.skipped["out-of-range"]["count"], r.skipped["out-of-range"]["first_at"]
    /// (2, 1, 'report 1')
    #[getter]
    fn skipped<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (reason, r) in self.skipped.iter() {
            let d = PyDict::new(py);
            d.set_item("count", r.count)?;
            d.set_item("first_at", &r.first_at)?;
            d.set_item("first_error", &r.first_error)?;
            out.set_item(reason.name(), d)?;
        }
        Ok(out)
    }

    /// The labels of the items (an `ldp.Categories`) that the reports carry, or None.
    /// `Mechanism.perturb(..., categories=...)` and `with_categories` label reports; slices,
    /// `concat`, pickling and `to_arrow` keep the labels (in the schema metadata, under
    /// `ldp.labels`, so that pyarrow's Parquet files keep them too), and `from_arrow` and
    /// `read_parquet` give them back. An aggregator takes the labels of the reports it
    /// adds, and `estimate(..., labelled=True)` labels its estimate with them.
    ///
    /// >>> import ldp
    /// >>> fruit = ldp.Categories(["apple", "pear", "plum"])
    /// >>> m = ldp.mechanism("grr", k=fruit.k, eps=1.0)
    /// >>> r = m.perturb(["pear", "plum", "pear"], seed=1, categories=fruit)
    /// >>> r.categories == fruit, ldp.Reports.from_arrow(r.to_arrow()).categories.labels
    /// (True, ['apple', 'pear', 'plum'])
    #[getter]
    fn categories<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.labels.as_ref().map(|l| l.categories(py)).transpose()
    }

    /// A copy of the reports labelled by `categories` (an `ldp.Categories` of the
    /// mechanism's k labels, else a `ParamError`), or unlabelled with None. Labels are
    /// stored as JSON: they must be str, int, float or bool. Labels are no part of
    /// equality: reports equal the same reports labelled.
    fn with_categories(&self, categories: Option<&Bound<'_, PyAny>>) -> PyResult<Reports> {
        let labels = categories
            .map(|c| Labels::of(c, &self.mechanism))
            .transpose()?;
        let n = self.data.len() as u64;
        crate::errors::fits("with_categories", n, self.data.bytes().div_ceil(n.max(1)))?;
        let mut out = self.clone();
        out.labels = labels;
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "<ldp.Reports: {} reports of {:?}>",
            self.data.len(),
            self.mechanism.protocol.name()
        )
    }

    fn __eq__(&self, other: &Reports) -> bool {
        self.mechanism.spec == other.mechanism.spec && self.data == other.data
    }

    /// Pickling (multiprocessing, joblib): the reports as an Arrow IPC stream, their
    /// mechanism, and what a skip-mode reader left out; unpickling checks every report
    /// again.
    ///
    /// >>> import ldp, pickle
    /// >>> r = ldp.mechanism("oue", k=10, eps=1.0).perturb([1, 2, 3], seed=0)
    /// >>> pickle.loads(pickle.dumps(r)) == r
    /// True
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<PickledReports<'py>> {
        let restore = py
            .import("ldp._ldp")?
            .getattr("_reports_from_pickle")?
            .unbind();
        let skipped = serde_json::to_string(&self.skipped).map_err(report)?;
        Ok((
            restore,
            (self.arrow_ipc(py, "list")?, self.mechanism.clone(), skipped),
        ))
    }
}

/// What pickling stores: the restoring function, the Arrow IPC stream, the mechanism and
/// the skipped counts (JSON).
type PickledReports<'py> = (Py<PyAny>, (Bound<'py, PyBytes>, Mechanism, String));

/// Unpickling `Reports` (see `Reports.__reduce__`).
#[pyfunction]
pub(crate) fn _reports_from_pickle(
    py: Python<'_>,
    stream: &[u8],
    mechanism: PyRef<'_, Mechanism>,
    skipped: &str,
) -> PyResult<Reports> {
    let mut reports = Reports::_from_arrow_ipc(py, stream, Some(mechanism), "refuse")?;
    reports.skipped = serde_json::from_str(skipped)
        .map_err(|e| report(format!("a pickled Reports' skipped counts: {e}")))?;
    Ok(reports)
}

impl Reports {
    /// The reports as an Arrow IPC stream in ldp-arrow's schema.
    fn arrow_ipc<'py>(&self, py: Python<'py>, encoding: &str) -> PyResult<Bound<'py, PyBytes>> {
        let encoding = ldp_arrow::SetEncoding::from_name(encoding).ok_or_else(|| {
            param(format!(
                "encoding = {encoding:?}: expected \"list\" or \"bitmap\""
            ))
        })?;
        let bytes = py.detach_interruptibly(|stop| {
            dispatch!(&self.mechanism.any, m => {
                let mut schema = ldp_arrow::report_schema(m, encoding);
                if let Some(labels) = &self.labels {
                    let mut metadata = schema.metadata().clone();
                    metadata.extend(labels.metadata());
                    schema = schema.with_metadata(metadata);
                }
                let schema = std::sync::Arc::new(schema);
                let n = self.data.len();
                let rows = |from: usize, to: usize| -> Vec<_> {
                    (from..to).map(|i| m.report(&self.data, i)).collect()
                };
                // A few reports show what a row takes in this encoding; the stream grows
                // by doubling, then Python copies it: three times the rows at most.
                let sample = m.to_array(&rows(0, n.min(8)), encoding);
                let per_row = sample.get_buffer_memory_size().div_ceil(sample.len().max(1));
                crate::errors::fits("to_arrow", n as u64, 3 * per_row as u64)?;
                let arrow = |e: arrow_schema::ArrowError| report(e.to_string());
                let mut out = Vec::new();
                let mut writer = StreamWriter::try_new(&mut out, &schema).map_err(arrow)?;
                // Batches of 65,536 rows: the reports of one are held at once.
                let mut start = 0;
                loop {
                    if stop() {
                        return Err(crate::threads::stopped());
                    }
                    let end = n.min(start + (1 << 16));
                    let column = m.to_array(&rows(start, end), encoding);
                    let batch = RecordBatch::try_new(schema.clone(), vec![column]).map_err(arrow)?;
                    writer.write(&batch).map_err(arrow)?;
                    start = end;
                    if start == n {
                        break;
                    }
                }
                writer.finish().map_err(arrow)?;
                drop(writer);
                Ok::<_, PyErr>(out)
            })
        })??;
        Ok(PyBytes::new(py, &bytes))
    }
}

/// The mechanism of reports that record the spec `recorded` (JSON), given `given`: the
/// given one (which must agree with a recorded spec), or the recorded one.
fn mechanism_for(recorded: Option<&str>, given: Option<Mechanism>) -> PyResult<Mechanism> {
    match (recorded, given) {
        (Some(spec), Some(m)) => {
            let spec: ldp_core::Spec = serde_json::from_str(spec)
                .map_err(|e| param(format!("the recorded ldp.spec is not a spec: {e}")))?;
            if spec == m.spec {
                Ok(m)
            } else {
                Err(param(format!(
                    "the reports record {}, not the mechanism given, {}: {}",
                    serde_json::to_string(&spec).expect("a spec serializes"),
                    m.spec_json(),
                    crate::mechanism::spec_difference(
                        &spec,
                        &m.spec,
                        "the reports",
                        "the mechanism"
                    )
                )))
            }
        }
        (Some(spec), None) => Mechanism::parse_spec(spec, None),
        (None, Some(m)) => Ok(m),
        (None, None) => Err(param(
            "the reports record no ldp.spec: give the mechanism that made them",
        )),
    }
}

/// The footer of a Parquet file: its rows and its key-value metadata.
fn parquet_footer(path: &std::path::Path) -> PyResult<parquet::file::metadata::FileMetaData> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let file = std::fs::File::open(path).map_err(|e| crate::errors::io(path, &e))?;
    let reader = SerializedFileReader::new(file).map_err(|e| {
        arrow_error(ldp_arrow::ArrowLdpError::InFile {
            path: path.display().to_string(),
            error: Box::new(e.into()),
        })
    })?;
    Ok(reader.metadata().file_metadata().clone())
}

/// An error of reading Arrow or Parquet reports, as Python sees it.
fn arrow_error(e: ldp_arrow::ArrowLdpError) -> PyErr {
    match e {
        ldp_arrow::ArrowLdpError::Io { path, error } => {
            crate::errors::io(std::path::Path::new(&path), &error)
        }
        e if reports_fault(&e) => report(e.to_string()),
        e => param(e.to_string()),
    }
}

/// Whether the error is about what the reports hold (a `ReportError`, whichever reader
/// met it): a report invalid, null, out of range or of another type than the
/// mechanism's, or a table without (or with two) report columns; in a file or not.
fn reports_fault(e: &ldp_arrow::ArrowLdpError) -> bool {
    use ldp_arrow::ArrowLdpError as E;
    match e {
        E::Row { .. }
        | E::Null { .. }
        | E::OutOfRange { .. }
        | E::Type { .. }
        | E::NoColumn(_)
        | E::DuplicateColumn { .. } => true,
        E::InFile { error, .. } => reports_fault(error),
        _ => false,
    }
}

/// The labels of reports labelled `known` so far, joined by reports labelled `more`:
/// unlabelled reports take any labels, but two different labellings cannot join (the
/// message says so).
pub(crate) fn same_labels(
    known: Option<Labels>,
    more: &Option<Labels>,
    these: &str,
    those: &str,
) -> Result<Option<Labels>, String> {
    match (known, more) {
        (Some(a), Some(b)) if a != *b => Err(format!(
            "{these} labelled {} cannot join {those}, labelled {}",
            b.describe(),
            a.describe()
        )),
        (Some(a), _) => Ok(Some(a)),
        (None, more) => Ok(more.clone()),
    }
}

fn check_offsets(offsets: &[i64], indices: usize) -> PyResult<()> {
    if offsets.first() != Some(&0) {
        return Err(param("offsets must start at 0"));
    }
    if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
        return Err(param(format!("offsets decrease at position {}", i + 1)));
    }
    if *offsets.last().expect("non-empty") != indices as i64 {
        return Err(param(format!(
            "offsets end at {}, but there are {indices} indices",
            offsets.last().expect("non-empty")
        )));
    }
    Ok(())
}

/// A report of `m`'s type from its JSON line. Tags (user, survey, day) are read and
/// dropped: `Reports` holds reports only (`ldp.ledger(reports=...)` reads the tags).
fn parse<M: Columns>(_: &M, text: &[u8]) -> Result<M::Report, ldp_jsonl::JsonError> {
    M::Report::parse_tagged(text).map(|(_, report)| report)
}

/// `on_invalid`: whether to skip invalid reports ("skip") or refuse the input ("refuse").
fn skipping(on_invalid: &str) -> PyResult<bool> {
    let policy: OnInvalid = on_invalid
        .parse()
        .map_err(|e| param(format!("on_invalid: {e}")))?;
    Ok(policy == OnInvalid::Skip)
}
