//! `ldp perturb`.

use std::io::Write;

use anyhow::{Context, Result};
use clap::Args;
use ldp_core::simulation::Role;
use ldp_core::{Mechanism, dispatch};
use ldp_jsonl::{Digits, JsonReport};
use rand::Rng;

use super::ProtocolArgs;
use crate::lines::{ITEM_LINE_CAP, LineChunks, parse_item};
use crate::protocol::build;
use crate::streams::{Batches, Source, chunk_lines, with_source};

#[derive(Debug, Args)]
pub(crate) struct PerturbArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    /// Seed for reproducible output (the reports of ldp-core's `perturb_all` with this
    /// seed); without it ChaCha20 is keyed by the operating system.
    #[arg(long)]
    seed: Option<u64>,
}

pub(crate) fn run(a: &PerturbArgs) -> Result<()> {
    let spec = a.protocol.resolve()?.spec;
    let source = Source::new(a.seed, Role::Genuine)?;
    let line_bytes = ldp_jsonl::max_line_len(&spec) / 4;
    dispatch!(build(&spec)?, m => with_source!(source, make => perturb_stream(&m, &make, line_bytes)))
}

/// Reads items as they come and writes each chunk's reports as soon as they are made,
/// so that interactive streams stay live. On a bad line, the reports above it are
/// written and the error names the line.
fn perturb_stream<M, R>(m: &M, make: &(impl Fn(u64) -> R + Sync), line_bytes: usize) -> Result<()>
where
    M: Mechanism,
    M::Report: JsonReport,
    R: Rng + Send,
{
    let k = m.domain_size().get();
    let digits = Digits::for_domain(k);
    let mut input = LineChunks::new(std::io::stdin().lock(), ITEM_LINE_CAP);
    let mut out = std::io::stdout().lock();
    let mut batches = Batches::new();
    let max_lines = chunk_lines(line_bytes);
    while let Some(chunk) = input.next_chunk(max_lines)? {
        let mut items = Vec::with_capacity(chunk.len());
        let mut failure = None;
        for &(number, line) in &chunk {
            match parse_item(line, k) {
                Ok(x) => items.push(x),
                Err(e) => {
                    failure = Some(e.context(format!("line {number}")).context(
                        "input rejected; the reports written are for the lines above this one",
                    ));
                    break;
                }
            }
        }
        let written = batches.run(&items, make, &|rng: &mut R, items: &[u32]| {
            let mut buf = Vec::with_capacity(items.len() * line_bytes.min(1 << 16));
            for &x in items {
                let report = m.perturb(x, rng).expect("items are checked against k");
                report.write_json_with(&digits, &mut buf);
                buf.push(b'\n');
            }
            buf
        });
        for buf in written {
            out.write_all(&buf).context("writing reports")?;
        }
        out.flush().context("writing reports")?;
        if let Some(e) = failure {
            return Err(e);
        }
    }
    Ok(())
}
