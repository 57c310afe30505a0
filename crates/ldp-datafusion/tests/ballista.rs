//! The functions under Ballista: in process (scheduler and executor in this test), and on
//! a real cluster of this crate's `ldp-scheduler` and two `ldp-executor` processes.

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use datafusion::prelude::SessionConfig;
use ldp_core::Protocol;
use ldp_datafusion::{
    DataFusionLdpError, ReportTable, attribute_literal, register_multidim_reports, remote_context,
    run_sql, standalone_context,
};

const QUERY: &str = "SELECT ldp_counts(report, {spec}), ldp_estimate(report, {spec}) FROM reports";

fn check(batches: &[datafusion::arrow::record_batch::RecordBatch], expected: &Expected) {
    let (n, counts, _) = counts_row(&batches[0], 0, 0);
    assert_eq!(n, expected.n);
    assert_eq!(counts, expected.counts);
    assert_eq!(estimate_row(&batches[0], 1, 0), expected.estimate);
}

/// Reports of three attributes per user (RS+FD over OUE) in `dir`, and what
/// `MultidimAggregator` estimates from them.
fn write_users(dir: &Path) -> (ldp_core::multidim::MultidimSpec, MultidimExpected) {
    use ldp_core::multidim::{MultidimSpec, Solution};
    use ldp_core::{DomainSize, Epsilon};
    let domains = [5, 3, 8].map(|k| DomainSize::new(k).unwrap());
    let spec = MultidimSpec::classic(
        Solution::RsFd,
        Protocol::Oue,
        Epsilon::new(2.0).unwrap(),
        &domains,
        None,
    )
    .unwrap();
    let expected = write_multidim_reports(dir, &spec, 6_000, 4, 23);
    (spec, expected)
}

/// Every attribute's SQL estimate over the table `users` equals `expected`'s.
async fn check_users(
    ctx: &datafusion::prelude::SessionContext,
    spec: &ldp_core::multidim::MultidimSpec,
    expected: &MultidimExpected,
) -> Result<(), DataFusionLdpError> {
    let columns: Vec<String> = (0..3)
        .map(|j| format!("ldp_estimate(report_{j}, {})", attribute_literal(spec, j)))
        .collect();
    let sql = format!("SELECT {} FROM users", columns.join(", "));
    let batches = ctx.sql(&sql).await?.collect().await?;
    for (j, want) in expected.estimate.iter().enumerate() {
        assert_eq!(&estimate_row(&batches[0], j, 0), want, "attribute {j}");
    }
    Ok(())
}

fn table(dir: &Path) -> [ReportTable; 1] {
    [ReportTable {
        name: "reports".into(),
        path: dir.to_path_buf(),
        spec: None,
    }]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ballista_in_process_equals_the_in_process_aggregate() {
    let spec = spec(Protocol::Olh, 20, 1.0);
    let dir_guard = temp_dir("ballista-standalone");
    let dir = dir_guard.path();
    let expected = write_reports(dir, &spec, &items(5000, 20, 0), 6, 11);
    let ctx = standalone_context(SessionConfig::new().with_target_partitions(4))
        .await
        .unwrap();
    let batches = run_sql(&ctx, &table(dir), &[], QUERY).await.unwrap();
    check(&batches, &expected);
    let users_guard = temp_dir("ballista-standalone-users");
    let users = users_guard.path();
    let (spec, expected) = write_users(users);
    register_multidim_reports(&ctx, "users", users, &[])
        .await
        .unwrap();
    check_users(&ctx, &spec, &expected).await.unwrap();
}

/// A port free now (the OS may hand it out again, which the tests tolerate by failing
/// loudly rather than hanging).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Child processes killed when the test ends, however it ends.
struct Cluster {
    children: Vec<(String, Child)>,
    logs: PathBuf,
}

impl Cluster {
    fn spawn(&mut self, name: &str, binary: &str, args: &[String]) {
        let log = std::fs::File::create(self.logs.join(format!("{name}.log"))).unwrap();
        let child = Command::new(binary)
            .args(args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.children.push((name.to_owned(), child));
    }

    fn log(&self, name: &str) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(self.logs.join(format!("{name}.log"))) {
            f.read_to_string(&mut text).unwrap();
        }
        text
    }

    fn tails(&self) -> String {
        let mut out = String::new();
        for (name, _) in &self.children {
            let log = self.log(name);
            let lines: Vec<&str> = log.lines().rev().take(15).collect();
            out.push_str(&format!("--- {name} ---\n"));
            for line in lines.into_iter().rev() {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// Waits until every named log holds `needle`, or a child exits, or 120 s pass.
    fn await_logs(&mut self, names: &[&str], needle: &str) {
        self.await_until(needle, |cluster| {
            names.iter().all(|n| cluster.log(n).contains(needle))
        });
    }

    /// Waits until `port` on localhost accepts connections (a child's server is up), or
    /// a child exits, or 120 s pass.
    fn await_port(&mut self, port: u16) {
        self.await_until(&format!("a server on port {port}"), |_| {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
    }

    fn await_until(&mut self, needle: &str, mut done: impl FnMut(&Self) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if done(self) {
                return;
            }
            let exited = self
                .children
                .iter_mut()
                .find_map(|(name, child)| Some((name.clone(), child.try_wait().ok()??)));
            if let Some((name, status)) = exited {
                panic!(
                    "{name} exited ({status}) before `{needle}`\n{}",
                    self.tails()
                );
            }
            assert!(
                Instant::now() < deadline,
                "no `{needle}` after 120 s\n{}",
                self.tails()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Task outputs (Arrow IPC shuffle files) under an executor's work directory.
fn task_outputs(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        task_outputs(&p)
                    } else {
                        usize::from(p.extension().is_some_and(|x| x == "arrow"))
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_of_a_scheduler_and_two_executors_equals_the_in_process_aggregate() {
    let spec = spec(Protocol::Oue, 32, 1.0);
    let root_guard = temp_dir("ballista-cluster");
    let root = root_guard.path();
    let data = root.join("reports");
    let expected = write_reports(&data, &spec, &items(20_000, 32, 0), 8, 5);
    let logs = root.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let mut cluster = Cluster {
        children: Vec::new(),
        logs,
    };
    let scheduler_port = free_port();
    cluster.spawn(
        "scheduler",
        env!("CARGO_BIN_EXE_ldp-scheduler"),
        &["--port".into(), scheduler_port.to_string()],
    );
    // An executor that starts before the scheduler listens gives up at once ("Could not
    // connect to scheduler"): start them once it does.
    cluster.await_port(scheduler_port);
    let mut work_dirs = Vec::new();
    for i in 0..2 {
        let work_dir = root.join(format!("executor-{i}"));
        std::fs::create_dir_all(&work_dir).unwrap();
        cluster.spawn(
            &format!("executor-{i}"),
            env!("CARGO_BIN_EXE_ldp-executor"),
            &[
                "--port".into(),
                free_port().to_string(),
                "--grpc-port".into(),
                free_port().to_string(),
                "--scheduler-port".into(),
                scheduler_port.to_string(),
                // One task at a time each, so that both must take some of the scan.
                "--concurrent-tasks".into(),
                "1".into(),
                "--work-dir".into(),
                work_dir.display().to_string(),
            ],
        );
        work_dirs.push(work_dir);
    }
    cluster.await_logs(
        &["executor-0", "executor-1"],
        "Executor registration succeed",
    );

    let url = format!("df://localhost:{scheduler_port}");
    let ctx = remote_context(&url, SessionConfig::new().with_target_partitions(4))
        .await
        .unwrap();
    let batches = match run_sql(&ctx, &table(&data), &[], QUERY).await {
        Ok(b) => b,
        Err(e) => panic!("{e}\n{}", cluster.tails()),
    };
    check(&batches, &expected);
    // Reports of several attributes, one estimate per attribute, on the same cluster.
    let users = root.join("users");
    let (spec, users_expected) = write_users(&users);
    let registered = register_multidim_reports(&ctx, "users", &users, &[]).await;
    if let Err(e) = match registered {
        Ok(_) => check_users(&ctx, &spec, &users_expected).await,
        Err(e) => Err(e),
    } {
        panic!("{e}\n{}", cluster.tails());
    }
    for (i, dir) in work_dirs.iter().enumerate() {
        assert!(
            task_outputs(dir) > 0
                && cluster
                    .log(&format!("executor-{i}"))
                    .contains("Execute task"),
            "executor {i} ran no task\n{}",
            cluster.tails()
        );
    }
}
