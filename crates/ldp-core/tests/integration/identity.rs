//! A mechanism is its defining parameters: presets, `Spec::build` and a serde round trip
//! all give the same mechanism, and aggregators restored from storage merge with fresh
//! ones (issue 12, item 1).
#![cfg(feature = "serde")]

use ldp_core::simulation::{Role, simulate};
use ldp_core::{
    Aggregator, AnyMechanism, DomainSize, Epsilon, Grr, LocalHashing, Mechanism, Protocol, Spec,
    SubsetSelection, SummationHistogram, ThresholdHistogram, UnaryEncoding, dispatch,
};
use proptest::prelude::*;

/// Every classic preset built both ways: by its named constructor and from its spec.
fn presets(k: DomainSize, eps: Epsilon) -> Vec<(Protocol, AnyMechanism)> {
    vec![
        (Protocol::Grr, AnyMechanism::Grr(Grr::new(k, eps).unwrap())),
        (
            Protocol::Ss,
            AnyMechanism::SubsetSelection(SubsetSelection::optimized(k, eps).unwrap()),
        ),
        (
            Protocol::Sue,
            AnyMechanism::UnaryEncoding(UnaryEncoding::symmetric(k, eps).unwrap()),
        ),
        (
            Protocol::Oue,
            AnyMechanism::UnaryEncoding(UnaryEncoding::optimized(k, eps).unwrap()),
        ),
        (
            Protocol::Blh,
            AnyMechanism::LocalHashing(LocalHashing::binary(k, eps).unwrap()),
        ),
        (
            Protocol::Olh,
            AnyMechanism::LocalHashing(LocalHashing::optimized(k, eps).unwrap()),
        ),
        (
            Protocol::She,
            AnyMechanism::SummationHistogram(SummationHistogram::new(k, eps).unwrap()),
        ),
        (
            Protocol::The,
            AnyMechanism::ThresholdHistogram(ThresholdHistogram::optimized(k, eps).unwrap()),
        ),
    ]
}

/// The mechanism and an aggregate of `n` users survive serde; the restored aggregate
/// merges with a fresh one built from the named constructor.
fn round_trip_and_merge<M: Mechanism>(m: &M, n: u32, seed: u64)
where
    M::Aggregator: PartialEq,
{
    let json = serde_json::to_string(m).unwrap();
    let back: M = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, m, "{json}");
    assert_eq!(back.spec(), m.spec());

    let items: Vec<u32> = (0..n).map(|i| i % m.domain_size().get()).collect();
    let stored = simulate(m, &items, seed, 0, Role::Genuine).unwrap();
    let restored: M::Aggregator =
        serde_json::from_str(&serde_json::to_string(&stored).unwrap()).unwrap();
    assert_eq!(restored, stored);
    let mut fresh = simulate(m, &items, seed, 1, Role::Genuine).unwrap();
    fresh.merge(&restored).unwrap();
    assert_eq!(fresh.count(), 2 * u64::from(n));
}

/// The regression of issue 12: a restored SUE aggregator refused to merge with a fresh
/// one, because `symmetric` and `new` computed q by different formulas.
#[test]
fn a_restored_sue_aggregator_merges_with_a_fresh_one() {
    let (k, eps) = (DomainSize::new(20).unwrap(), Epsilon::new(1.3).unwrap());
    let sue = UnaryEncoding::symmetric(k, eps).unwrap();
    let mut agg = sue.aggregator();
    agg.add(&ldp_core::OnesReport { ones: vec![1, 7] }).unwrap();
    let restored: ldp_core::SupportCounts<UnaryEncoding> =
        serde_json::from_str(&serde_json::to_string(&agg).unwrap()).unwrap();
    let mut fresh = sue.aggregator();
    fresh.merge(&restored).unwrap();
    assert_eq!(fresh.counts(), agg.counts());
    let built = Spec::classic(Protocol::Sue, k, eps)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(built, AnyMechanism::UnaryEncoding(sue));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_preset_is_its_spec_and_round_trips(
        kv in 2u32..300, e in 0.01f64..30.0, seed in any::<u64>(),
    ) {
        let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
        for (protocol, preset) in presets(k, eps) {
            let spec = Spec::classic(protocol, k, eps).unwrap();
            prop_assert_eq!(preset.spec(), spec);
            prop_assert_eq!(&spec.build().unwrap(), &preset);
            // The spec itself round-trips.
            let back: Spec = serde_json::from_str(&serde_json::to_string(&spec).unwrap()).unwrap();
            prop_assert_eq!(back, spec);
            dispatch!(&preset, m => round_trip_and_merge(m, 300, seed));
        }
    }

    #[test]
    fn any_family_parameter_round_trips(
        kv in 3u32..300, e in 0.01f64..30.0, p in 0.5f64..0.9999, g in 2u32..100_000,
        theta in 0.5f64..=1.0, omega_frac in 0.0f64..1.0, seed in any::<u64>(),
    ) {
        let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
        let omega = 1 + ((f64::from(kv - 2) * omega_frac) as u32);
        round_trip_and_merge(&SubsetSelection::new(k, eps, omega).unwrap(), 200, seed);
        round_trip_and_merge(&UnaryEncoding::new(k, eps, p).unwrap(), 200, seed);
        round_trip_and_merge(&LocalHashing::new(k, eps, g).unwrap(), 200, seed);
        round_trip_and_merge(&ThresholdHistogram::new(k, eps, theta).unwrap(), 200, seed);
    }
}
