//! Arrays from Python: integer items checked against the domain, without a Python loop.

use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::errors::{ItemError, fits, param};

/// A 1-D numpy array of `dtype` made from `obj` (a list, a tuple or an array); integer
/// input only when `integers` is set.
fn as_array<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
    integers: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let np = obj.py().import("numpy")?;
    let array = np.call_method1("asarray", (obj,))?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(param(format!(
            "{what} must be one-dimensional, not {ndim}-dimensional"
        )));
    }
    // An empty list has numpy's default dtype, float64, and no value to be wrong.
    let empty = array.getattr("size")?.extract::<usize>()? == 0;
    if integers && !empty {
        let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
        if kind != "i" && kind != "u" {
            let dtype = array.getattr("dtype")?.str()?.to_string();
            return Err(PyTypeError::new_err(format!(
                "{what} must be integers, not {dtype}"
            )));
        }
    }
    Ok(array)
}

/// Items in `0..k`, as u32, converted in parallel without copying the input first; an
/// item outside names its position.
pub(crate) fn items(obj: &Bound<'_, PyAny>, k: u32, what: &str) -> PyResult<Vec<u32>> {
    let array = as_array(obj, what, true)?;
    // The converted parts, then the items joined.
    fits(what, array.getattr("size")?.extract()?, 8)?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    let (dtype, signed) = if kind == "u" {
        ("uint64", false)
    } else {
        ("int64", true)
    };
    // No copy when the array is already contiguous with the dtype (numpy's default
    // integers are).
    let wide = obj
        .py()
        .import("numpy")?
        .call_method1("ascontiguousarray", (array, dtype))?;
    let converted = if signed {
        let a: PyReadonlyArray1<'_, i64> = wide.extract()?;
        convert(a.as_slice()?, |x| u32::try_from(x).ok().filter(|&v| v < k))
    } else {
        let a: PyReadonlyArray1<'_, u64> = wide.extract()?;
        convert(a.as_slice()?, |x| u32::try_from(x).ok().filter(|&v| v < k))
    };
    converted.map_err(|(position, value)| {
        ItemError::new_err(format!(
            "{what}[{position}] = {value} is outside the domain: items are 0 to {} (k = {k})",
            k - 1
        ))
    })
}

/// `f` of every value, in parallel, or the first position where it fails and the value
/// there.
fn convert<T: Copy + Sync + Send + std::fmt::Display>(
    values: &[T],
    f: impl Fn(T) -> Option<u32> + Sync,
) -> Result<Vec<u32>, (usize, String)> {
    const CHUNK: usize = 1 << 16;
    let parts: Vec<Result<Vec<u32>, usize>> = crate::threads::install(|| {
        values
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                chunk
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| f(x).ok_or(c * CHUNK + i))
                    .collect()
            })
            .collect()
    });
    let mut out = Vec::with_capacity(values.len());
    for part in parts {
        match part {
            Ok(v) => out.extend_from_slice(&v),
            Err(i) => return Err((i, values[i].to_string())),
        }
    }
    Ok(out)
}

/// Unsigned 32-bit values (seeds are reduced mod 2^32, as python-xxhash does with its
/// seeds); negative values are refused.
pub(crate) fn u32s(obj: &Bound<'_, PyAny>, what: &str, reduce: bool) -> PyResult<Vec<u32>> {
    let array = as_array(obj, what, true)?;
    // 64-bit values, then 32-bit ones.
    fits(what, array.getattr("size")?.extract()?, 12)?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    let values: Vec<u64> = if kind == "u" {
        let a: PyReadonlyArray1<'_, u64> = array.call_method1("astype", ("uint64",))?.extract()?;
        a.as_array().to_vec()
    } else {
        let a: PyReadonlyArray1<'_, i64> = array.call_method1("astype", ("int64",))?.extract()?;
        let view = a.as_array();
        if let Some(i) = view.iter().position(|&x| x < 0) {
            return Err(param(format!("{what}[{i}] = {} is negative", view[i])));
        }
        view.iter().map(|&x| x as u64).collect()
    };
    if !reduce && let Some(i) = values.iter().position(|&x| x > u64::from(u32::MAX)) {
        return Err(param(format!(
            "{what}[{i}] = {} does not fit in 32 bits",
            values[i]
        )));
    }
    Ok(values.into_iter().map(|x| x as u32).collect())
}

/// Offsets of a CSR pair: int64, starting at 0, non-decreasing.
pub(crate) fn offsets(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let array = as_array(obj, "offsets", true)?;
    fits("offsets", array.getattr("size")?.extract()?, 8)?;
    let a: PyReadonlyArray1<'_, i64> = array.call_method1("astype", ("int64",))?.extract()?;
    Ok(a.as_array().to_vec())
}

/// Floats (any real dtype).
pub(crate) fn floats(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<f64>, Vec<usize>)> {
    let np = obj.py().import("numpy")?;
    let array = np.call_method1("asarray", (obj, "float64"))?;
    fits("values", array.getattr("size")?.extract()?, 8)?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    let flat = array.call_method0("ravel")?;
    let a: PyReadonlyArray1<'_, f64> = flat.extract()?;
    Ok((a.as_array().to_vec(), shape))
}

/// Weights of a prior (any real dtype, one per item).
pub(crate) fn weights(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let (values, shape) = floats(obj)?;
    if shape.len() != 1 {
        return Err(param("prior must be one-dimensional: one weight per item"));
    }
    Ok(values)
}
