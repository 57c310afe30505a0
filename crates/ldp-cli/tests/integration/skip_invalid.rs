//! `ldp aggregate --on-invalid skip`: no single client can deny an aggregation. A valid
//! stream with corrupted reports inserted anywhere gives exactly the estimate of the
//! valid reports alone, and the summary counts each corruption under its reason.

use std::collections::BTreeMap;

use assert_cmd::Command;
use ldp_core::simulation::{Role, perturb_all};
use ldp_core::{AnyMechanism, DomainSize, Epsilon, Protocol, Spec, dispatch};
use ldp_jsonl::JsonReport;
use proptest::prelude::*;

fn ldp() -> Command {
    Command::cargo_bin("ldp").unwrap()
}

/// Valid JSON lines of `protocol` at k = 6, eps = 1.5.
fn valid_lines(protocol: Protocol, n: usize, seed: u64) -> Vec<String> {
    let spec = Spec::classic(
        protocol,
        DomainSize::new(6).unwrap(),
        Epsilon::new(1.5).unwrap(),
    )
    .unwrap();
    let items: Vec<u32> = (0..n as u32).map(|i| (i * 7 + 1) % 6).collect();
    let any: AnyMechanism = spec.build().unwrap();
    dispatch!(&any, m => {
        perturb_all(m, &items, seed, 0, Role::Genuine)
            .unwrap()
            .iter()
            .map(|r| {
                let mut line = Vec::new();
                r.write_json(&mut line);
                String::from_utf8(line).unwrap()
            })
            .collect()
    })
}

/// A corruption a hostile or broken client can send, with the reason it is counted
/// under; `None` for a blank line, which is not a report.
fn corruption(kind: usize, protocol: Protocol) -> (String, Option<&'static str>) {
    match kind {
        0 => ("garbage".into(), Some("malformed")),
        1 => ("{}".into(), Some("malformed")),
        2 => ("x".repeat(20_000), Some("too-long")),
        3 => (String::new(), None),
        _ => match protocol {
            Protocol::Grr => (r#"{"y":6}"#.into(), Some("out-of-range")),
            Protocol::She => (r#"{"y":[1e300,0,0,0,0,0]}"#.into(), Some("magnitude")),
            _ => (r#"{"ones":[3,1]}"#.into(), Some("unsorted")),
        },
    }
}

fn aggregate(protocol: Protocol, input: String, extra: &[&str]) -> (String, String) {
    let out = ldp()
        .args([
            "aggregate",
            "--protocol",
            protocol.name(),
            "--k",
            "6",
            "--eps",
            "1.5",
        ])
        .args(extra)
        .write_stdin(input)
        .assert()
        .success();
    let o = out.get_output();
    (
        String::from_utf8(o.stdout.clone()).unwrap(),
        String::from_utf8(o.stderr.clone()).unwrap(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn skipping_gives_the_estimate_of_the_valid_reports_and_counts_the_rest(
        which in 0usize..3,
        n in 1usize..9000,
        inserts in prop::collection::vec((0usize..10_000, 0usize..5), 0..12),
        seed in 0u64..1000,
    ) {
        let protocol = [Protocol::Grr, Protocol::Oue, Protocol::She][which];
        let valid = valid_lines(protocol, n, seed);
        let mut lines = valid.clone();
        let mut expected: BTreeMap<&str, u64> = BTreeMap::new();
        for &(at, kind) in &inserts {
            let (line, reason) = corruption(kind, protocol);
            lines.insert(at % (lines.len() + 1), line);
            if let Some(reason) = reason {
                *expected.entry(reason).or_default() += 1;
            }
        }
        let dir = std::env::temp_dir().join(format!("ldp-skip-{}-{seed}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let summary = dir.join("summary.json");
        let (skipping, note) = aggregate(
            protocol,
            lines.join("\n") + "\n",
            &["--on-invalid", "skip", "--summary", summary.to_str().unwrap()],
        );
        let (clean, _) = aggregate(protocol, valid.join("\n") + "\n", &[]);
        prop_assert_eq!(skipping, clean);
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        prop_assert_eq!(summary["accepted"].as_u64(), Some(n as u64));
        let total: u64 = expected.values().sum();
        prop_assert_eq!(summary["skipped"].as_u64(), Some(total));
        for (reason, count) in &expected {
            prop_assert_eq!(summary["reasons"][reason]["count"].as_u64(), Some(*count), "{}", reason);
        }
        prop_assert_eq!(summary["reasons"].as_object().unwrap().len(), expected.len());
        let skipped_note = format!("aggregated {n} reports, skipped {total}");
        prop_assert!(note.contains(&skipped_note), "{}", note);
    }
}

#[test]
fn the_first_skipped_report_of_each_reason_is_named_by_line() {
    let input = "{\"y\":1}\n{\"y\":9}\n{\"y\":2}\nnope\n{\"y\":7}\n";
    let dir = std::env::temp_dir().join(format!("ldp-skip-first-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let summary = dir.join("s.json");
    aggregate(
        Protocol::Grr,
        input.into(),
        &[
            "--on-invalid",
            "skip",
            "--summary",
            summary.to_str().unwrap(),
        ],
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(s["accepted"], 2);
    assert_eq!(s["reasons"]["out-of-range"]["count"], 2);
    assert_eq!(s["reasons"]["out-of-range"]["first_at"], "line 2");
    assert_eq!(s["reasons"]["malformed"]["first_at"], "line 4");
}

#[test]
fn refusing_stays_the_default_and_nothing_valid_is_an_error() {
    ldp()
        .args(["aggregate", "--protocol", "grr", "--k", "6", "--eps", "1"])
        .write_stdin("{\"y\":1}\n{\"y\":9}\n")
        .assert()
        .code(2)
        .stdout("");
    let out = ldp()
        .args(["aggregate", "--protocol", "grr", "--k", "6", "--eps", "1"])
        .args(["--on-invalid", "skip"])
        .write_stdin("{\"y\":9}\nnope\n")
        .assert()
        .code(2)
        .stdout("");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("no valid reports on stdin (2 skipped"),
        "{stderr}"
    );
    // Issue 43: the summary is written whatever the outcome, this one included.
    let dir = std::env::temp_dir().join(format!("ldp-skip-none-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let summary = dir.join("s.json");
    ldp()
        .args(["aggregate", "--protocol", "grr", "--k", "6", "--eps", "1"])
        .args([
            "--on-invalid",
            "skip",
            "--summary",
            summary.to_str().unwrap(),
        ])
        .write_stdin("{bad\n{bad\n")
        .assert()
        .code(2)
        .stdout("");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(written["accepted"].as_u64(), Some(0));
    assert_eq!(written["skipped"].as_u64(), Some(2));
}
