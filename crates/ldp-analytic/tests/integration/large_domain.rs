//! The large-domain oracles' closed forms against independent computations: enumeration
//! of every report with the mechanism's own likelihood, support and server.

use approx::assert_relative_eq;
use ldp_analytic::{LhAsr, asr, epg, variance};
use ldp_core::families::fast_local_hash::{self, FastLocalHashing};
use ldp_core::families::hadamard::{HadamardResponse, max_blocks};
use ldp_core::families::hadamard_mechanism::HadamardMechanism;
use ldp_core::families::sketch::{CountMeanSketch, HadamardCountMeanSketch};
use ldp_core::{
    Aggregator, AttackSurface, Clip, DomainSize, Epsilon, FamilyParams, LhReport, Mechanism, Spec,
    Support,
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

/// The estimate one report alone gives (n = 1): the estimators are linear in the cell
/// counts, so the estimate of n reports is the mean of these.
fn estimate_of<M: Mechanism>(mech: &M, report: &M::Report) -> Vec<f64> {
    let mut server = mech.aggregator();
    server.add(report).unwrap();
    server.raw_estimate().unwrap()
}

fn one_report_estimate(hr: &HadamardResponse, y: u32) -> Vec<f64> {
    estimate_of(hr, &ldp_core::GrrReport { y })
}

/// The exact per-user MSE of the server's estimate for a fixed population with shares
/// `f` (the paper's Eq. "var": users independent, their items fixed), by enumerating
/// every report; asserts that the estimate is unbiased.
fn enumerated_mse<M: Mechanism>(mech: &M, outputs: &[M::Report], f: &[f64]) -> Vec<f64> {
    let k = f.len();
    let columns: Vec<(Vec<f64>, Vec<f64>)> = outputs
        .iter()
        .map(|y| {
            let likelihoods = (0..k as u32)
                .map(|x| mech.log_likelihood(y, x).exp())
                .collect();
            (likelihoods, estimate_of(mech, y))
        })
        .collect();
    let (mut bias, mut spread) = (vec![0.0; k], vec![0.0; k]);
    for (user, &share) in f.iter().enumerate() {
        let (mut mean, mut square) = (vec![0.0; k], vec![0.0; k]);
        for (likelihoods, g) in &columns {
            for x in 0..k {
                mean[x] += likelihoods[user] * g[x];
                square[x] += likelihoods[user] * g[x] * g[x];
            }
        }
        for x in 0..k {
            bias[x] += share * mean[x];
            spread[x] += share * (square[x] - mean[x] * mean[x]);
        }
    }
    for x in 0..k {
        assert!((bias[x] - f[x]).abs() < 1e-9, "{mech:?}: biased at {x}");
    }
    spread
}

/// A skewed population over k items, and one with item 0 absent and the others even.
fn populations(k: usize) -> [Vec<f64>; 2] {
    let total = (k * (k + 1) / 2) as f64;
    let skewed: Vec<f64> = (1..=k).map(|i| i as f64 / total).collect();
    let mut even = vec![1.0 / (k - 1) as f64; k];
    even[0] = 0.0;
    [skewed, even]
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
        let outputs: Vec<_> = (0..hr.outputs())
            .map(|y| ldp_core::GrrReport { y })
            .collect();
        let [skewed, even] = populations(k.as_usize());
        for f in [&skewed, &even] {
            let spread = enumerated_mse(&hr, &outputs, f);
            let exact = spread.iter().sum::<f64>() / spread.len() as f64;
            assert_relative_eq!(
                variance::expected_mse(&spec, 1.0, f),
                exact,
                max_relative = 1e-9
            );
        }
        // The paper's MSE: an absent item among even others.
        let spread = enumerated_mse(&hr, &outputs, &even);
        assert_relative_eq!(
            variance::approx_per_user(&spec),
            spread[0],
            max_relative = 1e-9
        );
    }
}

/// Every column and bit of a small Hadamard mechanism.
fn hm_outputs(hm: &HadamardMechanism) -> Vec<LhReport> {
    (0..hm.coefficients())
        .flat_map(|seed| [0, 1].map(|y| LhReport { seed, y }))
        .collect()
}

#[test]
fn hadamard_mechanism_asr_mse_and_gain_by_enumeration() {
    for kv in [2, 3, 5, 7, 8, 12, 30] {
        for e in [0.5, 2.0, 4.0] {
            let (k, eps) = (k(kv), eps(e));
            let hm = HadamardMechanism::new(k, eps).unwrap();
            let spec = Spec::new(k, eps, FamilyParams::HadamardMechanism).unwrap();
            let outputs = hm_outputs(&hm);
            assert_relative_eq!(
                asr::expected(&spec, LhAsr::Exact),
                enumerated_asr(&hm, &outputs),
                max_relative = 1e-12
            );
            for f in populations(k.as_usize()) {
                let spread = enumerated_mse(&hm, &outputs, &f);
                assert_relative_eq!(
                    variance::expected_mse(&spec, 1.0, &f),
                    spread.iter().sum::<f64>() / spread.len() as f64,
                    max_relative = 1e-9
                );
            }
            // The planned fake report adds the closed form's gain to any targets.
            let targets: Vec<u32> = (0..kv).step_by(2).collect();
            let plan = hm.plan_max_gain(&targets, Clip::Off);
            let g = estimate_of(&hm, &plan.fixed.unwrap());
            let added: f64 = targets.iter().map(|&t| g[t as usize]).sum();
            let attack = epg::Poisoning::new(0.1, targets.len() as u32, 0.0).unwrap();
            let gain = epg::expected(&spec, &attack).unwrap().finite().unwrap() / 0.1;
            assert_relative_eq!(added, gain, max_relative = 1e-9);
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
                    .params(),
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

/// Every (seed, value) of a fast local hashing instance.
fn flh_outputs(flh: &FastLocalHashing) -> Vec<LhReport> {
    let g = flh.hash_range();
    (0..flh.seeds())
        .flat_map(|seed| (0..g).map(move |y| LhReport { seed, y }))
        .collect()
}

#[test]
fn fast_local_hashing_bias_is_exact_and_its_mse_close() {
    for (kv, e, g, seeds) in [(10, 2.0, 8, 1000), (30, 1.0, 4, 200), (12, 4.0, 56, 50)] {
        let (k, eps) = (k(kv), eps(e));
        let flh = FastLocalHashing::new(k, eps, g, seeds).unwrap();
        let spec = Spec::new(k, eps, FamilyParams::FastLocalHashing { g, seeds }).unwrap();
        let outputs = flh_outputs(&flh);
        for f in populations(k.as_usize()) {
            // The server's exact mean and variance, by enumeration.
            let columns: Vec<(Vec<f64>, Vec<f64>)> = outputs
                .iter()
                .map(|y| {
                    let l = (0..kv).map(|x| flh.log_likelihood(y, x).exp()).collect();
                    (l, estimate_of(&flh, y))
                })
                .collect();
            let kk = kv as usize;
            let (mut mean, mut spread) = (vec![0.0; kk], vec![0.0; kk]);
            for (user, &share) in f.iter().enumerate() {
                let (mut m, mut sq) = (vec![0.0; kk], vec![0.0; kk]);
                for (l, est) in &columns {
                    for x in 0..kk {
                        m[x] += l[user] * est[x];
                        sq[x] += l[user] * est[x] * est[x];
                    }
                }
                for x in 0..kk {
                    mean[x] += share * m[x];
                    spread[x] += share * (sq[x] - m[x] * m[x]);
                }
            }
            let bias = fast_local_hash::bias(g, seeds, &f);
            for x in 0..kk {
                assert_relative_eq!(mean[x] - f[x], bias[x], epsilon = 1e-9);
            }
            // Variance plus squared bias: the closed form's variance is the ideal hash's,
            // which fixed seeds change by a term of the bias's order.
            let exact = (0..kk).map(|x| spread[x] + bias[x] * bias[x]).sum::<f64>() / kk as f64;
            let closed = variance::expected_mse(&spec, 1.0, &f);
            assert!(
                (closed / exact - 1.0).abs() < 0.02,
                "{flh:?}: closed form {closed} vs exact {exact}"
            );
        }
    }
}

/// The exact mean and fixed-population variance of the server's estimate, by
/// enumerating every report: `(mean_x - f_x, variance_x)` per item.
fn enumerated_moments<M: Mechanism>(
    mech: &M,
    outputs: &[M::Report],
    f: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let k = f.len();
    let columns: Vec<(Vec<f64>, Vec<f64>)> = outputs
        .iter()
        .map(|y| {
            let l = (0..k as u32)
                .map(|x| mech.log_likelihood(y, x).exp())
                .collect();
            (l, estimate_of(mech, y))
        })
        .collect();
    let (mut mean, mut spread) = (vec![0.0; k], vec![0.0; k]);
    for (user, &share) in f.iter().enumerate() {
        let (mut m, mut sq) = (vec![0.0; k], vec![0.0; k]);
        for (l, est) in &columns {
            for x in 0..k {
                m[x] += l[user] * est[x];
                sq[x] += l[user] * est[x] * est[x];
            }
        }
        for x in 0..k {
            mean[x] += share * m[x];
            spread[x] += share * (sq[x] - m[x] * m[x]);
        }
    }
    let bias = mean.iter().zip(f).map(|(m, f)| m - f).collect();
    (bias, spread)
}

/// Every report of a small CMS: each row, each set of its columns, and the row's cell.
fn cms_outputs(h: u32, m: u32) -> Vec<ldp_core::OnesReport> {
    (0..h)
        .flat_map(|row| {
            (0u32..1 << m).map(move |mask| {
                let mut ones: Vec<u32> = (0..m)
                    .filter(|c| mask >> c & 1 == 1)
                    .map(|c| row * m + c)
                    .collect();
                ones.push(h * m + row);
                ldp_core::OnesReport { ones }
            })
        })
        .collect()
}

#[test]
fn count_mean_sketches_by_enumeration() {
    for (kv, e, h, m) in [
        (6, 1.0, 3, 4),
        (12, 4.0, 8, 8),
        (30, 0.5, 16, 4),
        (9, 2.0, 5, 2),
    ] {
        let (k, eps) = (k(kv), eps(e));
        let hcms = HadamardCountMeanSketch::new(k, eps, h, m).unwrap();
        let cms = CountMeanSketch::new(k, eps, h, m).unwrap();
        let hcms_spec = Spec::new(
            k,
            eps,
            FamilyParams::HadamardCountMeanSketch {
                hashes: h,
                width: m,
            },
        )
        .unwrap();
        let cms_spec = Spec::new(
            k,
            eps,
            FamilyParams::CountMeanSketch {
                hashes: h,
                width: m,
            },
        )
        .unwrap();
        let hcms_out: Vec<_> = (0..h * m)
            .flat_map(|seed| [0, 1].map(|y| LhReport { seed, y }))
            .collect();
        let cms_out = cms_outputs(h, m);
        // The exact ASR from the public hashes.
        assert_relative_eq!(
            asr::expected(&hcms_spec, LhAsr::Exact),
            enumerated_asr(&hcms, &hcms_out),
            max_relative = 1e-12
        );
        assert_relative_eq!(
            asr::expected(&cms_spec, LhAsr::Exact),
            enumerated_asr(&cms, &cms_out),
            max_relative = 1e-12
        );
        for f in populations(kv as usize) {
            let want_bias = ldp_core::families::local_hash::collision_bias(m, h, &f);
            for (spec, (bias, spread)) in [
                (&hcms_spec, enumerated_moments(&hcms, &hcms_out, &f)),
                (&cms_spec, enumerated_moments(&cms, &cms_out, &f)),
            ] {
                // The bias of the public hashes, exactly.
                for x in 0..kv as usize {
                    assert_relative_eq!(bias[x], want_bias[x], epsilon = 1e-9);
                }
                // Variance (with the ideal hash's mean square share) plus squared bias.
                let exact = (0..kv as usize)
                    .map(|x| spread[x] + bias[x] * bias[x])
                    .sum::<f64>()
                    / f64::from(kv);
                let closed = variance::expected_mse(spec, 1.0, &f);
                assert!(
                    (closed / exact - 1.0).abs() < 0.02,
                    "{spec:?}: closed form {closed} vs exact {exact}"
                );
            }
        }
        // The planned fake report adds the closed form's gain.
        let targets: Vec<u32> = (0..kv).step_by(3).collect();
        let attack = epg::Poisoning::new(0.1, targets.len() as u32, 0.0).unwrap();
        for (spec, g) in [
            (
                &hcms_spec,
                estimate_of(
                    &hcms,
                    &hcms.plan_max_gain(&targets, Clip::Off).fixed.unwrap(),
                ),
            ),
            (
                &cms_spec,
                estimate_of(&cms, &cms.plan_max_gain(&targets, Clip::Off).fixed.unwrap()),
            ),
        ] {
            let added: f64 = targets.iter().map(|&t| g[t as usize]).sum();
            let gain = epg::expected(spec, &attack).unwrap().finite().unwrap() / 0.1;
            assert_relative_eq!(added, gain, max_relative = 1e-9);
        }
    }
}

/// Every report of a small dBitFlip: each set of d buckets with each pattern of bits.
fn bit_flip_outputs(kv: u32, d: u32) -> Vec<ldp_core::SubsetReport> {
    (0u32..1 << kv)
        .filter(|mask| mask.count_ones() == d)
        .flat_map(|mask| {
            let set: Vec<u32> = (0..kv).filter(|i| mask >> i & 1 == 1).collect();
            (0u32..1 << d).map(move |bits| ldp_core::SubsetReport {
                subset: set
                    .iter()
                    .enumerate()
                    .map(|(i, &j)| 2 * j + (bits >> i & 1))
                    .collect(),
            })
        })
        .collect()
}

#[test]
fn bit_flip_asr_mse_gain_and_pairs_by_enumeration() {
    use ldp_core::families::bit_flip::DBitFlip;
    use ldp_core::simulation::{Role, stream_rng};
    for kv in [2u32, 3, 5, 8] {
        for e in [0.5, 2.0, 6.0] {
            for d in 1..=kv {
                let (k, eps) = (k(kv), eps(e));
                let dbf = DBitFlip::new(k, eps, d).unwrap();
                let spec = Spec::new(k, eps, FamilyParams::DBitFlip { bits: d }).unwrap();
                let outputs = bit_flip_outputs(kv, d);
                assert_relative_eq!(
                    asr::expected(&spec, LhAsr::Exact),
                    enumerated_asr(&dbf, &outputs),
                    max_relative = 1e-12
                );
                // Ding et al.'s estimator: unbiased, with the closed form's variance.
                for f in populations(k.as_usize()) {
                    let spread = enumerated_mse(&dbf, &outputs, &f);
                    assert_relative_eq!(
                        variance::expected_mse(&spec, 1.0, &f),
                        spread.iter().sum::<f64>() / spread.len() as f64,
                        max_relative = 1e-9
                    );
                }
                // (P10, P01) for items 0 and 1, summed over every report.
                let (mut p10, mut p01) = (0.0, 0.0);
                for y in &outputs {
                    let (s0, s1) = (dbf.supports(y, 0), dbf.supports(y, 1));
                    p10 += f64::from(u8::from(s0 && !s1)) * dbf.log_likelihood(y, 0).exp();
                    p01 += f64::from(u8::from(s1 && !s0)) * dbf.log_likelihood(y, 0).exp();
                }
                let (a, b) = ldp_analytic::bit_flip::pairwise_support(k, eps, d);
                assert_relative_eq!(a, p10, max_relative = 1e-12, epsilon = 1e-15);
                assert_relative_eq!(b, p01, max_relative = 1e-12, epsilon = 1e-15);
                // A fake report adds the closed form's gain to the targets, whatever it pads with.
                let mut rng = stream_rng(7, 0, Role::Other(1), 0);
                for r in 1..=kv.min(4) {
                    let targets: Vec<u32> = (0..r).collect();
                    let plan = dbf.plan_max_gain(&targets, Clip::Off);
                    let report = dbf.max_gain_report(&plan, &targets, &mut rng);
                    let g = estimate_of(&dbf, &report);
                    let added: f64 = targets.iter().map(|&t| g[t as usize]).sum();
                    let attack = epg::Poisoning::new(0.1, r, 0.0).unwrap();
                    let gain = epg::expected(&spec, &attack).unwrap().finite().unwrap() / 0.1;
                    assert_relative_eq!(added, gain, max_relative = 1e-9);
                }
            }
        }
    }
}

#[test]
fn bit_flip_with_every_bit_is_sue() {
    use ldp_core::families::unary::symmetric_p;
    for (kv, e) in [(2, 0.3), (10, 1.0), (1000, 4.0)] {
        let (k, eps) = (k(kv), eps(e));
        let all = Spec::new(k, eps, FamilyParams::DBitFlip { bits: kv }).unwrap();
        let sue = Spec::new(
            k,
            eps,
            FamilyParams::UnaryEncoding {
                p: symmetric_p(eps),
            },
        )
        .unwrap();
        assert_relative_eq!(
            variance::approx_per_user(&all),
            variance::approx_per_user(&sue),
            max_relative = 1e-12
        );
        // One bit of the k: k times the variance.
        let one = Spec::new(k, eps, FamilyParams::DBitFlip { bits: 1 }).unwrap();
        assert_relative_eq!(
            variance::approx_per_user(&one),
            f64::from(kv) * variance::approx_per_user(&sue),
            max_relative = 1e-12
        );
    }
}
