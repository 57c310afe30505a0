//! The paper's presets against independent computations.

use ldp_core::families::threshold::{optimal_threshold, probabilities};
use ldp_core::{Epsilon, Protocol};

/// Sign of dV/dtheta for THE's variance `V = q(1-q)/(p-q)^2`, from the quotient rule in
/// p and q themselves (not the substitution `u = e^(eps theta / 2)` behind the closed
/// form): with `p' = -(eps/2)(1 - p)` and `q' = -(eps/2) q`, the sign is that of
/// `(1 - 2q) q' (p - q) - 2 q (1 - q)(p' - q')`, since p > q.
fn variance_slope_sign(eps: Epsilon, theta: f64) -> f64 {
    let (p, q) = probabilities(eps, theta);
    let half = eps.get() / 2.0;
    let (dp, dq) = (-half * (1.0 - p), -half * q);
    ((1.0 - 2.0 * q) * dq * (p - q) - 2.0 * q * (1.0 - q) * (dp - dq)).signum()
}

/// THE's threshold (issue 12, item 4): the closed form equals the root of the variance's
/// derivative, found by bisection on its sign, to 1e-12.
#[test]
fn the_closed_form_threshold_is_the_stationary_point() {
    for e in [0.05, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0] {
        let eps = Epsilon::new(e).unwrap();
        let (mut lo, mut hi) = (0.5f64, 1.0f64);
        assert_eq!(variance_slope_sign(eps, lo), -1.0, "eps = {e}");
        assert_eq!(variance_slope_sign(eps, hi), 1.0, "eps = {e}");
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if variance_slope_sign(eps, mid) < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let closed = optimal_threshold(eps);
        assert!(
            (closed - lo).abs() < 1e-12,
            "eps = {e}: closed form {closed} vs root {lo}"
        );
    }
}

/// ... and agrees with a golden-section minimization of the variance itself, which can
/// only locate the flat minimum to about 1e-7.
#[test]
fn the_closed_form_threshold_minimizes_the_variance() {
    for e in [0.3, 1.0, 4.0, 12.0] {
        let eps = Epsilon::new(e).unwrap();
        let variance = |theta: f64| {
            let (p, q) = probabilities(eps, theta);
            q * (1.0 - q) / (p - q).powi(2)
        };
        let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
        let (mut a, mut b) = (0.5f64, 1.0f64);
        while b - a > 1e-12 {
            let (c, d) = (b - inv_phi * (b - a), a + inv_phi * (b - a));
            if variance(c) <= variance(d) {
                b = d;
            } else {
                a = c;
            }
        }
        let closed = optimal_threshold(eps);
        assert!((closed - a).abs() < 1e-6, "eps = {e}: {closed} vs {a}");
        assert!(variance(closed) <= variance(a) * (1.0 + 1e-14), "eps = {e}");
    }
    // The paper's appendix: theta = 0.816 at eps = 4.
    assert!((optimal_threshold(Epsilon::new(4.0).unwrap()) - 0.816).abs() < 5e-4);
}

#[test]
fn every_adaptive_protocol_refines_a_classic_one() {
    for p in Protocol::ADAPTIVE {
        let classic = p.classic_counterpart();
        assert!(!classic.is_adaptive());
        assert_eq!(classic.family(), p.family());
        assert_eq!(classic.parameter_name(), p.parameter_name());
    }
    assert_eq!(Protocol::Grr.parameter_name(), None);
    assert!(Protocol::Olh.fixes_parameter() && !Protocol::Ss.fixes_parameter());
}
