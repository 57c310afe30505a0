//! The adaptive protocols against the paper's appendix, search modes, weights and errors.

use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol, Spec};
use ldp_optimize::{
    OptimizeError, ParameterSpace, Scale, Search, Strategy, TuneOptions, Weights, candidates, tune,
    tune_in,
};
use proptest::prelude::*;

fn k(v: u32) -> DomainSize {
    DomainSize::new(v).unwrap()
}
fn eps(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

#[test]
fn paper_appendix_parameters_at_k100_eps4() {
    let (kk, ee) = (k(100), eps(4.0));
    let o = TuneOptions::default();
    let p = |proto| tune(proto, kk, ee, &o).unwrap().param();
    assert!(
        (p(Protocol::Aue) - 0.818).abs() < 5e-4,
        "AUE {}",
        p(Protocol::Aue)
    );
    assert_eq!(p(Protocol::Alh), 13.0);
    assert_eq!(p(Protocol::Ass), 7.0);
    assert!(
        (p(Protocol::Athe) - 0.783).abs() < 5e-4,
        "ATHE {}",
        p(Protocol::Athe)
    );
    // ... against the classic presets.
    let c = |proto| {
        Spec::classic(proto, kk, ee)
            .unwrap()
            .params()
            .value()
            .unwrap()
    };
    assert_eq!(c(Protocol::Oue), 0.5);
    assert_eq!(c(Protocol::Olh), 56.0);
    assert_eq!(c(Protocol::Ss), 2.0);
    assert!((c(Protocol::The) - 0.816).abs() < 5e-4);
}

#[test]
fn adaptive_protocols_lower_the_asr_of_their_classic_counterparts() {
    let (kk, ee) = (k(100), eps(4.0));
    for (adaptive, classic) in [
        (Protocol::Ass, Protocol::Ss),
        (Protocol::Aue, Protocol::Oue),
        (Protocol::Alh, Protocol::Olh),
        (Protocol::Athe, Protocol::The),
    ] {
        let t = tune(adaptive, kk, ee, &TuneOptions::default()).unwrap();
        let spec = Spec::classic(classic, kk, ee).unwrap();
        let asr = ldp_analytic::asr::expected(&spec, ldp_analytic::LhAsr::Paper);
        assert!(
            t.objectives.asr < asr,
            "{adaptive}: {} vs {classic}: {asr}",
            t.objectives.asr
        );
    }
}

#[test]
fn utility_only_weights_recover_the_classic_variance() {
    let utility = TuneOptions {
        weights: Weights::new(0.0, 1.0).unwrap(),
        ..TuneOptions::default()
    };
    let refined = TuneOptions {
        search: Search::Refined,
        ..utility
    };
    for kv in [10, 100, 1000] {
        for e in [0.5, 1.0, 4.0, 8.0] {
            let (kk, ee) = (k(kv), eps(e));
            for (adaptive, classic) in [
                (Protocol::Ass, Protocol::Ss),
                (Protocol::Aue, Protocol::Oue),
                (Protocol::Alh, Protocol::Olh),
                (Protocol::Athe, Protocol::The),
            ] {
                let classic_mse = ldp_analytic::variance::approx_per_user(
                    &Spec::classic(classic, kk, ee).unwrap(),
                );
                let tuned = tune(adaptive, kk, ee, &refined).unwrap().objectives.mse;
                assert!(
                    tuned <= classic_mse * (1.0 + 1e-9),
                    "{adaptive} k={kv} eps={e}: {tuned} > {classic_mse}"
                );
                // On the paper's grid, THE's continuous optimum is between grid points.
                let grid = tune(adaptive, kk, ee, &utility).unwrap().objectives.mse;
                let slack = if adaptive == Protocol::Athe {
                    1e-3
                } else {
                    1e-12
                };
                assert!(
                    grid <= classic_mse * (1.0 + slack),
                    "{adaptive} k={kv} eps={e}: {grid} > {classic_mse}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn refined_search_is_never_worse_than_the_paper_grid(
        kv in 2u32..3000, e in 0.1f64..10.0, w in 0.0f64..1.0, normalized in any::<bool>(),
    ) {
        let weights = Weights::new(w, 1.0 - w).unwrap_or_default();
        let scale = if normalized { Scale::Normalized } else { Scale::Raw };
        for strategy in [Strategy::Weighted, Strategy::tchebycheff(1e-6).unwrap()] {
            let paper = TuneOptions { weights, scale, strategy, ..TuneOptions::default() };
            let refined = TuneOptions { search: Search::Refined, ..paper };
            for proto in Protocol::ADAPTIVE {
                let grid = candidates(proto, k(kv), eps(e), &paper).unwrap();
                let score = |o: &ldp_optimize::Objectives| objective(&grid, &paper, o);
                let a = tune(proto, k(kv), eps(e), &paper).unwrap();
                let b = tune(proto, k(kv), eps(e), &refined).unwrap();
                prop_assert!(score(&b.objectives) <= score(&a.objectives), "{proto}: {:?} vs {:?}", b, a);
            }
        }
    }
}

/// The tuning objective, recomputed independently of the crate's scaler.
fn objective(
    grid: &[ldp_optimize::Candidate],
    o: &TuneOptions,
    p: &ldp_optimize::Objectives,
) -> f64 {
    let (mut asr, mut mse) = (p.asr, p.mse);
    if o.scale == Scale::Normalized {
        let range = |f: &dyn Fn(&ldp_optimize::Objectives) -> f64| {
            let lo = grid
                .iter()
                .map(|c| f(&c.objectives))
                .fold(f64::INFINITY, f64::min);
            let hi = grid
                .iter()
                .map(|c| f(&c.objectives))
                .fold(f64::NEG_INFINITY, f64::max);
            (lo, if hi > lo { hi - lo } else { 1.0 })
        };
        let (al, asp) = range(&|o| o.asr);
        let (ml, msp) = range(&|o| o.mse);
        asr = (asr - al) / asp;
        mse = (mse - ml) / msp;
    }
    let (wa, wm) = (o.weights.asr() * asr, o.weights.mse() * mse);
    match o.strategy {
        Strategy::Tchebycheff(rho) => wa.max(wm) + f64::from(rho) * (wa + wm),
        _ => wa + wm,
    }
}

#[test]
fn weights_move_the_parameter_towards_privacy() {
    // More weight on ASR: a lower ASR and a higher MSE, monotonically (paper Fig. weights_impact).
    let (kk, ee) = (k(100), eps(4.0));
    for proto in Protocol::ADAPTIVE {
        let mut last = (f64::INFINITY, 0.0);
        for w in [0.1, 0.3, 0.5, 0.7, 0.9] {
            let o = TuneOptions {
                weights: Weights::new(w, 1.0 - w).unwrap(),
                ..TuneOptions::default()
            };
            let t = tune(proto, kk, ee, &o).unwrap().objectives;
            assert!(t.asr <= last.0 && t.mse >= last.1, "{proto} at w_ASR = {w}");
            last = (t.asr, t.mse);
        }
    }
}

#[test]
fn poisoning_gain_as_a_third_objective_changes_the_choice() {
    let (kk, ee) = (k(100), eps(4.0));
    let two = tune(Protocol::Alh, kk, ee, &TuneOptions::default()).unwrap();
    let o = TuneOptions {
        weights: Weights::with_epg(0.25, 0.25, 0.5).unwrap(),
        ..TuneOptions::default()
    };
    let three = tune(Protocol::Alh, kk, ee, &o).unwrap();
    assert!(
        three.objectives.epg < two.objectives.epg,
        "{three:?} vs {two:?}"
    );
}

#[test]
fn every_strategy_tunes_every_adaptive_protocol() {
    for kv in [100, 1000] {
        for e in [0.5, 4.0] {
            for strategy in Strategy::PAPER {
                for scale in [Scale::Raw, Scale::Normalized] {
                    let o = TuneOptions {
                        strategy,
                        scale,
                        ..TuneOptions::default()
                    };
                    for proto in Protocol::ADAPTIVE {
                        let t = tune(proto, k(kv), eps(e), &o).unwrap();
                        assert!(t.param().is_finite());
                        if let Strategy::EpsConstraint(bounds) = strategy {
                            assert!(t.fell_back || bounds.admit(&t.objectives));
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn bad_input_gives_typed_errors() {
    for (a, m) in [(-0.1, 1.0), (f64::NAN, 1.0), (0.5, f64::INFINITY)] {
        assert!(matches!(
            Weights::new(a, m),
            Err(OptimizeError::Weight { .. })
        ));
    }
    assert_eq!(Weights::new(0.0, 0.0), Err(OptimizeError::AllWeightsZero));
    let (kk, ee) = (k(100), eps(1.0));
    assert_eq!(
        tune(Protocol::Oue, kk, ee, &TuneOptions::default()).unwrap_err(),
        OptimizeError::NotAdaptive(Protocol::Oue)
    );
    assert!(matches!(
        Strategy::eps_constraint(1.5),
        Err(OptimizeError::Bound { .. })
    ));
    assert!(matches!(
        ParameterSpace::integers(9, 3),
        Err(ldp_core::ParamError::EmptyRange { .. })
    ));
    assert!(matches!(
        ParameterSpace::interval(0.9, 0.6, 10),
        Err(ldp_core::ParamError::EmptyRange { .. })
    ));
    let outside = ParameterSpace::integers(1, 100).unwrap();
    assert!(matches!(
        tune_in(Protocol::Ass, kk, ee, &outside, &TuneOptions::default()),
        Err(OptimizeError::Param(_))
    ));
    assert_eq!(Strategy::tchebycheff(-1.0), Err(OptimizeError::Rho(-1.0)));
    // Deserialized settings go through the same checks.
    assert!(serde_json::from_str::<Weights>(r#"{"asr": -1.0, "mse": 1.0}"#).is_err());
    assert!(serde_json::from_str::<Strategy>(r#"{"tchebycheff": -1.0}"#).is_err());
    assert!(serde_json::from_str::<ParameterSpace>(r#"{"integers": {"lo": 9, "hi": 3}}"#).is_err());
    // ALH's paper space at eps = 30 has about 1e13 values: the weighted scalarization is
    // searched without a scan; a strategy that needs the whole frontier is refused, and
    // the error names the protocol.
    let weighted = tune(Protocol::Alh, kk, eps(30.0), &TuneOptions::default()).unwrap();
    assert!(weighted.evaluations < 10_000, "{weighted:?}");
    let utopia = TuneOptions {
        strategy: Strategy::Utopia,
        ..TuneOptions::default()
    };
    let err = tune(Protocol::Alh, kk, eps(30.0), &utopia).unwrap_err();
    assert!(matches!(
        err,
        OptimizeError::SpaceTooLarge {
            protocol: Protocol::Alh,
            ..
        }
    ));
    assert!(err.to_string().starts_with("ALH: "), "{err}");
    // Elbow and hypervolume have no meaning beyond two objectives.
    let three = TuneOptions {
        strategy: Strategy::Elbow,
        weights: Weights::with_epg(1.0, 1.0, 1.0).unwrap(),
        ..TuneOptions::default()
    };
    assert_eq!(
        tune(Protocol::Alh, kk, ee, &three).unwrap_err(),
        OptimizeError::Dimensions {
            strategy: "elbow",
            objectives: 3
        }
    );
    // A custom space within the family's range works.
    let narrow = ParameterSpace::integers(3, 5).unwrap();
    let t = tune_in(Protocol::Alh, kk, ee, &narrow, &TuneOptions::default()).unwrap();
    assert!((3.0..=5.0).contains(&t.param()));
    assert_eq!(
        t.spec.params(),
        FamilyParams::LocalHashing {
            g: t.param() as u32
        }
    );
}

/// Issue 24, item 12: a space too large to scan says why it must be scanned, and never
/// advises the strategy already in use or one the request cannot take.
#[test]
fn a_space_too_large_says_why_it_needs_a_full_scan() {
    use ldp_optimize::{FullScan, candidates};
    let kk = DomainSize::new(1 << 24).unwrap();
    let frontier = candidates(Protocol::Alh, kk, eps(20.0), &TuneOptions::default()).unwrap_err();
    assert!(
        matches!(
            frontier,
            OptimizeError::SpaceTooLarge {
                reason: FullScan::Frontier,
                ..
            }
        ),
        "{frontier}"
    );
    assert!(!frontier.to_string().contains("strategy"), "{frontier}");
    let repeated = TuneOptions {
        collections: 10_000,
        ..TuneOptions::default()
    };
    let err = tune(Protocol::Alh, kk, eps(1.0), &repeated).unwrap_err();
    assert!(
        matches!(
            err,
            OptimizeError::SpaceTooLarge {
                reason: FullScan::RepeatedAsr,
                ..
            }
        ),
        "{err}"
    );
    assert!(!err.to_string().contains("weighted"), "{err}");
}
