//! How well an estimate keeps the distribution's shape, beyond its MSE: the KL divergence
//! from the true distribution, and the rank correlation of the most frequent items.
//!
//! Both read a raw (unbiased) estimate, as [`crate::measure`] keeps it, and are measured
//! per run beside the MSE.
//!
//! ```
//! use ldp_attack::shape::{TopItems, kl_divergence};
//! let truth = [0.5, 0.3, 0.2];
//! assert!(kl_divergence(&truth, &truth, 1000) < 1e-3);
//! let top = TopItems::of(&truth).unwrap();
//! assert_eq!(top.rank_correlation(&[0.45, 0.35, 0.2]), 1.0);
//! assert_eq!(top.rank_correlation(&[0.2, 0.3, 0.5]), -1.0);
//! ```

use ldp_core::estimate::Estimator;

/// How many of the most frequent items the rank correlation compares.
pub const TOP_ITEMS: usize = 10;

/// KL(truth || estimate), in nats, of a raw estimate made a distribution.
///
/// The raw estimate is first projected as Norm-Sub does (Wang et al., NDSS 2020: negatives
/// to zero, the rest shifted to sum to one). An item Norm-Sub sets to zero would make the
/// divergence infinite, so the distribution compared is Norm-Sub's with one pseudo-user
/// spread evenly over the domain, `(n f + 1/k) / (n + 1)` for `n` users: finite, and the
/// plain divergence of Norm-Sub's estimate as `n` grows.
pub fn kl_divergence(truth: &[f64], raw: &[f64], users: usize) -> f64 {
    let k = truth.len() as f64;
    let n = users as f64;
    let projected = Estimator::NormSub
        .apply(raw.to_vec())
        .expect("Norm-Sub needs no channel");
    truth
        .iter()
        .zip(&projected)
        .filter(|(f, _)| **f > 0.0)
        .map(|(f, g)| f * (f / ((n * g + 1.0 / k) / (n + 1.0))).ln())
        .sum::<f64>()
        .max(0.0)
}

/// The [`TOP_ITEMS`] most frequent items of a distribution (ties by the lower item), and
/// their ranks, against which an estimate's order is compared.
#[derive(Debug, Clone, PartialEq)]
pub struct TopItems {
    items: Vec<usize>,
    ranks: Vec<f64>,
}

impl TopItems {
    /// The top items of `truth`, or `None` when their frequencies all tie (a uniform
    /// distribution has no order to keep).
    pub fn of(truth: &[f64]) -> Option<Self> {
        let mut items: Vec<usize> = (0..truth.len()).collect();
        items.sort_by(|&a, &b| truth[b].total_cmp(&truth[a]).then(a.cmp(&b)));
        items.truncate(TOP_ITEMS);
        let ranks = ranks(&items.iter().map(|&i| truth[i]).collect::<Vec<_>>());
        (items.len() >= 2 && spread(&ranks) > 0.0).then_some(TopItems { items, ranks })
    }

    /// The items compared, most frequent first.
    pub fn items(&self) -> &[usize] {
        &self.items
    }

    /// Spearman's rank correlation between the true and the estimated frequencies of the
    /// top items (ranks among those items, ties sharing their mean rank): 1 when the
    /// estimate orders them as the truth does, -1 when it reverses them, and 0 when the
    /// estimate gives them all one value.
    pub fn rank_correlation(&self, estimate: &[f64]) -> f64 {
        let estimated = ranks(&self.items.iter().map(|&i| estimate[i]).collect::<Vec<_>>());
        let (a, b) = (&self.ranks, &estimated);
        let (sa, sb) = (spread(a), spread(b));
        if sb == 0.0 {
            return 0.0;
        }
        let (ma, mb) = (mean(a), mean(b));
        let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        (cov / (sa * sb).sqrt()).clamp(-1.0, 1.0)
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The sum of squared deviations from the mean.
fn spread(v: &[f64]) -> f64 {
    let m = mean(v);
    v.iter().map(|x| (x - m).powi(2)).sum()
}

/// Ranks from 1 (the largest value) to `len`, ties sharing their mean rank.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end hold ranks start+1..=end: their mean.
        let shared = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = shared;
        }
        start = end;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_share_ties() {
        assert_eq!(ranks(&[0.1, 0.3, 0.3, 0.2]), vec![4.0, 1.5, 1.5, 3.0]);
    }

    #[test]
    fn spearman_matches_the_squared_difference_formula_without_ties() {
        // rho = 1 - 6 sum d^2 / (m (m^2 - 1)) when no ranks tie.
        let truth = [0.30, 0.25, 0.20, 0.15, 0.10];
        let estimate = [0.22, 0.31, 0.18, 0.05, 0.12];
        let top = TopItems::of(&truth).unwrap();
        let d2: f64 = [(1.0, 2.0), (2.0, 1.0), (3.0, 3.0), (4.0, 5.0), (5.0, 4.0)]
            .iter()
            .map(|(a, b): &(f64, f64)| (a - b).powi(2))
            .sum();
        let expected = 1.0 - 6.0 * d2 / (5.0 * 24.0);
        assert!((top.rank_correlation(&estimate) - expected).abs() < 1e-12);
    }

    #[test]
    fn top_items_are_the_ten_most_frequent() {
        let truth: Vec<f64> = (0..30).map(|i| f64::from((i * 7) % 30)).collect();
        let top = TopItems::of(&truth).unwrap();
        assert_eq!(top.items().len(), TOP_ITEMS);
        let least_kept = top
            .items()
            .iter()
            .map(|&i| truth[i])
            .fold(f64::MAX, f64::min);
        let dropped = (0..30).filter(|i| !top.items().contains(i));
        assert!(dropped.map(|i| truth[i]).all(|f| f <= least_kept));
        assert!(TopItems::of(&[0.25; 4]).is_none());
        assert_eq!(
            TopItems::of(&[0.5, 0.5, 0.0])
                .unwrap()
                .rank_correlation(&[0.2, 0.2, 0.2]),
            0.0
        );
    }

    #[test]
    fn kl_is_the_divergence_of_a_valid_estimate() {
        // A valid estimate passes Norm-Sub unchanged: the divergence is the plain one, up
        // to the pseudo-user's weight 1/(n+1).
        let truth = [0.5f64, 0.3, 0.2];
        let estimate = [0.4, 0.4, 0.2];
        let plain: f64 = truth
            .iter()
            .zip(&estimate)
            .map(|(f, g)| f * (f / g).ln())
            .sum();
        let measured = kl_divergence(&truth, &estimate, 1_000_000);
        assert!((measured - plain).abs() < 1e-5, "{measured} vs {plain}");
        // A zeroed item costs ln((n+1) k) per unit of its mass, not infinity.
        let zeroed = kl_divergence(&[0.5, 0.5], &[1.2, -0.2], 99);
        let expected =
            0.5 * (0.5f64 / ((99.0 + 0.5) / 100.0)).ln() + 0.5 * (0.5f64 / (0.5 / 100.0)).ln();
        assert!((zeroed - expected).abs() < 1e-12, "{zeroed} vs {expected}");
    }
}
