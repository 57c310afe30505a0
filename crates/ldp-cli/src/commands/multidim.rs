//! Several attributes per user (`--attributes K1,K2,... --solution NAME`): the client
//! (`ldp_core::multidim`) named by the flags, and `perturb` and `aggregate` over JSON
//! lines of it or Parquet files. Reports are `{"sampled":{"attribute":j,"report":…}}`
//! (SMP) or `{"every":[…]}` (SPL and the RS+ solutions), each attribute's report in its
//! family's JSON form; in Parquet, one row per user and a column `report_j` per attribute
//! (`ldp_arrow::multidim`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use ldp_arrow::multidim::{MultidimWriter, ParquetMultidimReports};
use ldp_arrow::{ArrowReports, SetEncoding};
use ldp_core::estimate::FitOptions;
use ldp_core::multidim::{
    Multidim, MultidimAggregator, MultidimError, MultidimReport, MultidimSpec, Priors, Solution,
};
use ldp_core::parallel;
use ldp_core::{
    DomainSize, Epsilon, ItemOutOfRange, Mechanism, ParamError, Reason, Rejections, Spec,
};
use ldp_jsonl::lines::{LineChunks, ReadAhead};
use rand::Rng;

use super::ProtocolArgs;
use crate::lines::{ITEM_LINE_CAP, quote};
use crate::output::number;
use crate::protocol::{knob, parse_protocol, resolve};
use crate::streams::{Batches, CHUNK_LINES, chunk_lines};

/// The flags of several attributes, on `perturb` and `aggregate`.
#[derive(Debug, Clone, Args)]
pub(crate) struct AttributesArgs {
    /// Several attributes per user, instead of --k: each attribute's domain size,
    /// comma-separated. An input line is then a JSON array of one item per attribute
    /// (perturb), a report of all of them (aggregate).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "K1,K2,...",
        conflicts_with = "k",
        requires = "solution"
    )]
    pub(crate) attributes: Option<Vec<u64>>,
    /// With --attributes: how the budget is spent on them: spl (split), smp (sample one),
    /// rsfd (sample one, fakes of uniform items for the others), rsfd-z (fakes of no
    /// item: UE and THE), rsrfd (fakes drawn from --prior).
    #[arg(
        long,
        value_parser = knob::<Solution>(Solution::ALL.map(Solution::name)),
        requires = "attributes"
    )]
    pub(crate) solution: Option<Solution>,
    /// With --solution rsrfd: the priors the fakes are drawn from, a JSON array of one
    /// array of k_j weights (summing to 1) per attribute.
    #[arg(long, value_name = "FILE", requires = "solution")]
    pub(crate) prior: Option<PathBuf>,
}

impl AttributesArgs {
    /// The client the flags name, when --attributes is given.
    pub(crate) fn spec(&self, protocol: &ProtocolArgs) -> Result<Option<MultidimSpec>> {
        let (ks, solution) = match (&self.attributes, self.solution) {
            (Some(ks), Some(solution)) => (ks, solution),
            (None, None) if self.prior.is_none() => return Ok(None),
            (None, _) => {
                let flag = if self.solution.is_some() {
                    "--solution"
                } else {
                    "--prior"
                };
                bail!("{flag} goes with --attributes K1,K2,... (several attributes per user)");
            }
            (Some(_), None) => bail!("--attributes needs --solution spl|smp|rsfd|rsfd-z|rsrfd"),
        };
        let domains = domains(ks)?;
        if solution != Solution::RsRfd && self.prior.is_some() {
            bail!("--prior: only --solution rsrfd draws fakes from priors");
        }
        let priors = match &self.prior {
            Some(path) => Some(read_priors(path, &domains)?),
            None => None,
        };
        client(protocol, solution, &domains, priors).map(Some)
    }
}

/// `--attributes`: each a domain size, named by its position when it is not one.
fn domains(ks: &[u64]) -> Result<Vec<DomainSize>> {
    if ks.is_empty() {
        bail!("--attributes: give at least one domain size");
    }
    let domains = ks
        .iter()
        .enumerate()
        .map(|(j, &k)| {
            DomainSize::try_from(k).with_context(|| format!("--attributes: attribute {j}: k {k}"))
        })
        .collect::<Result<Vec<_>>>()?;
    // The server holds a counter (or a sum) per item of every attribute.
    let total: u64 = domains.iter().map(|k| u64::from(k.get())).sum();
    ldp_core::memory::check(total, 16)
        .map_err(|e| anyhow!("--attributes: {total} items in all: {e}"))?;
    Ok(domains)
}

/// `--prior FILE`: a JSON array of one array of weights per attribute, each over its
/// attribute's domain and summing to one.
pub(crate) fn read_priors(path: &Path, domains: &[DomainSize]) -> Result<Priors> {
    let context = || format!("--prior {}", path.display());
    let text = std::fs::read(path).with_context(context)?;
    let values: Vec<Vec<f64>> = serde_json::from_slice(&text)
        .map_err(|e| anyhow!("not a JSON array of arrays of weights, one per attribute: {e}"))
        .with_context(context)?;
    if values.len() != domains.len() {
        return Err(anyhow!(
            "{} priors for {} attributes",
            values.len(),
            domains.len()
        ))
        .with_context(context);
    }
    for (j, (prior, k)) in values.iter().zip(domains).enumerate() {
        if prior.len() != k.as_usize() {
            return Err(anyhow!(
                "the prior of attribute {j} has {} weights, but its domain has {} items",
                prior.len(),
                k.get()
            ))
            .with_context(context);
        }
    }
    Priors::new(values).with_context(context)
}

/// The client of `solution` over `domains`: every attribute's instance of `--protocol`
/// at the solution's per-report budget, a classic protocol at its preset, an adaptive
/// one tuned for its attribute's domain (or `--param`), exactly as for one attribute.
/// Checked by building it, so that a solution the family cannot run is refused before
/// any input is read.
pub(crate) fn client(
    p: &ProtocolArgs,
    solution: Solution,
    domains: &[DomainSize],
    priors: Option<Priors>,
) -> Result<MultidimSpec> {
    let protocol = parse_protocol(p.name()?)?;
    let eps = crate::protocol::budget(p.eps()?)?;
    if solution == Solution::RsRfd && priors.is_none() {
        bail!("--solution rsrfd draws its fakes from priors: add --prior FILE");
    }
    if solution != Solution::RsRfd && priors.is_some() {
        bail!("--prior: only --solution rsrfd draws fakes from priors");
    }
    let mut failure: Option<anyhow::Error> = None;
    let mut notes = Vec::new();
    let mut j = 0usize;
    let spec_of = |k: DomainSize, e: Epsilon| -> Result<Spec, ParamError> {
        let attribute = j;
        j += 1;
        match resolve(protocol, k, e, p.param.as_ref(), p.tuning.request) {
            Ok(instance) => {
                if let Some(note) = instance.tuning_note() {
                    notes.push(format!("attribute {attribute}: {note}"));
                }
                Ok(instance.spec)
            }
            Err(err) => {
                failure = Some(err.context(format!(
                    "attribute {attribute} (k = {}, {} report budget {})",
                    k.get(),
                    solution.label(),
                    number(e.get())
                )));
                Err(ParamError::Parameter {
                    name: "protocol",
                    description: "the attribute's instance",
                    requirement: "be resolved".into(),
                    value: f64::NAN,
                })
            }
        }
    };
    let spec = MultidimSpec::new(solution, eps, domains, priors, spec_of);
    if let Some(e) = failure {
        return Err(e);
    }
    let flags = || {
        format!(
            "--solution {} --protocol {}",
            solution.name(),
            p.name().unwrap_or_default().trim()
        )
    };
    let spec = spec.with_context(flags)?;
    ldp_core::dispatch_multidim!(&spec, m => m.dimensions()).with_context(flags)?;
    for note in notes {
        note!("ldp: {note}");
    }
    Ok(spec)
}

/// The longest line of items a user of `d` attributes can send: an item has at most ten
/// digits, and room is left for white space.
fn items_cap(d: usize) -> usize {
    ITEM_LINE_CAP + 24 * d
}

/// One user's items: a JSON array of one whole number per attribute, each in its
/// attribute's domain.
fn parse_user<M: Mechanism>(line: &[u8], m: &Multidim<M>) -> Result<Vec<u32>> {
    let values: Vec<u64> = serde_json::from_slice(line.trim_ascii()).map_err(|_| {
        anyhow!(
            "{} is not a JSON array of items (whole numbers, one per attribute)",
            quote(line)
        )
    })?;
    let attributes = m.attributes();
    if values.len() != attributes.len() {
        return Err(MultidimError::Arity {
            expected: attributes.len(),
            found: values.len(),
        }
        .into());
    }
    values
        .iter()
        .zip(attributes)
        .enumerate()
        .map(|(j, (&x, mech))| {
            let k = mech.domain_size().get();
            match u32::try_from(x) {
                Ok(item) if item < k => Ok(item),
                _ => Err(MultidimError::Item {
                    attribute: j as u32,
                    source: ItemOutOfRange { item: x, k },
                }
                .into()),
            }
        })
        .collect()
}

/// The users of a chunk of lines, up to the first bad line, and the error naming it.
fn parse_users<M: Mechanism>(
    chunk: &[(u64, &[u8])],
    m: &Multidim<M>,
) -> (Vec<Vec<u32>>, Option<anyhow::Error>) {
    let mut users = Vec::with_capacity(chunk.len());
    for &(number, line) in chunk {
        match parse_user(line, m) {
            Ok(items) => users.push(items),
            Err(e) => {
                let e = e.context(format!("line {number}")).context(
                    "input rejected; the reports written are for the lines above this one",
                );
                return (users, Some(e));
            }
        }
    }
    (users, None)
}

/// `ldp perturb --attributes`: reads users as they come (one JSON array of items per
/// line) and writes each chunk's reports (one JSON report per line) as soon as they are
/// made. User n draws from the stream of batch n / 4096, as one attribute's items do,
/// so a seed reproduces the output whatever the thread count. On a bad line, the reports
/// above it are written and the error names the line and the attribute.
pub(crate) fn perturb_stream<M, R>(m: &Multidim<M>, make: &(impl Fn(u64) -> R + Sync)) -> Result<()>
where
    M: Mechanism,
    R: Rng + Send,
{
    let d = m.dimensions();
    let line_bytes: usize = m
        .attributes()
        .iter()
        .map(|a| ldp_jsonl::max_line_len(&a.spec()) / 4)
        .sum::<usize>()
        + 64;
    let mut input = LineChunks::new(std::io::stdin().lock(), items_cap(d));
    let mut batches = Batches::new();
    let max_lines = chunk_lines(line_bytes);
    let mut out = std::io::stdout().lock();
    while let Some(chunk) = input.next_chunk(max_lines)? {
        let (users, failure) = parse_users(&chunk, m);
        let written = batches.run(&users, make, &|rng: &mut R, users: &[Vec<u32>]| {
            let mut buf = Vec::with_capacity(users.len() * line_bytes.min(1 << 16));
            for items in users {
                let report = m.perturb(items, rng)?;
                serde_json::to_writer(&mut buf, &report).map_err(|e| anyhow!("{e}"))?;
                buf.push(b'\n');
            }
            Ok::<_, anyhow::Error>(buf)
        });
        for buf in written {
            out.write_all(&buf?).context("writing reports")?;
        }
        out.flush().context("writing reports")?;
        if let Some(e) = failure {
            return Err(e);
        }
    }
    Ok(())
}

/// As [`perturb_stream`], into a Parquet file of one row per user
/// (`ldp_arrow::multidim`): the same reports for the same seed, one record batch per chunk
/// of input. On a bad line, the reports above it are written and the file closed.
pub(crate) fn perturb_parquet<M, R>(
    m: &Multidim<M>,
    make: &(impl Fn(u64) -> R + Sync),
    path: &Path,
    encoding: Option<SetEncoding>,
) -> Result<()>
where
    M: ArrowReports,
    R: Rng + Send,
{
    let at = || format!("--output {}", path.display());
    let mut writer = MultidimWriter::create(path, m.clone(), encoding).with_context(at)?;
    let mut input = LineChunks::new(std::io::stdin().lock(), items_cap(m.dimensions()));
    let mut batches = Batches::new();
    // Chunks sized in bytes: at most about 32 MiB of reports in memory at a time.
    let row_bytes: usize = m
        .attributes()
        .iter()
        .map(|a| 16 + 8 * a.spec().report_limits().entries as usize)
        .sum();
    let mut reports = Vec::new();
    while let Some(chunk) = input.next_chunk(chunk_lines(row_bytes))? {
        let (users, failure) = parse_users(&chunk, m);
        let pieces = batches.run(&users, make, &|rng: &mut R, users: &[Vec<u32>]| {
            users
                .iter()
                .map(|items| m.perturb(items, rng))
                .collect::<Result<Vec<_>, _>>()
        });
        reports.clear();
        for piece in pieces {
            reports.extend(piece?);
        }
        writer.write(&reports).with_context(at)?;
        if let Some(e) = failure {
            writer.finish().with_context(at)?;
            return Err(e);
        }
    }
    writer.finish().with_context(at)?;
    Ok(())
}

/// `ldp aggregate --attributes --input PATH`: the reports of a Parquet file, or of every
/// .parquet file under a directory, each checked to record the client the flags give,
/// added in file and row order (so the server is the one the same reports as JSON lines
/// give). Nothing is aggregated unless every row is valid, unless `skip`: then invalid
/// rows are counted by reason and left out.
pub(crate) fn aggregate_parquet<M: ArrowReports>(
    m: &Multidim<M>,
    path: &Path,
    spec: &MultidimSpec,
    skip: bool,
) -> Result<(MultidimAggregator<M>, Rejections)> {
    let reject = "reports rejected, nothing aggregated";
    let files = ParquetMultidimReports::open(path, spec).context(reject)?;
    if let Some(first) = files.unrecorded().first() {
        note!(
            "ldp: note: {} of {} files record no {} (first: {}); read as the client the flags give",
            files.unrecorded().len(),
            files.files().len(),
            ldp_arrow::MULTIDIM_KEY,
            first.display()
        );
    }
    let mut server = m.aggregator();
    let mut skipped = Rejections::default();
    if skip {
        files.aggregate_skipping(&mut server, &mut skipped)
    } else {
        files.aggregate(&mut server)
    }
    .context(reject)?;
    Ok((server, skipped))
}

/// The longest report line of `m`: every attribute's longest line (for SMP, one of them)
/// and the wrapper around them.
pub(crate) fn report_cap<M: Mechanism>(m: &Multidim<M>) -> usize {
    m.attributes()
        .iter()
        .map(|a| ldp_jsonl::max_line_len(&a.spec()))
        .sum::<usize>()
        + 256
}

/// A line parsed and checked: the report, or why it was refused and the message.
type Checked<R> = Result<MultidimReport<R>, (Reason, String)>;

/// Why a multidimensional report was refused, for the counts of skip mode.
fn reason(e: &MultidimError) -> Reason {
    match e {
        MultidimError::Report { source, .. } => Reason::from(source),
        _ => Reason::Shape,
    }
}

/// `ldp aggregate --attributes`: streams the reports into the server, parsing and
/// checking each batch in parallel and adding them in input order (so SHE's float sums
/// do not depend on the thread count). Prints nothing unless the whole stream is valid,
/// unless `skip`: then invalid lines are counted by reason and left out.
pub(crate) fn aggregate_stream<M: Mechanism>(
    m: &Multidim<M>,
    skip: bool,
) -> Result<(MultidimAggregator<M>, Rejections)> {
    let reject = "report stream rejected, nothing aggregated";
    let cap = report_cap(m);
    let mut server = m.aggregator();
    let mut skipped = Rejections::default();
    let mut input = ReadAhead::spawn(std::io::stdin(), cap, chunk_lines(cap / 4), skip);
    while let Some(batch) = input.next_batch(32 << 20, CHUNK_LINES).context(reject)? {
        for long in batch.skipped() {
            long.record(&mut skipped);
        }
        let lines = batch.lines();
        let parsed: Vec<Checked<M::Report>> = parallel::map(lines.len(), |i| {
            let line = lines[i].1;
            let r: MultidimReport<M::Report> = serde_json::from_slice(line)
                .map_err(|e| (Reason::Malformed, format!("malformed report: {e}")))?;
            m.validate(&r).map_err(|e| (reason(&e), e.to_string()))?;
            Ok(r)
        });
        for (&(number, _), p) in lines.iter().zip(parsed) {
            match p {
                Ok(r) => server
                    .add(&r)
                    .with_context(|| format!("line {number}"))
                    .context(reject)?,
                Err((why, e)) if skip => {
                    skipped.record(why, number, || format!("line {number}"), &e);
                }
                Err((_, e)) => {
                    return Err(anyhow!(e))
                        .with_context(|| format!("line {number}"))
                        .context(reject);
                }
            }
        }
    }
    Ok((server, skipped))
}

/// Every attribute's estimate, with `fit` turning an attribute's fit into its values (and
/// noting where an iterative estimator stopped at its cap).
pub(crate) fn estimates<M: Mechanism>(
    server: &MultidimAggregator<M>,
    estimator: ldp_core::Estimator,
    options: &FitOptions,
    fitted: impl Fn(ldp_core::estimate::Fit) -> Vec<f64>,
) -> Result<Vec<Vec<f64>>> {
    (0..server.mechanism().dimensions())
        .map(|j| {
            let fit = server
                .fit(j, estimator, options)
                .with_context(|| format!("--estimator {estimator}"))?;
            Ok(fitted(fit))
        })
        .collect()
}

/// `attribute,item,estimate` for every item of every attribute.
pub(crate) fn print_estimates(estimates: &[Vec<f64>]) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(out, "attribute,item,estimate")?;
    for (j, estimate) in estimates.iter().enumerate() {
        for (i, f) in estimate.iter().enumerate() {
            writeln!(out, "{j},{i},{}", number(*f))?;
        }
    }
    out.flush()?;
    Ok(())
}
