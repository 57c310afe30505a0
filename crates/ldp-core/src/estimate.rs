//! Post-processing of raw frequency estimates.
//!
//! The raw estimate (paper Eq. "estimator") is unbiased but may be negative and need not
//! sum to one. Post-processing trades the bias it introduces for a valid distribution;
//! it is always an explicit choice.

use serde::{Deserialize, Serialize};

/// How to turn raw unbiased estimates into the reported frequencies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Estimator {
    /// The raw unbiased estimate, unchanged (the default).
    #[default]
    Unbiased,
    /// Clip negatives to zero and renormalize to sum one (what the paper's code does).
    /// When every estimate is non-positive the result is uniform.
    ClipRenormalize,
    /// Norm-Sub (Wang et al. 2020): repeatedly zero the negatives and shift the positives
    /// by a common amount until the estimate is non-negative and sums to one.
    NormSub,
    /// Euclidean projection onto the probability simplex (Duchi et al. 2008).
    /// It coincides with Norm-Sub when the positive raw estimates sum to at least one;
    /// otherwise the projection may lift negative entries above zero, which Norm-Sub never does.
    Simplex,
}

impl Estimator {
    /// Applies the post-processing to `raw`.
    ///
    /// ```
    /// use ldp_core::Estimator;
    /// let raw = vec![0.7, 0.5, -0.2];
    /// assert_eq!(Estimator::Unbiased.apply(raw.clone()), raw);
    /// let clipped = Estimator::ClipRenormalize.apply(raw.clone());
    /// assert!((clipped[0] - 0.7 / 1.2).abs() < 1e-12);
    /// let projected = Estimator::Simplex.apply(raw);
    /// assert!((projected[0] - 0.6).abs() < 1e-12 && (projected[1] - 0.4).abs() < 1e-12);
    /// ```
    pub fn apply(self, raw: Vec<f64>) -> Vec<f64> {
        match self {
            Estimator::Unbiased => raw,
            Estimator::ClipRenormalize => clip_renormalize(raw),
            Estimator::NormSub => norm_sub(raw),
            Estimator::Simplex => project_simplex(raw),
        }
    }
}

fn uniform(len: usize) -> Vec<f64> {
    vec![1.0 / len as f64; len]
}

fn clip_renormalize(mut f: Vec<f64>) -> Vec<f64> {
    f.iter_mut().for_each(|v| *v = v.max(0.0));
    let total: f64 = f.iter().sum();
    if total > 0.0 {
        f.iter_mut().for_each(|v| *v /= total);
        f
    } else {
        uniform(f.len())
    }
}

fn norm_sub(mut f: Vec<f64>) -> Vec<f64> {
    // Each round removes at least one item from the positive set or terminates, so at
    // most len + 1 rounds run.
    for _ in 0..=f.len() {
        f.iter_mut().for_each(|v| *v = v.max(0.0));
        let positive = f.iter().filter(|&&v| v > 0.0).count();
        if positive == 0 {
            return uniform(f.len());
        }
        let delta = (f.iter().sum::<f64>() - 1.0) / positive as f64;
        f.iter_mut().filter(|v| **v > 0.0).for_each(|v| *v -= delta);
        if f.iter().all(|&v| v >= 0.0) {
            break;
        }
    }
    f
}

fn project_simplex(v: Vec<f64>) -> Vec<f64> {
    let mut sorted = v.clone();
    sorted.sort_unstable_by(|a, b| b.total_cmp(a));
    let mut cumulative = 0.0;
    let mut tau = 0.0;
    for (j, &u) in sorted.iter().enumerate() {
        cumulative += u;
        let t = (cumulative - 1.0) / (j + 1) as f64;
        if u - t > 0.0 {
            tau = t;
        }
    }
    v.into_iter().map(|x| (x - tau).max(0.0)).collect()
}
