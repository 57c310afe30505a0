//! The MAP attack with an informative prior, measured on real reports (ldp-attack), against
//! its exact expected success rate (ldp-analytic): the two crates never depend on each
//! other, so the check lives here.

use ldp_analytic::map;
use ldp_attack::{MeasureConfig, Population, Prior, ReconstructionAttack, measure};
use ldp_core::{Epsilon, FamilyParams, Spec};

fn eps(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

fn config(runs: u64, attack: ReconstructionAttack) -> MeasureConfig {
    MeasureConfig {
        runs,
        seed: 2026,
        attack,
        poisoning: None,
    }
}

#[test]
fn map_attack_matches_its_exact_expectation() {
    let pop = Population::adult_age();
    let prior = Prior::from_population(&pop);
    let k = pop.k();
    for e in [1.0, 4.0] {
        for family in [
            FamilyParams::Grr,
            FamilyParams::SubsetSelection { omega: 1 },
            FamilyParams::SubsetSelection { omega: 7 },
            FamilyParams::UnaryEncoding { p: 0.5 },
            FamilyParams::ThresholdHistogram { theta: 0.8 },
            FamilyParams::LocalHashing { g: 13 },
        ] {
            let spec = Spec::new(k, eps(e), family).unwrap();
            let m = measure(
                &spec,
                &pop,
                &config(20, ReconstructionAttack::Map(prior.clone())),
            )
            .unwrap();
            let exact = map::asr_exact(&spec, prior.probabilities())
                .unwrap()
                .unwrap();
            assert!(
                (m.asr.mean - exact).abs() < 3.5 * m.asr.se,
                "{family:?} eps={e}: {} vs {exact} (se {})",
                m.asr.mean,
                m.asr.se
            );
        }
    }
}
