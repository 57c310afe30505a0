//! The flags that choose and tune protocol instances, parsed into ldp-optimize's request
//! layer ([`TuneRequest`], [`InstanceRequest`]), which owns every default, check and
//! message; this module only names the flag at fault.
//!
//! Every flag must do something: tuning flags with a protocol that is not tuned, a bound
//! with a strategy that has none, or `--param` on a protocol whose definition fixes its
//! parameter are errors naming the flag.

use std::str::FromStr;

use anyhow::{Context, Result};
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use ldp_analytic::LhAsr;
use ldp_core::{AnyMechanism, DomainSize, Epsilon, ParamError, Protocol, Spec};
use ldp_optimize::{
    Instance, InstanceRequest, Knob, ParamValues, RequestError, Search, Strategy, TuneRequest,
};

use crate::output::number;

/// A clap parser for a knob of the libraries: the names it lists, parsed by the knob's
/// own `FromStr` (so that the tool and the libraries spell every value alike).
pub(crate) fn knob<T>(
    names: impl IntoIterator<Item = &'static str>,
) -> impl TypedValueParser<Value = T>
where
    T: FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Debug,
{
    PossibleValuesParser::new(names).map(|s| s.parse::<T>().expect("a listed name parses"))
}

/// How adaptive protocols are tuned.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct TuneArgs {
    /// ASR weight of the tuning objective, in [0, 1] (default 0.5); the MSE weight is
    /// 1 - W. Weights are normalized once EPG and bits weights are added.
    #[arg(long = "w-asr", value_name = "W")]
    pub(crate) w_asr: Option<f64>,
    /// EPG weight (default 0): the poisoning gain as a further objective.
    #[arg(long = "w-epg", value_name = "W")]
    pub(crate) w_epg: Option<f64>,
    /// Bits weight (default 0): the report size as a further objective.
    #[arg(long = "w-bits", value_name = "W")]
    pub(crate) w_bits: Option<f64>,
    /// Search mode: the paper's grid, or grid then golden section (default paper).
    #[arg(long, value_parser = knob::<Search>(Search::ALL.map(Search::name)))]
    pub(crate) search: Option<Search>,
    /// Selection strategy (default weighted; eps-constraint when a bound is given).
    /// Utopia, elbow, hypervolume and eps-constraint look only at which weights are
    /// positive.
    #[arg(long, value_parser = knob::<Strategy>(Strategy::PAPER.map(|s| s.name())))]
    pub(crate) strategy: Option<Strategy>,
    /// Tune against the ASR after T linked reports of an unchanged value (a device that
    /// reports daily for a year: 365) instead of one report (default 1). AUE, ALH and
    /// ATHE only: ASS has no exact form after more than one report. With `--protocol
    /// all`, bounds the ASR after T reports (SS and ASS beyond omega = 1, and SHE, are
    /// left out).
    #[arg(long = "asr-after", value_name = "T")]
    pub(crate) asr_after: Option<u32>,
}

/// Upper bounds of the eps-constraint strategy: the lowest MSE meeting them.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct BoundArgs {
    /// Largest ASR (selects the eps-constraint strategy unless --strategy says otherwise;
    /// its default is 0.1).
    #[arg(long = "asr-max", value_name = "A")]
    pub(crate) asr_max: Option<f64>,
    /// Largest EPG.
    #[arg(long = "epg-max", value_name = "E")]
    pub(crate) epg_max: Option<f64>,
    /// Largest report size, in bits.
    #[arg(long = "bits-max", value_name = "B")]
    pub(crate) bits_max: Option<f64>,
}

/// The maximal gain attack behind the EPG objective.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct PoisoningArgs {
    /// Fraction of fake users of the maximal gain attack (for --w-epg and --epg-max).
    #[arg(long)]
    pub(crate) beta: Option<f64>,
    /// Number of target items r (for --w-epg and --epg-max).
    #[arg(long)]
    pub(crate) targets: Option<u32>,
    /// True mass of the targets f_T (for --w-epg and --epg-max).
    #[arg(long = "target-mass")]
    pub(crate) target_mass: Option<f64>,
}

/// The parser of `--lh-asr`.
pub(crate) fn lh_asr_parser() -> impl TypedValueParser<Value = LhAsr> {
    knob::<LhAsr>(LhAsr::ALL.map(LhAsr::name))
}

/// The request the flags make; `lh_asr` and the poisoning flags where the command has
/// them.
pub(crate) fn tune_request(
    tuning: &TuneArgs,
    bounds: &BoundArgs,
    lh_asr: Option<LhAsr>,
    poisoning: &PoisoningArgs,
) -> TuneRequest {
    TuneRequest {
        w_asr: tuning.w_asr,
        w_epg: tuning.w_epg,
        w_bits: tuning.w_bits,
        search: tuning.search,
        strategy: tuning.strategy,
        asr_max: bounds.asr_max,
        epg_max: bounds.epg_max,
        bits_max: bounds.bits_max,
        collections: tuning.asr_after,
        lh_asr,
        beta: poisoning.beta,
        targets: poisoning.targets,
        target_mass: poisoning.target_mass,
    }
}

/// A request error as the tool writes it: the flag at fault (with the value given, for
/// the numbers), then the message.
pub(crate) fn flagged(
    e: RequestError,
    request: &TuneRequest,
    param: Option<&ParamValues>,
) -> anyhow::Error {
    let Some(knob) = e.knob() else {
        return anyhow::Error::new(e);
    };
    let value = match knob {
        _ if !e.about_value() => None,
        Knob::Param => param.map(ParamValues::to_string),
        Knob::AsrMax => request.asr_max.map(number),
        Knob::EpgMax => request.epg_max.map(number),
        Knob::BitsMax => request.bits_max.map(number),
        Knob::Beta => request.beta.map(number),
        Knob::Targets => request.targets.map(|t| t.to_string()),
        Knob::TargetMass => request.target_mass.map(number),
        _ => None,
    };
    let label = match value {
        Some(v) => format!("{} {v}", knob.flag()),
        None => knob.flag(),
    };
    anyhow::Error::new(e).context(label)
}

pub(crate) fn parse_protocol(s: &str) -> Result<Protocol> {
    s.parse::<Protocol>()
        .with_context(|| format!("--protocol {}", s.trim()))
}

pub(crate) fn domain(k: u64) -> Result<DomainSize> {
    DomainSize::try_from(k).with_context(|| format!("--k {k}"))
}

pub(crate) fn budget(eps: f64) -> Result<Epsilon> {
    Epsilon::new(eps).with_context(|| format!("--eps {}", number(eps)))
}

/// The runnable mechanism, its errors naming the flag at fault.
pub(crate) fn build(spec: &Spec) -> Result<AnyMechanism> {
    spec.build().map_err(|e| {
        let flag = match e {
            ParamError::DomainTooLarge { value, .. } => format!("--k {value}"),
            ParamError::SheBudget { value, .. } | ParamError::NoSignal { value } => {
                format!("--eps {}", number(value))
            }
            _ => "the protocol".into(),
        };
        anyhow::Error::new(e).context(flag)
    })
}

/// The instance of `protocol` at (k, eps): `param` if given, else the preset (classic) or
/// the tuned parameter (adaptive).
pub(crate) fn resolve(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    param: Option<&ParamValues>,
    tuning: TuneRequest,
) -> Result<Instance> {
    InstanceRequest {
        protocol,
        k,
        eps,
        param: param.cloned(),
        tuning,
    }
    .resolve()
    .map_err(|e| flagged(e, &tuning, param))
}
