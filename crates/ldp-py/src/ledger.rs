//! `ldp.ledger`: what each user spent over surveys, `ldp_analytic::ledger`'s accounting.

use std::path::{Path, PathBuf};

use ldp_analytic::ledger::{Ledger, Survey};
use ldp_jsonl::lines::{LineChunks, LineError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::param;

/// One survey of `surveys`: a mapping with ``survey``, ``eps``, ``first_day``,
/// ``last_day`` and, for a memoized survey, ``eps_perm`` (None or NaN: none).
fn survey<'py>(i: usize, row: &Bound<'py, PyAny>) -> PyResult<Survey> {
    let field = |name: &str| -> PyResult<Bound<'py, PyAny>> {
        row.get_item(name)
            .map_err(|_| param(format!("surveys[{i}]: no {name:?} (a survey has survey, eps, first_day, last_day and optionally eps_perm)")))
    };
    let typed = |name: &str, e: PyErr| {
        pyo3::exceptions::PyTypeError::new_err(format!("surveys[{i}][{name:?}]: {e}"))
    };
    let id: String = field("survey")?.str()?.to_string();
    let eps: f64 = field("eps")?.extract().map_err(|e| typed("eps", e))?;
    let first: u32 = field("first_day")?
        .extract()
        .map_err(|e| typed("first_day", e))?;
    let last: u32 = field("last_day")?
        .extract()
        .map_err(|e| typed("last_day", e))?;
    let perm = match row.get_item("eps_perm") {
        Ok(v) if !v.is_none() => {
            Some(v.extract::<f64>().map_err(|e| typed("eps_perm", e))?).filter(|p| !p.is_nan())
        }
        _ => None,
    };
    let made = match perm {
        Some(p) => Survey::memoized(&id, eps, p, first, last),
        None => Survey::fresh(&id, eps, first, last),
    };
    made.map_err(|e| param(format!("surveys[{i}]: {e}")))
}

/// What each user spent over surveys, as ``ldp ledger`` reports it: basic composition over
/// every report (a memoized survey's memo charged once, on its first day), advanced
/// composition with ``delta`` (Kairouz, Oh and Viswanath 2015; at most the basic sum),
/// and the most spent on one day.
///
/// ``surveys``: mappings (or a pandas DataFrame) with ``survey``, ``eps``,
/// ``first_day``, ``last_day`` and optionally ``eps_perm``. ``records``: (user, survey,
/// day) triples (or a DataFrame with those columns), one per report; users and surveys
/// are compared as strings. ``reports``: a path, or a list of paths, of reports tagged
/// with their user, survey and day (``ldp perturb --user ID --survey ID --day D``; JSON
/// lines, or Parquet for a name ending in ``.parquet``), beside or instead of
/// ``records``: only the tags are read. ``roster``: the users who may report (anyone else is an
/// error). ``limit`` and ``day_limit`` fill each user's ``over`` with ``"total"`` (spent
/// more than ``limit``: the advanced composition with ``delta``, else the basic) and
/// ``"day"`` (more than ``day_limit`` on one day).
///
/// Returns one dict per user, in the order of their names: ``user``, ``reports``,
/// ``days``, ``basic_eps``, ``advanced_eps`` (None without ``delta``),
/// ``max_day_eps``, ``max_day`` and ``over``.
///
/// >>> import ldp
/// >>> surveys = [{"survey": "daily", "eps": 1.0, "first_day": 1, "last_day": 30},
/// ...            {"survey": "app", "eps": 0.5, "first_day": 1, "last_day": 30, "eps_perm": 2.0}]
/// >>> records = [("ann", "daily", 1), ("ann", "daily", 2), ("ann", "app", 1), ("ann", "app", 2), ("bo", "daily", 1)]
/// >>> [(u["user"], u["basic_eps"], u["over"]) for u in ldp.ledger(surveys, records, limit=3.0)]
/// [('ann', 4.0, ['total']), ('bo', 1.0, [])]
#[pyfunction]
#[pyo3(signature = (surveys, records=None, *, reports=None, roster=None, delta=None, limit=None, day_limit=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn ledger<'py>(
    py: Python<'py>,
    surveys: &Bound<'py, PyAny>,
    records: Option<&Bound<'py, PyAny>>,
    reports: Option<&Bound<'py, PyAny>>,
    roster: Option<&Bound<'py, PyAny>>,
    delta: Option<f64>,
    limit: Option<f64>,
    day_limit: Option<f64>,
) -> PyResult<Bound<'py, PyList>> {
    for (name, v) in [("limit", limit), ("day_limit", day_limit)] {
        if let Some(v) = v
            && !(v >= 0.0 && v.is_finite())
        {
            return Err(param(format!(
                "{name} = {v}: a budget limit must be finite and >= 0"
            )));
        }
    }
    if records.is_none() && reports.is_none() {
        return Err(param(
            "give records (user, survey, day triples), reports (paths of tagged reports), or both",
        ));
    }
    let surveys = frame_rows(surveys, None)?;
    let surveys = surveys
        .try_iter()?
        .enumerate()
        .map(|(i, row)| survey(i, &row?))
        .collect::<PyResult<Vec<_>>>()?;
    let mut book = Ledger::new(surveys).map_err(param)?;
    if let Some(roster) = roster {
        let users = roster
            .try_iter()?
            .map(|u| Ok(u?.str()?.to_string()))
            .collect::<PyResult<Vec<String>>>()?;
        book = book.with_roster(users);
    }
    let records = match records {
        Some(records) => frame_rows(records, Some(["user", "survey", "day"]))?
            .try_iter()?
            .collect::<PyResult<Vec<_>>>()?,
        None => Vec::new(),
    };
    for (i, row) in records.into_iter().enumerate() {
        let (user, survey, day): (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>) =
            row.extract().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "records[{i}]: a (user, survey, day) triple"
                ))
            })?;
        let day: u32 = day.extract().map_err(|e| {
            pyo3::exceptions::PyTypeError::new_err(format!("records[{i}]: day: {e}"))
        })?;
        book.record(&user.str()?.to_string(), &survey.str()?.to_string(), day)
            .map_err(|e| param(format!("records[{i}]: {e}")))?;
    }
    if let Some(reports) = reports {
        // One path (str or os.PathLike), or several.
        let paths: Vec<PathBuf> = match reports.extract::<PathBuf>() {
            Ok(path) => vec![path],
            Err(_) => reports
                .try_iter()?
                .map(|p| p?.extract::<PathBuf>())
                .collect::<PyResult<_>>()?,
        };
        for path in &paths {
            tagged_reports(path, &mut book)?;
        }
    }
    let users = book.users(delta).map_err(param)?;
    let out = PyList::empty(py);
    for u in users {
        let d = PyDict::new(py);
        d.set_item("user", &u.user)?;
        d.set_item("reports", u.reports)?;
        d.set_item("days", u.days)?;
        d.set_item("basic_eps", u.basic)?;
        d.set_item("advanced_eps", u.advanced)?;
        d.set_item("max_day_eps", u.max_day)?;
        d.set_item("max_day", u.max_day_at)?;
        let mut over = Vec::new();
        if limit.is_some_and(|l| u.spent() > l) {
            over.push("total");
        }
        if day_limit.is_some_and(|l| u.max_day > l) {
            over.push("day");
        }
        d.set_item("over", over)?;
        out.append(d)?;
    }
    Ok(out)
}

/// The longest report line read for its tags: SHE's at k = 10^6, spaced out, fits.
const TAGGED_LINE_CAP: usize = 128 << 20;

/// Records the tags of every report in `path`: JSON lines, or Parquet by its name.
fn tagged_reports(path: &Path, book: &mut Ledger) -> PyResult<()> {
    let named = |e: &dyn std::fmt::Display| param(format!("reports {}: {e}", path.display()));
    if path.extension().is_some_and(|e| e == "parquet") {
        // The file's own errors, or the ledger's, each named.
        enum Failure {
            File(ldp_arrow::ArrowLdpError),
            Record(u64, ldp_analytic::ledger::LedgerError),
        }
        impl From<ldp_arrow::ArrowLdpError> for Failure {
            fn from(e: ldp_arrow::ArrowLdpError) -> Self {
                Self::File(e)
            }
        }
        return ldp_arrow::tags::for_each_tags(path, |row, tags| {
            book.record_tags(&tags).map_err(|e| Failure::Record(row, e))
        })
        .map_err(|e| match e {
            Failure::File(e) => param(e),
            Failure::Record(row, e) => named(&format!("row {row}: {e}")),
        });
    }
    let file = std::fs::File::open(path).map_err(|e| crate::errors::io(path, &e))?;
    let mut lines = LineChunks::new(std::io::BufReader::new(file), TAGGED_LINE_CAP);
    loop {
        let chunk = match lines.next_chunk(4096) {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return Ok(()),
            Err(LineError::Io { source, .. }) => return Err(crate::errors::io(path, &source)),
            Err(e) => return Err(named(&e)),
        };
        for &(number, line) in &chunk {
            let tags = ldp_jsonl::read_tags(line)
                .map_err(|e| named(&format!("line {number}: malformed tags: {e}")))?;
            book.record_tags(&tags)
                .map_err(|e| named(&format!("line {number}: {e}")))?;
        }
    }
}

/// A pandas DataFrame as its rows (dicts, or with `columns` tuples of those columns);
/// anything else as it is.
fn frame_rows<'py>(
    data: &Bound<'py, PyAny>,
    columns: Option<[&str; 3]>,
) -> PyResult<Bound<'py, PyAny>> {
    if !(data.hasattr("to_dict")? && data.hasattr("columns")?) {
        return Ok(data.clone());
    }
    match columns {
        None => data.call_method1("to_dict", ("records",)),
        Some(cols) => {
            let present: Vec<String> = data.getattr("columns")?.extract().unwrap_or_default();
            if let Some(missing) = cols.iter().find(|c| !present.iter().any(|p| p == *c)) {
                return Err(param(format!(
                    "records: no column {missing:?} (the columns are user, survey, day)"
                )));
            }
            let picked = data.get_item(PyList::new(data.py(), cols)?)?;
            let kwargs = PyDict::new(data.py());
            kwargs.set_item("index", false)?;
            kwargs.set_item("name", data.py().None())?;
            picked.call_method("itertuples", (), Some(&kwargs))
        }
    }
}
