//! `Mechanism::log_likelihoods`, which families override to share work across the k
//! items (the MAP attack calls it for every report), is k calls of `log_likelihood`, bit
//! for bit, for every protocol's preset and every family's alternatives; SHE's density,
//! rewritten as one sum plus a term per item, to rounding.

use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{DomainSize, Epsilon, Family, Mechanism, Protocol, Spec, dispatch};

fn specs(k: DomainSize, eps: Epsilon) -> Vec<Spec> {
    let mut specs: Vec<Spec> = Protocol::ALL
        .into_iter()
        .filter_map(|p| Spec::classic(p, k, eps).ok())
        .collect();
    for &family in Family::ALL {
        specs.extend(
            family
                .alternatives(k, eps)
                .into_iter()
                .filter_map(|params| Spec::new(k, eps, params).ok()),
        );
    }
    specs
}

fn same_as_per_item<M: Mechanism>(m: &M, seed: u64) {
    let k = m.domain_size().get();
    let mut rng = stream_rng(seed, 0, Role::Genuine, 0);
    let mut all = Vec::new();
    for x in (0..k).cycle().take(60) {
        let report = m.perturb(x, &mut rng).unwrap();
        m.log_likelihoods(&report, &mut all);
        let each: Vec<f64> = (0..k).map(|i| m.log_likelihood(&report, i)).collect();
        if m.spec().family() == Family::SummationHistogram {
            for (a, b) in all.iter().zip(&each) {
                assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
            }
        } else {
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&all), bits(&each), "{:?}", m.spec());
        }
    }
}

#[test]
fn log_likelihoods_are_the_per_item_ones_bit_for_bit() {
    let mut checked = 0;
    for k in [2, 16, 37] {
        for eps in [0.5, 2.0, 6.0] {
            let (k, eps) = (DomainSize::new(k).unwrap(), Epsilon::new(eps).unwrap());
            for (i, spec) in specs(k, eps).into_iter().enumerate() {
                dispatch!(spec.build().unwrap(), m => same_as_per_item(&m, i as u64));
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked} instances");
}

/// The sketches walk their support a block of hashed items at a time (CMS looks each
/// column up in the report's cells or in a bitmap of the row, by the domain's size beside
/// the row's): the items `supports` accepts one by one, in order.
#[test]
fn the_sketches_support_scans_are_the_per_item_tests() {
    use ldp_core::Support;
    use ldp_core::families::sketch::{CountMeanSketch, HadamardCountMeanSketch};

    fn same<M: Support>(m: &M) {
        let k = m.domain_size().get();
        let mut rng = stream_rng(7, 0, Role::Genuine, 0);
        for x in (0..k).step_by((k as usize / 40).max(1)) {
            let report = m.perturb(x, &mut rng).unwrap();
            let mut walked = Vec::new();
            m.for_each_supported(&report, |i| walked.push(i));
            let each: Vec<u32> = (0..k).filter(|&i| m.supports(&report, i)).collect();
            assert_eq!(walked, each, "{:?}", m.spec());
        }
    }
    let eps = Epsilon::new(1.0).unwrap();
    for k in [3, 16, 37, 2000] {
        let k = DomainSize::new(k).unwrap();
        // CMS looks cells up where k log2(cells) <= m + cells (narrow rows at k = 3, wide
        // ones at k = 16 and 37), else in a bitmap (narrow rows beyond k = 3, wide at 2000).
        for (hashes, width) in [(4, 8), (16, 1024), (256, 1024)] {
            same(&CountMeanSketch::new(k, eps, hashes, width).unwrap());
            same(&HadamardCountMeanSketch::new(k, eps, hashes, width).unwrap());
        }
    }
}
