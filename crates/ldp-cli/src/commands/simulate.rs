//! `ldp simulate`.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use ldp_analytic::compare::{Poisoned, Row};
use ldp_attack::Table;
use ldp_attack::data::Trajectories;
use ldp_attack::{
    BYTES_PER_RUN, MeasureConfig, MeasureError, PoisonConfig, PoisonError, PoisonKind, Population,
    Prior, ReconstructionAttack, measure,
};
use ldp_core::multidim::{Priors, Solution};
use ldp_core::simulation;
use ldp_jsonl::lines::LineChunks;

use super::ProtocolArgs;
use super::aggregate::server_clip;
use super::attack::read_prior;
use super::longitudinal;
use super::{change, multidim, multidim_simulate};
use crate::lines::{ITEM_LINE_CAP, parse_item};
use crate::memory;
use crate::output::{Format, Value, number, print};
use crate::protocol::knob;

/// `--dataset`: a data set shipped with the tool, or a CSV file of several attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum DatasetArg {
    /// UCI Adult, Age attribute (48,842 people, k = 100).
    AdultAge,
    /// UCI Adult, ten categorical attributes (45,222 people).
    Adult,
    /// ACSEmployment, Montana: eighteen attributes (10,336 people).
    AcsEmployment,
    /// A CSV file: a header of attribute names, then one row of labels per user.
    Csv(PathBuf),
}

impl DatasetArg {
    fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "adult-age" => Ok(DatasetArg::AdultAge),
            "adult" => Ok(DatasetArg::Adult),
            "acs-employment" => Ok(DatasetArg::AcsEmployment),
            t if t.to_ascii_lowercase().ends_with(".csv") => Ok(DatasetArg::Csv(t.into())),
            _ => Err(
                "expected adult-age (one attribute), adult, acs-employment or a FILE.csv \
                 (several attributes)"
                    .into(),
            ),
        }
    }

    fn name(&self) -> String {
        match self {
            DatasetArg::AdultAge => "adult-age".into(),
            DatasetArg::Adult => "adult".into(),
            DatasetArg::AcsEmployment => "acs-employment".into(),
            DatasetArg::Csv(path) => path.display().to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AttackArg {
    /// The paper's reconstruction attack (uniform prior).
    Paper,
    /// The MAP attack with a prior (--prior FILE or --prior-from-data).
    Map,
}

#[derive(Debug, Args)]
#[command(mut_arg("k", |k| k.required(false).required_unless_present("solution")))]
pub(crate) struct SimulateArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    /// File with one item (0..k-1) per line: the users.
    #[arg(
        long,
        conflicts_with = "dataset",
        required_unless_present_any = ["dataset", "solution", "trajectories"]
    )]
    items: Option<PathBuf>,
    /// The users: adult-age (UCI Adult's Age, 48,842 people, k = 100); with --solution,
    /// a table of several attributes: adult (UCI Adult, 10 attributes), acs-employment
    /// (ACSEmployment, Montana, 18 attributes) or FILE.csv (a header of attribute names,
    /// then one row of labels per user).
    #[arg(long, value_name = "NAME|FILE.csv", value_parser = DatasetArg::parse)]
    dataset: Option<DatasetArg>,
    /// Several attributes per user (--dataset adult, acs-employment or FILE.csv): how the
    /// budget is spent on them: spl, smp, rsfd, rsfd-z, rsrfd.
    #[arg(
        long,
        value_parser = knob::<Solution>(Solution::ALL.map(Solution::name)),
        requires = "dataset"
    )]
    solution: Option<Solution>,
    /// With --solution: the table's attributes to collect, by name, comma-separated
    /// (default: all of them).
    #[arg(
        long = "attributes-of",
        value_delimiter = ',',
        value_name = "NAMES",
        requires = "solution"
    )]
    attributes_of: Option<Vec<String>>,
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
    /// The MAP attack's prior: a file of k weights, one per line. With --solution rsrfd,
    /// the priors the fakes are drawn from: a JSON array of one array of weights per
    /// attribute.
    #[arg(long, value_name = "FILE", conflicts_with = "prior_from_data")]
    prior: Option<PathBuf>,
    /// The MAP attack's prior: the data's own distribution (the best prior there is).
    /// With --solution rsrfd, the fakes' priors: the table's own marginals.
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
    /// With --collections or --days: a memoized protocol (--protocol l-grr, l-sue, l-oue,
    /// l-osue, l-soue, l-olh, l-blh or l-adp), --eps per report and --eps-perm for the memo.
    #[arg(long, requires = "eps_perm", conflicts_with = "permanent")]
    memoize: bool,
    /// With --collections or --days: the first report of a value replayed at every
    /// collection (a permanent memo; for dbitflip, Ding et al.'s dBitFlipPM, which keeps
    /// its buckets and a memo per class of values).
    #[arg(long)]
    permanent: bool,
    /// Users whose values change: each reports on D days (at least 2), and the attacker
    /// flags the days its reconstruction moves (the paper's Example 2). Needs
    /// --change-rate; prints the detector's recall, false alarms and precision beside
    /// their closed forms where there is one.
    #[arg(long, value_name = "D", conflicts_with = "collections")]
    days: Option<u32>,
    /// With --days: the probability that a user's value changes from one day to the next
    /// (to another value drawn from the data).
    #[arg(long = "change-rate", value_name = "R")]
    change_rate: Option<f64>,
    /// Users whose values over the days are recorded: `user,day,value` rows after a
    /// header line (a user is any text, a day a whole number, each user's days without a
    /// gap; the value in 0..k-1). The change detector runs on these values, replayed,
    /// instead of a Markov chain (--days and --change-rate).
    #[arg(
        long,
        value_name = "FILE.csv",
        conflicts_with_all = ["items", "dataset", "days", "change_rate", "collections", "users"]
    )]
    trajectories: Option<PathBuf>,
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
    let (target, name) = repeated_target(a, "--collections")?;
    let pop = population(a, target_k(&target))?;
    let (columns, rows) =
        longitudinal::simulate_rows(&target, &name, &pop, a.runs, a.seed, collections)?;
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)
}

/// `ldp simulate --days D --change-rate R`: the change detector.
fn run_changes(a: &SimulateArgs, days: u32, rate: f64) -> Result<()> {
    let (target, name) = repeated_target(a, "--days")?;
    let population = population(a, target_k(&target))?;
    let values = change::Values::Markov {
        population: &population,
        days,
        rate,
    };
    let (columns, rows) = change::simulate_rows(&target, &name, &values, a.runs, a.seed)?;
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)
}

/// `--trajectories FILE.csv`: the change detector on recorded values, replayed.
fn run_replayed(a: &SimulateArgs, path: &PathBuf) -> Result<()> {
    let (target, name) = repeated_target(a, "--trajectories")?;
    let k = target_k(&target);
    let context = || format!("--trajectories {}", path.display());
    let text = std::fs::read_to_string(path).with_context(context)?;
    let trajectories = Trajectories::parse_csv(k, &text).with_context(context)?;
    let values = change::Values::Replayed(&trajectories);
    let (columns, rows) = change::simulate_rows(&target, &name, &values, a.runs, a.seed)?;
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)
}

fn target_k(target: &longitudinal::Target) -> ldp_core::DomainSize {
    match target {
        longitudinal::Target::OneShot(spec) | longitudinal::Target::Permanent(spec) => spec.k(),
        longitudinal::Target::Memoized(l) => l.domain_size(),
    }
}

/// What each user sends at every collection: a fresh report, a permanent memo or a
/// memoized protocol; `mode` names the flag that asked for repeated collection.
fn repeated_target(a: &SimulateArgs, mode: &str) -> Result<(longitudinal::Target, String)> {
    for (flag, given) in [
        ("--poison", a.poison.is_some()),
        ("--attack map", a.attack == AttackArg::Map),
    ] {
        if given {
            bail!(
                "{flag} does not combine with {mode} (the attacks on linked reports have a uniform prior)"
            );
        }
    }
    if a.permanent {
        if longitudinal::is_memoized(a.protocol.name()?) {
            bail!(
                "--permanent replays a one-shot protocol's report; --protocol {} is memoized (use --memoize)",
                a.protocol.name()?.trim()
            );
        }
        let name = crate::protocol::parse_protocol(a.protocol.name()?)?.name();
        return Ok((
            longitudinal::Target::Permanent(a.protocol.resolve()?.spec),
            name.to_owned(),
        ));
    }
    Ok(if a.memoize {
        let p = &a.protocol;
        if p.param.is_some() {
            bail!("--param does not apply to the memoized protocols");
        }
        let protocol = longitudinal::parse_memoized(&[p.name()?.to_owned()])?;
        let [protocol] = protocol[..] else {
            bail!("--protocol all: --memoize simulates one protocol at a time");
        };
        let l = longitudinal::build(
            protocol,
            crate::protocol::domain(p.k()?)?,
            longitudinal::eps_perm(a.eps_perm)?,
            crate::protocol::budget(p.eps()?)?,
        )?;
        (
            longitudinal::Target::Memoized(l),
            protocol.name().to_owned(),
        )
    } else if a.protocol.spec.is_some() {
        // A one-shot instance read whole from its spec file.
        let spec = a.protocol.spec()?;
        (longitudinal::Target::OneShot(spec), a.protocol.label(&spec))
    } else {
        if longitudinal::is_memoized(a.protocol.name()?) {
            bail!(
                "--protocol {}: add --memoize and --eps-perm E",
                a.protocol.name()?.trim()
            );
        }
        let name = crate::protocol::parse_protocol(a.protocol.name()?)?.name();
        (
            longitudinal::Target::OneShot(a.protocol.resolve()?.spec),
            name.to_owned(),
        )
    })
}

/// The users: a file of items or a shipped data set, resampled to `--users` if given.
fn population(a: &SimulateArgs, k: ldp_core::DomainSize) -> Result<Population> {
    let mut pop = match (&a.items, &a.dataset) {
        (Some(path), _) => read_items(path, k)?,
        (None, Some(DatasetArg::AdultAge)) => {
            let pop = Population::adult_age();
            if pop.k() != k {
                bail!("--dataset adult-age has k = {}, but --k is {k}", pop.k());
            }
            pop
        }
        (None, Some(table)) => bail!(
            "--dataset {}: a table of several attributes; add --solution spl|smp|rsfd|rsfd-z|rsrfd",
            table.name()
        ),
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
    if let Some(solution) = a.solution {
        return run_several(a, solution);
    }
    if a.attributes_of.is_some() {
        bail!("--attributes-of goes with --solution (several attributes per user)");
    }
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
    if let Some(path) = &a.trajectories {
        return run_replayed(a, path);
    }
    if let Some((days, rate)) = change::setting(a.days, a.change_rate)? {
        return run_changes(a, days, rate);
    }
    if let Some(collections) = &a.collections {
        return run_linked(a, collections);
    }
    for (flag, given) in [("--memoize", a.memoize), ("--permanent", a.permanent)] {
        if given {
            bail!(
                "{flag}: applies to repeated collection; add --collections T, --days D or --trajectories FILE"
            );
        }
    }
    let spec = a.protocol.spec()?;
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
    let protocol = a.protocol.label(&spec);
    let mut columns = vec!["protocol", "k", "eps", "param", "runs", "users"];
    let mut row = vec![
        Value::from(protocol.as_str()),
        Value::Int(u64::from(k.get())),
        Value::Num(spec.eps().get()),
        Value::params(&spec.params()),
        Value::Int(a.runs),
        Value::Int(pop.len() as u64),
    ];
    for (i, r) in measured.iter().enumerate() {
        columns.extend(r.quantity.columns());
        row.extend([
            Value::Num(r.measured.mean),
            r.se().into(),
            r.expected().into(),
        ]);
        if i == 1 {
            // After the MSE, the estimate's shape (no closed form).
            columns.extend(["kl", "kl_se", "rank_corr", "rank_corr_se"]);
            // A standard error is unknown (empty) after one run.
            let se = |e: ldp_attack::Estimate| e.se.is_finite().then_some(e.se).into();
            row.extend([Value::Num(m.kl.mean), se(m.kl)]);
            row.extend(match m.rank_correlation {
                Some(r) => [Value::Num(r.mean), se(r)],
                None => [Value::Empty, Value::Empty],
            });
        }
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

/// `ldp simulate --dataset TABLE --solution NAME`: per attribute, its domain, the
/// estimate's MSE, the reconstruction ASR, the joint ASR and (RS+ solutions) the
/// attribute-inference accuracy beside its baseline 1/d.
fn run_several(a: &SimulateArgs, solution: Solution) -> Result<()> {
    let several = "with --solution (several attributes per user)";
    let unused = [
        ("--k", a.protocol.k.is_some()),
        ("--items", a.items.is_some()),
        ("--users", a.users.is_some()),
        ("--attack map", a.attack == AttackArg::Map),
        ("--poison", a.poison.is_some()),
        ("--beta", a.beta.is_some()),
        ("--targets", a.targets.is_some()),
        ("--she-clip", a.she_clip.is_some()),
        ("--collections", a.collections.is_some()),
        ("--memoize", a.memoize),
        ("--eps-perm", a.eps_perm.is_some()),
        ("--permanent", a.permanent),
        ("--days", a.days.is_some()),
        ("--change-rate", a.change_rate.is_some()),
    ];
    for (flag, given) in unused {
        if given {
            bail!(
                "{flag} does not apply {several}: the attributes and their domains come from --dataset"
            );
        }
    }
    if a.runs == 0 {
        bail!("--runs 0: at least one run is needed");
    }
    let table = match &a.dataset {
        Some(DatasetArg::Adult) => Table::adult().clone(),
        Some(DatasetArg::AcsEmployment) => Table::acs_employment().clone(),
        Some(DatasetArg::Csv(path)) => {
            let context = || format!("--dataset {}", path.display());
            let text = std::fs::read_to_string(path).with_context(context)?;
            Table::from_csv_labels(&text).with_context(context)?
        }
        Some(DatasetArg::AdultAge) => bail!(
            "--dataset adult-age is one attribute; {several} use adult, acs-employment or FILE.csv"
        ),
        None => bail!("--solution needs --dataset adult|acs-employment|FILE.csv"),
    };
    let table = match &a.attributes_of {
        None => table,
        Some(names) => {
            let picked = names
                .iter()
                .map(|name| {
                    table.index_of(name.trim()).with_context(|| {
                        format!(
                            "--attributes-of {}: --dataset {} has no such attribute (it has {})",
                            name.trim(),
                            a.dataset.as_ref().map(DatasetArg::name).unwrap_or_default(),
                            table.names().join(", ")
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            table
                .select(&picked)
                .with_context(|| format!("--attributes-of {}", names.join(",")))?
        }
    };
    // Each run keeps two numbers per attribute and two for the whole report.
    memory::check("--runs", a.runs, 16 * (table.dimensions() as u64 + 1))?;
    let priors = match (solution, &a.prior, a.prior_from_data) {
        (Solution::RsRfd, Some(path), _) => {
            Some(multidim::read_priors(path, table.domain_sizes())?)
        }
        (Solution::RsRfd, None, true) => {
            Some(Priors::new(table.marginals()).context("--prior-from-data")?)
        }
        (Solution::RsRfd, None, false) => bail!(
            "--solution rsrfd draws its fakes from priors: add --prior FILE or --prior-from-data"
        ),
        (_, Some(_), _) => bail!("--prior: only --solution rsrfd draws fakes from priors"),
        (_, None, true) => {
            bail!("--prior-from-data: only --solution rsrfd draws fakes from priors")
        }
        (_, None, false) => None,
    };
    let spec = multidim::client(&a.protocol, solution, table.domain_sizes(), priors)?;
    let measured = ldp_core::dispatch_multidim!(&spec, m => {
        multidim_simulate::measure(&m, &table, a.runs, a.seed)?
    })?;
    let columns = [
        "attribute",
        "k",
        "eps_report",
        "param",
        "mse",
        "mse_se",
        "asr",
        "asr_se",
        "joint_asr",
        "joint_asr_se",
        "inference",
        "inference_se",
        "inference_baseline",
    ];
    let d = table.dimensions();
    let rows: Vec<Vec<Value>> = (0..d)
        .map(|j| {
            let s = &spec.specs()[j];
            let inference = measured.inference.as_ref();
            vec![
                Value::from(table.names()[j].as_str()),
                Value::Int(u64::from(s.k().get())),
                Value::Num(s.eps().get()),
                Value::params(&s.params()),
                Value::Num(measured.mse[j].mean()),
                measured.mse[j].se().into(),
                Value::Num(measured.asr[j].mean()),
                measured.asr[j].se().into(),
                Value::Num(measured.joint.mean()),
                measured.joint.se().into(),
                inference.map(multidim_simulate::Runs::mean).into(),
                inference.and_then(multidim_simulate::Runs::se).into(),
                inference.map(|_| 1.0 / d as f64).into(),
            ]
        })
        .collect();
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)
}
