//! The flags that choose and tune protocol instances, parsed into ldp-optimize's request
//! layer ([`TuneRequest`], [`InstanceRequest`]), which owns every default, check and
//! message; this module only names the flag at fault.
//!
//! Every flag must do something: tuning flags with a protocol that is not tuned, a bound
//! with a strategy that has none, or `--param` on a protocol whose definition fixes its
//! parameter are errors naming the flag.

use std::marker::PhantomData;
use std::str::FromStr;

use anyhow::{Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use ldp_core::{
    AnyMechanism, DomainSize, Epsilon, ParamError, Protocol, ProtocolSet, ProtocolSetError, Spec,
};
use ldp_optimize::{
    Instance, InstanceRequest, Knob, ParamValues, RequestError, SettingGroup, TuneRequest,
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

/// The groups of settings a command takes as flags.
pub(crate) trait Offer {
    /// The groups, whose settings become flags in the order of ldp-optimize's table.
    const GROUPS: &'static [SettingGroup];
}

/// Every setting: `ldp tune`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Every;

impl Offer for Every {
    const GROUPS: &'static [SettingGroup] = &SettingGroup::ALL;
}

/// What tunes one instance: the commands of one protocol (`perturb`, `aggregate`, ...).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tuning;

impl Offer for Tuning {
    const GROUPS: &'static [SettingGroup] = &SettingGroup::TUNING;
}

/// `ldp analyze`: the tuning of its adaptive rows without bounds (its `--asr-max` and
/// `--bits-max` filter rows), and the LH ASR form and poisoning of its columns.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Columns;

impl Offer for Columns {
    const GROUPS: &'static [SettingGroup] = &[
        SettingGroup::Weights,
        SettingGroup::Method,
        SettingGroup::Collections,
        SettingGroup::LhAsr,
        SettingGroup::Poisoning,
        SettingGroup::Bias,
    ];
}

/// `ldp frontier`: the LH ASR form and the poisoning setting.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Frontier;

impl Offer for Frontier {
    const GROUPS: &'static [SettingGroup] = &[SettingGroup::LhAsr, SettingGroup::Poisoning];
}

/// The settings of a tuning request that a command takes, one flag per setting of the
/// groups `G` offers: named, documented and parsed by ldp-optimize's table of settings
/// ([`Knob`]), so that the tool spells no setting itself.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RequestArgs<G> {
    /// The request the flags make.
    pub(crate) request: TuneRequest,
    groups: PhantomData<G>,
}

impl<G: Offer> RequestArgs<G> {
    fn offered() -> impl Iterator<Item = Knob> {
        G::GROUPS.iter().flat_map(|&g| Knob::of(g))
    }
}

/// The flag of a setting: `--w-asr W`, with its help; a named choice lists its names.
fn setting_flag(knob: Knob) -> Arg {
    let arg = Arg::new(knob.name())
        .long(knob.name().replace('_', "-"))
        .value_name(knob.placeholder())
        .help(knob.help().trim_end_matches('.'));
    match knob.choices() {
        Some(names) => arg.value_parser(PossibleValuesParser::new(names)),
        None => arg.value_parser(move |text: &str| {
            TuneRequest::default()
                .set_text(knob, text)
                .map(|()| text.to_owned())
                .map_err(|e| e.message)
        }),
    }
}

impl<G: Offer> Args for RequestArgs<G> {
    fn augment_args(cmd: Command) -> Command {
        Self::offered().fold(cmd, |cmd, knob| cmd.arg(setting_flag(knob)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<G: Offer> FromArgMatches for RequestArgs<G> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut args = RequestArgs {
            request: TuneRequest::default(),
            groups: PhantomData,
        };
        args.update_from_arg_matches(matches)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for knob in Self::offered() {
            if let Some(text) = matches.get_one::<String>(knob.name()) {
                self.request
                    .set_text(knob, text)
                    .map_err(|e| clap::Error::raw(ErrorKind::ValueValidation, e))?;
            }
        }
        Ok(())
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
    let label = match e.given_value(request, param) {
        Some(v) => format!("{} {v}", knob.flag()),
        None => knob.flag(),
    };
    anyhow::Error::new(e).context(label)
}

/// `--protocol` as a set of protocols ([`ProtocolSet`]): memoized ones when `memoized`
/// (`--eps-perm`) or a memoized name is given; errors name the flag and the name at fault.
pub(crate) fn protocol_set(names: &[String], memoized: bool) -> Result<ProtocolSet> {
    ProtocolSet::parse(names, memoized).map_err(|e| protocol_error(e, memoized))
}

/// An error of `--protocol`, naming the flag and the name at fault (`memoized`: the
/// memoized protocols were asked for).
pub(crate) fn protocol_error(e: ProtocolSetError, memoized: bool) -> anyhow::Error {
    let flag = match &e {
        ProtocolSetError::Unknown { name, .. } if memoized => {
            format!("--protocol {name}: --eps-perm goes with the memoized protocols")
        }
        ProtocolSetError::Unknown { name, .. } => format!("--protocol {name}"),
        _ => "--protocol".into(),
    };
    anyhow::Error::new(e).context(flag)
}

/// `--protocol` of a command that tunes one protocol or chooses among all: `None` for
/// `all`.
pub(crate) fn one_or_all(name: &str) -> Result<Option<Protocol>> {
    ProtocolSet::one_or_all(name).with_context(|| format!("--protocol {}", name.trim()))
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
