//! `cargo xtask bench-engine`: Parquet reports aggregated by the `ldp` tool, by
//! DataFusion and by a Ballista cluster of two executors (issue 16's benchmark).
//!
//! Builds the release binaries of `ldp` and of the `ldp-datafusion` workspace, writes the
//! report files once into `target/bench-engine/` (reused on later runs), and prints one
//! markdown row per engine and thread count: wall time, reports per second, bytes per
//! report, and the ratio to the in-process aggregator at the same thread count.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// One data set: `reports` reports of `protocol` at domain size `k`.
struct Workload {
    protocol: &'static str,
    k: u32,
    eps: f64,
    reports: u64,
    files: u64,
}

impl Workload {
    fn dir(&self, root: &Path) -> PathBuf {
        root.join(format!("{}-k{}-n{}", self.protocol, self.k, self.reports))
    }

    fn spec_args(&self) -> Vec<String> {
        vec![
            "--protocol".into(),
            self.protocol.into(),
            "--k".into(),
            self.k.to_string(),
            "--eps".into(),
            self.eps.to_string(),
        ]
    }
}

/// Options of the benchmark.
pub(crate) struct Options {
    /// OLH reports at k = 100.
    pub(crate) olh_reports: u64,
    /// OUE reports at k = 1000.
    pub(crate) oue_reports: u64,
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn run_ok(cmd: &mut Command, what: &str) -> Result<()> {
    let status = cmd.status().with_context(|| what.to_owned())?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// Wall time of a command whose output is discarded.
fn timed(cmd: &mut Command, what: &str) -> Result<Duration> {
    let start = Instant::now();
    let out = cmd
        .stdout(Stdio::null())
        .output()
        .with_context(|| what.to_owned())?;
    let elapsed = start.elapsed();
    if !out.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(elapsed)
}

/// Writes the workload's files with `ldp perturb --output`, one item stream per file.
fn generate(ldp: &Path, w: &Workload, dir: &Path) -> Result<()> {
    if dir.join("done").exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    let per_file = w.reports.div_ceil(w.files);
    for f in 0..w.files {
        let n = per_file.min(w.reports - f * per_file);
        let path = dir.join(format!("part-{f}.parquet"));
        eprintln!("bench-engine: writing {} ({n} reports)", path.display());
        let mut child = Command::new(ldp)
            .arg("perturb")
            .args(w.spec_args())
            .args(["--seed", &f.to_string(), "--output"])
            .arg(&path)
            .stdin(Stdio::piped())
            .spawn()?;
        {
            let mut stdin = std::io::BufWriter::with_capacity(1 << 20, child.stdin.take().unwrap());
            // A skewed population: item i*i mod k.
            for i in 0..n {
                writeln!(stdin, "{}", (i * i) % u64::from(w.k))?;
            }
        }
        if !child.wait()?.success() {
            bail!("ldp perturb failed for {}", path.display());
        }
    }
    std::fs::write(dir.join("done"), b"")?;
    Ok(())
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A scheduler and executors, killed on drop.
struct Cluster(Vec<Child>);

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn start_cluster(bin: &Path, executors: usize, work: &Path) -> Result<(Cluster, String)> {
    let port = free_port()?;
    let mut children = vec![
        Command::new(bin.join("ldp-scheduler"))
            .args(["--port", &port.to_string()])
            .stderr(Stdio::null())
            .spawn()?,
    ];
    for i in 0..executors {
        let dir = work.join(format!("executor-{i}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        children.push(
            Command::new(bin.join("ldp-executor"))
                .args(["--port", &free_port()?.to_string()])
                .args(["--grpc-port", &free_port()?.to_string()])
                .args(["--scheduler-port", &port.to_string()])
                .args(["--concurrent-tasks", "1"])
                .arg("--work-dir")
                .arg(&dir)
                .stderr(Stdio::null())
                .spawn()?,
        );
    }
    // Registration takes well under a second on localhost.
    std::thread::sleep(Duration::from_secs(3));
    Ok((Cluster(children), format!("df://localhost:{port}")))
}

fn dir_bytes(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "parquet") {
            total += std::fs::metadata(&p)?.len();
        }
    }
    Ok(total)
}

pub(crate) fn run(root: &Path, options: &Options) -> Result<()> {
    run_ok(
        cargo()
            .args(["build", "--release", "-p", "ldp-cli"])
            .current_dir(root),
        "building ldp",
    )?;
    let engine = root.join("crates/ldp-datafusion");
    run_ok(
        cargo()
            .args(["build", "--release", "--bins"])
            .current_dir(&engine),
        "building the ldp-datafusion binaries",
    )?;
    let ldp = root.join("target/release/ldp");
    let bin = engine.join("target/release");
    let data = root.join("target/bench-engine");
    let workloads = [
        Workload {
            protocol: "olh",
            k: 100,
            eps: 1.0,
            reports: options.olh_reports,
            files: 8,
        },
        Workload {
            protocol: "oue",
            k: 1000,
            eps: 1.0,
            reports: options.oue_reports,
            files: 8,
        },
    ];
    println!(
        "| workload | engine | threads | seconds | reports/s | bytes/report | vs ldp aggregate |"
    );
    println!("|---|---|---|---|---|---|---|");
    for w in &workloads {
        let dir = w.dir(&data);
        generate(&ldp, w, &dir)?;
        let bytes = dir_bytes(&dir)? as f64 / w.reports as f64;
        let name = format!(
            "{} k={} eps={} ({} M)",
            w.protocol,
            w.k,
            w.eps,
            w.reports / 1_000_000
        );
        let table = format!("reports={}", dir.display());
        let sql = "SELECT ldp_counts(report, {spec}) FROM reports";
        let row = |engine: &str, threads: usize, secs: f64, base: f64| {
            println!(
                "| {name} | {engine} | {threads} | {secs:.2} | {:.1} M | {bytes:.1} | {:.2} |",
                w.reports as f64 / secs / 1e6,
                secs / base
            );
        };
        for threads in [1usize, 2] {
            let base = timed(
                Command::new(&ldp)
                    .arg("aggregate")
                    .args(w.spec_args())
                    .arg("--input")
                    .arg(&dir)
                    .env("RAYON_NUM_THREADS", threads.to_string()),
                "ldp aggregate",
            )?
            .as_secs_f64();
            row("ldp aggregate --input", threads, base, base);
            let df = timed(
                Command::new(bin.join("ldp-query")).args([
                    "--threads",
                    &threads.to_string(),
                    "--table",
                    &table,
                    sql,
                ]),
                "ldp-query (DataFusion)",
            )?
            .as_secs_f64();
            row("DataFusion", threads, df, base);
            if threads == 2 {
                let (_cluster, url) = start_cluster(&bin, 2, &data.join("work"))?;
                let ballista = timed(
                    Command::new(bin.join("ldp-query")).args([
                        "--scheduler",
                        &url,
                        "--table",
                        &table,
                        sql,
                    ]),
                    "ldp-query (Ballista)",
                )?
                .as_secs_f64();
                row("Ballista, 2 executors x 1 task", 2, ballista, base);
            }
        }
    }
    Ok(())
}
