//! `ldp tune` and `ldp frontier`.

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use ldp_analytic::Poisoning;
use ldp_optimize::{Objective, ObjectiveSet, candidates, choose_protocol_after, frontier_in, tune};

use crate::output::{Format, Value, number, print};
use crate::protocol::{BoundArgs, LhAsrArg, TuneArgs, budget, domain, parse_protocol};

/// The maximal gain attack behind the EPG objective.
#[derive(Debug, Clone, Args)]
pub(crate) struct PoisoningArgs {
    /// Fraction of fake users of the maximal gain attack (for --w-epg and --epg-max).
    #[arg(long)]
    beta: Option<f64>,
    /// Number of target items r (for --w-epg and --epg-max).
    #[arg(long)]
    targets: Option<u32>,
    /// True mass of the targets f_T (for --w-epg and --epg-max).
    #[arg(long = "target-mass")]
    target_mass: Option<f64>,
}

impl PoisoningArgs {
    /// The attack; its flags are errors unless EPG counts (`epg_used`).
    fn poisoning(&self, epg_used: bool) -> Result<Poisoning> {
        let given = [
            ("--beta", self.beta.is_some()),
            ("--targets", self.targets.is_some()),
            ("--target-mass", self.target_mass.is_some()),
        ]
        .into_iter()
        .find_map(|(f, on)| on.then_some(f));
        if let Some(flag) = given
            && !epg_used
        {
            bail!(
                "{flag}: the poisoning setting matters only when EPG is weighted, bounded or an objective"
            );
        }
        let d = Poisoning::default();
        let (beta, targets, mass) = (
            self.beta.unwrap_or(d.beta()),
            self.targets.unwrap_or(d.targets()),
            self.target_mass.unwrap_or(d.target_mass()),
        );
        Poisoning::new(beta, targets, mass).with_context(|| {
            format!(
                "--beta {}, --targets {targets}, --target-mass {}",
                number(beta),
                number(mass)
            )
        })
    }
}

#[derive(Debug, Args)]
pub(crate) struct TuneCmd {
    /// Adaptive protocol (ass, aue, alh, athe), or `all`: the lowest MSE of all twelve
    /// protocols under the bounds given.
    #[arg(long)]
    protocol: String,
    /// Domain size.
    #[arg(long)]
    k: u64,
    /// Privacy budget.
    #[arg(long)]
    eps: f64,
    /// LH ASR form used in the objective.
    #[arg(long = "lh-asr", value_enum, default_value_t = LhAsrArg::Paper)]
    lh_asr: LhAsrArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    #[command(flatten)]
    tuning: TuneArgs,
    #[command(flatten)]
    bounds: BoundArgs,
    #[command(flatten)]
    poisoning: PoisoningArgs,
}

const TUNE_COLUMNS: [&str; 9] = [
    "protocol", "k", "eps", "strategy", "param", "asr", "mse", "epg", "bits",
];

pub(crate) fn run_tune(a: &TuneCmd) -> Result<()> {
    let (k, eps) = (domain(a.k)?, budget(a.eps)?);
    let epg_used = a.tuning.w_epg.is_some_and(|w| w > 0.0) || a.bounds.epg_max.is_some();
    let poisoning = a.poisoning.poisoning(epg_used)?;
    if a.protocol.trim().eq_ignore_ascii_case("all") {
        if let Some(flag) = a.tuning.given().filter(|&f| f != "--asr-after") {
            bail!(
                "{flag}: --protocol all picks the lowest MSE under the bounds; it takes no weights, strategy or search"
            );
        }
        let bounds = a.bounds.bounds()?.context(
            "--protocol all picks the lowest MSE under bounds: give --asr-max, --epg-max or --bits-max",
        )?;
        let collections = a.tuning.asr_after.unwrap_or(1);
        super::repeated::check_collections("--asr-after", &[collections])?;
        if collections > 1 {
            eprintln!(
                "ldp: asr is the ASR after {collections} linked reports; ss and ass beyond omega = 1, and she, have no exact form for it and are left out"
            );
        }
        let choice =
            choose_protocol_after(k, eps, &bounds, a.lh_asr.into(), &poisoning, collections)?;
        let o = choice.objectives;
        let row = vec![
            Value::from(choice.protocol.name()),
            Value::Int(u64::from(k.get())),
            Value::Num(eps.get()),
            Value::from("eps-constraint"),
            choice
                .spec
                .family()
                .value()
                .map_or(Value::Empty, Value::number),
            Value::Num(o.asr),
            Value::Num(o.mse),
            o.epg.is_finite().then_some(o.epg).into(),
            Value::number(o.bits),
        ];
        return print(
            &mut std::io::stdout().lock(),
            a.format,
            &TUNE_COLUMNS,
            &[row],
        );
    }
    let p = parse_protocol(&a.protocol)?;
    if !p.is_adaptive() {
        bail!(
            "--protocol {}: only ass, aue, alh and athe are tuned (or `all` to choose among the twelve)",
            p.name()
        );
    }
    let mut options = a.tuning.options(&a.bounds)?;
    options.lh_asr = a.lh_asr.into();
    options.poisoning = poisoning;
    let t = tune(p, k, eps, &options)?;
    if t.fell_back {
        eprintln!("ldp: note: no parameter meets the bounds; the utopia point was chosen instead");
    }
    let row = vec![
        Value::from(p.name()),
        Value::Int(u64::from(k.get())),
        Value::Num(eps.get()),
        Value::from(t.strategy.name()),
        Value::number(t.param()),
        Value::Num(t.objectives.asr),
        Value::Num(t.objectives.mse),
        Value::Num(t.objectives.epg),
        Value::number(t.objectives.bits),
    ];
    print(
        &mut std::io::stdout().lock(),
        a.format,
        &TUNE_COLUMNS,
        &[row],
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ObjectiveArg {
    Asr,
    Mse,
    Epg,
    Bits,
}

#[derive(Debug, Args)]
pub(crate) struct FrontierCmd {
    /// Adaptive protocol: ass, aue, alh, athe.
    #[arg(long)]
    protocol: String,
    /// Domain size.
    #[arg(long)]
    k: u64,
    /// Privacy budget.
    #[arg(long)]
    eps: f64,
    /// The objectives of the frontier, two or more of asr, mse, epg, bits.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [ObjectiveArg::Asr, ObjectiveArg::Mse])]
    objectives: Vec<ObjectiveArg>,
    /// LH ASR form.
    #[arg(long = "lh-asr", value_enum, default_value_t = LhAsrArg::Paper)]
    lh_asr: LhAsrArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    #[command(flatten)]
    poisoning: PoisoningArgs,
}

pub(crate) fn run_frontier(a: &FrontierCmd) -> Result<()> {
    let p = parse_protocol(&a.protocol)?;
    if !p.is_adaptive() {
        bail!(
            "--protocol {}: frontiers are over the parameter of ass, aue, alh or athe",
            p.name()
        );
    }
    let objectives: Vec<Objective> = a
        .objectives
        .iter()
        .map(|o| match o {
            ObjectiveArg::Asr => Objective::Asr,
            ObjectiveArg::Mse => Objective::Mse,
            ObjectiveArg::Epg => Objective::Epg,
            ObjectiveArg::Bits => Objective::Bits,
        })
        .collect();
    let set = ObjectiveSet::of(&objectives);
    if set.len() < 2 {
        bail!("--objectives: a frontier needs two or more distinct objectives");
    }
    let options = ldp_optimize::TuneOptions {
        lh_asr: a.lh_asr.into(),
        poisoning: a.poisoning.poisoning(set.contains(Objective::Epg))?,
        ..Default::default()
    };
    let front = frontier_in(&candidates(p, domain(a.k)?, budget(a.eps)?, &options)?, set);
    let mut columns = vec!["param"];
    columns.extend(set.iter().map(Objective::name));
    let rows: Vec<Vec<Value>> = front
        .iter()
        .map(|c| {
            std::iter::once(Value::number(c.param()))
                .chain(set.iter().map(|o| Value::Num(c.objectives.get(o))))
                .collect()
        })
        .collect();
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)
}
