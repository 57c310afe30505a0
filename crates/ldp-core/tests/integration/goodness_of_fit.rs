//! Goodness of fit of every fast sampler against its exact output distribution
//! (Pearson chi-square, fixed seeds, significance level `common::ALPHA`).

use crate::common;

use std::collections::HashMap;

use common::{ALPHA, chi_square_p, chi_square_p_with_variance};
use ldp_core::families::fast_local_hash::FastLocalHashing;
use ldp_core::families::hadamard::HadamardResponse;
use ldp_core::families::hadamard_mechanism::HadamardMechanism;
use ldp_core::families::local_hash::hash_item;
use ldp_core::families::sketch::{CountMeanSketch, HadamardCountMeanSketch};
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{
    DomainSize, Epsilon, Grr, LocalHashing, Mechanism, PureProtocol, SubsetSelection,
    SummationHistogram, ThresholdHistogram, UnaryEncoding,
};

const DRAWS: usize = 200_000;

fn k(v: u32) -> DomainSize {
    DomainSize::new(v).unwrap()
}
fn eps(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

/// Draws `DRAWS` reports of `item`, tallies them by `category`, and compares the tallies
/// with the exact probabilities `exp(log_likelihood)` of one representative per category.
fn fit_full_output<M: Mechanism>(mech: &M, item: u32, outputs: &[M::Report], seed: u64)
where
    M::Report: std::hash::Hash + Eq,
{
    let index: HashMap<&M::Report, usize> =
        outputs.iter().enumerate().map(|(i, r)| (r, i)).collect();
    let mut observed = vec![0u64; outputs.len()];
    let mut rng = stream_rng(seed, 0, Role::Other(0), 0);
    for _ in 0..DRAWS {
        let r = mech.perturb(item, &mut rng).unwrap();
        observed[*index.get(&r).expect("report inside the enumerated space")] += 1;
    }
    let probs: Vec<f64> = outputs
        .iter()
        .map(|r| mech.log_likelihood(r, item).exp())
        .collect();
    let p = chi_square_p(&observed, &probs);
    assert!(p > ALPHA, "{mech:?} item {item}: chi-square p = {p}");
}

fn all_subsets(k: u32) -> Vec<Vec<u32>> {
    (0u32..1 << k)
        .map(|mask| (0..k).filter(|i| mask >> i & 1 == 1).collect())
        .collect()
}

#[test]
fn grr_matches_its_distribution() {
    for (kv, e, x) in [(2, 0.5, 1), (5, 1.0, 0), (5, 3.0, 4), (12, 2.0, 7)] {
        let outputs: Vec<_> = (0..kv).map(|y| ldp_core::GrrReport { y }).collect();
        fit_full_output(&Grr::new(k(kv), eps(e)).unwrap(), x, &outputs, 11);
    }
}

#[test]
fn subset_selection_matches_its_distribution() {
    for (kv, e, omega, x) in [
        (5, 1.0, 1, 2),
        (5, 1.0, 2, 0),
        (6, 0.5, 3, 5),
        (7, 2.0, 4, 3),
    ] {
        let outputs: Vec<_> = all_subsets(kv)
            .into_iter()
            .filter(|s| s.len() == omega as usize)
            .map(|subset| ldp_core::SubsetReport { subset })
            .collect();
        fit_full_output(
            &SubsetSelection::new(k(kv), eps(e), omega).unwrap(),
            x,
            &outputs,
            12,
        );
    }
}

#[test]
fn unary_and_threshold_match_their_distributions() {
    let outputs: Vec<_> = all_subsets(5)
        .into_iter()
        .map(|ones| ldp_core::OnesReport { ones })
        .collect();
    for (e, x) in [(0.5, 0), (2.0, 3), (4.0, 4)] {
        fit_full_output(
            &UnaryEncoding::symmetric(k(5), eps(e)).unwrap(),
            x,
            &outputs,
            13,
        );
        fit_full_output(
            &UnaryEncoding::optimized(k(5), eps(e)).unwrap(),
            x,
            &outputs,
            14,
        );
        fit_full_output(
            &UnaryEncoding::new(k(5), eps(e), 0.9).unwrap(),
            x,
            &outputs,
            15,
        );
        // Below 1/2: the law of one report of L-OUE and L-SOUE.
        fit_full_output(
            &UnaryEncoding::new(k(5), eps(e), 0.3).unwrap(),
            x,
            &outputs,
            18,
        );
        fit_full_output(
            &ThresholdHistogram::optimized(k(5), eps(e)).unwrap(),
            x,
            &outputs,
            16,
        );
        fit_full_output(
            &ThresholdHistogram::new(k(5), eps(e), 0.55).unwrap(),
            x,
            &outputs,
            17,
        );
    }
}

/// At larger k the output space cannot be enumerated: check the law of the number of
/// one-bits among the k - 1 other positions (Binomial(k-1, q)) and the per-position
/// inclusion counts (independent Binomial(draws, q)), and the true bit (Bernoulli(p)).
fn fit_bit_marginals<M: PureProtocol<Report = ldp_core::OnesReport>>(
    mech: &M,
    item: u32,
    seed: u64,
) {
    let kv = mech.domain_size().get();
    let (p, q) = (mech.p_star(), mech.q_star());
    let draws = 50_000usize;
    let mut per_position = vec![0u64; kv as usize];
    let mut per_count = vec![0u64; kv as usize];
    let mut rng = stream_rng(seed, 0, Role::Other(1), 0);
    for _ in 0..draws {
        let r = mech.perturb(item, &mut rng).unwrap();
        mech.validate(&r).unwrap();
        let others = r.ones.iter().filter(|&&i| i != item).count();
        per_count[others] += 1;
        r.ones.iter().for_each(|&i| per_position[i as usize] += 1);
    }
    // True bit: a binomial z-test at the same level.
    let n = draws as f64;
    let z = (per_position[item as usize] as f64 - n * p) / (n * p * (1.0 - p)).sqrt();
    assert!(z.abs() < 3.9, "{mech:?}: true-bit z = {z}");
    // Other positions.
    let others: Vec<u64> = (0..kv)
        .filter(|&i| i != item)
        .map(|i| per_position[i as usize])
        .collect();
    let mean = vec![n * q; others.len()];
    let var = vec![n * q * (1.0 - q); others.len()];
    let pv = chi_square_p_with_variance(&others, &mean, &var, others.len());
    assert!(pv > ALPHA, "{mech:?}: position marginals p = {pv}");
    // Count of one-bits among the others, pooled into cells of expected count >= 5.
    let binom = statrs::distribution::Binomial::new(q, u64::from(kv - 1)).unwrap();
    use statrs::distribution::Discrete;
    let (mut obs, mut probs, mut acc_o, mut acc_p) = (vec![], vec![], 0u64, 0.0);
    for (c, &count) in per_count.iter().enumerate() {
        acc_o += count;
        acc_p += binom.pmf(c as u64);
        if acc_p * n >= 20.0 {
            obs.push(acc_o);
            probs.push(acc_p);
            acc_o = 0;
            acc_p = 0.0;
        }
    }
    *obs.last_mut().unwrap() += acc_o;
    *probs.last_mut().unwrap() += acc_p;
    let total: f64 = probs.iter().sum();
    probs.iter_mut().for_each(|p| *p /= total);
    let pc = chi_square_p(&obs, &probs);
    assert!(pc > ALPHA, "{mech:?}: one-bit count p = {pc}");
}

#[test]
fn geometric_gap_sampler_matches_bernoulli_law_at_large_k() {
    fit_bit_marginals(
        &UnaryEncoding::optimized(k(1000), eps(2.0)).unwrap(),
        17,
        21,
    );
    fit_bit_marginals(
        &UnaryEncoding::symmetric(k(300), eps(0.5)).unwrap(),
        299,
        22,
    );
    fit_bit_marginals(&UnaryEncoding::new(k(200), eps(4.0), 0.99).unwrap(), 0, 23);
    fit_bit_marginals(
        &ThresholdHistogram::optimized(k(1000), eps(1.0)).unwrap(),
        500,
        24,
    );
    // q = 0.029: the gap table's tail bucket is drawn for 15% of gaps.
    fit_bit_marginals(
        &UnaryEncoding::optimized(k(2000), eps(3.5)).unwrap(),
        1000,
        25,
    );
    // q = 0.011 and 1e-4: gaps are drawn in one and two base-64 digits below the top.
    fit_bit_marginals(
        &UnaryEncoding::optimized(k(2000), eps(4.5)).unwrap(),
        1999,
        26,
    );
    fit_bit_marginals(
        &UnaryEncoding::optimized(k(100_000), eps(9.21)).unwrap(),
        4242,
        27,
    );
}

/// Floyd's sampler at sizes that take each of its three membership structures: the
/// inclusion count of every other position must be uniform.
#[test]
fn floyd_subsets_are_uniform_at_large_k() {
    for (kv, e, omega, x, seed) in [
        (300, 1.0, 10, 3, 31),
        (200, 0.2, 90, 199, 32),
        (5000, 1.0, 40, 2500, 33),
    ] {
        let ss = SubsetSelection::new(k(kv), eps(e), omega).unwrap();
        let draws = 20_000usize;
        let mut counts = vec![0u64; kv as usize];
        let mut rng = stream_rng(seed, 0, Role::Other(2), 0);
        for _ in 0..draws {
            let r = ss.perturb(x, &mut rng).unwrap();
            ss.validate(&r).unwrap();
            r.subset.iter().for_each(|&i| counts[i as usize] += 1);
        }
        let q = ss.q_star();
        let others: Vec<u64> = (0..kv)
            .filter(|&i| i != x)
            .map(|i| counts[i as usize])
            .collect();
        let n = draws as f64;
        // Indicators within one report are negatively correlated (sampling without
        // replacement), which makes this binomial-variance statistic conservative.
        let mean = vec![n * q; others.len()];
        let var = vec![n * q * (1.0 - q); others.len()];
        let pv = chi_square_p_with_variance(&others, &mean, &var, others.len());
        assert!(pv > ALPHA, "{ss:?}: p = {pv}");
        let z = (counts[x as usize] as f64 - n * ss.p_star())
            / (n * ss.p_star() * (1.0 - ss.p_star())).sqrt();
        assert!(z.abs() < 3.9, "{ss:?}: true-item z = {z}");
    }
}

#[test]
fn hadamard_response_matches_its_distribution() {
    // One block (the basic response) and several, items in the first and last block.
    for (kv, e, blocks, x) in [
        (5, 0.5, 1, 4),
        (12, 2.0, 4, 0),
        (12, 2.0, 4, 11),
        (30, 4.0, 16, 17),
    ] {
        let hr = HadamardResponse::new(k(kv), eps(e), blocks).unwrap();
        let outputs: Vec<_> = (0..hr.outputs())
            .map(|y| ldp_core::GrrReport { y })
            .collect();
        fit_full_output(&hr, x, &outputs, 13);
    }
}

#[test]
fn hadamard_mechanism_matches_its_distribution() {
    for (kv, e, x) in [(2, 0.5, 1), (12, 2.0, 0), (12, 2.0, 11), (30, 4.0, 17)] {
        let hm = HadamardMechanism::new(k(kv), eps(e)).unwrap();
        let outputs: Vec<_> = (0..hm.coefficients())
            .flat_map(|seed| [0, 1].map(|y| ldp_core::LhReport { seed, y }))
            .collect();
        fit_full_output(&hm, x, &outputs, 17);
    }
}

#[test]
fn fast_local_hashing_matches_its_distribution() {
    for (kv, e, g, seeds, x) in [(10, 1.0, 3, 7, 3), (100, 2.0, 8, 20, 42)] {
        let flh = FastLocalHashing::new(k(kv), eps(e), g, seeds).unwrap();
        let outputs: Vec<_> = (0..seeds)
            .flat_map(|seed| (0..g).map(move |y| ldp_core::LhReport { seed, y }))
            .collect();
        fit_full_output(&flh, x, &outputs, 19);
    }
}

#[test]
fn count_mean_sketches_match_their_distributions() {
    for (kv, e, h, m, x) in [(10, 1.0, 3, 4, 3), (100, 3.0, 2, 8, 42)] {
        let hcms = HadamardCountMeanSketch::new(k(kv), eps(e), h, m).unwrap();
        let outputs: Vec<_> = (0..h * m)
            .flat_map(|seed| [0, 1].map(|y| ldp_core::LhReport { seed, y }))
            .collect();
        fit_full_output(&hcms, x, &outputs, 23);
        let cms = CountMeanSketch::new(k(kv), eps(e), h, m).unwrap();
        let outputs: Vec<_> = (0..h)
            .flat_map(|row| {
                all_subsets(m).into_iter().map(move |set| {
                    let mut ones: Vec<u32> = set.iter().map(|c| row * m + c).collect();
                    ones.push(h * m + row);
                    ldp_core::OnesReport { ones }
                })
            })
            .collect();
        fit_full_output(&cms, x, &outputs, 29);
    }
}

#[test]
fn local_hashing_matches_its_distribution() {
    for (kv, e, g, x) in [(10, 1.0, 2, 3), (100, 4.0, 56, 42), (100, 2.0, 13, 0)] {
        let lh = LocalHashing::new(k(kv), eps(e), g).unwrap();
        let mut offset = vec![0u64; g as usize];
        let mut seed_bucket = vec![0u64; 16];
        let mut rng = stream_rng(41, 0, Role::Other(3), 0);
        for _ in 0..DRAWS {
            let r = lh.perturb(x, &mut rng).unwrap();
            let h = hash_item(x, r.seed, g);
            offset[((r.y + g - h) % g) as usize] += 1;
            seed_bucket[(r.seed >> 28) as usize] += 1;
        }
        // Offset 0 means the hash value was kept: probability p; each other offset q'.
        let p = lh.p_star();
        let mut probs = vec![(1.0 - p) / f64::from(g - 1); g as usize];
        probs[0] = p;
        let pv = chi_square_p(&offset, &probs);
        assert!(pv > ALPHA, "{lh:?}: offsets p = {pv}");
        let ps = chi_square_p(&seed_bucket, &[1.0 / 16.0; 16]);
        assert!(ps > ALPHA, "{lh:?}: seeds p = {ps}");
    }
}

#[test]
fn summation_histogram_noise_is_laplace() {
    let she = SummationHistogram::new(k(4), eps(1.5)).unwrap();
    let b = she.scale();
    let bins = 20usize;
    // Equiprobable Laplace bins via the quantile function.
    let quantile = |u: f64| {
        if u < 0.5 {
            b * (2.0 * u).ln()
        } else {
            -b * (2.0 * (1.0 - u)).ln()
        }
    };
    let edges: Vec<f64> = (1..bins)
        .map(|i| quantile(i as f64 / bins as f64))
        .collect();
    let mut counts = vec![vec![0u64; bins]; 4];
    let mut rng = stream_rng(51, 0, Role::Other(4), 0);
    for _ in 0..50_000 {
        let r = she.perturb(2, &mut rng).unwrap();
        for (i, &v) in r.y.iter().enumerate() {
            let noise = if i == 2 { v - 1.0 } else { v };
            counts[i][edges.partition_point(|&e| e < noise)] += 1;
        }
    }
    for (i, c) in counts.iter().enumerate() {
        let p = chi_square_p(c, &vec![1.0 / bins as f64; bins]);
        assert!(p > ALPHA, "coordinate {i}: p = {p}");
    }
}

/// The attack's guess from one LH report is uniform over the supported items (over 0..k
/// when none is). LH at k = 40, g = 2, eps = 1 supports 0.73 + 39/2 = 20.2 items on
/// average, at least the 16 from which the guess draws by rejection (at most k/4 = 10
/// draws) before the scan: for a report supporting 6 items both paths run ((34/40)^10 =
/// 20% of guesses fall back), and one supporting none ends in the scan's pick over 0..k.
#[test]
fn the_guess_by_rejection_is_uniform_over_the_support() {
    use ldp_core::{AttackSurface, LhReport, Support};
    let lh = LocalHashing::new(k(40), eps(1.0), 2).unwrap();
    assert!(lh.scanned_support_mean().unwrap() >= 16.0);
    let narrow = (0..)
        .map(|seed| LhReport { seed, y: 0 })
        .find(|r| lh.support(r).len() == 6)
        .unwrap();
    let empty = LhReport { seed: 0, y: 2 };
    assert!(lh.support(&empty).is_empty());
    let mut rng = stream_rng(5, 0, Role::Attacker, 0);
    for (report, cells) in [(&narrow, lh.support(&narrow)), (&empty, (0..40).collect())] {
        let mut counts = vec![0u64; cells.len()];
        for _ in 0..60_000 {
            let guess = lh.guess(report, &mut rng);
            let cell = cells
                .binary_search(&guess)
                .expect("a guess outside the support");
            counts[cell] += 1;
        }
        let p = chi_square_p(&counts, &vec![1.0 / cells.len() as f64; cells.len()]);
        assert!(p > ALPHA, "{} cells: p = {p}", cells.len());
    }
}

/// HR with one block, CMS and HCMS guess by rejection too (their scan tested all k items
/// per report): the guess is still uniform over each genuine report's support.
#[test]
fn the_sketches_and_hr_guess_uniformly_by_rejection() {
    use ldp_core::{AttackSurface, Support};
    fn check<M: AttackSurface + Support>(name: &str, m: &M, seed: u64) {
        assert!(m.scanned_support_mean().unwrap() >= 16.0, "{name}");
        let mut rng = stream_rng(seed, 0, Role::Genuine, 0);
        let mut attacker = stream_rng(seed, 0, Role::Attacker, 0);
        for item in [0, 17, 63] {
            let report = m.perturb(item, &mut rng).unwrap();
            let cells = m.support(&report);
            let cells = if cells.is_empty() {
                (0..64).collect()
            } else {
                cells
            };
            let mut counts = vec![0u64; cells.len()];
            for _ in 0..30_000 {
                let guess = m.guess(&report, &mut attacker);
                let cell = cells
                    .binary_search(&guess)
                    .unwrap_or_else(|_| panic!("{name}: a guess outside the support"));
                counts[cell] += 1;
            }
            let p = chi_square_p(&counts, &vec![1.0 / cells.len() as f64; cells.len()]);
            assert!(
                p > ALPHA,
                "{name}, item {item}, {} cells: p = {p}",
                cells.len()
            );
        }
    }
    check(
        "hr",
        &HadamardResponse::new(k(64), eps(1.0), 1).unwrap(),
        61,
    );
    check(
        "cms",
        &CountMeanSketch::new(k(64), eps(1.0), 8, 64).unwrap(),
        62,
    );
    check(
        "hcms",
        &HadamardCountMeanSketch::new(k(64), eps(1.0), 8, 64).unwrap(),
        63,
    );
}

/// Every dBitFlip report at small k: each set of d buckets with each pattern of bits.
fn bit_flip_outputs(k: u32, d: u32) -> Vec<ldp_core::SubsetReport> {
    all_subsets(k)
        .into_iter()
        .filter(|set| set.len() == d as usize)
        .flat_map(|set| {
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
fn bit_flip_matches_its_distribution() {
    use ldp_core::families::bit_flip::DBitFlip;
    for (kv, e, d, x) in [
        (2, 0.5, 1, 1),
        (5, 1.0, 2, 0),
        (6, 3.0, 3, 5),
        (8, 2.0, 8, 3),
    ] {
        let dbf = DBitFlip::new(k(kv), eps(e), d).unwrap();
        fit_full_output(&dbf, x, &bit_flip_outputs(kv, d), 31);
    }
}

/// A permanent memo by class draws its first report from the mechanism's own law (the
/// public randomness drawn apart, then the report given it), and keeps at most one memo
/// per class: d + 1 for dBitFlipPM, g for local hashing, one per value for GRR.
#[test]
fn class_memos_report_the_mechanisms_law_and_keep_one_memo_per_class() {
    use ldp_core::families::bit_flip::DBitFlip;
    use ldp_core::longitudinal::{ClassMemo, ClassMemory, Device};
    let first_reports = |m: &DBitFlip, x: u32| -> Vec<u64> {
        let outputs = bit_flip_outputs(m.domain_size().get(), m.sampled());
        let index: HashMap<_, _> = outputs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.clone(), i))
            .collect();
        let device = ClassMemo(m.clone());
        let mut rng = stream_rng(43, 0, Role::Other(5), 0);
        let mut observed = vec![0u64; outputs.len()];
        for _ in 0..DRAWS / 4 {
            let mut memory = ClassMemory::default();
            let r = device.report_value(&mut memory, x, &mut rng).unwrap();
            observed[index[&r]] += 1;
        }
        observed
    };
    for (kv, e, d, x) in [(4, 1.0, 2, 1), (6, 3.0, 1, 0)] {
        let m = DBitFlip::new(k(kv), eps(e), d).unwrap();
        let outputs = bit_flip_outputs(kv, d);
        let probs: Vec<f64> = outputs
            .iter()
            .map(|r| m.log_likelihood(r, x).exp())
            .collect();
        let p = chi_square_p(&first_reports(&m, x), &probs);
        assert!(p > ALPHA, "{m:?}: chi-square p = {p}");
    }
    // Local hashing: the seed from the public draw, the value from its first report.
    let lh = LocalHashing::new(k(10), eps(1.0), 3).unwrap();
    let device = ClassMemo(lh.clone());
    let (mut offset, mut seed_bucket) = (vec![0u64; 3], vec![0u64; 16]);
    let mut rng = stream_rng(53, 0, Role::Other(7), 0);
    for _ in 0..DRAWS / 4 {
        let r = device
            .report_value(&mut ClassMemory::default(), 4, &mut rng)
            .unwrap();
        offset[((r.y + 3 - hash_item(4, r.seed, 3)) % 3) as usize] += 1;
        seed_bucket[(r.seed >> 28) as usize] += 1;
    }
    let p = lh.p_star();
    let probs = [p, (1.0 - p) / 2.0, (1.0 - p) / 2.0];
    assert!(chi_square_p(&offset, &probs) > ALPHA, "{offset:?}");
    assert!(
        chi_square_p(&seed_bucket, &[1.0 / 16.0; 16]) > ALPHA,
        "{seed_bucket:?}"
    );
    let mut rng = stream_rng(47, 0, Role::Other(6), 0);
    let dbf = ClassMemo(DBitFlip::new(k(50), eps(1.0), 3).unwrap());
    let lh = ClassMemo(LocalHashing::new(k(50), eps(1.0), 4).unwrap());
    let grr = ClassMemo(Grr::new(k(50), eps(1.0)).unwrap());
    for _ in 0..20 {
        let (mut a, mut b, mut c) = (
            ClassMemory::default(),
            ClassMemory::default(),
            ClassMemory::default(),
        );
        for x in 0..50 {
            dbf.report_value(&mut a, x, &mut rng).unwrap();
            lh.report_value(&mut b, x, &mut rng).unwrap();
            grr.report_value(&mut c, x, &mut rng).unwrap();
        }
        assert_eq!(
            a.memos().len(),
            4,
            "d + 1 classes, every one met over 50 values"
        );
        assert!(b.memos().len() <= 4);
        assert_eq!(c.memos().len(), 50);
        assert!((dbf.spent(&a) - 4.0).abs() < 1e-12);
    }
}
