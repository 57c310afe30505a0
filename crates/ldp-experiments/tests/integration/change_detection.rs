//! The change detector of Example 2 (ldp-attack), measured on real reports of users
//! whose values change, against the closed forms of `ldp_analytic::change`, within 3
//! standard errors (seeded: the comparisons do not flake).

use ldp_analytic::change;
use ldp_attack::change::{ChangeConfig, ChangeMeasurement, measure_changes};
use ldp_attack::longitudinal::Collection;
use ldp_attack::{Estimate, MeasureError, Population};
use ldp_core::longitudinal::{Longitudinal, LongitudinalProtocol};
use ldp_core::{Epsilon, FamilyParams, Protocol, Spec};

fn eps(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

fn config(change_rate: f64) -> ChangeConfig {
    ChangeConfig {
        runs: 1,
        seed: 11,
        users: Some(3_000),
        days: 20,
        change_rate,
    }
}

fn check(what: &str, measured: &Estimate, want: f64) {
    let z = (measured.mean - want) / measured.se.max(1e-9);
    assert!(
        z.abs() < 3.0,
        "{what}: measured {} +- {} vs closed form {want} (z = {z:.2})",
        measured.mean,
        measured.se
    );
}

fn compare(what: &str, m: &ChangeMeasurement, rates: change::ChangeRates, rate: f64) {
    check(&format!("{what} detect"), &m.detect, rates.detect);
    check(&format!("{what} change rate"), &m.change_rate, rate);
    if rates.false_alarm == 0.0 {
        assert_eq!(m.false_alarm.mean, 0.0, "{what}");
        assert_eq!(m.precision.unwrap().mean, 1.0, "{what}");
    } else {
        check(
            &format!("{what} false alarm"),
            &m.false_alarm,
            rates.false_alarm,
        );
    }
}

#[test]
fn reports_of_one_value_match_the_closed_forms() {
    let pop = Population::adult_age();
    for rate in [0.05, 0.3] {
        for e in [1.0, 4.0] {
            let grr = Spec::classic(Protocol::Grr, pop.k(), eps(e)).unwrap();
            let fresh = measure_changes(&Collection::OneShot(grr), &pop, &config(rate)).unwrap();
            compare(
                &format!("GRR eps={e} r={rate}"),
                &fresh,
                change::one_shot(&grr).unwrap(),
                rate,
            );
            let kept = measure_changes(&Collection::Permanent(grr), &pop, &config(rate)).unwrap();
            compare(
                &format!("permanent GRR eps={e} r={rate}"),
                &kept,
                change::permanent(&grr).unwrap(),
                rate,
            );
            let l_grr =
                Longitudinal::new(LongitudinalProtocol::LGrr, pop.k(), eps(e), eps(e / 2.0))
                    .unwrap();
            let memo =
                measure_changes(&Collection::Memoized(l_grr.clone()), &pop, &config(rate)).unwrap();
            compare(
                &format!("L-GRR eps_perm={e} r={rate}"),
                &memo,
                change::memoized(&l_grr).unwrap(),
                rate,
            );
        }
    }
}

/// Fresh reports of every family whose law ignores the domain's labels: the detector's
/// rates are functions of one report's exact ASR (`change::fresh`), measured within 3 SE;
/// the families without that symmetry have no closed form.
#[test]
fn fresh_reports_of_symmetric_families_match_the_asr_form() {
    let pop = Population::adult_age();
    for (p, e) in [
        (Protocol::Ss, 2.0),
        (Protocol::Sue, 4.0),
        (Protocol::Oue, 2.0),
        (Protocol::Blh, 4.0),
        (Protocol::Olh, 2.0),
        (Protocol::She, 4.0),
        (Protocol::The, 2.0),
        (Protocol::DBitFlip, 6.0),
    ] {
        let spec = Spec::classic(p, pop.k(), eps(e)).unwrap();
        let rates = change::one_shot(&spec).unwrap();
        let m = measure_changes(&Collection::OneShot(spec), &pop, &config(0.3)).unwrap();
        compare(&format!("fresh {p:?} eps={e}"), &m, rates, 0.3);
        check(
            &format!("fresh {p:?} precision"),
            m.precision.as_ref().unwrap(),
            rates.precision(0.3).unwrap(),
        );
    }
    for p in [Protocol::Hr, Protocol::Cms, Protocol::Hcms, Protocol::Flh] {
        let spec = Spec::classic(p, pop.k(), eps(2.0)).unwrap();
        assert_eq!(change::one_shot(&spec), None, "{p:?}");
    }
}

/// Precision as measured is the closed form's at the simulated change rate.
#[test]
fn precision_follows_from_the_two_rates() {
    let pop = Population::adult_age();
    let grr = Spec::classic(Protocol::Grr, pop.k(), eps(6.0)).unwrap();
    let rates = change::one_shot(&grr).unwrap();
    let m = measure_changes(&Collection::OneShot(grr), &pop, &config(0.1)).unwrap();
    let want = rates.precision(0.1).unwrap();
    let p = m.precision.unwrap();
    check("GRR eps=6 precision", &p, want);
    assert!(want > 0.1 && want < 0.9, "{want}"); // neither trivial end
}

/// Any family under a permanent memo: a replayed report keeps the attacker's guess, so
/// it never raises a false alarm, and a memo refreshed every day (L-OSUE) raises many.
#[test]
fn a_permanent_memo_flags_only_changes_for_every_family() {
    let pop = Population::adult_age();
    for p in [Protocol::Oue, Protocol::Olh, Protocol::She] {
        let spec = Spec::classic(p, pop.k(), eps(2.0)).unwrap();
        let m = measure_changes(&Collection::Permanent(spec), &pop, &config(0.2)).unwrap();
        assert_eq!(m.false_alarm.mean, 0.0, "{p:?}");
        assert!(m.detect.mean > 0.5, "{p:?}: {:?}", m.detect);
    }
    let l_osue =
        Longitudinal::new(LongitudinalProtocol::LOsue, pop.k(), eps(4.0), eps(2.0)).unwrap();
    let m = measure_changes(&Collection::Memoized(l_osue), &pop, &config(0.2)).unwrap();
    assert!(m.false_alarm.mean > 0.5, "{:?}", m.false_alarm);
    assert!(m.precision.unwrap().mean < 0.5);
}

/// dBitFlipPM keeps its buckets and a memo per class: with one bit a change shows only
/// when the value moves into or out of the user's bucket, and at most two memos are ever
/// drawn, against one per value for the memo kept per value.
#[test]
fn bit_flip_pm_sees_few_changes_and_spends_at_most_d_plus_one_memos() {
    let pop = Population::adult_age();
    for (e, bits) in [(1.0, 1), (4.0, 1), (1.0, 3), (4.0, 3), (2.0, 10)] {
        let params = FamilyParams::DBitFlip { bits };
        let spec = Spec::new(pop.k(), eps(e), params).unwrap();
        let m = measure_changes(&Collection::Permanent(spec), &pop, &config(0.2)).unwrap();
        let what = format!("dBitFlipPM d={bits} eps={e}");
        compare(&what, &m, change::permanent(&spec).unwrap(), 0.2);
        let memos = f64::from(bits) + 1.0;
        assert!(
            m.budget_per_user <= memos * e + 1e-9,
            "{what}: {}",
            m.budget_per_user
        );
        assert!(m.values_per_user > 3.0, "{what}: {}", m.values_per_user);
    }
}

/// LOLOHA's memo per hashed value under one seed: the closed form (exact under an ideal
/// hash, with the empty-support guesses) against the detector on real reports, several
/// runs (one run's binomial SE is too small for memos shared across days).
#[test]
fn loloha_matches_its_closed_form() {
    let pop = Population::adult_age();
    for (protocol, perm, one) in [
        (LongitudinalProtocol::LOlh, 2.0, 1.0),
        (LongitudinalProtocol::LOlh, 12.0, 6.0),
        (LongitudinalProtocol::LBlh, 4.0, 2.0),
    ] {
        let l = Longitudinal::new(protocol, pop.k(), eps(perm), eps(one)).unwrap();
        let rates = change::memoized(&l).unwrap();
        let config = ChangeConfig {
            runs: 8,
            users: Some(1_500),
            ..config(0.2)
        };
        let m = measure_changes(&Collection::Memoized(l), &pop, &config).unwrap();
        compare(&format!("{protocol:?} at {perm}/{one}"), &m, rates, 0.2);
    }
}

#[test]
fn the_same_numbers_on_any_thread_count() {
    let pop = Population::adult_age();
    let l = Longitudinal::new(LongitudinalProtocol::LSue, pop.k(), eps(3.0), eps(1.0)).unwrap();
    let config = ChangeConfig {
        runs: 3,
        users: Some(500),
        ..config(0.2)
    };
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| measure_changes(&Collection::Memoized(l.clone()), &pop, &config).unwrap())
    };
    assert_eq!(on(1), on(3));
}

#[test]
fn bad_settings_are_named() {
    let pop = Population::adult_age();
    let grr = Collection::OneShot(Spec::classic(Protocol::Grr, pop.k(), eps(1.0)).unwrap());
    let with = |f: fn(&mut ChangeConfig)| {
        let mut c = config(0.1);
        f(&mut c);
        measure_changes(&grr, &pop, &c).unwrap_err()
    };
    assert!(matches!(
        with(|c| c.change_rate = 1.5),
        MeasureError::ChangeRate { .. }
    ));
    assert!(matches!(
        with(|c| c.change_rate = f64::NAN),
        MeasureError::ChangeRate { .. }
    ));
    assert!(matches!(
        with(|c| c.days = 1),
        MeasureError::Days { days: 1 }
    ));
    assert!(matches!(with(|c| c.runs = 0), MeasureError::NoRuns));
    assert!(matches!(with(|c| c.users = Some(0)), MeasureError::NoUsers));
    let one = Population::from_items(pop.k(), vec![3; 10]).unwrap();
    let err = measure_changes(&grr, &one, &config(0.1)).unwrap_err();
    assert!(matches!(err, MeasureError::OneValue { item: 3 }), "{err}");
    // No change at all is a valid setting on such a population.
    let still = measure_changes(&grr, &one, &config(0.0)).unwrap();
    assert_eq!(still.change_rate.mean, 0.0);
    assert!(
        still.detect.mean.is_nan(),
        "no change, no recall: {:?}",
        still.detect
    );
    assert_eq!(still.values_per_user, 1.0);
}

/// LOLOHA's device memoizes per hashed value under one seed per user: however often the
/// value changes, a user spends at most g eps_perm, where L-GRR spends eps_perm per value.
#[test]
fn loloha_bounds_the_budget_by_its_hash_range() {
    let pop = Population::adult_age();
    let c = ChangeConfig {
        days: 40,
        ..config(0.3)
    };
    let l_blh = Longitudinal::new(LongitudinalProtocol::LBlh, pop.k(), eps(2.0), eps(1.0)).unwrap();
    let l_grr = Longitudinal::new(LongitudinalProtocol::LGrr, pop.k(), eps(2.0), eps(1.0)).unwrap();
    let blh = measure_changes(&Collection::Memoized(l_blh), &pop, &c).unwrap();
    let grr = measure_changes(&Collection::Memoized(l_grr), &pop, &c).unwrap();
    assert!(blh.budget_per_user <= 2.0 * 2.0, "{}", blh.budget_per_user);
    assert!(blh.budget_per_user > 3.9, "{}", blh.budget_per_user); // both hashes, almost always
    assert!((grr.budget_per_user - 2.0 * grr.values_per_user).abs() < 1e-9);
    assert!(grr.values_per_user > 8.0, "{}", grr.values_per_user);
    // Two hashed values: a change is flagged only when it moves the hash.
    assert!(blh.detect.mean < 0.6, "{:?}", blh.detect);
}

/// One run's standard error is over users, whose pairs of days share memos: for
/// dBitFlipPM it matches the spread of 200 single-run measurements, where the binomial
/// error of independent pairs is about a fifth smaller.
#[test]
fn one_run_standard_error_matches_the_spread_between_runs() {
    let pop = Population::adult_age();
    let spec = Spec::new(pop.k(), eps(2.0), FamilyParams::DBitFlip { bits: 10 }).unwrap();
    let runs: Vec<ChangeMeasurement> = (0..200)
        .map(|seed| {
            let c = ChangeConfig {
                seed,
                ..config(0.2)
            };
            measure_changes(&Collection::Permanent(spec), &pop, &c).unwrap()
        })
        .collect();
    let n = runs.len() as f64;
    let mean = runs.iter().map(|m| m.detect.mean).sum::<f64>() / n;
    let spread = (runs
        .iter()
        .map(|m| (m.detect.mean - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0))
        .sqrt();
    let se = runs.iter().map(|m| m.detect.se).sum::<f64>() / n;
    let ratio = se / spread;
    assert!((0.85..1.2).contains(&ratio), "SE {se} vs spread {spread}");
    let changes = runs[0].change_rate.mean * f64::from(3_000 * 19);
    let binomial = (mean * (1.0 - mean) / changes).sqrt();
    assert!(binomial < 0.85 * se, "binomial {binomial} vs SE {se}");
}
