//! Repeated collection on the command line: `--collections`, `--eps-perm`, `--memoize`.

use assert_cmd::Command;
use predicates::prelude::*;

fn ldp() -> Command {
    Command::cargo_bin("ldp").unwrap()
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.assert().success().get_output().stdout.clone();
    String::from_utf8(out).unwrap()
}

fn column(csv: &str, row_prefix: &str, name: &str) -> String {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header.iter().position(|c| *c == name).unwrap();
    let row = lines.find(|l| l.starts_with(row_prefix)).unwrap();
    row.split(',').nth(i).unwrap().to_owned()
}

#[test]
fn analyze_gives_the_asr_after_t_collections() {
    let out = stdout(ldp().args([
        "analyze",
        "--protocol",
        "grr,ss,oue,she",
        "--k",
        "100",
        "--eps",
        "1",
        "--collections",
        "365",
    ]));
    assert!(
        out.lines()
            .next()
            .unwrap()
            .ends_with(",collections,asr_after")
    );
    let grr: f64 = column(&out, "grr,", "asr_after").parse().unwrap();
    assert!((grr - 0.551399098133564).abs() < 1e-9, "{grr}");
    let oue: f64 = column(&out, "oue,", "asr_after").parse().unwrap();
    assert!(oue > 0.999);
    // No exact form for SS (omega > 1) and SHE: empty, not invented.
    assert_eq!(column(&out, "ss,", "asr_after"), "");
    assert_eq!(column(&out, "she,", "asr_after"), "");
}

#[test]
fn analyze_lists_the_memoized_protocols_with_their_ceilings() {
    let out = stdout(ldp().args([
        "analyze",
        "--protocol",
        "all",
        "--k",
        "100",
        "--eps",
        "1",
        "--eps-perm",
        "2",
        "--collections",
        "365",
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "protocol,k,eps,eps_perm,chain,asr,mse,collections,asr_after,asr_limit"
    );
    assert_eq!(lines.len(), 9);
    // LOLOHA at eps_perm = 2, alpha = 1/2 hashes to g = 3 (its published formula); one
    // report is LH at eps_1 with that g, so its MSE is OLH's variance formula at g = 3.
    let l_olh_mse: f64 = column(&out, "l-olh,", "mse").parse().unwrap();
    let (e1, g) = (1f64.exp(), 3.0);
    let (p, q) = (e1 / (e1 + g - 1.0), 1.0 / g);
    assert!(
        (l_olh_mse - q * (1.0 - q) / (p - q).powi(2)).abs() < 1e-9,
        "{l_olh_mse}"
    );
    // L-OSUE's chain is OUE at eps_1: same one-report ASR and MSE.
    let oue = stdout(ldp().args(["analyze", "--protocol", "oue", "--k", "100", "--eps", "1"]));
    let mse = |csv: &str, row: &str| column(csv, row, "mse").parse::<f64>().unwrap();
    assert!((mse(&out, "l-osue,") - mse(&oue, "oue,")).abs() < 1e-9);
    assert_eq!(column(&out, "l-adp,", "chain"), "l-osue");
    let limit: f64 = column(&out, "l-grr,", "asr_limit").parse().unwrap();
    let e2 = 2f64.exp();
    assert!(
        (limit - e2 / (e2 + 99.0)).abs() < 1e-12,
        "L-GRR's ceiling is GRR's ASR at eps_perm"
    );
}

#[test]
fn bad_repeated_collection_input_names_the_flag() {
    let fails = |args: &[&str], needle: &str| {
        ldp()
            .args(args)
            .assert()
            .failure()
            .stderr(predicate::str::contains(needle));
    };
    fails(
        &[
            "analyze",
            "--protocol",
            "l-oue",
            "--k",
            "100",
            "--eps",
            "1.9",
            "--eps-perm",
            "2",
        ],
        "--eps 1.9 with --eps-perm 2: L-OUE with eps_perm = 2 needs a per-report budget eps_1 below 1.66",
    );
    fails(
        &["analyze", "--protocol", "l-grr", "--k", "100", "--eps", "1"],
        "need --eps-perm",
    );
    fails(
        &[
            "analyze",
            "--protocol",
            "oue",
            "--k",
            "100",
            "--eps",
            "1",
            "--eps-perm",
            "2",
        ],
        "--protocol oue: --eps-perm goes with the memoized protocols",
    );
    fails(
        &[
            "analyze",
            "--protocol",
            "grr",
            "--k",
            "100",
            "--eps",
            "1",
            "--collections",
            "0",
        ],
        "at least 1",
    );
    fails(
        &[
            "simulate",
            "--protocol",
            "l-grr",
            "--k",
            "100",
            "--eps",
            "1",
            "--dataset",
            "adult-age",
            "--collections",
            "3",
        ],
        "add --memoize and --eps-perm",
    );
    fails(
        &[
            "simulate",
            "--protocol",
            "grr",
            "--k",
            "100",
            "--eps",
            "1",
            "--dataset",
            "adult-age",
            "--memoize",
        ],
        "--eps-perm",
    );
    fails(
        &[
            "simulate",
            "--protocol",
            "l-grr",
            "--k",
            "100",
            "--eps",
            "1",
            "--dataset",
            "adult-age",
            "--memoize",
            "--eps-perm",
            "2",
        ],
        "--memoize: applies to repeated collection; add --collections T, --days D or --trajectories FILE",
    );
}

#[test]
fn simulate_measures_linked_reports_beside_the_closed_forms() {
    let out = stdout(ldp().args([
        "simulate",
        "--protocol",
        "l-osue",
        "--memoize",
        "--eps-perm",
        "2",
        "--k",
        "100",
        "--eps",
        "1",
        "--dataset",
        "adult-age",
        "--users",
        "3000",
        "--runs",
        "1",
        "--seed",
        "4",
        "--collections",
        "50,1,10",
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "protocol,k,eps,eps_perm,runs,users,collections,asr,asr_se,asr_expected"
    );
    assert_eq!(lines.len(), 4);
    for line in &lines[1..] {
        let f: Vec<&str> = line.split(',').collect();
        let (asr, se, expected): (f64, f64, f64) = (
            f[7].parse().unwrap(),
            f[8].parse().unwrap(),
            f[9].parse().unwrap(),
        );
        assert!((asr - expected).abs() < 3.0 * se, "{line}");
    }
    assert!(
        lines[1].contains(",1,") && lines[3].contains(",50,"),
        "rows sorted by t"
    );
    let one_shot = stdout(ldp().args([
        "simulate",
        "--protocol",
        "ss",
        "--k",
        "100",
        "--eps",
        "1",
        "--dataset",
        "adult-age",
        "--users",
        "500",
        "--runs",
        "1",
        "--collections",
        "1,20",
    ]));
    // SS has no closed form after t > 1 reports: the expected column is empty there.
    assert!(
        one_shot.lines().nth(2).unwrap().ends_with(','),
        "{one_shot}"
    );
}

#[test]
fn tune_can_target_the_asr_after_a_year_of_daily_reports() {
    let daily = stdout(ldp().args([
        "tune",
        "--protocol",
        "aue",
        "--k",
        "100",
        "--eps",
        "0.5",
        "--asr-after",
        "365",
    ]));
    let once = stdout(ldp().args(["tune", "--protocol", "aue", "--k", "100", "--eps", "0.5"]));
    let asr = |csv: &str| column(csv, "aue,", "asr").parse::<f64>().unwrap();
    // The objective reported is the one tuned: after 365 reports the attack nearly always wins.
    assert!(asr(&daily) > 0.97 && asr(&once) < 0.02, "{daily}\n{once}");
    ldp()
        .args([
            "tune",
            "--protocol",
            "ass",
            "--k",
            "100",
            "--eps",
            "0.5",
            "--asr-after",
            "30",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "no exact ASR after 30 linked reports",
        ));
    ldp()
        .args([
            "tune",
            "--protocol",
            "aue",
            "--k",
            "100",
            "--eps",
            "0.5",
            "--asr-after",
            "0",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "--asr-after: the number of collections must be at least 1, got 0",
        ));
}

#[test]
fn tune_all_bounds_the_asr_after_t_reports() {
    let base = ["tune", "--protocol", "all", "--k", "100", "--eps", "1"];
    let out = ldp()
        .args(base)
        .args(["--asr-max", "0.1", "--asr-after", "30"])
        .assert()
        .success()
        .stderr(predicate::str::contains("left out"));
    let daily = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let protocol = daily.lines().nth(1).unwrap().split(',').next().unwrap();
    let param = column(&daily, protocol, "param");
    let asr: f64 = column(&daily, protocol, "asr").parse().unwrap();
    assert!(asr <= 0.1, "{daily}");
    // The reported ASR is the chosen instance's ASR after 30 reports, as analyze gives it.
    let analyzed = stdout(ldp().args([
        "analyze",
        "--protocol",
        protocol,
        "--param",
        &param,
        "--k",
        "100",
        "--eps",
        "1",
        "--collections",
        "30",
    ]));
    let after: f64 = column(&analyzed, protocol, "asr_after").parse().unwrap();
    assert!((after - asr).abs() < 1e-12, "{daily}\n{analyzed}");
    // One collection is the one-shot choice.
    let once = stdout(ldp().args(base).args(["--asr-max", "0.1"]));
    let one = stdout(
        ldp()
            .args(base)
            .args(["--asr-max", "0.1", "--asr-after", "1"]),
    );
    assert_eq!(once, one);
    assert_ne!(once, daily);
}

/// `--days D --change-rate R`: the change detector of Example 2, fresh, permanent and
/// memoized, with the closed forms where a report is one value (GRR, dBitFlipPM).
#[test]
fn simulate_detects_changes_beside_the_closed_forms() {
    let base = [
        "simulate",
        "--dataset",
        "adult-age",
        "--k",
        "100",
        "--users",
        "2000",
        "--runs",
        "4",
        "--seed",
        "3",
        "--days",
        "10",
        "--change-rate",
        "0.2",
    ];
    let near = |csv: &str, rate: &str| {
        let measured: f64 = column(csv, "", rate).parse().unwrap();
        let se: f64 = column(csv, "", &format!("{rate}_se")).parse().unwrap();
        let expected: f64 = column(csv, "", &format!("{rate}_expected"))
            .parse()
            .unwrap();
        assert!(
            (measured - expected).abs() <= 3.0 * se + 1e-12,
            "{rate}: {measured} +- {se} vs {expected}\n{csv}"
        );
    };
    let fresh = stdout(ldp().args(base).args(["--protocol", "grr", "--eps", "2"]));
    assert!(
        fresh.starts_with("protocol,collection,k,eps,eps_perm,runs,users,days,change_rate,detect,")
    );
    assert_eq!(column(&fresh, "", "collection"), "fresh");
    near(&fresh, "detect");
    near(&fresh, "false_alarm");
    let pm = stdout(
        ldp()
            .args(base)
            .args(["--protocol", "dbitflip", "--eps", "2", "--permanent"]),
    );
    assert_eq!(column(&pm, "", "collection"), "permanent");
    near(&pm, "detect");
    assert_eq!(column(&pm, "", "false_alarm"), "0");
    // dBitFlipPM with one bit draws at most two memos: (d + 1) eps.
    let budget: f64 = column(&pm, "", "budget_per_user").parse().unwrap();
    assert!(budget <= 4.0 + 1e-9, "{budget}");
    // A memoized unary chain: measured only, its closed-form columns empty.
    let memo = stdout(ldp().args(base).args([
        "--protocol",
        "l-osue",
        "--eps",
        "1",
        "--eps-perm",
        "2",
        "--memoize",
    ]));
    assert_eq!(column(&memo, "", "collection"), "memoized");
    assert_eq!(column(&memo, "", "detect_expected"), "");
    // Bad settings name the flag.
    for (extra, said) in [
        (&["--change-rate", "1.5"][..], "--change-rate 1.5"),
        (&["--days", "1"][..], "--days 1"),
    ] {
        let mut args: Vec<&str> = base.to_vec();
        for pair in extra.chunks(2) {
            let i = args.iter().position(|a| *a == pair[0]).unwrap();
            args[i + 1] = pair[1];
        }
        ldp()
            .args(args)
            .args(["--protocol", "grr", "--eps", "2"])
            .assert()
            .failure()
            .stderr(predicate::str::contains(said));
    }
    ldp()
        .args([
            "simulate",
            "--dataset",
            "adult-age",
            "--k",
            "100",
            "--protocol",
            "grr",
        ])
        .args(["--eps", "2", "--days", "5"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--change-rate"));
    ldp()
        .args([
            "simulate",
            "--dataset",
            "adult-age",
            "--k",
            "100",
            "--protocol",
            "grr",
        ])
        .args(["--eps", "2", "--permanent"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "--collections T, --days D or --trajectories FILE",
        ));
}

/// `analyze --change-rate R`: the detector's closed forms beside each row, as `simulate
/// --days` quotes them; empty where there is none.
#[test]
fn analyze_gives_the_change_detectors_closed_forms() {
    let out = stdout(ldp().args([
        "analyze",
        "--protocol",
        "grr,oue,hr",
        "--k",
        "100",
        "--eps",
        "2",
        "--change-rate",
        "0.2",
    ]));
    assert!(
        out.lines()
            .next()
            .unwrap()
            .ends_with(",change_rate,detect,false_alarm,precision")
    );
    // Fresh GRR: 1 - 2pq - (k - 2) q^2 and 1 - p^2 - (k - 1) q^2.
    let (e, k) = (2f64.exp(), 100.0);
    let (p, q) = (e / (e + k - 1.0), 1.0 / (e + k - 1.0));
    let detect: f64 = column(&out, "grr,", "detect").parse().unwrap();
    let alarm: f64 = column(&out, "grr,", "false_alarm").parse().unwrap();
    assert!((detect - (1.0 - 2.0 * p * q - (k - 2.0) * q * q)).abs() < 1e-12);
    assert!((alarm - (1.0 - p * p - (k - 1.0) * q * q)).abs() < 1e-12);
    let precision: f64 = column(&out, "grr,", "precision").parse().unwrap();
    assert!((precision - 0.2 * detect / (0.2 * detect + 0.8 * alarm)).abs() < 1e-12);
    // Fresh OUE: the ASR form, whose precision rises from the change rate with the ASR;
    // HR's law depends on the labels: no form.
    let oue: f64 = column(&out, "oue,", "precision").parse().unwrap();
    assert!(oue > 0.2 && oue < precision, "{oue} {precision}");
    assert_eq!(column(&out, "hr,", "detect"), "");
    // The memoized rows: L-OLH's as simulate --days quotes it.
    let memo = stdout(ldp().args([
        "analyze",
        "--protocol",
        "l-olh",
        "--k",
        "100",
        "--eps",
        "1",
        "--eps-perm",
        "2",
        "--change-rate",
        "0.2",
    ]));
    let sim = stdout(ldp().args([
        "simulate",
        "--protocol",
        "l-olh",
        "--k",
        "100",
        "--eps",
        "1",
        "--eps-perm",
        "2",
        "--memoize",
        "--dataset",
        "adult-age",
        "--users",
        "200",
        "--runs",
        "1",
        "--days",
        "3",
        "--change-rate",
        "0.2",
    ]));
    assert_eq!(
        column(&memo, "l-olh,", "detect"),
        column(&sim, "l-olh,", "detect_expected")
    );
    ldp()
        .args([
            "analyze",
            "--protocol",
            "grr",
            "--k",
            "100",
            "--eps",
            "2",
            "--change-rate",
            "-1",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--change-rate -1"));
}

/// `--trajectories FILE.csv`: the change detector on recorded values, replayed, judged
/// against the recorded changes; a bad file names the flag and the line.
#[test]
fn simulate_replays_recorded_values() {
    let dir = std::env::temp_dir().join(format!("ldp-trajectories-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("days.csv");
    // 1,000 users over 14 days, each moving once a week on a day of its own.
    let mut text = String::from("user,day,value\n");
    let (mut changes, mut pairs) = (0u32, 0u32);
    for u in 0..1000u32 {
        let value = |d: u32| (u + 3 * ((d + u % 7) / 7)) % 10;
        for d in 0..14 {
            text.push_str(&format!("u{u},{d},{}\n", value(d)));
            if d > 0 {
                pairs += 1;
                changes += u32::from(value(d) != value(d - 1));
            }
        }
    }
    std::fs::write(&path, text).unwrap();
    let base = [
        "simulate",
        "--protocol",
        "grr",
        "--k",
        "10",
        "--eps",
        "2",
        "--runs",
        "4",
        "--trajectories",
        path.to_str().unwrap(),
    ];
    for permanent in [false, true] {
        let mut cmd = ldp();
        cmd.args(base);
        if permanent {
            cmd.arg("--permanent");
        }
        let csv = stdout(&mut cmd);
        let measured: f64 = column(&csv, "", "change_rate_measured").parse().unwrap();
        assert_eq!(measured, f64::from(changes) / f64::from(pairs), "{csv}");
        assert_eq!(column(&csv, "", "days"), "14");
        assert_eq!(column(&csv, "", "users"), "1000");
        for rate in ["detect", "false_alarm"] {
            let m: f64 = column(&csv, "", rate).parse().unwrap();
            let se: f64 = column(&csv, "", &format!("{rate}_se")).parse().unwrap();
            let e: f64 = column(&csv, "", &format!("{rate}_expected"))
                .parse()
                .unwrap();
            assert!(
                (m - e).abs() <= 3.0 * se + 1e-12,
                "{rate}: {m} +- {se} vs {e}\n{csv}"
            );
        }
    }
    let bad = dir.join("gap.csv");
    std::fs::write(&bad, "user,day,value\na,1,3\nb,1,2\na,3,4\n").unwrap();
    ldp()
        .args(&base[..base.len() - 1])
        .arg(bad.to_str().unwrap())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--trajectories").and(predicate::str::contains(
                "line 4: user \"a\" reports day 3 after day 1",
            )),
        );
    ldp()
        .args(base)
        .args(["--days", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--days"));
    let _ = std::fs::remove_dir_all(&dir);
}
