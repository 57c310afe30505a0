//! `ldp tune` and `ldp frontier`.

use anyhow::{Result, bail};
use clap::Args;
use ldp_optimize::{candidates, frontier, tune};

use crate::output::{Format, Value, print};
use crate::protocol::{TuneArgs, budget, domain, parse_protocol};

#[derive(Debug, Args)]
pub(crate) struct TuneCmd {
    /// Adaptive protocol: ass, aue, alh, athe.
    #[arg(long)]
    protocol: String,
    /// Domain size.
    #[arg(long)]
    k: u64,
    /// Privacy budget.
    #[arg(long, allow_negative_numbers = true)]
    eps: f64,
    /// ASR bound of the epsilon-constraint strategy (implies it when --strategy is not given).
    #[arg(long = "asr-max", allow_negative_numbers = true)]
    asr_max: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    #[command(flatten)]
    tuning: TuneArgs,
}

pub(crate) fn run_tune(a: &TuneCmd) -> Result<()> {
    let p = parse_protocol(&a.protocol)?;
    if !p.is_adaptive() {
        bail!(
            "--protocol {}: only ass, aue, alh and athe are tuned",
            a.protocol
        );
    }
    let options = a.tuning.options(a.asr_max)?;
    let t = tune(p, domain(a.k)?, budget(a.eps)?, &options)?;
    if t.fell_back {
        eprintln!(
            "ldp: note: no parameter meets the ASR bound; the utopia point was chosen instead"
        );
    }
    let row = vec![
        Value::from(p.name()),
        Value::Num(a.k as f64),
        Value::Num(a.eps),
        Value::from(t.strategy.name()),
        Value::Num(t.param()),
        Value::Num(t.objectives.asr),
        Value::Num(t.objectives.mse),
        Value::Num(t.objectives.epg),
    ];
    print(
        &mut std::io::stdout().lock(),
        a.format,
        &[
            "protocol", "k", "eps", "strategy", "param", "asr", "mse", "epg",
        ],
        &[row],
    )
}

pub(crate) fn run_frontier(a: &TuneCmd) -> Result<()> {
    let p = parse_protocol(&a.protocol)?;
    if !p.is_adaptive() {
        bail!(
            "--protocol {}: frontiers are over the parameter of ass, aue, alh or athe",
            a.protocol
        );
    }
    let options = a.tuning.options(a.asr_max)?;
    let front = frontier(&candidates(p, domain(a.k)?, budget(a.eps)?, &options)?);
    let rows: Vec<Vec<Value>> = front
        .iter()
        .map(|c| {
            vec![
                Value::Num(c.param()),
                Value::Num(c.objectives.asr),
                Value::Num(c.objectives.mse),
            ]
        })
        .collect();
    print(
        &mut std::io::stdout().lock(),
        a.format,
        &["param", "asr", "mse"],
        &rows,
    )
}
