//! Clopper-Pearson confidence bounds on a binomial proportion.

use statrs::distribution::{Beta, Continuous, ContinuousCDF};

use crate::AuditError;

/// One-sided Clopper-Pearson bounds `(low, high)` on the success probability of
/// `trials` Bernoulli trials with `successes` successes, each holding with confidence
/// `1 - alpha / 2` (together, `1 - alpha`): `low` is the `alpha/2` quantile of
/// Beta(x, n - x + 1) (0 when x = 0), `high` the `1 - alpha/2` quantile of
/// Beta(x + 1, n - x) (1 when x = n).
///
/// ```
/// let (low, high) = ldp_audit::clopper_pearson(10, 1_000_000, 0.01)?;
/// assert!((low - 3.7169e-6).abs() < 1e-9 && (high - 2.1398e-5).abs() < 1e-8);
/// # Ok::<(), ldp_audit::AuditError>(())
/// ```
pub fn clopper_pearson(successes: u64, trials: u64, alpha: f64) -> Result<(f64, f64), AuditError> {
    check_alpha(alpha)?;
    if trials == 0 || successes > trials {
        return Err(AuditError::Counts { successes, trials });
    }
    let (x, n) = (successes as f64, trials as f64);
    let low = if successes == 0 {
        0.0
    } else {
        quantile(x, n - x + 1.0, alpha / 2.0)
    };
    let high = if successes == trials {
        1.0
    } else {
        // The upper bound as one minus the failures' lower bound: the small tail is the
        // one the inverse incomplete beta resolves best.
        1.0 - quantile(n - x, x + 1.0, alpha / 2.0)
    };
    Ok((low, high))
}

/// The `p` quantile of Beta(a, b): statrs' inverse (good to about 1e-5 relative),
/// polished by Newton steps on the regularized incomplete beta, which statrs computes to
/// near machine precision.
fn quantile(a: f64, b: f64, p: f64) -> f64 {
    let beta = Beta::new(a, b).expect("shapes are positive and finite");
    let mut x = beta.inverse_cdf(p);
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
    x
}

pub(crate) fn check_alpha(alpha: f64) -> Result<(), AuditError> {
    if alpha > 0.0 && alpha < 1.0 {
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
        for alpha in [0.0, 1.0, -0.1, f64::NAN] {
            assert!(matches!(
                clopper_pearson(1, 4, alpha),
                Err(AuditError::Alpha(_))
            ));
        }
    }
}
