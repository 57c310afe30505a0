//! `ldp attack`.

use std::io::{BufWriter, Write};

use anyhow::Result;
use clap::Args;
use ldp_attack::Adversary;
use rand::Rng;

use super::ProtocolArgs;
use super::reports::{for_each_line, parse_report, rng, spec_of};

#[derive(Debug, Args)]
pub(crate) struct AttackArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    /// Seed of the attacker's tie-breaking; without it the OS seeds it.
    #[arg(long)]
    seed: Option<u64>,
}

pub(crate) fn run(a: &AttackArgs) -> Result<()> {
    let spec = spec_of(&a.protocol)?;
    let mut rng = rng(a.seed);
    ldp_core::dispatch!(spec.build()?, m => attack_stream(&m, &mut *rng))
}

/// One guess per report, streamed. A bad line stops the stream with an error naming it;
/// the guesses already written are for the lines before it.
fn attack_stream<M: Adversary>(m: &M, rng: &mut dyn Rng) -> Result<()> {
    let mut out = BufWriter::new(std::io::stdout().lock());
    for_each_line(std::io::stdin().lock(), |_, line| {
        let report = parse_report(m, line)?;
        writeln!(out, "{}", m.guess(&report, rng))?;
        Ok(())
    })
    .map_err(|e| {
        e.context("report stream rejected; guesses above this line are for the preceding reports")
    })?;
    out.flush()?;
    Ok(())
}
