//! Python exceptions: every error of the crates is a `ValueError` subclass carrying the
//! crate's message.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    ldp,
    LdpError,
    PyValueError,
    "Any error of the ldp toolkit (a ValueError)."
);
create_exception!(
    ldp,
    ParamError,
    LdpError,
    "An invalid protocol parameter: k, eps, the family parameter, a weight or a bound."
);
create_exception!(ldp, ItemError, LdpError, "An item outside the domain 0..k.");
create_exception!(
    ldp,
    ReportError,
    LdpError,
    "A report that the mechanism could not have produced, or of another mechanism."
);
create_exception!(
    ldp,
    AggregateError,
    LdpError,
    "An aggregator state that cannot be merged, restored or estimated from."
);
create_exception!(
    ldp,
    TuningError,
    LdpError,
    "Tuning, a frontier or a simulation could not be computed as asked."
);

/// `ParamError` with the message of `e`.
pub(crate) fn param(e: impl std::fmt::Display) -> PyErr {
    ParamError::new_err(e.to_string())
}

/// `ReportError` with the message of `e`.
pub(crate) fn report(e: impl std::fmt::Display) -> PyErr {
    ReportError::new_err(e.to_string())
}

/// `AggregateError` with the message of `e`.
pub(crate) fn aggregate(e: impl std::fmt::Display) -> PyErr {
    AggregateError::new_err(e.to_string())
}

/// `TuningError` with the message of `e`.
pub(crate) fn tuning(e: impl std::fmt::Display) -> PyErr {
    TuningError::new_err(e.to_string())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("LdpError", py.get_type::<LdpError>())?;
    m.add("ParamError", py.get_type::<ParamError>())?;
    m.add("ItemError", py.get_type::<ItemError>())?;
    m.add("ReportError", py.get_type::<ReportError>())?;
    m.add("AggregateError", py.get_type::<AggregateError>())?;
    m.add("TuningError", py.get_type::<TuningError>())?;
    Ok(())
}

/// `MemoryError` unless `count` items of `bytes_each` bytes fit in the memory available
/// (checked before allocating, so the interpreter is not aborted by the allocator).
pub(crate) fn fits(what: &str, count: u64, bytes_each: u64) -> PyResult<()> {
    ldp_core::memory::check(count, bytes_each)
        .map_err(|e| pyo3::exceptions::PyMemoryError::new_err(format!("{what}: {e}")))
}

/// An operating-system error on `path` as Python raises it: `FileNotFoundError`,
/// `PermissionError`, `IsADirectoryError` or `OSError`, with `errno`, `strerror` and
/// `filename` set (`str(e)` is `[Errno 2] No such file or directory: '/nope'`).
pub(crate) fn io(path: &std::path::Path, e: &std::io::Error) -> PyErr {
    use pyo3::exceptions::{
        PyFileNotFoundError, PyIsADirectoryError, PyOSError, PyPermissionError,
    };
    use std::io::ErrorKind;
    let errno = e.raw_os_error().unwrap_or(0);
    // The OS's message without Rust's " (os error N)" suffix.
    let text = e.to_string();
    let message = text
        .rsplit_once(" (os error")
        .map_or(text.as_str(), |(m, _)| m)
        .to_string();
    let args = (errno, message, path.display().to_string());
    match e.kind() {
        ErrorKind::NotFound => PyFileNotFoundError::new_err(args),
        ErrorKind::PermissionDenied => PyPermissionError::new_err(args),
        ErrorKind::IsADirectory => PyIsADirectoryError::new_err(args),
        _ => PyOSError::new_err(args),
    }
}
