//! `ldp analyze`.

use anyhow::{Context, Result};
use clap::Args;
use ldp_analytic::{Poisoning, asr, epg, variance};
use ldp_core::Protocol;

use crate::output::{Format, Value, print};
use crate::protocol::{LhAsrArg, TuneArgs, budget, domain, parse_protocol, resolve, shown_param};

#[derive(Debug, Args)]
pub(crate) struct AnalyzeArgs {
    /// Protocols, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',')]
    protocol: Vec<String>,
    /// Domain sizes, comma-separated.
    #[arg(long, value_delimiter = ',')]
    k: Vec<u64>,
    /// Privacy budgets, comma-separated.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    eps: Vec<f64>,
    /// The family parameter, for a single protocol.
    #[arg(long)]
    param: Option<f64>,
    /// LH ASR form: the paper's approximation or the exact expectation.
    #[arg(long = "lh-asr", value_enum, default_value_t = LhAsrArg::Paper)]
    lh_asr: LhAsrArg,
    /// Fraction of fake users of the maximal gain attack.
    #[arg(long, default_value_t = 0.05)]
    beta: f64,
    /// Number of target items r.
    #[arg(long, default_value_t = 1)]
    targets: u32,
    /// True mass of the targets f_T.
    #[arg(long = "target-mass", default_value_t = 0.01)]
    target_mass: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
    #[command(flatten)]
    tuning: TuneArgs,
}

pub(crate) fn run(a: &AnalyzeArgs) -> Result<()> {
    let protocols: Vec<Protocol> = if a.protocol.iter().any(|p| p.eq_ignore_ascii_case("all")) {
        Protocol::ALL.to_vec()
    } else {
        a.protocol
            .iter()
            .map(|p| parse_protocol(p))
            .collect::<Result<_>>()?
    };
    anyhow::ensure!(
        !protocols.is_empty(),
        "--protocol: give at least one protocol"
    );
    anyhow::ensure!(
        a.param.is_none() || protocols.len() == 1,
        "--param needs a single --protocol"
    );
    let poisoning =
        Poisoning::new(a.beta, a.targets, a.target_mass).context("poisoning setting")?;
    let tuning = a.tuning.options(None)?;
    let mut rows = Vec::new();
    for &p in &protocols {
        for &k in &a.k {
            for &e in &a.eps {
                let (kk, ee) = (domain(k)?, budget(e)?);
                let spec = resolve(p, kk, ee, a.param, &tuning)?;
                rows.push(vec![
                    Value::from(p.name()),
                    Value::Num(k as f64),
                    Value::Num(e),
                    shown_param(p, &spec).into(),
                    asr::expected(&spec, a.lh_asr.into()).into(),
                    variance::approx_per_user(&spec).into(),
                    epg::expected(&spec, &poisoning)
                        .context("poisoning setting")?
                        .finite()
                        .into(),
                ]);
            }
        }
    }
    print(
        &mut std::io::stdout().lock(),
        a.format,
        &["protocol", "k", "eps", "param", "asr", "mse", "epg"],
        &rows,
    )
}
