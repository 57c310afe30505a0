//! The hostile-user findings of issue 11, one regression test per item, through the
//! binary, and a property test of arbitrary input to `aggregate` and `attack`.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;
use proptest::prelude::*;

fn ldp() -> Command {
    Command::cargo_bin("ldp").unwrap()
}

/// Exit 2, nothing on stdout, one line on stderr starting `ldp: error:` and holding every
/// needle.
fn fails(cmd: &mut Command, needles: &[&str]) -> String {
    let out = cmd.assert().code(2).stdout(predicate::str::is_empty());
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.starts_with("ldp: error: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{n:?} not in {stderr}");
    }
    stderr
}

fn items_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ldp-hardening-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Item 1: Runs and users beyond memory: one line, before any allocation, naming the flag and
/// the largest value that fits.
#[test]
fn item01_runs_and_users_beyond_memory() {
    let file = items_file("items01.txt", "1\n2\n3\n");
    for (flag, value) in [
        ("--runs", "18446744073709551615"),
        ("--runs", "1099511627776"),
        ("--users", "18446744073709551615"),
        ("--users", "10000000000000"),
    ] {
        let mut cmd = ldp();
        cmd.args([
            "simulate",
            "--protocol",
            "grr",
            "--k",
            "10",
            "--eps",
            "1",
            flag,
            value,
        ])
        .arg("--items")
        .arg(&file);
        let msg = fails(&mut cmd, &[&format!("{flag} {value}")]);
        assert!(
            msg.contains("at most") || msg.contains("addressed"),
            "{msg}"
        );
    }
}

/// Item 2: Domains too large to aggregate or perturb: an error naming --k, not an abort.
#[test]
fn item02_domains_too_large_for_a_mechanism() {
    fails(
        ldp()
            .args([
                "aggregate",
                "--protocol",
                "grr",
                "--k",
                "4294967295",
                "--eps",
                "1",
            ])
            .write_stdin("{\"y\":1}\n"),
        &["--k 4294967295", "too large"],
    );
    fails(
        ldp()
            .args([
                "perturb",
                "--protocol",
                "she",
                "--k",
                "4294967295",
                "--eps",
                "1",
            ])
            .write_stdin("0\n"),
        &["--k 4294967295"],
    );
    // Closed forms keep any k.
    ldp()
        .args([
            "analyze",
            "--protocol",
            "grr,oue,olh",
            "--k",
            "1000000000",
            "--eps",
            "1",
        ])
        .assert()
        .success();
}

fn she_reports(n: usize) -> String {
    let items: String = (0..n).map(|i| format!("{}\n", i % 5)).collect();
    let out = ldp()
        .args([
            "perturb",
            "--protocol",
            "she",
            "--k",
            "5",
            "--eps",
            "1",
            "--seed",
            "1",
        ])
        .write_stdin(items)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn estimates(stdout: &[u8]) -> Vec<f64> {
    String::from_utf8(stdout.to_vec())
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect()
}

/// Item 4: Forged SHE reports: beyond the report bound they are rejected; within it, the
/// default clipping keeps the estimate where it was, and no estimator is non-finite.
#[test]
fn item04_forged_she_reports_cannot_destroy_the_estimate() {
    let genuine = she_reports(10_000);
    let huge = "{\"y\":[1.7e308,0,0,0,0]}\n";
    fails(
        ldp()
            .args(["aggregate", "--protocol", "she", "--k", "5", "--eps", "1"])
            .write_stdin(format!("{genuine}{huge}{huge}")),
        &["line 10001", "field `y`", "outside"],
    );
    let forged = "{\"y\":[1e100,0,0,0,0]}\n".repeat(2);
    for estimator in ["unbiased", "clip", "norm-sub", "simplex"] {
        let clipped = ldp()
            .args(["aggregate", "--protocol", "she", "--k", "5", "--eps", "1"])
            .args(["--estimator", estimator])
            .write_stdin(format!("{genuine}{forged}"))
            .assert()
            .success();
        let f = estimates(&clipped.get_output().stdout);
        assert!(f.iter().all(|v| v.is_finite()), "{estimator}: {f:?}");
        // Each forged report adds at most the bound 1 + 40/eps = 41 to item 0.
        assert!((f[0] - 0.2).abs() < 0.1, "{estimator}: {f:?}");
        let unclipped = ldp()
            .args(["aggregate", "--protocol", "she", "--k", "5", "--eps", "1"])
            .args(["--estimator", estimator, "--she-clip", "none"])
            .write_stdin(format!("{genuine}{forged}"))
            .assert()
            .success();
        let f = estimates(&unclipped.get_output().stdout);
        assert!(f.iter().all(|v| v.is_finite()), "{estimator}: {f:?}");
    }
}

/// Item 5: Budgets at which SHE cannot produce finite reports are refused.
#[test]
fn item05_she_refuses_budgets_without_finite_reports() {
    fails(
        ldp()
            .args([
                "perturb",
                "--protocol",
                "she",
                "--k",
                "3",
                "--eps",
                "1e-308",
                "--seed",
                "1",
            ])
            .write_stdin("1\n"),
        &["--eps 1e-308", "too small for SHE"],
    );
}

/// Item 6: A --param that would change the protocol is refused.
#[test]
fn item06_a_param_cannot_change_the_protocol() {
    fails(
        ldp().args([
            "analyze",
            "--protocol",
            "sue",
            "--k",
            "10",
            "--eps",
            "1",
            "--param",
            "0.5",
        ]),
        &["--param 0.5", "sue fixes p", "aue"],
    );
    fails(
        ldp().args([
            "analyze",
            "--protocol",
            "olh",
            "--k",
            "10",
            "--eps",
            "1",
            "--param",
            "5",
        ]),
        &["olh fixes g"],
    );
    // SS and THE are defined for any omega and theta; the row says which.
    ldp()
        .args([
            "analyze",
            "--protocol",
            "ss",
            "--k",
            "10",
            "--eps",
            "1",
            "--param",
            "3",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("\nss,10,1,3,"));
}

/// Item 7: The maximal gain attack on LH says when it supports fewer targets than the closed
/// form assumes.
#[test]
fn item07_a_weaker_lh_attack_is_reported() {
    let out = ldp()
        .args(["simulate", "--protocol", "olh", "--k", "100", "--eps", "4"])
        .args(["--dataset", "adult-age", "--runs", "1", "--users", "2000"])
        .args([
            "--poison",
            "mga",
            "--beta",
            "0.05",
            "--targets",
            "20,21,22,23,24,25,26,27,28,29",
        ])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let header: Vec<&str> = stdout.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = stdout.lines().nth(1).unwrap().split(',').collect();
    let supported: u32 = row[header
        .iter()
        .position(|c| *c == "targets_supported")
        .unwrap()]
    .parse()
    .unwrap();
    assert!(supported < 10, "{stdout}");
    assert!(
        stderr.contains(&format!("the epg column is the gain at {supported}")),
        "{stderr}"
    );
}

/// Item 8: Missing required options are errors.
#[test]
fn item08_missing_options_are_errors() {
    fails(
        ldp().args(["analyze", "--protocol", "ss", "--k", "500"]),
        &["--eps"],
    );
    fails(
        ldp().args(["analyze", "--protocol", "ss", "--eps", "1"]),
        &["--k"],
    );
}

/// Item 9: A flag that does nothing is an error; the tuned parameter is printed on stderr.
#[test]
fn item09_flags_that_do_nothing_are_errors() {
    for strategy in ["utopia", "elbow"] {
        fails(
            ldp()
                .args(["tune", "--protocol", "aue", "--k", "100", "--eps", "4"])
                .args(["--strategy", strategy, "--asr-max", "0.1"]),
            &["--asr-max", "takes no bound"],
        );
    }
    // A tuning setting out of range is named by its flag (the checks live in
    // ldp_optimize::TuneRequest, shared with the Python package).
    for (flags, needles) in [
        (
            &["--w-asr", "1.5"][..],
            &["--w-asr: the ASR weight", "got 1.5"][..],
        ),
        (&["--w-bits=-1"], &["--w-bits: a weight must be finite"]),
        (
            &["--w-epg", "1", "--strategy", "elbow"],
            &["--strategy: the elbow"],
        ),
        (
            &["--asr-max", "0.1", "--epg-max", "1", "--strategy", "utopia"],
            &["--asr-max: the utopia"],
        ),
    ] {
        fails(
            ldp()
                .args(["tune", "--protocol", "aue", "--k", "100", "--eps", "4"])
                .args(flags),
            needles,
        );
    }
    fails(
        ldp().args([
            "frontier",
            "--protocol",
            "aue",
            "--k",
            "100",
            "--eps",
            "4",
            "--asr-max",
            "0.1",
        ]),
        &["--asr-max"],
    );
    fails(
        ldp()
            .args(["simulate", "--protocol", "grr", "--k", "100", "--eps", "1"])
            .args(["--dataset", "adult-age", "--beta", "0.1"]),
        &["--beta", "--poison"],
    );
    fails(
        ldp()
            .args(["simulate", "--protocol", "grr", "--k", "100", "--eps", "1"])
            .args(["--dataset", "adult-age", "--targets", "3"]),
        &["--targets", "--poison"],
    );
    fails(
        ldp()
            .args([
                "perturb",
                "--protocol",
                "oue",
                "--k",
                "10",
                "--eps",
                "1",
                "--w-asr",
                "0.3",
            ])
            .write_stdin("1\n"),
        &["--w-asr", "oue is not tuned"],
    );
    // The parameter an adaptive protocol ended up with is said, bound included.
    ldp()
        .args([
            "perturb",
            "--protocol",
            "aue",
            "--k",
            "100",
            "--eps",
            "4",
            "--seed",
            "1",
        ])
        .args(["--strategy", "eps-constraint"])
        .write_stdin("1\n")
        .assert()
        .success()
        .stderr(predicate::str::contains("aue tuned").and(predicate::str::contains("asr <= 0.1")));
    ldp()
        .args(["aggregate", "--protocol", "alh", "--k", "100", "--eps", "4"])
        .write_stdin("{\"seed\":1,\"y\":2}\n")
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "alh tuned at k = 100, eps = 4: g = 13",
        ));
}

/// Item 10: perturb writes as it reads: the first report appears before the input ends.
#[test]
fn item10_interactive_streams_stay_live() {
    let mut child = Process::new(env!("CARGO_BIN_EXE_ldp"))
        .args([
            "perturb",
            "--protocol",
            "grr",
            "--k",
            "5",
            "--eps",
            "1",
            "--seed",
            "1",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"1\n").unwrap();
    stdin.flush().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        tx.send(line).unwrap();
    });
    // The input stays open: the report must come anyway.
    let line = rx.recv_timeout(Duration::from_secs(20)).unwrap();
    assert!(line.starts_with("{\"y\":"), "{line}");
    stdin.write_all(b"2\n").unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// Item 11: A closed stdout is a normal end: exit 0, nothing on stderr.
#[test]
fn item11_a_closed_pipe_is_a_normal_end() {
    let mut child = Process::new(env!("CARGO_BIN_EXE_ldp"))
        .args(["perturb", "--protocol", "grr", "--k", "4", "--eps", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let writer = std::thread::spawn(move || {
        let items: String = (0..2_000_000).map(|i| format!("{}\n", i % 4)).collect();
        let _ = stdin.write_all(items.as_bytes());
    });
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap(); // then the reader is dropped
    let _ = writer.join();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// Items 12 and 13: Lines are capped at a size derived from k, rejected without being read
/// whole, and errors quote at most a short prefix.
#[test]
fn item12_13_lines_are_capped_and_errors_short() {
    let huge = format!("{{\"y\":{}}}\n", "1".repeat(5_000_000));
    let start = Instant::now();
    let msg = fails(
        ldp()
            .args(["aggregate", "--protocol", "grr", "--k", "5", "--eps", "1"])
            .write_stdin(huge),
        &["line 1: longer than"],
    );
    assert!(msg.len() < 300, "{msg}");
    assert!(start.elapsed() < Duration::from_secs(30));
    let msg = fails(
        ldp()
            .args(["perturb", "--protocol", "grr", "--k", "5", "--eps", "1"])
            .write_stdin(format!("{}\n", "x".repeat(200))),
        &["line 1", "is not an item"],
    );
    assert!(msg.len() < 200, "{msg}");
    // A long string inside a report of a large domain, under the cap: a short message.
    let long = format!("{{\"ones\":\"{}\"}}\n", "x".repeat(6000));
    let msg = fails(
        ldp()
            .args(["aggregate", "--protocol", "oue", "--k", "500", "--eps", "1"])
            .write_stdin(long),
        &["line 1", "field `ones`"],
    );
    assert!(msg.len() < 300, "{msg}");
}

/// Item 14: A byte-order mark and trailing blank lines are accepted; a blank line inside is not.
#[test]
fn item14_bom_and_trailing_blank_lines() {
    ldp()
        .args(["aggregate", "--protocol", "grr", "--k", "5", "--eps", "1"])
        .write_stdin("\u{feff}{\"y\":1}\r\n{\"y\":2}\n\n\n")
        .assert()
        .success();
    ldp()
        .args(["perturb", "--protocol", "grr", "--k", "5", "--eps", "1"])
        .write_stdin("\u{feff}1\n2\n   \n")
        .assert()
        .success()
        .stdout(predicate::function(|s: &str| s.lines().count() == 2));
    fails(
        ldp()
            .args(["aggregate", "--protocol", "grr", "--k", "5", "--eps", "1"])
            .write_stdin("{\"y\":1}\n\n{\"y\":2}\n"),
        &["line 2: blank line before line 3"],
    );
}

/// Item 15: Parser errors are one line with the prefix; negative numbers reach the range
/// checks; help still works.
#[test]
fn item15_parser_errors_are_one_line() {
    fails(
        ldp().args(["analyze", "--protocl", "grr"]),
        &["--protocl", "tip"],
    );
    fails(
        ldp().args([
            "analyze",
            "--protocol",
            "ss",
            "--k",
            "5",
            "--eps",
            "1",
            "--param",
            "-1",
        ]),
        &["--param -1"],
    );
    fails(
        ldp()
            .args(["simulate", "--protocol", "grr", "--k", "100", "--eps", "1"])
            .args([
                "--dataset",
                "adult-age",
                "--poison",
                "mga",
                "--beta",
                "-0.1",
                "--targets",
                "1",
            ]),
        &["--beta -0.1"],
    );
    fails(
        ldp().args([
            "perturb",
            "--protocol",
            "grr",
            "--k",
            "5",
            "--eps",
            "1",
            "--seed",
            "-1",
        ]),
        &["-1", "--seed"],
    );
    ldp()
        .args(["analyze", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--protocol"));
}

/// Item 16: Every malformed report names the field, without serde's column.
#[test]
fn item16_malformed_reports_name_the_field() {
    let agg = |p: &str, line: &str, needles: &[&str]| {
        let msg = fails(
            ldp()
                .args(["aggregate", "--protocol", p, "--k", "5", "--eps", "1"])
                .write_stdin(format!("{line}\n")),
            needles,
        );
        assert!(!msg.contains("column"), "{msg}");
    };
    agg("grr", "{\"y\":-1}", &["field `y`", "-1"]);
    agg("she", "{\"y\":[1e999,0,0,0,0]}", &["field `y"]);
    agg("olh", "{\"seed\":1.5,\"y\":1}", &["field `seed`", "1.5"]);
    agg("oue", "{\"ones\":[1,\"2\"]}", &["field `ones"]);
    agg("grr", "{\"z\":1}", &["unknown field `z`"]);
}

/// Item 17: Range errors name the flag.
#[test]
fn item17_range_errors_name_the_flag() {
    fails(
        ldp()
            .args(["simulate", "--protocol", "grr", "--k", "100", "--eps", "1"])
            .args(["--dataset", "adult-age", "--runs", "0"]),
        &["--runs 0"],
    );
    fails(
        ldp()
            .args(["simulate", "--protocol", "grr", "--k", "100", "--eps", "1"])
            .args([
                "--dataset",
                "adult-age",
                "--poison",
                "mga",
                "--beta",
                "1",
                "--targets",
                "3",
            ]),
        &["--beta 1"],
    );
    fails(
        ldp()
            .args(["simulate", "--protocol", "grr", "--k", "100", "--eps", "1"])
            .args([
                "--dataset",
                "adult-age",
                "--poison",
                "mga",
                "--beta",
                "0.1",
                "--targets",
                "100",
            ]),
        &["--targets", "100"],
    );
}

/// Item 18: Reports are JSON objects.
#[test]
fn item18_reports_are_objects() {
    fails(
        ldp()
            .args(["aggregate", "--protocol", "grr", "--k", "5", "--eps", "1"])
            .write_stdin("[1]\n"),
        &["line 1", "JSON object"],
    );
}

/// Item 19: Numbers print in exponent form at the extremes, JSON keeps integers and column
/// order, and protocol names are echoed canonically.
#[test]
fn item19_numbers_and_names() {
    let out = ldp()
        .args([
            "analyze",
            "--protocol",
            " OLH ",
            "--k",
            "500",
            "--eps",
            "1e308",
        ])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let row = text.lines().nth(1).unwrap();
    assert!(row.starts_with("olh,500,1e308,"), "{row}");
    assert!(row.len() < 200, "{row}");
    let out = ldp()
        .args([
            "analyze",
            "--protocol",
            "ss",
            "--k",
            "500",
            "--eps",
            "1",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("{\"protocol\": \"ss\", \"k\": 500, \"eps\": 1, \"param\": 134,"),
        "{text}"
    );
}

/// Item 20: The whole grid at an extreme budget: ALH's 485 million values are searched without
/// a scan, and every row is printed.
#[test]
fn item20_extreme_budgets_give_every_row() {
    let out = ldp()
        .args(["analyze", "--protocol", "all", "--k", "2", "--eps", "20"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let protocols = ldp_core::Protocol::ALL.len();
    assert_eq!(text.lines().count(), 1 + protocols, "{text}");
    // A strategy that needs the whole frontier cannot scan it: the error names the
    // protocol, and the other rows are printed.
    let out = ldp()
        .args([
            "analyze",
            "--protocol",
            "all",
            "--k",
            "2",
            "--eps",
            "20",
            "--strategy",
            "utopia",
        ])
        .assert()
        .code(2);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(text.lines().count(), protocols, "{text}");
    assert!(
        stderr.contains("alh k = 2, eps = 20") && stderr.contains("ALH"),
        "{stderr}"
    );
}

/// Every registered protocol's name: the hostile inputs reach each family.
fn protocol_names() -> Vec<&'static str> {
    ldp_core::Protocol::ALL.iter().map(|p| p.name()).collect()
}

fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| format!("{v:?}")),
        "[a-z]{0,4}".prop_map(|s| format!("\"{s}\"")),
        Just("1e999".to_owned()),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("y"),
                        Just("ones"),
                        Just("subset"),
                        Just("seed"),
                        Just("q")
                    ],
                    inner
                ),
                0..3
            )
            .prop_map(|kv| {
                let fields: Vec<String> = kv
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!("{{{}}}", fields.join(","))
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Arbitrary bytes and arbitrary JSON to `aggregate` and `attack`, every protocol:
    /// exit 0 or 2, never a panic, and on exit 2 `aggregate` prints nothing.
    #[test]
    fn hostile_input_never_panics(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
        json in prop::collection::vec(json_value(), 1..4),
        protocol in 0usize..ldp_core::Protocol::ALL.len(),
    ) {
        let p = protocol_names()[protocol];
        let json_input = json.join("\n") + "\n";
        for input in [bytes.clone(), json_input.into_bytes()] {
            for cmd in ["aggregate", "attack"] {
                let out = ldp()
                    .args([cmd, "--protocol", p, "--k", "5", "--eps", "2"])
                    .write_stdin(input.clone())
                    .output()
                    .unwrap();
                let code = out.status.code();
                prop_assert!(code == Some(0) || code == Some(2), "{cmd} {p}: {out:?}");
                let stderr = String::from_utf8_lossy(&out.stderr);
                prop_assert!(!stderr.contains("panicked"), "{cmd} {p}: {stderr}");
                if cmd == "aggregate" && code == Some(2) {
                    prop_assert!(out.stdout.is_empty(), "{p}: {out:?}");
                }
            }
        }
    }
}

/// Issue 24, item 1: a broken stderr (`2>/dev/full`) is no reason to panic (exit 101).
#[test]
fn a_broken_stderr_does_not_panic() {
    let Ok(full) = std::fs::File::create("/dev/full") else {
        eprintln!("skipped: this system has no /dev/full");
        return;
    };
    let ldp = assert_cmd::cargo::cargo_bin("ldp");
    let mut child = std::process::Command::new(&ldp)
        .args([
            "perturb",
            "--protocol",
            "aue",
            "--k",
            "10",
            "--eps",
            "1",
            "--seed",
            "1",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(full.try_clone().unwrap())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(b"1\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the tuning note went nowhere");
    assert!(!out.stdout.is_empty());
    // An error with nowhere to go still exits 2.
    let status = std::process::Command::new(&ldp)
        .args(["analyze", "--protocol", "nope", "--k", "3", "--eps", "1"])
        .stderr(full)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
}

/// Issue 24, item 15: an argument holding a newline or an ANSI escape is quoted, so the
/// error stays one line and cannot drive the terminal.
#[test]
fn control_characters_in_arguments_are_escaped() {
    let stderr = fails(
        ldp().args([
            "analyze",
            "--protocol",
            "gr\nr\u{1b}[31m",
            "--k",
            "3",
            "--eps",
            "1",
        ]),
        &["unknown protocol", r"gr\nr\u{1b}[31m"],
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}

/// Issue 24, item 17: an existing --output file is not replaced silently, and a budget
/// too small to carry any signal is refused at once, naming --eps.
#[test]
fn an_existing_output_and_a_signal_free_budget_are_refused() {
    let dir = std::env::temp_dir().join(format!("ldp-hardening-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("reports.parquet");
    std::fs::write(&path, b"keep me").unwrap();
    let perturb = |extra: &[&str]| {
        let mut cmd = ldp();
        cmd.args([
            "perturb",
            "--protocol",
            "grr",
            "--k",
            "4",
            "--eps",
            "1",
            "--output",
        ])
        .arg(&path)
        .args(extra)
        .write_stdin("1\n");
        cmd
    };
    fails(
        &mut perturb(&[]),
        &["--output", "the file exists", "--overwrite"],
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"keep me");
    perturb(&["--overwrite"]).assert().success();
    assert_ne!(std::fs::read(&path).unwrap(), b"keep me");
    std::fs::remove_dir_all(&dir).unwrap();
    for command in ["perturb", "aggregate"] {
        fails(
            ldp()
                .args([command, "--protocol", "oue", "--k", "4", "--eps", "1e-300"])
                .write_stdin("1\n"),
            &["--eps 1e-300", "no signal"],
        );
    }
}

/// Issue 24, item 13: messages that said the wrong thing.
#[test]
fn messages_name_the_real_fault() {
    // Weights near f64::MAX are positive: their sum no longer overflows to "no weight".
    let prior = items_file("huge-prior.txt", &"1e308\n".repeat(10));
    ldp()
        .args([
            "attack",
            "--protocol",
            "grr",
            "--k",
            "10",
            "--eps",
            "1",
            "--prior",
        ])
        .arg(&prior)
        .write_stdin("{\"y\":1}\n")
        .assert()
        .success();
    // A whole-number parameter out of u32 says so, in a readable number.
    for v in ["-1", "1e308", "4294967296"] {
        let shown = if v == "1e308" { "--param 1e308:" } else { v };
        fails(
            ldp()
                .args(["analyze", "--protocol", "ss", "--k", "10", "--eps", "1"])
                .arg(format!("--param={v}")),
            &[shown, "whole number from 0 to 2^32 - 1"],
        );
    }
    // A full disk names the flag and the path, and says it once.
    if std::path::Path::new("/dev/full").exists() {
        let dir = std::env::temp_dir().join(format!("ldp-hardening-full-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("full.parquet");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("/dev/full", &link).unwrap();
        let stderr = fails(
            ldp()
                .args([
                    "perturb",
                    "--protocol",
                    "grr",
                    "--k",
                    "4",
                    "--eps",
                    "1",
                    "--overwrite",
                ])
                .arg("--output")
                .arg(&link)
                .write_stdin("1\n"),
            &["--output", "full.parquet", "No space left on device"],
        );
        assert_eq!(stderr.matches("No space left").count(), 1, "{stderr}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Issue 24, item 14: a flag that would do nothing is an error.
#[test]
fn flags_that_change_nothing_are_refused() {
    let cases: [(&[&str], &str); 8] = [
        (
            &["analyze", "--protocol", "grr", "--lh-asr", "exact"],
            "--lh-asr",
        ),
        (&["analyze", "--protocol", "she", "--beta", "0.2"], "--beta"),
        (
            &["analyze", "--protocol", "she", "--targets", "3"],
            "--targets",
        ),
        (
            &["tune", "--protocol", "aue", "--lh-asr", "exact"],
            "--lh-asr",
        ),
        (
            &["frontier", "--protocol", "aue", "--lh-asr", "exact"],
            "--lh-asr",
        ),
        (
            &[
                "frontier",
                "--protocol",
                "alh",
                "--lh-asr",
                "exact",
                "--objectives",
                "mse,bits",
            ],
            "--lh-asr",
        ),
        (
            &[
                "analyze",
                "--protocol",
                "l-grr",
                "--eps-perm",
                "2",
                "--lh-asr",
                "exact",
            ],
            "--lh-asr",
        ),
        (
            &[
                "analyze",
                "--protocol",
                "l-grr",
                "--eps-perm",
                "2",
                "--beta",
                "0.2",
            ],
            "--beta",
        ),
    ];
    for (args, flag) in cases {
        fails(ldp().args(args).args(["--k", "10", "--eps", "1"]), &[flag]);
    }
    // Where they matter, they are taken.
    for args in [
        &["analyze", "--protocol", "olh", "--lh-asr", "exact"][..],
        &[
            "analyze",
            "--protocol",
            "all",
            "--lh-asr",
            "exact",
            "--beta",
            "0.2",
        ],
        &["tune", "--protocol", "alh", "--lh-asr", "exact"],
    ] {
        ldp()
            .args(args)
            .args(["--k", "10", "--eps", "1"])
            .assert()
            .success();
    }
    let dir = std::env::temp_dir().join(format!("ldp-hardening-enc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    fails(
        ldp()
            .args([
                "perturb",
                "--protocol",
                "grr",
                "--k",
                "4",
                "--eps",
                "1",
                "--encoding",
                "list",
            ])
            .arg("--output")
            .arg(dir.join("x.parquet"))
            .write_stdin("1\n"),
        &["--encoding list", "grr reports are not sets"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 24, item 10: requests whose cost has no practical bound are refused before
/// running, saying what would fit.
#[test]
fn unbounded_requests_are_refused_before_running() {
    fails(
        ldp().args([
            "simulate",
            "--protocol",
            "grr",
            "--k",
            "100",
            "--eps",
            "1",
            "--dataset",
            "adult-age",
            "--runs",
            "1",
            "--poison",
            "mga",
            "--beta",
            "0.9999999999999999",
            "--targets",
            "1",
        ]),
        &["fake users", "beta at most 0.99995"],
    );
    let every: Vec<String> = (1..=1001).map(|t| t.to_string()).collect();
    fails(
        ldp()
            .args(["simulate", "--protocol", "grr", "--k", "100", "--eps", "1"])
            .args(["--dataset", "adult-age", "--runs", "1", "--collections"])
            .arg(every.join(",")),
        &["--collections", "at most 1000", "got 1001"],
    );
}

/// Issue 43, item 11: help written to a full disk is an error; to a closed pipe it is not.
#[cfg(target_os = "linux")]
#[test]
fn help_that_cannot_be_written_is_an_error() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("ldp"))
        .arg("--help")
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("ldp: error: writing the help"),
        "{stderr}"
    );
    let piped = std::process::Command::new("bash")
        .args([
            "-c",
            &format!(
                "set -o pipefail; {} --help | head -c 1 >/dev/null",
                assert_cmd::cargo::cargo_bin("ldp").display()
            ),
        ])
        .status()
        .unwrap();
    assert!(piped.success());
}

/// `ldp shuffle` (issue 46): each bad setting is one line naming it, and nothing is
/// printed for a list with one bad value.
#[test]
fn shuffle_settings_are_checked() {
    let shuffle = |args: &[&str]| {
        let mut cmd = ldp();
        cmd.arg("shuffle").args(args);
        cmd
    };
    fails(
        &mut shuffle(&["--users", "1", "--delta", "1e-6", "--eps0", "1"]),
        &["at least 2 reports, got 1"],
    );
    fails(
        &mut shuffle(&["--users", "1000,1", "--delta", "1e-6", "--eps0", "1"]),
        &["got 1"],
    );
    for delta in ["0", "1", "-0.5", "NaN"] {
        fails(
            &mut shuffle(&["--users", "100", "--delta", delta, "--eps0", "1"]),
            &["delta must lie strictly between 0 and 1"],
        );
    }
    for eps0 in ["0", "-1", "inf"] {
        fails(
            &mut shuffle(&["--users", "100", "--delta", "1e-6", "--eps0", eps0]),
            &["local epsilon eps0 must be positive and finite"],
        );
    }
    fails(
        &mut shuffle(&["--users", "100", "--delta", "1e-6", "--central-eps", "0"]),
        &["target central epsilon must be positive and finite, got 0"],
    );
    fails(
        &mut shuffle(&["--users", "100", "--delta", "1e-6"]),
        &["--eps0"],
    );
    fails(
        &mut shuffle(&[
            "--users",
            "100",
            "--delta",
            "1e-6",
            "--eps0",
            "1",
            "--central-eps",
            "1",
        ]),
        &["cannot be used with"],
    );
    for k in ["0", "1"] {
        fails(
            &mut shuffle(&[
                "--users", "100", "--delta", "1e-6", "--eps0", "1", "--grr", k,
            ]),
            &[&format!(
                "--grr: randomized response needs a domain of at least 2 items, got k = {k}"
            )],
        );
    }
    // `ldp tune` behind a shuffler: the same checks, named by the flags.
    let tune = |args: &[&str]| {
        let mut cmd = ldp();
        cmd.args(["tune", "--protocol", "all", "--k", "100"])
            .args(args);
        cmd
    };
    fails(
        &mut tune(&[
            "--shuffle-users",
            "1",
            "--delta",
            "1e-6",
            "--central-eps",
            "1",
        ]),
        &["--shuffle-users, --delta: a shuffle needs at least 2 reports"],
    );
    fails(
        &mut tune(&[
            "--shuffle-users",
            "100",
            "--delta",
            "1",
            "--central-eps",
            "1",
        ]),
        &["--shuffle-users, --delta: delta must lie strictly between 0 and 1"],
    );
    fails(
        &mut tune(&[
            "--shuffle-users",
            "100",
            "--delta",
            "1e-6",
            "--central-eps",
            "0",
        ]),
        &["--central-eps: the target central epsilon must be positive"],
    );
    fails(
        &mut tune(&["--shuffle-users", "100", "--central-eps", "1"]),
        &["--delta"],
    );
    fails(
        &mut tune(&["--eps", "1", "--central-eps", "1"]),
        &["cannot be used with"],
    );
}

/// `ldp analyze --shuffle-users` (issue 46): a bad batch is named, and memoized protocols
/// are refused (their rows have no one-report eps to shuffle).
#[test]
fn analyze_beside_a_shuffle_checks_its_flags() {
    let analyze = |args: &[&str]| {
        let mut cmd = ldp();
        cmd.args(["analyze", "--protocol", "grr", "--k", "10", "--eps", "1"])
            .args(args);
        cmd
    };
    fails(
        &mut analyze(&["--shuffle-users", "1", "--delta", "1e-6"]),
        &["--shuffle-users, --delta: a shuffle needs at least 2 reports"],
    );
    fails(&mut analyze(&["--shuffle-users", "100"]), &["--delta"]);
    let mut memoized = ldp();
    memoized.args([
        "analyze",
        "--protocol",
        "l-grr",
        "--k",
        "10",
        "--eps",
        "1",
        "--eps-perm",
        "2",
        "--shuffle-users",
        "100",
        "--delta",
        "1e-6",
    ]);
    fails(
        &mut memoized,
        &["--shuffle-users goes with one-shot protocols"],
    );
}

/// `ldp ledger` (issue 46): each bad survey, record, roster entry or flag is one line
/// naming its file and line.
#[test]
fn ledger_inputs_are_checked_by_line() {
    let surveys = items_file(
        "ledger-surveys.csv",
        "survey,eps,first_day,last_day,eps_perm\ndaily,0.5,1,30,\nmemo,0.4,1,30,2\n",
    );
    let run = |records: &str, extra: &[&str]| {
        let path = items_file("ledger-records.csv", records);
        let mut cmd = ldp();
        cmd.arg("ledger")
            .arg("--surveys")
            .arg(&surveys)
            .arg("--records")
            .arg(path)
            .args(extra);
        cmd
    };
    fails(
        &mut run("user,survey,day\nann,weekly,1\n", &[]),
        &["line 2: survey weekly is unknown (the surveys are daily, memo)"],
    );
    fails(
        &mut run("user,survey,day\nann,daily,31\n", &[]),
        &["line 2: survey daily runs on days 1..=30, not on day 31"],
    );
    fails(
        &mut run(
            "user,survey,day\nann,daily,3\nann,daily,4\nann,daily,3\n",
            &[],
        ),
        &["line 4: user ann already reported to survey daily on day 3"],
    );
    fails(
        &mut run("user,survey,day\nann,daily,x\n", &[]),
        &["line 2: day: invalid digit"],
    );
    let roster = items_file("ledger-roster.txt", "ann\n");
    let mut off_roster = run("user,survey,day\nann,daily,1\neve,daily,1\n", &[]);
    off_roster.arg("--roster").arg(roster);
    fails(&mut off_roster, &["line 3: user eve is not on the roster"]);
    fails(
        &mut run("user,survey,day\n", &["--delta", "1"]),
        &["--delta 1: delta must lie strictly between 0 and 1"],
    );
    fails(
        &mut run("user,survey,day\n", &["--limit", "-1"]),
        &["--limit -1: a budget limit must be finite and >= 0"],
    );
    let bad_memo = items_file(
        "ledger-bad-surveys.csv",
        "survey,eps,first_day,last_day,eps_perm\nmemo,1,1,30,0.5\n",
    );
    let mut cmd = ldp();
    cmd.arg("ledger")
        .arg("--surveys")
        .arg(bad_memo)
        .arg("--records")
        .arg(items_file("ledger-none.csv", "user,survey,day\n"));
    fails(
        &mut cmd,
        &["line 2: survey memo: eps_perm (at least its eps)"],
    );
}

/// Issue 43, item 3: `--json-bytes` holds one report at a time. SS at k = 10^6 took 2.1 GB
/// when it held its 2,000 sample reports; under a 1 GB address-space limit it now answers.
#[cfg(unix)]
#[test]
fn json_bytes_holds_one_report_at_a_time() {
    let bin = assert_cmd::cargo::cargo_bin("ldp");
    let script = format!(
        "ulimit -v 1000000; exec '{}' analyze --protocol ss --k 1000000 --eps 1 --json-bytes",
        bin.display()
    );
    let out = Process::new("sh").args(["-c", &script]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let last: f64 = text
        .lines()
        .nth(1)
        .unwrap()
        .rsplit(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // About 0.27 k indices of up to 7 digits: some 1.85 MB a report.
    assert!((1.5e6..2.5e6).contains(&last), "{last}");
}

/// Under `ulimit -v` the memory check compares with what is left of the process's
/// address space, not with the machine's free RAM (which would let the allocator abort).
#[cfg(unix)]
#[test]
fn memory_checks_respect_the_address_space_limit() {
    let bin = assert_cmd::cargo::cargo_bin("ldp");
    let items = items_file("items-rlimit.txt", "1\n2\n3\n");
    let script = format!(
        "ulimit -v 2500000; exec '{}' simulate --protocol grr --k 10 --eps 1 --items '{}' \
         --users 1000000000",
        bin.display(),
        items.display()
    );
    let out = Process::new("sh").args(["-c", &script]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--users 1000000000: needs"), "{err}");
    assert!(err.lines().count() == 1, "{err}");
}

/// Item 7: at a huge domain one report costs O(k), not O(k' k) (FLH's seeds, the
/// sketches' rows), and the audit's attack guesses by rejection where it scanned all k
/// items per report (HR, CMS, HCMS). Bounded by CPU time with a wide margin: before, each
/// of these took minutes of CPU at k = 2^21.
#[cfg(unix)]
#[test]
fn item07_huge_domains_cost_per_report_not_per_domain() {
    let bin = assert_cmd::cargo::cargo_bin("ldp");
    let bin = bin.display();
    let k = 1 << 21;
    for p in ["flh", "cms", "hcms"] {
        let script = format!(
            "ulimit -t 30; echo 0 | '{bin}' perturb --protocol {p} --k 16 --eps 1 --seed 1 \
             | '{bin}' aggregate --protocol {p} --k {k} --eps 1 | tail -n 1"
        );
        let out = Process::new("sh").args(["-c", &script]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.starts_with(&format!("{},", k - 1)),
            "{p}: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for p in ["hr", "flh", "cms", "hcms"] {
        let script = format!(
            "ulimit -t 30; exec '{bin}' audit --protocol {p} --k {k} --eps 1 --trials 1000 \
             --format csv"
        );
        let out = Process::new("sh").args(["-c", &script]).output().unwrap();
        assert!(
            out.status.success(),
            "{p}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).lines().count(),
            3,
            "{p}"
        );
    }
}

/// A negative number with a negative exponent reaches its flag's own check (clap took
/// `-1e-6` for a flag `-1`: "unexpected argument '-1'").
#[test]
fn negative_exponents_get_the_flags_own_error() {
    fails(
        ldp().args([
            "shuffle", "--users", "1000", "--delta", "-1e-6", "--eps0", "1",
        ]),
        &["delta"],
    );
    fails(
        ldp().args([
            "analyze",
            "--protocol",
            "grr",
            "--k",
            "10",
            "--eps",
            "1,-1e-3",
        ]),
        &["--eps", "-0.001"],
    );
}
