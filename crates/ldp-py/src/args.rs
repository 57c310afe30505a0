//! Arguments in Python's terms: a wrong type is a `TypeError` naming the argument and
//! what was given, a wrong value a `ParamError` (a `ValueError`) naming both. Used with
//! `#[pyo3(from_py_with = ...)]`, since PyO3's own messages ("must be real number, not
//! str") name neither.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyString};

use crate::errors::param;

fn describe(obj: &Bound<'_, PyAny>) -> String {
    let type_name = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    let repr = obj
        .repr()
        .map_or_else(|_| "?".to_string(), |r| r.to_string());
    format!("{type_name} {repr}")
}

/// A whole number: a Python or numpy integer (not a bool, a float or a string).
fn whole(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<i64> {
    if obj.is_instance_of::<PyBool>()
        || obj.is_instance_of::<PyFloat>()
        || obj.is_instance_of::<PyString>()
        || !obj.hasattr("__index__")?
    {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an integer, not {}",
            describe(obj)
        )));
    }
    let index = obj.call_method0("__index__")?;
    index
        .extract::<i64>()
        .map_err(|_| param(format!("{name} = {index}: too large")))
}

/// A real number: a Python or numpy int or float (not a bool or a string).
fn real(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<f64> {
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a real number, not {}",
            describe(obj)
        )));
    }
    obj.extract::<f64>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name} must be a real number, not {}",
            describe(obj)
        ))
    })
}

/// A seed: a whole number in 0..2^64.
fn seed_value(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    if obj.is_instance_of::<PyBool>()
        || obj.is_instance_of::<PyFloat>()
        || obj.is_instance_of::<PyString>()
        || !obj.hasattr("__index__")?
    {
        return Err(PyTypeError::new_err(format!(
            "seed must be an integer, not {}",
            describe(obj)
        )));
    }
    let index = obj.call_method0("__index__")?;
    index.extract::<u64>().map_err(|_| {
        param(format!(
            "seed = {index}: a seed is a whole number in 0..2**64"
        ))
    })
}

/// `k`.
pub(crate) fn k(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    whole(obj, "k")
}

/// `eps`.
pub(crate) fn eps(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    real(obj, "eps")
}

/// `eps_perm`.
pub(crate) fn eps_perm(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    real(obj, "eps_perm")
}

/// `eps_1`.
pub(crate) fn eps_1(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    real(obj, "eps_1")
}

/// `seed`.
pub(crate) fn seed(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    seed_value(obj)
}

/// An optional `seed` (None: fresh randomness).
pub(crate) fn optional_seed(obj: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    if obj.is_none() {
        Ok(None)
    } else {
        seed_value(obj).map(Some)
    }
}

/// The `(path, mechanism)` of `Reports.from_jsonl`, the order `read_parquet` and
/// `from_arrow` take; the former order, `(mechanism, path)`, still works with a
/// `DeprecationWarning`. A wrong type is a `TypeError` naming the argument.
pub(crate) fn path_and_mechanism<'py>(
    first: &Bound<'py, PyAny>,
    second: &Bound<'py, PyAny>,
) -> PyResult<(std::path::PathBuf, PyRef<'py, crate::mechanism::Mechanism>)> {
    use crate::mechanism::Mechanism;
    let py = first.py();
    let (path, mechanism) = if first.is_instance_of::<Mechanism>()
        && !second.is_instance_of::<Mechanism>()
    {
        PyErr::warn(
                py,
                &py.get_type::<pyo3::exceptions::PyDeprecationWarning>(),
                c"Reports.from_jsonl(mechanism, path) is deprecated: pass the path first, Reports.from_jsonl(path, mechanism), as read_parquet and from_arrow take it",
                1,
            )?;
        (second, first)
    } else {
        (first, second)
    };
    let path = path.extract::<std::path::PathBuf>().map_err(|_| {
        PyTypeError::new_err(format!(
            "path must be a str or an os.PathLike, not {}",
            describe(path)
        ))
    })?;
    let mechanism = mechanism.extract::<PyRef<'py, Mechanism>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "mechanism must be an ldp.Mechanism, not {}",
            describe(mechanism)
        ))
    })?;
    Ok((path, mechanism))
}
