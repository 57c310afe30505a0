//! Keyword arguments, parsed into ldp-optimize's request layer ([`TuneRequest`],
//! [`InstanceRequest`]), which owns every default, check and message (the `ldp` tool
//! parses its flags into the same); this module only names the keyword at fault.

use std::str::FromStr;

use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
use ldp_optimize::{InstanceRequest, Knob, ParamValues, RequestError, TuneRequest, Tuned};
use pyo3::prelude::*;
use pyo3::types::PyDict;

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

/// The tuning, bound and poisoning keywords, as given.
#[derive(Debug, Clone, Default)]
pub(crate) struct TuneArgs {
    pub(crate) w_asr: Option<f64>,
    pub(crate) w_epg: Option<f64>,
    pub(crate) w_bits: Option<f64>,
    pub(crate) search: Option<String>,
    pub(crate) strategy: Option<String>,
    pub(crate) asr_max: Option<f64>,
    pub(crate) epg_max: Option<f64>,
    pub(crate) bits_max: Option<f64>,
    pub(crate) lh_asr: Option<String>,
    pub(crate) beta: Option<f64>,
    pub(crate) targets: Option<u32>,
    pub(crate) target_mass: Option<f64>,
    /// Tune against the ASR after this many linked reports (default 1).
    pub(crate) asr_after: Option<u32>,
}

impl TuneArgs {
    /// The request the keywords make.
    pub(crate) fn request(&self) -> PyResult<TuneRequest> {
        Ok(TuneRequest {
            w_asr: self.w_asr,
            w_epg: self.w_epg,
            w_bits: self.w_bits,
            search: named("search", self.search.as_deref())?,
            strategy: named("strategy", self.strategy.as_deref())?,
            asr_max: self.asr_max,
            epg_max: self.epg_max,
            bits_max: self.bits_max,
            collections: self.asr_after,
            lh_asr: named("lh_asr", self.lh_asr.as_deref())?,
            beta: self.beta,
            targets: self.targets,
            target_mass: self.target_mass,
        })
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
    let value = match knob {
        _ if !e.about_value() => None,
        Knob::Param => given.map(|v| v.to_string()),
        Knob::AsrMax => request.asr_max.map(|v| v.to_string()),
        Knob::EpgMax => request.epg_max.map(|v| v.to_string()),
        Knob::BitsMax => request.bits_max.map(|v| v.to_string()),
        Knob::Beta => request.beta.map(|v| v.to_string()),
        Knob::Targets => request.targets.map(|v| v.to_string()),
        Knob::TargetMass => request.target_mass.map(|v| v.to_string()),
        _ => None,
    };
    match value {
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
    args: &TuneArgs,
) -> PyResult<(Spec, Option<Tuned>)> {
    let tuning = args.request()?;
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
