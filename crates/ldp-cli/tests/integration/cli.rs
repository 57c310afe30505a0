//! The `ldp` binary, end to end.

use assert_cmd::Command;
use predicates::prelude::*;

fn ldp() -> Command {
    Command::cargo_bin("ldp").unwrap()
}

/// Every protocol of the registry: what `--protocol all` names.
fn protocols() -> Vec<&'static str> {
    ldp_core::Protocol::ALL
        .map(ldp_core::Protocol::name)
        .to_vec()
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn analyze_prints_every_combination() {
    let out = stdout(ldp().args([
        "analyze",
        "--protocol",
        "all",
        "--k",
        "10,100",
        "--eps",
        "1,4",
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "protocol,k,eps,param,asr,mse,bias,epg,bits,server_cost,client_cost"
    );
    assert_eq!(lines.len(), 1 + protocols().len() * 2 * 2);
    for p in protocols() {
        assert!(lines.iter().any(|l| l.starts_with(&format!("{p},"))), "{p}");
    }
    // Fixed-parameter protocols leave param empty; SHE leaves epg empty.
    assert!(lines.iter().any(|l| l.starts_with("grr,10,1,,")));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("she,100,4,,") && l.contains(",,6400,100,200"))
    );
    assert!(lines.iter().any(|l| l.starts_with("olh,100,4,56,")));
    // The exact LH form, and JSON and table output.
    let exact = stdout(ldp().args([
        "analyze",
        "--protocol",
        "olh",
        "--k",
        "100",
        "--eps",
        "4",
        "--lh-asr",
        "exact",
    ]));
    let asr: f64 = exact
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(4)
        .unwrap()
        .parse()
        .unwrap();
    assert!((asr - 0.234).abs() < 1e-3);
    // Issue 43: where OLH's two forms coincide (k = 2^24, eps = 10) the refusal says so,
    // not that OLH is not local hashing.
    ldp()
        .args([
            "analyze",
            "--protocol",
            "olh",
            "--k",
            "16777216",
            "--eps",
            "10",
        ])
        .args(["--lh-asr", "exact"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "local hashing's paper and exact ASR are equal at this k and eps",
        ));
    let json: serde_json::Value = serde_json::from_str(&stdout(ldp().args([
        "analyze",
        "--protocol",
        "ss",
        "--k",
        "100",
        "--eps",
        "4",
        "--format",
        "json",
    ])))
    .unwrap();
    assert_eq!(json[0]["param"], 2);
    assert_eq!(json[0]["k"], 100);
    assert!(
        stdout(ldp().args([
            "analyze",
            "--protocol",
            "ss",
            "--k",
            "100",
            "--eps",
            "4",
            "--format",
            "table"
        ]))
        .contains("protocol")
    );
    // Explicit parameter and poisoning setting.
    let out = stdout(ldp().args([
        "analyze",
        "--protocol",
        "ss",
        "--k",
        "100",
        "--eps",
        "4",
        "--param",
        "7",
        "--beta",
        "0.1",
        "--targets",
        "3",
        "--target-mass",
        "0.05",
    ]));
    assert!(out.lines().nth(1).unwrap().starts_with("ss,100,4,7,"));
}

#[test]
fn tune_prints_the_papers_appendix_parameters() {
    for (p, want) in [("aue", 0.818), ("alh", 13.0), ("ass", 7.0), ("athe", 0.783)] {
        let out = stdout(ldp().args(["tune", "--protocol", p, "--k", "100", "--eps", "4"]));
        let row: Vec<&str> = out.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(row[3], "weighted");
        let param: f64 = row[4].parse().unwrap();
        assert!((param - want).abs() < 5e-4, "{p}: {param}");
    }
    let out = stdout(ldp().args([
        "tune",
        "--protocol",
        "aue",
        "--k",
        "100",
        "--eps",
        "4",
        "--search",
        "refined",
        "--strategy",
        "utopia",
        "--format",
        "json",
    ]));
    assert!(out.contains("\"strategy\": \"utopia\""));
    // An unreachable ASR bound falls back to the utopia point, and says so.
    ldp()
        .args([
            "tune",
            "--protocol",
            "alh",
            "--k",
            "100",
            "--eps",
            "4",
            "--asr-max",
            "0.001",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("utopia"));
}

#[test]
fn frontier_lists_non_dominated_points() {
    let out = stdout(ldp().args(["frontier", "--protocol", "alh", "--k", "100", "--eps", "4"]));
    let rows: Vec<(f64, f64)> = out
        .lines()
        .skip(1)
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            (v[1], v[2])
        })
        .collect();
    assert!(rows.len() > 5);
    assert!(rows.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1));
}

/// perturb | aggregate on 100,000 seeded users recovers the distribution within the
/// analytic standard error (5 SE per item), for every protocol.
#[test]
fn perturb_then_aggregate_round_trip_for_every_protocol() {
    let k = 10usize;
    let weights = [30, 20, 15, 10, 8, 6, 5, 3, 2, 1];
    let total: usize = weights.iter().sum();
    let n = 100_000;
    let items: Vec<usize> = (0..n)
        .map(|i| {
            let mut r = i % total;
            weights
                .iter()
                .position(|&w| {
                    if r < w {
                        true
                    } else {
                        r -= w;
                        false
                    }
                })
                .unwrap()
        })
        .collect();
    let input: String = items.iter().map(|i| format!("{i}\n")).collect();
    for p in protocols() {
        let common = ["--protocol", p, "--k", "10", "--eps", "2"];
        let reports = stdout(
            ldp()
                .arg("perturb")
                .args(common)
                .args(["--seed", "5"])
                .write_stdin(input.clone()),
        );
        assert_eq!(reports.lines().count(), n);
        let out = stdout(
            ldp()
                .arg("aggregate")
                .args(common)
                .write_stdin(reports.clone()),
        );
        let est: Vec<f64> = out
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        assert_eq!(est.len(), k);
        let analysis = stdout(ldp().arg("analyze").args(common));
        let mse_per_user: f64 = analysis
            .lines()
            .nth(1)
            .unwrap()
            .split(',')
            .nth(5)
            .unwrap()
            .parse()
            .unwrap();
        for (i, &e) in est.iter().enumerate() {
            let f = weights[i] as f64 / total as f64;
            // Approximate variance plus a margin for the f_i term of the exact variance.
            let se = ((mse_per_user + 2.0 * f) / n as f64).sqrt();
            assert!(
                (e - f).abs() < 5.0 * se,
                "{p}: item {i}: {e} vs {f} (se {se})"
            );
        }
        // The attack reads the same reports.
        let guesses = stdout(
            ldp()
                .arg("attack")
                .args(common)
                .args(["--seed", "1"])
                .write_stdin(reports),
        );
        assert_eq!(guesses.lines().count(), n);
        assert!(
            guesses
                .lines()
                .all(|g| g.parse::<usize>().is_ok_and(|g| g < k))
        );
    }
}

#[test]
fn estimators_produce_distributions() {
    let input: String = (0..2000).map(|i| format!("{}\n", i % 3)).collect();
    let reports = stdout(
        ldp()
            .args([
                "perturb",
                "--protocol",
                "oue",
                "--k",
                "5",
                "--eps",
                "0.5",
                "--seed",
                "3",
            ])
            .write_stdin(input),
    );
    for est in [
        "clip", "norm-cut", "norm-sub", "simplex", "mle-apx", "ibu", "mle",
    ] {
        let out = stdout(
            ldp()
                .args([
                    "aggregate",
                    "--protocol",
                    "oue",
                    "--k",
                    "5",
                    "--eps",
                    "0.5",
                    "--estimator",
                    est,
                ])
                .write_stdin(reports.clone()),
        );
        let v: Vec<f64> = out
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(
            (v.iter().sum::<f64>() - 1.0).abs() < 1e-9 && v.iter().all(|&x| x >= 0.0),
            "{est}: {v:?}"
        );
    }
}

#[test]
fn perturb_is_reproducible_with_a_seed_and_random_without() {
    let run = |seed: Option<&str>| {
        let mut c = ldp();
        c.args(["perturb", "--protocol", "sue", "--k", "50", "--eps", "1"]);
        if let Some(s) = seed {
            c.args(["--seed", s]);
        }
        stdout(c.write_stdin("1\n2\n3\n4\n5\n6\n7\n8\n"))
    };
    assert_eq!(run(Some("9")), run(Some("9")));
    assert_ne!(run(None), run(None));
}

#[test]
fn simulate_compares_measurements_with_closed_forms() {
    let out = stdout(ldp().args([
        "simulate",
        "--protocol",
        "olh",
        "--k",
        "100",
        "--eps",
        "4",
        "--dataset",
        "adult-age",
        "--runs",
        "4",
        "--seed",
        "1",
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "protocol,k,eps,param,runs,users,asr,asr_se,asr_expected,mse,mse_se,mse_expected,kl,kl_se,rank_corr,rank_corr_se"
    );
    let v: Vec<&str> = lines[1].split(',').collect();
    let (asr, se, expected): (f64, f64, f64) = (
        v[6].parse().unwrap(),
        v[7].parse().unwrap(),
        v[8].parse().unwrap(),
    );
    assert!((asr - expected).abs() < 4.0 * se, "{asr} vs {expected}");
    // A file of items, resampled users, and poisoning.
    let dir = std::env::temp_dir().join(format!("ldp-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("items.txt");
    std::fs::write(
        &file,
        (0..5000)
            .map(|i| format!("{}\n", i % 20))
            .collect::<String>(),
    )
    .unwrap();
    let out = stdout(
        ldp()
            .args([
                "simulate",
                "--protocol",
                "oue",
                "--k",
                "20",
                "--eps",
                "2",
                "--runs",
                "5",
                "--users",
                "3000",
                "--poison",
                "mga",
                "--beta",
                "0.05",
                "--targets",
                "3,4",
                "--format",
                "json",
            ])
            .arg("--items")
            .arg(&file),
    );
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json[0]["users"], 3000.0);
    let (gain, se, epg) = (
        json[0]["gain"].as_f64().unwrap(),
        json[0]["gain_se"].as_f64().unwrap(),
        json[0]["epg"].as_f64().unwrap(),
    );
    assert!((gain - epg).abs() < 4.0 * se.max(1e-9), "{gain} vs {epg}");
    std::fs::remove_dir_all(&dir).ok();
}

fn fails_with(cmd: &mut Command, needle: &str) {
    cmd.assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(needle).and(predicate::str::contains("panicked").not()));
}

#[test]
fn bad_input_exits_with_status_2_and_a_clear_message() {
    fails_with(
        ldp().args(["analyze", "--protocol", "xyz", "--k", "5", "--eps", "1"]),
        "unknown protocol `xyz`",
    );
    fails_with(
        ldp().args(["analyze", "--protocol", "grr", "--k", "1", "--eps", "1"]),
        "--k 1",
    );
    fails_with(
        ldp().args(["analyze", "--protocol", "grr", "--k", "5", "--eps", "0"]),
        "--eps 0",
    );
    fails_with(
        ldp().args(["analyze", "--protocol", "grr", "--k", "5", "--eps", "-2"]),
        "--eps -2",
    );
    fails_with(
        ldp().args([
            "tune",
            "--protocol",
            "aue",
            "--k",
            "5",
            "--eps",
            "1",
            "--w-asr",
            "-0.5",
        ]),
        "--w-asr",
    );
    fails_with(
        ldp().args([
            "tune",
            "--protocol",
            "aue",
            "--k",
            "5",
            "--eps",
            "1",
            "--w-asr",
            "nan",
        ]),
        "--w-asr",
    );
    // The adaptive protocols, as a sentence: `a, b and c`.
    let adaptive = ldp_core::Protocol::ADAPTIVE.map(ldp_core::Protocol::name);
    let (last, rest) = adaptive.split_last().unwrap();
    fails_with(
        ldp().args(["tune", "--protocol", "oue", "--k", "5", "--eps", "1"]),
        &format!("only {} and {last}", rest.join(", ")),
    );
    fails_with(
        ldp().args([
            "analyze",
            "--protocol",
            "grr",
            "--k",
            "5",
            "--eps",
            "1",
            "--param",
            "3",
        ]),
        "no parameter",
    );
    fails_with(
        ldp().args([
            "analyze",
            "--protocol",
            "ss",
            "--k",
            "5",
            "--eps",
            "1",
            "--param",
            "9",
        ]),
        "--param 9",
    );
    // Items. perturb streams (memory O(1)): the lines before the bad one are written,
    // and the error names the line.
    ldp()
        .args(["perturb", "--protocol", "grr", "--k", "5", "--eps", "1"])
        .write_stdin("1\n7\n")
        .assert()
        .code(2)
        .stdout(predicate::str::is_match("^\\{\"y\":[0-4]\\}\n$").unwrap())
        .stderr(predicate::str::contains(
            "line 2: item 7 is outside the domain 0..5",
        ));
    fails_with(
        ldp()
            .args(["perturb", "--protocol", "grr", "--k", "5", "--eps", "1"])
            .write_stdin("x\n"),
        "line 1: `x` is not an item",
    );

    // Reports: a bad line in the middle rejects the stream, and nothing is printed.
    let agg = |p: &str, input: &str, needle: &str| {
        fails_with(
            ldp()
                .args(["aggregate", "--protocol", p, "--k", "5", "--eps", "1"])
                .write_stdin(input.to_owned()),
            needle,
        )
    };
    agg(
        "grr",
        "{\"y\": 1}\n{\"y\": 9}\n{\"y\": 2}\n",
        "line 2: field `y`: value 9 is outside 0..5",
    );
    agg("grr", "{\"y\": 1}\nnot json\n", "line 2: malformed report");
    agg("grr", "{\"y\": 1}\nnot json\n", "rejected");
    // SS at k = 5, eps = 1 has omega = round(5 / (e + 1)) = 1.
    agg(
        "ss",
        "{\"subset\": [1, 2]}\n",
        "line 1: field `subset`: expected 1 entries, found 2",
    );
    agg(
        "ss",
        "{\"subset\": []}\n",
        "line 1: field `subset`: expected 1 entries, found 0",
    );

    agg(
        "oue",
        "{\"ones\": [3, 1]}\n",
        "line 1: field `ones`: entries must be sorted",
    );
    agg("oue", "{\"ones\": [1, 1]}\n", "appears more than once");
    agg(
        "oue",
        "{\"ones\": [8]}\n",
        "field `ones`: value 8 is outside 0..5",
    );
    agg("olh", "{\"seed\": 4294967296, \"y\": 0}\n", "field `seed`");
    agg("olh", "{\"seed\": -3, \"y\": 0}\n", "field `seed`");
    agg(
        "blh",
        "{\"seed\": 3, \"y\": 2}\n",
        "field `y`: value 2 is outside 0..2",
    );
    agg(
        "she",
        "{\"y\": [0.1, 0.2]}\n",
        "field `y`: expected 5 entries",
    );
    agg("oue", "{\"y\": 1}\n", "line 1: malformed report");
    agg("grr", "", "no reports");
    fails_with(
        ldp()
            .args(["attack", "--protocol", "grr", "--k", "5", "--eps", "1"])
            .write_stdin("{\"y\": 5}\n"),
        "line 1: field `y`",
    );
    fails_with(
        ldp().args([
            "simulate",
            "--protocol",
            "grr",
            "--k",
            "10",
            "--eps",
            "1",
            "--dataset",
            "adult-age",
        ]),
        "k = 100",
    );
    fails_with(
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
            "--poison",
            "mga",
            "--beta",
            "1.5",
            "--targets",
            "3",
        ]),
        "beta",
    );
    fails_with(
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
            "--poison",
            "mga",
            "--beta",
            "0.1",
            "--targets",
            "300",
        ]),
        "targets",
    );
}

#[test]
fn she_aggregation_does_not_depend_on_threads_or_on_how_the_input_arrives() {
    let items: String = (0..30_000).map(|i| format!("{}\n", i % 7)).collect();
    let common = ["--protocol", "she", "--k", "7", "--eps", "1"];
    let reports = stdout(
        ldp()
            .arg("perturb")
            .args(common)
            .args(["--seed", "5"])
            .write_stdin(items),
    );
    let aggregate = |threads: &str, input: &str| {
        stdout(
            ldp()
                .arg("aggregate")
                .args(common)
                .env("RAYON_NUM_THREADS", threads)
                .write_stdin(input.to_owned()),
        )
    };
    let whole = aggregate("2", &reports);
    assert_eq!(aggregate("1", &reports), whole);
    // Through a pipe written a few lines at a time, the reads (and so the batches) are
    // cut elsewhere; the float sums must not notice.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ldp"))
        .arg("aggregate")
        .args(common)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        for lines in reports.as_bytes().chunks(7_919) {
            stdin.write_all(lines).unwrap();
            stdin.flush().unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), whole);
}

/// Issue 27: the iterative estimators take a cap and a tolerance, say when the cap stopped
/// them, and the flags are refused where nothing iterates or the estimator cannot read
/// the reports.
#[test]
fn iterative_estimators_take_a_cap_and_say_when_it_stopped_them() {
    let reports = stdout(
        ldp()
            .args([
                "perturb",
                "--protocol",
                "grr",
                "--k",
                "4",
                "--eps",
                "1",
                "--seed",
                "2",
            ])
            .write_stdin("0\n0\n1\n2\n0\n3\n0\n1\n"),
    );
    let aggregate = |extra: &[&str]| {
        let mut c = ldp();
        c.args(["aggregate", "--protocol", "grr", "--k", "4", "--eps", "1"]);
        c.args(extra).write_stdin(reports.clone());
        c
    };
    let out = aggregate(&["--estimator", "ibu", "--max-iterations", "3"])
        .assert()
        .success();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("ibu stopped at the cap of 3 iterations"),
        "{stderr}"
    );
    fails_with(
        &mut aggregate(&["--tolerance", "1e-3"]),
        "--tolerance: only --estimator ibu or mle iterates",
    );
    fails_with(
        &mut aggregate(&["--estimator", "mle", "--max-iterations", "0"]),
        "--max-iterations",
    );
    fails_with(
        ldp()
            .args([
                "aggregate",
                "--protocol",
                "she",
                "--k",
                "3",
                "--eps",
                "1",
                "--estimator",
                "ibu",
            ])
            .write_stdin("{\"y\":[0.1,0.2,0.3]}\n"),
        "keeps sums",
    );
}

#[test]
fn a_spec_file_stands_for_the_protocol_flags() {
    // Specs as ldp-wasm, the page's spec.json and ldp.Mechanism.spec write them.
    let dir = std::env::temp_dir().join(format!("ldp-cli-spec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let items: String = (0..300).map(|i| format!("{}\n", (i * i) % 6)).collect();
    let cases = [
        (
            "the",
            vec!["--param", "0.6185534425358181"],
            r#"{"eps":1,"family":{"threshold_histogram":{"theta":0.6185534425358181}},"k":6}"#,
        ),
        (
            "cms",
            vec![],
            r#"{"eps":1,"family":{"count_mean_sketch":{"hashes":256,"width":1024}},"k":6}"#,
        ),
        ("grr", vec![], r#"{"eps":1,"family":"grr","k":6}"#),
    ];
    for (protocol, param, json) in cases {
        let spec = dir.join(format!("{protocol}.json"));
        std::fs::write(&spec, json).unwrap();
        let spec = spec.to_str().unwrap();
        let flags = [
            vec!["--protocol", protocol, "--k", "6", "--eps", "1"],
            param,
        ]
        .concat();
        let by_flags = stdout(
            ldp()
                .args([&["perturb", "--seed", "3"][..], &flags].concat())
                .write_stdin(items.clone()),
        );
        let by_spec = stdout(
            ldp()
                .args(["perturb", "--seed", "3", "--spec", spec])
                .write_stdin(items.clone()),
        );
        assert_eq!(by_spec, by_flags, "{protocol}");
        let estimate = |args: Vec<&str>| stdout(ldp().args(args).write_stdin(by_spec.clone()));
        assert_eq!(
            estimate(vec!["aggregate", "--spec", spec]),
            estimate([&["aggregate"][..], &flags].concat()),
            "{protocol}"
        );
    }
    let spec = dir.join("grr.json");
    let spec = spec.to_str().unwrap();
    // A spec is the whole instance: no protocol flag beside it.
    ldp()
        .args(["perturb", "--spec", spec, "--eps", "2"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "'--spec <FILE>' cannot be used with '--eps <EPS>'",
        ));
    ldp()
        .args(["perturb", "--spec", "/nonexistent/spec.json"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "--spec /nonexistent/spec.json: No such file",
        ));
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"eps":-1,"family":"grr","k":6}"#).unwrap();
    ldp()
        .args(["aggregate", "--spec", bad.to_str().unwrap()])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--spec").and(predicate::str::contains("eps")));
    // The attack on linked fresh reports of a spec's instance (the page's column "ASR
    // after t linked") is the flags' one.
    let items_file = dir.join("items.txt");
    std::fs::write(&items_file, &items).unwrap();
    let linked = |instance: &[&str]| {
        let common = ["--items", items_file.to_str().unwrap(), "--runs", "2"];
        let args = [
            &["simulate"][..],
            instance,
            &common,
            &["--collections", "1,3"],
        ]
        .concat();
        stdout(ldp().args(args))
    };
    let by_spec = linked(&["--spec", spec]);
    assert_eq!(
        by_spec,
        linked(&["--protocol", "grr", "--k", "6", "--eps", "1"])
    );
    assert_eq!(by_spec.lines().count(), 3, "{by_spec}");
    // The commands that name their protocol say so.
    ldp()
        .args([
            "simulate",
            "--spec",
            spec,
            "--dataset",
            "adult-age",
            "--collections",
            "1,2",
            "--permanent",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "this use takes --protocol, --k and --eps",
        ));
    // The spec is the whole instance: a tuning flag beside it is refused by name.
    ldp()
        .args(["perturb", "--spec", spec, "--w-asr", "0.3"])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("--w-asr: --spec")
                .and(predicate::str::contains("tuning flags do not apply")),
        );
    ldp()
        .args(["perturb", "--k", "6", "--eps", "1"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--protocol"));
}
