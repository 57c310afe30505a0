//! `ldp tune` and `ldp frontier`.

use anyhow::Result;
use clap::Args;
use ldp_analytic::LhAsr;
use ldp_core::Protocol;
use ldp_optimize::{Objective, ObjectiveSet};

use crate::output::{Format, Value, print};
use crate::protocol::{
    BoundArgs, PoisoningArgs, TuneArgs, budget, domain, flagged, knob, lh_asr_parser,
    parse_protocol, tune_request,
};

#[derive(Debug, Args)]
pub(crate) struct TuneCmd {
    // Its help names the adaptive protocols of the registry.
    #[arg(long, help = format!(
        "Adaptive protocol ({}), or `all`: the lowest MSE of every protocol (classic ones at \
         their presets, adaptive ones tuned) under the bounds given",
        Protocol::list(&Protocol::ADAPTIVE)
    ))]
    protocol: String,
    /// Domain size.
    #[arg(long)]
    k: u64,
    /// Privacy budget.
    #[arg(long)]
    eps: f64,
    /// LH ASR form used in the objective (default paper).
    #[arg(long = "lh-asr", value_parser = lh_asr_parser())]
    lh_asr: Option<LhAsr>,
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
    let request = tune_request(&a.tuning, &a.bounds, a.lh_asr, &a.poisoning);
    let flag = |e| flagged(e, &request, None);
    let row = if a.protocol.trim().eq_ignore_ascii_case("all") {
        let collections = request.collections.unwrap_or(1);
        if collections > 1 {
            note!(
                "ldp: asr is the ASR after {collections} linked reports; ss and ass beyond omega = 1, and she, have no exact form for it and are left out"
            );
        }
        let choice = request.choose(k, eps).map_err(flag)?;
        let o = choice.objectives;
        vec![
            Value::from(choice.protocol.name()),
            Value::Int(u64::from(k.get())),
            Value::Num(eps.get()),
            Value::from("eps-constraint"),
            Value::params(&choice.spec.family()),
            Value::Num(o.asr),
            Value::Num(o.mse),
            o.epg.is_finite().then_some(o.epg).into(),
            Value::number(o.bits),
        ]
    } else {
        let p = parse_protocol(&a.protocol)?;
        let t = request.tune(p, k, eps).map_err(flag)?;
        if t.fell_back {
            note!("ldp: note: no parameter meets the bounds; the utopia point was chosen instead");
        }
        vec![
            Value::from(p.name()),
            Value::Int(u64::from(k.get())),
            Value::Num(eps.get()),
            Value::from(t.strategy.name()),
            Value::number(t.param()),
            Value::Num(t.objectives.asr),
            Value::Num(t.objectives.mse),
            Value::Num(t.objectives.epg),
            Value::number(t.objectives.bits),
        ]
    };
    print(
        &mut std::io::stdout().lock(),
        a.format,
        &TUNE_COLUMNS,
        &[row],
    )
}

#[derive(Debug, Args)]
pub(crate) struct FrontierCmd {
    // Its help names the adaptive protocols of the registry.
    #[arg(long, help = format!("Adaptive protocol: {}", Protocol::list(&Protocol::ADAPTIVE)))]
    protocol: String,
    /// Domain size.
    #[arg(long)]
    k: u64,
    /// Privacy budget.
    #[arg(long)]
    eps: f64,
    /// The objectives of the frontier, two or more of asr, mse, epg, bits.
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = knob::<Objective>(Objective::ALL.map(Objective::name)),
        default_values = ["asr", "mse"]
    )]
    objectives: Vec<Objective>,
    /// LH ASR form (default paper).
    #[arg(long = "lh-asr", value_parser = lh_asr_parser())]
    lh_asr: Option<LhAsr>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    #[command(flatten)]
    poisoning: PoisoningArgs,
}

pub(crate) fn run_frontier(a: &FrontierCmd) -> Result<()> {
    let p = parse_protocol(&a.protocol)?;
    let request = tune_request(
        &TuneArgs::default(),
        &BoundArgs::default(),
        a.lh_asr,
        &a.poisoning,
    );
    let front = request
        .frontier(p, domain(a.k)?, budget(a.eps)?, &a.objectives)
        .map_err(|e| flagged(e, &request, None))?;
    let set = ObjectiveSet::of(&a.objectives);
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
