//! The subcommands.

mod aggregate;
mod analyze;
mod attack;
mod audit;
mod change;
mod ledger;
mod longitudinal;
mod multidim;
mod multidim_analyze;
mod multidim_audit;
mod multidim_simulate;
mod perturb;
mod shuffle;
mod simulate;
mod tune;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

use crate::protocol::{RequestArgs, Tuning, budget, domain, parse_protocol, resolve};
use ldp_core::Protocol;
use ldp_optimize::{Instance, ParamValues};

#[derive(Parser)]
#[command(
    name = "ldp",
    version,
    about = "Attack-aware local differential privacy: analyze, tune, perturb, aggregate, attack, simulate and audit"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The protocol instance shared by the single-protocol subcommands.
#[derive(Debug, Clone, Args)]
pub(crate) struct ProtocolArgs {
    // Its help names every protocol of the registry (no final period, as clap prints a
    // doc comment).
    #[arg(long, required_unless_present = "spec", help = format!("Protocol: {}", Protocol::names()))]
    pub(crate) protocol: Option<String>,
    /// Domain size (items are 0..k-1).
    // Required, except by the commands that take several attributes instead (they relax
    // it with `mut_arg`), and beside --spec.
    #[arg(long, required_unless_present = "spec")]
    pub(crate) k: Option<u64>,
    /// Privacy budget epsilon.
    #[arg(long, required_unless_present = "spec")]
    pub(crate) eps: Option<f64>,
    /// The family parameters instead of the preset or tuning: a number for a family with
    /// one (omega for ss and ass, p for aue, g for alh, theta for the and athe, blocks for
    /// hr), or name=value pairs for any (`h=256,m=1024`; the ones left out keep the
    /// preset's values).
    #[arg(long)]
    pub(crate) param: Option<ParamValues>,
    /// The instance as a spec file (JSON, as the page's spec.json, the browser module's
    /// `Client.spec` and the Python package's `Mechanism.spec` write it), instead of
    /// --protocol, --k, --eps and --param (perturb, aggregate, attack, and simulate of
    /// one attribute).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["protocol", "k", "eps", "param"])]
    pub(crate) spec: Option<std::path::PathBuf>,
    /// How an adaptive protocol is tuned.
    #[command(flatten)]
    pub(crate) tuning: RequestArgs<Tuning>,
}

impl ProtocolArgs {
    /// `--protocol`, which every command but those given --spec requires.
    pub(crate) fn name(&self) -> Result<&str> {
        match &self.protocol {
            Some(name) => Ok(name),
            None => self.without_spec().map(|()| ""),
        }
    }

    /// `--k`, which a command of one attribute requires.
    pub(crate) fn k(&self) -> Result<u64> {
        self.without_spec()?;
        self.k
            .context("--k is required (or --attributes K1,K2,... for several attributes)")
    }

    /// `--eps`.
    pub(crate) fn eps(&self) -> Result<f64> {
        self.without_spec()?;
        self.eps.context("--eps is required")
    }

    /// Refuses --spec where the command reads the protocol by name.
    fn without_spec(&self) -> Result<()> {
        match &self.spec {
            Some(path) => anyhow::bail!(
                "--spec {}: this use takes --protocol, --k and --eps (a spec file is one attribute's instance, for perturb, aggregate, attack and simulate)",
                path.display()
            ),
            None => Ok(()),
        }
    }

    /// The instance; prints how an adaptive protocol was tuned on stderr.
    pub(crate) fn resolve(&self) -> Result<Instance> {
        let request = self.tuning.request;
        let instance = resolve(
            parse_protocol(self.name()?)?,
            domain(self.k()?)?,
            budget(self.eps()?)?,
            self.param.as_ref(),
            request,
        )?;
        if let Some(note) = instance.tuning_note() {
            note!("ldp: {note}");
        }
        Ok(instance)
    }

    /// The protocol's name as outputs show it: `--protocol`'s, or the family of the spec
    /// read from --spec (`threshold_histogram`, the spec's own name for it).
    pub(crate) fn label(&self, spec: &ldp_core::Spec) -> String {
        if let Some(p) = &self.protocol {
            return parse_protocol(p).map_or_else(|_| p.trim().to_owned(), |p| p.name().to_owned());
        }
        // The family is a name, or an object keyed by the name holding its parameters.
        match serde_json::to_value(spec).map(|v| v["family"].clone()) {
            Ok(serde_json::Value::String(name)) => name,
            Ok(serde_json::Value::Object(family)) => {
                family.keys().next().cloned().unwrap_or_default()
            }
            _ => String::new(),
        }
    }

    /// The instance's spec: read from --spec FILE, or resolved from the flags.
    pub(crate) fn spec(&self) -> Result<ldp_core::Spec> {
        let Some(path) = &self.spec else {
            return Ok(self.resolve()?.spec);
        };
        // The spec is the instance: nothing is left to tune.
        if let Some(knob) = self.tuning.request.given() {
            anyhow::bail!(
                "--{}: --spec {} is the whole instance; tuning flags do not apply",
                knob.name().replace('_', "-"),
                path.display()
            );
        }
        let context = || format!("--spec {}", path.display());
        let text = std::fs::read_to_string(path).with_context(context)?;
        serde_json::from_str(&text).with_context(context)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Closed-form ASR, MSE, EPG and costs for protocols x domain sizes x budgets.
    #[command(allow_negative_numbers = true)]
    Analyze(analyze::AnalyzeArgs),
    // Tune an adaptive protocol, or choose the best of all; the about names the adaptive
    // protocols of the registry.
    #[command(
        allow_negative_numbers = true,
        about = format!(
            "Tune an adaptive protocol ({}), or choose the best protocol of all under bounds \
             (--protocol all)",
            Protocol::list(&Protocol::ADAPTIVE)
        )
    )]
    Tune(tune::TuneCmd),
    /// Print the Pareto frontier of an adaptive protocol's parameter.
    #[command(allow_negative_numbers = true)]
    Frontier(tune::FrontierCmd),
    /// Perturb items read from stdin (one per line) into JSON reports (one per line).
    #[command(allow_negative_numbers = true)]
    Perturb(perturb::PerturbArgs),
    /// Aggregate JSON reports from stdin and print the frequency estimate of every item.
    #[command(allow_negative_numbers = true)]
    Aggregate(aggregate::AggregateArgs),
    /// Run the reconstruction attack on JSON reports from stdin.
    #[command(allow_negative_numbers = true)]
    Attack(attack::AttackArgs),
    /// Simulate users, attacks and estimation, and compare with the closed forms.
    #[command(allow_negative_numbers = true)]
    Simulate(simulate::SimulateArgs),
    /// Measure the privacy a client really gives: exactly (--exact) or by a
    /// distinguishing test on its reports, for a protocol of this toolkit or any external
    /// client (--command).
    #[command(allow_negative_numbers = true)]
    Audit(audit::AuditArgs),
    /// The central (eps, delta) of n shuffled eps0-LDP reports, or the largest eps0 that a
    /// central target allows (privacy amplification by shuffling).
    #[command(allow_negative_numbers = true)]
    Shuffle(shuffle::ShuffleArgs),
    /// What each user spent over surveys (basic and advanced composition, memoized
    /// surveys charged once), and the users over a total or daily limit.
    #[command(allow_negative_numbers = true)]
    Ledger(ledger::LedgerArgs),
}

pub(crate) fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Analyze(a) => analyze::run(&a),
        Command::Tune(a) => tune::run_tune(&a),
        Command::Frontier(a) => tune::run_frontier(&a),
        Command::Perturb(a) => perturb::run(&a),
        Command::Aggregate(a) => aggregate::run(&a),
        Command::Attack(a) => attack::run(&a),
        Command::Simulate(a) => simulate::run(&a),
        Command::Audit(a) => audit::run(&a),
        Command::Shuffle(a) => shuffle::run(&a),
        Command::Ledger(a) => ledger::run(&a),
    }
}
