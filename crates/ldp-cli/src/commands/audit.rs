//! `ldp audit`: the privacy a client really gives, exactly or by a distinguishing test.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use ldp_audit::{
    Audit, AuditConfig, ClientAudit, CommandClient, Pairs, Shape, Statistic, audit_client,
    audit_linked, audit_mechanism_with_progress, exact_audit, exact_linked,
};
use ldp_core::DomainSize;
use ldp_optimize::{ParamValues, TuneRequest};

use super::multidim::AttributesArgs;
use super::{ProtocolArgs, longitudinal, multidim_audit};
use crate::output::{Format, Value, number, print};
use crate::protocol::{budget, domain, parse_protocol, resolve};

#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    /// The protocol of this toolkit to audit (the names of `ldp perturb`).
    #[arg(long, required_unless_present = "command", conflicts_with = "command")]
    protocol: Option<String>,
    /// Audit an external client instead: a command line (run by `sh -c`) that reads one
    /// item per line and writes one report per line; see --shape.
    #[arg(long, value_name = "CMD")]
    command: Option<String>,
    /// The external client's report shape: grr (an item: `3` or `{"y": 3}`), set (k 0/1
    /// digits, or `{"subset": [..]}` / `{"ones": [..]}`), lh (`seed,y` or `{"seed": s,
    /// "y": v}`, hashed by XXH32 of the decimal item mod --g), vector (k numbers).
    #[arg(long, value_enum, requires = "command")]
    shape: Option<ShapeArg>,
    /// The hash range of an lh client.
    #[arg(long)]
    g: Option<u32>,
    /// Domain size (items are 0..k-1).
    #[arg(long, required_unless_present = "attributes")]
    k: Option<u64>,
    /// Several attributes per user (with --protocol): the client of each solution is
    /// audited for a change of every attribute and of one (see docs/audit.md).
    #[command(flatten)]
    attributes: AttributesArgs,
    /// The budget: the protocol's, or the one the external client claims (optional: it
    /// only decides `flagged`).
    #[arg(long)]
    eps: Option<f64>,
    /// The memo's budget, for the memoized protocols l-grr, l-sue, l-oue, l-osue, l-soue
    /// and l-adp, whose --eps is the budget of one report.
    #[arg(long = "eps-perm", value_name = "E")]
    eps_perm: Option<f64>,
    /// Memoized protocols: audit T linked reports of one value (default 1), a row each.
    #[arg(long, value_delimiter = ',', value_name = "T")]
    collections: Vec<u32>,
    /// The family parameters instead of the preset (see `ldp perturb --help`).
    #[arg(long)]
    param: Option<ParamValues>,
    /// The exact audit instead: the worst likelihood ratio over all outputs and input
    /// pairs, from the protocol's exact probabilities (memoized protocols: over every
    /// sequence of T reports).
    #[arg(long, conflicts_with = "command")]
    exact: bool,
    /// Reports per input (default 1000000).
    #[arg(long)]
    trials: Option<u64>,
    /// The bounds hold together with confidence 1 - alpha (default 0.01).
    #[arg(long)]
    alpha: Option<f64>,
    /// Input pairs: `extremes` (0 and k-1, the default), `cycle` (every i and i+1 mod k:
    /// catches a client that mishandles one item), or a list such as `3:7,0:1`.
    #[arg(long)]
    pairs: Option<String>,
    /// Statistics, comma-separated: lr (the likelihood-ratio event), guess (LDP-Auditor's
    /// attack guess), first (a set report's first-listed item; external clients).
    /// Default: lr,guess, and first for a set client.
    #[arg(long, value_delimiter = ',')]
    statistic: Vec<String>,
    /// Seed of the protocol's and the guessing attacker's randomness (default 0).
    #[arg(long)]
    seed: Option<u64>,
    /// Items per run of the external client (default 16384).
    #[arg(long)]
    batch: Option<u64>,
    /// Seconds one run of the external client may take (default 300).
    #[arg(long)]
    timeout: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ShapeArg {
    Grr,
    Set,
    Lh,
    Vector,
}

const COLUMNS: [&str; 14] = [
    "client",
    "k",
    "eps",
    "statistic",
    "eps_measured",
    "v1",
    "v2",
    "hits_v1",
    "hits_v2",
    "tpr_low",
    "fpr_high",
    "trials",
    "alpha",
    "flagged",
];

pub(crate) fn run(a: &AuditArgs) -> Result<()> {
    if a.protocol.is_some() {
        refuse_flags(
            &[
                (a.batch.is_some(), "--batch"),
                (a.timeout.is_some(), "--timeout"),
                (a.g.is_some(), "--g"),
            ],
            "only for an external client (--command)",
        )?;
    }
    if a.attributes.attributes.is_some() {
        return run_multidim(a);
    }
    let k =
        domain(a.k.context("--k is required (or --attributes K1,K2,... for several attributes)")?)?;
    if a.exact {
        refuse_flags(
            &[
                (a.trials.is_some(), "--trials"),
                (a.alpha.is_some(), "--alpha"),
                (a.pairs.is_some(), "--pairs"),
                (!a.statistic.is_empty(), "--statistic"),
                (a.seed.is_some(), "--seed"),
            ],
            "only for the statistical audit (the exact one draws no reports)",
        )?;
    }
    let mut out = std::io::stdout().lock();
    if let Some(protocol) = a.protocol.as_ref().filter(|p| longitudinal::is_memoized(p)) {
        return run_linked(a, protocol, k);
    }
    if a.eps_perm.is_some() || !a.collections.is_empty() {
        bail!("--eps-perm and --collections go with the memoized protocols (l-grr, ..., l-adp)");
    }
    if let Some(protocol) = &a.protocol {
        let eps = a.eps.context("--eps: the protocol's budget is needed")?;
        let instance = resolve(
            parse_protocol(protocol)?,
            k,
            budget(eps)?,
            a.param.as_ref(),
            TuneRequest::default(),
        )?;
        let mech = instance.spec.build()?;
        let client = instance.protocol.name().to_string();
        if a.exact {
            let exact = exact_audit(&mech)?;
            let row = vec![
                Value::Text(client),
                Value::Int(k.get().into()),
                Value::number(eps),
                "exact".into(),
                Value::Num(exact.eps_exact),
                Value::Int(exact.more_likely.into()),
                Value::Int(exact.less_likely.into()),
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Text(exact.flagged().to_string()),
            ];
            note!(
                "ldp: worst output {} ({} outputs examined, {:?})",
                exact.worst_output,
                exact.outputs,
                exact.coverage
            );
            return print(&mut out, a.format, &COLUMNS, &[row]);
        }
        let config = config(a, k.get(), false)?;
        let bar = progress(a, &config);
        let audit = audit_mechanism_with_progress(&mech, &config, &|n| bar.inc(n))?;
        bar.finish_and_clear();
        return print(
            &mut out,
            a.format,
            &COLUMNS,
            &audit_rows(&client, k.get(), &audit),
        );
    }
    let command = a
        .command
        .clone()
        .expect("clap requires --protocol or --command");
    let shape = match a
        .shape
        .context("--shape: the external client's report shape is needed")?
    {
        ShapeArg::Grr => Shape::Value,
        ShapeArg::Set => Shape::Set,
        ShapeArg::Vector => Shape::Vector,
        ShapeArg::Lh => Shape::Hashed {
            g: a.g.context("--g: an lh client's hash range is needed")?,
        },
    };
    if a.g.is_some() && !matches!(shape, Shape::Hashed { .. }) {
        bail!("--g: only an lh client has a hash range");
    }
    if a.param.is_some() {
        bail!("--param: an external client's parameters are its own");
    }
    let timeout = a.timeout.unwrap_or(300.0);
    let timeout = Duration::try_from_secs_f64(timeout)
        .ok()
        .filter(|t| !t.is_zero())
        .with_context(|| {
            format!(
                "--timeout {}: must be a positive number of seconds",
                number(timeout)
            )
        })?;
    if let Some(eps) = a.eps {
        budget(eps)?;
    }
    let config = config(a, k.get(), shape == Shape::Set)?;
    let client = CommandClient {
        command: command.clone(),
        shape,
        k: k.get(),
        timeout,
    };
    let setup = ClientAudit {
        config,
        shape,
        k: k.get(),
        claimed_eps: a.eps,
        batch: a.batch.unwrap_or(16_384),
    };
    #[cfg(unix)]
    stop_clients_on_interrupt()?;
    let bar = progress(a, &setup.config);
    let audit = audit_client(&client, &setup, &|n| bar.inc(n))?;
    bar.finish_and_clear();
    print(
        &mut out,
        a.format,
        &COLUMNS,
        &audit_rows(&command, k.get(), &audit),
    )
}

/// Ctrl-C, SIGTERM and SIGHUP stop the external clients (each in a process group of its
/// own, which the terminal's Ctrl-C does not reach) before the tool exits as the signal
/// would have ended it.
#[cfg(unix)]
fn stop_clients_on_interrupt() -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("could not watch for interrupts")?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            ldp_audit::stop_command_clients();
            std::process::exit(128 + signal);
        }
    });
    Ok(())
}

/// A client of several attributes: the exact audit or the test.
fn run_multidim(a: &AuditArgs) -> Result<()> {
    multidim_audit::refuse(
        a.command.is_some(),
        a.pairs.is_some(),
        a.eps_perm.is_some() || !a.collections.is_empty(),
    )?;
    let protocol = ProtocolArgs {
        protocol: Some(
            a.protocol
                .clone()
                .context("--protocol: the protocol of every attribute")?,
        ),
        k: None,
        eps: Some(a.eps.context("--eps: the user's budget is needed")?),
        param: a.param.clone(),
        spec: None,
        tuning: Default::default(),
    };
    let spec = a
        .attributes
        .spec(&protocol)?
        .context("--attributes needs --solution")?;
    let config = if a.exact {
        None
    } else {
        Some(config(a, 2, false)?)
    };
    multidim_audit::run(&spec, protocol.name()?, config.as_ref(), bar, a.format)
}

/// An error naming every given flag that would do nothing here.
fn refuse_flags(flags: &[(bool, &str)], why: &str) -> Result<()> {
    let given: Vec<&str> = flags.iter().filter(|f| f.0).map(|f| f.1).collect();
    if given.is_empty() {
        Ok(())
    } else {
        bail!("{}: {why}", given.join(", "))
    }
}

/// A memoized protocol over t linked reports: the exact budget or the test, per t.
fn run_linked(a: &AuditArgs, protocol: &str, k: DomainSize) -> Result<()> {
    let p = longitudinal::parse_memoized(std::slice::from_ref(&protocol.to_string()))?[0];
    let eps = a.eps.context("--eps: the budget of one report is needed")?;
    if a.param.is_some() {
        bail!("--param: the memoized protocols have no family parameter");
    }
    let collections = if a.collections.is_empty() {
        vec![1]
    } else {
        longitudinal::check_collections("--collections", &a.collections)?;
        a.collections.clone()
    };
    let l = longitudinal::build(p, k, longitudinal::eps_perm(a.eps_perm)?, budget(eps)?)?;
    let client = l.protocol().name().to_string();
    let mut rows = Vec::new();
    if a.exact {
        let exact = exact_linked(&l, &collections)?;
        for &(t, eps_t) in &exact.budgets {
            rows.push(vec![
                Value::Text(client.clone()),
                Value::Int(k.get().into()),
                Value::number(eps),
                Value::Int(t.into()),
                "exact".into(),
                Value::Num(eps_t),
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Empty,
                Value::Text(exact.flagged(eps_t).to_string()),
            ]);
        }
    } else {
        note!(
            "ldp: eps is one report's budget; a test is flagged when it proves more than the exact budget of t reports"
        );
        let config = config(a, k.get(), false)?;
        for &t in &collections {
            let audit = audit_linked(&l, t, &config)?;
            for mut row in audit_rows(&client, k.get(), &audit) {
                row[2] = Value::number(eps);
                row.insert(3, Value::Int(t.into()));
                rows.push(row);
            }
        }
    }
    let mut columns = COLUMNS.to_vec();
    columns.insert(3, "collections");
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)
}

fn config(a: &AuditArgs, k: u32, set_client: bool) -> Result<AuditConfig> {
    let statistics = if a.statistic.is_empty() {
        let mut s = Statistic::MECHANISM.to_vec();
        if set_client {
            s.push(Statistic::FirstListed);
        }
        s
    } else {
        a.statistic
            .iter()
            .map(|s| s.trim().parse::<Statistic>())
            .collect::<Result<Vec<_>, _>>()
            .context("--statistic")?
    };
    let pairs = match a.pairs.as_deref().unwrap_or("extremes").trim() {
        "extremes" => Pairs::Extremes,
        "cycle" => Pairs::Cycle,
        list => Pairs::List(
            list.split(',')
                .map(|p| {
                    let (v1, v2) = p.split_once(':')?;
                    Some((v1.trim().parse().ok()?, v2.trim().parse().ok()?))
                })
                .collect::<Option<Vec<(u32, u32)>>>()
                .with_context(|| {
                    format!("--pairs {list}: expected extremes, cycle or pairs such as 3:7,0:1")
                })?,
        ),
    };
    let config = AuditConfig {
        trials: a.trials.unwrap_or(1_000_000),
        alpha: a.alpha.unwrap_or(0.01),
        pairs,
        statistics,
        seed: a.seed.unwrap_or(0),
    };
    // Every setting checked before any report is drawn.
    ldp_audit::Plan::new(k, &config).context("the audit's settings")?;
    Ok(config)
}

fn progress(a: &AuditArgs, config: &AuditConfig) -> ProgressBar {
    let inputs = ldp_audit::Plan::new(a.k.unwrap_or(2) as u32, config)
        .map_or(2, |p| p.inputs().len() as u64);
    bar(inputs.saturating_mul(config.trials))
}

/// A progress bar of `total` reports.
fn bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {pos}/{len} reports ({per_sec}, {eta} left)")
            .expect("a valid template"),
    );
    bar
}

fn audit_rows(client: &str, k: u32, audit: &Audit) -> Vec<Vec<Value>> {
    audit
        .statistics
        .iter()
        .map(|s| {
            let worst = s.worst_pair();
            vec![
                Value::Text(client.to_string()),
                Value::Int(k.into()),
                audit.claimed_eps.into(),
                s.statistic.name().into(),
                Value::Num(s.eps_emp),
                Value::Int(worst.v1.into()),
                Value::Int(worst.v2.into()),
                Value::Int(worst.hits_v1),
                Value::Int(worst.hits_v2),
                Value::Num(worst.tpr_low),
                Value::Num(worst.fpr_high),
                Value::Int(audit.trials),
                Value::Num(audit.alpha),
                match audit.claimed_eps {
                    Some(eps) => Value::Text((s.eps_emp > eps).to_string()),
                    None => Value::Empty,
                },
            ]
        })
        .collect()
}
