//! Protocol instances by name and parameters, with the `ldp` tool's names and rules:
//! every argument must do something.

use ldp_analytic::{LhAsr, Poisoning};
use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol, Spec};
use ldp_optimize::{Bounds, Knob, Search, Strategy, TuneOptions, TuneRequest, Tuned, tune};
use pyo3::prelude::*;

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

pub(crate) fn lh_asr(name: &str) -> PyResult<LhAsr> {
    match name {
        "paper" => Ok(LhAsr::Paper),
        "exact" => Ok(LhAsr::Exact),
        other => Err(param(format!(
            "lh_asr = {other:?}: expected \"paper\" or \"exact\""
        ))),
    }
}

/// The poisoning setting of EPG (`None`s take the defaults).
pub(crate) fn poisoning(
    beta: Option<f64>,
    targets: Option<u32>,
    target_mass: Option<f64>,
) -> PyResult<Poisoning> {
    let d = Poisoning::default();
    let (b, r, m) = (
        beta.unwrap_or(d.beta()),
        targets.unwrap_or(d.targets()),
        target_mass.unwrap_or(d.target_mass()),
    );
    Poisoning::new(b, r, m)
        .map_err(|e| param(format!("beta = {b}, targets = {r}, target_mass = {m}: {e}")))
}

/// How adaptive protocols are tuned, as keyword arguments.
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
    /// The first argument given, if any.
    pub(crate) fn given(&self) -> Option<&'static str> {
        [
            ("w_asr", self.w_asr.is_some()),
            ("w_epg", self.w_epg.is_some()),
            ("w_bits", self.w_bits.is_some()),
            ("search", self.search.is_some()),
            ("strategy", self.strategy.is_some()),
            ("asr_max", self.asr_max.is_some()),
            ("epg_max", self.epg_max.is_some()),
            ("bits_max", self.bits_max.is_some()),
            ("asr_after", self.asr_after.is_some()),
        ]
        .into_iter()
        .find_map(|(name, on)| on.then_some(name))
    }

    /// The first bound given, if any.
    fn bound_given(&self) -> Option<&'static str> {
        [
            ("asr_max", self.asr_max.is_some()),
            ("epg_max", self.epg_max.is_some()),
            ("bits_max", self.bits_max.is_some()),
        ]
        .into_iter()
        .find_map(|(name, on)| on.then_some(name))
    }

    fn bounds(&self) -> PyResult<Option<Bounds>> {
        let mut out: Option<Bounds> = None;
        for (name, value) in [
            ("asr_max", self.asr_max),
            ("epg_max", self.epg_max),
            ("bits_max", self.bits_max),
        ] {
            let Some(v) = value else { continue };
            let next = match (name, out) {
                ("asr_max", None) => Bounds::asr(v),
                ("asr_max", Some(b)) => b.with_asr(v),
                ("epg_max", None) => Bounds::epg(v),
                ("epg_max", Some(b)) => b.with_epg(v),
                (_, None) => Bounds::bits(v),
                (_, Some(b)) => b.with_bits(v),
            };
            out = Some(next.map_err(|e| param(format!("{name} = {v}: {e}")))?);
        }
        Ok(out)
    }

    /// The tuning options: the request resolves as the `ldp` tool's flags do (one
    /// [`TuneRequest`]), then the LH ASR form and the poisoning setting are added.
    pub(crate) fn options(&self) -> PyResult<TuneOptions> {
        let strategy = match self.strategy.as_deref() {
            None => None,
            Some(s) => Some(Strategy::from_name(s).ok_or_else(|| {
                param(format!(
                    "strategy = {s:?}: expected weighted, utopia, elbow, eps-constraint, hypervolume or tchebycheff"
                ))
            })?),
        };
        let search = match self.search.as_deref() {
            None => None,
            Some("paper") => Some(Search::Paper),
            Some("refined") => Some(Search::Refined),
            Some(other) => {
                return Err(param(format!(
                    "search = {other:?}: expected \"paper\" or \"refined\""
                )));
            }
        };
        let request = TuneRequest {
            w_asr: self.w_asr,
            w_epg: self.w_epg,
            w_bits: self.w_bits,
            search,
            strategy,
            bounds: self.bounds()?,
            collections: self.asr_after,
        };
        let options = request.options().map_err(|e| {
            let name = match e.knob() {
                Knob::AsrWeight => "w_asr",
                Knob::EpgWeight => "w_epg",
                Knob::BitsWeight => "w_bits",
                Knob::Strategy => "strategy",
                Knob::Bounds => self.bound_given().unwrap_or("asr_max"),
                Knob::Collections => "asr_after",
            };
            param(format!("{name}: {e}"))
        })?;
        let epg_used = options.weights.epg() > 0.0 || self.epg_max.is_some();
        if !epg_used
            && let Some(name) = [
                ("beta", self.beta.is_some()),
                ("targets", self.targets.is_some()),
                ("target_mass", self.target_mass.is_some()),
            ]
            .into_iter()
            .find_map(|(n, on)| on.then_some(n))
        {
            return Err(param(format!(
                "{name}: the poisoning setting matters only when EPG is weighted (w_epg) or bounded (epg_max)"
            )));
        }
        Ok(TuneOptions {
            lh_asr: lh_asr(self.lh_asr.as_deref().unwrap_or("paper"))?,
            poisoning: poisoning(self.beta, self.targets, self.target_mass)?,
            ..options
        })
    }
}

/// The instance of `protocol`: `param` if given, else the preset (classic) or the tuned
/// parameter (adaptive, with how it was tuned).
pub(crate) fn resolve(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    value: Option<f64>,
    args: &TuneArgs,
) -> PyResult<(Spec, Option<Tuned>)> {
    let tuned = protocol.is_adaptive() && value.is_none();
    if !tuned && let Some(name) = args.given() {
        return Err(param(format!(
            "{name}: {} is not tuned here (only ass, aue, alh and athe are, and not with param)",
            protocol.name()
        )));
    }
    match value {
        None if !tuned => Ok((
            Spec::classic(protocol, k, eps).expect("a classic protocol"),
            None,
        )),
        None => {
            let t = tune(protocol, k, eps, &args.options()?).map_err(tuning)?;
            Ok((t.spec, Some(t)))
        }
        Some(x) => Ok((
            Spec::new(k, eps, family(protocol, x)?).map_err(param)?,
            None,
        )),
    }
}

/// The family parameters `param = x` gives `protocol`.
pub(crate) fn family(protocol: Protocol, x: f64) -> PyResult<FamilyParams> {
    let Some(name) = protocol.parameter_name() else {
        return Err(param(format!(
            "param = {x}: {} has no parameter",
            protocol.name()
        )));
    };
    if protocol.fixes_parameter() {
        let adaptive = match protocol {
            Protocol::Sue | Protocol::Oue => "aue",
            _ => "alh",
        };
        return Err(param(format!(
            "param = {x}: {} fixes {name} by its definition; for another {name} use \"{adaptive}\"",
            protocol.name()
        )));
    }
    FamilyParams::with_value(protocol.family(), x)
        .ok_or_else(|| param(format!("param = {x}: {name} must be a whole number")))
}

/// The parameter shown for an instance: none for GRR and SHE (they have none) and for SUE
/// and OUE (their definition fixes it), as in `ldp analyze`.
pub(crate) fn shown_param(protocol: Protocol, spec: &Spec) -> Option<f64> {
    match protocol {
        Protocol::Grr | Protocol::Sue | Protocol::Oue | Protocol::She => None,
        _ => spec.family().value(),
    }
}
