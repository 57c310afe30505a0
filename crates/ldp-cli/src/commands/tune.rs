//! `ldp tune` and `ldp frontier`.

use anyhow::Result;
use clap::Args;
use ldp_core::Protocol;
use ldp_optimize::{Objective, ObjectiveSet};

use crate::output::{Format, Value, print};
use crate::protocol::{
    Every, Frontier, RequestArgs, budget, domain, flagged, knob, one_or_all, parse_protocol,
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    /// How the protocol is tuned, or the bounds of the choice among every protocol.
    #[command(flatten)]
    settings: RequestArgs<Every>,
}

const TUNE_COLUMNS: [&str; 9] = [
    "protocol", "k", "eps", "strategy", "param", "asr", "mse", "epg", "bits",
];

pub(crate) fn run_tune(a: &TuneCmd) -> Result<()> {
    let (k, eps) = (domain(a.k)?, budget(a.eps)?);
    let request = a.settings.request;
    let flag = |e| flagged(e, &request, None);
    let row = if let Some(p) = one_or_all(&a.protocol)? {
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
    } else {
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
            Value::params(&choice.spec.params()),
            Value::Num(o.asr),
            Value::Num(o.mse),
            o.epg.is_finite().then_some(o.epg).into(),
            Value::number(o.bits),
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    /// The LH ASR form of the asr objective and the maximal gain attack of the epg one.
    #[command(flatten)]
    settings: RequestArgs<Frontier>,
}

pub(crate) fn run_frontier(a: &FrontierCmd) -> Result<()> {
    let p = parse_protocol(&a.protocol)?;
    let request = a.settings.request;
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
