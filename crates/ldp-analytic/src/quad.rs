//! Adaptive quadrature: tanh-sinh (the `quadrature` crate) on each piece, bisecting any
//! piece whose error estimate exceeds its share of the tolerance.

use quadrature::double_exponential::integrate;

/// Integral of `f` over `[a, b]` to an absolute error of about `tol`.
pub(crate) fn adaptive<F: Fn(f64) -> f64 + Copy>(f: F, a: f64, b: f64, tol: f64) -> f64 {
    bisect(f, a, b, tol, 0)
}

fn bisect<F: Fn(f64) -> f64 + Copy>(f: F, a: f64, b: f64, tol: f64, depth: u32) -> f64 {
    let out = integrate(f, a, b, tol);
    if out.error_estimate <= tol || depth >= 24 {
        return out.integral;
    }
    let mid = 0.5 * (a + b);
    bisect(f, a, mid, tol / 2.0, depth + 1) + bisect(f, mid, b, tol / 2.0, depth + 1)
}
