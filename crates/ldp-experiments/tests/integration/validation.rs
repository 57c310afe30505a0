//! Measurement against closed form, across crates: ldp-attack's simulations of real
//! reports against ldp-analytic's expectations, for every protocol.

use ldp_analytic::{LhAsr, Poisoning, asr, epg};
use ldp_attack::{
    MeasureConfig, PoisonConfig, PoisonKind, Population, Prior, ReconstructionAttack, measure,
};
use ldp_core::{ClipBound, DomainSize, Epsilon, Family, Protocol, Spec};
use ldp_optimize::{TuneOptions, protocol_spec};

fn spec(p: Protocol, k: DomainSize, e: f64) -> Spec {
    protocol_spec(p, k, Epsilon::new(e).unwrap(), &TuneOptions::default()).unwrap()
}

#[test]
fn measured_asr_matches_the_closed_form_for_every_protocol() {
    // 200,000 users spread over k = 100 items; one run, binomial standard error.
    let pop = Population::from_counts(&[2000; 100]).unwrap();
    for e in [1.0, 4.0, 8.0] {
        for p in Protocol::ALL {
            let s = spec(p, pop.k(), e);
            let config = MeasureConfig {
                runs: 1,
                seed: 77,
                attack: ReconstructionAttack::Paper,
                poisoning: None,
            };
            let m = measure(&s, &pop, &config).unwrap();
            // The LH family against the exact form; the paper's form is off (see below).
            let expected = asr::expected(&s, LhAsr::Exact);
            assert!(
                (m.asr.mean - expected).abs() <= 3.0 * m.asr.se,
                "{p} eps={e}: measured {} vs {expected} (se {})",
                m.asr.mean,
                m.asr.se
            );
        }
    }
}

#[test]
fn the_papers_lh_asr_overestimates_the_measured_attack() {
    let pop = Population::from_counts(&[2000; 100]).unwrap();
    let s = spec(Protocol::Olh, pop.k(), 4.0);
    let config = MeasureConfig {
        runs: 1,
        seed: 78,
        attack: ReconstructionAttack::Paper,
        poisoning: None,
    };
    let m = measure(&s, &pop, &config).unwrap();
    let paper = asr::expected(&s, LhAsr::Paper);
    assert!(
        (paper - 0.279).abs() < 1e-3 && (m.asr.mean - 0.234).abs() < 0.005,
        "paper {paper}, measured {:?}",
        m.asr
    );
}

#[test]
fn measured_maximal_gain_matches_the_epg_for_every_family() {
    let pop = Population::from_counts(&[200; 100]).unwrap();
    let k = pop.k();
    for r in [1u32, 3] {
        let targets: Vec<u32> = (0..r).map(|i| 10 + 30 * i).collect();
        let f_t = f64::from(r) * 0.01;
        for p in [
            Protocol::Grr,
            Protocol::Ss,
            Protocol::Oue,
            Protocol::Olh,
            Protocol::Blh,
            Protocol::The,
            Protocol::She,
            Protocol::Hr,
            Protocol::Hm,
            Protocol::Flh,
            Protocol::Cms,
            Protocol::Hcms,
        ] {
            let s = spec(p, k, 4.0);
            let poisoning = PoisonConfig::new(PoisonKind::Mga, 0.05, targets.clone()).unwrap();
            let config = MeasureConfig {
                runs: 30,
                seed: 79,
                attack: ReconstructionAttack::Paper,
                poisoning: Some(poisoning),
            };
            let m = measure(&s, &pop, &config).unwrap();
            let gain = m.gain.unwrap();
            // beta is realized with a whole number of fake users.
            let beta = m.fake_users as f64 / (m.fake_users + m.users) as f64;
            let attack = Poisoning::new(beta, r, f_t).unwrap();
            let expected = if p.family() == Family::SummationHistogram {
                epg::expected_she_clipped(&s, &attack, ClipBound::recommended(s.eps())).unwrap()
            } else {
                // At the targets one report supports: HR's lie in three blocks.
                let supported = m.targets_supported.unwrap();
                epg::expected_with_support(&s, &attack, supported)
                    .unwrap()
                    .finite()
                    .unwrap()
            };
            assert!(
                (gain.mean - expected).abs() <= 3.0 * gain.se.max(1e-12),
                "{p} r={r}: measured {gain:?} vs EPG {expected}"
            );
        }
    }
}

#[test]
fn an_informative_prior_beats_the_uniform_attack_for_every_protocol() {
    let pop = Population::adult_age();
    let prior = Prior::from_population(&pop);
    for p in Protocol::ALL {
        let s = spec(p, pop.k(), 2.0);
        let run = |attack| {
            measure(
                &s,
                &pop,
                &MeasureConfig {
                    runs: 3,
                    seed: 80,
                    attack,
                    poisoning: None,
                },
            )
            .unwrap()
            .asr
        };
        let (uniform, map) = (
            run(ReconstructionAttack::Paper),
            run(ReconstructionAttack::Map(prior.clone())),
        );
        assert!(
            map.mean > uniform.mean,
            "{p}: MAP {map:?} vs uniform {uniform:?}"
        );
    }
}

#[test]
fn measured_mse_matches_the_closed_form_for_every_protocol() {
    // A skewed population (Adult Age): the exact MSE depends on it for most families.
    let pop = Population::adult_age();
    let truth = pop.frequencies();
    for p in Protocol::ALL {
        let s = spec(p, pop.k(), 2.0);
        let config = MeasureConfig {
            runs: 40,
            seed: 81,
            attack: ReconstructionAttack::Paper,
            poisoning: None,
        };
        let m = measure(&s, &pop, &config).unwrap();
        let expected = ldp_analytic::variance::expected_mse(&s, pop.len() as f64, &truth);
        assert!(
            (m.mse.mean - expected).abs() <= 3.0 * m.mse.se,
            "{p}: measured {:?} vs {expected}",
            m.mse
        );
    }
}
