//! ASR after t linked reports against brute force: enumerate every sequence of t reports
//! (and every memo), take the MAP guess by the true joint likelihood with exact ties, and
//! average. Independent of the closed forms' counting arguments.

use ldp_analytic::asr::LhAsr;
use ldp_analytic::{asr, grr, longitudinal};
use ldp_core::longitudinal::{Longitudinal, LongitudinalProtocol as L, Round};
use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol, Spec};

fn k(v: u32) -> DomainSize {
    DomainSize::new(v).unwrap()
}
fn e(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

/// Output space of one round over k items as support sets, with `P[output | input set]`:
/// GRR-like (one item) or independent bits.
fn outputs(k: u32, items: bool) -> Vec<Vec<u32>> {
    if items {
        (0..k).map(|y| vec![y]).collect()
    } else {
        (0u32..1 << k)
            .map(|mask| (0..k).filter(|i| mask >> i & 1 == 1).collect())
            .collect()
    }
}

fn prob(round: Round, k: u32, items: bool, input: &[u32], output: &[u32]) -> f64 {
    if items {
        if input == output {
            round.p
        } else {
            (1.0 - round.p) / f64::from(k - 1)
        }
    } else {
        (0..k)
            .map(|i| {
                let p1 = if input.contains(&i) { round.p } else { round.q };
                if output.contains(&i) { p1 } else { 1.0 - p1 }
            })
            .product()
    }
}

/// ASR of the MAP attack (uniform prior) by enumerating all t-sequences of outputs, for a
/// joint law `joint(x, sequence)`.
fn brute_force(k: u32, outs: &[Vec<u32>], t: u32, joint: impl Fn(u32, &[&Vec<u32>]) -> f64) -> f64 {
    let n = outs.len();
    let mut total = 0.0;
    let mut idx = vec![0usize; t as usize];
    loop {
        let seq: Vec<&Vec<u32>> = idx.iter().map(|&i| &outs[i]).collect();
        let lik: Vec<f64> = (0..k).map(|x| joint(x, &seq)).collect();
        let best = lik.iter().cloned().fold(f64::MIN, f64::max);
        let winners: Vec<usize> = (0..k as usize)
            .filter(|&x| lik[x] >= best * (1.0 - 1e-12))
            .collect();
        for &x in &winners {
            total += lik[x] / winners.len() as f64;
        }
        // Next sequence.
        let mut pos = 0;
        loop {
            if pos == idx.len() {
                return total / f64::from(k);
            }
            idx[pos] += 1;
            if idx[pos] < n {
                break;
            }
            idx[pos] = 0;
            pos += 1;
        }
    }
}

fn one_shot_brute(spec: &Spec, t: u32) -> f64 {
    let kk = spec.k().get();
    let items = matches!(spec.params(), FamilyParams::Grr);
    let (p, q) = spec.pure_probabilities().unwrap();
    let round = Round { p, q };
    let outs = outputs(kk, items);
    brute_force(kk, &outs, t, |x, seq| {
        seq.iter()
            .map(|y| prob(round, kk, items, &[x], y))
            .product()
    })
}

fn memo_brute(l: &Longitudinal, t: u32) -> f64 {
    let kk = l.domain_size().get();
    let items = l.reports_items();
    let outs = outputs(kk, items);
    brute_force(kk, &outs, t, |x, seq| {
        outs.iter()
            .map(|m| {
                prob(l.first_round(), kk, items, &[x], m)
                    * seq
                        .iter()
                        .map(|y| prob(l.second_round(), kk, items, m, y))
                        .product::<f64>()
            })
            .sum()
    })
}

#[test]
fn one_shot_closed_forms_match_brute_force() {
    let specs = [
        Spec::classic(Protocol::Grr, k(3), e(1.0)).unwrap(),
        Spec::classic(Protocol::Grr, k(4), e(0.5)).unwrap(),
        Spec::classic(Protocol::Sue, k(3), e(1.0)).unwrap(),
        Spec::classic(Protocol::Oue, k(3), e(2.0)).unwrap(),
        Spec::classic(Protocol::The, k(3), e(1.5)).unwrap(),
    ];
    for spec in &specs {
        for t in 1..=4 {
            if spec.params() != FamilyParams::Grr && t > 3 {
                continue;
            }
            let closed = longitudinal::asr_after(spec, t).unwrap();
            let brute = one_shot_brute(spec, t);
            assert!(
                (closed - brute).abs() < 1e-12,
                "{spec:?} t={t}: {closed} vs {brute}"
            );
        }
    }
}

#[test]
fn memoized_closed_forms_match_brute_force() {
    for protocol in [L::LGrr, L::LSue, L::LOue, L::LOsue, L::LSoue] {
        let l = Longitudinal::new(protocol, k(3), e(2.0), e(0.8)).unwrap();
        for t in 1..=3 {
            let closed = longitudinal::memoized(&l, t);
            let brute = memo_brute(&l, t);
            assert!(
                (closed - brute).abs() < 1e-12,
                "{protocol:?} t={t}: {closed} vs {brute}"
            );
        }
    }
}

#[test]
fn one_report_is_the_one_shot_asr() {
    for kv in [2, 10, 100, 1000] {
        for eps in [0.5, 1.0, 4.0, 8.0] {
            for protocol in [
                Protocol::Grr,
                Protocol::Sue,
                Protocol::Oue,
                Protocol::The,
                Protocol::Olh,
                Protocol::Blh,
            ] {
                let spec = Spec::classic(protocol, k(kv), e(eps)).unwrap();
                let one = longitudinal::asr_after(&spec, 1).unwrap();
                // The exact one-shot form (LhAsr changes only local hashing's).
                let want = asr::expected(&spec, LhAsr::Exact);
                assert!(
                    (one - want).abs() <= 1e-12 * want,
                    "{spec:?}: {one} vs {want}"
                );
            }
            let ss1 = Spec::new(k(kv), e(eps), FamilyParams::SubsetSelection { omega: 1 }).unwrap();
            let one = longitudinal::asr_after(&ss1, 3).unwrap();
            let grr =
                longitudinal::asr_after(&Spec::classic(Protocol::Grr, k(kv), e(eps)).unwrap(), 3)
                    .unwrap();
            assert!((one - grr).abs() < 1e-12, "SS with omega = 1 is GRR");
            for protocol in [L::LGrr, L::LOsue, L::LSoue] {
                let Ok(l) = Longitudinal::new(protocol, k(kv), e(eps * 2.0), e(eps)) else {
                    continue;
                };
                let chain = l.chained();
                let want = if l.reports_items() {
                    chain.p
                } else {
                    asr::ones(k(kv), chain.p, chain.q)
                };
                let one = longitudinal::memoized(&l, 1);
                assert!(
                    (one - want).abs() <= 1e-12 * want,
                    "{protocol:?} k={kv} eps={eps}: {one} vs {want}"
                );
            }
        }
    }
}

#[test]
fn linked_reports_drive_the_attack_to_certainty_at_the_chernoff_rate() {
    // The error behaves as K t^(-1/2) e^(-t C) (Bahadur-Rao for the lattice sums of the
    // count differences): between t1 and t2 = 2 t1, ln(err(t1) / err(t2)) = t1 C + ln(2) / 2
    // + o(1). At t1 = 800 the slope is within 3.1% of C (0.01488 against 0.01535 for OUE),
    // approaching it from below.
    let slope = |spec: &Spec, t1: u32| {
        let err = |t| 1.0 - longitudinal::asr_after(spec, t).unwrap();
        ((err(t1) / err(2 * t1)).ln() - 0.5 * 2f64.ln()) / f64::from(t1)
    };
    for protocol in [Protocol::Oue, Protocol::Sue, Protocol::Olh, Protocol::The] {
        let spec = Spec::classic(protocol, k(20), e(0.5)).unwrap();
        let c = longitudinal::error_exponent(&spec).unwrap();
        let s = slope(&spec, 800);
        assert!(
            (s / c - 1.0).abs() < 0.05,
            "{protocol:?}: slope {s} vs C {c}"
        );
    }
    // GRR's multinomial form at a budget where a few hundred reports suffice.
    let grr = Spec::classic(Protocol::Grr, k(5), e(0.5)).unwrap();
    let c = longitudinal::error_exponent(&grr).unwrap();
    let s = slope(&grr, 400);
    assert!((s / c - 1.0).abs() < 0.05, "GRR: slope {s} vs C {c}");
}

#[test]
fn memoization_caps_the_attack_at_the_first_round() {
    for protocol in [L::LGrr, L::LSue, L::LOue, L::LOsue, L::LSoue] {
        let l = Longitudinal::new(protocol, k(100), e(2.0), e(1.0)).unwrap();
        let limit = longitudinal::memoized_limit(&l);
        let mut last = 0.0;
        for t in [1, 10, 100, 1000, 3000] {
            let a = longitudinal::memoized(&l, t);
            assert!(
                a >= last - 1e-10 && a <= limit + 1e-10,
                "{protocol:?} t={t}: {a} (limit {limit})"
            );
            last = a;
        }
        assert!(
            (last - limit).abs() < 1e-3 * limit,
            "{protocol:?}: {last} vs {limit}"
        );
    }
}

#[test]
fn the_collections_to_exceed_a_level_are_the_first_t_above_it() {
    let spec = Spec::classic(Protocol::Oue, k(100), e(1.0)).unwrap();
    let t = longitudinal::collections_to_exceed(&spec, 0.5, 10_000).unwrap();
    assert!(longitudinal::asr_after(&spec, t).unwrap() > 0.5);
    assert!(longitudinal::asr_after(&spec, t - 1).unwrap() <= 0.5);
    assert_eq!(longitudinal::collections_to_exceed(&spec, 0.5, t - 1), None);
}

#[test]
fn memoized_variance_of_l_grr_is_grr_at_eps_1() {
    let l = Longitudinal::new(L::LGrr, k(50), e(3.0), e(1.0)).unwrap();
    let grr = grr::variance(k(50), e(1.0));
    assert!((longitudinal::memoized_variance(&l) / grr - 1.0).abs() < 1e-10);
}

/// Extreme parameters (q close to 1, tiny budgets, large domains) stay finite, in [0, 1],
/// and equal the one-shot form at t = 1 (a huge (1 + r)^k once met a vanishing factor).
#[test]
fn extreme_parameters_stay_finite_probabilities() {
    for kv in [2, 100, 10_000] {
        for eps in [0.05, 0.5, 4.0, 10.0] {
            let presets = [
                Protocol::Grr,
                Protocol::Sue,
                Protocol::Olh,
                Protocol::Blh,
                Protocol::The,
            ]
            .map(|p| Spec::classic(p, k(kv), e(eps)).unwrap());
            let unary = [0.5, 0.9, 0.999, 0.999999]
                .map(|p| Spec::new(k(kv), e(eps), FamilyParams::UnaryEncoding { p }).unwrap());
            for spec in presets.into_iter().chain(unary) {
                let p = spec.params();
                for t in [1, 2, 50] {
                    let a = longitudinal::asr_after(&spec, t).unwrap();
                    assert!(
                        (0.0..=1.0).contains(&a),
                        "k={kv} eps={eps} {p:?} t={t}: {a}"
                    );
                    if t == 1 {
                        let want = asr::expected(&spec, LhAsr::Exact);
                        assert!(
                            (a - want).abs() <= 1e-9 * want,
                            "k={kv} eps={eps} {p:?}: {a} vs {want}"
                        );
                    }
                }
            }
        }
    }
}
