//! Helpers shared by the statistical test files.
#![allow(dead_code, unreachable_pub)]

use statrs::distribution::{ChiSquared, ContinuousCDF};

/// Significance level of every goodness-of-fit test in this crate. The seeds are fixed,
/// so a test either always passes or always fails; the level bounds how unlucky a seed
/// must be to fail a correct sampler.
pub const ALPHA: f64 = 1e-4;

/// Pearson's chi-square p-value of `observed` counts against category probabilities.
/// Categories whose expected count is below 5 are pooled into one cell.
pub fn chi_square_p(observed: &[u64], probs: &[f64]) -> f64 {
    assert_eq!(observed.len(), probs.len());
    let n = observed.iter().sum::<u64>() as f64;
    let total_prob: f64 = probs.iter().sum();
    assert!(
        (total_prob - 1.0).abs() < 1e-9,
        "probabilities sum to {total_prob}"
    );
    let (mut cells, mut pooled_o, mut pooled_p) = (Vec::new(), 0u64, 0.0);
    for (&o, &p) in observed.iter().zip(probs) {
        if n * p >= 5.0 {
            cells.push((o, p));
        } else {
            pooled_o += o;
            pooled_p += p;
        }
    }
    if pooled_p > 0.0 {
        cells.push((pooled_o, pooled_p));
    }
    assert!(cells.len() >= 2, "too few cells for a chi-square test");
    let stat: f64 = cells
        .iter()
        .map(|&(o, p)| (o as f64 - n * p).powi(2) / (n * p))
        .sum();
    let df = (cells.len() - 1) as f64;
    ChiSquared::new(df).unwrap().sf(stat)
}

/// p-value of `sum_i (o_i - e_i)^2 / v_i` against chi-square with `df` degrees of freedom,
/// for counts that are (approximately) independent with means `e_i` and variances `v_i`.
pub fn chi_square_p_with_variance(observed: &[u64], mean: &[f64], var: &[f64], df: usize) -> f64 {
    let stat: f64 = observed
        .iter()
        .zip(mean.iter().zip(var))
        .map(|(&o, (&e, &v))| (o as f64 - e).powi(2) / v)
        .sum();
    ChiSquared::new(df as f64).unwrap().sf(stat)
}
