//! `ldp perturb --output FILE.parquet` and `ldp aggregate --input PATH`: the same
//! reports as JSON lines, the same estimate, and refusal of files of another mechanism.

use std::path::PathBuf;

use assert_cmd::Command;
use predicates::prelude::*;

fn ldp() -> Command {
    Command::cargo_bin("ldp").unwrap()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ldp-parquet-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn items(n: u32, k: u32) -> String {
    (0..n).map(|i| format!("{}\n", (i * 7) % k)).collect()
}

fn args(protocol: &str, k: u32, eps: &str) -> Vec<String> {
    ["--protocol", protocol, "--k", &k.to_string(), "--eps", eps]
        .map(String::from)
        .to_vec()
}

fn stdout(cmd: &mut Command) -> String {
    String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap()
}

#[test]
fn parquet_and_json_lines_give_the_same_estimate() {
    let d = dir("same");
    // 10 000 reports: more than two batches of 4096, so the streams continue across
    // chunks exactly as for JSON lines.
    let input = items(10_000, 40);
    for protocol in ["grr", "ss", "sue", "oue", "blh", "olh", "the", "she"] {
        let a = args(protocol, 40, "1.5");
        let file = d.join(format!("{protocol}.parquet"));
        ldp()
            .arg("perturb")
            .args(&a)
            .args(["--seed", "9", "--output"])
            .arg(&file)
            .write_stdin(input.clone())
            .assert()
            .success()
            .stdout(predicate::str::is_empty());
        let json = stdout(
            ldp()
                .arg("perturb")
                .args(&a)
                .args(["--seed", "9"])
                .write_stdin(input.clone()),
        );
        let from_json = stdout(ldp().arg("aggregate").args(&a).write_stdin(json));
        let from_parquet = stdout(ldp().arg("aggregate").args(&a).arg("--input").arg(&file));
        if protocol == "she" {
            // Float sums in another order: equal to rounding.
            for (x, y) in from_json.lines().zip(from_parquet.lines()).skip(1) {
                let x: f64 = x.split(',').nth(1).unwrap().parse().unwrap();
                let y: f64 = y.split(',').nth(1).unwrap().parse().unwrap();
                assert!((x - y).abs() < 1e-12, "{protocol}: {x} vs {y}");
            }
        } else {
            assert_eq!(from_json, from_parquet, "{protocol}");
        }
    }
}

#[test]
fn a_directory_aggregates_every_file_and_both_encodings() {
    let d = dir("directory");
    let a = args("oue", 64, "1");
    for (name, encoding) in [("a.parquet", "list"), ("sub/b.parquet", "bitmap")] {
        let file = d.join(name);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        ldp()
            .arg("perturb")
            .args(&a)
            .args(["--seed", "1", "--encoding", encoding, "--output"])
            .arg(&file)
            .write_stdin(items(3000, 64))
            .assert()
            .success();
    }
    // Both files hold the same reports, so the directory's estimate is the file's.
    let one = stdout(
        ldp()
            .arg("aggregate")
            .args(&a)
            .arg("--input")
            .arg(d.join("a.parquet")),
    );
    let both = stdout(ldp().arg("aggregate").args(&a).arg("--input").arg(&d));
    assert_eq!(one, both);
}

#[test]
fn a_file_of_another_mechanism_is_refused_by_name() {
    let d = dir("refused");
    let file = d.join("oue.parquet");
    ldp()
        .arg("perturb")
        .args(args("oue", 10, "1"))
        .arg("--output")
        .arg(&file)
        .write_stdin(items(10, 10))
        .assert()
        .success();
    ldp()
        .arg("aggregate")
        .args(args("oue", 10, "2"))
        .arg("--input")
        .arg(&file)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::contains("oue.parquet: the file holds reports of")
                .and(predicate::str::contains(r#""eps":1.0"#)),
        );
    ldp()
        .arg("aggregate")
        .args(args("oue", 10, "1"))
        .arg("--input")
        .arg(d.join("missing.parquet"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.parquet"));
}

#[test]
fn output_flags_that_would_do_nothing_are_refused() {
    ldp()
        .arg("perturb")
        .args(args("oue", 10, "1"))
        .args(["--output", "reports.json"])
        .write_stdin("1\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("must end in .parquet"));
    // Issue 43: `dir/.parquet` is a name missing, not an extension.
    ldp()
        .arg("perturb")
        .args(args("oue", 10, "1"))
        .args(["--output", "dir/.parquet"])
        .write_stdin("1\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs a name before .parquet"));
    ldp()
        .arg("perturb")
        .args(args("oue", 10, "1"))
        .args(["--encoding", "bitmap"])
        .write_stdin("1\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("only Parquet output"));
}
