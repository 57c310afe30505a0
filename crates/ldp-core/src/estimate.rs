//! Post-processing of raw frequency estimates.
//!
//! The raw estimate (paper Eq. "estimator") is unbiased but may be negative and need not
//! sum to one. Post-processing trades the bias it introduces for a valid distribution;
//! it is always an explicit choice.

crate::named_knob!(Estimator, "estimator");

/// How to turn raw unbiased estimates into the reported frequencies.
///
/// Names parse case-insensitively (`"norm-sub".parse()`), and serialize the same way
/// (`clip`; the older `clip-renormalize` is still read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum Estimator {
    /// The raw unbiased estimate, unchanged (the default).
    #[default]
    Unbiased,
    /// Clip negatives to zero and renormalize to sum one (what the paper's code does).
    /// When every estimate is non-positive the result is uniform.
    #[cfg_attr(feature = "serde", serde(rename = "clip", alias = "clip-renormalize"))]
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
    /// Every estimator, in the order front ends list them.
    pub const ALL: [Estimator; 4] = [
        Estimator::Unbiased,
        Estimator::ClipRenormalize,
        Estimator::NormSub,
        Estimator::Simplex,
    ];

    /// The name front ends use: `unbiased`, `clip`, `norm-sub`, `simplex`.
    pub fn name(self) -> &'static str {
        match self {
            Estimator::Unbiased => "unbiased",
            Estimator::ClipRenormalize => "clip",
            Estimator::NormSub => "norm-sub",
            Estimator::Simplex => "simplex",
        }
    }

    /// Applies the post-processing to `raw`. Finite inputs give finite outputs, however
    /// large: inputs beyond 2^600 in magnitude are first scaled by a power of two (exactly),
    /// so that no sum overflows.
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
        if self == Estimator::Unbiased {
            return raw;
        }
        // Norm-Sub and the projection are not scale invariant (their target sum is 1), so
        // a scaled input is projected onto the scaled target and scaled back.
        let scale = scale_for(&raw);
        let scaled: Vec<f64> = if scale == 1.0 {
            raw
        } else {
            raw.into_iter().map(|v| v / scale).collect()
        };
        let target = 1.0 / scale;
        let out = match self {
            Estimator::Unbiased => unreachable!("returned above"),
            Estimator::ClipRenormalize => return clip_renormalize(scaled),
            Estimator::NormSub => norm_sub(scaled, target),
            Estimator::Simplex => project_simplex(scaled, target),
        };
        if scale == 1.0 {
            out
        } else {
            out.into_iter().map(|v| (v * scale).min(1.0)).collect()
        }
    }
}

/// 1 for every ordinary input; otherwise the power of two that brings the largest
/// magnitude to about 2^600, below which sums of up to 2^400 entries stay finite.
fn scale_for(values: &[f64]) -> f64 {
    const LIMIT: f64 = 4.149515568880993e180; // 2^600
    let max = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if max <= LIMIT {
        1.0
    } else {
        2f64.powi(max.log2().floor() as i32 - 600)
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

/// Norm-Sub onto entries summing to `target`.
fn norm_sub(mut f: Vec<f64>, target: f64) -> Vec<f64> {
    // Each round removes at least one item from the positive set or terminates, so at
    // most len + 1 rounds run. The shift is written as a deviation from the positives'
    // mean plus their share of the target, which keeps the target's mass when the
    // entries are large (an unbiased estimate at a tiny budget can be 1e16).
    for _ in 0..=f.len() {
        f.iter_mut().for_each(|v| *v = v.max(0.0));
        let positive = f.iter().filter(|&&v| v > 0.0).count();
        if positive == 0 {
            return uniform(f.len()).into_iter().map(|v| v * target).collect();
        }
        let m = positive as f64;
        let mean = f.iter().sum::<f64>() / m;
        let share = target / m;
        f.iter_mut()
            .filter(|v| **v > 0.0)
            .for_each(|v| *v = (*v - mean) + share);
        if f.iter().all(|&v| v >= 0.0) {
            break;
        }
    }
    settle(f, target)
}

/// Euclidean projection onto the nonnegative vectors summing to `target`: every entry
/// minus a common tau, clipped at zero, with tau in deviation form as in [`norm_sub`].
fn project_simplex(v: Vec<f64>, target: f64) -> Vec<f64> {
    let mut sorted = v.clone();
    sorted.sort_unstable_by(|a, b| b.total_cmp(a));
    let mut cumulative = 0.0;
    // tau = mean of the top j + 1 entries minus their share of the target.
    let (mut mean, mut share) = (sorted[0], target);
    for (j, &u) in sorted.iter().enumerate() {
        cumulative += u;
        let (m, s) = (cumulative / (j + 1) as f64, target / (j + 1) as f64);
        if (u - m) + s > 0.0 {
            (mean, share) = (m, s);
        }
    }
    let out = v
        .into_iter()
        .map(|x| ((x - mean) + share).max(0.0))
        .collect();
    settle(out, target)
}

/// The last guard of the projections: beyond 2^53 in magnitude the inputs themselves
/// cannot resolve a unit of probability, so an output whose total strayed from `target`
/// is renormalized (uniform if nothing is left). Ordinary inputs pass unchanged.
fn settle(f: Vec<f64>, target: f64) -> Vec<f64> {
    let total: f64 = f.iter().sum();
    if (total - target).abs() <= 1e-9 * target {
        f
    } else if total > 0.0 && total.is_finite() {
        f.into_iter().map(|v| v / total * target).collect()
    } else {
        uniform(f.len()).into_iter().map(|v| v * target).collect()
    }
}
