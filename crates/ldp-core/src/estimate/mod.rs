//! Frequency estimates from an aggregation state.
//!
//! The raw estimate (paper Eq. "estimator") is unbiased but may be negative and need not
//! sum to one. The other estimators trade the bias they introduce for a valid (or sparser)
//! distribution; each is an explicit choice:
//!
//! - post-processing of the raw estimate alone, the consistency methods of Wang et al.,
//!   "Locally Differentially Private Frequency Estimation with Consistency" (NDSS 2020):
//!   Base-Pos, Norm, Norm-Mul (`clip`), Norm-Cut, Norm-Sub, and the Euclidean projection
//!   onto the simplex ([`consistency`]);
//! - estimators that read the support counts through the mechanism's channel
//!   (`p*`, `q*`): Base-Cut (a significance threshold) and MLE-Apx, also from NDSS 2020,
//!   iterative Bayesian update (IBU, Agrawal and Aggarwal 2001) and maximum likelihood
//!   ([`likelihood`]).
//!
//! Support counts are the exact sufficient statistic only for GRR (one item per report,
//! multinomial counts): there IBU is the EM algorithm of the reports' likelihood and MLE
//! its closed-form maximum (Pinzon et al., AAAI 2026). For the families whose reports
//! support several items (SS, UE, THE, LH, HR, HM, FLH) IBU and MLE use the counts as
//! multi-freq-ldpy does: IBU with the channel matrix `p*` on the diagonal and `q*`
//! elsewhere, MLE maximizing the composite likelihood in which each item's count is
//! Binomial(n, `q* + (p* - q*) f`). SHE keeps sums, not counts, and the sketches (CMS,
//! HCMS) and blocked HR have no single `(p*, q*)`: the channel-based estimators refuse
//! them with [`AggregateError::NeedsChannel`].

pub mod consistency;
pub mod likelihood;

pub use likelihood::{Channel, Fit, FitKnob, FitOptions, FitOptionsError, Stop};

use crate::error::AggregateError;

crate::named_knob!(Estimator, "estimator");

/// How to turn an aggregation state into the reported frequencies (module docs).
///
/// Names parse case-insensitively (`"norm-sub".parse()`), and serialize the same way
/// (`clip`; deserializing, as the DataFusion options do, also reads the older
/// `clip-renormalize` and the NDSS name `norm-mul`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum Estimator {
    /// The raw unbiased estimate, unchanged (the default; NDSS 2020's Base).
    #[default]
    Unbiased,
    /// Base-Pos: negatives set to zero, nothing else changed (the total may exceed one).
    BasePos,
    /// Norm: the same amount added to every estimate so that they sum to one (negatives
    /// may remain).
    Norm,
    /// Norm-Mul: negatives clipped to zero, the rest scaled to sum to one (what the paper's
    /// code does). When every estimate is non-positive the result is uniform.
    #[cfg_attr(
        feature = "serde",
        serde(rename = "clip", alias = "clip-renormalize", alias = "norm-mul")
    )]
    ClipRenormalize,
    /// Norm-Cut: the largest estimates kept until their running total first exceeds one,
    /// every other set to zero, the kept ones scaled to sum to one (with no such crossing,
    /// Norm-Mul).
    NormCut,
    /// Norm-Sub (Wang et al. 2020): repeatedly zero the negatives and shift the positives
    /// by a common amount until the estimate is non-negative and sums to one.
    NormSub,
    /// Euclidean projection onto the probability simplex (Duchi et al. 2008).
    /// It coincides with Norm-Sub when the positive raw estimates sum to at least one;
    /// otherwise the projection may lift negative entries above zero, which Norm-Sub never does.
    Simplex,
    /// Base-Cut: estimates below the significance threshold
    /// `z(1 - alpha / k) sqrt(q (1 - q) / n) / (p - q)` (one-sided, Bonferroni-corrected,
    /// alpha = [`BASE_CUT_ALPHA`], the spread of an item nobody holds) set to zero, the
    /// rest unchanged. Needs the channel.
    BaseCut,
    /// MLE-Apx: the maximum likelihood under the normal approximation of each item's
    /// support share, over the estimates' positive set, shrunk until none is negative (the
    /// NDSS authors' code; for GRR its multiplicative form). Needs the channel.
    MleApx,
    /// Iterative Bayesian update ([`likelihood::ibu`]). Needs the channel.
    Ibu,
    /// IBU accelerated by SQUAREM ([`likelihood::ibu_squarem`]): IBU's fixed point in far
    /// fewer steps. Needs the channel.
    IbuSquarem,
    /// Maximum likelihood ([`likelihood::mle`]). Needs the channel.
    Mle,
}

/// The significance level of Base-Cut, as the NDSS 2020 authors' experiments set it.
pub const BASE_CUT_ALPHA: f64 = 0.05;

impl Estimator {
    /// Every estimator, in the order front ends list them.
    pub const ALL: [Estimator; 12] = [
        Estimator::Unbiased,
        Estimator::BasePos,
        Estimator::Norm,
        Estimator::ClipRenormalize,
        Estimator::NormCut,
        Estimator::NormSub,
        Estimator::Simplex,
        Estimator::BaseCut,
        Estimator::MleApx,
        Estimator::Ibu,
        Estimator::IbuSquarem,
        Estimator::Mle,
    ];

    /// The name front ends use: `unbiased`, `base-pos`, `norm`, `clip`, `norm-cut`,
    /// `norm-sub`, `simplex`, `base-cut`, `mle-apx`, `ibu`, `ibu-squarem`, `mle`.
    pub fn name(self) -> &'static str {
        match self {
            Estimator::Unbiased => "unbiased",
            Estimator::BasePos => "base-pos",
            Estimator::Norm => "norm",
            Estimator::ClipRenormalize => "clip",
            Estimator::NormCut => "norm-cut",
            Estimator::NormSub => "norm-sub",
            Estimator::Simplex => "simplex",
            Estimator::BaseCut => "base-cut",
            Estimator::MleApx => "mle-apx",
            Estimator::Ibu => "ibu",
            Estimator::IbuSquarem => "ibu-squarem",
            Estimator::Mle => "mle",
        }
    }

    /// Whether the estimator iterates (IBU, and MLE's bisection), and so takes a cap and a
    /// tolerance ([`FitOptions::for_estimator`]).
    pub fn iterates(self) -> bool {
        matches!(
            self,
            Estimator::Ibu | Estimator::IbuSquarem | Estimator::Mle
        )
    }

    /// Whether the estimator reads the support counts through the channel `(p*, q*)`
    /// rather than the raw estimate alone.
    pub fn needs_channel(self) -> bool {
        matches!(
            self,
            Estimator::BaseCut
                | Estimator::MleApx
                | Estimator::Ibu
                | Estimator::IbuSquarem
                | Estimator::Mle
        )
    }

    /// Applies a post-processing to `raw`. Finite inputs give finite outputs, however
    /// large: inputs beyond 2^600 in magnitude are first scaled by a power of two (exactly),
    /// so that no sum overflows. The estimators that need the channel
    /// ([`Estimator::needs_channel`]) are refused: use [`Estimator::from_counts`] or an
    /// aggregator's [`crate::Aggregator::fit`].
    ///
    /// ```
    /// use ldp_core::Estimator;
    /// let raw = vec![0.7, 0.5, -0.2];
    /// assert_eq!(Estimator::Unbiased.apply(raw.clone())?, raw);
    /// let clipped = Estimator::ClipRenormalize.apply(raw.clone())?;
    /// assert!((clipped[0] - 0.7 / 1.2).abs() < 1e-12);
    /// let projected = Estimator::Simplex.apply(raw.clone())?;
    /// assert!((projected[0] - 0.6).abs() < 1e-12 && (projected[1] - 0.4).abs() < 1e-12);
    /// assert!(Estimator::Ibu.apply(raw).is_err());
    /// # Ok::<(), ldp_core::AggregateError>(())
    /// ```
    pub fn apply(self, raw: Vec<f64>) -> Result<Vec<f64>, AggregateError> {
        use consistency::*;
        if self.needs_channel() {
            return Err(AggregateError::NeedsChannel {
                estimator: self.name(),
                why: "the raw estimate alone was given".into(),
            });
        }
        if self == Estimator::Unbiased {
            return Ok(raw);
        }
        // The projections are not scale invariant (their target sum is 1), so a scaled
        // input is projected onto the scaled target and scaled back.
        let scale = scale_for(&raw);
        let scaled: Vec<f64> = if scale == 1.0 {
            raw
        } else {
            raw.into_iter().map(|v| v / scale).collect()
        };
        let target = 1.0 / scale;
        let (out, at_most_one) = match self {
            Estimator::BasePos => (base_pos(scaled), false),
            Estimator::Norm => (norm(scaled, target), false),
            Estimator::ClipRenormalize => return Ok(clip_renormalize(scaled)),
            Estimator::NormCut => (norm_cut(scaled, target), true),
            Estimator::NormSub => (norm_sub(scaled, target), true),
            Estimator::Simplex => (project_simplex(scaled, target), true),
            _ => unreachable!("handled above"),
        };
        Ok(if scale == 1.0 {
            out
        } else if at_most_one {
            // A frequency of a distribution: rounding must not carry it above one.
            out.into_iter().map(|v| (v * scale).min(1.0)).collect()
        } else {
            // Norm's shift can carry an entry past the largest float: keep it finite.
            out.into_iter()
                .map(|v| (v * scale).clamp(-f64::MAX, f64::MAX))
                .collect()
        })
    }

    /// The estimate from the support counts of `n` reports read through `channel`: every
    /// estimator, the raw-only ones applied to the unbiased estimate
    /// `(c - n q) / (n (p - q))`.
    ///
    /// ```
    /// use ldp_core::estimate::{likelihood::Channel, FitOptions, Stop};
    /// use ldp_core::Estimator;
    /// let grr = Channel { p: 0.6, q: 0.2, one_item_per_report: true };
    /// let fit = Estimator::Ibu.from_counts(&[40, 35, 25], 100, grr, &FitOptions::default())?;
    /// assert_eq!(fit.stop, Stop::Tolerance);
    /// let mle = Estimator::Mle.from_counts(&[50, 30, 20], 100, grr, &FitOptions::default())?;
    /// assert!((mle.values[0] - 0.75).abs() < 1e-12 && mle.values[2] == 0.0);
    /// # Ok::<(), ldp_core::AggregateError>(())
    /// ```
    pub fn from_counts(
        self,
        counts: &[u64],
        n: u64,
        channel: Channel,
        options: &FitOptions,
    ) -> Result<Fit, AggregateError> {
        let raw = support_estimate(counts, n, channel.p, channel.q)?;
        match self {
            Estimator::Ibu => likelihood::ibu(counts, channel, options),
            Estimator::IbuSquarem => likelihood::ibu_squarem(counts, channel, options),
            Estimator::Mle => likelihood::mle(counts, n, channel, options),
            Estimator::BaseCut => Ok(Fit::direct(consistency::base_cut(
                raw,
                n,
                channel,
                BASE_CUT_ALPHA,
            ))),
            Estimator::MleApx => Ok(Fit::direct(consistency::mle_apx(raw, channel))),
            raw_only => raw_only.apply(raw).map(Fit::direct),
        }
    }
}

/// The unbiased estimate from support counts of `n` reports, each supporting its true
/// item w.p. `p` and any other w.p. `q` (paper Eq. "estimator").
///
/// # Formula
///
/// ```text
/// f_v = (C_v - n q) / (n (p - q))
/// ```
///
/// with `C_v` the reports supporting item v: `E[C_v] = n (f_v p + (1 - f_v) q)`, so the
/// estimate is unbiased. Refused without reports, and where `p <= q` (a budget so small
/// that the two coincide in floating point: the reports carry no signal).
///
/// ```
/// use ldp_core::estimate::support_estimate;
/// let f = support_estimate(&[60, 25, 15], 100, 0.6, 0.2)?;
/// assert!((f[0] - 1.0).abs() < 1e-12 && (f[2] + 0.125).abs() < 1e-12);
/// # Ok::<(), ldp_core::AggregateError>(())
/// ```
pub fn support_estimate(
    counts: &[u64],
    n: u64,
    p: f64,
    q: f64,
) -> Result<Vec<f64>, AggregateError> {
    if n == 0 {
        return Err(AggregateError::Empty);
    }
    if p <= q {
        // eps so small that p and q coincide in floating point: reports carry no usable
        // signal, and the estimator would divide by zero.
        return Err(AggregateError::Uninformative { p, q });
    }
    let n = n as f64;
    let scale = 1.0 / (n * (p - q));
    Ok(counts.iter().map(|&c| (c as f64 - n * q) * scale).collect())
}
