//! The audits against independent computations: closed forms and full enumeration for
//! the exact audit, known clients (correct and broken) for the statistical one.

use std::collections::BTreeSet;
use std::time::Duration;

use ldp_audit::{
    AuditConfig, AuditError, ClientAudit, CommandClient, Coverage, Observation, Pairs, Shape,
    Statistic, audit_client, audit_mechanism, exact_audit,
};
use ldp_core::{
    AnyMechanism, DomainSize, Epsilon, FamilyParams, Grr, Mechanism, OnesReport, Protocol, Spec,
    SubsetReport, UnaryEncoding,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn build(protocol: Protocol, k: u32, eps: f64) -> AnyMechanism {
    Spec::classic(
        protocol,
        DomainSize::new(k).unwrap(),
        Epsilon::new(eps).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap()
}

/// The paper's eight classic protocols.
const PAPER: &[Protocol] = Protocol::PAPER.split_at(8).0;

/// THE's exact budget from the Laplace tails: a bit is set with p = P[1 + L > theta] for
/// the true item and q = P[L > theta] for the others, L ~ Laplace(2/eps).
fn the_budget(eps: f64, theta: f64) -> f64 {
    let p = 1.0 - 0.5 * (-(1.0 - theta) * eps / 2.0).exp();
    let q = 0.5 * (-theta * eps / 2.0).exp();
    (p * (1.0 - q) / (q * (1.0 - p))).ln()
}

#[test]
fn exact_audits_meet_the_closed_forms() {
    for k in [5, 25, 200] {
        for eps in [0.25, 0.5, 1.0, 2.0, 4.0, 10.0] {
            for &protocol in PAPER {
                let mech = build(protocol, k, eps);
                let exact = exact_audit(&mech).unwrap();
                // THE spends less than its budget; the others spend it all.
                let expected = if protocol == Protocol::The {
                    let theta = mech.spec().params().value().unwrap();
                    the_budget(eps, theta)
                } else {
                    eps
                };
                assert!(
                    (exact.eps_exact - expected).abs() < 1e-9,
                    "{protocol:?} k={k} eps={eps}: {} vs {expected}",
                    exact.eps_exact
                );
                assert_ne!(exact.more_likely, exact.less_likely);
            }
        }
    }
}

fn subsets(k: u32) -> impl Iterator<Item = Vec<u32>> {
    (0u32..1 << k).map(move |mask| (0..k).filter(|i| mask >> i & 1 == 1).collect())
}

/// The worst ratio over every output, by brute force.
fn enumerate<M: Mechanism>(m: &M, outputs: impl Iterator<Item = M::Report>) -> f64 {
    let k = m.domain_size().get();
    outputs
        .map(|y| {
            let l: Vec<f64> = (0..k).map(|x| m.log_likelihood(&y, x)).collect();
            let max = l.iter().cloned().fold(f64::MIN, f64::max);
            let min = l.iter().cloned().fold(f64::MAX, f64::min);
            max - min
        })
        .fold(0.0, f64::max)
}

#[test]
fn symmetric_witnesses_give_the_full_enumeration() {
    let k = 6;
    for eps in [0.3, 1.0, 3.0] {
        let d = DomainSize::new(k).unwrap();
        let e = Epsilon::new(eps).unwrap();
        for omega in 1..k {
            let ss = ldp_core::SubsetSelection::new(d, e, omega).unwrap();
            let full = enumerate(
                &ss,
                subsets(k)
                    .filter(|s| s.len() == omega as usize)
                    .map(|subset| SubsetReport { subset }),
            );
            let exact = exact_audit(&ss.clone().into()).unwrap();
            assert_eq!(exact.coverage, Coverage::Symmetry);
            assert!((exact.eps_exact - full).abs() < 1e-12, "omega {omega}");
        }
        for p in [0.5, 0.7, 0.95] {
            let ue = UnaryEncoding::new(d, e, p).unwrap();
            let full = enumerate(&ue, subsets(k).map(|ones| OnesReport { ones }));
            let exact = exact_audit(&ue.into()).unwrap();
            assert!((exact.eps_exact - full).abs() < 1e-12);
        }
        for theta in [0.5, 0.8, 1.0] {
            let the = ldp_core::ThresholdHistogram::new(d, e, theta).unwrap();
            let full = enumerate(&the, subsets(k).map(|ones| OnesReport { ones }));
            let exact = exact_audit(&the.into()).unwrap();
            assert!((exact.eps_exact - full).abs() < 1e-12);
        }
    }
}

#[test]
fn the_large_domain_oracles_stay_within_budget() {
    for protocol in [Protocol::Hr, Protocol::Hm, Protocol::Flh, Protocol::Hcms] {
        for eps in [0.5, 2.0] {
            let exact = exact_audit(&build(protocol, 40, eps)).unwrap();
            assert!(exact.eps_exact <= eps + 1e-9, "{protocol:?}: {exact:?}");
            assert!(exact.eps_exact > 0.5 * eps, "{protocol:?}: {exact:?}");
        }
    }
}

/// Every protocol of the registry has an exact audit (no family is left to a panic): at
/// two (k, eps), each classic protocol's preset and each adaptive protocol's paper space
/// (its first, middle and last values) meet their budget or are refused as too large.
/// Only CMS's preset is refused (2^m bit patterns per row at m = 1024).
#[test]
fn every_registry_protocol_has_an_exact_audit() {
    let mut audited = BTreeSet::new();
    for (k, eps) in [(5, 1.0), (40, 4.0)] {
        let (d, e) = (DomainSize::new(k).unwrap(), Epsilon::new(eps).unwrap());
        for protocol in Protocol::ALL {
            let specs = match protocol.paper_space(d, e) {
                None => vec![Spec::classic(protocol, d, e).unwrap()],
                Some(space) => {
                    let grid = space.grid();
                    [grid[0], grid[grid.len() / 2], grid[grid.len() - 1]]
                        .map(|v| FamilyParams::with_value(protocol.family(), v).unwrap())
                        .map(|params| Spec::new(d, e, params).unwrap())
                        .to_vec()
                }
            };
            for spec in specs {
                match exact_audit(&spec.build().unwrap()) {
                    Ok(exact) => {
                        assert!(exact.outputs > 0, "{spec:?}");
                        // Relative slack: `rounding` understates the error of ln(1 - p)
                        // at AUE's p = 0.999999 (1.4e-11 over eps = 1 at k = 5).
                        assert!(exact.eps_exact <= eps * (1.0 + 1e-9), "{spec:?}: {exact:?}");
                        assert!(exact.eps_exact > 0.0, "{spec:?}: {exact:?}");
                        assert_eq!(exact.claimed_eps, eps);
                        audited.insert(protocol);
                    }
                    Err(AuditError::ExactTooLarge { k: refused_k, .. }) => {
                        assert_eq!(refused_k, k);
                    }
                    Err(other) => panic!("{spec:?}: {other}"),
                }
            }
        }
    }
    let refused: Vec<Protocol> = Protocol::ALL
        .into_iter()
        .filter(|p| !audited.contains(p))
        .collect();
    assert_eq!(refused, [Protocol::Cms]);
}

#[test]
fn an_exact_audit_too_large_is_refused() {
    let err = exact_audit(&build(Protocol::Grr, 1 << 20, 1.0)).unwrap_err();
    assert!(matches!(err, AuditError::ExactTooLarge { .. }));
    assert!(
        err.to_string()
            .contains("use a smaller k or the statistical audit")
    );
}

/// The tightness bar: with 10^6 trials per input at k = 25, the likelihood-ratio
/// event reaches 0.9 of the exact budget, and LDP-Auditor's guess does not do better.
#[test]
fn the_likelihood_ratio_event_is_tight() {
    for eps in [1.0, 2.0, 4.0] {
        for &protocol in PAPER {
            let mech = build(protocol, 25, eps);
            let exact = exact_audit(&mech).unwrap().eps_exact;
            let config = AuditConfig {
                trials: 1_000_000,
                seed: 3,
                ..AuditConfig::default()
            };
            let audit = audit_mechanism(&mech, &config).unwrap();
            let lr = audit.statistic(Statistic::LikelihoodRatio).unwrap().eps_emp;
            let guess = audit.statistic(Statistic::AttackGuess).unwrap().eps_emp;
            assert!(lr <= exact, "{protocol:?} eps={eps}: {lr} > {exact}");
            if protocol != Protocol::She {
                assert!(
                    lr >= 0.9 * exact,
                    "{protocol:?} eps={eps}: {lr} < 0.9 * {exact}"
                );
            }
            assert!(
                guess <= lr + 0.05,
                "{protocol:?} eps={eps}: guess {guess} > lr {lr}"
            );
        }
    }
}

/// Correct clients are not flagged over LDP-Auditor's grid (fewer trials than its 10^6,
/// which `cargo xtask reproduce --figure audit_grid` runs).
#[test]
fn correct_clients_are_not_flagged_over_the_grid() {
    for &protocol in PAPER {
        for eps in [0.25, 0.5, 0.75, 1.0, 2.0, 4.0, 6.0, 10.0] {
            for k in [25, 50, 100, 150, 200] {
                let mech = build(protocol, k, eps);
                let config = AuditConfig {
                    trials: 20_000,
                    seed: 11,
                    ..AuditConfig::default()
                };
                let audit = audit_mechanism(&mech, &config).unwrap();
                assert_eq!(
                    audit.flagged(),
                    Some(false),
                    "{protocol:?} k={k} eps={eps}: {audit:?}"
                );
            }
        }
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let mech = build(Protocol::Olh, 30, 2.0);
    let config = AuditConfig {
        trials: 50_000,
        pairs: Pairs::Cycle,
        ..AuditConfig::default()
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| audit_mechanism(&mech, &config).unwrap());
    let many = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap()
        .install(|| audit_mechanism(&mech, &config).unwrap());
    assert_eq!(one, many);
}

fn setup(
    shape: Shape,
    k: u32,
    eps: f64,
    trials: u64,
    pairs: Pairs,
    statistics: &[Statistic],
) -> ClientAudit {
    ClientAudit {
        config: AuditConfig {
            trials,
            pairs,
            statistics: statistics.to_vec(),
            seed: 5,
            ..AuditConfig::default()
        },
        shape,
        k,
        claimed_eps: Some(eps),
        batch: 4096,
    }
}

/// A client whose randomness is a ChaCha stream chosen by the batch's first call; fine
/// for tests, where batches of one input are interchangeable.
fn seeded<F>(f: F) -> impl Fn(&[u32]) -> Result<Vec<Observation>, AuditError> + Sync
where
    F: Fn(u32, &mut ChaCha8Rng) -> Observation + Sync,
{
    let calls = std::sync::atomic::AtomicU64::new(0);
    move |items: &[u32]| {
        let call = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut rng = ChaCha8Rng::seed_from_u64(call);
        Ok(items.iter().map(|&x| f(x, &mut rng)).collect())
    }
}

#[test]
fn a_unary_client_that_leaves_one_bit_unperturbed_is_flagged() {
    let (k, eps) = (10, 1.0);
    let oue =
        UnaryEncoding::optimized(DomainSize::new(k).unwrap(), Epsilon::new(eps).unwrap()).unwrap();
    let broken = seeded(|x, rng| {
        let mut ones = oue.perturb(x, rng).unwrap().ones;
        // The last bit is the true one, unperturbed (OpenDP issue 2707's bug).
        ones.retain(|&i| i != k - 1);
        if x == k - 1 {
            ones.push(k - 1);
        }
        Observation::Set(ones)
    });
    let setup = setup(
        Shape::Set,
        k,
        eps,
        20_000,
        Pairs::Cycle,
        &[Statistic::LikelihoodRatio],
    );
    let audit = audit_client(&broken, &setup, &|_| {}).unwrap();
    assert_eq!(audit.flagged(), Some(true), "{audit:?}");
    let worst = audit.statistics[0].worst_pair();
    assert!(worst.v1 == k - 1 || worst.v2 == k - 1, "{worst:?}");
    // The same client without the bug passes.
    let correct = seeded(|x, rng| Observation::Set(oue.perturb(x, rng).unwrap().ones));
    let audit = audit_client(&correct, &setup, &|_| {}).unwrap();
    assert_eq!(audit.flagged(), Some(false), "{audit:?}");
}

#[test]
fn a_grr_client_with_ten_percent_more_budget_is_flagged() {
    let (k, eps) = (25, 1.0);
    let grr = Grr::new(
        DomainSize::new(k).unwrap(),
        Epsilon::new(1.1 * eps).unwrap(),
    )
    .unwrap();
    let client = seeded(|x, rng| Observation::Value(grr.perturb(x, rng).unwrap().y));
    let setup = setup(
        Shape::Value,
        k,
        eps,
        1_000_000,
        Pairs::Extremes,
        &[Statistic::LikelihoodRatio],
    );
    let audit = audit_client(&client, &setup, &|_| {}).unwrap();
    assert_eq!(audit.flagged(), Some(true), "{audit:?}");
    assert!(audit.eps_emp() < 1.1 * eps);
}

#[test]
fn a_subset_client_that_writes_the_true_item_first_is_flagged() {
    let (k, eps) = (20, 1.0);
    let ss = build(Protocol::Ss, k, eps);
    let AnyMechanism::SubsetSelection(ss) = ss else {
        unreachable!()
    };
    let leaky = seeded(|x, rng| {
        let mut subset = ss.perturb(x, rng).unwrap().subset;
        if let Some(at) = subset.iter().position(|&i| i == x) {
            subset.remove(at);
            subset.insert(0, x);
        }
        Observation::Set(subset)
    });
    let statistics = [Statistic::LikelihoodRatio, Statistic::FirstListed];
    let setup = setup(Shape::Set, k, eps, 20_000, Pairs::Cycle, &statistics);
    let audit = audit_client(&leaky, &setup, &|_| {}).unwrap();
    assert_eq!(audit.flagged(), Some(true), "{audit:?}");
    assert!(audit.statistic(Statistic::LikelihoodRatio).unwrap().eps_emp <= eps);
    // Sorted lists, the same draws: not flagged.
    let sorted = seeded(|x, rng| Observation::Set(ss.perturb(x, rng).unwrap().subset));
    let audit = audit_client(&sorted, &setup, &|_| {}).unwrap();
    assert_eq!(audit.flagged(), Some(false), "{audit:?}");
}

#[test]
fn a_mechanism_audit_refuses_the_order_statistic() {
    let config = AuditConfig {
        statistics: vec![Statistic::FirstListed],
        ..AuditConfig::default()
    };
    let err = audit_mechanism(&build(Protocol::Ss, 10, 1.0), &config).unwrap_err();
    assert!(err.to_string().contains("sorted lists"), "{err}");
}

fn command(script: &str, shape: Shape, timeout: f64) -> CommandClient {
    CommandClient {
        command: script.to_string(),
        shape,
        k: 10,
        timeout: Duration::from_secs_f64(timeout),
    }
}

#[test]
fn an_external_client_is_audited_line_by_line() {
    // A "randomized response" that echoes its input: caught at once.
    let truthful = command("cat", Shape::Value, 30.0);
    let setup = setup(
        Shape::Value,
        10,
        1.0,
        3000,
        Pairs::Extremes,
        &[Statistic::LikelihoodRatio],
    );
    let audit = audit_client(&truthful, &setup, &|_| {}).unwrap();
    assert_eq!(audit.flagged(), Some(true));
    assert!(audit.eps_emp() > 6.0, "{audit:?}");
    // Uniform noise that ignores its input: nothing to see.
    let noise = command("awk '{ print int(rand() * 10) }'", Shape::Value, 30.0);
    let audit = audit_client(&noise, &setup, &|_| {}).unwrap();
    assert_eq!(audit.flagged(), Some(false), "{audit:?}");
}

#[test]
fn a_failing_external_client_gets_a_clear_error() {
    let setup = setup(
        Shape::Value,
        10,
        1.0,
        100,
        Pairs::Extremes,
        &[Statistic::LikelihoodRatio],
    );
    let run = |script: &str, timeout: f64| {
        audit_client(&command(script, Shape::Value, timeout), &setup, &|_| {})
            .unwrap_err()
            .to_string()
    };
    let exit = run("echo broken >&2; exit 3", 30.0);
    assert!(
        exit.contains("exited with exit status: 3") && exit.contains("broken"),
        "{exit}"
    );
    let malformed = run("awk 'NR == 7 { print \"x\"; next } { print $1 }'", 30.0);
    assert!(
        malformed.contains("output line 7") && malformed.contains("\"x\""),
        "{malformed}"
    );
    let short = run("head -n 3", 30.0);
    assert!(short.contains("wrote 3 reports for 100 items"), "{short}");
    let long = run("cat; echo 1", 30.0);
    assert!(long.contains("more than 100 reports"), "{long}");
    let hang = run("sleep 20", 0.3);
    assert!(hang.contains("within 0.3 s"), "{hang}");
    let missing = run("/nonexistent/client", 30.0);
    assert!(
        missing.contains("exited with exit status: 127"),
        "{missing}"
    );
}

#[test]
fn noisy_and_hanging_pipelines_are_handled() {
    let setup = setup(
        Shape::Value,
        10,
        1.0,
        3000,
        Pairs::Extremes,
        &[Statistic::LikelihoodRatio],
    );
    // A megabyte on stderr does not block or kill the client.
    let noisy = command("head -c 1000000 /dev/zero >&2; cat", Shape::Value, 30.0);
    assert!(audit_client(&noisy, &setup, &|_| {}).is_ok());
    // A bad first line of a long answer is the error, not the broken pipe that follows.
    let bad = command("echo x; yes 1", Shape::Value, 30.0);
    let err = audit_client(&bad, &setup, &|_| {}).unwrap_err().to_string();
    assert!(
        err.contains("output line 1") && err.contains("\"x\""),
        "{err}"
    );
    // A timeout stops every process of a pipeline.
    let start = std::time::Instant::now();
    let hang = command("sleep 30 | cat", Shape::Value, 0.3);
    let err = audit_client(&hang, &setup, &|_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("within 0.3 s"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn settings_out_of_range_are_refused() {
    let config = |trials| AuditConfig {
        trials,
        ..AuditConfig::default()
    };
    let grr = build(Protocol::Grr, 10, 1.0);
    for trials in [0, u64::MAX] {
        let err = audit_mechanism(&grr, &config(trials)).unwrap_err();
        assert!(matches!(err, AuditError::Trials(t) if t == trials), "{err}");
    }
    let mut s = setup(
        Shape::Value,
        10,
        1.0,
        10,
        Pairs::Extremes,
        &[Statistic::LikelihoodRatio],
    );
    s.batch = 0;
    assert!(matches!(
        audit_client(&command("cat", Shape::Value, 1.0), &s, &|_| {}),
        Err(AuditError::Batch(0))
    ));
    assert!(ldp_audit::parse_line("1", Shape::Hashed { g: 0 }, 10).is_err());
    assert!(ldp_audit::parse_line("1", Shape::Value, 0).is_err());
    // Pairs::Cycle over a large domain is planned in linear time.
    let cycle = AuditConfig {
        pairs: Pairs::Cycle,
        ..AuditConfig::default()
    };
    assert_eq!(
        ldp_audit::Plan::new(1 << 20, &cycle)
            .unwrap()
            .inputs()
            .len(),
        1 << 20
    );
}

#[test]
fn a_client_returning_too_few_reports_is_named() {
    let short = |items: &[u32]| -> Result<Vec<Observation>, AuditError> {
        Ok(items[1..].iter().map(|&x| Observation::Value(x)).collect())
    };
    let setup = setup(
        Shape::Value,
        10,
        1.0,
        100,
        Pairs::Extremes,
        &[Statistic::LikelihoodRatio],
    );
    let err = audit_client(&short, &setup, &|_| {}).unwrap_err();
    assert!(
        matches!(
            err,
            AuditError::ReportCount {
                expected: 100,
                got: 99,
                ..
            }
        ),
        "{err}"
    );
    let wrong = |items: &[u32]| -> Result<Vec<Observation>, AuditError> {
        Ok(items.iter().map(|_| Observation::Value(10)).collect())
    };
    let err = audit_client(&wrong, &setup, &|_| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("report 1 of a batch of input 0: the item 10 is outside the domain 0 to 9"),
        "{err}"
    );
}

/// Issue 43, item 10: at eps from 710 on, e^eps overflows; the Hadamard families'
/// likelihoods are computed in log space and their exact budget stays eps. (GRR, SS, UE
/// and BLH hold to about eps = 710: beyond, e^-eps loses its precision and then
/// underflows, not yet handled.)
#[test]
fn exact_audits_at_huge_budgets_are_finite() {
    let cases = [
        (Protocol::Hm, &[710.0, 1e6, 1e308][..]),
        (Protocol::Hcms, &[710.0, 1e6, 1e308]),
        (Protocol::Grr, &[710.0]),
        (Protocol::Oue, &[710.0]),
    ];
    for (protocol, budgets) in cases {
        for &eps in budgets {
            let exact = exact_audit(&build(protocol, 64, eps)).unwrap();
            assert!(
                (exact.eps_exact - eps).abs() <= 1e-9 * eps && !exact.flagged(),
                "{protocol:?} at {eps}: {}",
                exact.eps_exact
            );
        }
    }
}

/// Whether the process `pid` has ended (gone, or a zombie waiting for its reaper).
fn ended(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Issue 43, items 2 and 12: a client's runaway line is refused once it passes the cap,
/// not read whole, and an error quotes at most 40 characters of a line.
#[test]
fn a_runaway_line_is_refused_at_the_cap_and_quoted_short() {
    let setup = setup(
        Shape::Value,
        10,
        1.0,
        100,
        Pairs::Extremes,
        &[Statistic::LikelihoodRatio],
    );
    let cap = ldp_audit::client_line_cap(Shape::Value, 10);
    assert!(cap < 1024, "{cap}");
    let run = |script: &str| {
        audit_client(&command(script, Shape::Value, 30.0), &setup, &|_| {})
            .unwrap_err()
            .to_string()
    };
    // An endless line of digits: before the fix, read until memory ran out.
    let endless = run("yes 1 | tr -d '\\n'");
    assert!(
        endless.contains(&format!("output line 1 is longer than {cap} bytes"))
            && endless.contains("\"1111111111111111111111111111111111111111\"..."),
        "{endless}"
    );
    assert!(endless.len() < 400, "{} bytes: {endless}", endless.len());
    // A malformed line just under the cap is quoted by its first 40 characters.
    let long = run(&format!(
        "head -c {} /dev/zero | tr '\\0' x; echo",
        cap - 10
    ));
    assert!(
        long.contains("output line 1") && long.contains("\"xxxx"),
        "{long}"
    );
    assert!(long.len() < 400, "{} bytes: {long}", long.len());
    // Set and vector lines of k items fit.
    assert!(ldp_audit::client_line_cap(Shape::Set, 1000) > 2 * 1000 + 20);
    assert!(ldp_audit::client_line_cap(Shape::Vector, 1000) > 25 * 1000);
}

/// Issue 43, items 5 and 6: whatever a client leaves running ends with its batch, and a
/// background process that holds its pipes open neither hangs the audit nor outlives it.
#[test]
fn what_a_client_leaves_running_ends_with_its_batch() {
    let setup = setup(
        Shape::Value,
        10,
        1.0,
        2000,
        Pairs::Extremes,
        &[Statistic::LikelihoodRatio],
    );
    let pids = std::env::temp_dir().join(format!("ldp-audit-pids-{}", std::process::id()));
    let _ = std::fs::remove_file(&pids);
    let pids_path = pids.display();
    let start = std::time::Instant::now();
    // Holds stderr (before the fix: joined with no deadline, so never returned), stdout,
    // or nothing (before the fix: one sleep per batch outlived the audit).
    for (redirect, timeout) in [
        ("</dev/null >/dev/null", 3.0),
        ("</dev/null 2>/dev/null", f64::INFINITY),
        ("</dev/null >/dev/null 2>&1", 3.0),
    ] {
        let script = format!("sleep 60 {redirect} & echo $! >> {pids_path}; cat");
        let timeout = if timeout.is_finite() {
            Duration::from_secs_f64(timeout)
        } else {
            Duration::MAX
        };
        let client = CommandClient {
            timeout,
            ..command(&script, Shape::Value, 1.0)
        };
        let audit = audit_client(&client, &setup, &|_| {});
        assert!(audit.is_ok(), "{redirect}: {audit:?}");
    }
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    let started = std::fs::read_to_string(&pids).unwrap();
    let started: Vec<&str> = started.split_whitespace().collect();
    assert!(started.len() >= 3, "{started:?}");
    let waited = std::time::Instant::now();
    while !started.iter().all(|p| ended(p)) && waited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let alive: Vec<&&str> = started.iter().filter(|p| !ended(p)).collect();
    assert!(alive.is_empty(), "still running: {alive:?}");
    let _ = std::fs::remove_file(&pids);
}
