//! `ldp perturb`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use ldp_arrow::{ArrowReports, ReportWriter, SetEncoding};
use ldp_core::ReportTags;
use ldp_core::simulation::{BatchStreams, Role};
use ldp_core::{Mechanism, dispatch, with_batch_rng};
use ldp_jsonl::lines::LineChunks;
use ldp_jsonl::{Digits, JsonReport, write_tagged};
use rand::Rng;

use super::ProtocolArgs;
use super::multidim::AttributesArgs;
use crate::lines::{ITEM_LINE_CAP, parse_item};
use crate::protocol::build;
use crate::streams::{Batches, chunk_lines};

#[derive(Debug, Args)]
#[command(mut_arg("k", |k| k.required(false).required_unless_present("attributes")))]
pub(crate) struct PerturbArgs {
    #[command(flatten)]
    protocol: ProtocolArgs,
    #[command(flatten)]
    attributes: AttributesArgs,
    /// Seed for reproducible output (the reports of ldp-core's `perturb_all` with this
    /// seed); without it ChaCha20 is keyed by the operating system.
    #[arg(long)]
    seed: Option<u64>,
    /// Write the reports to this Parquet file (the spec in its metadata) instead of JSON
    /// lines on stdout; with --attributes, one row per user and a column `report_j` per
    /// attribute.
    #[arg(long, value_name = "FILE.parquet")]
    output: Option<PathBuf>,
    /// Replace the --output file if it exists (by default an existing file is refused).
    #[arg(long, requires = "output")]
    overwrite: bool,
    /// Parquet layout of SS, UE and THE reports: the smaller for the mechanism (auto), the
    /// sorted indices (list) or one bit per item (bitmap).
    #[arg(long, value_enum, default_value_t = EncodingArg::Auto)]
    encoding: EncodingArg,
    /// Tag every report with its sender's id: `"user"` before the report's fields in JSON
    /// lines, a `user` column in Parquet. Aggregation ignores tags; `ldp ledger --reports`
    /// reads them.
    #[arg(long, value_name = "ID")]
    user: Option<String>,
    /// Tag every report with its survey's id (`"survey"`, a `survey` column).
    #[arg(long, value_name = "ID")]
    survey: Option<String>,
    /// Tag every report with its day (`"day"`, a `day` column; 0 to 4294967295).
    #[arg(long, value_name = "D")]
    day: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EncodingArg {
    Auto,
    List,
    Bitmap,
}

pub(crate) fn run(a: &PerturbArgs) -> Result<()> {
    let encoding = match a.encoding {
        EncodingArg::Auto => None,
        EncodingArg::List => Some(SetEncoding::List),
        EncodingArg::Bitmap => Some(SetEncoding::Bitmap),
    };
    for (flag, id) in [("--user", &a.user), ("--survey", &a.survey)] {
        if let Some(id) = id
            && id.len() > ldp_jsonl::MAX_TAG_BYTES
        {
            bail!(
                "{flag}: an id of at most {} bytes, got {} (readers cap a report's line)",
                ldp_jsonl::MAX_TAG_BYTES,
                id.len()
            );
        }
    }
    let tags = ReportTags {
        user: a.user.clone(),
        survey: a.survey.clone(),
        day: a.day,
    };
    if let Some(spec) = a.attributes.spec(&a.protocol)? {
        if !tags.is_empty() {
            bail!(
                "--user, --survey, --day: tags go with one attribute's reports; reports of several attributes do not carry them yet"
            );
        }
        let streams = BatchStreams::new(a.seed, Role::Genuine)?;
        if let Some(path) = &a.output {
            // Every attribute is of one family: the first says whether reports are sets.
            check_output(a, path, encoding, &spec.specs()[0])?;
            return ldp_core::dispatch_multidim!(&spec, m => with_batch_rng!(streams, make => super::multidim::perturb_parquet(&m, &make, path, encoding)))?;
        }
        if a.encoding != EncodingArg::Auto {
            bail!("--encoding: only Parquet output (--output FILE.parquet) has a set encoding");
        }
        return ldp_core::dispatch_multidim!(&spec, m => with_batch_rng!(streams, make => super::multidim::perturb_stream(&m, &make)))?;
    }
    let spec = a.protocol.spec()?;
    let streams = BatchStreams::new(a.seed, Role::Genuine)?;
    if let Some(path) = &a.output {
        check_output(a, path, encoding, &spec)?;
        return dispatch!(build(&spec)?, m => with_batch_rng!(streams, make => perturb_parquet(&m, &make, path, encoding, &tags)));
    }
    if a.encoding != EncodingArg::Auto {
        bail!("--encoding: only Parquet output (--output FILE.parquet) has a set encoding");
    }
    let line_bytes = ldp_jsonl::max_line_len(&spec) / 4;
    dispatch!(build(&spec)?, m => with_batch_rng!(streams, make => perturb_stream(&m, &make, line_bytes, &tags)))
}

/// `--output FILE.parquet`: the name ends in .parquet, `--encoding` is given for reports
/// that are sets only (`spec`'s family), and an existing file is replaced only with
/// `--overwrite`.
fn check_output(
    a: &PerturbArgs,
    path: &Path,
    encoding: Option<SetEncoding>,
    spec: &ldp_core::Spec,
) -> Result<()> {
    if path.extension().is_none_or(|e| e != "parquet") {
        // `dir/.parquet` is a hidden file with no extension: name what is missing.
        if path.file_name().is_some_and(|n| n == ".parquet") {
            bail!(
                "--output {}: the file needs a name before .parquet (reports.parquet, say)",
                path.display()
            );
        }
        bail!(
            "--output {}: the file name must end in .parquet (JSON lines go to stdout)",
            path.display()
        );
    }
    if let Some(e) = encoding {
        // A family whose reports are not sets has one layout whatever is asked.
        let one_layout = dispatch!(build(spec)?, m => {
            m.report_type(SetEncoding::List) == m.report_type(SetEncoding::Bitmap)
        });
        if one_layout {
            bail!(
                "--encoding {}: {} reports are not sets of items and have one layout",
                e.name(),
                a.protocol.label(spec)
            );
        }
    }
    if !a.overwrite && std::fs::symlink_metadata(path).is_ok() {
        bail!(
            "--output {}: the file exists (pass --overwrite to replace it)",
            path.display()
        );
    }
    Ok(())
}

/// The items of a chunk of lines, up to the first bad line, and the error naming it.
fn parse_items(chunk: &[(u64, &[u8])], k: u32) -> (Vec<u32>, Option<anyhow::Error>) {
    let mut items = Vec::with_capacity(chunk.len());
    for &(number, line) in chunk {
        match parse_item(line, k) {
            Ok(x) => items.push(x),
            Err(e) => {
                let e = e.context(format!("line {number}")).context(
                    "input rejected; the reports written are for the lines above this one",
                );
                return (items, Some(e));
            }
        }
    }
    (items, None)
}

/// As [`perturb_stream`], into a Parquet file: one record batch per chunk of input.
fn perturb_parquet<M, R>(
    m: &M,
    make: &(impl Fn(u64) -> R + Sync),
    path: &Path,
    encoding: Option<SetEncoding>,
    tags: &ReportTags,
) -> Result<()>
where
    M: ArrowReports + Clone,
    R: Rng + Send,
{
    let k = m.domain_size().get();
    let at = || format!("--output {}", path.display());
    let mut writer =
        ReportWriter::create_tagged(path, m.clone(), encoding, tags.clone()).with_context(at)?;
    let mut input = LineChunks::new(std::io::stdin().lock(), ITEM_LINE_CAP);
    let mut batches = Batches::new();
    let mut reports = Vec::new();
    // Chunks sized in bytes: at most about 32 MiB of reports in memory at a time.
    let report_bytes = 16 + 8 * m.spec().report_limits().entries as usize;
    while let Some(chunk) = input.next_chunk(chunk_lines(report_bytes))? {
        let (items, failure) = parse_items(&chunk, k);
        let pieces = batches.run(&items, make, &|rng: &mut R, items: &[u32]| {
            items
                .iter()
                .map(|&x| m.perturb(x, rng).expect("items are checked against k"))
                .collect::<Vec<_>>()
        });
        reports.clear();
        reports.extend(pieces.into_iter().flatten());
        writer.write(&reports).with_context(at)?;
        if let Some(e) = failure {
            writer.finish().with_context(at)?;
            return Err(e);
        }
    }
    writer.finish().with_context(at)?;
    Ok(())
}

/// Reads items as they come and writes each chunk's reports as soon as they are made,
/// so that interactive streams stay live. On a bad line, the reports above it are
/// written and the error names the line.
///
/// A writer thread writes one chunk's reports while the next chunk is perturbed: through
/// a pipe, writing costs as much as perturbing.
fn perturb_stream<M, R>(
    m: &M,
    make: &(impl Fn(u64) -> R + Sync),
    line_bytes: usize,
    tags: &ReportTags,
) -> Result<()>
where
    M: Mechanism,
    M::Report: JsonReport,
    R: Rng + Send,
{
    let k = m.domain_size().get();
    // The indices a report holds: items for most families, cells for CMS.
    let digits = Digits::for_domain(m.spec().report_limits().values);
    let mut input = LineChunks::new(std::io::stdin().lock(), ITEM_LINE_CAP);
    let mut batches = Batches::new();
    let max_lines = chunk_lines(line_bytes);
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Vec<u8>>>(1);
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || -> Result<()> {
            let mut out = std::io::stdout().lock();
            for written in rx {
                for buf in written {
                    out.write_all(&buf).context("writing reports")?;
                }
                out.flush().context("writing reports")?;
            }
            Ok(())
        });
        let perturbed = (|| -> Result<()> {
            while let Some(chunk) = input.next_chunk(max_lines)? {
                let (items, failure) = parse_items(&chunk, k);
                let written = batches.run(&items, make, &|rng: &mut R, items: &[u32]| {
                    let mut buf = Vec::with_capacity(items.len() * line_bytes.min(1 << 16));
                    for &x in items {
                        let report = m.perturb(x, rng).expect("items are checked against k");
                        write_tagged(tags, &report, &digits, &mut buf);
                        buf.push(b'\n');
                    }
                    buf
                });
                // A closed channel: the writer stopped at an error, which it returns.
                if tx.send(written).is_err() {
                    return Ok(());
                }
                if let Some(e) = failure {
                    return Err(e);
                }
            }
            Ok(())
        })();
        // Every report made is written before an input error is reported.
        drop(tx);
        let wrote = writer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        wrote.and(perturbed)
    })
}
