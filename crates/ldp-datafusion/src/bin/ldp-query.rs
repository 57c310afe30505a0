//! Runs SQL over tables of LDP reports: in this process with DataFusion, or on a
//! Ballista cluster of `ldp-scheduler` and `ldp-executor` processes.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Parser;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{SessionConfig, SessionContext};
use ldp_core::Spec;
use ldp_datafusion::{ReportTable, register_functions, remote_context, run_sql};

/// Run SQL over Parquet report files: `{spec}` in the SQL stands for the spec the files
/// record (`{spec:NAME}` with several tables). Over reports of several attributes per
/// user, `{attribute:J}` stands for attribute J of the collection the files record
/// (`{attribute:NAME:J}` with several tables), the column of attribute J being
/// `report_J`.
///
/// Example: ldp-query --table reports=data/ --partition-column day
///   "SELECT day, ldp_estimate(report, {spec}) FROM reports GROUP BY day ORDER BY day"
#[derive(Parser)]
#[command(version)]
struct Args {
    /// A table of reports: NAME=PATH, PATH a Parquet file or a directory of them
    /// (repeatable). Executors must see the same PATH.
    #[arg(long = "table", value_name = "NAME=PATH", required = true)]
    tables: Vec<String>,
    /// The mechanism of table NAME's files that record no spec, as JSON (`{"k":100,
    /// "eps":1.0,"family":"grr"}`); a file recording another spec is still refused
    /// (repeatable).
    #[arg(long = "spec", value_name = "NAME=JSON")]
    specs: Vec<String>,
    /// A Hive-style partition column (directories `COLUMN=value`), read as a string
    /// (repeatable).
    #[arg(long = "partition-column", value_name = "COLUMN")]
    partition_columns: Vec<String>,
    /// Submit to the Ballista scheduler at this URL (df://HOST:PORT) instead of running
    /// in this process.
    #[arg(long, value_name = "URL")]
    scheduler: Option<String>,
    /// Threads (DataFusion target partitions) when running in this process.
    #[arg(long)]
    threads: Option<usize>,
    /// The query.
    sql: String,
}

fn table(arg: &str, specs: &[(String, Spec)]) -> Result<ReportTable> {
    let Some((name, path)) = arg.split_once('=') else {
        bail!("--table {arg}: expected NAME=PATH");
    };
    if name.is_empty() || path.is_empty() {
        bail!("--table {arg}: expected NAME=PATH");
    }
    Ok(ReportTable {
        name: name.to_owned(),
        path: PathBuf::from(path),
        spec: specs.iter().find(|(n, _)| n == name).map(|(_, s)| *s),
    })
}

fn spec(arg: &str, tables: &[String]) -> Result<(String, Spec)> {
    let Some((name, json)) = arg.split_once('=') else {
        bail!("--spec {arg:?}: expected NAME=JSON");
    };
    if !tables
        .iter()
        .any(|t| t.split_once('=').is_some_and(|(n, _)| n == name))
    {
        bail!("--spec {name:?}: no --table has that name");
    }
    let spec = serde_json::from_str(json).with_context(|| format!("--spec {name}"))?;
    Ok((name.to_owned(), spec))
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ldp-query: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn run() -> Result<()> {
    env_logger::init();
    let args = Args::parse();
    let specs = args
        .specs
        .iter()
        .map(|s| spec(s, &args.tables))
        .collect::<Result<Vec<_>>>()?;
    let tables = args
        .tables
        .iter()
        .map(|t| table(t, &specs))
        .collect::<Result<Vec<_>>>()?;
    for t in &tables {
        if let Some(spec) = &t.spec {
            for file in ldp_arrow::ParquetReports::open(&t.path, spec)?.unrecorded() {
                eprintln!(
                    "ldp-query: note: {} records no spec; read as the --spec of table {}",
                    file.display(),
                    t.name
                );
            }
        }
    }
    let ctx = match &args.scheduler {
        Some(url) => {
            if args.threads.is_some() {
                bail!("--threads: the executors' --concurrent-tasks set a cluster's parallelism");
            }
            remote_context(url, SessionConfig::new())
                .await
                .with_context(|| format!("connecting to the scheduler at {url}"))?
        }
        None => {
            let mut config = SessionConfig::new();
            if let Some(n) = args.threads {
                config = config.with_target_partitions(n.max(1));
            }
            let ctx = SessionContext::new_with_config(config);
            register_functions(&ctx);
            ctx
        }
    };
    let columns: Vec<&str> = args.partition_columns.iter().map(String::as_str).collect();
    let batches = run_sql(&ctx, &tables, &columns, &args.sql).await?;
    println!("{}", pretty_format_batches(&batches)?);
    Ok(())
}
