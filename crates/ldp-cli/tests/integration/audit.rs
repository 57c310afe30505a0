//! `ldp audit`, end to end: our protocols, an external client, and bad input.

use assert_cmd::Command;
use predicates::prelude::*;

fn ldp() -> Command {
    Command::cargo_bin("ldp").unwrap()
}

fn csv(args: &[&str]) -> Vec<Vec<String>> {
    let out = ldp()
        .arg("audit")
        .args(args)
        .args(["--format", "csv"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn a_protocol_is_audited_by_both_statistics() {
    let rows = csv(&[
        "--protocol",
        "sue",
        "--k",
        "25",
        "--eps",
        "2",
        "--trials",
        "200000",
    ]);
    assert_eq!(rows.len(), 2);
    let (lr, guess) = (&rows[0], &rows[1]);
    assert_eq!((lr[3].as_str(), guess[3].as_str()), ("lr", "guess"));
    let lr_eps: f64 = lr[4].parse().unwrap();
    let guess_eps: f64 = guess[4].parse().unwrap();
    assert!(lr_eps > 1.8 && lr_eps <= 2.0, "{lr:?}");
    assert!(guess_eps < lr_eps, "{guess:?}");
    assert_eq!(lr[13], "false");
}

#[test]
fn the_exact_audit_prints_the_worst_ratio() {
    let rows = csv(&["--protocol", "grr", "--k", "10", "--eps", "1.5", "--exact"]);
    let eps: f64 = rows[0][4].parse().unwrap();
    assert!((eps - 1.5).abs() < 1e-12, "{rows:?}");
    assert_eq!(rows[0][3], "exact");
}

#[test]
fn an_external_client_is_flagged() {
    // Echoing the item is no randomization at all.
    let rows = csv(&[
        "--command",
        "cat",
        "--shape",
        "grr",
        "--k",
        "10",
        "--eps",
        "1",
        "--trials",
        "5000",
    ]);
    assert_eq!(rows[0][13], "true", "{rows:?}");
    // A 0/1 client that sets only the true bit, in the plain form.
    let script = "awk '{ s = \"\"; for (i = 0; i < 8; i++) s = s (i == $1 ? 1 : 0); print s }'";
    let rows = csv(&[
        "--command",
        script,
        "--shape",
        "set",
        "--k",
        "8",
        "--eps",
        "2",
        "--trials",
        "3000",
        "--pairs",
        "cycle",
    ]);
    assert!(rows.iter().all(|r| r[13] == "true"), "{rows:?}");
}

#[test]
fn memoized_protocols_are_audited_over_linked_reports() {
    let rows = csv(&[
        "--protocol",
        "l-osue",
        "--k",
        "50",
        "--eps",
        "1",
        "--eps-perm",
        "3",
        "--collections",
        "1,5,10000",
        "--exact",
    ]);
    let eps: Vec<f64> = rows.iter().map(|r| r[5].parse().unwrap()).collect();
    assert!((eps[0] - 1.0).abs() < 1e-9, "{rows:?}");
    assert!(eps[1] > 1.0 && eps[1] < 3.0, "{rows:?}");
    assert!((eps[2] - 3.0).abs() < 1e-6, "{rows:?}");
    let rows = csv(&[
        "--protocol",
        "l-grr",
        "--k",
        "10",
        "--eps",
        "0.5",
        "--eps-perm",
        "2",
        "--collections",
        "2",
        "--trials",
        "50000",
    ]);
    assert_eq!((rows[0][3].as_str(), rows[0][4].as_str()), ("2", "lr"));
    assert_eq!(rows[0][14], "false", "{rows:?}");
}

#[test]
fn bad_settings_name_the_flag() {
    let fails = |args: &[&str], message: &str| {
        ldp()
            .arg("audit")
            .args(args)
            .assert()
            .failure()
            .stderr(predicate::str::contains(message));
    };
    fails(&["--protocol", "oue", "--k", "10"], "--eps");
    fails(
        &[
            "--protocol",
            "oue",
            "--k",
            "10",
            "--eps",
            "1",
            "--alpha",
            "2",
        ],
        "alpha = 2",
    );
    // Issue 43: an alpha below 1e-100 panicked inside statrs' Beta quantile.
    fails(
        &[
            "--protocol",
            "grr",
            "--k",
            "10",
            "--eps",
            "1",
            "--trials",
            "1000",
            "--alpha",
            "1e-200",
        ],
        "alpha = 1e-200 is not in [1e-100, 1)",
    );
    fails(
        &[
            "--protocol",
            "oue",
            "--k",
            "10",
            "--eps",
            "1",
            "--trials",
            "0",
        ],
        "trials = 0",
    );
    fails(
        &[
            "--protocol",
            "oue",
            "--k",
            "10",
            "--eps",
            "1",
            "--pairs",
            "1-2",
        ],
        "--pairs 1-2",
    );
    fails(
        &[
            "--protocol",
            "oue",
            "--k",
            "10",
            "--eps",
            "1",
            "--pairs",
            "1:10",
        ],
        "(1, 10)",
    );
    fails(
        &[
            "--protocol",
            "oue",
            "--k",
            "10",
            "--eps",
            "1",
            "--statistic",
            "x",
        ],
        "unknown statistic",
    );
    fails(&["--command", "cat", "--k", "10"], "--shape");
    fails(
        &[
            "--protocol",
            "oue",
            "--k",
            "10",
            "--eps",
            "1",
            "--timeout",
            "3",
        ],
        "--timeout: only for an external client",
    );
    fails(
        &[
            "--protocol",
            "oue",
            "--k",
            "10",
            "--eps",
            "1",
            "--exact",
            "--trials",
            "3",
        ],
        "--trials: only for the statistical audit",
    );
    fails(
        &[
            "--command",
            "cat",
            "--shape",
            "grr",
            "--k",
            "10",
            "--timeout",
            "1e30",
        ],
        "--timeout 1e30",
    );
    fails(
        &[
            "--protocol",
            "oue",
            "--k",
            "10",
            "--eps",
            "1",
            "--collections",
            "3",
        ],
        "memoized",
    );
    fails(
        &["--protocol", "l-grr", "--k", "10", "--eps", "1"],
        "--eps-perm",
    );
    fails(
        &[
            "--protocol",
            "l-grr",
            "--k",
            "10",
            "--eps",
            "1",
            "--eps-perm",
            "2",
            "--collections",
            "0",
        ],
        "--collections",
    );
    fails(&["--command", "cat", "--shape", "lh", "--k", "10"], "--g");
    fails(
        &[
            "--command",
            "cat",
            "--shape",
            "grr",
            "--k",
            "10",
            "--g",
            "3",
        ],
        "--g",
    );
    fails(
        &[
            "--command",
            "exit 4",
            "--shape",
            "grr",
            "--k",
            "10",
            "--trials",
            "10",
        ],
        "exited with exit status: 4",
    );
    fails(
        &[
            "--command",
            "sleep 5",
            "--shape",
            "grr",
            "--k",
            "10",
            "--trials",
            "10",
            "--timeout",
            "0.2",
        ],
        "within 0.2 s",
    );
    fails(
        &[
            "--protocol",
            "grr",
            "--k",
            "2000000",
            "--eps",
            "1",
            "--exact",
        ],
        "use a smaller k",
    );
}

fn json(args: &[&str]) -> Vec<serde_json::Value> {
    let out = ldp()
        .arg("audit")
        .args(args)
        .args(["--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

/// Several attributes: RS+FD[GRR] over very unequal domains spends more than the anchors'
/// eps on one attribute, exactly and measurably; the whole tuple stays within eps'.
#[test]
fn a_client_of_several_attributes_is_audited_per_kind_of_change() {
    let client = [
        "--protocol",
        "grr",
        "--attributes",
        "2,100",
        "--solution",
        "rsfd",
        "--eps",
        "1",
    ];
    let exact = json(&[&client[..], &["--exact"]].concat());
    assert_eq!(exact.len(), 2);
    assert_eq!(exact[0]["changed"], "every");
    assert_eq!(exact[0]["flagged"], "false");
    assert_eq!(exact[1]["changed"], "attribute 1");
    assert_eq!(exact[1]["flagged"], "true");
    let eps_one = exact[1]["eps_measured"].as_f64().unwrap();
    assert!((eps_one - 1.2497).abs() < 1e-3, "{exact:?}");

    let test = json(&[&client[..], &["--trials", "300000", "--statistic", "lr"]].concat());
    assert_eq!(test.len(), 2);
    let whole = test[0]["eps_measured"].as_f64().unwrap();
    let one = test[1]["eps_measured"].as_f64().unwrap();
    assert!(whole > 1.2 && whole <= 1.49, "{test:?}");
    assert!(one > 1.0 && one <= eps_one, "{test:?}");
    assert_eq!(test[1]["flagged"], "true");
    // CSV quotes the domain sizes.
    let csv = ldp()
        .arg("audit")
        .args(client)
        .args(["--exact", "--format", "csv"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(
        String::from_utf8(csv)
            .unwrap()
            .contains("rsfd[grr],\"2,100\",1,every")
    );
}

#[test]
fn several_attributes_refuse_what_does_not_apply() {
    let fails = |args: &[&str], message: &str| {
        ldp()
            .arg("audit")
            .args(["--attributes", "3,4", "--solution", "rsfd", "--eps", "1"])
            .args(args)
            .assert()
            .failure()
            .stderr(predicate::str::contains(message));
    };
    fails(
        &["--protocol", "oue", "--exact"],
        "by symmetry: use the statistical audit",
    );
    fails(&["--protocol", "grr", "--pairs", "cycle"], "fixed tuples");
    fails(
        &["--command", "cat", "--shape", "grr"],
        "external client of several attributes",
    );
    fails(&["--protocol", "grr", "--k", "5"], "--k");
    fails(&["--protocol", "grr", "--trials", "0"], "trials = 0");
}

/// Issue 43, item 6: Ctrl-C (SIGINT) stops the external clients, which run in process
/// groups of their own that the terminal's signal does not reach, and what they started.
#[cfg(unix)]
#[test]
fn an_interrupt_stops_the_external_clients() {
    use std::time::{Duration, Instant};
    let dir = std::env::temp_dir().join(format!("ldp-audit-interrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pids = dir.join("pids");
    let client = format!("sleep 60 & echo $! >> {}; wait", pids.display());
    let mut audit = std::process::Command::new(env!("CARGO_BIN_EXE_ldp"))
        .args(["audit", "--shape", "grr", "--k", "10", "--eps", "1"])
        .args(["--trials", "2000", "--batch", "1000", "--command", &client])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let count = || {
        std::fs::read_to_string(&pids)
            .map(|t| t.split_whitespace().count())
            .unwrap_or(0)
    };
    while count() == 0 && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(count() > 0, "no client started");
    let sent = std::process::Command::new("kill")
        .args(["-INT", &audit.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = audit.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
    let ended = |pid: &str| match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    };
    let text = std::fs::read_to_string(&pids).unwrap();
    let waited = Instant::now();
    while !text.split_whitespace().all(ended) && waited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let alive: Vec<&str> = text.split_whitespace().filter(|p| !ended(p)).collect();
    assert!(
        alive.is_empty(),
        "clients outlived the interrupt: {alive:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
