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

/// Tagged reports (issue 46): `perturb --user --survey --day` writes the tags in JSON lines
/// and Parquet; aggregation ignores them (the same estimate as untagged); `ldp ledger
/// --reports` reads them and gives what `--records` gives for the same reports.
#[test]
fn tagged_reports_aggregate_as_untagged_and_feed_the_ledger() {
    let d = dir("tagged");
    let a = args("olh", 20, "1");
    let input = items(3000, 20);
    let plain = stdout(
        ldp()
            .arg("perturb")
            .args(&a)
            .args(["--seed", "4"])
            .write_stdin(input.clone()),
    );
    let tagged = stdout(
        ldp()
            .arg("perturb")
            .args(&a)
            .args([
                "--seed", "4", "--user", "ann", "--survey", "daily", "--day", "3",
            ])
            .write_stdin(input.clone()),
    );
    let first = tagged.lines().next().unwrap();
    assert!(
        first.starts_with(r#"{"user":"ann","survey":"daily","day":3,"seed":"#),
        "{first}"
    );
    // The same reports once the tags are taken off.
    let untagged: String = tagged
        .lines()
        .map(|l| l.replacen(r#""user":"ann","survey":"daily","day":3,"#, "", 1) + "\n")
        .collect();
    assert_eq!(untagged, plain);
    let estimate = |reports: &str| {
        stdout(
            ldp()
                .arg("aggregate")
                .args(&a)
                .write_stdin(reports.to_owned()),
        )
    };
    assert_eq!(estimate(&tagged), estimate(&plain));
    let attack = |reports: &str| {
        stdout(
            ldp()
                .arg("attack")
                .args(&a)
                .args(["--seed", "1"])
                .write_stdin(reports.to_owned()),
        )
    };
    assert_eq!(attack(&tagged), attack(&plain));
    // Parquet: tag columns beside `report`, the same estimate.
    let file = d.join("bob.parquet");
    ldp()
        .arg("perturb")
        .args(&a)
        .args([
            "--seed", "4", "--user", "bob", "--survey", "weekly", "--day", "7", "--output",
        ])
        .arg(&file)
        .write_stdin(input.clone())
        .assert()
        .success();
    let from_parquet = stdout(ldp().arg("aggregate").args(&a).arg("--input").arg(&file));
    assert_eq!(from_parquet, estimate(&plain));
    // The ledger: one report per user, survey and day.
    let surveys = d.join("surveys.csv");
    std::fs::write(
        &surveys,
        "survey,eps,first_day,last_day\ndaily,1,1,30\nweekly,2,1,30\n",
    )
    .unwrap();
    let mut lines = String::new();
    let mut records = String::from("user,survey,day\n");
    for day in 1..=4 {
        let one = stdout(
            ldp()
                .arg("perturb")
                .args(&a)
                .args([
                    "--user",
                    "ann",
                    "--survey",
                    "daily",
                    "--day",
                    &day.to_string(),
                ])
                .write_stdin("5\n"),
        );
        lines.push_str(&one);
        records.push_str(&format!("ann,daily,{day}\n"));
    }
    let one_bob = d.join("one-bob.parquet");
    ldp()
        .arg("perturb")
        .args(&a)
        .args([
            "--user", "bob", "--survey", "weekly", "--day", "2", "--output",
        ])
        .arg(&one_bob)
        .write_stdin("1\n")
        .assert()
        .success();
    records.push_str("bob,weekly,2\n");
    let (jsonl, csv) = (d.join("ann.jsonl"), d.join("records.csv"));
    std::fs::write(&jsonl, lines).unwrap();
    std::fs::write(&csv, records).unwrap();
    let ledger = |extra: &[&std::path::Path], flag: &str| {
        let mut cmd = ldp();
        cmd.args(["ledger", "--delta", "1e-6", "--surveys"])
            .arg(&surveys);
        for path in extra {
            cmd.arg(flag).arg(path);
        }
        stdout(&mut cmd)
    };
    let from_reports = ledger(&[&jsonl, &one_bob], "--reports");
    assert_eq!(from_reports, ledger(&[&csv], "--records"));
    assert!(from_reports.contains("\nann,4,4,4,"), "{from_reports}");
    // Reports without their tags, or tags on several attributes' reports: named.
    let bare = d.join("bare.jsonl");
    std::fs::write(&bare, &plain).unwrap();
    ldp()
        .args(["ledger", "--surveys"])
        .arg(&surveys)
        .arg("--reports")
        .arg(&bare)
        .assert()
        .failure()
        .stderr(predicate::str::contains(format!(
            "--reports {}: line 1: the report lacks the tags user, survey, day",
            bare.display()
        )));
    ldp()
        .args([
            "perturb",
            "--protocol",
            "grr",
            "--k",
            "2",
            "--eps",
            "1",
            "--user",
        ])
        .arg("u".repeat(300))
        .write_stdin("0\n")
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "--user: an id of at most 256 bytes, got 300",
        ));
    // The longest ids allowed, every byte escaped, still fit the readers' cap.
    let long = "\u{1}".repeat(256);
    let line = stdout(
        ldp()
            .args([
                "perturb",
                "--protocol",
                "grr",
                "--k",
                "2",
                "--eps",
                "1",
                "--day",
                "4294967295",
                "--user",
            ])
            .arg(&long)
            .arg("--survey")
            .arg(&long)
            .write_stdin("0\n1\n"),
    );
    assert!(line.len() > 3000, "{}", line.len());
    stdout(
        ldp()
            .args(["aggregate", "--protocol", "grr", "--k", "2", "--eps", "1"])
            .write_stdin(line),
    );
    ldp()
        .args([
            "perturb",
            "--protocol",
            "grr",
            "--attributes",
            "3,4",
            "--solution",
            "spl",
            "--eps",
            "1",
            "--day",
            "2",
        ])
        .write_stdin("0,1\n")
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "--user, --survey, --day: tags go with one attribute's reports",
        ));
}
