//! `ldp attack`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use clap::Args;
use ldp_attack::Prior;
use ldp_attack::map::map_guess;
use ldp_core::simulation::{BatchStreams, Role};
use ldp_core::{AttackSurface, dispatch, with_batch_rng};
use ldp_jsonl::JsonReport;
use ldp_jsonl::lines::LineChunks;
use rand::Rng;

use super::ProtocolArgs;
use crate::lines::quote;
use crate::protocol::build;
use crate::streams::{Batches, chunk_lines};

#[derive(Debug, Args)]
pub(crate) struct AttackArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    /// Seed of the attacker's tie-breaking; without it the OS seeds it.
    #[arg(long)]
    seed: Option<u64>,
    /// The MAP attack with this prior: a file of k non-negative weights, one per line
    /// (item 0 first). Without it, the paper's attack (a uniform prior).
    #[arg(long, value_name = "FILE")]
    prior: Option<PathBuf>,
}

/// A prior from a file of one weight per line.
pub(crate) fn read_prior(path: &Path, k: u32) -> Result<Prior> {
    let context = || format!("--prior {}", path.display());
    let file = std::fs::File::open(path).with_context(context)?;
    let mut input = LineChunks::new(std::io::BufReader::new(file), 256);
    let mut weights = Vec::new();
    while let Some(chunk) = input.next_chunk(1 << 16).with_context(context)? {
        for (number, line) in chunk {
            let text = std::str::from_utf8(line).unwrap_or("").trim();
            let w: f64 = text
                .parse()
                .map_err(|_| anyhow!("line {number}: {} is not a weight", quote(line)))
                .with_context(context)?;
            weights.push(w);
        }
    }
    let prior = Prior::new(weights).with_context(context)?;
    prior.check_len(k as usize).with_context(context)?;
    Ok(prior)
}

pub(crate) fn run(a: &AttackArgs) -> Result<()> {
    let spec = a.protocol.spec()?;
    let prior = match &a.prior {
        Some(path) => Some(read_prior(path, spec.k().get())?),
        None => None,
    };
    let streams = BatchStreams::new(a.seed, Role::Attacker)?;
    let cap = ldp_jsonl::max_line_len(&spec);
    dispatch!(build(&spec)?, m => with_batch_rng!(streams, make => attack_stream(&m, &make, cap, prior.as_ref())))
}

/// One guess per report, written chunk by chunk. A bad line stops the stream with an
/// error naming it; the guesses already written are for the lines before it.
fn attack_stream<M, R>(
    m: &M,
    make: &(impl Fn(u64) -> R + Sync),
    cap: usize,
    prior: Option<&Prior>,
) -> Result<()>
where
    M: AttackSurface,
    M::Report: JsonReport + Sync,
    R: Rng + Send,
{
    let mut input = LineChunks::new(std::io::stdin().lock(), cap);
    let mut out = std::io::stdout().lock();
    let mut batches = Batches::new();
    let rejected = "report stream rejected; the guesses written are for the lines above this one";
    while let Some(chunk) = input.next_chunk(chunk_lines(cap / 4))? {
        // Parse in order so that the first bad line is the one named.
        let mut reports = Vec::with_capacity(chunk.len());
        let mut failure = None;
        for &(number, line) in &chunk {
            let parsed = M::Report::parse_tagged(line)
                .map(|(_, r)| r)
                .map_err(|e| anyhow!("malformed report: {e}"))
                .and_then(|r| Ok(m.validate(&r).map(|()| r)?));
            match parsed {
                Ok(r) => reports.push(r),
                Err(e) => {
                    failure = Some(e.context(format!("line {number}")).context(rejected));
                    break;
                }
            }
        }
        let written = batches.run(&reports, make, &|rng: &mut R, reports: &[M::Report]| {
            let (mut buf, mut scratch) = (Vec::new(), Vec::new());
            let mut digits = itoa::Buffer::new();
            for r in reports {
                let guess = match prior {
                    None => m.guess(r, rng),
                    Some(p) => map_guess(m, r, p, &mut scratch, rng),
                };
                buf.extend_from_slice(digits.format(guess).as_bytes());
                buf.push(b'\n');
            }
            buf
        });
        for buf in written {
            out.write_all(&buf).context("writing guesses")?;
        }
        out.flush().context("writing guesses")?;
        if let Some(e) = failure {
            return Err(e);
        }
    }
    Ok(())
}
