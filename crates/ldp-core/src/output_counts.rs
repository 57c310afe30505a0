//! The server of families whose reports fall in finitely many cells: count the cells, and
//! transform the counts once when estimating. Hadamard response counts its K outputs and
//! estimates with a fast Walsh-Hadamard transform, in O(n + K log K) rather than the
//! O(n k) of counting each report's support; fast local hashing counts (seed, value)
//! pairs and hashes each of its k' seeds over the domain once.

use std::borrow::Cow;

use crate::aggregate::{Aggregator, StateValues, check_same, checked_count};
use crate::error::AggregateError;
use crate::estimate::support_estimate;
use crate::mechanism::Mechanism;

/// A mechanism whose reports are counted by cells ([`OutputCounts`]).
pub trait CountedOutputs: Mechanism {
    /// The number of cells.
    fn cells(&self) -> usize;

    /// The fewest and the most cells one report increments (restored states are checked
    /// against it).
    fn cells_per_report(&self) -> (u32, u32);

    /// Calls `visit` for each cell a valid report increments.
    fn for_each_cell(&self, report: &Self::Report, visit: impl FnMut(usize));

    /// The support count of every item, from the cell counts of `n` reports.
    fn support_counts(&self, cells: &[u64], n: u64) -> Vec<u64>;

    /// The raw unbiased frequency estimate of every item from the cell counts of `n > 0`
    /// reports. The default is the pure protocols' `(c_x - n q*) / (n (p* - q*))` on
    /// [`CountedOutputs::support_counts`].
    fn estimate_from_cells(&self, cells: &[u64], n: u64) -> Result<Vec<f64>, AggregateError> {
        let (p, q) = self
            .spec()
            .pure_probabilities()
            .expect("a family without p* and q* estimates from its cells itself");
        support_estimate(&self.support_counts(cells, n), n, p, q)
    }
}

/// Counts of a mechanism's report cells: O(1) per report for a family whose report is one
/// cell (Hadamard response's column, fast local hashing's (seed, value)); the estimate
/// transforms the counts once ([`CountedOutputs::estimate_from_cells`]).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(
        try_from = "OutputCountsState<M>",
        bound(
            serialize = "M: serde::Serialize",
            deserialize = "M: CountedOutputs + serde::de::DeserializeOwned"
        )
    )
)]
pub struct OutputCounts<M> {
    mechanism: M,
    n: u64,
    counts: Vec<u64>,
}

/// The serialized form of [`OutputCounts`], checked on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputCountsState<M> {
    mechanism: M,
    n: u64,
    counts: Vec<u64>,
}

#[cfg(feature = "serde")]
impl<M: CountedOutputs> TryFrom<OutputCountsState<M>> for OutputCounts<M> {
    type Error = AggregateError;
    fn try_from(s: OutputCountsState<M>) -> Result<Self, AggregateError> {
        OutputCounts::restore(s.mechanism, s.n, s.counts)
    }
}

impl<M: CountedOutputs> OutputCounts<M> {
    /// An empty aggregator for `mechanism`.
    pub fn new(mechanism: M) -> Self {
        let cells = mechanism.cells();
        Self {
            mechanism,
            n: 0,
            counts: vec![0; cells],
        }
    }

    /// A state restored from its parts, checked for consistency: one count per cell, none
    /// above `n`, and a total that `n` reports could have produced.
    pub fn restore(mechanism: M, n: u64, counts: Vec<u64>) -> Result<Self, AggregateError> {
        let corrupt = |reason: String| Err(AggregateError::CorruptState { reason });
        if counts.len() != mechanism.cells() {
            return corrupt(format!(
                "{} counts for {} cells",
                counts.len(),
                mechanism.cells()
            ));
        }
        if let Some(i) = counts.iter().position(|&c| c > n) {
            return corrupt(format!(
                "count of cell {i} exceeds the number of reports {n}"
            ));
        }
        let total: u128 = counts.iter().map(|&c| u128::from(c)).sum();
        let (lo, hi) = mechanism.cells_per_report();
        let (lo, hi) = (
            u128::from(lo) * u128::from(n),
            u128::from(hi) * u128::from(n),
        );
        if !(lo..=hi).contains(&total) {
            return corrupt(format!(
                "the counts add up to {total}, but {n} reports increment between {lo} and {hi} cells in all"
            ));
        }
        Ok(Self {
            mechanism,
            n,
            counts,
        })
    }

    /// The count of every cell.
    pub fn cell_counts(&self) -> &[u64] {
        &self.counts
    }
}

impl<M: CountedOutputs<Aggregator = Self>> Aggregator for OutputCounts<M> {
    type Mechanism = M;

    const EXACT_MERGE: bool = true;

    fn mechanism(&self) -> &M {
        &self.mechanism
    }

    #[inline]
    fn add(&mut self, report: &M::Report) -> Result<(), AggregateError> {
        self.mechanism.validate(report)?;
        let n = checked_count(self.n, 1)?;
        let counts = &mut self.counts;
        // Each cell is incremented at most once per report, so counts stay below n.
        self.mechanism.for_each_cell(report, |c| counts[c] += 1);
        self.n = n;
        Ok(())
    }

    fn merge(&mut self, other: &Self) -> Result<(), AggregateError> {
        check_same(&self.mechanism, &other.mechanism)?;
        self.n = checked_count(self.n, other.n)?;
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        Ok(())
    }

    fn count(&self) -> u64 {
        self.n
    }

    fn raw_estimate(&self) -> Result<Vec<f64>, AggregateError> {
        if self.n == 0 {
            return Err(AggregateError::Empty);
        }
        self.mechanism.estimate_from_cells(&self.counts, self.n)
    }

    fn state_values(&self) -> StateValues<'_> {
        StateValues::Counts(&self.counts)
    }

    fn merge_state(&mut self, n: u64, values: StateValues<'_>) -> Result<(), AggregateError> {
        let partial = OutputCounts::restore(self.mechanism.clone(), n, values.counts()?)?;
        self.merge(&partial)
    }

    fn support_counts(&self) -> Option<Cow<'_, [u64]>> {
        Some(Cow::Owned(
            self.mechanism.support_counts(&self.counts, self.n),
        ))
    }
}
