//! Choosing a protocol instance from the command line.

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use ldp_analytic::LhAsr;
use ldp_core::{DomainSize, Epsilon, Family, FamilyParams, Protocol, Spec};
use ldp_optimize::{Search, Strategy, TuneOptions, Weights, protocol_spec};

/// `--w-asr`, `--search` and `--strategy`: how adaptive protocols are tuned.
#[derive(Debug, Clone, Args)]
pub(crate) struct TuneArgs {
    /// ASR weight of the tuning objective (the MSE weight is 1 - W).
    #[arg(
        long = "w-asr",
        value_name = "W",
        default_value_t = 0.5,
        allow_negative_numbers = true
    )]
    pub(crate) w_asr: f64,
    /// Search mode: the paper's grid, or grid then golden section.
    #[arg(long, value_enum, default_value_t = SearchArg::Paper)]
    pub(crate) search: SearchArg,
    /// Selection strategy.
    #[arg(long, value_enum, default_value_t = StrategyArg::Weighted)]
    pub(crate) strategy: StrategyArg,
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
    /// Tuning options; `asr_max` overrides the epsilon-constraint bound.
    pub(crate) fn options(&self, asr_max: Option<f64>) -> Result<TuneOptions> {
        let weights = Weights::new(self.w_asr, 1.0 - self.w_asr)
            .with_context(|| format!("--w-asr {}", self.w_asr))?;
        let strategy = match (self.strategy, asr_max) {
            (StrategyArg::EpsConstraint, Some(a)) | (StrategyArg::Weighted, Some(a)) => {
                Strategy::eps_constraint(a).context("--asr-max")?
            }
            (s, _) => Strategy::from_name(match s {
                StrategyArg::Weighted => "weighted",
                StrategyArg::Utopia => "utopia",
                StrategyArg::Elbow => "elbow",
                StrategyArg::EpsConstraint => "eps-constraint",
                StrategyArg::Hypervolume => "hypervolume",
                StrategyArg::Tchebycheff => "tchebycheff",
            })
            .expect("known strategy"),
        };
        Ok(TuneOptions {
            weights,
            search: match self.search {
                SearchArg::Paper => Search::Paper,
                SearchArg::Refined => Search::Refined,
            },
            strategy,
            ..TuneOptions::default()
        })
    }
}

pub(crate) fn parse_protocol(s: &str) -> Result<Protocol> {
    Ok(s.parse::<Protocol>()?)
}

pub(crate) fn domain(k: u64) -> Result<DomainSize> {
    DomainSize::try_from(k).with_context(|| format!("--k {k}"))
}

pub(crate) fn budget(eps: f64) -> Result<Epsilon> {
    Epsilon::new(eps).with_context(|| format!("--eps {eps}"))
}

/// The instance of `protocol`: `param` if given, else the preset (classic) or the tuned
/// parameter (adaptive).
pub(crate) fn resolve(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    param: Option<f64>,
    tuning: &TuneOptions,
) -> Result<Spec> {
    let Some(x) = param else {
        return Ok(protocol_spec(protocol, k, eps, tuning)?);
    };
    let whole = |name: &str| -> Result<u32> {
        if x.fract() != 0.0 || x < 0.0 || x > f64::from(u32::MAX) {
            bail!("--param {x}: {name} must be a whole number");
        }
        Ok(x as u32)
    };
    let family = match protocol.family() {
        Family::Grr | Family::SummationHistogram => bail!("--param: {protocol} has no parameter"),
        Family::SubsetSelection => FamilyParams::SubsetSelection {
            omega: whole("omega")?,
        },
        Family::UnaryEncoding => FamilyParams::UnaryEncoding { p: x },
        Family::LocalHashing => FamilyParams::LocalHashing { g: whole("g")? },
        Family::ThresholdHistogram => FamilyParams::ThresholdHistogram { theta: x },
    };
    Spec::new(k, eps, family).with_context(|| format!("--param {x}"))
}

/// The parameter column of `analyze`: empty for GRR, SUE, OUE and SHE, whose parameter
/// is fixed by the protocol's definition.
pub(crate) fn shown_param(protocol: Protocol, spec: &Spec) -> Option<f64> {
    match protocol {
        Protocol::Grr | Protocol::Sue | Protocol::Oue | Protocol::She => None,
        _ => spec.family().value(),
    }
}
