//! Exact privacy audit: at small k, compute P[report | x] for every input at enumerated
//! outputs, and check that no likelihood ratio exceeds e^eps and that the probabilities
//! of a whole output space sum to one.
//!
//! Every mechanism of the registry is audited at the outputs its family names for an
//! exact audit ([`AttackSurface::exact_outputs`]), over each protocol's preset and paper
//! space and each family's alternatives and small parameters: a new family is audited
//! without a line here. The tests after it check what those outputs stand for: the whole
//! output space where the audit reads a few outputs (symmetry patterns, seeds, a witness),
//! and that the ratio is met where a family is tight.

use std::collections::BTreeSet;

use ldp_core::families::hadamard::{HadamardResponse, max_blocks};
use ldp_core::families::hadamard_mechanism::HadamardMechanism;
use ldp_core::families::local_hash::hash_item;
use ldp_core::families::sketch::{CountMeanSketch, HadamardCountMeanSketch};
use ldp_core::{
    AttackSurface, Coverage, DomainSize, Epsilon, ExactOutputs, Family, FamilyParams, GrrReport,
    LhReport, LocalHashing, Mechanism, OnesReport, Protocol, SheReport, Spec, SubsetReport,
    SubsetSelection, SummationHistogram, ThresholdHistogram, UnaryEncoding, dispatch,
};

const KS: [u32; 3] = [2, 3, 5];
const EPSILONS: [f64; 5] = [0.1, 0.5, 1.0, 2.5, 6.0];
const REL_TOL: f64 = 1e-9;

/// Checks normalization and the LDP inequality over an enumerated output space.
/// `mass` scales each probability (LH: the 2^32 seeds, of which we enumerate a sample).
/// Returns the largest likelihood ratio seen.
fn audit<M: Mechanism>(mech: &M, outputs: &[M::Report], mass: f64) -> f64 {
    let worst = worst_ratio(mech, outputs);
    let k = mech.domain_size().get();
    let mut totals = vec![0.0; k as usize];
    for y in outputs {
        for (x, t) in totals.iter_mut().enumerate() {
            *t += mech.log_likelihood(y, x as u32).exp() * mass;
        }
    }
    for (x, t) in totals.iter().enumerate() {
        assert!((t - 1.0).abs() < 1e-9, "{mech:?}: P[. | {x}] sums to {t}");
    }
    worst
}

/// Checks the LDP inequality at `outputs` (valid reports, each possible for every input)
/// and returns the largest likelihood ratio seen.
fn worst_ratio<M: Mechanism>(mech: &M, outputs: &[M::Report]) -> f64 {
    let k = mech.domain_size().get();
    let bound = mech.epsilon().exp() * (1.0 + REL_TOL);
    let mut worst: f64 = 0.0;
    for y in outputs {
        mech.validate(y).expect("enumerated outputs are valid");
        let probs: Vec<f64> = (0..k).map(|x| mech.log_likelihood(y, x).exp()).collect();
        let max = probs.iter().cloned().fold(f64::MIN, f64::max);
        let min = probs.iter().cloned().fold(f64::MAX, f64::min);
        assert!(
            min > 0.0,
            "{mech:?}: output {y:?} impossible for some input"
        );
        worst = worst.max(max / min);
    }
    assert!(
        worst <= bound,
        "{mech:?}: likelihood ratio {worst} > e^eps = {}",
        mech.epsilon().exp()
    );
    worst
}

/// The most likelihood evaluations one mechanism's exact outputs may take here.
const EXACT_LIMIT: u64 = 1 << 18;

/// Small values for any parameter: those a family's check refuses are left out.
const SMALL: [f64; 9] = [0.5, 0.6, 0.75, 0.9, 1.0, 2.0, 3.0, 4.0, 8.0];

/// Every instance the registry names at (k, eps): each classic protocol's preset, up to
/// eight points of each adaptive protocol's paper space, each family's alternatives, and
/// each family at every combination of [`SMALL`] values its check accepts.
fn registry_specs(k: DomainSize, eps: Epsilon) -> Vec<Spec> {
    let mut params: Vec<FamilyParams> = Vec::new();
    for protocol in Protocol::ALL {
        if let Ok(spec) = Spec::classic(protocol, k, eps) {
            params.push(spec.params());
        }
        if let Some(space) = protocol.paper_space(k, eps) {
            let grid = space.grid();
            let step = grid.len().div_ceil(8);
            params.extend(
                grid.into_iter()
                    .step_by(step)
                    .filter_map(|v| FamilyParams::with_value(protocol.family(), v)),
            );
        }
    }
    for &family in Family::ALL {
        params.extend(family.alternatives(k, eps));
        let mut combinations: Vec<Vec<f64>> = vec![Vec::new()];
        for _ in family.parameter_names() {
            combinations = combinations
                .into_iter()
                .flat_map(|c| {
                    SMALL.map(|v| {
                        let mut c = c.clone();
                        c.push(v);
                        c
                    })
                })
                .collect();
        }
        params.extend(
            combinations
                .iter()
                .filter_map(|values| FamilyParams::with_values(family, values)),
        );
    }
    let mut specs: Vec<Spec> = Vec::new();
    for spec in params.into_iter().filter_map(|p| Spec::new(k, eps, p).ok()) {
        if !specs.contains(&spec) {
            specs.push(spec);
        }
    }
    specs
}

/// Audits `mech` at the outputs its family names for an exact audit: the LDP inequality
/// at each, and normalization where they are every output. `None` when they are more
/// than [`EXACT_LIMIT`] evaluations.
fn audit_exact_outputs<M: AttackSurface>(mech: &M) -> Option<Coverage> {
    let ExactOutputs { outputs, coverage } = mech.exact_outputs(EXACT_LIMIT).ok()?;
    let outputs: Vec<M::Report> = outputs.collect();
    assert!(!outputs.is_empty(), "{mech:?}");
    if coverage == Coverage::Every {
        audit(mech, &outputs, 1.0);
    } else {
        worst_ratio(mech, &outputs);
    }
    Some(coverage)
}

#[test]
fn every_mechanism_of_the_registry_is_eps_ldp_at_its_exact_outputs() {
    let mut audited = BTreeSet::new();
    let mut normalized = BTreeSet::new();
    for (k, eps) in params() {
        for spec in registry_specs(k, eps) {
            let mech = spec.build().unwrap();
            let Some(coverage) = dispatch!(&mech, m => audit_exact_outputs(m)) else {
                continue;
            };
            let family = spec.family();
            audited.insert(family);
            if coverage == Coverage::Every {
                normalized.insert(family);
            }
        }
    }
    // Every family was audited, and the whole output space of most of them (the others
    // are checked over it by the tests below).
    for family in Family::ALL {
        assert!(audited.contains(family), "{family:?} was never audited");
    }
    assert!(normalized.len() > Family::ALL.len() / 2, "{normalized:?}");
}

fn all_subsets(k: u32) -> Vec<Vec<u32>> {
    (0u32..1 << k)
        .map(|mask| (0..k).filter(|i| mask >> i & 1 == 1).collect())
        .collect()
}

fn params() -> impl Iterator<Item = (DomainSize, Epsilon)> {
    KS.into_iter().flat_map(|k| {
        EPSILONS
            .into_iter()
            .map(move |e| (DomainSize::new(k).unwrap(), Epsilon::new(e).unwrap()))
    })
}

/// Every subset, which the exact audit's symmetry patterns stand for.
#[test]
fn subset_selection_is_eps_ldp_for_every_omega() {
    for (k, eps) in params() {
        for omega in 1..k.get() {
            let outputs: Vec<_> = all_subsets(k.get())
                .into_iter()
                .filter(|s| s.len() == omega as usize)
                .map(|subset| SubsetReport { subset })
                .collect();
            audit(&SubsetSelection::new(k, eps, omega).unwrap(), &outputs, 1.0);
        }
    }
}

/// Every set of one-bits, which the exact audit's symmetry patterns stand for.
#[test]
fn unary_encoding_is_eps_ldp_for_every_p() {
    for (k, eps) in params() {
        let outputs: Vec<_> = all_subsets(k.get())
            .into_iter()
            .map(|ones| OnesReport { ones })
            .collect();
        audit(&UnaryEncoding::symmetric(k, eps).unwrap(), &outputs, 1.0);
        audit(&UnaryEncoding::optimized(k, eps).unwrap(), &outputs, 1.0);
        for p in [0.05, 0.3, 0.5, 0.6, 0.818, 0.99] {
            audit(&UnaryEncoding::new(k, eps, p).unwrap(), &outputs, 1.0);
        }
    }
}

/// Every set of one-bits, which the exact audit's symmetry patterns stand for.
#[test]
fn thresholding_is_eps_ldp_for_every_theta() {
    for (k, eps) in params() {
        let outputs: Vec<_> = all_subsets(k.get())
            .into_iter()
            .map(|ones| OnesReport { ones })
            .collect();
        audit(
            &ThresholdHistogram::optimized(k, eps).unwrap(),
            &outputs,
            1.0,
        );
        for theta in [0.5, 0.6, 0.783, 0.9, 1.0] {
            audit(
                &ThresholdHistogram::new(k, eps, theta).unwrap(),
                &outputs,
                1.0,
            );
        }
    }
}

/// Seeds beyond the exact audit's first ones, each slice of the output space whole.
#[test]
fn local_hashing_is_eps_ldp_for_every_seed_checked() {
    // The seed is uniform and independent of the input: each seed's slice of the output
    // space is audited exactly, with the slice's total mass rescaled to one.
    let seeds: Vec<u32> = (0..64).chain([u32::MAX, 0xdead_beef, 1 << 31]).collect();
    for (k, eps) in params() {
        for g in [2, 3, 7, 56] {
            let mech = LocalHashing::new(k, eps, g).unwrap();
            for &seed in &seeds {
                let outputs: Vec<_> = (0..g).map(|y| LhReport { seed, y }).collect();
                audit(&mech, &outputs, 2f64.powi(32));
            }
        }
    }
}

#[test]
fn hadamard_response_is_eps_ldp_and_tight_for_every_block_count() {
    for kv in [2, 3, 5, 7, 12] {
        let k = DomainSize::new(kv).unwrap();
        for e in EPSILONS {
            let eps = Epsilon::new(e).unwrap();
            let mut blocks = 1;
            while blocks <= max_blocks(k) {
                let hr = HadamardResponse::new(k, eps, blocks).unwrap();
                let outputs: Vec<_> = (0..hr.outputs()).map(|y| GrrReport { y }).collect();
                let worst = audit(&hr, &outputs, 1.0);
                // Every column is +1 for some item and -1 for another: the bound is met.
                assert!(
                    (worst / eps.exp() - 1.0).abs() < 1e-9,
                    "{hr:?}: worst ratio {worst}"
                );
                blocks *= 2;
            }
        }
    }
}

#[test]
fn hadamard_mechanism_is_eps_ldp_and_tight() {
    for kv in [2, 3, 5, 8, 12] {
        let k = DomainSize::new(kv).unwrap();
        for e in EPSILONS {
            let hm = HadamardMechanism::new(k, Epsilon::new(e).unwrap()).unwrap();
            let outputs: Vec<_> = (0..hm.coefficients())
                .flat_map(|seed| [0, 1].map(|y| LhReport { seed, y }))
                .collect();
            let worst = audit(&hm, &outputs, 1.0);
            assert!((worst / e.exp() - 1.0).abs() < 1e-9, "{hm:?}: {worst}");
        }
    }
}

#[test]
fn count_mean_sketches_are_eps_ldp_and_tight() {
    for kv in [2, 3, 5, 9] {
        let k = DomainSize::new(kv).unwrap();
        for e in EPSILONS {
            let eps = Epsilon::new(e).unwrap();
            for (h, m) in [(1, 2), (3, 4), (2, 8)] {
                let hcms = HadamardCountMeanSketch::new(k, eps, h, m).unwrap();
                let outputs: Vec<_> = (0..h * m)
                    .flat_map(|seed| [0, 1].map(|y| LhReport { seed, y }))
                    .collect();
                let worst = audit(&hcms, &outputs, 1.0);
                // Tight unless every item shares one column in every row.
                assert!(worst <= e.exp() * (1.0 + REL_TOL), "{hcms:?}");
                let cms = CountMeanSketch::new(k, eps, h, m).unwrap();
                let outputs: Vec<_> = (0..h)
                    .flat_map(|row| {
                        all_subsets(m).into_iter().map(move |set| {
                            let mut ones: Vec<u32> = set.iter().map(|c| row * m + c).collect();
                            ones.push(h * m + row);
                            OnesReport { ones }
                        })
                    })
                    .collect();
                audit(&cms, &outputs, 1.0);
            }
            // Two items in different columns meet the bound; items 0 and 1 share row 0's
            // column at m = 1024 (XXH32 gives both 178), so k = 2 cannot.
            let columns: std::collections::HashSet<u32> = (0..kv)
                .map(|x| ldp_core::families::sketch::column(x, 0, 1024))
                .collect();
            let bound = if columns.len() > 1 { e.exp() } else { 1.0 };
            let tight = |worst: f64| (worst / bound - 1.0).abs() < 1e-9;
            let hcms = HadamardCountMeanSketch::new(k, eps, 1, 1024).unwrap();
            let outputs: Vec<_> = (0..1024)
                .flat_map(|seed| [0, 1].map(|y| LhReport { seed, y }))
                .collect();
            let worst = audit(&hcms, &outputs, 1.0);
            assert!(tight(worst), "k = {kv}, eps = {e}: {worst} vs {bound}");
        }
    }
}

/// Points beyond the exact audit's witness.
#[test]
fn summation_histogram_density_ratio_is_bounded() {
    // Continuous output: check the density ratio at many points, including the ones
    // where it is largest (coordinates beyond the 0/1 range).
    for (k, eps) in params() {
        let she = SummationHistogram::new(k, eps).unwrap();
        let bound = eps.exp() * (1.0 + REL_TOL);
        let grid = [-3.0, -0.5, 0.0, 0.3, 0.5, 1.0, 1.7, 4.0];
        for a in grid {
            for b in grid {
                let mut y = vec![0.25; k.as_usize()];
                y[0] = a;
                y[1] = b;
                let report = SheReport { y };
                let l: Vec<f64> = (0..k.get())
                    .map(|x| she.log_likelihood(&report, x))
                    .collect();
                let max = l.iter().cloned().fold(f64::MIN, f64::max);
                let min = l.iter().cloned().fold(f64::MAX, f64::min);
                assert!((max - min).exp() <= bound, "{she:?} at y = {report:?}");
            }
        }
    }
}

#[test]
fn local_hash_matches_the_python_ecosystem_test_vectors() {
    use ldp_core::families::local_hash::xxh32_decimal;
    assert_eq!(xxh32_decimal(0, 0), 0x48454cb2);
    assert_eq!(xxh32_decimal(5, 123), 0x1f77b36a);
    assert_eq!(xxh32_decimal(42, 7), 0xaaca0e14);
    assert_eq!(xxh32_decimal(99, 4_294_967_294), 0xd9bba8b8);
    assert_eq!(xxh32_decimal(9999, 3_735_928_559), 0x5aaf3d69);
    assert_eq!(hash_item(42, 7, 56), 0xaaca0e14 % 56);
}

/// Every output at small k: the nine patterns of `exact_outputs` reach the same worst
/// ratio, and that ratio is e^eps (a report sampling both buckets, with bits 1 and 0).
#[test]
fn bit_flip_is_eps_ldp_and_tight_over_every_output() {
    use ldp_core::families::bit_flip::DBitFlip;
    for kv in [2u32, 3, 5] {
        let k = DomainSize::new(kv).unwrap();
        for e in EPSILONS {
            for d in 1..=kv {
                let dbf = DBitFlip::new(k, Epsilon::new(e).unwrap(), d).unwrap();
                let outputs: Vec<SubsetReport> = (0u32..1 << kv)
                    .filter(|mask| mask.count_ones() == d)
                    .flat_map(|mask| {
                        let set: Vec<u32> = (0..kv).filter(|i| mask >> i & 1 == 1).collect();
                        (0u32..1 << d).map(move |bits| SubsetReport {
                            subset: set
                                .iter()
                                .enumerate()
                                .map(|(i, &j)| 2 * j + (bits >> i & 1))
                                .collect(),
                        })
                    })
                    .collect();
                let worst = audit(&dbf, &outputs, 1.0);
                // Both ways of listing the exact outputs: every one, and (under a budget
                // that refuses them) the nine patterns of buckets 0 and 1.
                for (limit, coverage) in [(u64::MAX, Coverage::Every), (0, Coverage::Symmetry)] {
                    let listed = dbf.exact_outputs(limit).unwrap();
                    assert_eq!(listed.coverage, coverage);
                    let exact: Vec<SubsetReport> = listed.outputs.collect();
                    let at_exact = worst_ratio(&dbf, &exact);
                    assert!(
                        (at_exact / worst - 1.0).abs() < 1e-9,
                        "{dbf:?} {coverage:?}"
                    );
                }
                // Tight when two buckets can be sampled together (d >= 2); at d = 1 a
                // report names one bucket, so the ratio is (p/q) = e^(eps/2).
                let bound = if d >= 2 { e.exp() } else { (e / 2.0).exp() };
                assert!((worst / bound - 1.0).abs() < 1e-9, "{dbf:?}: {worst}");
            }
        }
    }
    // Budgets where q underflows: the likelihoods stay finite, their ratio e^eps.
    let dbf = DBitFlip::new(
        DomainSize::new(4).unwrap(),
        Epsilon::new(2000.0).unwrap(),
        2,
    )
    .unwrap();
    let r = SubsetReport { subset: vec![1, 2] };
    let (own, other) = (dbf.log_likelihood(&r, 0), dbf.log_likelihood(&r, 1));
    assert!(own.is_finite() && other.is_finite(), "{own} {other}");
    assert!((own - other - 2000.0).abs() < 1e-9);
}
