//! `ldp perturb`.

use std::io::{BufWriter, Write};

use anyhow::Result;
use clap::Args;
use ldp_core::Mechanism;
use rand::Rng;

use super::ProtocolArgs;
use super::reports::{for_each_line, parse_item, rng, spec_of};

#[derive(Debug, Args)]
pub(crate) struct PerturbArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    /// Seed for reproducible output; without it the OS seeds a ChaCha20 generator.
    #[arg(long)]
    seed: Option<u64>,
}

pub(crate) fn run(a: &PerturbArgs) -> Result<()> {
    let spec = spec_of(&a.protocol)?;
    let mut rng = rng(a.seed);
    ldp_core::dispatch!(spec.build()?, m => perturb_stream(&m, &mut *rng))
}

fn perturb_stream<M: Mechanism>(m: &M, rng: &mut dyn Rng) -> Result<()> {
    let k = m.domain_size();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for_each_line(std::io::stdin().lock(), |_, line| {
        let report = m.perturb(parse_item(line, k)?, rng)?;
        serde_json::to_writer(&mut out, &report)?;
        out.write_all(b"\n")?;
        Ok(())
    })
    .map_err(|e| {
        e.context("input rejected; reports above this line are for the preceding items")
    })?;

    out.flush()?;
    Ok(())
}
