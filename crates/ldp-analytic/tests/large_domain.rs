//! The large-domain oracles' closed forms against independent computations: enumeration
//! of every report with the mechanism's own likelihood, support and server.

use approx::assert_relative_eq;
use ldp_analytic::{LhAsr, asr, epg, variance};
use ldp_core::families::hadamard::{HadamardResponse, max_blocks};
use ldp_core::{
    Aggregator, AttackSurface, Clip, DomainSize, Epsilon, FamilyParams, Mechanism, Spec, Support,
};

fn k(v: u32) -> DomainSize {
    DomainSize::new(v).unwrap()
}
fn eps(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

/// Every (k, eps, blocks) of a small Hadamard response.
fn hadamard_cases() -> Vec<(DomainSize, Epsilon, u32)> {
    let mut cases = Vec::new();
    for kv in [2, 3, 5, 7, 12, 30] {
        for e in [0.5, 2.0, 4.0] {
            let mut blocks = 1;
            while blocks <= max_blocks(k(kv)) {
                cases.push((k(kv), eps(e), blocks));
                blocks *= 2;
            }
        }
    }
    cases
}

fn hr_spec(k: DomainSize, eps: Epsilon, blocks: u32) -> Spec {
    Spec::new(k, eps, FamilyParams::HadamardResponse { blocks }).unwrap()
}

/// The uniform-over-support attack's success, summed over every column and item.
fn enumerated_asr<M: Mechanism + Support>(mech: &M, outputs: &[M::Report]) -> f64 {
    let k = mech.domain_size().get();
    let kf = f64::from(k);
    outputs
        .iter()
        .map(|y| {
            let support = mech.support(y);
            (0..k)
                .map(|x| {
                    let p = mech.log_likelihood(y, x).exp() / kf;
                    if support.is_empty() {
                        p / kf
                    } else if support.contains(&x) {
                        p / support.len() as f64
                    } else {
                        0.0
                    }
                })
                .sum::<f64>()
        })
        .sum()
}

/// The estimate one report alone gives (n = 1): the estimator is linear in the column
/// counts, so the estimate of n reports is the mean of these.
fn one_report_estimate(hr: &HadamardResponse, y: u32) -> Vec<f64> {
    let mut server = hr.aggregator();
    server.add(&ldp_core::GrrReport { y }).unwrap();
    server.raw_estimate().unwrap()
}

#[test]
fn hadamard_asr_is_exact_by_enumeration() {
    for (k, eps, blocks) in hadamard_cases() {
        let hr = HadamardResponse::new(k, eps, blocks).unwrap();
        let outputs: Vec<_> = (0..hr.outputs())
            .map(|y| ldp_core::GrrReport { y })
            .collect();
        let want = enumerated_asr(&hr, &outputs);
        let got = asr::expected(&hr_spec(k, eps, blocks), LhAsr::Exact);
        assert_relative_eq!(got, want, max_relative = 1e-12);
    }
}

#[test]
fn hadamard_mse_is_the_servers_exact_variance() {
    for (k, eps, blocks) in hadamard_cases() {
        let hr = HadamardResponse::new(k, eps, blocks).unwrap();
        let spec = hr_spec(k, eps, blocks);
        let kv = k.as_usize();
        // Per column: its likelihood under each item, and the estimate it alone gives.
        let columns: Vec<(Vec<f64>, Vec<f64>)> = (0..hr.outputs())
            .map(|y| {
                let report = ldp_core::GrrReport { y };
                let likelihoods = (0..k.get())
                    .map(|x| hr.log_likelihood(&report, x).exp())
                    .collect();
                (likelihoods, one_report_estimate(&hr, y))
            })
            .collect();
        // A skewed population, and one with item 0 absent and the others even.
        let total = (kv * (kv + 1) / 2) as f64;
        let skewed: Vec<f64> = (1..=kv).map(|i| i as f64 / total).collect();
        let mut even = vec![1.0 / (kv - 1) as f64; kv];
        even[0] = 0.0;
        for (f, absent_item) in [(&skewed, false), (&even, true)] {
            let (mut mean, mut square) = (vec![0.0; kv], vec![0.0; kv]);
            for (likelihoods, g) in &columns {
                let p: f64 = likelihoods.iter().zip(f).map(|(l, f)| l * f).sum();
                for x in 0..kv {
                    mean[x] += p * g[x];
                    square[x] += p * g[x] * g[x];
                }
            }
            for x in 0..kv {
                assert!((mean[x] - f[x]).abs() < 1e-9, "{hr:?}: biased at {x}");
            }
            let exact = (0..kv).map(|x| square[x] - f[x] * f[x]).sum::<f64>() / kv as f64;
            assert_relative_eq!(
                variance::expected_mse(&spec, 1.0, f),
                exact,
                max_relative = 1e-9
            );
            if absent_item {
                // The paper's MSE: an absent item among even others.
                assert_relative_eq!(
                    variance::approx_per_user(&spec),
                    square[0],
                    max_relative = 1e-9
                );
            }
        }
    }
}

#[test]
fn one_block_is_a_pure_protocol_with_the_pure_variance() {
    for e in [0.1, 1.0, 4.0] {
        let spec = hr_spec(k(50), eps(e), 1);
        let (p, q) = spec.pure_probabilities().unwrap();
        assert_relative_eq!(
            variance::approx_per_user(&spec),
            q * (1.0 - q) / ((p - q) * (p - q)),
            max_relative = 1e-12
        );
        // The preset takes one block at small eps.
        if e <= 1.0 {
            assert_eq!(
                Spec::classic(ldp_core::Protocol::Hr, k(50), eps(e))
                    .unwrap()
                    .family(),
                FamilyParams::HadamardResponse { blocks: 1 }
            );
        }
    }
}

#[test]
fn hadamard_fake_report_gain_is_what_the_planned_report_adds() {
    for (k, eps, blocks) in hadamard_cases() {
        let hr = HadamardResponse::new(k, eps, blocks).unwrap();
        let spec = hr_spec(k, eps, blocks);
        for r in 1..=k.get().min(5) {
            // Targets spread over blocks (every other item), and packed (the first r).
            let spread: Vec<u32> = (0..k.get()).step_by(2).take(r as usize).collect();
            let packed: Vec<u32> = (0..r).collect();
            for targets in [spread, packed] {
                let plan = hr.plan_max_gain(&targets, Clip::Off);
                let report = plan.fixed.expect("one best report");
                let g = one_report_estimate(&hr, report.y);
                let added: f64 = targets.iter().map(|&t| g[t as usize]).sum();
                // Each supported target gains the estimator's scale, (2B - 1 + e^eps) / (e^eps - 1).
                let scale = (2.0 * f64::from(blocks) - 1.0 + eps.exp()) / (eps.exp() - 1.0);
                assert_relative_eq!(
                    added,
                    f64::from(plan.supported) * scale,
                    max_relative = 1e-9
                );
                // The closed form is the best over where the r targets may lie: packed.
                let attack = epg::Poisoning::new(0.1, targets.len() as u32, 0.0).unwrap();
                let gain = epg::expected(&spec, &attack).unwrap().finite().unwrap() / 0.1;
                assert!(
                    added <= gain * (1.0 + 1e-9),
                    "{hr:?} {targets:?}: {added} > {gain}"
                );
                if targets == (0..r).collect::<Vec<_>>() {
                    assert_relative_eq!(added, gain, max_relative = 1e-9);
                }
            }
        }
    }
}
