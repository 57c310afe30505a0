//! Summation with histogram encoding (SHE), paper Section "she_protocol", and its
//! server-side state.

use multiversion::multiversion;
use rand::{Rng, RngExt};

use crate::aggregate::{Aggregator, StateValues, check_same, checked_count};
use crate::attack_surface::{AttackSurface, MaxGain};
use crate::error::{AggregateError, ItemOutOfRange, ParamError, ReportError};
use crate::exact_outputs::{Coverage, ExactOutputs, TooManyOutputs};
use crate::families::{FamilyMechanism, FamilyParams};
use crate::mechanism::{Mechanism, check_domain, eq_by_spec};
use crate::report::{ReportLimits, SheReport};
use crate::sampling::{LAPLACE_CHUNK, fill_laplace};
use crate::server::{Clip, ClipBound};
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

pub use crate::report::REPORT_BOUND;

/// The smallest budget SHE accepts. The noise is `b S E` with `b = 2 / eps`, a fair sign S
/// and an exponential E below 45 (the sampler's largest output), so honest coordinates
/// stay below `45 b + 1`, inside [`REPORT_BOUND`], exactly when eps is at least about
/// 1e-148.
pub const MIN_EPS: f64 = 1e-140;

/// The one-hot vector of `item` plus `b S E` on every coordinate, [`LAPLACE_CHUNK`]
/// coordinates at a time: `each(start, values)` sees `y[start..start + values.len()]`.
/// Chunks of the sampler's own size draw the same values as one [`fill_laplace`] over
/// the whole vector.
#[inline]
fn noisy_one_hot<R: Rng + ?Sized>(
    k: usize,
    item: usize,
    b: f64,
    rng: &mut R,
    mut each: impl FnMut(usize, &[f64]),
) {
    let mut buf = [0.0; LAPLACE_CHUNK];
    for start in (0..k).step_by(LAPLACE_CHUNK) {
        let chunk = &mut buf[..(k - start).min(LAPLACE_CHUNK)];
        fill_laplace(b, rng, chunk);
        if let Some(v) = item.checked_sub(start).and_then(|j| chunk.get_mut(j)) {
            *v += 1.0;
        }
        each(start, chunk);
    }
}

/// The index of the largest value, the first on ties; NaN is never the largest, and
/// `None` when no value exceeds -inf. Independent lanes (a loop the compiler vectorizes),
/// then a branch-free reduction: the largest value, and the least index holding it.
#[multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl+avx512dq+avx2+fma+bmi1+bmi2",
    "x86_64+avx2+fma+bmi1+bmi2",
))]
fn first_argmax(y: &[f64]) -> Option<usize> {
    const LANES: usize = 8;
    let mut best = [f64::NEG_INFINITY; LANES];
    let mut at = [usize::MAX; LANES];
    let blocks = y.chunks_exact(LANES);
    let tail = blocks.remainder();
    for (b, block) in blocks.enumerate() {
        for j in 0..LANES {
            if block[j] > best[j] {
                best[j] = block[j];
                at[j] = b * LANES + j;
            }
        }
    }
    let tail_start = y.len() - tail.len();
    // f64::max skips NaN.
    let top = best
        .iter()
        .chain(tail)
        .fold(f64::NEG_INFINITY, |m, &v| m.max(v));
    if top == f64::NEG_INFINITY {
        return None;
    }
    let lanes = best.iter().zip(at);
    let tail = tail.iter().zip(tail_start..);
    let first = lanes
        .chain(tail)
        .fold(usize::MAX, |f, (&v, i)| if v == top { f.min(i) } else { f });
    Some(first)
}

/// k values, each finite and at most [`REPORT_BOUND`] in magnitude.
fn validate_values(k: DomainSize, y: &[f64]) -> Result<(), ReportError> {
    if y.len() != k.as_usize() {
        return Err(ReportError::Length {
            field: "y",
            expected: k.as_usize(),
            found: y.len(),
        });
    }
    // One branch-free pass in the common case; the slow pass names the entry.
    if y.iter().all(|&v| within(v, REPORT_BOUND)) {
        return Ok(());
    }
    let (position, &value) = y
        .iter()
        .enumerate()
        .find(|(_, v)| !within(**v, REPORT_BOUND))
        .expect("some entry failed the check");
    Err(if value.is_finite() {
        ReportError::Magnitude {
            field: "y",
            position,
            value,
            bound: REPORT_BOUND,
        }
    } else {
        ReportError::NonFinite {
            field: "y",
            position,
        }
    })
}

/// `|v| <= bound`, false for NaN.
#[inline]
fn within(v: f64, bound: f64) -> bool {
    v.abs() <= bound
}

/// SHE: the client adds Laplace noise of scale `2 / eps` to every coordinate of its one-hot
/// vector and sends the noisy vector; the server sums the vectors.
///
/// Privacy: two one-hot vectors are at L1 distance 2, so the Laplace density ratio is at
/// most `exp(2 * eps / 2) = e^eps`.
///
/// The noise is drawn in floating point: `b S E`, with E from rand_distr's 256-layer
/// ziggurat exponential run on one 64-bit word per coordinate (drawn 64 words at a
/// time) and the fair sign S a bit of that word the ziggurat leaves unused (exact: the
/// Laplace law is a symmetric exponential). Floating-point Laplace samplers are
/// known to leak through the low-order bits of their output (Mironov 2012); this
/// implementation is **not hardened** against such attacks.
/// THE, which sends only the thresholded index set, is sampled without floating-point
/// noise and does not have this weakness.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Mechanism, SummationHistogram};
/// use ldp_core::simulation::{stream_rng, Role};
/// let she = SummationHistogram::new(DomainSize::new(5)?, Epsilon::new(1.0)?)?;
/// let report = she.perturb(2, &mut stream_rng(7, 0, Role::Genuine, 0))?;
/// assert_eq!(report.y.len(), 5);
/// assert!(SummationHistogram::new(DomainSize::new(5)?, Epsilon::new(1e-300)?).is_err());
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SummationHistogram {
    k: DomainSize,
    eps: Epsilon,
}

impl SummationHistogram {
    /// SHE over `0..k` at privacy budget `eps >=` [`MIN_EPS`].
    pub fn new(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        check_domain(k)?;
        // SHE's own floor, not e^eps > 1: its noise is Laplace(2/eps).
        if eps.get() < MIN_EPS {
            return Err(ParamError::SheBudget {
                value: eps.get(),
                min: MIN_EPS,
            });
        }
        Ok(Self { k, eps })
    }

    /// The Laplace scale `b = 2 / eps`.
    pub fn scale(&self) -> f64 {
        2.0 / self.eps.get()
    }

    /// Perturbs `item` without materializing the report: `visit(i, y_i)` sees each
    /// coordinate in order, drawn exactly as [`Mechanism::perturb`] draws it (same stream,
    /// same values), 64 coordinates at a time on the stack: for callers that only sum or
    /// inspect the report and need no k-vector.
    #[inline]
    pub fn perturb_each<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
        visit: impl FnMut(usize, f64),
    ) -> Result<(), ItemOutOfRange> {
        self.k.check_item(item)?;
        let mut visit = visit;
        noisy_one_hot(
            self.k.as_usize(),
            item as usize,
            self.scale(),
            rng,
            |start, y| {
                for (j, &v) in y.iter().enumerate() {
                    visit(start + j, v);
                }
            },
        );
        Ok(())
    }

    /// A server that sums the reports as they are: the paper's SHE, whose poisoning gain is
    /// bounded only by [`REPORT_BOUND`]. Prefer [`SummationHistogram::clipped_aggregator`].
    pub fn unclipped_aggregator(&self) -> SheSums {
        SheSums::new(self.clone(), None)
    }

    /// A server that clips every coordinate to `[-bound, bound]` before summing.
    pub fn clipped_aggregator(&self, bound: ClipBound) -> SheSums {
        SheSums::new(self.clone(), Some(bound))
    }
}

eq_by_spec!(SummationHistogram);

impl FamilyMechanism for SummationHistogram {
    const RELABELLING_INVARIANT: bool = true;

    fn check(_: DomainSize, _: Epsilon, (): ()) -> Result<(), ParamError> {
        Ok(())
    }

    fn build(k: DomainSize, eps: Epsilon, (): ()) -> Result<Self, ParamError> {
        Self::new(k, eps)
    }

    fn probabilities(_: DomainSize, _: Epsilon, (): ()) -> Option<(f64, f64)> {
        None
    }

    fn support_size_range(_: DomainSize, (): ()) -> Option<(u32, u32)> {
        None
    }

    /// k numbers.
    fn report_limits(k: DomainSize, (): ()) -> ReportLimits {
        ReportLimits {
            values: 0,
            entries: k.get(),
            seeds: 0,
        }
    }

    const CLIPS: bool = true;

    /// Clipped at `clip`'s bound, or unclipped for [`Clip::Off`].
    fn server(&self, clip: Clip) -> SheSums {
        SheSums::new(self.clone(), clip.bound(self.eps))
    }
}

/// The largest coordinate a server clipping as `clip` says keeps: its bound, or
/// [`REPORT_BOUND`] without clipping.
fn largest_kept(clip: Clip, eps: Epsilon) -> f64 {
    clip.bound(eps).map_or(REPORT_BOUND, ClipBound::get)
}

impl AttackSurface for SummationHistogram {
    /// The index of the largest coordinate (the first on ties, which have probability 0;
    /// a NaN is never the largest; 0 when no coordinate is above -inf, or k = 0).
    fn guess<R: Rng + ?Sized>(&self, report: &SheReport, _: &mut R) -> u32 {
        first_argmax(&report.y).map_or(0, |i| i as u32)
    }

    /// Coordinate `v1` at least 1 and `v2` at most 0: the event whose likelihood ratio,
    /// (1/2 * 1/2) / (e^(-eps/2)/2 * e^(-eps/2)/2), is e^eps, the Laplace noise's bound.
    fn separates(&self, report: &SheReport, v1: u32, v2: u32) -> bool {
        report.y[v1 as usize] >= 1.0 && report.y[v2 as usize] <= 0.0
    }

    fn observe_and_guess<R: Rng + ?Sized>(
        &self,
        server: &mut SheSums,
        report: &SheReport,
        _: &mut Vec<u32>,
        rng: &mut R,
    ) -> u32 {
        server
            .add(report)
            .expect("genuine reports are valid and fewer than 2^64");
        self.guess(report, rng)
    }

    /// The reports' log-likelihoods: SHE's reports support no items.
    fn add_evidence(&self, report: &SheReport, scores: &mut [f64], scratch: &mut Vec<f64>) {
        self.log_likelihoods(report, scratch);
        for (s, l) in scores.iter_mut().zip(scratch.iter()) {
            *s += l;
        }
    }

    /// The largest value the server keeps on every target, zero elsewhere.
    fn plan_max_gain(&self, targets: &[u32], clip: Clip) -> MaxGain<SheReport> {
        let mut y = vec![0.0; self.k.as_usize()];
        let top = largest_kept(clip, self.eps);
        targets.iter().for_each(|&t| y[t as usize] = top);
        MaxGain {
            fixed: Some(SheReport { y }),
            supported: targets.len() as u32,
        }
    }

    fn random_output<R: Rng + ?Sized>(&self, clip: Clip, rng: &mut R) -> SheReport {
        let c = largest_kept(clip, self.eps);
        let y = (0..self.k.get())
            .map(|_| rng.random_range(-c..=c))
            .collect();
        SheReport { y }
    }

    /// The one-hot vector of item 0: the Laplace density ratio is largest where
    /// coordinate x is at least 1 and x' at most 0, and this is such a point for every
    /// pair (one output: never refused).
    fn exact_outputs(
        &self,
        _: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = SheReport>>, TooManyOutputs> {
        let mut y = vec![0.0; self.k.as_usize()];
        y[0] = 1.0;
        Ok(ExactOutputs {
            outputs: std::iter::once(SheReport { y }),
            coverage: Coverage::Witness,
        })
    }
}

impl Mechanism for SummationHistogram {
    type Report = SheReport;
    type Aggregator = SheSums;

    fn spec(&self) -> Spec {
        Spec::from_parts(self.k, self.eps, FamilyParams::SummationHistogram)
    }

    fn perturb<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<SheReport, ItemOutOfRange> {
        let mut report = SheReport { y: Vec::new() };
        self.perturb_into(item, rng, &mut report)?;
        Ok(report)
    }

    fn perturb_into<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
        report: &mut SheReport,
    ) -> Result<(), ItemOutOfRange> {
        self.k.check_item(item)?;
        let y = &mut report.y;
        y.resize(self.k.as_usize(), 0.0);
        fill_laplace(self.scale(), rng, y);
        y[item as usize] += 1.0;
        Ok(())
    }

    fn validate(&self, report: &SheReport) -> Result<(), ReportError> {
        validate_values(self.k, &report.y)
    }

    /// Log-density of the noisy vector: `sum_i [-ln(2b) - |y_i - 1{i = item}| / b]`.
    fn log_likelihood(&self, report: &SheReport, item: u32) -> f64 {
        let b = self.scale();
        let norm = -(2.0 * b).ln() * report.y.len() as f64;
        let dist: f64 = report
            .y
            .iter()
            .enumerate()
            .map(|(i, &v)| (v - f64::from(u8::from(i == item as usize))).abs())
            .sum();
        norm - dist / b
    }

    /// O(k): hypotheses differ only in which coordinate carries the 1, so
    /// `ln f(y | x) = ln f(y | none) + (|y_x| - |y_x - 1|) / b`.
    fn log_likelihoods(&self, report: &SheReport, out: &mut Vec<f64>) {
        let b = self.scale();
        let base = -(2.0 * b).ln() * report.y.len() as f64
            - report.y.iter().map(|v| v.abs()).sum::<f64>() / b;
        out.clear();
        out.extend(
            report
                .y
                .iter()
                .map(|&v| base + (v.abs() - (v - 1.0).abs()) / b),
        );
    }

    /// The paper's server, without clipping. Servers facing untrusted clients should use
    /// [`SummationHistogram::clipped_aggregator`].
    fn aggregator(&self) -> SheSums {
        self.unclipped_aggregator()
    }
}

/// SHE's aggregate: the coordinate-wise sum of the noisy vectors, optionally after
/// clipping every coordinate to `[-clip, clip]`.
///
/// Without clipping, one fake report can move the estimate by up to [`REPORT_BOUND`]
/// (its coordinates are any reals within it); clipping bounds that at the price of a
/// negligible bias on genuine reports ([`ClipBound`]). Either way every sum stays finite:
/// at most 2^64 reports of coordinates at most 1e150.
///
/// ```
/// use ldp_core::{Aggregator, ClipBound, DomainSize, Epsilon, SheReport, SummationHistogram};
/// let she = SummationHistogram::new(DomainSize::new(2)?, Epsilon::new(1.0)?)?;
/// let mut server = she.clipped_aggregator(ClipBound::new(10.0)?);
/// server.add(&SheReport { y: vec![1e100, 0.5] })?; // a forged report, clipped
/// assert_eq!(server.sums(), &[10.0, 0.5]);
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "SheSumsState")
)]
pub struct SheSums {
    mechanism: SummationHistogram,
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    clip: Option<ClipBound>,
    n: u64,
    sums: Vec<f64>,
}

/// The serialized form of [`SheSums`], checked on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SheSumsState {
    mechanism: SummationHistogram,
    #[serde(default)]
    clip: Option<ClipBound>,
    n: u64,
    sums: Vec<f64>,
}

#[cfg(feature = "serde")]
impl TryFrom<SheSumsState> for SheSums {
    type Error = AggregateError;
    fn try_from(s: SheSumsState) -> Result<Self, AggregateError> {
        SheSums::restore(s.mechanism, s.clip, s.n, s.sums)
    }
}

impl SheSums {
    fn new(mechanism: SummationHistogram, clip: Option<ClipBound>) -> Self {
        let k = mechanism.domain_size().as_usize();
        Self {
            mechanism,
            clip,
            n: 0,
            sums: vec![0.0; k],
        }
    }

    /// A state restored from its parts (a stored or shipped partial aggregate), checked
    /// for consistency: one sum per item, each a number that `n` reports of at most the
    /// clipping bound (or [`REPORT_BOUND`]) could have produced.
    ///
    /// ```
    /// use ldp_core::{DomainSize, Epsilon, SheSums, SummationHistogram};
    /// let she = SummationHistogram::new(DomainSize::new(2)?, Epsilon::new(1.0)?)?;
    /// assert!(SheSums::restore(she.clone(), None, 1, vec![0.3, -2.0]).is_ok());
    /// assert!(SheSums::restore(she, None, 1, vec![f64::NAN, 0.0]).is_err());
    /// # Ok::<(), ldp_core::Error>(())
    /// ```
    pub fn restore(
        mechanism: SummationHistogram,
        clip: Option<ClipBound>,
        n: u64,
        sums: Vec<f64>,
    ) -> Result<Self, AggregateError> {
        let k = mechanism.domain_size().as_usize();
        if sums.len() != k {
            return Err(AggregateError::CorruptState {
                reason: format!("{} sums for a domain of {k} items", sums.len()),
            });
        }
        // Each report adds at most the bound to a sum (a little slack for rounding).
        let bound = clip.map_or(REPORT_BOUND, ClipBound::get);
        let limit = n as f64 * bound * (1.0 + 1e-9);
        if let Some(i) = sums.iter().position(|&v| !within(v, limit)) {
            return Err(AggregateError::CorruptState {
                reason: format!(
                    "sum of item {i} is not a number of magnitude at most {limit:e} ({n} reports of at most {bound:e})"
                ),
            });
        }
        Ok(Self {
            mechanism,
            clip,
            n,
            sums,
        })
    }

    /// The clipping bound, if any.
    pub fn clip(&self) -> Option<ClipBound> {
        self.clip
    }

    /// The coordinate-wise sums.
    pub fn sums(&self) -> &[f64] {
        &self.sums
    }

    /// Adds a report given as its k values (what [`Aggregator::add`] does with a
    /// [`SheReport`]), validated the same way: for readers of columnar reports.
    pub fn add_values(&mut self, y: &[f64]) -> Result<(), AggregateError> {
        validate_values(self.mechanism.k, y)?;
        let n = checked_count(self.n, 1)?;
        match self.clip {
            None => self.sums.iter_mut().zip(y).for_each(|(s, v)| *s += v),
            Some(c) => {
                let c = c.get();
                self.sums
                    .iter_mut()
                    .zip(y)
                    .for_each(|(s, v)| *s += v.clamp(-c, c));
            }
        }
        self.n = n;
        Ok(())
    }

    /// Perturbs `item` with the mechanism's client randomness (the draws of
    /// [`SummationHistogram::perturb_each`]) and adds the report without materializing
    /// it; `visit(i, y_i)` sees each raw coordinate. Equal to perturbing, then [`Aggregator::add`]: a mechanism's own
    /// reports are always valid, so only the count is checked.
    #[inline]
    pub fn add_perturbed<R: Rng + ?Sized>(
        &mut self,
        item: u32,
        rng: &mut R,
        mut visit: impl FnMut(usize, f64),
    ) -> Result<(), crate::Error> {
        let n = checked_count(self.n, 1)?;
        self.mechanism.k.check_item(item)?;
        let sums = &mut self.sums;
        let clip = self.clip.map_or(f64::INFINITY, ClipBound::get);
        let m = &self.mechanism;
        noisy_one_hot(m.k.as_usize(), item as usize, m.scale(), rng, |start, y| {
            for (j, (s, &v)) in sums[start..].iter_mut().zip(y).enumerate() {
                *s += v.clamp(-clip, clip);
                visit(start + j, v);
            }
        });
        self.n = n;
        Ok(())
    }
}

impl Aggregator for SheSums {
    type Mechanism = SummationHistogram;

    fn mechanism(&self) -> &SummationHistogram {
        &self.mechanism
    }

    fn add(&mut self, report: &SheReport) -> Result<(), AggregateError> {
        self.add_values(&report.y)
    }

    fn merge(&mut self, other: &Self) -> Result<(), AggregateError> {
        check_same(&self.mechanism, &other.mechanism)?;
        if self.clip != other.clip {
            return Err(AggregateError::Incompatible {
                left: format!("clip {:?}", self.clip.map(ClipBound::get)),
                right: format!("clip {:?}", other.clip.map(ClipBound::get)),
            });
        }
        self.n = checked_count(self.n, other.n)?;
        for (s, o) in self.sums.iter_mut().zip(&other.sums) {
            *s += o;
        }
        Ok(())
    }

    fn count(&self) -> u64 {
        self.n
    }

    fn state_values(&self) -> StateValues<'_> {
        StateValues::Sums(&self.sums)
    }

    fn merge_state(&mut self, n: u64, values: StateValues<'_>) -> Result<(), AggregateError> {
        let partial = SheSums::restore(self.mechanism.clone(), self.clip, n, values.sums()?)?;
        self.merge(&partial)
    }

    /// Paper Section SHE: `f_i = (sum_j y^j_i) / n`; Laplace noise has mean zero.
    fn raw_estimate(&self) -> Result<Vec<f64>, AggregateError> {
        if self.n == 0 {
            return Err(AggregateError::Empty);
        }
        let n = self.n as f64;
        Ok(self.sums.iter().map(|s| s / n).collect())
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::first_argmax;

    /// The first index of the largest non-NaN value above -inf.
    fn naive(y: &[f64]) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, &v) in y.iter().enumerate() {
            if v > f64::NEG_INFINITY && best.is_none_or(|b| v > y[b]) {
                best = Some(i);
            }
        }
        best
    }

    #[test]
    fn the_lanes_find_the_first_largest_value() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let specials = [f64::NAN, f64::NEG_INFINITY, f64::INFINITY, -0.0, 0.0];
        for len in 0..40 {
            for _ in 0..200 {
                // Few distinct values, so that ties are common, and some specials.
                let y: Vec<f64> = (0..len)
                    .map(|_| match rng.random_range(0..10) {
                        0 => specials[rng.random_range(0..specials.len())],
                        _ => f64::from(rng.random_range(-3..3)),
                    })
                    .collect();
                assert_eq!(first_argmax(&y), naive(&y), "{y:?}");
            }
        }
    }
}
