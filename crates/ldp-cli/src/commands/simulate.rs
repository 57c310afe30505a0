//! `ldp simulate`.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use ldp_analytic::compare::{Poisoned, Row};
use ldp_attack::{
    BYTES_PER_RUN, MeasureConfig, MeasureError, PoisonConfig, PoisonError, PoisonKind, Population,
    Prior, ReconstructionAttack, measure,
};
use ldp_core::simulation;
use ldp_jsonl::lines::LineChunks;

use super::ProtocolArgs;
use super::aggregate::server_clip;
use super::attack::read_prior;
use super::longitudinal;
use crate::lines::{ITEM_LINE_CAP, parse_item};
use crate::memory;
use crate::output::{Format, Value, number, print};
use crate::protocol::knob;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DatasetArg {
    /// UCI Adult, Age attribute (48,842 people, k = 100).
    AdultAge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AttackArg {
    /// The paper's reconstruction attack (uniform prior).
    Paper,
    /// The MAP attack with a prior (--prior FILE or --prior-from-data).
    Map,
}

#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    /// File with one item (0..k-1) per line: the users.
    #[arg(long, conflicts_with = "dataset", required_unless_present = "dataset")]
    items: Option<PathBuf>,
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
    users: Option<u64>,
    /// The reconstruction attack.
    #[arg(long, value_enum, default_value_t = AttackArg::Paper)]
    attack: AttackArg,
    /// The MAP attack's prior: a file of k weights, one per line.
    #[arg(long, value_name = "FILE", conflicts_with = "prior_from_data")]
    prior: Option<PathBuf>,
    /// The MAP attack's prior: the data's own distribution (the best prior there is).
    #[arg(long = "prior-from-data")]
    prior_from_data: bool,
    /// Poisoning attack to add: mga (maximal gain), ria (random item), roa (random
    /// output).
    #[arg(long, value_parser = knob::<PoisonKind>(PoisonKind::ALL.map(PoisonKind::name)))]
    poison: Option<PoisonKind>,
    /// Fraction of fake users among all users (with --poison).
    #[arg(long)]
    beta: Option<f64>,
    /// Target items, comma-separated (with --poison).
    #[arg(long, value_delimiter = ',')]
    targets: Option<Vec<u32>>,
    /// SHE under --poison: the server's clipping bound (default 1 + 40/eps), or `none`.
    #[arg(long = "she-clip", value_name = "C|none")]
    she_clip: Option<String>,
    /// Link each user's reports of an unchanged value over T collections and measure the
    /// combined-likelihood attack after each T given (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "T")]
    collections: Option<Vec<u32>>,
    /// With --collections: a memoized protocol (--protocol l-grr, l-sue, l-oue, l-osue,
    /// l-soue or l-adp), --eps per report and --eps-perm for the memo.
    #[arg(long, requires = "collections", requires = "eps_perm")]
    memoize: bool,
    /// The memo's budget (with --memoize).
    #[arg(long = "eps-perm", value_name = "E", requires = "memoize")]
    eps_perm: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
}

/// Reads a file of items, one per line.
fn read_items(path: &PathBuf, k: ldp_core::DomainSize) -> Result<Population> {
    let context = || format!("--items {}", path.display());
    let file = std::fs::File::open(path).with_context(context)?;
    let mut input = LineChunks::new(std::io::BufReader::new(file), ITEM_LINE_CAP);
    let mut items = Vec::new();
    while let Some(chunk) = input.next_chunk(1 << 16).with_context(context)? {
        for (number, line) in chunk {
            items.push(
                parse_item(line, k.get())
                    .with_context(|| format!("line {number}"))
                    .with_context(context)?,
            );
        }
    }
    Population::from_items(k, items).with_context(context)
}

/// `ldp simulate --collections`: the attack on linked reports.
fn run_linked(a: &SimulateArgs, collections: &[u32]) -> Result<()> {
    for (flag, given) in [
        ("--poison", a.poison.is_some()),
        ("--attack map", a.attack == AttackArg::Map),
    ] {
        if given {
            bail!(
                "{flag} does not combine with --collections (the linked attack has a uniform prior)"
            );
        }
    }
    let (target, name) = if a.memoize {
        let p = &a.protocol;
        if p.param.is_some() {
            bail!("--param does not apply to the memoized protocols");
        }
        let protocol = longitudinal::parse_memoized(std::slice::from_ref(&p.protocol))?;
        let [protocol] = protocol[..] else {
            bail!("--protocol all: --memoize simulates one protocol at a time");
        };
        let l = longitudinal::build(
            protocol,
            crate::protocol::domain(p.k()?)?,
            longitudinal::eps_perm(a.eps_perm)?,
            crate::protocol::budget(p.eps)?,
        )?;
        (longitudinal::Target::Memoized(l), protocol.name())
    } else {
        if longitudinal::is_memoized(&a.protocol.protocol) {
            bail!(
                "--protocol {}: add --memoize and --eps-perm E",
                a.protocol.protocol.trim()
            );
        }
        let name = crate::protocol::parse_protocol(&a.protocol.protocol)?.name();
        (
            longitudinal::Target::OneShot(a.protocol.resolve()?.spec),
            name,
        )
    };
    let k = match &target {
        longitudinal::Target::OneShot(spec) => spec.k(),
        longitudinal::Target::Memoized(l) => l.domain_size(),
    };
    let pop = population(a, k)?;
    let (columns, rows) =
        longitudinal::simulate_rows(&target, name, &pop, a.runs, a.seed, collections)?;
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)
}

/// The users: a file of items or a shipped data set, resampled to `--users` if given.
fn population(a: &SimulateArgs, k: ldp_core::DomainSize) -> Result<Population> {
    let mut pop = match (&a.items, a.dataset) {
        (Some(path), _) => read_items(path, k)?,
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
        pop = pop.resample(n as usize, &mut rng).context("--users")?;
    }
    Ok(pop)
}

pub(crate) fn run(a: &SimulateArgs) -> Result<()> {
    if a.poison.is_none() {
        for (flag, given) in [
            ("--beta", a.beta.is_some()),
            ("--targets", a.targets.is_some()),
            ("--she-clip", a.she_clip.is_some()),
        ] {
            if given {
                bail!("{flag}: applies to a poisoning attack; add --poison mga|ria|roa");
            }
        }
    }
    if a.attack == AttackArg::Paper && (a.prior.is_some() || a.prior_from_data) {
        bail!("--prior: the paper's attack has a uniform prior; add --attack map");
    }
    if a.attack == AttackArg::Map && a.prior.is_none() && !a.prior_from_data {
        bail!("--attack map needs a prior: --prior FILE or --prior-from-data");
    }
    if a.runs == 0 {
        bail!("--runs 0: at least one run is needed");
    }
    memory::check("--runs", a.runs, BYTES_PER_RUN as u64)?;
    if let Some(n) = a.users {
        if n == 0 {
            bail!("--users 0: at least one user is needed");
        }
        memory::check("--users", n, 4)?;
    }
    if let Some(collections) = &a.collections {
        return run_linked(a, collections);
    }
    let spec = a.protocol.resolve()?.spec;
    let k = spec.k();
    let pop = population(a, k)?;
    let prior = match (&a.prior, a.prior_from_data) {
        (Some(path), _) => Some(read_prior(path, k.get())?),
        (None, true) => Some(Prior::from_population(&pop)),
        (None, false) => None,
    };
    let poisoning = match a.poison {
        None => None,
        Some(kind) => {
            let beta = a.beta.context("--beta is required with --poison")?;
            let targets = a
                .targets
                .clone()
                .context("--targets is required with --poison")?;
            let shown = targets
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",");
            let config = PoisonConfig::new(kind, beta, targets).map_err(|e| {
                let flag = match e {
                    PoisonError::Param(_) => format!("--beta {}", number(beta)),
                    _ => format!("--targets {shown}"),
                };
                anyhow::Error::new(e).context(flag)
            })?;
            Some(config.with_clip(server_clip(a.she_clip.as_deref(), &spec)?))
        }
    };
    let config = MeasureConfig {
        runs: a.runs,
        seed: a.seed,
        attack: prior
            .clone()
            .map_or(ReconstructionAttack::Paper, ReconstructionAttack::Map),
        poisoning: poisoning.clone(),
    };
    let m = measure(&spec, &pop, &config).map_err(|e| {
        let flag = match &e {
            MeasureError::TargetOutsideDomain { .. } => "--targets".to_owned(),
            MeasureError::NoRuns | MeasureError::TooManyRuns { .. } => format!("--runs {}", a.runs),
            MeasureError::Prior(_) => "--prior".to_owned(),
            _ => "simulation".to_owned(),
        };
        anyhow::Error::new(e).context(flag)
    })?;
    let truth = pop.frequencies();
    let mut measured = vec![
        match &prior {
            None => Row::asr(&spec, m.asr),
            Some(p) => Row::map_asr(&spec, p.probabilities(), m.asr)?,
        },
        Row::mse(&spec, &truth, pop.len(), m.mse),
    ];
    let poisoned = poisoning.as_ref().map(|p| Poisoned {
        kind: p.kind(),
        targets: p.targets().items(),
        truth: &truth,
        users: pop.len(),
        fake_users: m.fake_users,
        clip: p.clip(),
        supported: m.targets_supported,
    });
    if let (Some(attack), Some(gain)) = (&poisoned, m.gain) {
        measured.push(Row::gain(&spec, attack, gain)?);
    }
    let protocol = crate::protocol::parse_protocol(&a.protocol.protocol)?.name();
    let mut columns = vec!["protocol", "k", "eps", "param", "runs", "users"];
    let mut row = vec![
        Value::from(protocol),
        Value::Int(u64::from(k.get())),
        Value::Num(spec.eps().get()),
        Value::params(&spec.params()),
        Value::Int(a.runs),
        Value::Int(pop.len() as u64),
    ];
    for r in &measured {
        columns.extend(r.quantity.columns());
        row.extend([
            Value::Num(r.measured.mean),
            r.se().into(),
            r.expected().into(),
        ]);
    }
    if let (Some(attack), Some(s)) = (&poisoned, m.targets_supported) {
        columns.push("targets_supported");
        row.push(Value::Int(u64::from(s)));
        if attack.short_support(&spec).is_some() {
            note!(
                "ldp: note: each fake report supports {s} of the {} targets (no report of this protocol found supports them all); the epg column is the gain at {s}",
                attack.targets.len()
            );
        }
    }
    print(&mut std::io::stdout().lock(), a.format, &columns, &[row])
}
