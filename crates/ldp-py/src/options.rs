//! Keyword arguments, parsed into ldp-optimize's request layer ([`TuneRequest`],
//! [`InstanceRequest`]), which owns every default, check and message (the `ldp` tool
//! parses its flags into the same); this module only names the keyword at fault.

use std::str::FromStr;

use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
use ldp_optimize::{
    InstanceRequest, Knob, ParamValues, RequestError, SettingGroup, TuneRequest, Tuned,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};

use crate::errors::{param, tuning};

pub(crate) fn protocol(name: &str) -> PyResult<Protocol> {
    name.parse::<Protocol>().map_err(param)
}

pub(crate) fn domain(k: i64) -> PyResult<DomainSize> {
    let k = u64::try_from(k).map_err(|_| param(format!("k = {k}: a domain size is positive")))?;
    DomainSize::try_from(k).map_err(|e| param(format!("k = {k}: {e}")))
}

pub(crate) fn budget(eps: f64) -> PyResult<Epsilon> {
    Epsilon::new(eps).map_err(|e| param(format!("eps = {eps}: {e}")))
}

/// The `param` keyword: a number for a family with one parameter, a dict of values by
/// name for any family (`{"h": 256, "m": 1024}`), or the `ldp` tool's text
/// (`"h=256,m=1024"`).
pub(crate) fn param_values(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<ParamValues>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(dict) = value.cast::<PyDict>() {
        let named = dict
            .iter()
            .map(|(name, v)| Ok((name.extract::<String>()?, v.extract::<f64>()?)))
            .collect::<PyResult<Vec<_>>>()
            .map_err(|e| param(format!("param: a dict of numbers by parameter name: {e}")))?;
        return Ok(Some(ParamValues::Named(named)));
    }
    if let Ok(text) = value.extract::<String>() {
        return text
            .parse()
            .map(Some)
            .map_err(|e| param(format!("param = {text:?}: {e}")));
    }
    value
        .extract::<f64>()
        .map(|v| Some(ParamValues::One(v)))
        .map_err(|_| param("param: a number, a dict of numbers by name, or name=value text"))
}

/// A knob's value from its keyword's string: `search="refined"`, `lh_asr="exact"`.
pub(crate) fn named<T: FromStr>(keyword: &str, value: Option<&str>) -> PyResult<Option<T>>
where
    T::Err: std::fmt::Display,
{
    value
        .map(|v| {
            v.parse::<T>()
                .map_err(|e| param(format!("{keyword} = {v:?}: {e}")))
        })
        .transpose()
}

/// The tuning keywords of `function` (its `**options`), read straight into
/// ldp-optimize's request by the settings' names: the settings of `groups` are taken, any
/// other keyword is Python's own `TypeError`, and a value that does not parse is a
/// `ParamError` naming its keyword.
pub(crate) fn settings(
    function: &str,
    options: Option<&Bound<'_, PyDict>>,
    groups: &[SettingGroup],
) -> PyResult<TuneRequest> {
    let mut given = serde_json::Map::new();
    for (key, value) in options.into_iter().flat_map(|d| d.iter()) {
        let key: String = key.extract()?;
        let taken = Knob::SETTINGS
            .iter()
            .any(|k| k.name() == key && k.group().is_some_and(|g| groups.contains(&g)));
        if !taken {
            return Err(PyTypeError::new_err(format!(
                "{function}() got an unexpected keyword argument '{key}'"
            )));
        }
        let value = data(&key, &value)?;
        given.insert(key, value);
    }
    serde_json::from_value(serde_json::Value::Object(given)).map_err(param)
}

/// A keyword's value as data: `None`, a bool, a name, a whole number (by `__index__`,
/// numpy's too) or a finite real number (by `__float__`).
fn data(key: &str, value: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    use serde_json::Value;
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(text) = value.extract::<String>() {
        return Ok(Value::String(text));
    }
    if let Ok(n) = value.extract::<i64>() {
        return Ok(Value::from(n));
    }
    match value.extract::<f64>() {
        Ok(v) => serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| param(format!("{key} = {v}: expected a finite number"))),
        Err(_) => Err(param(format!(
            "{key}: expected a number or a name, got {}",
            value.get_type().name()?
        ))),
    }
}

/// A request error as Python reports it: `ParamError("keyword = value: message")` (the
/// value where the error is about it), or `TuningError` when tuning itself failed.
pub(crate) fn request_error(
    e: RequestError,
    request: &TuneRequest,
    given: Option<&ParamValues>,
) -> PyErr {
    let Some(knob) = e.knob() else {
        return tuning(e);
    };
    match e.given_value(request, given) {
        Some(v) => param(format!("{} = {v}: {e}", knob.name())),
        None => param(format!("{}: {e}", knob.name())),
    }
}

/// The instance of `protocol`: `param` if given, else the preset (classic) or the tuned
/// parameter (adaptive, with how it was tuned).
pub(crate) fn resolve(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    value: Option<ParamValues>,
    tuning: TuneRequest,
) -> PyResult<(Spec, Option<Tuned>)> {
    let request = InstanceRequest {
        protocol,
        k,
        eps,
        param: value,
        tuning,
    };
    let instance = request
        .resolve()
        .map_err(|e| request_error(e, &tuning, request.param.as_ref()))?;
    Ok((instance.spec, instance.tuned))
}
