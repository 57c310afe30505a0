//! `ldp simulate`.

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use ldp_analytic::{LhAsr, Poisoning, asr, epg, variance};
use ldp_attack::{
    MeasureConfig, PoisonConfig, PoisonKind, Population, ReconstructionAttack, measure,
};
use ldp_core::{Family, simulation};
use rand::RngExt;

use super::ProtocolArgs;
use super::reports::{for_each_line, parse_item, spec_of};
use crate::output::{Format, Value, print};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DatasetArg {
    /// UCI Adult, Age attribute (48,842 people, k = 100).
    AdultAge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PoisonArg {
    /// Maximal gain attack.
    Mga,
    /// Random item attack.
    Ria,
    /// Random output attack.
    Roa,
}

#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    /// File with one item (0..k-1) per line: the users.
    #[arg(long, conflicts_with = "dataset", required_unless_present = "dataset")]
    items: Option<std::path::PathBuf>,
    /// A data set shipped with the tool.
    #[arg(long, value_enum)]
    dataset: Option<DatasetArg>,
    /// Independent runs.
    #[arg(long, default_value_t = 10)]
    runs: u64,
    /// Master seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Draw this many users i.i.d. from the data's distribution instead of using it as is.
    #[arg(long)]
    users: Option<usize>,
    /// Poisoning attack to add.
    #[arg(long, value_enum, requires_all = ["beta", "targets"])]
    poison: Option<PoisonArg>,
    /// Fraction of fake users among all users.
    #[arg(long)]
    beta: Option<f64>,
    /// Target items, comma-separated.
    #[arg(long, value_delimiter = ',')]
    targets: Option<Vec<u32>>,
    /// Output format (csv or json).
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
}

pub(crate) fn run(a: &SimulateArgs) -> Result<()> {
    let spec = spec_of(&a.protocol)?;
    let k = spec.k();
    let mut pop = match (&a.items, a.dataset) {
        (Some(path), _) => {
            let file =
                std::fs::File::open(path).with_context(|| format!("--items {}", path.display()))?;
            let mut items = Vec::new();
            for_each_line(std::io::BufReader::new(file), |_, line| {
                items.push(parse_item(line, k)?);
                Ok(())
            })
            .with_context(|| format!("--items {}", path.display()))?;
            Population::from_items(k, items)
                .with_context(|| format!("--items {}", path.display()))?
        }
        (None, Some(DatasetArg::AdultAge)) => {
            let pop = Population::adult_age();
            if pop.k() != k {
                bail!("--dataset adult-age has k = {}, but --k is {k}", pop.k());
            }
            pop
        }
        (None, None) => bail!("give --items FILE or --dataset adult-age"),
    };
    if let Some(n) = a.users {
        // Resample n users from the data's empirical distribution, reproducibly.
        let mut rng = simulation::stream_rng(a.seed, u64::MAX, simulation::Role::Other(0), 0);
        let items = pop.items();
        let drawn = (0..n)
            .map(|_| items[rng.random_range(0..items.len())])
            .collect();
        pop = Population::from_items(k, drawn).context("--users")?;
    }
    let poisoning = match a.poison {
        None => None,
        Some(kind) => Some(PoisonConfig::new(
            match kind {
                PoisonArg::Mga => PoisonKind::Mga,
                PoisonArg::Ria => PoisonKind::Ria,
                PoisonArg::Roa => PoisonKind::Roa,
            },
            a.beta.context("--beta is required with --poison")?,
            a.targets
                .clone()
                .context("--targets is required with --poison")?,
        )?),
    };
    let config = MeasureConfig {
        runs: a.runs,
        seed: a.seed,
        attack: ReconstructionAttack::Paper,
        poisoning: poisoning.clone(),
    };
    let m = measure(&spec, &pop, &config).map_err(|e| {
        let flag = match e {
            ldp_attack::MeasureError::TargetOutsideDomain { .. } => "--targets",
            ldp_attack::MeasureError::NoRuns | ldp_attack::MeasureError::TooManyRuns { .. } => {
                "--runs"
            }
            _ => "simulation",
        };
        anyhow::Error::new(e).context(flag)
    })?;
    let truth = pop.frequencies();
    let n = pop.len() as f64;
    let mse_expected = variance::expected_mse(&spec, n, &truth);
    let protocol = a.protocol.protocol.to_ascii_lowercase();
    let mut columns = vec![
        "protocol",
        "k",
        "eps",
        "param",
        "runs",
        "users",
        "asr",
        "asr_se",
        "asr_expected",
        "mse",
        "mse_se",
        "mse_expected",
    ];
    let mut row = vec![
        Value::from(protocol.as_str()),
        Value::Num(f64::from(k.get())),
        Value::Num(spec.eps().get()),
        spec.family().value().into(),
        Value::Num(a.runs as f64),
        Value::Num(n),
        Value::Num(m.asr.mean),
        Value::Num(m.asr.se),
        Value::Num(asr::expected(&spec, LhAsr::Exact)),
        Value::Num(m.mse.mean),
        m.mse.se.is_finite().then_some(m.mse.se).into(),
        Value::Num(mse_expected),
    ];
    if let (Some(p), Some(gain)) = (&poisoning, m.gain) {
        let beta = m.fake_users as f64 / (m.fake_users as f64 + n);
        let f_t: f64 = p.targets().items().iter().map(|&t| truth[t as usize]).sum();
        let attack = Poisoning::new(beta, p.targets().len() as u32, f_t.min(1.0))?;
        let expected = match (p.kind(), spec.family().family()) {
            (PoisonKind::Mga, Family::SummationHistogram) => Some(epg::expected_she_clipped(
                &spec,
                &attack,
                ldp_core::ClipBound::recommended(spec.eps()),
            )?),
            (PoisonKind::Mga, _) => epg::expected(&spec, &attack)?.finite(),
            // No closed form for the random item and random output attacks.
            _ => None,
        };
        columns.extend(["gain", "gain_se", "epg"]);
        row.extend([
            Value::Num(gain.mean),
            gain.se.is_finite().then_some(gain.se).into(),
            expected.into(),
        ]);
    }
    print(&mut std::io::stdout().lock(), a.format, &columns, &[row])
}
