//! Unbiasedness of the raw estimator, thread-count independence of simulations, and the
//! post-processing estimators.

use ldp_core::simulation::{Role, perturb_all, simulate};
use ldp_core::{
    Aggregator, DomainSize, Epsilon, Estimator, Grr, LocalHashing, Mechanism, SubsetSelection,
    SummationHistogram, ThresholdHistogram, UnaryEncoding,
};

const K: u32 = 8;
/// A skewed distribution over 8 items, times 2000 users.
const WEIGHTS: [u32; 8] = [600, 400, 300, 250, 200, 150, 100, 0];

fn items() -> Vec<u32> {
    WEIGHTS
        .iter()
        .enumerate()
        .flat_map(|(i, &w)| std::iter::repeat_n(i as u32, w as usize))
        .collect()
}

/// Mean raw estimate over `runs` seeded runs must lie within 6 standard errors of the truth.
fn check_unbiased<M: Mechanism>(mech: &M, runs: u64) {
    let items = items();
    let n = items.len() as f64;
    let truth: Vec<f64> = WEIGHTS.iter().map(|&w| f64::from(w) / n).collect();
    let estimates: Vec<Vec<f64>> = (0..runs)
        .map(|run| {
            simulate(mech, &items, 99, run, Role::Genuine)
                .unwrap()
                .raw_estimate()
                .unwrap()
        })
        .collect();
    let r = runs as f64;
    for i in 0..K as usize {
        let mean = estimates.iter().map(|e| e[i]).sum::<f64>() / r;
        let var = estimates.iter().map(|e| (e[i] - mean).powi(2)).sum::<f64>() / (r - 1.0);
        let se = (var / r).sqrt();
        assert!(
            (mean - truth[i]).abs() <= 6.0 * se,
            "{mech:?}: item {i} mean {mean} vs truth {} (se {se})",
            truth[i]
        );
        assert!(se > 0.0);
    }
}

fn k() -> DomainSize {
    DomainSize::new(K).unwrap()
}
fn eps(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

#[test]
fn every_family_is_unbiased() {
    for e in [0.5, 2.0] {
        check_unbiased(&Grr::new(k(), eps(e)).unwrap(), 300);
        check_unbiased(&SubsetSelection::optimized(k(), eps(e)).unwrap(), 300);
        check_unbiased(&SubsetSelection::new(k(), eps(e), 3).unwrap(), 300);
        check_unbiased(&UnaryEncoding::symmetric(k(), eps(e)).unwrap(), 300);
        check_unbiased(&UnaryEncoding::optimized(k(), eps(e)).unwrap(), 300);
        check_unbiased(&LocalHashing::binary(k(), eps(e)).unwrap(), 300);
        check_unbiased(&LocalHashing::optimized(k(), eps(e)).unwrap(), 300);
        check_unbiased(&SummationHistogram::new(k(), eps(e)).unwrap(), 300);
        check_unbiased(&ThresholdHistogram::optimized(k(), eps(e)).unwrap(), 300);
    }
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

fn check_thread_independent<M: Mechanism>(mech: &M)
where
    M::Aggregator: PartialEq,
{
    // Enough users for several waves of batches.
    let items: Vec<u32> = (0..300_000u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % K)
        .collect();
    let one = in_pool(1, || simulate(mech, &items, 5, 3, Role::Genuine).unwrap());
    let two = in_pool(2, || simulate(mech, &items, 5, 3, Role::Genuine).unwrap());
    assert_eq!(one, two, "{mech:?}");
    let reports = in_pool(2, || {
        perturb_all(mech, &items, 5, 3, Role::Genuine).unwrap()
    });
    let mut sequential = mech.aggregator();
    for r in &reports {
        sequential.add(r).unwrap();
    }
    assert_eq!(sequential.count(), one.count());
    // Same streams: aggregating perturb_all's reports gives the same estimate.
    let (a, b) = (
        sequential.raw_estimate().unwrap(),
        one.raw_estimate().unwrap(),
    );
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-9, "{mech:?}");
    }
}

#[test]
fn simulations_are_identical_for_any_thread_count() {
    check_thread_independent(&Grr::new(k(), eps(1.0)).unwrap());
    check_thread_independent(&UnaryEncoding::optimized(k(), eps(1.0)).unwrap());
    check_thread_independent(&LocalHashing::optimized(k(), eps(1.0)).unwrap());
    check_thread_independent(&SummationHistogram::new(k(), eps(1.0)).unwrap());
}

#[test]
fn post_processed_estimates_are_distributions() {
    let items = items();
    let mech = UnaryEncoding::optimized(k(), eps(0.5)).unwrap();
    let positive = |raw: &[f64]| raw.iter().filter(|&&v| v > 0.0).sum::<f64>();
    // The first seed whose raw estimate's positive part sums to less than one (whether
    // it does depends on the run): the case where Norm-Sub and projection differ.
    let (agg, raw) = (0..20)
        .map(|seed| {
            let agg = simulate(&mech, &items, seed, 0, Role::Genuine).unwrap();
            let raw = agg.raw_estimate().unwrap();
            (agg, raw)
        })
        .find(|(_, raw)| positive(raw) < 1.0)
        .expect("a run whose positive part is below one");
    assert!(
        raw.iter().any(|&v| v < 0.0),
        "want a raw estimate with negatives: {raw:?}"
    );
    for est in [
        Estimator::ClipRenormalize,
        Estimator::NormSub,
        Estimator::Simplex,
    ] {
        let f = agg.estimate(est).unwrap();
        assert!((f.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{est:?}");
        assert!(f.iter().all(|&v| v >= 0.0), "{est:?}");
    }
    // The positive part sums to less than one: Norm-Sub keeps negatives at zero, the
    // projection lifts every entry by the same amount first.
    let norm_sub = agg.estimate(Estimator::NormSub).unwrap();
    for (r, f) in raw.iter().zip(&norm_sub) {
        if *r <= 0.0 {
            assert_eq!(*f, 0.0);
        }
    }
}

#[test]
fn norm_sub_equals_simplex_projection_when_positives_exceed_one() {
    // Computed independently (iteration vs sort-and-threshold), they must agree.
    let raw = vec![0.55, 0.4, -0.1, 0.25, -0.05, 0.02, -0.07];
    assert!(raw.iter().filter(|&&v| v > 0.0).sum::<f64>() > 1.0);
    let a = Estimator::NormSub.apply(raw.clone()).unwrap();
    let b = Estimator::Simplex.apply(raw).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-12, "{a:?} vs {b:?}");
    }
}

#[test]
fn estimators_handle_degenerate_inputs() {
    for est in [
        Estimator::ClipRenormalize,
        Estimator::NormSub,
        Estimator::Simplex,
    ] {
        let f = est.apply(vec![-1.0, -2.0, -0.5]).unwrap();
        assert!(
            (f.iter().sum::<f64>() - 1.0).abs() < 1e-12,
            "{est:?}: {f:?}"
        );
        assert!(f.iter().all(|&v| v >= 0.0));
    }
    // Already a distribution: unchanged by every estimator.
    let d = vec![0.2, 0.3, 0.5];
    for est in [
        Estimator::ClipRenormalize,
        Estimator::NormSub,
        Estimator::Simplex,
    ] {
        let f = est.apply(d.clone()).unwrap();
        for (x, y) in f.iter().zip(&d) {
            assert!((x - y).abs() < 1e-12, "{est:?}");
        }
    }
}

mod finite {
    use ldp_core::families::summation::{MIN_EPS, REPORT_BOUND};
    use ldp_core::{
        Aggregator, ClipBound, DomainSize, Epsilon, Estimator, GrrReport, Mechanism, OnesReport,
        SheReport, SummationHistogram, ThresholdHistogram, UnaryEncoding,
    };
    use proptest::prelude::*;

    /// What each estimator promises of its output besides finiteness: `(non-negative,
    /// sums to one)`.
    fn promises(est: Estimator) -> (bool, bool) {
        match est {
            Estimator::Unbiased => (false, false),
            Estimator::Norm => (false, true),
            Estimator::BasePos | Estimator::BaseCut => (true, false),
            _ => (true, true),
        }
    }

    fn assert_finite(agg: &impl Aggregator) {
        for est in Estimator::ALL {
            let f = match agg.estimate(est) {
                Ok(f) => f,
                // SHE keeps sums: the channel-based estimators say so.
                Err(ldp_core::AggregateError::NeedsChannel { .. })
                    if est.needs_channel() && agg.support_counts().is_none() =>
                {
                    continue;
                }
                Err(e) => panic!("{est:?}: {e}"),
            };
            assert!(f.iter().all(|v| v.is_finite()), "{est:?}: {f:?}");
            let (non_negative, sums_to_one) = promises(est);
            if non_negative {
                assert!(f.iter().all(|&v| v >= 0.0), "{est:?}: {f:?}");
            }
            if sums_to_one {
                let total: f64 = f.iter().sum();
                // Norm shifts every raw entry by one amount: entries as large as 1e16
                // (a tiny budget) round the shift, so its sum is one to their precision.
                let slack = if est == Estimator::Norm {
                    let raw = agg.raw_estimate().unwrap();
                    raw.iter().fold(0.0f64, |m, v| m.max(v.abs())) * raw.len() as f64 * 1e-15
                } else {
                    0.0
                };
                assert!(
                    (total - 1.0).abs() < 1e-9 + slack,
                    "{est:?} sums to {total}: {f:?} from raw {:?}",
                    agg.raw_estimate()
                );
            }
        }
    }

    fn coordinate() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(REPORT_BOUND),
            Just(-REPORT_BOUND),
            -REPORT_BOUND..=REPORT_BOUND,
            -10.0f64..10.0,
        ]
    }

    /// Found by the property below: at a budget where p - q is at rounding level, GRR's
    /// raw estimate strays from summing to one with no negative entry ([0.8; 5]), and
    /// MLE-Apx returned it as it was.
    #[test]
    fn grr_estimates_sum_to_one_at_rounding_level_budgets() {
        let mut strayed = 0;
        // Below about 1.1e-16 (e^eps = 1) no mechanism is built: ParamError::NoSignal.
        for e in [2e-16, 3e-16, 5e-16, 1e-15, 1e-14] {
            for ys in [
                vec![0u32, 1, 2, 3, 4],
                vec![2, 0],
                vec![1, 3, 4, 2, 0],
                vec![4; 3],
            ] {
                let grr = ldp_core::Grr::new(DomainSize::new(5).unwrap(), Epsilon::new(e).unwrap())
                    .unwrap();
                let mut a = grr.aggregator();
                for &y in &ys {
                    a.add(&GrrReport { y }).unwrap();
                }
                if let Ok(raw) = a.raw_estimate() {
                    strayed += usize::from((raw.iter().sum::<f64>() - 1.0).abs() > 1e-9);
                    assert_finite(&a);
                }
            }
        }
        assert!(strayed > 0, "no input strays: the test checks nothing");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Issue 11: no stream of valid SHE reports, however forged, makes an estimate
        /// non-finite, with or without clipping.
        #[test]
        fn she_estimates_stay_finite(
            reports in prop::collection::vec(prop::collection::vec(coordinate(), 4), 1..6),
            e in prop_oneof![Just(MIN_EPS), MIN_EPS..1e-100, 0.01f64..50.0],
            copies in 1u32..4,
        ) {
            let she = SummationHistogram::new(DomainSize::new(4).unwrap(), Epsilon::new(e).unwrap()).unwrap();
            let mut plain = she.unclipped_aggregator();
            let mut clipped = she.clipped_aggregator(ClipBound::recommended(she.epsilon()));
            for y in &reports {
                let r = SheReport { y: y.clone() };
                for _ in 0..copies {
                    plain.add(&r).unwrap();
                    clipped.add(&r).unwrap();
                }
            }
            assert_finite(&plain);
            assert_finite(&clipped);
        }

        /// ... nor any stream of valid support-based reports at any budget.
        #[test]
        fn pure_estimates_stay_finite(
            ys in prop::collection::vec(0u32..5, 1..20),
            e in prop_oneof![Just(2.3e-16), Just(5e-16), 1e-15f64..1e-6, 0.01f64..1e3],
        ) {
            let (k, eps) = (DomainSize::new(5).unwrap(), Epsilon::new(e).unwrap());
            let grr = ldp_core::Grr::new(k, eps).unwrap();
            let ue = UnaryEncoding::new(k, eps, 0.7).unwrap();
            let the = ThresholdHistogram::optimized(k, eps).unwrap();
            let (mut a, mut b, mut c) = (grr.aggregator(), ue.aggregator(), the.aggregator());
            for &y in &ys {
                a.add(&GrrReport { y }).unwrap();
                let ones = OnesReport { ones: (0..y).collect() };
                b.add(&ones).unwrap();
                c.add(&ones).unwrap();
            }
            match a.raw_estimate() {
                Ok(_) => assert_finite(&a),
                Err(err) => assert!(matches!(err, ldp_core::AggregateError::Uninformative { .. }), "{err}"),
            }
            if b.raw_estimate().is_ok() { assert_finite(&b); }
            if c.raw_estimate().is_ok() { assert_finite(&c); }
        }

        /// Post-processing maps any finite vector to a finite distribution.
        #[test]
        fn post_processing_of_any_finite_vector_is_finite(
            raw in prop::collection::vec(prop_oneof![
                Just(f64::MAX), Just(-f64::MAX), Just(f64::MIN_POSITIVE),
                -f64::MAX..=f64::MAX, -2.0f64..2.0,
            ], 2..12),
        ) {
            for est in Estimator::ALL.into_iter().filter(|e| !e.needs_channel()) {
                let f = est.apply(raw.clone()).unwrap();
                prop_assert!(f.iter().all(|v| v.is_finite()), "{:?}: {:?} -> {:?}", est, raw, f);
                let (non_negative, sums_to_one) = promises(est);
                if non_negative {
                    prop_assert!(f.iter().all(|&v| v >= 0.0));
                }
                if sums_to_one {
                    let total: f64 = f.iter().sum();
                    // Norm adds one shift to entries as large as f64::MAX: the shift is
                    // lost in rounding there, so only ordinary inputs must sum to one.
                    let ordinary = raw.iter().all(|v| v.abs() < 1e6);
                    if est != Estimator::Norm || ordinary {
                        prop_assert!((total - 1.0).abs() < 1e-9, "{:?}: {:?} sums to {}", est, raw, total);
                    }
                }
            }
        }
    }
}
