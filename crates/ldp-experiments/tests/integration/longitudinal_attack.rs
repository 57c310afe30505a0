//! The combined-likelihood attack on t linked reports (ldp-attack), measured on real reports,
//! against the exact closed forms of `ldp_analytic::longitudinal`, within 3 standard errors. It lives
//! here because ldp-attack and ldp-analytic never depend on each other (DESIGN §2).

use ldp_analytic::{asr, longitudinal};
use ldp_attack::longitudinal::{Collection, LinkedConfig, measure_linked};
use ldp_attack::{MeasureError, Population};
use ldp_core::longitudinal::{Longitudinal, LongitudinalProtocol};
use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol, Spec};

const TS: [u32; 5] = [1, 2, 5, 10, 50];

fn eps(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

fn config(users: usize, seed: u64) -> LinkedConfig {
    LinkedConfig {
        runs: 1,
        seed,
        users: Some(users),
        collections: TS.to_vec(),
    }
}

/// The twelve protocols at k, eps: the classic presets and the adaptive families at a
/// representative parameter each.
fn twelve(k: DomainSize, e: Epsilon) -> Vec<Spec> {
    let mut specs: Vec<Spec> = Protocol::CLASSIC
        .iter()
        .map(|&p| Spec::classic(p, k, e).unwrap())
        .collect();
    for family in [
        FamilyParams::SubsetSelection { omega: 3 },
        FamilyParams::UnaryEncoding { p: 0.8 },
        FamilyParams::LocalHashing { g: 8 },
        FamilyParams::ThresholdHistogram { theta: 0.7 },
    ] {
        specs.push(Spec::new(k, e, family).unwrap());
    }
    specs
}

fn check(what: &str, measured: &ldp_attack::Estimate, want: f64) {
    let z = (measured.mean - want) / measured.se.max(1e-9);
    assert!(
        z.abs() < 3.0,
        "{what}: measured {} +- {} vs closed form {want} (z = {z:.2})",
        measured.mean,
        measured.se
    );
}

#[test]
fn one_shot_protocols_on_adult_age_match_the_closed_forms() {
    let pop = Population::adult_age();
    for spec in twelve(pop.k(), eps(1.0)) {
        let m = measure_linked(&Collection::OneShot(spec), &pop, &config(4000, 7)).unwrap();
        for (i, &t) in TS.iter().enumerate() {
            let what = format!("{:?} t={t}", spec.params());
            match longitudinal::asr_after(&spec, t) {
                Some(want) => check(&what, &m.asr[i], want),
                // SS (omega > 1) and SHE: one report is the one-shot closed form; beyond
                // it the Bayes-optimal attack cannot lose ground (within noise), and fifty
                // reports clearly help.
                None if t == 1 => check(&what, &m.asr[i], asr::expected(&spec, Default::default())),
                None => {
                    let (now, before) = (&m.asr[i], &m.asr[i - 1]);
                    let se = now.se.hypot(before.se);
                    assert!(now.mean > before.mean - 3.0 * se, "{what}: {:?}", m.asr);
                    if t == 50 {
                        assert!(now.mean > m.asr[0].mean + 3.0 * se, "{what}: {:?}", m.asr);
                    }
                }
            }
        }
    }
}

#[test]
fn memoized_protocols_on_adult_age_match_the_closed_forms() {
    let pop = Population::adult_age();
    for protocol in LongitudinalProtocol::ALL {
        let l = Longitudinal::new(protocol, pop.k(), eps(2.0), eps(1.0)).unwrap();
        let m = measure_linked(&Collection::Memoized(l.clone()), &pop, &config(4000, 8)).unwrap();
        for (i, &t) in TS.iter().enumerate() {
            check(
                &format!("{protocol:?} t={t}"),
                &m.asr[i],
                longitudinal::memoized(&l, t),
            );
            assert!(m.asr[i].mean <= longitudinal::memoized_limit(&l) + 3.0 * m.asr[i].se);
        }
    }
}

#[test]
fn a_uniform_population_gives_the_same_rates() {
    let k = DomainSize::new(20).unwrap();
    let pop = Population::from_items(k, (0..6000).map(|i| i % 20).collect()).unwrap();
    for spec in twelve(k, eps(0.5)) {
        if longitudinal::asr_after(&spec, 1).is_none() {
            continue;
        }
        let m = measure_linked(&Collection::OneShot(spec), &pop, &config(6000, 9)).unwrap();
        for (i, &t) in TS.iter().enumerate() {
            check(
                &format!("{:?} t={t}", spec.params()),
                &m.asr[i],
                longitudinal::asr_after(&spec, t).unwrap(),
            );
        }
    }
    for protocol in LongitudinalProtocol::ALL {
        let l = Longitudinal::new(protocol, k, eps(1.5), eps(0.5)).unwrap();
        let m = measure_linked(&Collection::Memoized(l.clone()), &pop, &config(6000, 10)).unwrap();
        for (i, &t) in TS.iter().enumerate() {
            check(
                &format!("{protocol:?} t={t}"),
                &m.asr[i],
                longitudinal::memoized(&l, t),
            );
        }
    }
}

#[test]
fn measurements_are_reproducible_and_bad_configs_are_typed_errors() {
    let pop = Population::adult_age();
    let spec = Spec::classic(Protocol::She, pop.k(), eps(2.0)).unwrap();
    let c = LinkedConfig {
        runs: 2,
        seed: 3,
        users: Some(300),
        collections: vec![1, 3],
    };
    let a = measure_linked(&Collection::OneShot(spec), &pop, &c).unwrap();
    let b = measure_linked(&Collection::OneShot(spec), &pop, &c).unwrap();
    assert_eq!(a, b);
    assert!(a.asr.iter().all(|e| e.se.is_finite()));
    for bad in [vec![], vec![0, 1], vec![3, 2], vec![2, 2]] {
        let c = LinkedConfig {
            collections: bad,
            ..c.clone()
        };
        assert!(matches!(
            measure_linked(&Collection::OneShot(spec), &pop, &c),
            Err(MeasureError::Collections { .. })
        ));
    }
    let small = Spec::classic(Protocol::Grr, DomainSize::new(5).unwrap(), eps(1.0)).unwrap();
    assert!(matches!(
        measure_linked(&Collection::OneShot(small), &pop, &c),
        Err(MeasureError::DomainMismatch { .. })
    ));
    let c = LinkedConfig {
        users: Some(0),
        ..c
    };
    assert_eq!(
        measure_linked(&Collection::OneShot(spec), &pop, &c),
        Err(MeasureError::NoUsers)
    );
}

/// L-OLH at a large memo budget hashes to many values (g = 19 against k = 74), where the
/// closed form's ideal-hash approximation (it leaves out a most supported hashed value
/// that no item hashes to) is put to the test.
#[test]
fn l_olh_with_a_wide_hash_matches_its_approximation() {
    let pop = Population::adult_age();
    let l = Longitudinal::new(LongitudinalProtocol::LOlh, pop.k(), eps(6.0), eps(3.0)).unwrap();
    assert_eq!(l.hash_range(), Some(19));
    let m = measure_linked(&Collection::Memoized(l.clone()), &pop, &config(8000, 12)).unwrap();
    for (i, &t) in TS.iter().enumerate() {
        check(
            &format!("L-OLH g=19 t={t}"),
            &m.asr[i],
            longitudinal::memoized(&l, t),
        );
    }
}
