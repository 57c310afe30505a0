//! Choosing a protocol instance from the command line, and the tuning options behind it.
//!
//! Every flag must do something: tuning flags with a protocol that is not tuned, a bound
//! with a strategy that has none, or `--param` on a protocol whose definition fixes its
//! parameter are errors naming the flag.

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};
use ldp_analytic::LhAsr;
use ldp_core::{AnyMechanism, DomainSize, Epsilon, FamilyParams, ParamError, Protocol, Spec};
use ldp_optimize::{Bounds, Knob, Search, Strategy, TuneOptions, TuneRequest, tune};

use crate::output::number;

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
    #[arg(long, value_enum)]
    pub(crate) search: Option<SearchArg>,
    /// Selection strategy (default weighted; eps-constraint when a bound is given).
    /// Utopia, elbow, hypervolume and eps-constraint look only at which weights are
    /// positive.
    #[arg(long, value_enum)]
    pub(crate) strategy: Option<StrategyArg>,
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

impl BoundArgs {
    pub(crate) fn given(&self) -> Option<&'static str> {
        [
            ("--asr-max", self.asr_max.is_some()),
            ("--epg-max", self.epg_max.is_some()),
            ("--bits-max", self.bits_max.is_some()),
        ]
        .into_iter()
        .find_map(|(name, on)| on.then_some(name))
    }

    /// The bounds given, or `None` when none is.
    pub(crate) fn bounds(&self) -> Result<Option<Bounds>> {
        let mut out: Option<Bounds> = None;
        for (flag, value) in [
            ("--asr-max", self.asr_max),
            ("--epg-max", self.epg_max),
            ("--bits-max", self.bits_max),
        ] {
            let Some(v) = value else { continue };
            let next = match (flag, out) {
                ("--asr-max", None) => Bounds::asr(v),
                ("--asr-max", Some(b)) => b.with_asr(v),
                ("--epg-max", None) => Bounds::epg(v),
                ("--epg-max", Some(b)) => b.with_epg(v),
                (_, None) => Bounds::bits(v),
                (_, Some(b)) => b.with_bits(v),
            };
            out = Some(next.with_context(|| format!("{flag} {}", number(v)))?);
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SearchArg {
    Paper,
    Refined,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StrategyArg {
    Weighted,
    Utopia,
    Elbow,
    EpsConstraint,
    Hypervolume,
    Tchebycheff,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LhAsrArg {
    Paper,
    Exact,
}

impl From<LhAsrArg> for LhAsr {
    fn from(a: LhAsrArg) -> Self {
        match a {
            LhAsrArg::Paper => LhAsr::Paper,
            LhAsrArg::Exact => LhAsr::Exact,
        }
    }
}

impl TuneArgs {
    /// The first tuning flag given, if any.
    pub(crate) fn given(&self) -> Option<&'static str> {
        [
            ("--w-asr", self.w_asr.is_some()),
            ("--w-epg", self.w_epg.is_some()),
            ("--w-bits", self.w_bits.is_some()),
            ("--search", self.search.is_some()),
            ("--strategy", self.strategy.is_some()),
            ("--asr-after", self.asr_after.is_some()),
        ]
        .into_iter()
        .find_map(|(name, on)| on.then_some(name))
    }

    /// The tuning options; `bounds` (from `--asr-max` and its kin, where the command has
    /// them) select the eps-constraint strategy unless another one is named.
    pub(crate) fn options(&self, bounds: &BoundArgs) -> Result<TuneOptions> {
        let request = TuneRequest {
            w_asr: self.w_asr,
            w_epg: self.w_epg,
            w_bits: self.w_bits,
            search: self.search.map(|s| match s {
                SearchArg::Paper => Search::Paper,
                SearchArg::Refined => Search::Refined,
            }),
            strategy: self
                .strategy
                .map(|s| Strategy::from_name(strategy_name(s)).expect("a known strategy")),
            bounds: bounds.bounds()?,
            collections: self.asr_after,
        };
        request.options().map_err(|e| {
            let flag = match e.knob() {
                Knob::AsrWeight => "--w-asr",
                Knob::EpgWeight => "--w-epg",
                Knob::BitsWeight => "--w-bits",
                Knob::Strategy => "--strategy",
                Knob::Bounds => bounds.given().unwrap_or("--asr-max"),
                Knob::Collections => "--asr-after",
            };
            anyhow!("{flag}: {e}")
        })
    }
}

fn strategy_name(s: StrategyArg) -> &'static str {
    match s {
        StrategyArg::Weighted => "weighted",
        StrategyArg::Utopia => "utopia",
        StrategyArg::Elbow => "elbow",
        StrategyArg::EpsConstraint => "eps-constraint",
        StrategyArg::Hypervolume => "hypervolume",
        StrategyArg::Tchebycheff => "tchebycheff",
    }
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
            ParamError::SheBudget { value, .. } => format!("--eps {}", number(value)),
            _ => "the protocol".into(),
        };
        anyhow::Error::new(e).context(flag)
    })
}

/// A resolved protocol instance, and what tuning said about it.
pub(crate) struct Resolved {
    pub(crate) spec: Spec,
    /// For an adaptive protocol without `--param`: one line on how it was tuned.
    pub(crate) note: Option<String>,
}

/// The instance of `protocol`: `param` if given, else the preset (classic) or the tuned
/// parameter (adaptive). Tuning flags on an instance that is not tuned are an error.
pub(crate) fn resolve(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    param: Option<f64>,
    tuning: &TuneArgs,
    bounds: &BoundArgs,
) -> Result<Resolved> {
    let tuned = protocol.is_adaptive() && param.is_none();
    if !tuned && let Some(flag) = tuning.given().or(bounds.given()) {
        bail!(
            "{flag}: {} is not tuned here (only ass, aue, alh and athe are, and not with --param)",
            protocol.name()
        );
    }
    let Some(x) = param else {
        if !tuned {
            let spec = Spec::classic(protocol, k, eps).expect("a classic protocol");
            return Ok(Resolved { spec, note: None });
        }
        let options = tuning.options(bounds)?;
        let t = tune(protocol, k, eps, &options)
            .with_context(|| format!("tuning {} at k = {k}, eps = {eps}", protocol.name()))?;
        let mut note = format!(
            "{} tuned at k = {k}, eps = {eps}: {} = {} ({}",
            protocol.name(),
            protocol.parameter_name().unwrap_or("-"),
            number(t.param()),
            t.strategy.name(),
        );
        if let Strategy::EpsConstraint(b) = t.strategy {
            for (o, v) in b.iter() {
                note += &format!(", {} <= {}", o.name(), number(v));
            }
        } else {
            note += &format!(", w_asr = {}", number(options.weights.asr()));
        }
        note += ")";
        if t.fell_back {
            note += "; no parameter meets the bound, the utopia point was chosen instead";
        }
        return Ok(Resolved {
            spec: t.spec,
            note: Some(note),
        });
    };
    let family = param_family(protocol, x)?;
    let spec = Spec::new(k, eps, family).with_context(|| format!("--param {}", number(x)))?;
    Ok(Resolved { spec, note: None })
}

/// The family parameters `--param x` gives `protocol`, before its range is checked
/// against k: refused where the protocol has no parameter or its definition fixes it.
pub(crate) fn param_family(protocol: Protocol, x: f64) -> Result<FamilyParams> {
    let shown = number(x);
    let Some(name) = protocol.parameter_name() else {
        bail!("--param {shown}: {} has no parameter", protocol.name());
    };
    if protocol.fixes_parameter() {
        let adaptive = match protocol {
            Protocol::Sue | Protocol::Oue => "aue",
            _ => "alh",
        };
        bail!(
            "--param {shown}: {} fixes {name} by its definition; for another {name} use --protocol {adaptive} --param {shown}",
            protocol.name()
        );
    }
    FamilyParams::with_value(protocol.family(), x)
        .ok_or_else(|| anyhow!("--param {shown}: {name} must be a whole number"))
}

/// The parameter column: empty for GRR and SHE, whose parameter does not exist, and for
/// SUE and OUE, whose p is fixed by their definition.
pub(crate) fn shown_param(protocol: Protocol, spec: &Spec) -> Option<f64> {
    match protocol {
        Protocol::Grr | Protocol::Sue | Protocol::Oue | Protocol::She => None,
        _ => spec.family().value(),
    }
}
