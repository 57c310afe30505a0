//! The expected squared bias of the fixed-hash families (`variance::expected_squared_bias`)
//! against the exact bias of their actual public hashes, and the priors' collision masses
//! against direct sums.

use ldp_analytic::variance::{Prior, collision_mass, expected_mse, expected_squared_bias};
use ldp_core::families::local_hash::collision_bias;
use ldp_core::{DomainSize, Epsilon, Protocol, Spec};

fn zipf(k: u32, s: f64) -> Vec<f64> {
    let w: Vec<f64> = (1..=k).map(|r| f64::from(r).powf(-s)).collect();
    let total: f64 = w.iter().sum();
    w.iter().map(|x| x / total).collect()
}

/// The mean over items of the squared bias of the seeds `0..s` (one realization of the
/// hash, averaged over k items) lies near its expectation over an ideal hash.
#[test]
fn the_expected_bias_matches_the_actual_hashes() {
    for (k, g, s, exponent) in [
        (1000u32, 4u32, 1000u32, 1.1),
        (2000, 8, 300, 1.5),
        (500, 2, 50, 0.8),
        (3000, 16, 100, 2.0),
    ] {
        let f = zipf(k, exponent);
        let b = collision_bias(g, s, &f);
        let actual = b.iter().map(|x| x * x).sum::<f64>() / f64::from(k);
        let kd = DomainSize::new(k).unwrap();
        let expected = ldp_analytic::variance::collision_squared_bias(kd, g, s, collision_mass(&f));
        let ratio = actual / expected;
        assert!(
            (0.75..1.33).contains(&ratio),
            "k={k} g={g} s={s} zipf {exponent}: actual {actual} vs expected {expected}"
        );
    }
}

/// The bias through the registry, against each family's exact `expected_mse` at 10^15
/// users (where the variance is gone): a family has a bias exactly where its fixed hashes
/// bias the estimate, and it is the collision form at the family's hash range and number
/// of hashes (FLH's g and k' seeds, the sketches' width m and h rows).
#[test]
fn the_fixed_hash_families_and_only_they_have_a_bias() {
    let (k, eps) = (DomainSize::new(1000).unwrap(), Epsilon::new(1.0).unwrap());
    let f = zipf(1000, 1.1);
    let mass = collision_mass(&f);
    let mut biased = 0;
    for protocol in Protocol::ALL {
        let Ok(spec) = Spec::classic(protocol, k, eps) else {
            continue; // the adaptive ones are the paper's families at a tuned parameter
        };
        let b = expected_squared_bias(&spec, mass);
        let exact = expected_mse(&spec, 1e15, &f);
        if b == 0.0 {
            assert!(
                exact < 1e-10,
                "{protocol}: {exact} at 10^15 users, but no bias"
            );
            continue;
        }
        biased += 1;
        let ratio = exact / b;
        assert!((0.7..1.4).contains(&ratio), "{protocol}: {exact} vs {b}");
        let named = spec.params().named_values();
        let value = |name: &str| {
            named
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| *v as u32)
        };
        let (range, hashes) = match (value("g"), value("seeds"), value("width"), value("hashes")) {
            (Some(g), Some(seeds), ..) => (g, seeds),
            (_, _, Some(width), Some(rows)) => (width, rows),
            _ => panic!("{protocol} has a bias but no fixed hashes: {named:?}"),
        };
        let want = ldp_analytic::variance::collision_squared_bias(k, range, hashes, mass);
        assert_eq!(b, want, "{protocol}");
    }
    assert_eq!(biased, 3, "FLH, CMS and HCMS");
}

#[test]
fn the_priors_collision_masses_are_sums_of_squares() {
    for k in [2u32, 10, 1000, 100_000, 300_000] {
        let kd = DomainSize::new(k).unwrap();
        assert!((Prior::Uniform.collision_mass(kd) * f64::from(k) - 1.0).abs() < 1e-12);
        assert_eq!(Prior::PointMass.collision_mass(kd), 1.0);
        for s in [0.0, 0.5, 1.0 - 1e-9, 1.0, 1.0 + 1e-9, 1.1, 2.0] {
            let direct = collision_mass(&zipf(k, s));
            let form = Prior::Zipf(s).collision_mass(kd);
            assert!(
                (form / direct - 1.0).abs() < 1e-9,
                "k={k} s={s}: {form} vs {direct}"
            );
        }
    }
    // An exponent so large that every item but the first vanishes: one value.
    let k = DomainSize::new(1000).unwrap();
    for s in [700.0, 1e308, f64::MAX] {
        assert_eq!(Prior::Zipf(s).collision_mass(k), 1.0);
    }
    for bad in ["zipf:-1", "zipf:x", "mass:0", "mass:2", "gauss", "zipf:inf"] {
        assert!(bad.parse::<Prior>().is_err(), "{bad}");
    }
    assert_eq!("mass:0.5".parse::<Prior>().unwrap(), Prior::Mass(0.5));
}
