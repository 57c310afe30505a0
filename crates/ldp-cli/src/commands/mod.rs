//! The subcommands.

mod aggregate;
mod analyze;
mod attack;
mod perturb;
mod reports;
mod simulate;
mod tune;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use crate::protocol::TuneArgs;

#[derive(Parser)]
#[command(
    name = "ldp",
    version,
    about = "Attack-aware local differential privacy: analyze, tune, perturb, aggregate, attack and simulate"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The protocol instance shared by the single-protocol subcommands.
#[derive(Debug, Clone, Args)]
pub(crate) struct ProtocolArgs {
    /// Protocol: grr, ss, sue, oue, blh, olh, she, the, ass, aue, alh, athe.
    #[arg(long)]
    pub(crate) protocol: String,
    /// Domain size (items are 0..k-1).
    #[arg(long)]
    pub(crate) k: u64,
    /// Privacy budget epsilon.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) eps: f64,
    /// The family parameter, overriding preset and tuning: omega (ss), p (ue), g (lh), theta (the).
    #[arg(long)]
    pub(crate) param: Option<f64>,
    #[command(flatten)]
    pub(crate) tuning: TuneArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Closed-form ASR, MSE and EPG for protocols x domain sizes x budgets.
    Analyze(analyze::AnalyzeArgs),
    /// Tune an adaptive protocol (ass, aue, alh, athe) and print the chosen parameter.
    Tune(tune::TuneCmd),
    /// Print the (ASR, MSE) Pareto frontier of an adaptive protocol's parameter.
    Frontier(tune::TuneCmd),
    /// Perturb items read from stdin (one per line) into JSON reports (one per line).
    Perturb(perturb::PerturbArgs),
    /// Aggregate JSON reports from stdin and print the frequency estimate of every item.
    Aggregate(aggregate::AggregateArgs),
    /// Run the paper's reconstruction attack on JSON reports from stdin.
    Attack(attack::AttackArgs),
    /// Simulate users, attacks and estimation, and compare with the closed forms.
    Simulate(simulate::SimulateArgs),
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
    }
}
