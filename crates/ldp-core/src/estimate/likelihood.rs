//! Estimators that read support counts through the mechanism's channel: iterative
//! Bayesian update and maximum likelihood (module docs of [`crate::estimate`] say which
//! likelihood each family gets).
//!
//! The channel is the support law of a pure protocol: a report supports its true item
//! with probability `p` and any other item with probability `q < p`. Its matrix
//! `A = q 1 1^T + (p - q) I` is never built: `A v = q sum(v) + (p - q) v`, so an IBU
//! iteration costs O(k).

use multiversion::multiversion;

use crate::error::AggregateError;
use crate::estimate::Estimator;

/// The support law the channel-based estimators read counts through.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Channel {
    /// P[a report supports its true item].
    pub p: f64,
    /// P[a report supports a given other item].
    pub q: f64,
    /// Whether every report supports exactly one item (GRR): the counts are then
    /// multinomial and the exact sufficient statistic.
    pub one_item_per_report: bool,
}

impl Channel {
    /// Checks `0 <= q < p <= 1`: a channel whose reports carry a signal.
    pub fn check(&self) -> Result<(), AggregateError> {
        let Channel { p, q, .. } = *self;
        if (0.0..=1.0).contains(&q) && (0.0..=1.0).contains(&p) && q < p {
            Ok(())
        } else if p == q {
            Err(AggregateError::Uninformative { p, q })
        } else {
            Err(AggregateError::BadFitOptions {
                reason: format!("a channel needs 0 <= q < p <= 1, got p = {p}, q = {q}"),
            })
        }
    }
}

/// When an iterative estimator stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    /// The most iterations (IBU steps, or MLE bisection steps).
    pub max_iterations: u32,
    /// IBU stops when no frequency moved by more than this in one step (multi-freq-ldpy's
    /// `max_abs` rule); MLE when its frequencies sum to one within it.
    pub tolerance: f64,
}

impl Default for FitOptions {
    /// multi-freq-ldpy's defaults: 10 000 iterations, tolerance 1e-12.
    fn default() -> Self {
        FitOptions {
            max_iterations: 10_000,
            tolerance: 1e-12,
        }
    }
}

impl FitOptions {
    /// Checks that the cap is positive and the tolerance positive and finite.
    pub fn check(&self) -> Result<(), AggregateError> {
        if self.max_iterations == 0 {
            return Err(AggregateError::BadFitOptions {
                reason: "the iteration cap must be at least 1".into(),
            });
        }
        if !(self.tolerance > 0.0 && self.tolerance.is_finite()) {
            return Err(AggregateError::BadFitOptions {
                reason: format!(
                    "the tolerance must be positive and finite, got {}",
                    self.tolerance
                ),
            });
        }
        Ok(())
    }

    /// The options of `estimator` from a front end's optional cap and tolerance: the
    /// defaults where not given, checked where given, and refused where given to an
    /// estimator that does not iterate (only IBU and MLE do). Front ends word the error
    /// with their own flag or keyword ([`FitKnob`]).
    ///
    /// ```
    /// use ldp_core::estimate::{FitKnob, FitOptions, FitOptionsError};
    /// use ldp_core::Estimator;
    /// let ibu = FitOptions::for_estimator(Estimator::Ibu, Some(50), None)?;
    /// assert_eq!((ibu.max_iterations, ibu.tolerance), (50, 1e-12));
    /// let err = FitOptions::for_estimator(Estimator::NormSub, None, Some(1e-3)).unwrap_err();
    /// assert!(matches!(err, FitOptionsError::NotIterative { knob: FitKnob::Tolerance, .. }));
    /// # Ok::<(), FitOptionsError>(())
    /// ```
    pub fn for_estimator(
        estimator: Estimator,
        max_iterations: Option<u32>,
        tolerance: Option<f64>,
    ) -> Result<Self, FitOptionsError> {
        let given = [
            (FitKnob::MaxIterations, max_iterations.is_some()),
            (FitKnob::Tolerance, tolerance.is_some()),
        ];
        if !estimator.iterates()
            && let Some(&(knob, _)) = given.iter().find(|(_, g)| *g)
        {
            return Err(FitOptionsError::NotIterative { knob, estimator });
        }
        let defaults = FitOptions::default();
        let options = FitOptions {
            max_iterations: max_iterations.unwrap_or(defaults.max_iterations),
            tolerance: tolerance.unwrap_or(defaults.tolerance),
        };
        options.check().map_err(|e| FitOptionsError::Invalid {
            knob: if options.max_iterations == 0 {
                FitKnob::MaxIterations
            } else {
                FitKnob::Tolerance
            },
            reason: match e {
                AggregateError::BadFitOptions { reason } => reason,
                other => other.to_string(),
            },
        })?;
        Ok(options)
    }
}

/// The two settings of the iterative estimators, for front ends to name as their flag
/// (`--max-iterations`) or keyword (`max_iterations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FitKnob {
    /// [`FitOptions::max_iterations`].
    MaxIterations,
    /// [`FitOptions::tolerance`].
    Tolerance,
}

/// A cap or tolerance a front end cannot use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitOptionsError {
    /// Given to an estimator that does not iterate.
    #[error("only the ibu and mle estimators iterate, not {estimator}")]
    NotIterative {
        /// The setting given.
        knob: FitKnob,
        /// The estimator it was given to.
        estimator: Estimator,
    },
    /// Out of range.
    #[error("{reason}")]
    Invalid {
        /// The setting.
        knob: FitKnob,
        /// What is wrong.
        reason: String,
    },
}

/// What stopped an estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stop {
    /// Computed in one pass (a closed form or a post-processing).
    Direct,
    /// Converged within [`FitOptions::tolerance`], or (MLE's bisection) as far as floating
    /// point resolves the multiplier.
    Tolerance,
    /// Reached [`FitOptions::max_iterations`] first.
    Cap,
}

impl Stop {
    /// `direct`, `tolerance` or `cap`.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Direct => "direct",
            Stop::Tolerance => "tolerance",
            Stop::Cap => "cap",
        }
    }
}

/// An estimate and how it was reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The frequency of every item.
    pub values: Vec<f64>,
    /// Iterations run (0 for a direct estimate).
    pub iterations: u32,
    /// What stopped the estimator.
    pub stop: Stop,
}

impl Fit {
    /// A one-pass estimate.
    pub fn direct(values: Vec<f64>) -> Self {
        Fit {
            values,
            iterations: 0,
            stop: Stop::Direct,
        }
    }
}

/// Iterative Bayesian update from the support counts, as multi-freq-ldpy computes it:
/// the observed shares `c / sum(c)`, a uniform start, and `f <- f * A (obs / (A f))`
/// until no frequency moves by more than the tolerance (the step that moved less is the
/// result) or the cap. When no report supports any item the counts say nothing and the
/// estimate is uniform.
///
/// ```
/// use ldp_core::estimate::likelihood::{ibu, Channel, Stop};
/// use ldp_core::estimate::FitOptions;
/// let grr = Channel { p: 0.6, q: 0.2, one_item_per_report: true };
/// // The shares GRR expects of frequencies (0.5, 0.375, 0.125).
/// let fit = ibu(&[40, 35, 25], grr, &FitOptions::default())?;
/// assert_eq!(fit.stop, Stop::Tolerance);
/// assert!((fit.values[0] - 0.5).abs() < 1e-9 && (fit.values[2] - 0.125).abs() < 1e-9);
/// // Where the maximum lies on the simplex's boundary IBU creeps towards it: the cap stops it.
/// let boundary = ibu(&[60, 20, 20], grr, &FitOptions { max_iterations: 50, tolerance: 1e-12 })?;
/// assert_eq!((boundary.stop, boundary.iterations), (Stop::Cap, 50));
/// # Ok::<(), ldp_core::AggregateError>(())
/// ```
pub fn ibu(counts: &[u64], channel: Channel, options: &FitOptions) -> Result<Fit, AggregateError> {
    let Some(observed) = observed_shares(counts, channel, options)? else {
        return Ok(Fit::direct(vec![1.0 / counts.len() as f64; counts.len()]));
    };
    let mut f = vec![1.0 / counts.len() as f64; counts.len()];
    let (iterations, stop) =
        ibu_steps(&observed, &mut f, channel.q, channel.p - channel.q, options);
    Ok(Fit {
        values: f,
        iterations,
        stop,
    })
}

/// The checks IBU's estimators share, and the observed shares `c / sum(c)`; `None` when
/// no report supports any item (the counts say nothing: the estimate is uniform).
fn observed_shares(
    counts: &[u64],
    channel: Channel,
    options: &FitOptions,
) -> Result<Option<Vec<f64>>, AggregateError> {
    options.check()?;
    channel.check()?;
    if counts.is_empty() {
        return Err(AggregateError::Empty);
    }
    let total: f64 = counts.iter().map(|&c| c as f64).sum();
    if total == 0.0 {
        return Ok(None);
    }
    Ok(Some(counts.iter().map(|&c| c as f64 / total).collect()))
}

/// IBU's steps from `f` until the tolerance or the cap: the iterations run and why they
/// stopped. Compiled for AVX-512 and AVX2 besides the baseline and chosen at run time
/// (`multiversion`); the lanes below do the same IEEE operations in the same order in
/// every version, so all give the same bits.
#[multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl+avx512dq+avx2+fma+bmi1+bmi2",
    "x86_64+avx2+fma+bmi1+bmi2",
))]
fn ibu_steps(
    observed: &[f64],
    f: &mut [f64],
    q: f64,
    gap: f64,
    options: &FitOptions,
) -> (u32, Stop) {
    let mut ratio = vec![0.0; f.len()];
    // Two fused passes per step, with the sums that `A v` needs carried along:
    // r = obs / (A f), then f <- f * (A r). An item nobody's report supports has a zero
    // ratio, stated rather than divided: with q = 0 (eps beyond about 745) its (A f) is 0.
    // The sums run in LANES independent accumulators, so that the loops vectorize.
    const LANES: usize = 8;
    let mut f_sum: f64 = f.iter().sum();
    for iteration in 1..=options.max_iterations {
        let base = q * f_sum;
        let mut r_sums = [0.0; LANES];
        for ((r, o), v) in ratio
            .chunks_mut(LANES)
            .zip(observed.chunks(LANES))
            .zip(f.chunks(LANES))
        {
            for l in 0..r.len() {
                r[l] = if o[l] == 0.0 {
                    0.0
                } else {
                    o[l] / (base + gap * v[l])
                };
                r_sums[l] += r[l];
            }
        }
        let back = q * r_sums.iter().sum::<f64>();
        let (mut moved, mut next_sums) = ([0.0f64; LANES], [0.0; LANES]);
        for (v, r) in f.chunks_mut(LANES).zip(ratio.chunks(LANES)) {
            for l in 0..v.len() {
                let next = v[l] * (back + gap * r[l]);
                moved[l] = moved[l].max((next - v[l]).abs());
                next_sums[l] += next;
                v[l] = next;
            }
        }
        let moved = moved.iter().fold(0.0f64, |a, &b| a.max(b));
        f_sum = next_sums.iter().sum();
        if moved < options.tolerance {
            return (iteration, Stop::Tolerance);
        }
    }
    (options.max_iterations, Stop::Cap)
}

/// IBU accelerated by SQUAREM (Varadhan and Roland, "Simple and Globally Convergent
/// Methods for Accelerating the Convergence of Any EM Algorithm", Scand. J. Stat. 2008,
/// scheme S3): the same fixed point as [`ibu`], in far fewer steps where plain IBU creeps.
///
/// Each cycle takes two IBU steps `f1 = F(f)`, `f2 = F(f1)`, extrapolates along them,
/// `f' = f - 2 a r + a^2 v` with `r = f1 - f`, `v = f2 - 2 f1 + f` and
/// `a = -max(1, |r| / |v|)`, then takes one IBU step from `f'`. A jump that lowers the
/// objective IBU climbs, `sum_i obs_i ln((A f)_i)`, is halved towards `a = -1` (which is
/// two plain steps, so the objective never falls). A jump never cuts a frequency below a
/// hundredth of its current value: IBU's steps are multiplicative and cannot revive a
/// zero. The stop is IBU's: a plain step that moves no frequency by more than the
/// tolerance; the cap counts IBU steps.
///
/// ```
/// use ldp_core::estimate::likelihood::{ibu, ibu_squarem, mle, Channel, Stop};
/// use ldp_core::estimate::FitOptions;
/// let grr = Channel { p: 0.6, q: 0.2, one_item_per_report: true };
/// // For GRR IBU is EM of the reports' likelihood: both tend to the MLE, on the boundary.
/// let counts = [60, 20, 20];
/// let options = FitOptions { max_iterations: 10_000, tolerance: 1e-12 };
/// let (plain, fast) = (ibu(&counts, grr, &options)?, ibu_squarem(&counts, grr, &options)?);
/// let best = mle(&counts, 100, grr, &options)?;
/// assert_eq!(plain.stop, Stop::Cap);
/// assert!(fast.stop == Stop::Tolerance && fast.iterations < 1_000);
/// let gap = |f: &[f64]| f.iter().zip(&best.values).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
/// assert!(gap(&fast.values) < 1e-5 && gap(&fast.values) < gap(&plain.values) / 100.0);
/// # Ok::<(), ldp_core::AggregateError>(())
/// ```
pub fn ibu_squarem(
    counts: &[u64],
    channel: Channel,
    options: &FitOptions,
) -> Result<Fit, AggregateError> {
    let k = counts.len();
    let Some(observed) = observed_shares(counts, channel, options)? else {
        return Ok(Fit::direct(vec![1.0 / k as f64; k]));
    };
    let (q, gap) = (channel.q, channel.p - channel.q);
    // One of IBU's own steps (the same bits as `ibu`'s): whether it moved every frequency
    // by less than the tolerance.
    let one = FitOptions {
        max_iterations: 1,
        ..*options
    };
    let step = |from: &[f64], to: &mut [f64]| {
        to.copy_from_slice(from);
        ibu_steps(&observed, to, q, gap, &one).1 == Stop::Tolerance
    };
    let objective = |f: &[f64]| ibu_objective(&observed, f, q, gap);
    let mut f = vec![1.0 / k as f64; k];
    let (mut f1, mut f2, mut jump, mut landed) =
        (vec![0.0; k], vec![0.0; k], vec![0.0; k], vec![0.0; k]);
    let cap = options.max_iterations;
    let mut steps = 0u32;
    loop {
        if steps >= cap {
            return Ok(Fit {
                values: f,
                iterations: cap,
                stop: Stop::Cap,
            });
        }
        let still = step(&f, &mut f1);
        steps += 1;
        if still || steps >= cap {
            let stop = if still { Stop::Tolerance } else { Stop::Cap };
            return Ok(Fit {
                values: f1,
                iterations: steps,
                stop,
            });
        }
        step(&f1, &mut f2);
        steps += 1;
        let (mut rr, mut vv) = (0.0, 0.0);
        for i in 0..k {
            let (r, v) = (f1[i] - f[i], f2[i] - 2.0 * f1[i] + f[i]);
            rr += r * r;
            vv += v * v;
        }
        if vv == 0.0 || steps >= cap {
            std::mem::swap(&mut f, &mut f2);
            continue;
        }
        let before = objective(&f);
        // |r| / |v| overflows where v all but vanishes: then two plain steps.
        let mut a = -(rr / vv).sqrt().max(1.0);
        if !a.is_finite() {
            a = -1.0;
        }
        loop {
            if a == -1.0 {
                // Two plain steps, exactly (no floor): IBU's own path, whose objective
                // never falls.
                jump.copy_from_slice(&f2);
            } else {
                for i in 0..k {
                    let (r, v) = (f1[i] - f[i], f2[i] - 2.0 * f1[i] + f[i]);
                    jump[i] = (f[i] - 2.0 * a * r + a * a * v).max(f[i] / 100.0);
                }
                let sum: f64 = jump.iter().sum();
                jump.iter_mut().for_each(|x| *x /= sum);
            }
            step(&jump, &mut landed);
            steps += 1;
            if a == -1.0 || objective(&landed) >= before {
                std::mem::swap(&mut f, &mut landed);
                break;
            }
            if steps >= cap {
                // The jump lowered the objective and no step is left for another: the
                // two plain steps stand.
                std::mem::swap(&mut f, &mut f2);
                break;
            }
            a = if a > -1.01 { -1.0 } else { (a - 1.0) / 2.0 };
        }
    }
}

/// What IBU climbs: `sum_i obs_i ln((A f)_i)` (the log-likelihood of GRR's reports; for
/// the other families the counts' channel model that multi-freq-ldpy's IBU assumes).
fn ibu_objective(observed: &[f64], f: &[f64], q: f64, gap: f64) -> f64 {
    let base = q * f.iter().sum::<f64>();
    observed
        .iter()
        .zip(f)
        .filter(|(o, _)| **o > 0.0)
        .map(|(&o, &v)| o * (base + gap * v).ln())
        .sum()
}

/// Maximum likelihood from the support counts of `n` reports.
///
/// With one item per report (GRR) the counts are multinomial with shares
/// `q + (p - q) f`, and the maximum over the simplex has a closed form (Pinzon et al.,
/// AAAI 2026): `f_v = max(0, c_v / mu - q / (p - q))`, mu such that the frequencies sum
/// to one, found by sorting ([`Stop::Direct`]).
///
/// Otherwise each item's count is Binomial(n, `q + (p - q) f_v`), dependent across items,
/// and the estimate maximizes the composite likelihood (the product of those binomials)
/// over the simplex. It is concave; its optimality conditions give every `f_v` as a
/// decreasing function of one multiplier, found by bisection until the frequencies sum to
/// one within the tolerance ([`Stop::Tolerance`]) or the cap.
///
/// ```
/// use ldp_core::estimate::likelihood::{mle, Channel};
/// use ldp_core::estimate::FitOptions;
/// // OUE at eps = ln 3: p = 1/2, q = 1/4. Counts of 1000 reports.
/// let oue = Channel { p: 0.5, q: 0.25, one_item_per_report: false };
/// let fit = mle(&[500, 250, 240, 10], 1000, oue, &FitOptions::default())?;
/// assert!((fit.values.iter().sum::<f64>() - 1.0).abs() < 1e-9);
/// assert!(fit.values[3] == 0.0 && fit.values[0] > 0.9);
/// # Ok::<(), ldp_core::AggregateError>(())
/// ```
pub fn mle(
    counts: &[u64],
    n: u64,
    channel: Channel,
    options: &FitOptions,
) -> Result<Fit, AggregateError> {
    options.check()?;
    channel.check()?;
    if n == 0 || counts.is_empty() {
        return Err(AggregateError::Empty);
    }
    if channel.one_item_per_report {
        Ok(Fit::direct(multinomial_mle(counts, channel)))
    } else {
        Ok(composite_mle(counts, n, channel, options))
    }
}

/// `f_v = max(0, c_v / mu - q / gap)` summing to one: the largest counts keep mass.
/// With the top j counts kept (sum S), `mu = S / (1 + j r)`, `r = q / gap`, so
/// `f_v = (c_v (1 + j r) - S r) / S = c_v / S + r (j c_v - S) / S`: written so, nothing
/// cancels when r is huge (tiny budgets).
fn multinomial_mle(counts: &[u64], channel: Channel) -> Vec<f64> {
    let ratio = channel.q / (channel.p - channel.q);
    let mut sorted: Vec<f64> = counts.iter().map(|&c| c as f64).collect();
    sorted.sort_unstable_by(|a, b| b.total_cmp(a));
    // Keep the largest j whose smallest kept count stays positive: c > r (S - j c).
    let (mut kept, mut sum) = (0usize, 0.0);
    for (j, &c) in sorted.iter().enumerate() {
        let (j1, s1) = ((j + 1) as f64, sum + c);
        if c <= 0.0 || c <= ratio * (s1 - j1 * c) {
            break;
        }
        (kept, sum) = (j + 1, s1);
    }
    if kept == 0 {
        // No report at all: nothing to go on.
        return vec![1.0 / counts.len() as f64; counts.len()];
    }
    let j = kept as f64;
    let mut f: Vec<f64> = counts
        .iter()
        .map(|&c| {
            let c = c as f64;
            (c / sum + ratio * (j * c - sum) / sum).max(0.0)
        })
        .collect();
    normalize(&mut f);
    f
}

/// The multiplier's bisection for the composite binomial likelihood.
fn composite_mle(counts: &[u64], n: u64, channel: Channel, options: &FitOptions) -> Fit {
    let (q, gap, n) = (channel.q, channel.p - channel.q, n as f64);
    let total = |lambda: f64| -> f64 {
        counts
            .iter()
            .map(|&c| ((share(c as f64, n, gap, lambda) - q) / gap).clamp(0.0, 1.0))
            .sum()
    };
    // The sum falls from k (lambda -> -inf) to 0 (lambda -> +inf): bracket 1.
    // Within +-1e150 every product in `share` stays finite.
    let (mut lo, mut hi) = (-gap * n, gap * n);
    while total(lo) < 1.0 && lo > -1e150 {
        lo *= 2.0;
    }
    while total(hi) > 1.0 && hi < 1e150 {
        hi *= 2.0;
    }
    let mut stop = Stop::Cap;
    let mut iterations = options.max_iterations;
    for i in 1..=options.max_iterations {
        let mid = 0.5 * (lo + hi);
        let t = total(mid);
        if (t - 1.0).abs() <= options.tolerance || mid == lo || mid == hi {
            (lo, hi) = (mid, mid);
            (stop, iterations) = (Stop::Tolerance, i);
            break;
        }
        if t > 1.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let lambda = 0.5 * (lo + hi);
    let mut f: Vec<f64> = counts
        .iter()
        .map(|&c| ((share(c as f64, n, gap, lambda) - q) / gap).clamp(0.0, 1.0))
        .collect();
    normalize(&mut f);
    Fit {
        values: f,
        iterations,
        stop,
    }
}

/// The support share theta in [0, 1] at which the derivative of
/// `c ln(theta) + (n - c) ln(1 - theta)`, times gap, equals `lambda`: the root of
/// `lambda theta^2 - (lambda + gap n) theta + gap c = 0` in [0, 1], in whichever of its two
/// algebraically equal forms does not cancel (0 and 1 where the derivative never reaches
/// lambda).
fn share(c: f64, n: f64, gap: f64, lambda: f64) -> f64 {
    if c == 0.0 {
        // The derivative is -gap n / (1 - theta) <= -gap n.
        return if lambda < -gap * n {
            1.0 + gap * n / lambda
        } else {
            0.0
        };
    }
    let b = lambda + gap * n;
    let root = (b * b - 4.0 * lambda * gap * c).max(0.0).sqrt();
    let theta = if b >= 0.0 {
        2.0 * gap * c / (b + root)
    } else {
        // lambda < -gap n < 0 here, and b - root < 0: the same root, added not subtracted.
        (b - root) / (2.0 * lambda)
    };
    theta.clamp(0.0, 1.0)
}

/// Scales `f` to sum to one (a no-op up to rounding where it already does).
fn normalize(f: &mut [f64]) {
    let total: f64 = f.iter().sum();
    if total > 0.0 && total.is_finite() {
        f.iter_mut().for_each(|v| *v /= total);
    } else {
        let k = f.len() as f64;
        f.iter_mut().for_each(|v| *v = 1.0 / k);
    }
}
