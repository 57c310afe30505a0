//! Value stability: fixed seeds pin the exact reports of every preset. A change here means
//! every published simulation would change; make it only on purpose.
#![cfg(feature = "serde")]

use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{
    DomainSize, Epsilon, Grr, LocalHashing, Mechanism, SubsetSelection, SummationHistogram,
    ThresholdHistogram, UnaryEncoding,
};

fn first_three<M: Mechanism>(m: &M) -> Vec<String> {
    let mut rng = stream_rng(20_251_125, 0, Role::Genuine, 0);
    (0..3)
        .map(|i| serde_json::to_string(&m.perturb(3 + i, &mut rng).unwrap()).unwrap())
        .collect()
}

#[test]
fn presets_produce_pinned_reports() {
    let (k, e) = (DomainSize::new(10).unwrap(), Epsilon::new(1.0).unwrap());
    assert_eq!(
        first_three(&Grr::new(k, e).unwrap()),
        [r#"{"y":5}"#, r#"{"y":7}"#, r#"{"y":0}"#]
    );
    assert_eq!(
        first_three(&SubsetSelection::new(k, e, 3).unwrap()),
        [
            r#"{"subset":[4,6,9]}"#,
            r#"{"subset":[0,3,9]}"#,
            r#"{"subset":[2,3,5]}"#
        ]
    );
    assert_eq!(
        first_three(&UnaryEncoding::symmetric(k, e).unwrap()),
        [
            r#"{"ones":[4,5,8]}"#,
            r#"{"ones":[0,1,3,4,6]}"#,
            r#"{"ones":[3,5,7]}"#
        ]
    );
    assert_eq!(
        first_three(&UnaryEncoding::optimized(k, e).unwrap()),
        [
            r#"{"ones":[4,5,8]}"#,
            r#"{"ones":[0,1,3,4,7]}"#,
            r#"{"ones":[4,5,8]}"#
        ]
    );
    assert_eq!(
        first_three(&LocalHashing::optimized(k, e).unwrap()),
        [
            r#"{"seed":3809641702,"y":1}"#,
            r#"{"seed":3871250788,"y":2}"#,
            r#"{"seed":343183819,"y":0}"#
        ]
    );
    assert_eq!(
        first_three(&ThresholdHistogram::optimized(k, e).unwrap()),
        [
            r#"{"ones":[4,5,8]}"#,
            r#"{"ones":[0,1,3,4,6]}"#,
            r#"{"ones":[4,5,7]}"#
        ]
    );
    let she = SummationHistogram::new(DomainSize::new(3).unwrap(), e).unwrap();
    let mut rng = stream_rng(20_251_125, 0, Role::Genuine, 0);
    assert_eq!(
        serde_json::to_string(&she.perturb(1, &mut rng).unwrap()).unwrap(),
        // One 64-bit word per coordinate, its bit 8 the sign (changed again in the
        // unreleased entry of CHANGELOG.md; a separate word held 64 signs before; in 0.2
        // each coordinate took two exponentials). The magnitudes are rand_distr's
        // ziggurat on the same words, one coordinate on: the old report's noise 1.419...
        // and -2.944... (coordinates 0 and 1) is now that of coordinates 1 and 2.
        r#"{"y":[0.8480500606086195,2.419008036490127,-2.9441294269873604]}"#
    );
}

/// SHE's streaming perturbation draws exactly what `perturb` draws.
#[test]
fn she_perturbs_the_same_with_or_without_a_vector() {
    let she =
        SummationHistogram::new(DomainSize::new(130).unwrap(), Epsilon::new(0.7).unwrap()).unwrap();
    let mut a = stream_rng(3, 0, Role::Genuine, 0);
    let mut b = a.clone();
    for item in [0, 64, 129] {
        let whole = she.perturb(item, &mut a).unwrap().y;
        let mut streamed = Vec::new();
        she.perturb_each(item, &mut b, |i, v| {
            assert_eq!(i, streamed.len());
            streamed.push(v);
        })
        .unwrap();
        assert_eq!(whole, streamed);
    }
}

#[test]
fn presets_match_the_paper() {
    let (k, e) = (DomainSize::new(100).unwrap(), Epsilon::new(4.0).unwrap());
    // Appendix "parameter_results": SS omega = 2, OLH g = 56, THE theta = 0.816, OUE p = 0.5.
    assert_eq!(SubsetSelection::optimized(k, e).unwrap().subset_size(), 2);
    assert_eq!(LocalHashing::optimized(k, e).unwrap().hash_range(), 56);
    let theta = ThresholdHistogram::optimized(k, e).unwrap().threshold();
    assert!((theta - 0.816).abs() < 5e-4, "{theta}");
    // The closed-form optimum: the variance is larger on both sides.
    let var = |t: f64| {
        let (p, q) = ldp_core::families::threshold::probabilities(e, t);
        q * (1.0 - q) / ((p - q) * (p - q))
    };
    assert!(var(theta) <= var(theta - 1e-6) && var(theta) <= var(theta + 1e-6));
}

#[test]
fn large_domain_families_produce_pinned_reports() {
    use ldp_core::families::hadamard::HadamardResponse;
    let k = DomainSize::new(10).unwrap();
    // eps = 1: the basic response (one block of 16); eps = 4: 16 blocks of 2.
    for (e, pinned) in [
        (1.0, [r#"{"y":8}"#, r#"{"y":10}"#, r#"{"y":1}"#]),
        (4.0, [r#"{"y":6}"#, r#"{"y":8}"#, r#"{"y":10}"#]),
    ] {
        let hr = HadamardResponse::optimized(k, Epsilon::new(e).unwrap()).unwrap();
        assert_eq!(first_three(&hr), pinned, "eps = {e}");
    }
    let hm = ldp_core::families::hadamard_mechanism::HadamardMechanism::new(
        k,
        Epsilon::new(1.0).unwrap(),
    )
    .unwrap();
    assert_eq!(
        first_three(&hm),
        [
            r#"{"seed":14,"y":1}"#,
            r#"{"seed":10,"y":0}"#,
            r#"{"seed":10,"y":0}"#
        ]
    );
    let flh = ldp_core::families::fast_local_hash::FastLocalHashing::optimized(
        k,
        Epsilon::new(1.0).unwrap(),
    )
    .unwrap();
    assert_eq!(
        first_three(&flh),
        [
            r#"{"seed":887,"y":2}"#,
            r#"{"seed":901,"y":1}"#,
            r#"{"seed":79,"y":2}"#
        ]
    );
    let e = Epsilon::new(1.0).unwrap();
    let hcms = ldp_core::families::sketch::HadamardCountMeanSketch::new(k, e, 4, 8).unwrap();
    assert_eq!(
        first_three(&hcms),
        [
            r#"{"seed":30,"y":1}"#,
            r#"{"seed":29,"y":1}"#,
            r#"{"seed":3,"y":0}"#
        ]
    );
    let dbf = ldp_core::families::bit_flip::DBitFlip::new(k, e, 3).unwrap();
    // Cell 2 j + bit for each of the three sampled buckets j.
    assert_eq!(
        first_three(&dbf),
        [
            r#"{"subset":[10,14,17]}"#,
            r#"{"subset":[3,6,19]}"#,
            r#"{"subset":[0,2,8]}"#
        ]
    );
    let cms = ldp_core::families::sketch::CountMeanSketch::new(k, e, 4, 8).unwrap();
    // The row's own cell (h m + j = 32 + j) comes last.
    assert_eq!(
        first_three(&cms),
        [
            r#"{"ones":[29,35]}"#,
            r#"{"ones":[9,11,33]}"#,
            r#"{"ones":[8,10,11,13,14,15,33]}"#
        ]
    );
}
