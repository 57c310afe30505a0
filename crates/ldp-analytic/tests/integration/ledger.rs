//! The ledger's composition against the exact composition of randomized responses (the
//! worst case for pure eps-LDP, Kairouz, Oh and Viswanath 2015), and its bookkeeping and
//! errors.

use ldp_analytic::ledger::{Ledger, LedgerError, Survey, advanced};

/// The exact delta at `eps_total` of composing binary randomized responses at `budgets`:
/// every outcome's two probabilities, summed where the first exceeds e^eps_total times
/// the second.
fn exact_delta(budgets: &[f64], eps_total: f64) -> f64 {
    let t = budgets.len();
    let mut delta = 0.0;
    for outcome in 0u32..(1 << t) {
        let (mut p, mut q) = (1.0, 1.0);
        for (i, &e) in budgets.iter().enumerate() {
            let keep = e.exp() / (1.0 + e.exp());
            if outcome >> i & 1 == 1 {
                p *= keep;
                q *= 1.0 - keep;
            } else {
                p *= 1.0 - keep;
                q *= keep;
            }
        }
        delta += (p - eps_total.exp() * q).max(0.0);
    }
    delta
}

/// The same for `t` responses at one budget `e`, by the count of responses that came out
/// true: C(t, l) (p^(t-l) q^l - e^eps_total p^l q^(t-l)), in logarithms.
fn exact_delta_homogeneous(t: u32, e: f64, eps_total: f64) -> f64 {
    let (ln_p, ln_q) = (-(-e).exp().ln_1p(), -e.exp().ln_1p());
    let mut ln_choose = 0.0;
    let mut delta = 0.0;
    for l in 0..=t {
        if l > 0 {
            ln_choose += (f64::from(t - l + 1) / f64::from(l)).ln();
        }
        let (l, rest) = (f64::from(l), f64::from(t - l));
        let first = (ln_choose + rest * ln_p + l * ln_q).exp();
        let second = (ln_choose + eps_total + l * ln_p + rest * ln_q).exp();
        delta += (first - second).max(0.0);
    }
    delta
}

#[test]
fn advanced_composition_holds_against_the_exact_worst_case() {
    // Many reports at one small budget, where advanced composition is far below the sum.
    for (t, e) in [(100u32, 0.1), (1000, 0.05), (1000, 0.1), (400, 0.3)] {
        for delta in [1e-2, 1e-6] {
            let bound = advanced(&vec![e; t as usize], delta);
            assert!(bound < 0.8 * f64::from(t) * e, "t {t} e {e}: {bound}");
            let exact = exact_delta_homogeneous(t, e, bound);
            assert!(
                exact <= delta,
                "t {t} e {e} delta {delta}: {exact} at {bound}"
            );
            // Not vacuous: a third of the way down, the exact delta is above the target.
            let sum = f64::from(t) * e;
            assert!(exact_delta_homogeneous(t, e, bound / 3.0) > delta || bound / 3.0 > sum);
        }
    }
    // Heterogeneous budgets, every outcome enumerated.
    let lists: [&[f64]; 6] = [
        &[0.05; 18],
        &[0.1; 16],
        &[0.5; 12],
        &[1.0; 10],
        &[0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.5, 0.1, 0.1, 0.2, 0.05],
        &[2.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
    ];
    // Where the bound is at least the sum, the check is met trivially: count the others.
    let mut below_the_sum = 0;
    for budgets in lists {
        for delta in [1e-2, 1e-4, 1e-6] {
            let bound = advanced(budgets, delta);
            below_the_sum += usize::from(bound < budgets.iter().sum::<f64>());
            let exact = exact_delta(budgets, bound);
            assert!(
                exact <= delta,
                "{budgets:?} at delta {delta}: exact delta {exact} at the bound {bound}"
            );
        }
    }
    assert!(below_the_sum >= 2, "{below_the_sum}");
    // Many small budgets: advanced composition beats the sum, as it should.
    let many = [0.1; 1000];
    assert!(advanced(&many, 1e-6) < 0.5 * many.iter().sum::<f64>());
}

fn surveys() -> Vec<Survey> {
    vec![
        Survey::fresh("daily", 0.5, 1, 30).unwrap(),
        Survey::memoized("memo", 0.4, 2.0, 1, 30).unwrap(),
        Survey::fresh("once", 3.0, 10, 10).unwrap(),
    ]
}

#[test]
fn spends_are_composed_per_user_and_per_day() {
    let mut ledger = Ledger::new(surveys()).unwrap();
    for day in 1..=30 {
        ledger.record("ann", "daily", day).unwrap();
        ledger.record("ann", "memo", day).unwrap();
    }
    ledger.record("ann", "once", 10).unwrap();
    ledger.record("bob", "memo", 5).unwrap();
    ledger.record("bob", "memo", 6).unwrap();
    let users = ledger.users(Some(1e-6)).unwrap();
    assert_eq!(users.len(), 2);
    let ann = &users[0];
    assert_eq!((ann.user.as_str(), ann.reports, ann.days), ("ann", 61, 30));
    // 30 fresh reports at 0.5, one memo at 2, one report at 3.
    assert!((ann.basic - 20.0).abs() < 1e-12, "{ann:?}");
    // Day 10 holds 0.5 + 3; day 1 holds 0.5 + the memo's 2.
    assert_eq!((ann.max_day, ann.max_day_at), (3.5, 10));
    let mut charges = vec![0.5; 30];
    charges.extend([2.0, 3.0]);
    assert_eq!(ann.advanced, Some(advanced(&charges, 1e-6).min(20.0)));
    let bob = &users[1];
    assert_eq!(
        (bob.reports, bob.days, bob.basic, bob.max_day_at),
        (2, 2, 2.0, 5)
    );
    // Two charges: advanced composition is above their sum, so the sum stands.
    assert_eq!(bob.advanced, Some(2.0));
    assert_eq!(bob.spent(), 2.0);
    assert_eq!(ledger.users(None).unwrap()[1].advanced, None);
}

#[test]
fn bad_surveys_and_records_are_named() {
    assert!(matches!(
        Survey::fresh("s", 0.0, 1, 2),
        Err(LedgerError::Budget { .. })
    ));
    assert!(matches!(
        Survey::memoized("s", 1.0, 0.5, 1, 2),
        Err(LedgerError::Budget { .. })
    ));
    assert_eq!(
        Survey::fresh("s", 1.0, 5, 2).unwrap_err().to_string(),
        "survey s: its days 5..=2 are empty"
    );
    let twice = vec![surveys()[0].clone(), surveys()[0].clone()];
    assert_eq!(
        Ledger::new(twice).unwrap_err(),
        LedgerError::DuplicateSurvey("daily".into())
    );
    let mut ledger = Ledger::new(surveys())
        .unwrap()
        .with_roster(["ann".to_owned(), "bob".to_owned()]);
    assert_eq!(
        ledger.record("ann", "weekly", 1).unwrap_err().to_string(),
        "survey weekly is unknown (the surveys are daily, memo, once)"
    );
    assert_eq!(
        ledger.record("eve", "daily", 1).unwrap_err(),
        LedgerError::UnknownUser("eve".into())
    );
    assert_eq!(
        ledger.record("ann", "once", 11).unwrap_err().to_string(),
        "survey once runs on days 10..=10, not on day 11"
    );
    ledger.record("ann", "daily", 3).unwrap();
    assert_eq!(
        ledger.record("ann", "daily", 3).unwrap_err().to_string(),
        "user ann already reported to survey daily on day 3"
    );
    for delta in [0.0, 1.0, f64::NAN] {
        assert!(matches!(
            ledger.users(Some(delta)),
            Err(LedgerError::Delta(_))
        ));
    }
}
