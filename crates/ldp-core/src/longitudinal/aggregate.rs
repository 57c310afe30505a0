//! The server side of a longitudinal protocol: support counts and the chained estimator.

use crate::aggregate::{check_counts, checked_count, support_estimate};
use crate::error::AggregateError;
use crate::estimate::{Channel, Estimator, Fit, FitOptions};

use super::{Longitudinal, LongitudinalReport, Round};

/// Support counts of a longitudinal protocol's reports. One report is distributed as a
/// pure protocol with the chained `(p_s, q_s)`, so the unbiased estimate is paper Eq.
/// "estimator" with those: `f_i = (C_i - n q_s) / (n (p_s - q_s))`.
///
/// Reports of one user at different collections are correlated (they share the memo), but
/// each is unbiased for its population, so a collection's reports are aggregated alone
/// (one aggregator per day, say) and estimates of several days may be averaged.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "CountsState")
)]
pub struct LongitudinalCounts {
    protocol: Longitudinal,
    n: u64,
    counts: Vec<u64>,
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CountsState {
    protocol: Longitudinal,
    n: u64,
    counts: Vec<u64>,
}

#[cfg(feature = "serde")]
impl TryFrom<CountsState> for LongitudinalCounts {
    type Error = AggregateError;
    fn try_from(s: CountsState) -> Result<Self, AggregateError> {
        LongitudinalCounts::restore(s.protocol, s.n, s.counts)
    }
}

impl LongitudinalCounts {
    /// An empty aggregator.
    pub fn new(protocol: Longitudinal) -> Self {
        let k = protocol.domain_size().as_usize();
        Self {
            protocol,
            n: 0,
            counts: vec![0; k],
        }
    }

    /// A state restored from its parts, checked: one count per item, none above `n`, and
    /// for L-GRR (one supported item per report) a total of exactly `n`.
    pub fn restore(
        protocol: Longitudinal,
        n: u64,
        counts: Vec<u64>,
    ) -> Result<Self, AggregateError> {
        let total = check_counts(protocol.domain_size().as_usize(), n, &counts)?;
        if protocol.reports_items() && total != u128::from(n) {
            return Err(AggregateError::CorruptState {
                reason: format!("{n} L-GRR reports support {n} items, not {total}"),
            });
        }
        Ok(Self {
            protocol,
            n,
            counts,
        })
    }

    /// The protocol.
    pub fn protocol(&self) -> &Longitudinal {
        &self.protocol
    }

    /// Validates and adds one report; on error the state is unchanged.
    pub fn add(&mut self, report: &LongitudinalReport) -> Result<(), AggregateError> {
        self.protocol.validate(report)?;
        let n = checked_count(self.n, 1)?;
        let counts = &mut self.counts;
        self.protocol
            .for_each_supported(report, |i| counts[i as usize] += 1);
        self.n = n;
        Ok(())
    }

    /// Adds another aggregator's reports (of the same protocol instance).
    pub fn merge(&mut self, other: &Self) -> Result<(), AggregateError> {
        if self.protocol != other.protocol {
            return Err(AggregateError::Incompatible {
                left: format!("{:?}", self.protocol.params()),
                right: format!("{:?}", other.protocol.params()),
            });
        }
        self.n = checked_count(self.n, other.n)?;
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        Ok(())
    }

    /// Reports aggregated.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Support count of every item.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The unbiased estimate with the chained probabilities.
    pub fn raw_estimate(&self) -> Result<Vec<f64>, AggregateError> {
        let Round { p, q } = self.protocol.chained();
        support_estimate(&self.counts, self.n, p, q)
    }

    /// The estimate of `estimator`, iterative ones with their default cap and tolerance.
    pub fn estimate(&self, estimator: Estimator) -> Result<Vec<f64>, AggregateError> {
        self.fit(estimator, &FitOptions::default())
            .map(|fit| fit.values)
    }

    /// The estimate of `estimator` and how it stopped, the counts read through the
    /// chained probabilities (one item per report for L-GRR).
    pub fn fit(&self, estimator: Estimator, options: &FitOptions) -> Result<Fit, AggregateError> {
        let Round { p, q } = self.protocol.chained();
        let channel = Channel {
            p,
            q,
            one_item_per_report: self.protocol.reports_items(),
        };
        estimator.from_counts(&self.counts, self.n, channel, options)
    }
}
