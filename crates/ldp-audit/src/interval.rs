//! Clopper-Pearson confidence bounds on a binomial proportion.

use statrs::distribution::{Beta, Continuous, ContinuousCDF};

use crate::AuditError;

/// One-sided Clopper-Pearson bounds `(low, high)` on the success probability of
/// `trials` Bernoulli trials with `successes` successes, each holding with confidence
/// `1 - alpha / 2` (together, `1 - alpha`): `low` is the `alpha/2` quantile of
/// Beta(x, n - x + 1) (0 when x = 0), `high` the `1 - alpha/2` quantile of
/// Beta(x + 1, n - x) (1 when x = n). `alpha` is in `[1e-150, 1)`.
///
/// ```
/// let (low, high) = ldp_audit::clopper_pearson(10, 1_000_000, 0.01)?;
/// assert!((low - 3.7169e-6).abs() < 1e-9 && (high - 2.1398e-5).abs() < 1e-8);
/// # Ok::<(), ldp_audit::AuditError>(())
/// ```
pub fn clopper_pearson(successes: u64, trials: u64, alpha: f64) -> Result<(f64, f64), AuditError> {
    // An audit's alpha is at least MIN_ALPHA, split among at most 2^32 bounds; below
    // 1e-150 statrs' initial guess of the quantile underflows.
    if !(1e-150..1.0).contains(&alpha) {
        return Err(AuditError::Alpha(alpha));
    }
    if trials == 0 || successes > trials {
        return Err(AuditError::Counts { successes, trials });
    }
    let (x, n) = (successes as f64, trials as f64);
    let low = if successes == 0 {
        0.0
    } else {
        quantile(x, n - x + 1.0, alpha / 2.0)?
    };
    let high = if successes == trials {
        1.0
    } else {
        // The upper bound as one minus the failures' lower bound: the small tail is the
        // one the inverse incomplete beta resolves best.
        1.0 - quantile(n - x, x + 1.0, alpha / 2.0)?
    };
    Ok((low, high))
}

/// The `p` quantile of Beta(a, b): statrs' inverse (good to about 1e-5 relative) where it
/// is reliable, else bisection on `ln x` (statrs' inverse loops forever at p = 1e-110),
/// then Newton steps on the regularized incomplete beta, which statrs computes to near
/// machine precision.
fn quantile(a: f64, b: f64, p: f64) -> Result<f64, AuditError> {
    let beta = Beta::new(a, b).map_err(|_| AuditError::Counts {
        successes: a as u64,
        trials: (a + b) as u64,
    })?;
    let mut x = if p >= 1e-20 {
        beta.try_inverse_cdf(p)
            .map_err(|_| AuditError::Alpha(2.0 * p))?
    } else {
        // cdf(e^t) rises with t; 64 halvings of [-745, 0] leave it within 4e-17.
        let (mut lo, mut hi) = (-745.0f64, 0.0f64);
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            if beta.cdf(mid.exp()) < p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi.exp()
    };
    for _ in 0..4 {
        let density = beta.pdf(x);
        if !(density > 0.0 && density.is_finite()) {
            break;
        }
        let next = x - (beta.cdf(x) - p) / density;
        if !(next > 0.0 && next < 1.0) || next == x {
            break;
        }
        x = next;
    }
    Ok(x)
}

/// The smallest alpha an audit takes (1e-100): every bound then holds with confidence
/// `1 - 1e-100`, and the level of each, split among pairs and statistics, stays where the
/// Beta quantiles are computed exactly.
pub const MIN_ALPHA: f64 = 1e-100;

pub(crate) fn check_alpha(alpha: f64) -> Result<(), AuditError> {
    if (MIN_ALPHA..1.0).contains(&alpha) {
        Ok(())
    } else {
        Err(AuditError::Alpha(alpha))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values: scipy.stats.beta.ppf(0.005, x, n-x+1) and
    /// beta.isf(0.005, x+1, n-x) (SciPy 1.15).
    #[test]
    fn bounds_equal_scipys_beta_quantiles() {
        let cases = [
            (10, 1_000_000, 3.716931949903814e-06, 2.1397705555457184e-05),
            (695_000, 1_000_000, 0.693812643036918, 0.6961855008037362),
            (0, 1_000_000, 0.0, 5.298303330489367e-06),
            (
                12_700,
                1_000_000,
                0.012413386741669754,
                0.012991260206599083,
            ),
            (3, 1000, 0.0003381445290664933, 0.010933777420405242),
            (1000, 1000, 0.9947156939605025, 1.0),
        ];
        for (x, n, low, high) in cases {
            let (l, h) = clopper_pearson(x, n, 0.01).unwrap();
            assert!(
                (l - low).abs() <= 1e-9 * low.max(1e-300),
                "{x}/{n}: low {l} vs {low}"
            );
            assert!(
                (h - high).abs() <= 1e-9 * high,
                "{x}/{n}: high {h} vs {high}"
            );
        }
    }

    /// The smallest alpha, split as a Bonferroni level among 2^32 bounds, still gives
    /// bounds inside [0, 1] in order (issue 43: 1e-200 panicked inside statrs, and 1e-110
    /// looped forever there). Checked against the closed forms at x = 1 and x = n:
    /// Beta(1, n)'s quantile is `1 - (1 - p)^(1/n)` and Beta(n, 1)'s is `p^(1/n)`.
    #[test]
    fn the_smallest_alpha_gives_bounds() {
        let alpha = MIN_ALPHA / 2f64.powi(32);
        for (x, n) in [(1, 10), (500, 1000), (999, 1000), (3, 1_000_000)] {
            let (low, high) = clopper_pearson(x, n, alpha).unwrap();
            let share = x as f64 / n as f64;
            assert!(
                0.0 < low && low < share && share < high && high <= 1.0,
                "{x}/{n}: {low} {high}"
            );
        }
        let p: f64 = alpha / 2.0;
        let (low, _) = clopper_pearson(1, 10, alpha).unwrap();
        let exact = -(-p).ln_1p() / 10.0; // 1 - (1 - p)^(1/10), to first order
        assert!((low - exact).abs() <= 1e-9 * exact, "{low} vs {exact}");
        let (low, _) = clopper_pearson(10, 10, alpha).unwrap();
        let exact = p.powf(1.0 / 10.0);
        assert!((low - exact).abs() <= 1e-9 * exact, "{low} vs {exact}");
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(matches!(
            clopper_pearson(1, 0, 0.01),
            Err(AuditError::Counts { .. })
        ));
        assert!(matches!(
            clopper_pearson(5, 4, 0.01),
            Err(AuditError::Counts { .. })
        ));
        for alpha in [0.0, 1.0, -0.1, f64::NAN, 1e-200, 9e-151] {
            assert!(matches!(
                clopper_pearson(1, 4, alpha),
                Err(AuditError::Alpha(_))
            ));
        }
        for alpha in [1e-200, 9e-101] {
            assert_eq!(check_alpha(alpha), Err(AuditError::Alpha(alpha)));
        }
    }
}
