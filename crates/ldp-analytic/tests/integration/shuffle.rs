//! The shuffle accountant against the reference code's numbers (a port of its algorithm,
//! on statrs' binomial cdf), against the exact central delta of shuffled binary
//! randomized response, and its limits and errors.

use ldp_analytic::shuffle::{Shuffle, ShuffleError};
use statrs::distribution::{Binomial, Discrete, DiscreteCDF};

/// apple/ml-shuffling-amplification's `onestep`: the divergence given c, in one direction.
fn onestep(c: u64, eps: f64, eps0: f64, p_minus_q: bool) -> f64 {
    let alpha = eps0.exp() / (eps0.exp() + 1.0);
    let effeps = (((eps.exp() + 1.0) * alpha - 1.0) / ((1.0 + eps.exp()) * alpha - eps.exp())).ln();
    let beta = if p_minus_q {
        1.0 / (effeps.exp() + 1.0)
    } else {
        1.0 / ((-effeps).exp() + 1.0)
    };
    let cutoff = beta * (c + 1) as f64;
    let half = Binomial::new(0.5, c).unwrap();
    // scipy's binom.cdf at a real point, and below 0.
    let cdf = |x: f64| {
        if x < 0.0 {
            0.0
        } else {
            half.cdf(x.floor() as u64)
        }
    };
    let p = alpha * cdf(cutoff) + (1.0 - alpha) * cdf(cutoff - 1.0);
    let q = (1.0 - alpha) * cdf(cutoff) + alpha * cdf(cutoff - 1.0);
    if p_minus_q {
        p - eps.exp() * q
    } else {
        (1.0 - q) - eps.exp() * (1.0 - p)
    }
}

/// Its `deltacomp`, intervals of width `step` bounded by their ends (with its q-side
/// upper bound as written, the upper end's value twice).
fn deltacomp(n: u64, eps0: f64, eps: f64, delta_upper: f64, step: u64, upper: bool) -> f64 {
    let (mut dp, mut dq, mut used) = (0.0f64, 0.0f64, 0.0f64);
    let p = (-eps0).exp();
    let expectation = (n - 1) as f64 * p;
    let clones = Binomial::new(p, n - 1).unwrap();
    let n_steps = (n as f64 / step as f64).ceil() as i64;
    for b in 1..n_steps {
        for s in 0..2 {
            let (lower_c, upper_c, in_scope);
            if s == 0 {
                let up = (expectation + (b * step as i64) as f64).ceil() as i64;
                let lo = if b == 1 {
                    up - step as i64
                } else {
                    up - step as i64 + 1
                };
                in_scope = lo < n as i64;
                lower_c = lo;
                upper_c = up.min(n as i64 - 1);
            } else {
                let lo = (expectation - (b * step as i64) as f64).ceil() as i64;
                let up = lo + step as i64 - 1;
                in_scope = up >= 0;
                lower_c = lo.max(0);
                upper_c = up;
            }
            if !in_scope {
                continue;
            }
            let (lo, up) = (lower_c as u64, upper_c as u64);
            let mass = clones.cdf(up) - clones.cdf(lo) + clones.pmf(lo);
            if dp.max(dq) > delta_upper {
                return delta_upper;
            }
            if 1.0 - used < dp && 1.0 - used < dq {
                return if upper {
                    (dp + 1.0 - used).max(dq + 1.0 - used)
                } else {
                    dp.max(dq)
                };
            }
            let (p_up, p_lo) = (onestep(up, eps, eps0, true), onestep(lo, eps, eps0, true));
            let (q_up, q_lo) = (onestep(up, eps, eps0, false), onestep(lo, eps, eps0, false));
            let (add_p, add_q) = if upper {
                (p_up.max(p_lo), q_up.max(q_up))
            } else {
                (p_up.min(p_lo), q_up.min(q_lo))
            };
            dp += mass * add_p;
            dq += mass * add_q;
            used += mass;
        }
    }
    dp.max(dq)
}

/// Its binary search: `iterations` halvings of [0, upper_start].
fn binary_search(delta_of: impl Fn(f64) -> f64, delta: f64, iterations: u32, start: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, start);
    for _ in 0..iterations {
        let mid = (lo + hi) / 2.0;
        if delta_of(mid) < delta {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

#[test]
fn the_reference_codes_example_is_reproduced_and_tightened() {
    let (n, eps0, delta) = (100_000u64, 4.0, 1e-6);
    let shuffle = Shuffle::new(n, delta).unwrap();
    let closed = shuffle.closed_form(eps0).unwrap().unwrap();
    assert!((closed - 0.5378040242374512).abs() < 1e-12, "{closed}");

    // The port of the reference algorithm gives the reference's printed bracket.
    let port = |upper: bool| {
        binary_search(
            |eps| deltacomp(n, eps0, eps, delta, 100, upper),
            delta,
            10,
            closed,
        )
    };
    let (port_upper, port_lower) = (port(true), port(false));
    assert!(
        (port_upper - 0.172790550755978).abs() < 1e-6,
        "{port_upper}"
    );
    assert!(
        (port_lower - 0.1675385583317841).abs() < 1e-6,
        "{port_lower}"
    );

    // Ours lies inside it, a bisection's tolerance wide.
    let ours = shuffle.central_eps(eps0).unwrap();
    assert!(
        ours.lower >= port_lower && ours.upper <= port_upper,
        "{ours:?}"
    );
    assert!(ours.upper - ours.lower < 1e-9, "{ours:?}");
}

#[test]
fn the_divergence_is_the_reference_formula_summed_over_every_count() {
    // The reference's `onestep` at every count, weighted by Bin(n - 1, e^-eps0) on
    // statrs: the exact sum that its intervals bound from both sides.
    for &(n, eps0) in &[(300u64, 1.0f64), (2_000, 3.0), (5_000, 0.5)] {
        let shuffle = Shuffle::new(n, 1e-6).unwrap();
        let clones = Binomial::new((-eps0).exp(), n - 1).unwrap();
        for &eps in &[0.05, 0.2, 0.4] {
            if eps >= eps0 {
                continue;
            }
            let sum = |p_minus_q: bool| -> f64 {
                (0..n)
                    .map(|c| clones.pmf(c) * onestep(c, eps, eps0, p_minus_q).max(0.0))
                    .sum()
            };
            let reference = sum(true).max(sum(false));
            let ours = shuffle.central_delta(eps0, eps).unwrap();
            // The reference's p - e^eps q cancels about 0.5 down to delta: 1e-14 absolute.
            assert!(
                (ours.lower - reference).abs() <= 1e-10 * reference + 1e-14,
                "n {n} eps0 {eps0} eps {eps}: {ours:?} against {reference}"
            );
            assert!(ours.upper >= ours.lower && ours.upper - ours.lower < 1e-30);
        }
    }
}

/// The exact central delta at eps of shuffled binary randomized response at eps0 (the
/// count of ones is all the shuffled batch says), for the neighbouring datasets in which
/// the first user holds 0 or 1 and the others hold `others_ones` ones out of n - 1: the
/// larger of the two directions.
fn shuffled_binary_rr_delta(n: u64, others_ones: u64, eps0: f64, eps: f64) -> f64 {
    let keep = eps0.exp() / (eps0.exp() + 1.0);
    let ones = Binomial::new(keep, others_ones).unwrap();
    let zeros = Binomial::new(1.0 - keep, n - 1 - others_ones).unwrap();
    // The others' count of ones: the convolution of the two binomials.
    let others: Vec<f64> = (0..n)
        .map(|s| {
            (0..=s.min(others_ones))
                .filter(|&a| s - a <= n - 1 - others_ones)
                .map(|a| ones.pmf(a) * zeros.pmf(s - a))
                .sum()
        })
        .collect();
    let law = |own_one: f64| -> Vec<f64> {
        (0..=n)
            .map(|s| {
                let with_zero = if s < n { others[s as usize] } else { 0.0 };
                let with_one = if s > 0 { others[s as usize - 1] } else { 0.0 };
                (1.0 - own_one) * with_zero + own_one * with_one
            })
            .collect()
    };
    let (p, q) = (law(1.0 - keep), law(keep));
    let hockey = |a: &[f64], b: &[f64]| -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - eps.exp() * y).max(0.0))
            .sum()
    };
    hockey(&p, &q).max(hockey(&q, &p))
}

#[test]
fn the_bound_holds_for_shuffled_binary_randomized_response() {
    // The accountant's delta is an upper bound for every eps0-LDP randomizer: here the
    // exact delta of the simplest one, for several datasets of the other users.
    for &(n, eps0) in &[(50u64, 1.0), (200, 2.0), (400, 3.0)] {
        let shuffle = Shuffle::new(n, 1e-6).unwrap();
        for others in [0, (n - 1) / 2, n - 1] {
            for i in 1..20 {
                let eps = eps0 * f64::from(i) / 20.0;
                let exact = shuffled_binary_rr_delta(n, others, eps0, eps);
                let bound = shuffle.central_delta(eps0, eps).unwrap().upper;
                assert!(
                    exact <= bound + 1e-12,
                    "n {n} eps0 {eps0} others {others} eps {eps}: exact {exact} above the bound {bound}"
                );
            }
        }
    }
}

#[test]
fn more_users_and_smaller_local_budgets_give_smaller_central_budgets() {
    let delta = 1e-8;
    let mut last = f64::INFINITY;
    for n in [1_000u64, 10_000, 100_000, 1_000_000, 10_000_000] {
        let shuffle = Shuffle::new(n, delta).unwrap();
        let central = shuffle.central_eps(2.0).unwrap();
        assert!(
            central.upper < last && central.upper <= 2.0,
            "n {n}: {central:?}"
        );
        last = central.upper;
        if let Some(closed) = shuffle.closed_form(2.0).unwrap() {
            assert!(central.upper <= closed, "n {n}: {central:?} above {closed}");
        }
        let mut below = 0.0;
        for eps0 in [0.1, 0.5, 1.0, 2.0, 4.0, 8.0] {
            let e = shuffle.central_eps(eps0).unwrap().upper;
            assert!(e > below && e <= eps0, "n {n} eps0 {eps0}: {e}");
            below = e;
        }
    }
}

#[test]
fn the_largest_local_budget_meets_the_target_exactly() {
    for &(n, central) in &[
        (10_000u64, 0.3),
        (1_000_000, 0.1),
        (1_000_000, 1.0),
        (100, 2.0),
    ] {
        let shuffle = Shuffle::new(n, 1e-6).unwrap();
        let eps0 = shuffle.max_local_eps(central).unwrap();
        assert!(eps0 >= central, "n {n}");
        let at = shuffle.central_eps(eps0).unwrap().upper;
        // The bisection for `at` stops within 1e-12 relative above the threshold.
        assert!(
            at <= central * (1.0 + 1e-11) && central - at < 1e-6,
            "n {n}: {at} at eps0 {eps0}"
        );
        let above = shuffle.central_eps(eps0 * (1.0 + 1e-6)).unwrap().upper;
        assert!(above > central, "n {n}: {above} at {}", eps0 * (1.0 + 1e-6));
    }
}

#[test]
fn ten_billion_reports_and_extreme_settings_give_meaningful_answers() {
    use ldp_analytic::shuffle::MAX_USERS;
    // More reports amplify further, and the numerical bound stays below the closed form.
    let mut last = f64::INFINITY;
    for n in [100_000_000u64, 1_000_000_000, MAX_USERS] {
        let shuffle = Shuffle::new(n, 1e-10).unwrap();
        let central = shuffle.central_eps(0.5).unwrap();
        let closed = shuffle.closed_form(0.5).unwrap().unwrap();
        assert!(
            central.upper < last && central.upper < closed,
            "n {n}: {central:?}"
        );
        last = central.upper;
    }
    // Two reports: the second is a clone with probability e^-eps0, and eps0 = 800 leaves
    // none, so the first report's eps0 shows whole.
    let two = Shuffle::new(2, 1e-6).unwrap();
    let central = two.central_eps(800.0).unwrap();
    assert!(central.upper > 799.0, "{central:?}");
    // A delta that covers the total variation distance certifies eps = 0 at once.
    let loose = Shuffle::new(2, 0.9).unwrap();
    assert_eq!(loose.central_eps(1.0).unwrap().upper, 0.0);
    assert!(loose.central_delta(1.0, 0.0).unwrap().upper <= 0.9);
    // A delta near 1 still has a largest eps0, the first beyond which the target fails.
    let near_one = Shuffle::new(1_000, 0.999).unwrap();
    let eps0 = near_one.max_local_eps(0.1).unwrap();
    assert!(eps0.is_finite() && eps0 > 0.1, "{eps0}");
    assert!(near_one.central_delta(eps0, 0.1).unwrap().upper <= 0.999);
    assert!(
        near_one
            .central_delta(eps0 * (1.0 + 1e-9), 0.1)
            .unwrap()
            .upper
            > 0.999
    );
    // A tiny delta widens the window summed rather than giving up: at delta = 1e-100,
    // 10^6 reports still amplify eps0 = 2.
    let strict = Shuffle::new(1_000_000, 1e-100).unwrap();
    assert!(strict.central_eps(2.0).unwrap().upper < 1.0);
}

#[test]
fn bad_settings_are_named() {
    assert_eq!(Shuffle::new(1, 1e-6), Err(ShuffleError::TooFewUsers(1)));
    assert_eq!(
        Shuffle::new(u64::MAX, 1e-6),
        Err(ShuffleError::TooManyUsers(u64::MAX))
    );
    for delta in [0.0, 1.0, -1e-9, f64::NAN] {
        assert!(matches!(
            Shuffle::new(100, delta),
            Err(ShuffleError::Delta(_))
        ));
    }
    let shuffle = Shuffle::new(100, 1e-6).unwrap();
    for eps0 in [0.0, -1.0, f64::INFINITY, f64::NAN] {
        assert!(matches!(
            shuffle.central_eps(eps0),
            Err(ShuffleError::LocalEps(_))
        ));
        assert!(matches!(
            shuffle.closed_form(eps0),
            Err(ShuffleError::LocalEps(_))
        ));
    }
    for central in [0.0, -0.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            shuffle.max_local_eps(central),
            Err(ShuffleError::CentralEps(_))
        ));
    }
    assert_eq!(
        ShuffleError::TooFewUsers(1).to_string(),
        "a shuffle needs at least 2 reports, got 1"
    );
    // The closed form does not apply to 100 reports at delta = 1e-6.
    assert_eq!(shuffle.closed_form(1.0), Ok(None));
}

/// The exact central delta at eps of shuffled k-ary randomized response at eps0 (the
/// histogram is all the shuffled batch says), for the neighbouring datasets in which the
/// first user holds item 0 or item 1 and the others hold `others[j]` users with item j:
/// the larger of the two directions. By dynamic programming over the histograms.
fn shuffled_k_rr_delta(others: &[u64], eps0: f64, eps: f64) -> f64 {
    use std::collections::HashMap;
    let k = others.len();
    let q = 1.0 / (eps0.exp() + k as f64 - 1.0);
    let report = |item: usize| -> Vec<f64> {
        (0..k)
            .map(|y| if y == item { eps0.exp() * q } else { q })
            .collect()
    };
    let add = |law: &HashMap<Vec<u32>, f64>, probs: &[f64]| -> HashMap<Vec<u32>, f64> {
        let mut next = HashMap::new();
        for (hist, p) in law {
            for (y, &py) in probs.iter().enumerate() {
                let mut h = hist.clone();
                h[y] += 1;
                *next.entry(h).or_insert(0.0) += p * py;
            }
        }
        next
    };
    let mut rest = HashMap::from([(vec![0u32; k], 1.0)]);
    for (item, &count) in others.iter().enumerate() {
        for _ in 0..count {
            rest = add(&rest, &report(item));
        }
    }
    let (p, q) = (add(&rest, &report(0)), add(&rest, &report(1)));
    let hockey = |a: &HashMap<Vec<u32>, f64>, b: &HashMap<Vec<u32>, f64>| -> f64 {
        a.iter()
            .map(|(h, x)| (x - eps.exp() * b.get(h).copied().unwrap_or(0.0)).max(0.0))
            .sum()
    };
    hockey(&p, &q).max(hockey(&q, &p))
}

#[test]
fn the_k_ary_exact_delta_agrees_with_the_binary_one() {
    // The two exact computations, independent of each other, at k = 2.
    for &(n, others) in &[(12u64, 0u64), (12, 5), (12, 11)] {
        for eps in [0.1, 0.5, 1.0] {
            let binary = shuffled_binary_rr_delta(n, others, 1.5, eps);
            let k_ary = shuffled_k_rr_delta(&[n - 1 - others, others], 1.5, eps);
            assert!((binary - k_ary).abs() < 1e-12, "{binary} against {k_ary}");
        }
    }
}

#[test]
fn the_randomized_response_bound_holds_for_shuffled_k_ary_randomized_response() {
    // k-RR's own bound against its exact delta, for datasets whose other users hold the
    // two items in question, neither, or a mix.
    let cases: [(&[u64], f64); 6] = [
        (&[0, 0, 14], 2.0),
        (&[7, 7, 0], 2.0),
        (&[14, 0, 0], 3.0),
        (&[4, 4, 6], 3.0),
        (&[0, 0, 5, 5], 2.5),
        (&[3, 3, 2, 2], 1.0),
    ];
    for (others, eps0) in cases {
        let n = others.iter().sum::<u64>() + 1;
        let k = others.len() as u64;
        let shuffle = Shuffle::new(n, 1e-6)
            .unwrap()
            .randomized_response(k)
            .unwrap();
        for i in 0..20 {
            let eps = eps0 * f64::from(i) / 20.0;
            let exact = shuffled_k_rr_delta(others, eps0, eps);
            let bound = shuffle.central_delta(eps0, eps).unwrap().upper;
            assert!(
                exact <= bound + 1e-12,
                "{others:?} eps0 {eps0} eps {eps}: exact {exact} above the bound {bound}"
            );
        }
    }
    // The binary datasets at more users, as for the generic bound.
    for &(n, eps0) in &[(50u64, 1.0), (200, 2.0), (400, 3.0)] {
        let shuffle = Shuffle::new(n, 1e-6)
            .unwrap()
            .randomized_response(2)
            .unwrap();
        for others in [0, (n - 1) / 2, n - 1] {
            for i in 1..20 {
                let eps = eps0 * f64::from(i) / 20.0;
                let exact = shuffled_binary_rr_delta(n, others, eps0, eps);
                let bound = shuffle.central_delta(eps0, eps).unwrap().upper;
                assert!(exact <= bound + 1e-12, "n {n} eps {eps}: {exact} > {bound}");
            }
        }
    }
}

#[test]
fn the_randomized_response_bound_is_never_looser_and_tighter_where_clones_abound() {
    let n = 100_000;
    for eps0 in [0.5, 1.0, 2.0, 4.0, 6.0] {
        let any = Shuffle::new(n, 1e-6).unwrap();
        let generic = any.central_eps(eps0).unwrap().upper;
        for k in [2u64, 3, 10, 100, 10_000] {
            let rr = any.randomized_response(k).unwrap();
            assert_eq!(rr.randomized_response_domain(), Some(k));
            let specific = rr.central_eps(eps0).unwrap();
            assert!(
                specific.upper <= generic * (1.0 + 1e-11),
                "k {k} eps0 {eps0}: {specific:?} above {generic}"
            );
            // More clones than the generic e^-eps0 where e^eps0 > k - 1: a strictly
            // smaller central eps.
            if eps0.exp() > 2.0 * (k - 1) as f64 {
                assert!(
                    specific.upper < 0.95 * generic,
                    "k {k} eps0 {eps0}: {specific:?} against {generic}"
                );
            }
            // The inverse meets its target with the k-RR bound, and allows a larger eps0.
            let target = 0.2;
            let e0 = rr.max_local_eps(target).unwrap();
            assert!(rr.central_delta(e0, target).unwrap().upper <= 1e-6);
            assert!(e0 >= any.max_local_eps(target).unwrap() * (1.0 - 1e-11));
        }
    }
    assert_eq!(
        Shuffle::new(100, 1e-6).unwrap().randomized_response(1),
        Err(ShuffleError::Domain(1))
    );
}
