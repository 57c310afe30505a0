//! Property tests: reports lie in the output space; merging is associative and
//! order-independent; serde round-trips mechanisms and aggregates.
#![cfg(feature = "serde")]

use ldp_core::families::fast_local_hash::FastLocalHashing;
use ldp_core::families::hadamard_mechanism::HadamardMechanism;
use ldp_core::simulation::{Role, simulate, stream_rng};
use ldp_core::{
    Aggregator, DomainSize, Epsilon, Grr, LocalHashing, Mechanism, SubsetSelection,
    SummationHistogram, Support, ThresholdHistogram, UnaryEncoding,
};
use proptest::prelude::*;
use rand::RngExt;

fn check_report<M: Support>(m: &M, item: u32, seed: u64) {
    let mut rng = stream_rng(seed, 0, Role::Genuine, 0);
    let r = m.perturb(item, &mut rng).unwrap();
    m.validate(&r).unwrap();
    let support = m.support(&r);
    assert!(support.windows(2).all(|w| w[0] < w[1]));
    // Listing and testing agree both ways: the attack's guess by rejection tests items,
    // its fallback lists them.
    for i in 0..m.domain_size().get() {
        assert_eq!(
            m.supports(&r, i),
            support.binary_search(&i).is_ok(),
            "item {i}"
        );
    }
    assert!(m.log_likelihood(&r, item).is_finite());
    let json = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<M::Report>(&json).unwrap(), r);
}

/// Perturbing into a report that already holds another one draws and gives what a fresh
/// `perturb` does, and leaves the stream in the same place.
fn check_perturb_into<M: Mechanism>(m: &M, item: u32, seed: u64) {
    let mut a = stream_rng(seed, 2, Role::Genuine, 0);
    let mut b = a.clone();
    let other = (item + 1) % m.domain_size().get();
    let mut reused = m.perturb(other, &mut a).unwrap();
    assert_eq!(reused, m.perturb(other, &mut b).unwrap());
    m.perturb_into(item, &mut a, &mut reused).unwrap();
    assert_eq!(reused, m.perturb(item, &mut b).unwrap());
    assert_eq!(a.random::<u64>(), b.random::<u64>());
    let before = reused.clone();
    assert!(
        m.perturb_into(m.domain_size().get(), &mut a, &mut reused)
            .is_err()
    );
    assert_eq!(reused, before);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn perturbing_into_a_used_report_is_perturbing(
        kv in 2u32..200, e in 0.05f64..12.0, item_frac in 0.0f64..1.0, p in 0.5f64..0.999,
        theta in 0.5f64..=1.0, seed in any::<u64>(),
    ) {
        let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
        let item = ((f64::from(kv) * item_frac) as u32).min(kv - 1);
        check_perturb_into(&UnaryEncoding::new(k, eps, p).unwrap(), item, seed);
        check_perturb_into(&ThresholdHistogram::new(k, eps, theta).unwrap(), item, seed);
        check_perturb_into(&SummationHistogram::new(k, eps).unwrap(), item, seed);
        check_perturb_into(&SubsetSelection::optimized(k, eps).unwrap(), item, seed);
        check_perturb_into(&Grr::new(k, eps).unwrap(), item, seed);
    }

    #[test]
    fn reports_lie_in_the_output_space(
        kv in 2u32..200, e in 0.05f64..12.0, item_frac in 0.0f64..1.0,
        omega_frac in 0.0f64..1.0, p in 0.5f64..0.999, g in 2u32..300, theta in 0.5f64..=1.0,
        seed in any::<u64>(),
    ) {
        let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
        let item = ((f64::from(kv) * item_frac) as u32).min(kv - 1);
        let omega = 1 + ((f64::from(kv - 1) * omega_frac) as u32).min(kv - 2);
        check_report(&Grr::new(k, eps).unwrap(), item, seed);
        let ss = SubsetSelection::new(k, eps, omega).unwrap();
        check_report(&ss, item, seed);
        let mut rng = stream_rng(seed, 1, Role::Genuine, 0);
        prop_assert_eq!(ss.perturb(item, &mut rng).unwrap().subset.len(), omega as usize);
        check_report(&UnaryEncoding::new(k, eps, p).unwrap(), item, seed);
        check_report(&LocalHashing::new(k, eps, g).unwrap(), item, seed);
        let flh_g = g.min(64);
        check_report(&FastLocalHashing::new(k, eps, flh_g, 4 * flh_g).unwrap(), item, seed);
        check_report(&HadamardMechanism::new(k, eps).unwrap(), item, seed);
        check_report(&ThresholdHistogram::new(k, eps, theta).unwrap(), item, seed);
        let she = SummationHistogram::new(k, eps).unwrap();
        let r = she.perturb(item, &mut rng).unwrap();
        prop_assert!(she.validate(&r).is_ok());
    }

    #[test]
    fn merge_is_associative_and_order_independent(
        kv in 2u32..40, e in 0.1f64..6.0, seed in any::<u64>(), n in 1usize..3000,
    ) {
        let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
        let items: Vec<u32> = (0..n as u32).map(|i| i % kv).collect();
        check_merge(&UnaryEncoding::optimized(k, eps).unwrap(), &items, seed);
        check_merge(&LocalHashing::optimized(k, eps).unwrap(), &items, seed);
        check_merge(&SubsetSelection::optimized(k, eps).unwrap(), &items, seed);
        // SHE sums floats: merging is associative up to rounding.
        let she = SummationHistogram::new(k, eps).unwrap();
        let parts: Vec<_> = (0..3).map(|r| simulate(&she, &items, seed, r, Role::Genuine).unwrap()).collect();
        let mut abc = parts[0].clone(); abc.merge(&parts[1]).unwrap(); abc.merge(&parts[2]).unwrap();
        let mut cba = parts[2].clone(); cba.merge(&parts[1]).unwrap(); cba.merge(&parts[0]).unwrap();
        for (x, y) in abc.sums().iter().zip(cba.sums()) {
            prop_assert!((x - y).abs() <= 1e-9 * (1.0 + x.abs()));
        }
    }
}

fn check_merge<M: Mechanism>(m: &M, items: &[u32], seed: u64)
where
    M::Aggregator: PartialEq,
{
    let parts: Vec<M::Aggregator> = (0..3)
        .map(|r| simulate(m, items, seed, r, Role::Genuine).unwrap())
        .collect();
    let (a, b, c) = (&parts[0], &parts[1], &parts[2]);
    let mut left = a.clone();
    left.merge(b).unwrap();
    left.merge(c).unwrap();
    let mut bc = b.clone();
    bc.merge(c).unwrap();
    let mut right = a.clone();
    right.merge(&bc).unwrap();
    let mut reversed = c.clone();
    reversed.merge(b).unwrap();
    reversed.merge(a).unwrap();
    assert_eq!(left, right);
    assert_eq!(left, reversed);
    assert_eq!(left.count(), 3 * items.len() as u64);
    // The state survives a serde round trip.
    let json = serde_json::to_string(&left).unwrap();
    assert_eq!(serde_json::from_str::<M::Aggregator>(&json).unwrap(), left);
}
