//! Server side: streaming, mergeable aggregation state and estimation.
//!
//! Pure protocols keep one `u64` support count per item ([`SupportCounts`]); SHE keeps one
//! `f64` sum per coordinate ([`SheSums`]). Both serialize, so partial aggregates can be
//! stored, shipped and merged.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{AggregateError, ParamError, ReportError};
use crate::estimate::Estimator;
use crate::families::histogram::SummationHistogram;
use crate::mechanism::{Mechanism, PureProtocol};

/// A streaming aggregator: reports go in one at a time, estimates come out.
pub trait Aggregator: Clone + Debug + Send + Sync + Serialize + DeserializeOwned {
    /// The mechanism whose reports this aggregates.
    type Mechanism: Mechanism<Aggregator = Self>;

    /// The mechanism this aggregator was built for.
    fn mechanism(&self) -> &Self::Mechanism;

    /// Validates `report` and adds it. An invalid report leaves the state unchanged.
    fn add(&mut self, report: &<Self::Mechanism as Mechanism>::Report) -> Result<(), ReportError>;

    /// Adds everything `other` has aggregated. Both must be built for the same mechanism.
    fn merge(&mut self, other: &Self) -> Result<(), AggregateError>;

    /// Number of reports aggregated.
    fn count(&self) -> u64;

    /// The raw unbiased frequency estimate of every item (may be negative; sums to about 1).
    fn raw_estimate(&self) -> Result<Vec<f64>, AggregateError>;

    /// The frequency estimate after the chosen post-processing.
    fn estimate(&self, estimator: Estimator) -> Result<Vec<f64>, AggregateError> {
        Ok(estimator.apply(self.raw_estimate()?))
    }
}

fn check_same<M: Mechanism>(left: &M, right: &M) -> Result<(), AggregateError> {
    if left == right {
        Ok(())
    } else {
        Err(AggregateError::Incompatible {
            left: format!("{left:?}"),
            right: format!("{right:?}"),
        })
    }
}

/// Support counts of a pure protocol: `counts[i]` is the number of reports supporting item
/// `i`, `n` the number of reports.
///
/// ```
/// use ldp_core::{Aggregator, DomainSize, Epsilon, Grr, Mechanism, GrrReport};
/// let grr = Grr::new(DomainSize::new(3)?, Epsilon::new(1.0)?);
/// let mut agg = grr.aggregator();
/// agg.add(&GrrReport { y: 2 })?;
/// assert!(agg.add(&GrrReport { y: 3 }).is_err()); // outside 0..3, state unchanged
/// assert_eq!(agg.count(), 1);
/// assert_eq!(agg.counts(), &[0, 0, 1]);
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    try_from = "SupportCountsState<M>",
    bound(
        serialize = "M: Serialize",
        deserialize = "M: PureProtocol + DeserializeOwned"
    )
)]
pub struct SupportCounts<M> {
    mechanism: M,
    n: u64,
    counts: Vec<u64>,
}

/// The serialized form of [`SupportCounts`], checked on the way in.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SupportCountsState<M> {
    mechanism: M,
    n: u64,
    counts: Vec<u64>,
}

impl<M: PureProtocol> TryFrom<SupportCountsState<M>> for SupportCounts<M> {
    type Error = AggregateError;
    fn try_from(s: SupportCountsState<M>) -> Result<Self, AggregateError> {
        let k = s.mechanism.domain_size().as_usize();
        if s.counts.len() != k {
            return Err(AggregateError::CorruptState {
                reason: format!("{} counts for a domain of {k} items", s.counts.len()),
            });
        }
        if let Some(i) = s.counts.iter().position(|&c| c > s.n) {
            return Err(AggregateError::CorruptState {
                reason: format!("count of item {i} exceeds the number of reports {}", s.n),
            });
        }
        Ok(Self {
            mechanism: s.mechanism,
            n: s.n,
            counts: s.counts,
        })
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
        mut visit: impl FnMut(u32),
    ) -> Result<(), ReportError> {
        self.mechanism.validate(report)?;
        let counts = &mut self.counts;
        self.mechanism.for_each_supported(report, |i| {
            counts[i as usize] += 1;
            visit(i);
        });
        self.n += 1;
        Ok(())
    }
}

impl<M: PureProtocol<Aggregator = Self>> Aggregator for SupportCounts<M> {
    type Mechanism = M;

    fn mechanism(&self) -> &M {
        &self.mechanism
    }

    #[inline]
    fn add(&mut self, report: &M::Report) -> Result<(), ReportError> {
        self.add_with(report, |_| {})
    }

    fn merge(&mut self, other: &Self) -> Result<(), AggregateError> {
        check_same(&self.mechanism, &other.mechanism)?;
        self.n += other.n;
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        Ok(())
    }

    fn count(&self) -> u64 {
        self.n
    }

    /// Paper Eq. "estimator": `f_i = (C_i - n q*) / (n (p* - q*))`.
    fn raw_estimate(&self) -> Result<Vec<f64>, AggregateError> {
        if self.n == 0 {
            return Err(AggregateError::Empty);
        }
        let n = self.n as f64;
        let (p, q) = (self.mechanism.p_star(), self.mechanism.q_star());
        if p <= q {
            // eps so small that p* and q* coincide in floating point: reports carry no
            // usable signal, and the estimator would divide by zero.
            return Err(AggregateError::Uninformative { p, q });
        }
        let scale = 1.0 / (n * (p - q));

        Ok(self
            .counts
            .iter()
            .map(|&c| (c as f64 - n * q) * scale)
            .collect())
    }
}

/// SHE's aggregate: the coordinate-wise sum of the noisy vectors, optionally after
/// clipping every coordinate to `[-clip, clip]`.
///
/// Without clipping, a single fake report can move the estimate arbitrarily far (its
/// coordinates are any reals); clipping bounds that at the price of a small bias on
/// genuine reports (below `b e^(-(clip - 1)/b)` per coordinate, `b = 2/eps`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SheSumsState")]
pub struct SheSums {
    mechanism: SummationHistogram,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    clip: Option<f64>,
    n: u64,
    sums: Vec<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SheSumsState {
    mechanism: SummationHistogram,
    #[serde(default)]
    clip: Option<f64>,
    n: u64,
    sums: Vec<f64>,
}

impl TryFrom<SheSumsState> for SheSums {
    type Error = AggregateError;
    fn try_from(s: SheSumsState) -> Result<Self, AggregateError> {
        let k = s.mechanism.domain_size().as_usize();
        if s.sums.len() != k || s.sums.iter().any(|v| !v.is_finite()) {
            return Err(AggregateError::CorruptState {
                reason: format!("expected {k} finite sums"),
            });
        }
        if let Some(c) = s.clip
            && !(c.is_finite() && c > 0.0)
        {
            return Err(AggregateError::CorruptState {
                reason: format!("clipping bound {c} is not a positive number"),
            });
        }
        Ok(Self {
            mechanism: s.mechanism,
            clip: s.clip,
            n: s.n,
            sums: s.sums,
        })
    }
}

impl SheSums {
    /// An empty aggregator for `mechanism`.
    pub fn new(mechanism: SummationHistogram) -> Self {
        let k = mechanism.domain_size().as_usize();
        Self {
            mechanism,
            clip: None,
            n: 0,
            sums: vec![0.0; k],
        }
    }

    /// An empty aggregator that clips every report coordinate to `[-bound, bound]`.
    /// `bound` must be finite and at least 1 (the one-hot value).
    pub fn clipped(mechanism: SummationHistogram, bound: f64) -> Result<Self, ParamError> {
        if !(bound.is_finite() && bound >= 1.0) {
            return Err(ParamError::ClipBound { value: bound });
        }
        Ok(Self {
            clip: Some(bound),
            ..Self::new(mechanism)
        })
    }

    /// The clipping bound, if any.
    pub fn clip(&self) -> Option<f64> {
        self.clip
    }

    /// The coordinate-wise sums.
    pub fn sums(&self) -> &[f64] {
        &self.sums
    }
}

impl Aggregator for SheSums {
    type Mechanism = SummationHistogram;

    fn mechanism(&self) -> &SummationHistogram {
        &self.mechanism
    }

    fn add(&mut self, report: &crate::report::SheReport) -> Result<(), ReportError> {
        self.mechanism.validate(report)?;
        match self.clip {
            None => self
                .sums
                .iter_mut()
                .zip(&report.y)
                .for_each(|(s, v)| *s += v),
            Some(c) => self
                .sums
                .iter_mut()
                .zip(&report.y)
                .for_each(|(s, v)| *s += v.clamp(-c, c)),
        }
        self.n += 1;
        Ok(())
    }

    fn merge(&mut self, other: &Self) -> Result<(), AggregateError> {
        check_same(&self.mechanism, &other.mechanism)?;
        if self.clip != other.clip {
            return Err(AggregateError::Incompatible {
                left: format!("clip {:?}", self.clip),
                right: format!("clip {:?}", other.clip),
            });
        }
        self.n += other.n;
        for (s, o) in self.sums.iter_mut().zip(&other.sums) {
            *s += o;
        }
        Ok(())
    }

    fn count(&self) -> u64 {
        self.n
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
