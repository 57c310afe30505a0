//! `ldp aggregate`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use ldp_arrow::{ArrowReports, ParquetReports};
use ldp_core::simulation::USERS_PER_STREAM;
use ldp_core::{Aggregator, Clip, Estimator, FamilyMechanism, dispatch};
use ldp_jsonl::JsonReport;
use rayon::prelude::*;

use super::ProtocolArgs;
use crate::lines::{Line, ReadAhead};
use crate::output::number;
use crate::protocol::{build, knob};
use crate::streams::{CHUNK_LINES, chunk_lines};

#[derive(Debug, Args)]
pub(crate) struct AggregateArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    /// Post-processing of the estimate: unbiased (may be negative), clip (clip negatives,
    /// renormalize: multi-freq-ldpy's MI estimator), norm-sub, or simplex (projection onto
    /// the probability simplex).
    #[arg(
        long,
        value_parser = knob::<Estimator>(Estimator::ALL.map(Estimator::name)),
        default_value = "unbiased"
    )]
    estimator: Estimator,
    /// SHE: clip every report coordinate to [-C, C] before summing (default: 1 + 40/eps,
    /// which biases genuine coordinates by under 1e-9 * 2/eps and bounds a fake report's
    /// gain to C per target); `none` sums reports as they are, as the paper does.
    #[arg(long = "she-clip", value_name = "C|none")]
    she_clip: Option<String>,
    /// Read the reports from a Parquet file, or from every .parquet file under a
    /// directory, instead of JSON lines on stdin; each file must record this mechanism.
    #[arg(long, value_name = "PATH")]
    input: Option<PathBuf>,
}

/// The server's clipping from `--she-clip` (default: the recommended bound), refused for
/// a family whose servers do not clip.
pub(crate) fn server_clip(arg: Option<&str>, spec: &ldp_core::Spec) -> Result<Clip> {
    let Some(text) = arg else {
        return Ok(Clip::Recommended);
    };
    let clip: Clip = text
        .parse()
        .with_context(|| format!("--she-clip {}", text.trim()))?;
    clip.check_for(spec.family().family())
        .map_err(|e| anyhow!("--she-clip: {e}"))
}

pub(crate) fn run(a: &AggregateArgs) -> Result<()> {
    let spec = a.protocol.resolve()?.spec;
    let clip = server_clip(a.she_clip.as_deref(), &spec)?;
    let estimator = a.estimator;
    let cap = ldp_jsonl::max_line_len(&spec);
    let estimate = dispatch!(build(&spec)?, m => {
        let total = match &a.input {
            Some(path) => aggregate_parquet(&m, clip, path, &spec)?,
            None => aggregate_stream(&m, clip, cap)?,
        };
        total.estimate(estimator)?
    });
    print_estimate(&estimate)
}

/// Reads the row groups of the files in parallel (memory: one batch per core) and
/// merges them in file order, so SHE's float sums do not depend on the thread count.
fn aggregate_parquet<M>(
    m: &M,
    clip: Clip,
    path: &Path,
    spec: &ldp_core::Spec,
) -> Result<M::Aggregator>
where
    M: FamilyMechanism + ArrowReports,
{
    let reject = "reports rejected, nothing aggregated";
    let files = ParquetReports::open(path, spec).context(reject)?;
    let parts = files.parts().context(reject)?;
    let partials: Vec<Result<M::Aggregator>> = parts
        .par_iter()
        .map(|part| {
            let mut partial = m.server(clip);
            files.for_each_batch_of(part, |column, row| {
                m.aggregate_array(&mut partial, column, row)
            })?;
            Ok(partial)
        })
        .collect();
    let mut total = m.server(clip);
    for partial in partials {
        total.merge(&partial.context(reject)?).context(reject)?;
    }
    if total.count() == 0 {
        bail!("{}: no reports", path.display());
    }
    Ok(total)
}

/// Streams the reports into the aggregator (memory O(k) per core), parsing in parallel;
/// prints only after the whole input was accepted, so a bad line rejects the stream as a
/// whole.
///
/// The input is read ahead on a thread of its own ([`ReadAhead`]); each batch of lines
/// is cut into blocks of [`USERS_PER_STREAM`] by line number, each block summed by one
/// partial aggregator (a block cut by a batch boundary continues in the next batch) and
/// the partials merged in block order. So the first bad line is the one named, and SHE's
/// float sums depend neither on the number of threads nor on how the input was read.
fn aggregate_stream<M>(m: &M, clip: Clip, cap: usize) -> Result<M::Aggregator>
where
    M: FamilyMechanism,
    M::Report: JsonReport,
{
    let reject = "report stream rejected, nothing aggregated";
    let block = |number: u64| (number - 1) / USERS_PER_STREAM as u64;
    let mut total = m.server(clip);
    // The last block of the previous batch, which may continue in this one.
    let mut open: Option<(u64, M::Aggregator)> = None;
    let mut input = ReadAhead::spawn(std::io::stdin(), cap, chunk_lines(cap / 4));
    while let Some(batch) = input.next_batch(BATCH_BYTES, CHUNK_LINES).context(reject)? {
        let lines = batch.lines();
        let groups: Vec<&[Line<'_>]> = lines.chunk_by(|a, b| block(a.0) == block(b.0)).collect();
        let mut seeds: Vec<Option<M::Aggregator>> = groups.iter().map(|_| None).collect();
        if let Some((b, partial)) = open.take() {
            if b == block(groups[0][0].0) {
                seeds[0] = Some(partial);
            } else {
                total.merge(&partial).context(reject)?;
            }
        }
        let partials: Vec<Result<(u64, M::Aggregator)>> = groups
            .into_par_iter()
            .zip(seeds)
            .map(|(lines, seed)| {
                let mut partial = seed.unwrap_or_else(|| m.server(clip));
                for &(number, line) in lines {
                    let added = M::Report::parse_json(line)
                        .map_err(|e| anyhow!("malformed report: {e}"))
                        .and_then(|r| Ok(partial.add(&r)?));
                    added.with_context(|| format!("line {number}"))?;
                }
                Ok((block(lines[0].0), partial))
            })
            .collect();
        // In order: the first bad line is the one named.
        for partial in partials {
            let (b, partial) = partial.context(reject)?;
            if let Some((_, done)) = open.replace((b, partial)) {
                total.merge(&done).context(reject)?;
            }
        }
    }
    if let Some((_, partial)) = open {
        total.merge(&partial).context(reject)?;
    }
    if total.count() == 0 {
        bail!("no reports on stdin");
    }
    Ok(total)
}

/// Bytes of report lines parsed in one parallel step (when that much has been read); at
/// most [`CHUNK_LINES`] lines, so at most 17 partial aggregators (each O(k)) at a time.
const BATCH_BYTES: usize = 32 << 20;

fn print_estimate(estimate: &[f64]) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "item,estimate")?;
    for (i, f) in estimate.iter().enumerate() {
        writeln!(out, "{i},{}", number(*f))?;
    }
    out.flush()?;
    Ok(())
}
