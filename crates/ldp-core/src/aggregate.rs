//! Server side: streaming, mergeable aggregation state and estimation.
//!
//! Pure protocols keep one `u64` support count per item ([`SupportCounts`]); families whose
//! reports are one of finitely many outputs count the outputs and transform the counts
//! once when estimating ([`crate::OutputCounts`]); SHE keeps one `f64` sum per coordinate
//! ([`crate::SheSums`], in its family's module). All serialize (feature `serde`), so
//! partial aggregates can be stored, shipped and merged; a restored state is checked for
//! consistency before it is accepted. Engines that ship states as plain columns use
//! [`Aggregator::state_values`] and [`Aggregator::merge_state`].

use std::borrow::Cow;
use std::fmt::Debug;

use crate::error::AggregateError;
// The estimator is the estimators' (`estimate`); its path of old stays.
pub use crate::estimate::support_estimate;
use crate::estimate::{Channel, Estimator, Fit, FitOptions};
use crate::mechanism::{Mechanism, PureProtocol, Wire};

/// A streaming aggregator: reports go in one at a time, estimates come out.
pub trait Aggregator: Clone + Debug + Send + Sync + Wire {
    /// The mechanism whose reports this aggregates.
    type Mechanism: Mechanism<Aggregator = Self>;

    /// The mechanism this aggregator was built for.
    fn mechanism(&self) -> &Self::Mechanism;

    /// Validates `report` and adds it. A rejected report leaves the state unchanged.
    fn add(
        &mut self,
        report: &<Self::Mechanism as Mechanism>::Report,
    ) -> Result<(), AggregateError>;

    /// Adds everything `other` has aggregated. Both must be built for the same mechanism.
    fn merge(&mut self, other: &Self) -> Result<(), AggregateError>;

    /// Whether merging is exact: the same reports give the same state however they were
    /// split between aggregators and merged (integer counts, not floating-point sums).
    /// Simulations then fold many batches into one aggregator
    /// ([`crate::simulation::fold_batches`]).
    const EXACT_MERGE: bool = false;

    /// Number of reports aggregated.
    fn count(&self) -> u64;

    /// The raw unbiased frequency estimate of every item (may be negative; sums to about 1).
    fn raw_estimate(&self) -> Result<Vec<f64>, AggregateError>;

    /// The frequency estimate of `estimator` ([`crate::estimate`]), iterative ones with
    /// their default cap and tolerance.
    fn estimate(&self, estimator: Estimator) -> Result<Vec<f64>, AggregateError> {
        self.fit(estimator, &FitOptions::default())
            .map(|fit| fit.values)
    }

    /// The estimate of `estimator`, and how it stopped: the raw-only estimators post-process
    /// [`Aggregator::raw_estimate`], the others read [`Aggregator::support_counts`] through
    /// [`Aggregator::channel`].
    ///
    /// ```
    /// use ldp_core::estimate::{FitOptions, Stop};
    /// use ldp_core::{Aggregator, DomainSize, Epsilon, Estimator, Grr, GrrReport, Mechanism};
    /// let grr = Grr::new(DomainSize::new(3)?, Epsilon::new(2.0)?)?;
    /// let mut server = grr.aggregator();
    /// for y in [0, 0, 0, 1, 2, 0] {
    ///     server.add(&GrrReport { y })?;
    /// }
    /// let fit = server.fit(Estimator::Ibu, &FitOptions::default())?;
    /// assert_eq!(fit.stop, Stop::Tolerance);
    /// assert!((fit.values.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn fit(&self, estimator: Estimator, options: &FitOptions) -> Result<Fit, AggregateError> {
        if !estimator.needs_channel() {
            return estimator.apply(self.raw_estimate()?).map(Fit::direct);
        }
        if self.count() == 0 {
            return Err(AggregateError::Empty);
        }
        let missing = |why: &str| AggregateError::NeedsChannel {
            estimator: estimator.name(),
            why: why.into(),
        };
        // The cheap refusals first: the sketches compute their support counts.
        if self.coordinate_sums().is_some() {
            return Err(missing(
                "this aggregator keeps sums (SHE), not support counts",
            ));
        }
        let channel = self.channel().ok_or_else(|| {
            missing("these reports have no single (p*, q*) (the sketches, HR with blocks)")
        })?;
        let counts = self
            .support_counts()
            .ok_or_else(|| missing("this aggregator has no support counts"))?;
        estimator.from_counts(&counts, self.count(), channel, options)
    }

    /// The support law the channel-based estimators read the counts through: `(p*, q*)`
    /// of the mechanism's spec, where it has one.
    fn channel(&self) -> Option<Channel> {
        let spec = self.mechanism().spec();
        let (p, q) = spec.pure_probabilities()?;
        Some(Channel {
            p,
            q,
            one_item_per_report: spec.support_size_range() == Some((1, 1)),
        })
    }

    /// The state besides [`Aggregator::count`]: its counters or sums, what engines ship
    /// between workers and [`Aggregator::merge_state`] takes back.
    fn state_values(&self) -> StateValues<'_>;

    /// Adds a partial state of this aggregator's mechanism (and server options) shipped
    /// as `n` and [`Aggregator::state_values`], checked as a restored state is; a rejected
    /// state leaves this one unchanged.
    fn merge_state(&mut self, n: u64, values: StateValues<'_>) -> Result<(), AggregateError>;

    /// The support count of every item: kept by support-counting aggregators, computed by
    /// those that count outputs; `None` for one that keeps sums (SHE).
    fn support_counts(&self) -> Option<Cow<'_, [u64]>> {
        None
    }

    /// The coordinate-wise sums (after clipping), for an aggregator that keeps sums (SHE);
    /// `None` for one that keeps counts.
    fn coordinate_sums(&self) -> Option<&[f64]> {
        match self.state_values() {
            StateValues::Sums(sums) => Some(sums),
            StateValues::Counts(_) => None,
        }
    }
}

/// An aggregator's state as numbers: counters or sums.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StateValues<'a> {
    /// Counters: support counts per item, or counts per output cell.
    Counts(&'a [u64]),
    /// Sums of real numbers per item (SHE).
    Sums(&'a [f64]),
}

impl StateValues<'_> {
    /// The counters, or an error naming what was expected.
    pub fn counts(self) -> Result<Vec<u64>, AggregateError> {
        match self {
            StateValues::Counts(c) => Ok(c.to_vec()),
            StateValues::Sums(_) => Err(AggregateError::CorruptState {
                reason: "expected counters, got sums".into(),
            }),
        }
    }

    /// The sums, or an error naming what was expected.
    pub fn sums(self) -> Result<Vec<f64>, AggregateError> {
        match self {
            StateValues::Sums(s) => Ok(s.to_vec()),
            StateValues::Counts(_) => Err(AggregateError::CorruptState {
                reason: "expected sums, got counters".into(),
            }),
        }
    }
}

/// Two aggregators merge only when built for the same mechanism (equal specs).
pub(crate) fn check_same<M: Mechanism>(left: &M, right: &M) -> Result<(), AggregateError> {
    if left == right {
        Ok(())
    } else {
        Err(AggregateError::Incompatible {
            left: format!("{:?}", left.spec()),
            right: format!("{:?}", right.spec()),
        })
    }
}

/// `n + more`, or the overflow error (reachable only from a restored state).
#[inline]
pub(crate) fn checked_count(n: u64, more: u64) -> Result<u64, AggregateError> {
    n.checked_add(more).ok_or(AggregateError::CountOverflow)
}

/// Checks the counts of a restored state: one per item of the k, none above the `n`
/// reports. Returns their total.
pub(crate) fn check_counts(k: usize, n: u64, counts: &[u64]) -> Result<u128, AggregateError> {
    let corrupt = |reason: String| Err(AggregateError::CorruptState { reason });
    if counts.len() != k {
        return corrupt(format!("{} counts for a domain of {k} items", counts.len()));
    }
    if let Some(i) = counts.iter().position(|&c| c > n) {
        return corrupt(format!(
            "count of item {i} exceeds the number of reports {n}"
        ));
    }
    Ok(counts.iter().map(|&c| u128::from(c)).sum())
}

/// Support counts of a pure protocol: `counts[i]` is the number of reports supporting item
/// `i`, `n` the number of reports.
///
/// ```
/// use ldp_core::{Aggregator, DomainSize, Epsilon, Grr, Mechanism, GrrReport};
/// let grr = Grr::new(DomainSize::new(3)?, Epsilon::new(1.0)?)?;
/// let mut agg = grr.aggregator();
/// agg.add(&GrrReport { y: 2 })?;
/// assert!(agg.add(&GrrReport { y: 3 }).is_err()); // outside 0..3, state unchanged
/// assert_eq!(agg.count(), 1);
/// assert_eq!(agg.counts(), &[0, 0, 1]);
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(
        try_from = "SupportCountsState<M>",
        bound(
            serialize = "M: serde::Serialize",
            deserialize = "M: PureProtocol + serde::de::DeserializeOwned"
        )
    )
)]
pub struct SupportCounts<M> {
    mechanism: M,
    n: u64,
    counts: Vec<u64>,
}

/// The serialized form of [`SupportCounts`], checked on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SupportCountsState<M> {
    mechanism: M,
    n: u64,
    counts: Vec<u64>,
}

#[cfg(feature = "serde")]
impl<M: PureProtocol> TryFrom<SupportCountsState<M>> for SupportCounts<M> {
    type Error = AggregateError;
    fn try_from(s: SupportCountsState<M>) -> Result<Self, AggregateError> {
        SupportCounts::restore(s.mechanism, s.n, s.counts)
    }
}

impl<M: PureProtocol> SupportCounts<M> {
    /// An empty aggregator for `mechanism`.
    pub fn new(mechanism: M) -> Self {
        let k = mechanism.domain_size().as_usize();
        Self {
            mechanism,
            n: 0,
            counts: vec![0; k],
        }
    }

    /// A state restored from its parts (a stored or shipped partial aggregate), checked
    /// for consistency: one count per item, none above `n`, and a total that `n` reports
    /// could have produced (each supports between [`crate::Support::support_size_range`]
    /// items: GRR exactly one, SS exactly omega).
    ///
    /// ```
    /// use ldp_core::{DomainSize, Epsilon, Grr, SupportCounts};
    /// let grr = Grr::new(DomainSize::new(2)?, Epsilon::new(1.0)?)?;
    /// assert!(SupportCounts::restore(grr.clone(), 2, vec![1, 1]).is_ok());
    /// assert!(SupportCounts::restore(grr, 1, vec![1, 1]).is_err()); // one GRR report, two supports
    /// # Ok::<(), ldp_core::Error>(())
    /// ```
    pub fn restore(mechanism: M, n: u64, counts: Vec<u64>) -> Result<Self, AggregateError> {
        let corrupt = |reason: String| Err(AggregateError::CorruptState { reason });
        let total = check_counts(mechanism.domain_size().as_usize(), n, &counts)?;
        let (lo, hi) = mechanism.support_size_range();
        let (lo, hi) = (
            u128::from(lo) * u128::from(n),
            u128::from(hi) * u128::from(n),
        );
        if !(lo..=hi).contains(&total) {
            return corrupt(format!(
                "the counts add up to {total}, but {n} reports support between {lo} and {hi} items in all"
            ));
        }
        Ok(Self {
            mechanism,
            n,
            counts,
        })
    }

    /// Support count of every item.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Validates and adds `report` like [`Aggregator::add`], and also hands every
    /// supported item to `visit`: code that needs the support (an attack) gets it without
    /// computing it a second time (for local hashing that is k hashes per report).
    #[inline]
    pub fn add_with(
        &mut self,
        report: &M::Report,
        visit: impl FnMut(u32),
    ) -> Result<(), AggregateError> {
        self.mechanism.validate(report)?;
        let n = checked_count(self.n, 1)?;
        let counts = &mut self.counts;
        // Counts never exceed n, so they cannot overflow once n does not.
        self.mechanism.add_support(report, counts, visit);
        self.n = n;
        Ok(())
    }
}

impl<M: PureProtocol<Aggregator = Self>> Aggregator for SupportCounts<M> {
    type Mechanism = M;

    const EXACT_MERGE: bool = true;

    fn mechanism(&self) -> &M {
        &self.mechanism
    }

    #[inline]
    fn add(&mut self, report: &M::Report) -> Result<(), AggregateError> {
        self.add_with(report, |_| {})
    }

    fn merge(&mut self, other: &Self) -> Result<(), AggregateError> {
        check_same(&self.mechanism, &other.mechanism)?;
        self.n = checked_count(self.n, other.n)?;
        // Each count is at most its n, so the sums are at most the (checked) total.
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        Ok(())
    }

    fn count(&self) -> u64 {
        self.n
    }

    fn state_values(&self) -> StateValues<'_> {
        StateValues::Counts(&self.counts)
    }

    fn merge_state(&mut self, n: u64, values: StateValues<'_>) -> Result<(), AggregateError> {
        let partial = SupportCounts::restore(self.mechanism.clone(), n, values.counts()?)?;
        self.merge(&partial)
    }

    fn support_counts(&self) -> Option<Cow<'_, [u64]>> {
        Some(Cow::Borrowed(&self.counts))
    }

    /// The paper's unbiased estimator from the support counts ([`support_estimate`]).
    fn raw_estimate(&self) -> Result<Vec<f64>, AggregateError> {
        let (p, q) = (self.mechanism.p_star(), self.mechanism.q_star());
        support_estimate(&self.counts, self.n, p, q)
    }
}
