//! Several attributes per user: `--attributes K1,K2,... --solution NAME` on `perturb` and
//! `aggregate`, and `simulate --dataset TABLE --solution NAME`.

use assert_cmd::Command;
use predicates::prelude::*;

fn ldp() -> Command {
    Command::cargo_bin("ldp").unwrap()
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).unwrap()
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

/// The domains of the small table below.
const DOMAINS: [u32; 3] = [3, 5, 2];

/// Its true frequencies: attribute 0 is (1/2, 1/4, 1/4), attribute 1 puts 0.6 on item 1
/// and 0.1 on each other item, attribute 2 is (0.8, 0.2).
const TRUTH: [&[f64]; 3] = [&[0.5, 0.25, 0.25], &[0.1, 0.6, 0.1, 0.1, 0.1], &[0.8, 0.2]];

/// `n` users (a multiple of 20) whose attributes follow [`TRUTH`] exactly, one JSON
/// array per line, the attributes' columns shuffled against each other by strides.
fn table(n: usize) -> String {
    let column = |f: &[f64]| -> Vec<u32> {
        let mut c = Vec::with_capacity(n);
        for (v, p) in f.iter().enumerate() {
            c.extend(std::iter::repeat_n(
                v as u32,
                (p * n as f64).round() as usize,
            ));
        }
        assert_eq!(c.len(), n);
        c
    };
    let columns: Vec<Vec<u32>> = TRUTH.iter().map(|f| column(f)).collect();
    let strides = [1usize, 7919, 104_729];
    (0..n)
        .map(|i| {
            let items: Vec<String> = columns
                .iter()
                .zip(strides)
                .map(|(c, s)| c[(i * s) % n].to_string())
                .collect();
            format!("[{}]\n", items.join(","))
        })
        .collect()
}

fn attributes() -> String {
    DOMAINS.map(|k| k.to_string()).join(",")
}

/// The flags of one client: `--attributes`, `--solution`, `--protocol`, `--eps`.
fn client(solution: &str, protocol: &str, eps: &str) -> Vec<String> {
    [
        "--attributes",
        &attributes(),
        "--solution",
        solution,
        "--protocol",
        protocol,
        "--eps",
        eps,
    ]
    .map(str::to_owned)
    .to_vec()
}

/// `attribute,item,estimate` rows, as one vector per attribute.
fn estimates(csv: &str) -> Vec<Vec<f64>> {
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("attribute,item,estimate"));
    let mut out: Vec<Vec<f64>> = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let (j, i): (usize, usize) = (cells[0].parse().unwrap(), cells[1].parse().unwrap());
        if j == out.len() {
            out.push(Vec::new());
        }
        assert_eq!((j, i), (out.len() - 1, out[j].len()), "{line}");
        out[j].push(cells[2].parse().unwrap());
    }
    out
}

fn prior_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ldp-multidim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Every solution, perturbed and aggregated through the binary, estimates each attribute
/// of a table of 30,000 users within 0.05 of its true frequencies (about five standard
/// errors at these budgets); the reports have the solution's shape.
#[test]
fn perturb_then_aggregate_estimates_every_attribute() {
    let users = table(30_000);
    // Deliberately not the truth: the estimate must not depend on the prior being right.
    let prior = prior_file(
        "prior.json",
        "[[0.4, 0.3, 0.3], [0.2, 0.2, 0.2, 0.2, 0.2], [0.5, 0.5]]",
    );
    let prior = prior.to_str().unwrap();
    for (solution, protocol, extra) in [
        ("spl", "oue", vec![]),
        ("smp", "grr", vec![]),
        ("rsfd", "olh", vec![]),
        ("rsfd-z", "oue", vec![]),
        ("rsrfd", "grr", vec!["--prior", prior]),
    ] {
        let flags = client(solution, protocol, "3");
        let reports = stdout(
            ldp()
                .arg("perturb")
                .args(&flags)
                .args(&extra)
                .args(["--seed", "5"])
                .write_stdin(users.clone()),
        );
        assert_eq!(reports.lines().count(), 30_000);
        let first: serde_json::Value =
            serde_json::from_str(reports.lines().next().unwrap()).unwrap();
        if solution == "smp" {
            assert!(
                first["sampled"]["attribute"].as_u64().unwrap() < 3,
                "{first}"
            );
        } else {
            assert_eq!(first["every"].as_array().unwrap().len(), 3, "{first}");
        }
        let est = estimates(&stdout(
            ldp()
                .arg("aggregate")
                .args(&flags)
                .args(&extra)
                .write_stdin(reports),
        ));
        assert_eq!(est.len(), 3, "{solution}");
        for (j, (e, f)) in est.iter().zip(TRUTH).enumerate() {
            assert_eq!(e.len(), DOMAINS[j] as usize);
            for (i, (x, t)) in e.iter().zip(f).enumerate() {
                assert!(
                    (x - t).abs() < 0.05,
                    "{solution}[{protocol}] attribute {j} item {i}: {x} vs {t}"
                );
            }
        }
    }
}

/// The estimators of one attribute apply to each: simplex gives distributions, and IBU
/// reads RS+FD's shifted channel.
#[test]
fn aggregate_honours_the_estimator() {
    let flags = client("rsfd", "grr", "2");
    let reports = stdout(
        ldp()
            .arg("perturb")
            .args(&flags)
            .args(["--seed", "1"])
            .write_stdin(table(10_000)),
    );
    for estimator in ["simplex", "ibu"] {
        let est = estimates(&stdout(
            ldp()
                .arg("aggregate")
                .args(&flags)
                .args(["--estimator", estimator])
                .write_stdin(reports.clone()),
        ));
        for (j, e) in est.iter().enumerate() {
            assert!(
                (e.iter().sum::<f64>() - 1.0).abs() < 1e-6 && e.iter().all(|&x| x >= 0.0),
                "{estimator}: attribute {j}: {e:?}"
            );
        }
    }
}

/// With a seed, the same users give the same reports line for line (also when the input
/// spans several batches of 4096 users); without, they differ.
#[test]
fn seeded_perturb_is_reproducible() {
    let users = table(10_000);
    let run = |seed: Option<&str>| {
        let mut c = ldp();
        c.arg("perturb").args(client("rsfd", "sue", "1"));
        if let Some(s) = seed {
            c.args(["--seed", s]);
        }
        stdout(c.write_stdin(users.clone()))
    };
    let seeded = run(Some("3"));
    assert_eq!(seeded.lines().count(), 10_000);
    assert_eq!(seeded, run(Some("3")));
    assert_ne!(seeded, run(Some("4")));
    assert_ne!(run(None), run(None));
}

/// Each bad input is refused with one line naming what is wrong: the line and the
/// attribute, the flag, or the library's reason.
#[test]
fn bad_input_gets_its_named_error() {
    let perturb = |solution: &str, protocol: &str, input: &str| {
        let mut c = ldp();
        c.arg("perturb")
            .args(client(solution, protocol, "1"))
            .write_stdin(input.to_owned());
        c
    };
    // A user with the wrong number of items, or an item outside its attribute's domain.
    fails(
        &mut perturb("rsfd", "grr", "[1, 2]\n"),
        &["line 1", "expected 3 items, one per attribute, got 2"],
    );
    fails(
        &mut perturb("smp", "grr", "[1, 5, 0]\n"),
        &["line 1", "attribute 1: item 5 is outside the domain 0..5"],
    );
    fails(
        &mut perturb("smp", "grr", "[1, 2, 99999999999]\n"),
        &[
            "line 1",
            "attribute 2: item 99999999999 is outside the domain 0..2",
        ],
    );
    fails(
        &mut perturb("spl", "grr", "1,2,0\n"),
        &["line 1", "`1,2,0` is not a JSON array of items"],
    );
    // The reports above a bad line are written, and the error names the line.
    perturb("spl", "grr", "[0,0,0]\n[0,0,0]\n[0,0,2]\n")
        .assert()
        .code(2)
        .stdout(predicate::function(|out: &str| out.lines().count() == 2))
        .stderr(predicate::str::contains("line 3: attribute 2: item 2"));
    // A report naming an attribute that does not exist, or with too few attributes.
    let aggregate = |solution: &str, input: &str| {
        let mut c = ldp();
        c.arg("aggregate")
            .args(client(solution, "grr", "1"))
            .write_stdin(input.to_owned());
        c
    };
    fails(
        &mut aggregate(
            "smp",
            "{\"sampled\":{\"attribute\":3,\"report\":{\"y\":1}}}\n",
        ),
        &["line 1", "field `attribute`: value 3 is outside 0..3"],
    );
    fails(
        &mut aggregate("rsfd", "{\"every\":[{\"y\":1},{\"y\":1}]}\n"),
        &["line 1", "field `every`: expected 3 entries, found 2"],
    );
    fails(
        &mut aggregate("rsfd", "{\"every\":[{\"y\":1},{\"y\":7},{\"y\":0}]}\n"),
        &["line 1", "attribute 1: field `y`: value 7 is outside 0..5"],
    );
    fails(
        &mut aggregate(
            "rsfd",
            "{\"sampled\":{\"attribute\":0,\"report\":{\"y\":1}}}\n",
        ),
        &["line 1", "a report per attribute"],
    );
    // The library refuses RS+FD-z for a family without a report of no item.
    fails(
        &mut perturb("rsfd-z", "grr", ""),
        &[
            "--solution rsfd-z --protocol grr",
            "RS+FD-z needs a report of no item, which the Grr family does not have",
        ],
    );
    // RS+RFD's priors: one per attribute over its domain, each summing to one.
    let not_one = prior_file(
        "not-one.json",
        "[[0.5, 0.25, 0.2], [0.2, 0.2, 0.2, 0.2, 0.2], [0.5, 0.5]]",
    );
    fails(
        perturb("rsrfd", "grr", "").arg("--prior").arg(&not_one),
        &[
            "--prior",
            "prior of attribute 0: its values sum to 0.95, not 1",
        ],
    );
    let short = prior_file(
        "short.json",
        "[[0.5, 0.5], [0.2, 0.2, 0.2, 0.2, 0.2], [0.5, 0.5]]",
    );
    fails(
        perturb("rsrfd", "grr", "").arg("--prior").arg(&short),
        &[
            "--prior",
            "the prior of attribute 0 has 2 weights, but its domain has 3 items",
        ],
    );
    let not_json = prior_file("not-json.json", "0.5\n0.5\n");
    fails(
        perturb("rsrfd", "grr", "").arg("--prior").arg(&not_json),
        &["--prior", "not a JSON array of arrays"],
    );
    fails(
        &mut perturb("rsrfd", "grr", ""),
        &["--solution rsrfd", "add --prior FILE"],
    );
    fails(
        perturb("rsfd", "grr", "").arg("--prior").arg(&short),
        &["--prior: only --solution rsrfd"],
    );
    // --solution without --attributes, and the reverse, and both --k and --attributes.
    for command in ["perturb", "aggregate"] {
        fails(
            ldp().args([
                command,
                "--protocol",
                "grr",
                "--k",
                "4",
                "--eps",
                "1",
                "--solution",
                "smp",
            ]),
            &["--solution", "--attributes"],
        );
        fails(
            ldp().args([
                command,
                "--protocol",
                "grr",
                "--eps",
                "1",
                "--solution",
                "smp",
            ]),
            &["--attributes"],
        );
        fails(
            ldp().args([
                command,
                "--protocol",
                "grr",
                "--eps",
                "1",
                "--attributes",
                "3,4",
            ]),
            &["--solution"],
        );
        fails(
            ldp().args([
                command,
                "--protocol",
                "grr",
                "--k",
                "4",
                "--eps",
                "1",
                "--attributes",
                "3,4",
                "--solution",
                "smp",
            ]),
            &["--attributes", "--k"],
        );
        fails(
            ldp().args([
                command,
                "--protocol",
                "grr",
                "--eps",
                "1",
                "--attributes",
                "3,1",
                "--solution",
                "smp",
            ]),
            &["--attributes: attribute 1: k 1"],
        );
    }
    // Domains whose server cannot fit in memory (2.4 PiB of counters) are refused first.
    let huge = vec!["16777216"; 10_000].join(",");
    fails(
        ldp().args([
            "perturb",
            "--protocol",
            "oue",
            "--eps",
            "1",
            "--solution",
            "spl",
            "--attributes",
            &huge,
        ]),
        &["--attributes: 167772160000 items in all", "memory"],
    );
    // Parquet output's checks hold for several attributes too.
    fails(
        perturb("spl", "grr", "").args(["--output", "x.json"]),
        &["--output x.json", "must end in .parquet"],
    );
    fails(
        perturb("spl", "grr", "").args(["--output", "x.parquet", "--encoding", "bitmap"]),
        &["--encoding bitmap", "grr reports are not sets"],
    );
    fails(
        perturb("spl", "oue", "").args(["--encoding", "list"]),
        &["--encoding", "only Parquet output"],
    );
    fails(
        ldp().arg("aggregate").args(client("spl", "she", "1")),
        &["--protocol she", "--she-clip none"],
    );
}

fn parquet_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("ldp-multidim-parquet-{}", std::process::id()))
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every solution's reports written to Parquet by a seeded `perturb --output` aggregate,
/// from the file and from its directory, to exactly the estimates of the same seeded
/// run's JSON lines.
#[test]
fn parquet_reports_estimate_as_the_json_lines_of_the_same_run() {
    // Two batches of 4,096 users and a part of a third.
    let users = table(9000);
    let prior = prior_file(
        "prior-parquet.json",
        "[[0.4, 0.3, 0.3], [0.2, 0.2, 0.2, 0.2, 0.2], [0.5, 0.5]]",
    );
    let prior = prior.to_str().unwrap();
    for (solution, protocol, extra) in [
        ("spl", "oue", vec!["--encoding", "bitmap"]),
        ("smp", "grr", vec![]),
        ("smp", "oue", vec!["--encoding", "list"]),
        ("rsfd", "olh", vec![]),
        ("rsfd-z", "oue", vec![]),
        ("rsrfd", "grr", vec!["--prior", prior]),
    ] {
        let flags = client(solution, protocol, "2");
        let server_flags: Vec<&str> = extra
            .iter()
            .copied()
            .filter(|f| *f == "--prior" || *f == prior)
            .collect();
        let json = stdout(
            ldp()
                .arg("perturb")
                .args(&flags)
                .args(&server_flags)
                .args(["--seed", "8"])
                .write_stdin(users.clone()),
        );
        let dir = parquet_dir(&format!("{solution}-{protocol}"));
        let file = dir.join("reports.parquet");
        let written = stdout(
            ldp()
                .arg("perturb")
                .args(&flags)
                .args(&extra)
                .args(["--seed", "8", "--output"])
                .arg(&file)
                .write_stdin(users.clone()),
        );
        assert_eq!(written, "", "{solution}");
        let from_json = stdout(
            ldp()
                .arg("aggregate")
                .args(&flags)
                .args(&server_flags)
                .write_stdin(json),
        );
        assert_eq!(estimates(&from_json).len(), 3);
        for input in [&file, &dir] {
            let from_parquet = stdout(
                ldp()
                    .arg("aggregate")
                    .args(&flags)
                    .args(&server_flags)
                    .arg("--input")
                    .arg(input),
            );
            assert_eq!(from_parquet, from_json, "{solution} {protocol} {input:?}");
        }
    }
}

/// An SMP file (GRR, the layout of `ldp_arrow::multidim`) whose row 1 holds the reports
/// of two attributes: refused by name, or skipped and counted.
#[test]
fn a_bad_parquet_row_is_refused_or_skipped() {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
    use ldp_arrow::SetEncoding;
    use ldp_arrow::multidim::{multidim_schema, multidim_writer_properties};
    use ldp_core::multidim::{Multidim, Solution};
    use ldp_core::{DomainSize, Epsilon, Grr};

    let domains = DOMAINS.map(|k| DomainSize::new(k).unwrap());
    let smp = Multidim::new(
        Solution::Smp,
        Epsilon::new(1.0).unwrap(),
        &domains,
        Grr::new,
    )
    .unwrap();
    let schema = Arc::new(multidim_schema(&smp, SetEncoding::List).unwrap());
    let columns: Vec<ArrayRef> = [
        vec![Some(1), Some(2), None, None],
        vec![None, Some(4), Some(0), None],
        vec![None, None, None, Some(1)],
    ]
    .into_iter()
    .map(|c| Arc::new(UInt32Array::from(c)) as ArrayRef)
    .collect();
    let file = parquet_dir("bad").join("smp.parquet");
    let props = multidim_writer_properties(&smp, SetEncoding::List).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&file).unwrap(),
        schema.clone(),
        Some(props),
    )
    .unwrap();
    w.write(&RecordBatch::try_new(schema, columns).unwrap())
        .unwrap();
    w.close().unwrap();
    let aggregate = || {
        let mut c = ldp();
        c.arg("aggregate")
            .args(client("smp", "grr", "1"))
            .arg("--input")
            .arg(&file);
        c
    };
    fails(
        &mut aggregate(),
        &[
            "reports rejected, nothing aggregated",
            "smp.parquet: row 1: an SMP report holds the report of exactly one attribute, but 2 of its 3 columns hold one",
        ],
    );
    let out = aggregate()
        .args(["--on-invalid", "skip"])
        .assert()
        .success();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let at = format!("1 length (first at {} row 1: an SMP report", file.display());
    assert!(
        stderr.contains("ldp: aggregated 3 reports, skipped 1: ") && stderr.contains(&at),
        "{stderr}"
    );
    let est = estimates(&String::from_utf8(out.get_output().stdout.clone()).unwrap());
    assert_eq!(
        est.iter().map(Vec::len).collect::<Vec<_>>(),
        DOMAINS.map(|k| k as usize)
    );
}

/// An adaptive protocol is tuned for each attribute's domain at the per-report budget,
/// and the tuning is noted per attribute.
#[test]
fn adaptive_protocols_are_tuned_per_attribute() {
    let out = ldp()
        .arg("perturb")
        .args(client("rsfd", "ass", "2"))
        .args(["--seed", "1"])
        .write_stdin("[0,1,1]\n")
        .assert()
        .success();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    for (j, k) in DOMAINS.iter().enumerate() {
        assert!(
            stderr.contains(&format!("ldp: attribute {j}: ass tuned at k = {k}")),
            "{stderr}"
        );
    }
}

/// Skip mode leaves invalid reports out and counts them by reason, as for one attribute.
#[test]
fn skip_mode_counts_invalid_reports() {
    let flags = client("rsfd", "grr", "2");
    let mut reports = stdout(
        ldp()
            .arg("perturb")
            .args(&flags)
            .args(["--seed", "2"])
            .write_stdin(table(1000)),
    );
    reports.push_str("{\"every\":[{\"y\":1},{\"y\":9},{\"y\":0}]}\nnot json\n");
    let out = ldp()
        .arg("aggregate")
        .args(&flags)
        .args(["--on-invalid", "skip"])
        .write_stdin(reports)
        .assert()
        .success();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("ldp: aggregated 1000 reports, skipped 2: 1 malformed (first at line 1002")
            && stderr.contains("1 out-of-range (first at line 1001: attribute 1: field `y`"),
        "{stderr}"
    );
    assert_eq!(
        estimates(&String::from_utf8(out.get_output().stdout.clone()).unwrap()).len(),
        3
    );
}

/// CSV rows of `simulate`, as maps from column to cell.
fn csv_rows(csv: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut lines = csv.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(str::to_owned))
                .collect()
        })
        .collect()
}

fn simulate(args: &[&str]) -> Command {
    let mut c = ldp();
    c.arg("simulate").args(args);
    c
}

/// ACSEmployment under RS+FD[GRR]: one row per attribute, in the table's order, with its
/// domain, a small MSE, an ASR between 0 and 1 that the joint ASR does not exceed, and
/// the attribute-inference accuracy above its baseline 1/18; seeded, so reproducible.
#[test]
fn simulate_prints_one_row_per_attribute() {
    let args = [
        "--dataset",
        "acs-employment",
        "--solution",
        "rsfd",
        "--protocol",
        "grr",
        "--eps",
        "1",
        "--seed",
        "1",
        "--runs",
        "2",
    ];
    let out = stdout(&mut simulate(&args));
    assert_eq!(out, stdout(&mut simulate(&args)));
    let table = ldp_attack::Table::acs_employment();
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 18, "{out}");
    let num = |r: &std::collections::HashMap<String, String>, c: &str| -> f64 {
        r[c].parse().unwrap_or_else(|_| panic!("{c}: {:?}", r[c]))
    };
    for (j, r) in rows.iter().enumerate() {
        assert_eq!(r["attribute"], table.names()[j]);
        assert_eq!(num(r, "k"), f64::from(table.domain_sizes()[j].get()));
        assert!(num(r, "mse") < 0.05, "{r:?}");
        let asr = num(r, "asr");
        assert!(asr > 0.0 && asr < 1.0, "{r:?}");
        assert!(num(r, "joint_asr") <= asr, "{r:?}");
        assert!((num(r, "inference_baseline") - 1.0 / 18.0).abs() < 1e-12);
        assert!(num(r, "inference") > 2.0 / 18.0, "{r:?}");
        assert!(num(r, "mse_se") > 0.0 && num(r, "inference_se") >= 0.0);
    }
    // The attributes asked for, in that order; SMP hides no sampled attribute.
    let out = stdout(&mut simulate(&[
        "--dataset",
        "adult",
        "--attributes-of",
        "sex,race",
        "--solution",
        "smp",
        "--protocol",
        "oue",
        "--eps",
        "2",
        "--runs",
        "1",
    ]));
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0]["attribute"].as_str(), rows[0]["k"].as_str()),
        ("sex", "2")
    );
    assert_eq!(
        (rows[1]["attribute"].as_str(), rows[1]["k"].as_str()),
        ("race", "5")
    );
    for r in &rows {
        assert_eq!((r["inference"].as_str(), r["mse_se"].as_str()), ("", ""));
    }
}

/// A table of one's own, and RS+RFD with the table's marginals as priors.
#[test]
fn simulate_reads_a_csv_table_and_rsrfd_priors() {
    let mut csv = String::from("colour,size\n");
    for i in 0..2000 {
        let colour = ["red", "red", "blue", "green"][i % 4];
        let size = ["S", "L", "L"][i % 3];
        csv.push_str(&format!("{colour},{size}\n"));
    }
    let path = prior_file("table.csv", &csv);
    let out = stdout(&mut simulate(&[
        "--dataset",
        path.to_str().unwrap(),
        "--solution",
        "rsrfd",
        "--prior-from-data",
        "--protocol",
        "grr",
        "--eps",
        "2",
        "--runs",
        "1",
    ]));
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0]["attribute"].as_str(), rows[0]["k"].as_str()),
        ("colour", "3")
    );
    assert_eq!(
        (rows[1]["attribute"].as_str(), rows[1]["k"].as_str()),
        ("size", "2")
    );
    assert_eq!(rows[0]["inference_baseline"], "0.5");
}

#[test]
fn simulate_refuses_what_several_attributes_cannot_take() {
    let base = ["--protocol", "grr", "--eps", "1", "--runs", "1"];
    fails(
        simulate(&base).args(["--dataset", "adult-age", "--solution", "smp"]),
        &["--dataset adult-age is one attribute"],
    );
    fails(
        simulate(&base).args(["--dataset", "adult", "--k", "3"]),
        &["--dataset adult", "add --solution"],
    );
    fails(
        simulate(&base).args(["--dataset", "adult", "--solution", "smp", "--k", "3"]),
        &["--k does not apply"],
    );
    fails(
        simulate(&base).args([
            "--dataset",
            "adult",
            "--solution",
            "smp",
            "--attributes-of",
            "sex,height",
        ]),
        &["--attributes-of height", "no such attribute"],
    );
    fails(
        simulate(&base).args(["--dataset", "adult", "--solution", "rsrfd"]),
        &["--solution rsrfd", "--prior-from-data"],
    );
    fails(
        simulate(&base).args([
            "--dataset",
            "adult",
            "--solution",
            "rsfd",
            "--prior-from-data",
        ]),
        &["--prior-from-data: only --solution rsrfd"],
    );
    fails(
        simulate(&base).args(["--dataset", "adult", "--solution", "rsfd-z"]),
        &["RS+FD-z needs a report of no item"],
    );
    fails(
        simulate(&base).args(["--dataset", "tables.txt", "--solution", "rsfd"]),
        &["--dataset", "FILE.csv"],
    );
    fails(simulate(&base).args(["--solution", "rsfd"]), &["--dataset"]);
    let ragged = prior_file("ragged.csv", "a,b\n1,2\n1\n");
    fails(
        simulate(&base)
            .args(["--solution", "rsfd", "--dataset"])
            .arg(&ragged),
        &["--dataset", "line 3: 1 fields, expected 2"],
    );
}

/// `ldp analyze --attributes`: a row per solution x protocol x budget, filtered by the
/// bounds and sorted as asked; SMP at the full budget has the lowest MSE.
#[test]
fn analyze_prints_the_closed_forms_of_every_client() {
    let out = stdout(ldp().args([
        "analyze",
        "--attributes",
        "74,7,16",
        "--solution",
        "spl,smp,rsfd",
        "--protocol",
        "grr,oue",
        "--eps",
        "2,4",
        "--surveys",
        "3",
        "--sort",
        "mse",
    ]));
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 12, "{out}");
    let mse: Vec<f64> = rows.iter().map(|r| r["mse"].parse().unwrap()).collect();
    assert!(mse.windows(2).all(|w| w[0] <= w[1]), "sorted by mse");
    assert_eq!(rows[0]["solution"], "smp");
    for r in &rows {
        assert_eq!(r["profiled"].is_empty(), r["solution"] != "smp", "{r:?}");
    }
    // A bound on the profile keeps SMP rows at most that often right, and the others.
    let bounded = stdout(ldp().args([
        "analyze",
        "--attributes",
        "74,7,16",
        "--solution",
        "smp,spl",
        "--protocol",
        "grr,oue",
        "--eps",
        "6",
        "--surveys",
        "3",
        "--profiled-max",
        "0.05",
    ]));
    let kept = csv_rows(&bounded);
    assert!(kept.iter().any(|r| r["solution"] == "spl"));
    for r in kept.iter().filter(|r| r["solution"] == "smp") {
        assert!(r["profiled"].parse::<f64>().unwrap() <= 0.05);
    }
    assert!(
        !kept
            .iter()
            .any(|r| r["solution"] == "smp" && r["protocol"] == "grr")
    );
    // `all`: rsfd-z with GRR cannot be formed; its rows fail by name, the others print.
    let out = ldp()
        .args([
            "analyze",
            "--attributes",
            "4,3",
            "--solution",
            "all",
            "--protocol",
            "grr,oue",
        ])
        .args(["--eps", "1"])
        .assert()
        .code(2);
    let printed = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert_eq!(csv_rows(&printed).len(), 7, "{printed}");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("RS+FD-z needs a report of no item"),
        "{stderr}"
    );
}

#[test]
fn analyze_refuses_what_several_attributes_cannot_take() {
    let base = [
        "analyze",
        "--attributes",
        "4,3",
        "--protocol",
        "grr",
        "--eps",
        "1",
    ];
    fails(
        ldp().args(base).args(["--solution", "rsrfd"]),
        &["--solution rsrfd", "priors"],
    );
    fails(ldp().args(base), &["--solution"]);
    fails(
        ldp().args(base).args(["--solution", "smp", "--json-bytes"]),
        &["--json-bytes", "several attributes"],
    );
    fails(
        ldp()
            .args(base)
            .args(["--solution", "smp", "--asr-joint-max", "2"]),
        &["--asr-joint-max 2", "[0, 1]"],
    );
    fails(
        ldp().args([
            "analyze",
            "--k",
            "4",
            "--protocol",
            "grr",
            "--eps",
            "1",
            "--solution",
            "smp",
        ]),
        &["--solution"],
    );
}

/// `ldp tune --attributes`: the lowest-MSE client meeting the bounds, and why; none when
/// none meets them.
#[test]
fn tune_chooses_the_most_accurate_client_within_the_bounds() {
    let base = [
        "tune",
        "--attributes",
        "74,7,16",
        "--solution",
        "all",
        "--protocol",
        "grr,oue,olh",
        "--eps",
        "6",
        "--surveys",
        "3",
    ];
    let free = csv_rows(&stdout(ldp().args(base)));
    assert_eq!(free.len(), 1);
    assert_eq!(free[0]["solution"], "smp");
    assert!(free[0]["reason"].contains("lowest MSE"), "{:?}", free[0]);
    let bounded = csv_rows(&stdout(ldp().args(base).args(["--profiled-max", "0.05"])));
    let row = &bounded[0];
    assert!(row["reason"].contains("meeting the bounds"), "{row:?}");
    assert!(row["profiled"].is_empty() || row["profiled"].parse::<f64>().unwrap() <= 0.05);
    assert!(row["mse"].parse::<f64>().unwrap() >= free[0]["mse"].parse::<f64>().unwrap());
    fails(
        ldp().args(base).args(["--asr-joint-max", "0"]),
        &["no solution x protocol meets the bounds"],
    );
}
