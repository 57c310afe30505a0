//! `ldp aggregate`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use ldp_arrow::{ArrowReports, ParquetReports};
use ldp_core::estimate::{Fit, FitKnob, FitOptions, FitOptionsError, Stop};
use ldp_core::parallel;
use ldp_core::simulation::USERS_PER_STREAM;
use ldp_core::{
    Aggregator, Clip, Estimator, FamilyMechanism, OnInvalid, Reason, Rejections, dispatch,
};
use ldp_jsonl::JsonReport;
use ldp_jsonl::lines::ReadAhead;

use super::ProtocolArgs;
use super::multidim::{self, AttributesArgs};
use crate::output::number;
use crate::protocol::{build, knob};
use crate::streams::{CHUNK_LINES, chunk_lines};

#[derive(Debug, Args)]
#[command(mut_arg("k", |k| k.required(false).required_unless_present("attributes")))]
pub(crate) struct AggregateArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    #[command(flatten)]
    attributes: AttributesArgs,
    /// The estimator: unbiased (may be negative); the consistency methods base-pos, norm,
    /// clip (NDSS's Norm-Mul, multi-freq-ldpy's MI), norm-cut, norm-sub, simplex
    /// (projection onto the probability simplex); and, reading the support counts through
    /// the channel, base-cut, mle-apx, ibu (iterative Bayesian update), ibu-squarem (IBU's
    /// fixed point, accelerated) and mle (maximum likelihood). docs/estimators.md says which
    /// to use when.
    #[arg(
        long,
        value_parser = knob::<Estimator>(Estimator::ALL.map(Estimator::name)),
        default_value = "unbiased"
    )]
    estimator: Estimator,
    /// ibu, ibu-squarem and mle: the most iterations (default 10000).
    #[arg(long = "max-iterations", value_name = "N")]
    max_iterations: Option<u32>,
    /// ibu and ibu-squarem: stop when no frequency moves by more than this in one IBU step;
    /// mle: when the
    /// frequencies sum to one within it (default 1e-12).
    #[arg(long, value_name = "T")]
    tolerance: Option<f64>,
    /// SHE: clip every report coordinate to [-C, C] before summing (default: 1 + 40/eps,
    /// which biases genuine coordinates by under 1e-9 * 2/eps and bounds a fake report's
    /// gain to C per target); `none` sums reports as they are, as the paper does.
    #[arg(long = "she-clip", value_name = "C|none")]
    she_clip: Option<String>,
    /// Read the reports from a Parquet file, or from every .parquet file under a
    /// directory, instead of JSON lines on stdin; each file must record this mechanism.
    #[arg(long, value_name = "PATH")]
    input: Option<PathBuf>,
    /// What an invalid report does: `refuse` the whole input, naming it (for a file you
    /// made), or `skip` it, counting it by reason on stderr and in --summary, so that one
    /// client cannot deny the estimate to everyone (for reports from untrusted clients).
    #[arg(
        long = "on-invalid",
        value_parser = knob::<OnInvalid>(OnInvalid::ALL.map(OnInvalid::name)),
        default_value = "refuse"
    )]
    on_invalid: OnInvalid,
    /// Also write a JSON summary to FILE: reports accepted, reports skipped, and for each
    /// reason the count and the first skipped report (where, and what was wrong).
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,
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
    clip.check_for(spec.family())
        .map_err(|e| anyhow!("--she-clip: {e}"))
}

pub(crate) fn run(a: &AggregateArgs) -> Result<()> {
    if let Some(spec) = a.attributes.spec(&a.protocol)? {
        return run_several(a, &spec);
    }
    let spec = a.protocol.spec()?;
    let clip = server_clip(a.she_clip.as_deref(), &spec)?;
    let estimator = a.estimator;
    let options = fit_options(a)?;
    let cap = ldp_jsonl::max_line_len(&spec);
    let skip = a.on_invalid == OnInvalid::Skip;
    let (estimate, accepted, skipped) = dispatch!(build(&spec)?, m => {
        let (total, skipped) = match &a.input {
            Some(path) => aggregate_parquet(&m, clip, path, &spec, skip)?,
            None => aggregate_stream(&m, clip, cap, skip)?,
        };
        (total.fit(estimator, &options), total.count(), skipped)
    });
    // The summary is written whatever the estimate's outcome (no valid report at all is
    // exactly when one wants it).
    report_skipped(a, skip, accepted, &skipped)?;
    let estimate = fitted(estimator, &options, estimate?);
    print_estimate(&estimate)
}

/// `ldp aggregate --attributes`: every attribute's estimate, `attribute,item,estimate`.
fn run_several(a: &AggregateArgs, spec: &ldp_core::multidim::MultidimSpec) -> Result<()> {
    let she = spec.specs()[0].family().clips();
    match a.she_clip.as_deref().map(str::trim) {
        Some("none") if she => {}
        Some(text) if she => bail!(
            "--she-clip {text}: the server of several attributes sums SHE's coordinates unclipped; only --she-clip none is possible"
        ),
        Some(_) => {
            server_clip(a.she_clip.as_deref(), &spec.specs()[0])?;
        }
        None if she => bail!(
            "--protocol she: the server of several attributes cannot clip SHE's coordinates; pass --she-clip none to sum them unclipped, as the paper does"
        ),
        None => {}
    }
    let estimator = a.estimator;
    let options = fit_options(a)?;
    let skip = a.on_invalid == OnInvalid::Skip;
    let (estimates, accepted, skipped) = ldp_core::dispatch_multidim!(spec, m => {
        let (server, skipped) = match &a.input {
            Some(path) => multidim::aggregate_parquet(&m, path, spec, skip)?,
            None => multidim::aggregate_stream(&m, skip)?,
        };
        let estimates = multidim::estimates(&server, estimator, &options, |fit| {
            fitted(estimator, &options, fit)
        });
        (estimates, server.count(), skipped)
    })?;
    report_skipped(a, skip, accepted, &skipped)?;
    multidim::print_estimates(&estimates?)
}

/// Skip mode's count on stderr and `--summary FILE`, written whatever the outcome; then
/// the refusal of an input without a valid report.
fn report_skipped(
    a: &AggregateArgs,
    skip: bool,
    accepted: u64,
    skipped: &Rejections,
) -> Result<()> {
    if skip {
        note!(
            "ldp: aggregated {accepted} reports, skipped {}: {skipped}",
            skipped.total()
        );
    }
    if let Some(path) = &a.summary {
        write_summary(path, accepted, skipped)?;
    }
    if accepted > 0 {
        return Ok(());
    }
    match (&a.input, skipped.total()) {
        (Some(path), n) => bail!("{}: no valid reports ({n} skipped)", path.display()),
        (None, 0) => bail!("no reports on stdin"),
        (None, n) => bail!("no valid reports on stdin ({n} skipped: {skipped})"),
    }
}

/// `--max-iterations` and `--tolerance`, which only the iterative estimators read.
fn fit_options(a: &AggregateArgs) -> Result<FitOptions> {
    FitOptions::for_estimator(a.estimator, a.max_iterations, a.tolerance).map_err(|e| {
        let (knob, message) = match &e {
            FitOptionsError::NotIterative { knob, estimator } => (
                *knob,
                format!("only --estimator ibu or mle iterates, not {estimator}"),
            ),
            FitOptionsError::Invalid { knob, reason } => (*knob, reason.clone()),
        };
        let flag = match knob {
            FitKnob::MaxIterations => "--max-iterations",
            FitKnob::Tolerance => "--tolerance",
        };
        anyhow!("{flag}: {message}")
    })
}

/// The estimate's values, with a note on stderr where an iterative estimator stopped at
/// its cap (the estimate is then the last iterate, not converged).
fn fitted(estimator: Estimator, options: &FitOptions, fit: Fit) -> Vec<f64> {
    if fit.stop == Stop::Cap {
        let why = if estimator == Estimator::Ibu {
            "; IBU creeps towards estimates on the simplex's boundary (some frequency 0): \
             ibu-squarem reaches the same fixed point in far fewer steps, and mle maximizes \
             the likelihood directly"
        } else {
            ""
        };
        note!(
            "ldp: note: {estimator} stopped at the cap of {} iterations before the tolerance {} (raise --max-iterations{why})",
            options.max_iterations,
            options.tolerance
        );
    }
    fit.values
}

/// `--summary FILE`: `{"accepted": n, "skipped": s, "reasons": {reason: {count,
/// first_at, first_error}}}`.
fn write_summary(path: &Path, accepted: u64, skipped: &Rejections) -> Result<()> {
    let reasons: serde_json::Map<String, serde_json::Value> = skipped
        .iter()
        .map(|(reason, r)| {
            let value = serde_json::json!({
                "count": r.count,
                "first_at": r.first_at,
                "first_error": r.first_error,
            });
            (reason.name().to_owned(), value)
        })
        .collect();
    let summary = serde_json::json!({
        "accepted": accepted,
        "skipped": skipped.total(),
        "reasons": reasons,
    });
    let text = serde_json::to_string_pretty(&summary).expect("JSON") + "\n";
    std::fs::write(path, text).with_context(|| format!("--summary {}", path.display()))
}

/// Reads the row groups of the files in parallel (memory: one batch per core) and
/// merges them in file order, so SHE's float sums do not depend on the thread count.
fn aggregate_parquet<M>(
    m: &M,
    clip: Clip,
    path: &Path,
    spec: &ldp_core::Spec,
    skip: bool,
) -> Result<(M::Aggregator, Rejections)>
where
    M: FamilyMechanism + ArrowReports,
{
    let reject = "reports rejected, nothing aggregated";
    let files = ParquetReports::open(path, spec).context(reject)?;
    if let Some(first) = files.unrecorded().first() {
        note!(
            "ldp: note: {} of {} files record no ldp.spec (first: {}); read as the mechanism the flags give",
            files.unrecorded().len(),
            files.files().len(),
            first.display()
        );
    }
    let parts = files.parts().context(reject)?;
    let partials: Vec<Result<(M::Aggregator, Rejections)>> = parallel::map(parts.len(), |i| {
        let part = &parts[i];
        let mut partial = m.server(clip);
        let mut skipped = Rejections::default();
        let file = files.files()[part.file].display().to_string();
        let at = |row: u64| format!("{file} row {row}");
        // Rows of file f order after every row of the files before it.
        let base = (part.file as u64) << 40;
        files.for_each_batch_of(part, |column, row| {
            if skip {
                m.aggregate_array_skipping(&mut partial, column, row, base, &mut skipped, &at)
            } else {
                m.aggregate_array(&mut partial, column, row)
            }
        })?;
        Ok((partial, skipped))
    });
    let mut total = m.server(clip);
    let mut skipped = Rejections::default();
    for partial in partials {
        let (partial, partial_skipped) = partial.context(reject)?;
        total.merge(&partial).context(reject)?;
        skipped.merge(&partial_skipped);
    }
    Ok((total, skipped))
}

/// Streams the reports into the aggregator (memory O(k) per core), parsing in parallel;
/// prints only after the whole input was accepted, so a bad line rejects the stream as a
/// whole, unless `skip`: then invalid lines (malformed, invalid, too long) are counted
/// and left out.
///
/// The input is read ahead on a thread of its own ([`ReadAhead`]); each batch of reports
/// is cut into blocks of [`USERS_PER_STREAM`] by position, each block summed by one
/// partial aggregator (a block cut by a batch boundary continues in the next batch) and
/// the partials merged in block order ([`Blocks`]). The position is the line number, or
/// when skipping the number of valid reports so far: so the first bad line is the one
/// named, and SHE's float sums depend neither on the number of threads, nor on how the
/// input was read, nor on the invalid lines between valid ones.
fn aggregate_stream<M>(
    m: &M,
    clip: Clip,
    cap: usize,
    skip: bool,
) -> Result<(M::Aggregator, Rejections)>
where
    M: FamilyMechanism,
    M::Report: JsonReport,
{
    let reject = "report stream rejected, nothing aggregated";
    let mut blocks = Blocks::new(m.server(clip));
    let mut skipped = Rejections::default();
    let mut valid = 0u64;
    let mut input = ReadAhead::spawn(std::io::stdin(), cap, chunk_lines(cap / 4), skip);
    while let Some(batch) = input.next_batch(BATCH_BYTES, CHUNK_LINES).context(reject)? {
        for long in batch.skipped() {
            long.record(&mut skipped);
        }
        let lines = batch.lines();
        let server = || m.server(clip);
        if !skip {
            blocks
                .fold(&lines, server, |partial, &(number, line)| {
                    let added = M::Report::parse_tagged(line)
                        .map(|(_, r)| r)
                        .map_err(|e| anyhow!("malformed report: {e}"))
                        .and_then(|r| Ok(partial.add(&r)?));
                    added.with_context(|| format!("line {number}"))
                })
                .context(reject)?;
            continue;
        }
        let parsed: Vec<Result<M::Report, (Reason, String)>> = parallel::map(lines.len(), |i| {
            let line = lines[i].1;
            let r = M::Report::parse_tagged(line)
                .map(|(_, r)| r)
                .map_err(|e| (Reason::Malformed, format!("malformed report: {e}")))?;
            m.validate(&r)
                .map_err(|e| (Reason::from(&e), e.to_string()))?;
            Ok(r)
        });
        let mut reports = Vec::with_capacity(parsed.len());
        for (&(number, _), p) in lines.iter().zip(parsed) {
            match p {
                Ok(r) => {
                    valid += 1;
                    reports.push((valid, r));
                }
                Err((reason, e)) => skipped.record(reason, number, || format!("line {number}"), &e),
            }
        }
        blocks
            .fold(&reports, server, |partial, (_, r)| Ok(partial.add(r)?))
            .context(reject)?;
    }
    let total = blocks.finish().context(reject)?;
    Ok((total, skipped))
}

/// Items numbered from 1 summed in blocks of [`USERS_PER_STREAM`] consecutive numbers,
/// each block by one partial aggregator, merged into the total in block order.
struct Blocks<A> {
    total: A,
    /// The last block of the previous batch, which may continue in the next one.
    open: Option<(u64, A)>,
}

impl<A: Aggregator> Blocks<A> {
    fn new(total: A) -> Self {
        Self { total, open: None }
    }

    /// Adds a batch of numbered items (in increasing order), the blocks in parallel;
    /// the first failing item in order is the error.
    fn fold<T: Sync>(
        &mut self,
        items: &[(u64, T)],
        server: impl Fn() -> A + Sync,
        add: impl Fn(&mut A, &(u64, T)) -> Result<()> + Sync,
    ) -> Result<()> {
        let block = |number: u64| (number - 1) / USERS_PER_STREAM as u64;
        if items.is_empty() {
            return Ok(());
        }
        let groups: Vec<&[(u64, T)]> = items.chunk_by(|a, b| block(a.0) == block(b.0)).collect();
        let mut seeds: Vec<Option<A>> = groups.iter().map(|_| None).collect();
        if let Some((b, partial)) = self.open.take() {
            if b == block(groups[0][0].0) {
                seeds[0] = Some(partial);
            } else {
                self.total.merge(&partial)?;
            }
        }
        let work = groups.into_iter().zip(seeds).collect();
        let partials: Vec<Result<(u64, A)>> = parallel::map_vec(work, |(group, seed)| {
            let mut partial = seed.unwrap_or_else(&server);
            for item in group {
                add(&mut partial, item)?;
            }
            Ok((block(group[0].0), partial))
        });
        for partial in partials {
            if let Some((_, done)) = self.open.replace(partial?) {
                self.total.merge(&done)?;
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<A> {
        if let Some((_, partial)) = self.open.take() {
            self.total.merge(&partial)?;
        }
        Ok(self.total)
    }
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
