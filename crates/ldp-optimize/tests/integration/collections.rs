//! Tuning against the ASR after t linked reports.

use ldp_analytic::{longitudinal, variance};
use ldp_core::{DomainSize, Epsilon, Protocol};
use ldp_optimize::{OptimizeError, TuneOptions, candidates, tune};

#[test]
fn the_tuned_parameter_minimizes_the_score_with_the_asr_after_t_reports() {
    let (k, eps) = (DomainSize::new(100).unwrap(), Epsilon::new(0.5).unwrap());
    for protocol in [Protocol::Aue, Protocol::Alh, Protocol::Athe] {
        for t in [2, 30, 365] {
            let options = TuneOptions {
                collections: t,
                ..TuneOptions::default()
            };
            let tuned = tune(protocol, k, eps, &options).unwrap();
            // Independently: the full grid scored with the closed forms.
            let best = candidates(protocol, k, eps, &TuneOptions::default())
                .unwrap()
                .into_iter()
                .map(|c| {
                    let spec = ldp_core::Spec::new(k, eps, c.params).unwrap();
                    let score = 0.5 * longitudinal::asr_after(&spec, t).unwrap()
                        + 0.5 * variance::approx_per_user(&spec);
                    (score, c.param())
                })
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)))
                .unwrap();
            assert_eq!(tuned.param(), best.1, "{protocol:?} t={t}");
            assert_eq!(
                tuned.objectives.asr,
                longitudinal::asr_after(&tuned.spec, t).unwrap()
            );
        }
    }
}

#[test]
fn one_collection_is_the_papers_tuning_and_other_cases_are_typed_errors() {
    let (k, eps) = (DomainSize::new(100).unwrap(), Epsilon::new(4.0).unwrap());
    let one = TuneOptions {
        collections: 1,
        ..TuneOptions::default()
    };
    assert_eq!(tune(Protocol::Alh, k, eps, &one).unwrap().param(), 13.0);
    let many = TuneOptions {
        collections: 10,
        ..TuneOptions::default()
    };
    assert!(matches!(
        tune(Protocol::Ass, k, eps, &many),
        Err(OptimizeError::NoRepeatedForm {
            collections: 10,
            ..
        })
    ));
    let none = TuneOptions {
        collections: 0,
        ..TuneOptions::default()
    };
    assert!(matches!(
        tune(Protocol::Aue, k, eps, &none),
        Err(OptimizeError::NoCollections)
    ));
}
