//! The practitioner's question over every protocol, once or after many linked
//! reports, against a brute-force scan; and extra objectives of zero weight change nothing.

use ldp_analytic::{LhAsr, Poisoning};
use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
use ldp_optimize::{
    Bounds, ChooseError, OptimizeError, Strategy, TuneOptions, Weights, candidates,
    choose_protocol, choose_protocol_after, objectives, tune,
};
use proptest::prelude::*;

/// Every classic preset (with its family's alternatives) and every grid point of every
/// adaptive protocol, in protocol order then grid order: the first of smallest MSE among those meeting the bounds.
fn brute_force(k: DomainSize, eps: Epsilon, bounds: &Bounds) -> Option<(Protocol, Spec, f64)> {
    let poisoning = Poisoning::default();
    let options = TuneOptions::default();
    let mut best: Option<(Protocol, Spec, f64)> = None;
    for p in Protocol::ALL {
        let points: Vec<(Spec, ldp_optimize::Objectives)> = if p.is_adaptive() {
            candidates(p, k, eps, &options)
                .unwrap()
                .into_iter()
                .map(|c| (Spec::new(k, eps, c.params).unwrap(), c.objectives))
                .collect()
        } else {
            // The preset, then the family's further instances when p is its only
            // classic protocol.
            let mut specs = vec![Spec::classic(p, k, eps).unwrap()];
            let family = p.family();
            if Protocol::CLASSIC
                .iter()
                .filter(|q| q.family() == family)
                .count()
                == 1
            {
                for params in family.alternatives(k, eps) {
                    specs.push(Spec::new(k, eps, params).unwrap());
                }
            }
            specs
                .into_iter()
                .map(|spec| (spec, objectives(&spec, LhAsr::Paper, &poisoning).unwrap()))
                .collect()
        };
        for (spec, o) in points {
            if bounds.admit(&o) && best.is_none_or(|(_, _, m)| o.mse < m) {
                best = Some((p, spec, o.mse));
            }
        }
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_choice_is_the_brute_force_answer(
        kv in 2u32..3000, e in 0.1f64..9.0, asr_max in 0.0f64..0.8,
        bits_max in prop::option::of(4.0f64..2000.0), epg_max in prop::option::of(0.05f64..2.0),
    ) {
        let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
        let mut bounds = Bounds::asr(asr_max).unwrap();
        if let Some(b) = bits_max { bounds = bounds.with_bits(b).unwrap(); }
        if let Some(g) = epg_max { bounds = bounds.with_epg(g).unwrap(); }
        let got = choose_protocol(k, eps, &bounds, LhAsr::Paper, &Poisoning::default());
        match brute_force(k, eps, &bounds) {
            None => prop_assert!(matches!(got, Err(ChooseError::Infeasible { .. })), "{got:?}"),
            Some((protocol, spec, mse)) => {
                let got = got.unwrap();
                prop_assert_eq!(got.protocol, protocol);
                prop_assert_eq!(got.spec, spec);
                prop_assert_eq!(got.objectives.mse, mse);
            }
        }
    }
}

#[test]
fn extra_objectives_of_zero_weight_change_nothing() {
    let (k, eps) = (DomainSize::new(100).unwrap(), Epsilon::new(4.0).unwrap());
    for w in [0.2, 0.5, 0.8] {
        let two = Weights::new(w, 1.0 - w).unwrap();
        for weights in [
            Weights::with_epg(w, 1.0 - w, 0.0).unwrap(),
            Weights::all(w, 1.0 - w, 0.0, 0.0).unwrap(),
        ] {
            for strategy in Strategy::PAPER {
                for p in Protocol::ADAPTIVE {
                    let base = TuneOptions {
                        strategy,
                        weights: two,
                        ..TuneOptions::default()
                    };
                    let more = TuneOptions { weights, ..base };
                    assert_eq!(
                        tune(p, k, eps, &base).unwrap(),
                        tune(p, k, eps, &more).unwrap(),
                        "{p} {strategy:?} w = {w}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_bits_weight_moves_the_choice_to_smaller_reports() {
    let (k, eps) = (DomainSize::new(1000).unwrap(), Epsilon::new(2.0).unwrap());
    let two = tune(Protocol::Ass, k, eps, &TuneOptions::default()).unwrap();
    let options = TuneOptions {
        weights: Weights::all(0.4, 0.4, 0.0, 0.2).unwrap(),
        ..TuneOptions::default()
    };
    let with_bits = tune(Protocol::Ass, k, eps, &options).unwrap();
    assert!(
        with_bits.objectives.bits < two.objectives.bits,
        "{with_bits:?} vs {two:?}"
    );
}

/// Every instance with an exact ASR after `t` linked reports (the classic presets, every
/// grid point of the adaptive protocols), that ASR computed here from the analytic crate:
/// the first of smallest MSE among those meeting the bounds.
fn brute_force_after(
    k: DomainSize,
    eps: Epsilon,
    bounds: &Bounds,
    t: u32,
) -> Option<(Protocol, Spec, ldp_optimize::Objectives)> {
    let poisoning = Poisoning::default();
    let mut best: Option<(Protocol, Spec, ldp_optimize::Objectives)> = None;
    for p in Protocol::ALL {
        let specs: Vec<Spec> = if p.is_adaptive() {
            candidates(p, k, eps, &TuneOptions::default())
                .unwrap()
                .into_iter()
                .map(|c| Spec::new(k, eps, c.params).unwrap())
                .collect()
        } else {
            vec![Spec::classic(p, k, eps).unwrap()]
        };
        for spec in specs {
            let Some(asr) = ldp_analytic::longitudinal::asr_after(&spec, t) else {
                continue;
            };
            let o = ldp_optimize::Objectives {
                asr,
                ..objectives(&spec, LhAsr::Paper, &poisoning).unwrap()
            };
            if bounds.admit(&o) && best.is_none_or(|(_, _, b)| o.mse < b.mse) {
                best = Some((p, spec, o));
            }
        }
    }
    best
}

#[test]
fn the_choice_after_t_reports_is_the_brute_force_answer() {
    let (k, eps) = (DomainSize::new(100).unwrap(), Epsilon::new(1.0).unwrap());
    for (t, asr_max, bits_max) in [
        (2, 0.05, None),
        (30, 0.1, None),
        (365, 0.1, None),
        (365, 0.3, Some(64.0)),
        (365, 0.02, None),
    ] {
        let mut bounds = Bounds::asr(asr_max).unwrap();
        if let Some(b) = bits_max {
            bounds = bounds.with_bits(b).unwrap();
        }
        let got = choose_protocol_after(k, eps, &bounds, LhAsr::Paper, &Poisoning::default(), t);
        match brute_force_after(k, eps, &bounds, t) {
            None => assert!(
                matches!(got, Err(ChooseError::Infeasible { .. })),
                "t = {t}"
            ),
            Some((protocol, spec, o)) => {
                let got = got.unwrap();
                assert_eq!((got.protocol, got.spec), (protocol, spec), "t = {t}");
                assert_eq!(got.objectives, o, "t = {t}");
                assert!(got.objectives.asr <= asr_max);
            }
        }
    }
}

#[test]
fn one_collection_is_the_one_shot_choice_and_zero_is_refused() {
    let poisoning = Poisoning::default();
    for (kv, e, asr_max) in [(100, 1.0, 0.05), (1000, 4.0, 0.1), (20, 0.5, 0.2)] {
        let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
        let bounds = Bounds::asr(asr_max).unwrap();
        let once = choose_protocol(k, eps, &bounds, LhAsr::Paper, &poisoning).unwrap();
        let after = choose_protocol_after(k, eps, &bounds, LhAsr::Paper, &poisoning, 1).unwrap();
        assert_eq!(once, after);
    }
    let (k, eps) = (DomainSize::new(100).unwrap(), Epsilon::new(1.0).unwrap());
    let bounds = Bounds::asr(0.1).unwrap();
    assert_eq!(
        choose_protocol_after(k, eps, &bounds, LhAsr::Paper, &poisoning, 0),
        Err(ChooseError::Optimize(OptimizeError::NoCollections))
    );
}

#[test]
fn a_sketch_shape_other_than_the_preset_can_win() {
    // k = 10^5 at eps = 4 in 12 bits: HR, GRR and FLH need 16 or more; HCMS at its
    // preset (256 x 1024) needs 19, at 16 x 64 only 11.
    let (k, eps) = (
        DomainSize::new(100_000).unwrap(),
        Epsilon::new(4.0).unwrap(),
    );
    let bounds = Bounds::asr(1.0).unwrap().with_bits(12.0).unwrap();
    let pick = choose_protocol(k, eps, &bounds, LhAsr::Paper, &Poisoning::default()).unwrap();
    assert_eq!(pick.protocol, Protocol::Hcms);
    assert_eq!(
        pick.spec.params(),
        ldp_core::FamilyParams::HadamardCountMeanSketch {
            hashes: 16,
            width: 64
        }
    );
    assert_eq!(pick.objectives.bits, 11.0);
}

#[test]
fn alternatives_are_valid_and_include_hrs_preset() {
    let (k, eps) = (DomainSize::new(1000).unwrap(), Epsilon::new(4.0).unwrap());
    for &family in ldp_core::Family::ALL {
        for params in family.alternatives(k, eps) {
            assert!(Spec::new(k, eps, params).is_ok(), "{params:?}");
        }
    }
    let hr = ldp_core::Family::HadamardResponse.alternatives(k, eps);
    assert_eq!(hr.len(), 11, "blocks 1, 2, ..., 1024 at k = 1000");
    assert!(hr.contains(&Spec::classic(Protocol::Hr, k, eps).unwrap().params()));
}

/// The change detector's precision bound on fresh daily reports: an ASR bound for the
/// protocols whose law ignores the domain's labels, the others left out. The choice meets
/// the precision bound by the closed form, and a bound that binds moves the choice.
#[test]
fn a_precision_bound_on_the_change_detector_is_met() {
    use ldp_analytic::change;
    use ldp_optimize::{Knob, TuneRequest};
    let (k, eps) = (DomainSize::new(100).unwrap(), Epsilon::new(6.0).unwrap());
    let request = |p: f64| TuneRequest {
        precision_max: Some(p),
        change_rate: Some(0.1),
        ..TuneRequest::default()
    };
    let free = TuneRequest {
        asr_max: Some(1.0),
        ..TuneRequest::default()
    }
    .choose(k, eps)
    .unwrap();
    let free_precision = change::one_shot(&free.spec)
        .unwrap()
        .precision(0.1)
        .unwrap();
    for p in [0.15, 0.2, 0.5] {
        let pick = request(p).choose(k, eps).unwrap();
        assert!(pick.protocol.family().relabelling_invariant(), "{pick:?}");
        let got = change::one_shot(&pick.spec)
            .unwrap()
            .precision(0.1)
            .unwrap();
        assert!(got <= p + 1e-9, "{p}: {got} ({pick:?})");
        if p < free_precision {
            assert_ne!(pick.spec, free.spec, "{p}");
        }
        // Tuning one adaptive protocol meets it too.
        let t = request(p).tune(Protocol::Aue, k, eps).unwrap();
        let at = change::one_shot(&t.spec).unwrap().precision(0.1).unwrap();
        assert!(at <= p + 1e-9, "aue {p}: {at}");
    }
    // Refusals name the setting.
    let knob = |r: TuneRequest| r.choose(k, eps).unwrap_err().knob();
    assert_eq!(knob(request(0.05)), Some(Knob::PrecisionMax)); // below the change rate
    assert_eq!(knob(request(1.5)), Some(Knob::PrecisionMax));
    let no_rate = TuneRequest {
        change_rate: None,
        ..request(0.3)
    };
    assert_eq!(knob(no_rate), Some(Knob::PrecisionMax));
    let bad_rate = TuneRequest {
        change_rate: Some(1.5),
        ..request(0.3)
    };
    assert_eq!(knob(bad_rate), Some(Knob::ChangeRate));
    let linked = TuneRequest {
        collections: Some(30),
        ..request(0.3)
    };
    assert_eq!(knob(linked), Some(Knob::PrecisionMax));
    let paper = TuneRequest {
        lh_asr: Some(LhAsr::Paper),
        ..request(0.3)
    };
    assert_eq!(knob(paper), Some(Knob::PrecisionMax));
    assert_eq!(
        request(0.3).options().unwrap_err().knob(),
        Some(Knob::PrecisionMax)
    );
    let rate_alone = TuneRequest {
        precision_max: None,
        asr_max: Some(0.5),
        ..request(0.3)
    };
    assert_eq!(knob(rate_alone), Some(Knob::ChangeRate));
}

/// FLH's fixed seeds bias its estimates: choosing with the bias ranks it below OLH, its
/// ideal-hash twin, and quotes its MSE with the bias; without it, the two tie.
#[test]
fn the_bias_of_fixed_seeds_ranks_flh_below_olh() {
    use ldp_analytic::variance::{BiasSetting, approx_per_user};
    use ldp_optimize::{TuneRequest, choose_protocol_among};
    let (k, eps) = (DomainSize::new(1000).unwrap(), Epsilon::new(1.0).unwrap());
    let bounds = Bounds::asr(1.0).unwrap();
    let lh = |p: Protocol| matches!(p, Protocol::Flh | Protocol::Olh);
    let choose_under = |bounds: &Bounds, bias| {
        let settings = TuneOptions {
            bias,
            ..TuneOptions::default()
        };
        choose_protocol_among(k, eps, bounds, &settings, &lh).unwrap()
    };
    let choose = |bias| choose_under(&bounds, bias);
    let (flh, olh) = (
        Spec::classic(Protocol::Flh, k, eps).unwrap(),
        Spec::classic(Protocol::Olh, k, eps).unwrap(),
    );
    assert_eq!(approx_per_user(&flh), approx_per_user(&olh));
    let at = BiasSetting {
        users: 2e5,
        ..BiasSetting::DEFAULT
    };
    assert_eq!(choose(Some(at)).protocol, Protocol::Olh);
    // A size bound that OLH's 32-bit seeds miss leaves FLH, with its bias in its MSE.
    let small = bounds.with_bits(16.0).unwrap();
    let pick = choose_under(&small, Some(at));
    assert_eq!(pick.protocol, Protocol::Flh);
    let want = approx_per_user(&pick.spec) + at.per_user(&pick.spec);
    assert!((pick.objectives.mse - want).abs() < 1e-12 * want);
    assert!(pick.objectives.mse > 1.8 * approx_per_user(&olh));
    // A bias setting where nothing compared has one is refused by name: tuning an adaptive
    // protocol, or choosing under a precision bound (which leaves FLH and the sketches out).
    let change = TuneRequest {
        precision_max: Some(0.3),
        change_rate: Some(0.1),
        bias_users: Some(1e3),
        ..TuneRequest::default()
    };
    let refused = change.choose(k, eps).unwrap_err();
    assert_eq!(
        refused.knob(),
        Some(ldp_optimize::Knob::BiasUsers),
        "{refused}"
    );
    let without = TuneRequest {
        bias_users: None,
        ..change
    };
    assert!(without.choose(k, eps).is_ok());
    let aue = TuneRequest {
        bias_users: Some(1e3),
        ..TuneRequest::default()
    };
    let refused = aue.tune(Protocol::Aue, k, eps).unwrap_err();
    assert_eq!(refused.knob(), Some(ldp_optimize::Knob::BiasUsers));
}
