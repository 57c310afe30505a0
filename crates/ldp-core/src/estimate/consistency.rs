//! The consistency methods: post-processing of the raw unbiased estimate alone (Wang et
//! al., "Locally Differentially Private Frequency Estimation with Consistency", NDSS 2020),
//! and the Euclidean projection onto the simplex. Each takes estimates summing to about
//! `target` (1, or 1/scale for inputs scaled against overflow) and returns non-negative
//! entries, except Norm (which may leave negatives) and Base-Pos and Base-Cut (which do
//! not renormalize). Power and PowerNS (a fitted power-law prior) are not built: the
//! authors' fit is a binned moment match, and their released PowerNS is Norm-Sub.

use super::likelihood::Channel;

/// 1 for every ordinary input; otherwise the power of two that brings the largest
/// magnitude to about 2^600, below which sums of up to 2^400 entries stay finite.
pub(super) fn scale_for(values: &[f64]) -> f64 {
    const LIMIT: f64 = 4.149515568880993e180; // 2^600
    let max = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if max <= LIMIT {
        1.0
    } else {
        2f64.powi(max.log2().floor() as i32 - 600)
    }
}

pub(super) fn uniform(len: usize) -> Vec<f64> {
    vec![1.0 / len as f64; len]
}

pub(super) fn clip_renormalize(mut f: Vec<f64>) -> Vec<f64> {
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
pub(super) fn norm_sub(mut f: Vec<f64>, target: f64) -> Vec<f64> {
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
pub(super) fn project_simplex(v: Vec<f64>, target: f64) -> Vec<f64> {
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

/// Base-Pos: negatives to zero.
pub(super) fn base_pos(f: Vec<f64>) -> Vec<f64> {
    f.into_iter().map(|v| v.max(0.0)).collect()
}

/// Norm: `(target - sum) / k` added to every entry.
pub(super) fn norm(f: Vec<f64>, target: f64) -> Vec<f64> {
    let k = f.len() as f64;
    // In deviation form, as in norm_sub: the mean's distance to target / k.
    let mean = f.iter().sum::<f64>() / k;
    let share = target / k;
    f.into_iter().map(|v| (v - mean) + share).collect()
}

/// Norm-Cut: negatives to zero; the largest entries kept until their running total first
/// exceeds `target` (the one that crosses included), the others zeroed, the kept scaled
/// to sum to `target`. Without a crossing every non-negative entry is kept (Norm-Mul).
/// The authors' code leaves the negatives in place, scaled, when no crossing happens;
/// here they are zeroed in every case, so the output is always a distribution.
pub(super) fn norm_cut(f: Vec<f64>, target: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..f.len()).filter(|&i| f[i] > 0.0).collect();
    order.sort_unstable_by(|&a, &b| f[b].total_cmp(&f[a]).then(a.cmp(&b)));
    let mut kept = 0.0;
    let mut keep = order.len();
    for (j, &i) in order.iter().enumerate() {
        kept += f[i];
        if kept > target {
            keep = j + 1;
            break;
        }
    }
    if kept <= 0.0 {
        return uniform(f.len()).into_iter().map(|v| v * target).collect();
    }
    let mut out = vec![0.0; f.len()];
    for &i in &order[..keep] {
        out[i] = f[i] / kept * target;
    }
    out
}

/// Base-Cut: entries below `z(1 - alpha / k) sigma_0` set to zero, with `sigma_0` the
/// standard deviation of the unbiased estimate of an item nobody holds,
/// `sqrt(q (1 - q) / n) / (p - q)`.
pub(super) fn base_cut(f: Vec<f64>, n: u64, channel: Channel, alpha: f64) -> Vec<f64> {
    let Channel { p, q, .. } = channel;
    let sigma = (q * (1.0 - q) / n as f64).sqrt() / (p - q);
    let threshold = normal_upper_quantile(alpha / f.len() as f64) * sigma;
    f.into_iter()
        .map(|v| if v < threshold { 0.0 } else { v })
        .collect()
}

/// MLE-Apx, as the NDSS 2020 authors' code computes it. With `o = q + (p - q) f` the
/// support shares and K the positive estimates (m of them), each round sets, on K,
/// `f_v = (o_v - q - q(1-q) x) / ((p - q) + (p(1-p) - q(1-q)) x)` with
/// `x = (sum_K o - p - (m - 1) q) / (p(1-p) + (m - 1) q(1-q))`, and zero elsewhere,
/// until no estimate is negative. For one item per report (GRR) the rounds are the
/// multiplicative `f_v = (o_v (m q + p - q) / sum_K o - q) / (p - q)`, and an estimate
/// without negatives is kept as it is (renormalized where rounding made it stray from
/// summing to one, at budgets where p - q is at rounding level). The result sums to one;
/// where a round has no
/// positive estimate left the result is uniform.
pub(super) fn mle_apx(f: Vec<f64>, channel: Channel) -> Vec<f64> {
    let Channel {
        p,
        q,
        one_item_per_report,
    } = channel;
    let gap = p - q;
    let observed: Vec<f64> = f.iter().map(|&v| q + gap * v).collect();
    if one_item_per_report && f.iter().all(|&v| v >= 0.0) {
        // Sums to one, but where p - q is at rounding level (tiny budgets).
        return settle(f, 1.0);
    }
    let mut estimates = f;
    // Each round zeroes at least one more entry, so at most k + 1 rounds run.
    for round in 0..=estimates.len() {
        if round > 0 && estimates.iter().all(|&v| v >= 0.0) {
            break;
        }
        let positive: Vec<bool> = estimates.iter().map(|&v| v > 0.0).collect();
        let m = positive.iter().filter(|&&b| b).count() as f64;
        if m == 0.0 {
            return uniform(estimates.len());
        }
        let sum: f64 = observed
            .iter()
            .zip(&positive)
            .filter(|(_, b)| **b)
            .map(|(o, _)| o)
            .sum();
        let value: Box<dyn Fn(f64) -> f64> = if one_item_per_report {
            Box::new(move |o: f64| (o * (m * q + gap) / sum - q) / gap)
        } else {
            let (vp, vq) = (p * (1.0 - p), q * (1.0 - q));
            let x = (sum - p - (m - 1.0) * q) / (vp + (m - 1.0) * vq);
            Box::new(move |o: f64| (o - q - vq * x) / (gap + (vp - vq) * x))
        };
        for ((e, &o), &b) in estimates.iter_mut().zip(&observed).zip(&positive) {
            *e = if b { value(o) } else { 0.0 };
        }
        if estimates.iter().any(|v| !v.is_finite()) {
            return uniform(estimates.len());
        }
    }
    // The rounds sum to one exactly in exact arithmetic; where p - q is at rounding level
    // (tiny budgets) they stray, and are renormalized.
    settle(estimates, 1.0)
}

/// `z` with `P[Z > z] = tail` for a standard normal Z (`0 < tail < 1`), by bisection on
/// the complementary error function: 100 halvings of [-40, 40] reach the last bit.
pub(super) fn normal_upper_quantile(tail: f64) -> f64 {
    let upper = |z: f64| 0.5 * libm::erfc(z / std::f64::consts::SQRT_2);
    let (mut lo, mut hi) = (-40.0f64, 40.0f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if upper(mid) > tail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_normal_quantile_matches_tables() {
        // z(0.975) = 1.959963984540054, z(0.95) = 1.6448536269514722, z(1 - 0.05/100).
        assert!((normal_upper_quantile(0.025) - 1.959_963_984_540_054).abs() < 1e-12);
        assert!((normal_upper_quantile(0.05) - 1.644_853_626_951_472_2).abs() < 1e-12);
        assert!((normal_upper_quantile(0.0005) - 3.290_526_731_491_926).abs() < 1e-10);
        assert!((normal_upper_quantile(0.5)).abs() < 1e-15);
    }
}
