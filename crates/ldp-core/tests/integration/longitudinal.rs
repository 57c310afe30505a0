//! The longitudinal (memoized) protocols: exact privacy audits of both guarantees, by
//! enumerating memos and reports at small k; goodness of fit of the chained samplers;
//! unbiased estimation; persisted device state.

use crate::common;

use std::collections::HashMap;

use common::{ALPHA, chi_square_p};
use ldp_core::longitudinal::{
    Longitudinal, LongitudinalProtocol as L, LongitudinalReport, Memo, Round,
};
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{DomainSize, Epsilon};

const CHAINS: [L; 5] = [L::LGrr, L::LSue, L::LOue, L::LOsue, L::LSoue];

fn build(protocol: L, k: u32, perm: f64, one: f64) -> Longitudinal {
    Longitudinal::new(
        protocol,
        DomainSize::new(k).unwrap(),
        Epsilon::new(perm).unwrap(),
        Epsilon::new(one).unwrap(),
    )
    .unwrap()
}

/// Every output of a round over k items, as support sets: singletons for GRR, all subsets
/// for the unary chains.
fn outputs(l: &Longitudinal) -> Vec<Vec<u32>> {
    let k = l.domain_size().get();
    if l.reports_items() {
        (0..k).map(|y| vec![y]).collect()
    } else {
        (0u32..1 << k)
            .map(|mask| (0..k).filter(|i| mask >> i & 1 == 1).collect())
            .collect()
    }
}

/// P[output | input support] of one round, written from its definition (GRR over k items,
/// or independent bits), independently of the crate's formulas.
fn round_prob(round: Round, k: u32, items: bool, input: &[u32], output: &[u32]) -> f64 {
    if items {
        let q = (1.0 - round.p) / f64::from(k - 1);
        if input == output { round.p } else { q }
    } else {
        (0..k)
            .map(|i| {
                let (was, is) = (input.contains(&i), output.contains(&i));
                let p1 = if was { round.p } else { round.q };
                if is { p1 } else { 1.0 - p1 }
            })
            .product()
    }
}

fn to_report(l: &Longitudinal, support: &[u32]) -> LongitudinalReport {
    if l.reports_items() {
        LongitudinalReport::Grr(ldp_core::GrrReport { y: support[0] })
    } else {
        LongitudinalReport::Ones(ldp_core::OnesReport {
            ones: support.to_vec(),
        })
    }
}

/// P[report | x] = sum over memos m of P1[m | x] P2[report | m], for every report and x.
fn report_law(l: &Longitudinal) -> Vec<Vec<f64>> {
    let k = l.domain_size().get();
    let items = l.reports_items();
    let outs = outputs(l);
    (0..k)
        .map(|x| {
            outs.iter()
                .map(|y| {
                    outs.iter()
                        .map(|m| {
                            round_prob(l.first_round(), k, items, &[x], m)
                                * round_prob(l.second_round(), k, items, m, y)
                        })
                        .sum()
                })
                .collect()
        })
        .collect()
}

/// The largest ratio P[o | x] / P[o | x'] over outputs o and inputs x, x'.
fn worst_ratio(law: &[Vec<f64>]) -> f64 {
    (0..law[0].len())
        .map(|o| {
            let col = law.iter().map(|row| row[o]);
            let max = col.clone().fold(f64::MIN, f64::max);
            let min = col.fold(f64::MAX, f64::min);
            max / min
        })
        .fold(0.0, f64::max)
}

#[test]
fn one_report_is_exactly_eps_1_ldp_and_the_memo_exactly_eps_perm_ldp() {
    for protocol in CHAINS {
        for k in [2, 3, 5] {
            for (perm, one) in [(1.0, 0.5), (2.0, 1.0), (4.0, 0.5), (6.0, 3.0)] {
                let l = build(protocol, k, perm, one);
                let law = report_law(&l);
                for row in &law {
                    assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
                }
                let ratio = worst_ratio(&law);
                let what = format!("{protocol:?} k={k} perm={perm} one={one}");
                assert!(ratio <= one.exp() * (1.0 + 1e-9), "{what}: {ratio}");
                assert!(
                    ratio >= one.exp() * (1.0 - 1e-9),
                    "{what}: budget not spent, {ratio}"
                );
                // The crate's single-report likelihood is the enumerated law.
                for (x, row) in law.iter().enumerate() {
                    for (y, &prob) in outputs(&l).iter().zip(row) {
                        let ll = l.log_likelihood(&to_report(&l, y), x as u32);
                        assert!(
                            (ll.exp() - prob).abs() < 1e-12 * prob.max(1e-300) + 1e-15,
                            "{what}"
                        );
                    }
                }
                // The memo: one first-round output, whatever the number of reports.
                let items = l.reports_items();
                let memo_law: Vec<Vec<f64>> = (0..k)
                    .map(|x| {
                        outputs(&l)
                            .iter()
                            .map(|m| round_prob(l.first_round(), k, items, &[x], m))
                            .collect()
                    })
                    .collect();
                let memo_ratio = worst_ratio(&memo_law);
                assert!(
                    memo_ratio <= perm.exp() * (1.0 + 1e-9),
                    "{what}: memo {memo_ratio}"
                );
            }
        }
    }
}

/// Linked reports of one memo are worth at most the memo: the joint law of t reports,
/// summed over memos, never has a ratio above e^eps_perm (here t = 3, k = 3).
#[test]
fn three_linked_reports_never_exceed_eps_perm() {
    for protocol in CHAINS {
        let l = build(protocol, 3, 1.5, 0.7);
        let (k, items) = (3, l.reports_items());
        let outs = outputs(&l);
        let mut worst: f64 = 0.0;
        for a in &outs {
            for b in &outs {
                for c in &outs {
                    let probs: Vec<f64> = (0..k)
                        .map(|x| {
                            outs.iter()
                                .map(|m| {
                                    round_prob(l.first_round(), k, items, &[x], m)
                                        * [a, b, c]
                                            .iter()
                                            .map(|y| round_prob(l.second_round(), k, items, m, y))
                                            .product::<f64>()
                                })
                                .sum()
                        })
                        .collect();
                    let max = probs.iter().cloned().fold(f64::MIN, f64::max);
                    let min = probs.iter().cloned().fold(f64::MAX, f64::min);
                    worst = worst.max(max / min);
                }
            }
        }
        assert!(
            worst <= 1.5f64.exp() * (1.0 + 1e-9),
            "{protocol:?}: {worst}"
        );
        assert!(
            worst > 0.7f64.exp(),
            "{protocol:?}: three reports reveal more than one"
        );
    }
}

/// The samplers against the enumerated laws: the memo, and a report given a fixed memo.
#[test]
fn memo_and_report_samplers_follow_their_exact_laws() {
    let draws = 200_000;
    for protocol in CHAINS {
        let l = build(protocol, 4, 2.0, 1.0);
        let (k, items) = (4, l.reports_items());
        let outs = outputs(&l);
        let index: HashMap<Vec<u32>, usize> = outs
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, o)| (o, i))
            .collect();
        let mut rng = stream_rng(7, 0, Role::Other(1), protocol as u64);
        // Memos of item 1.
        let mut seen = vec![0u64; outs.len()];
        for _ in 0..draws {
            let support = match l.memoize(1, &mut rng).unwrap() {
                Memo::Item(y) => vec![y],
                Memo::Ones(ones) => ones,
            };
            seen[index[&support]] += 1;
        }
        let law: Vec<f64> = outs
            .iter()
            .map(|m| round_prob(l.first_round(), k, items, &[1], m))
            .collect();
        let p = chi_square_p(&seen, &law);
        assert!(p > ALPHA, "{protocol:?} memo: p = {p}");
        // Reports of a fixed memo (item 2 for L-GRR, bits {0, 2} otherwise).
        let (memo, support) = if items {
            (Memo::Item(2), vec![2])
        } else {
            (Memo::Ones(vec![0, 2]), vec![0, 2])
        };
        let mut seen = vec![0u64; outs.len()];
        for _ in 0..draws {
            let report = l.report(&memo, &mut rng).unwrap();
            let mut s = Vec::new();
            l.for_each_supported(&report, |i| s.push(i));
            seen[index[&s]] += 1;
        }
        let law: Vec<f64> = outs
            .iter()
            .map(|y| round_prob(l.second_round(), k, items, &support, y))
            .collect();
        let p = chi_square_p(&seen, &law);
        assert!(p > ALPHA, "{protocol:?} report: p = {p}");
    }
}

/// The estimate of one collection is unbiased: over many users, each item's estimate lies
/// within 4 standard errors of its true frequency (approximate variance q_s(1-q_s)/(n(p_s-q_s)^2)).
#[test]
fn the_chained_estimator_is_unbiased() {
    let (k, n) = (20u32, 200_000u32);
    for protocol in CHAINS {
        let l = build(protocol, k, 3.0, 1.0);
        let mut rng = stream_rng(11, 0, Role::Genuine, protocol as u64);
        let mut agg = l.aggregator();
        let truth: Vec<f64> = (0..k)
            .map(|i| if i < 5 { 0.12 } else { 0.4 / 15.0 })
            .collect();
        for u in 0..n {
            let item = if u % 100 < 60 { u % 5 } else { 5 + u % 15 };
            let memo = l.memoize(item, &mut rng).unwrap();
            agg.add(&l.report(&memo, &mut rng).unwrap()).unwrap();
        }
        let est = agg.raw_estimate().unwrap();
        let Round { p, q } = l.chained();
        let se = (q * (1.0 - q) / (f64::from(n) * (p - q).powi(2))).sqrt();
        for (i, (e, t)) in est.iter().zip(&truth).enumerate() {
            assert!(
                (e - t).abs() < 4.5 * se,
                "{protocol:?} item {i}: {e} vs {t} (se {se})"
            );
        }
    }
}

#[test]
fn one_report_follows_its_report_spec_exactly() {
    // The law of one report, summed over every memo, against the one-shot protocol of
    // `report_spec` written from its (p*, q*): GRR at eps_1 for L-GRR, UE at eps_1 and the
    // chained p for the unary chains (below 1/2 for L-OUE and L-SOUE).
    let k = 4;
    for protocol in CHAINS {
        for (perm, one) in [(1.0, 0.4), (3.0, 1.0), (6.0, 2.5)] {
            let l = build(protocol, k, perm, one);
            let spec = l.report_spec().unwrap();
            assert_eq!(spec.eps().get(), one);
            let (p, q) = spec.pure_probabilities().unwrap();
            let one_shot = Round { p, q };
            let law = report_law(&l);
            for (x, row) in law.iter().enumerate() {
                for (o, y) in outputs(&l).iter().enumerate() {
                    let theirs = if l.reports_items() {
                        if y[0] == x as u32 { p } else { q }
                    } else {
                        round_prob(one_shot, k, false, &[x as u32], y)
                    };
                    assert!(
                        (row[o] - theirs).abs() <= 1e-12 * theirs,
                        "{protocol:?} ({perm}, {one}) x = {x}, {y:?}: {} vs {theirs}",
                        row[o]
                    );
                }
            }
            if matches!(protocol, L::LOue | L::LSoue) {
                assert!(p < 0.5, "{protocol:?}: p* = {p}");
            }
        }
    }
}

#[test]
fn one_collection_estimates_the_same_as_its_one_shot_protocol() {
    use ldp_core::{Aggregator, Estimator, Grr, Mechanism, UnaryEncoding};
    let (k, n) = (12u32, 20_000u32);
    for protocol in CHAINS {
        let l = build(protocol, k, 3.0, 1.0);
        let spec = l.report_spec().unwrap();
        let mut rng = stream_rng(5, 0, Role::Genuine, protocol as u64);
        let mut chained = l.aggregator();
        let reports: Vec<LongitudinalReport> = (0..n)
            .map(|u| {
                let memo = l.memoize(u % k, &mut rng).unwrap();
                l.report(&memo, &mut rng).unwrap()
            })
            .collect();
        for r in &reports {
            chained.add(r).unwrap();
        }
        let theirs = match spec.params() {
            ldp_core::FamilyParams::Grr => {
                let grr = Grr::new(spec.k(), spec.eps()).unwrap();
                let mut agg = grr.aggregator();
                for r in &reports {
                    let LongitudinalReport::Grr(g) = r else {
                        panic!()
                    };
                    agg.add(g).unwrap();
                }
                agg.estimate(Estimator::Unbiased).unwrap()
            }
            ldp_core::FamilyParams::UnaryEncoding { p } => {
                let ue = UnaryEncoding::new(spec.k(), spec.eps(), p).unwrap();
                let mut agg = ue.aggregator();
                for r in &reports {
                    let LongitudinalReport::Ones(o) = r else {
                        panic!()
                    };
                    agg.add(o).unwrap();
                }
                agg.estimate(Estimator::Unbiased).unwrap()
            }
            other => panic!("{other:?}"),
        };
        let ours = chained.estimate(Estimator::Unbiased).unwrap();
        for (a, b) in ours.iter().zip(&theirs) {
            assert!((a - b).abs() < 1e-12, "{protocol:?}: {a} vs {b}");
        }
    }
}

/// What a device persists, and what a server stores, round-trip and are checked on the way in.
#[cfg(feature = "serde")]
mod persisted {
    use std::collections::BTreeMap;

    use ldp_core::Estimator;
    use ldp_core::longitudinal::{LongitudinalClient, MemoTable};

    use super::*;

    #[test]
    fn a_device_keeps_one_memo_per_value_across_restarts() {
        use rand::SeedableRng;
        let l = build(L::LOsue, 8, 2.0, 1.0);
        let rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let mut device = LongitudinalClient::with_rng(MemoTable::new(l.clone()), rng);
        device.report(3).unwrap();
        device.report(5).unwrap();
        let memo3 = device.state().memo(3).cloned().unwrap();
        let saved = serde_json::to_string(device.state()).unwrap();
        let restored: MemoTable = serde_json::from_str(&saved).unwrap();
        assert_eq!(restored.memo(3), Some(&memo3));
        let rng = rand_chacha::ChaCha20Rng::seed_from_u64(4);
        let mut device = LongitudinalClient::with_rng(restored, rng);
        device.report(3).unwrap();
        assert_eq!(device.state().memo(3), Some(&memo3));
        assert!(device.report(8).is_err());
        // A tampered state is rejected with the reason.
        let bad = saved.replace("\"ones\":[", "\"ones\":[9,");
        let err = serde_json::from_str::<MemoTable>(&bad)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("outside 0..8") || err.contains("sorted"),
            "{err}"
        );
        let mut memos = BTreeMap::new();
        memos.insert(1, Memo::Item(0));
        assert!(MemoTable::restore(l, memos).is_err());
    }

    #[test]
    fn reports_and_counts_serialize_and_reject_the_wrong_shape() {
        let grr = build(L::LGrr, 5, 2.0, 1.0);
        let sue = build(L::LSue, 5, 2.0, 1.0);
        let r: LongitudinalReport = serde_json::from_str(r#"{"y": 3}"#).unwrap();
        assert!(grr.validate(&r).is_ok());
        assert!(sue.validate(&r).is_err());
        let r: LongitudinalReport = serde_json::from_str(r#"{"ones": [1, 4]}"#).unwrap();
        assert!(sue.validate(&r).is_ok());
        let mut agg = grr.aggregator();
        assert!(agg.add(&r).is_err());
        assert_eq!(agg.count(), 0);
        agg.add(&LongitudinalReport::Grr(ldp_core::GrrReport { y: 1 }))
            .unwrap();
        let json = serde_json::to_string(&agg).unwrap();
        let back: ldp_core::longitudinal::LongitudinalCounts = serde_json::from_str(&json).unwrap();
        assert_eq!(back, agg);
        let corrupt = json.replace("\"n\":1", "\"n\":2");
        assert!(
            serde_json::from_str::<ldp_core::longitudinal::LongitudinalCounts>(&corrupt).is_err()
        );
        assert_eq!(agg.estimate(Estimator::Simplex).unwrap().len(), 5);
        let params = serde_json::to_string(&sue).unwrap();
        assert_eq!(serde_json::from_str::<Longitudinal>(&params).unwrap(), sue);
        let too_much = params.replace("\"eps_1\":1.0", "\"eps_1\":2.0");
        let err = serde_json::from_str::<Longitudinal>(&too_much)
            .unwrap_err()
            .to_string();
        assert!(err.contains("below 2"), "{err}");
    }
}
