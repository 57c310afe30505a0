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
    #[arg(long, help = format!("Protocol: {}", Protocol::names()))]
    pub(crate) protocol: String,
    /// Domain size (items are 0..k-1).
    // Required, except by the commands that take several attributes instead (they relax
    // it with `mut_arg`).
    #[arg(long, required = true)]
    pub(crate) k: Option<u64>,
    /// Privacy budget epsilon.
    #[arg(long)]
    pub(crate) eps: f64,
    /// The family parameters instead of the preset or tuning: a number for a family with
    /// one (omega for ss and ass, p for aue, g for alh, theta for the and athe, blocks for
    /// hr), or name=value pairs for any (`h=256,m=1024`; the ones left out keep the
    /// preset's values).
    #[arg(long)]
    pub(crate) param: Option<ParamValues>,
    /// How an adaptive protocol is tuned.
    #[command(flatten)]
    pub(crate) tuning: RequestArgs<Tuning>,
}

impl ProtocolArgs {
    /// `--k`, which a command of one attribute requires.
    pub(crate) fn k(&self) -> Result<u64> {
        self.k
            .context("--k is required (or --attributes K1,K2,... for several attributes)")
    }

    /// The instance; prints how an adaptive protocol was tuned on stderr.
    pub(crate) fn resolve(&self) -> Result<Instance> {
        let request = self.tuning.request;
        let instance = resolve(
            parse_protocol(&self.protocol)?,
            domain(self.k()?)?,
            budget(self.eps)?,
            self.param.as_ref(),
            request,
        )?;
        if let Some(note) = instance.tuning_note() {
            note!("ldp: {note}");
        }
        Ok(instance)
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
