//! The count-mean sketch (CMS) as published: a client with item x picks a row j of h,
//! one-hot encodes `h_j(x)` over the m columns and perturbs every bit independently as
//! symmetric unary encoding does at eps/2 per bit (keep the true bit with probability
//! `e^(eps/2) / (1 + e^(eps/2))`, set each other one with the complement): `log2 h + m`
//! bits, drawn in O(1 + m q).
//!
//! The report is the set of sketch cells it sets, an [`OnesReport`] over `h (m + 1)`
//! indices: its one-bits `j m + v`, then the row's own cell `h m + j` (so the row is known
//! even without one-bits). The server counts them, O(1 + m q) per report, and debiases
//! each row into `S_j[v] = h (c ones_jv - (c - 1) n_j / 2)` with
//! `c = (e^(eps/2) + 1) / (e^(eps/2) - 1)` (Apple's `h ((c/2) v + 1/2)` summed over the
//! row's ±1 vectors), then estimates as every sketch does (`estimate_from_sketch` in the sketch module).

use std::ops::ControlFlow;

use rand::{Rng, RngExt};

use super::{check_shape, column, estimate_from_sketch, for_each_column_block};
use crate::attack_surface::{AttackSurface, MaxGain};
use crate::error::{AggregateError, ItemOutOfRange, ParamError, ReportError};
use crate::exact_outputs::{Coverage, ExactOutputs, TooManyOutputs};
use crate::families::bits::IndependentBits;
use crate::families::unary::symmetric_p;
use crate::families::{FamilyMechanism, FamilyParams};
use crate::mechanism::{
    Mechanism, Support, check_runnable, eq_by_spec, two_valued_log_likelihoods,
};
use crate::output_counts::{CountedOutputs, OutputCounts};
use crate::report::{OnesReport, ReportLimits, check_sorted_distinct};
use crate::server::Clip;
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

/// `(p, q)` of each bit: symmetric unary encoding's at eps/2 per bit,
/// `p = e^(eps/2) / (1 + e^(eps/2))` and `q = 1 - p`.
pub fn bit_probabilities(eps: Epsilon) -> (f64, f64) {
    let p = symmetric_p(eps);
    (p, 1.0 - p)
}

/// `c = (e^(eps/2) + 1) / (e^(eps/2) - 1) = 1 / (2p - 1)`.
pub fn debias(eps: Epsilon) -> f64 {
    let half = eps.get() / 2.0;
    (1.0 + (-half).exp()) / -(-half).exp_m1()
}

/// The count-mean sketch (module docs).
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Mechanism};
/// use ldp_core::families::sketch::cms::CountMeanSketch;
/// use ldp_core::simulation::{stream_rng, Role};
/// let cms = CountMeanSketch::new(DomainSize::new(100_000)?, Epsilon::new(2.0)?, 256, 1024)?;
/// let report = cms.perturb(42, &mut stream_rng(1, 0, Role::Genuine, 0))?;
/// let row = report.ones.last().unwrap() - 256 * 1024; // the row's own cell comes last
/// assert!(row < 256);
/// assert!(report.ones.iter().rev().skip(1).all(|&c| c / 1024 == row));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct CountMeanSketch {
    k: DomainSize,
    eps: Epsilon,
    hashes: u32,
    width: u32,
    /// The row's bits: symmetric unary encoding over the m columns.
    bits: IndependentBits,
    /// `ln h`, taken once (the MAP attack asks two likelihoods per report).
    ln_hashes: f64,
}

impl CountMeanSketch {
    /// CMS with `hashes` rows of `width` columns.
    pub fn new(k: DomainSize, eps: Epsilon, hashes: u32, width: u32) -> Result<Self, ParamError> {
        check_shape(hashes, width, 1, false)?;
        check_runnable(k, eps)?;
        let (p, q) = bit_probabilities(eps);
        let columns = DomainSize::new(width).expect("width >= 2");
        Ok(Self {
            k,
            eps,
            hashes,
            width,
            bits: IndependentBits::new(columns, Epsilon::new(eps.get() / 2.0)?, p, q)?,
            ln_hashes: f64::from(hashes).ln(),
        })
    }

    /// The preset: [`super::preset`].
    pub fn optimized(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        let (h, m) = super::preset();
        Self::new(k, eps, h, m)
    }

    /// h, the sketch rows.
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// m, the sketch columns.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The first index of the rows' own cells, `h m`.
    fn markers(&self) -> u32 {
        self.hashes * self.width
    }

    /// Moves a row's one-bits (columns `0..m`) to the row's cells, and appends the row's
    /// own cell.
    fn place_in_row(&self, row: u32, report: &mut OnesReport) {
        let offset = row * self.width;
        report.ones.iter_mut().for_each(|c| *c += offset);
        report.ones.push(self.markers() + row);
    }

    /// A valid report's row, and its one-bits' columns.
    fn split<'a>(&self, report: &'a OnesReport) -> (u32, impl Iterator<Item = u32> + 'a) {
        let (&marker, cells) = report.ones.split_last().expect("a valid report");
        let row = marker - self.markers();
        let m = self.width;
        (row, cells.iter().map(move |&c| c - row * m))
    }
}

eq_by_spec!(CountMeanSketch);

impl Mechanism for CountMeanSketch {
    type Report = OnesReport;
    type Aggregator = OutputCounts<CountMeanSketch>;

    fn spec(&self) -> Spec {
        Spec::from_parts(
            self.k,
            self.eps,
            FamilyParams::CountMeanSketch {
                hashes: self.hashes,
                width: self.width,
            },
        )
    }

    #[inline]
    fn perturb<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<OnesReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        let row = rng.random_range(0..self.hashes);
        let mut report = self
            .bits
            .perturb(column(item, row, self.width), rng)
            .expect("a column is below the width");
        self.place_in_row(row, &mut report);
        Ok(report)
    }

    /// [`Mechanism::perturb`] into `report`'s memory: a report holds about `m q` cells.
    #[inline]
    fn perturb_into<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
        report: &mut OnesReport,
    ) -> Result<(), ItemOutOfRange> {
        self.k.check_item(item)?;
        let row = rng.random_range(0..self.hashes);
        self.bits
            .perturb_into(column(item, row, self.width), rng, report)
            .expect("a column is below the width");
        self.place_in_row(row, report);
        Ok(())
    }

    /// Sorted distinct cells below `h (m + 1)`, exactly one of them a row's own cell (the
    /// last), and the others in that row.
    fn validate(&self, report: &OnesReport) -> Result<(), ReportError> {
        let bound = self.markers() + self.hashes;
        check_sorted_distinct("ones", &report.ones, bound)?;
        let Some((&marker, cells)) = report.ones.split_last() else {
            return Err(ReportError::Shape {
                expected: "the row's own cell h m + j as the last entry of `ones`",
            });
        };
        if marker < self.markers() {
            return Err(ReportError::Shape {
                expected: "the row's own cell h m + j as the last entry of `ones`",
            });
        }
        let row = marker - self.markers();
        let (lo, hi) = (row * self.width, (row + 1) * self.width);
        // Sorted: cells below the row's come first, cells above it last.
        let below = cells.first().filter(|&&c| c < lo);
        let above = cells.get(cells.partition_point(|&c| c < hi));
        match below.or(above) {
            Some(&c) => Err(ReportError::OutOfRange {
                field: "ones",
                value: u64::from(c),
                bound: u64::from(hi),
            }),
            None => Ok(()),
        }
    }

    /// `-ln h` plus the row's bits' log-likelihood.
    fn log_likelihood(&self, report: &OnesReport, item: u32) -> f64 {
        // The row's one-bits: every cell but the row's own.
        let set = report.ones.len() - 1;
        self.bits
            .log_likelihood_given(set, self.supports(report, item))
            - self.ln_hashes
    }

    fn log_likelihoods(&self, report: &OnesReport, out: &mut Vec<f64>) {
        // The row's one-bits: every cell but the row's own.
        let set = report.ones.len() - 1;
        let given = |has_x| self.bits.log_likelihood_given(set, has_x) - self.ln_hashes;
        two_valued_log_likelihoods(self, report, given(true), given(false), out);
    }

    fn aggregator(&self) -> OutputCounts<CountMeanSketch> {
        OutputCounts::new(self.clone())
    }
}

impl Support for CountMeanSketch {
    /// The items whose column in the report's row is set: the domain's columns hashed a
    /// block of items at a time, each looked up in the report's sorted cells when the
    /// domain is small beside the row, else in a bitmap of the row.
    fn for_each_supported(&self, report: &OnesReport, mut visit: impl FnMut(u32)) {
        let (row, columns) = self.split(report);
        let (cells, k) = (&report.ones[..report.ones.len() - 1], self.k.get());
        let offset = row * self.width;
        let searches = k as usize * (usize::BITS - cells.len().leading_zeros()) as usize;
        if searches <= self.width as usize + cells.len() {
            for_each_column_block(k, row, self.width, |base, block| {
                for (item, &c) in (base..).zip(block) {
                    if cells.binary_search(&(offset + c)).is_ok() {
                        visit(item);
                    }
                }
                ControlFlow::Continue(())
            });
        } else {
            let mut set = vec![false; self.width as usize];
            columns.for_each(|c| set[c as usize] = true);
            for_each_column_block(k, row, self.width, |base, block| {
                for (item, &c) in (base..).zip(block) {
                    if set[c as usize] {
                        visit(item);
                    }
                }
                ControlFlow::Continue(())
            });
        }
    }

    fn supports(&self, report: &OnesReport, item: u32) -> bool {
        let (row, _) = self.split(report);
        let cell = row * self.width + column(item, row, self.width);
        report.ones.binary_search(&cell).is_ok()
    }

    /// An item's column is set with probability about `(p + (m - 1) q) / m`: the attack
    /// guesses by rejection in O(m / set bits) tests where the scan hashes all k items.
    fn scanned_support_mean(&self) -> Option<f64> {
        let (p, q, m) = (self.bits.p, self.bits.q, f64::from(self.width));
        Some(self.k.as_f64() * (p + (m - 1.0) * q) / m)
    }
}

impl CountedOutputs for CountMeanSketch {
    /// `h m` one-bit counters, then one report counter per row.
    fn cells(&self) -> usize {
        (self.markers() + self.hashes) as usize
    }

    fn cells_per_report(&self) -> (u32, u32) {
        (1, 1 + self.width)
    }

    /// The report's entries are its cells.
    #[inline]
    fn for_each_cell(&self, report: &OnesReport, mut visit: impl FnMut(usize)) {
        report.ones.iter().for_each(|&c| visit(c as usize));
    }

    /// `c_x = sum_j ones_{j, h_j(x)}`, over the rows some report chose (the others
    /// add nothing): O(k) for one report, not O(h k).
    fn support_counts(&self, cells: &[u64], _: u64) -> Vec<u64> {
        let m = self.width;
        let (_, reports) = cells.split_at(self.markers() as usize);
        let rows: Vec<u32> = (0..self.hashes)
            .filter(|&j| reports[j as usize] > 0)
            .collect();
        (0..self.k.get())
            .map(|item| {
                rows.iter()
                    .map(|&j| cells[(j * m + column(item, j, m)) as usize])
                    .sum()
            })
            .collect()
    }

    /// `S_j[v] = h (c ones_jv - (c - 1) n_j / 2)`, then the sketch estimate.
    fn estimate_from_cells(&self, cells: &[u64], n: u64) -> Result<Vec<f64>, AggregateError> {
        let c = debias(self.eps);
        if !c.is_finite() {
            return Err(AggregateError::Uninformative { p: 0.5, q: 0.5 });
        }
        let (m, h) = (self.width as usize, f64::from(self.hashes));
        let (ones, rows) = cells.split_at(self.markers() as usize);
        let sketch: Vec<f64> = ones
            .chunks_exact(m)
            .zip(rows)
            .flat_map(|(row, &n_j)| {
                let base = (c - 1.0) / 2.0 * n_j as f64;
                row.iter().map(move |&o| h * (c * o as f64 - base))
            })
            .collect();
        Ok(estimate_from_sketch(
            &sketch,
            self.hashes,
            self.width,
            self.k.get(),
            n,
        ))
    }
}

impl FamilyMechanism for CountMeanSketch {
    fn check(_: DomainSize, _: Epsilon, (hashes, width): (u32, u32)) -> Result<(), ParamError> {
        check_shape(hashes, width, 1, false)
    }

    fn build(k: DomainSize, eps: Epsilon, (hashes, width): (u32, u32)) -> Result<Self, ParamError> {
        Self::new(k, eps, hashes, width)
    }

    fn alternatives(k: DomainSize, eps: Epsilon) -> Vec<(u32, u32)> {
        super::shape_grid(|shape| Self::check(k, eps, shape).is_ok())
    }

    /// Not pure: another item supports a report with a probability that depends on the
    /// share of rows where it shares x's column.
    fn probabilities(_: DomainSize, _: Epsilon, _: (u32, u32)) -> Option<(f64, f64)> {
        None
    }

    fn support_size_range(k: DomainSize, _: (u32, u32)) -> Option<(u32, u32)> {
        Some((0, k.get()))
    }

    /// Up to m one-bits and the row's cell, among `h (m + 1)` cells.
    fn report_limits(_: DomainSize, (hashes, width): (u32, u32)) -> ReportLimits {
        let cells = u64::from(hashes) * (u64::from(width) + 1);
        ReportLimits {
            values: u32::try_from(cells).unwrap_or(u32::MAX),
            entries: width.saturating_add(1),
            seeds: 0,
        }
    }
}

impl AttackSurface for CountMeanSketch {
    crate::attack_surface::support_attack_surface!(output_counts);

    /// Row 0 with every bit set: it supports, and adds the most to, every target.
    fn plan_max_gain(&self, targets: &[u32], _: Clip) -> MaxGain<OnesReport> {
        let mut ones: Vec<u32> = (0..self.width).collect();
        ones.push(self.markers());
        MaxGain {
            fixed: Some(OnesReport { ones }),
            supported: targets.len() as u32,
        }
    }

    /// A uniform row and uniform bits.
    fn random_output<R: Rng + ?Sized>(&self, _: Clip, rng: &mut R) -> OnesReport {
        let row = rng.random_range(0..self.hashes);
        let mut ones: Vec<u32> = (0..self.width)
            .filter(|_| rng.random::<bool>())
            .map(|c| row * self.width + c)
            .collect();
        ones.push(self.markers() + row);
        OnesReport { ones }
    }

    /// Every output: each row with each pattern of its m bits (`2^m h` outputs; refused
    /// beyond 64 bits of patterns).
    fn exact_outputs(
        &self,
        limit: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = OnesReport>>, TooManyOutputs> {
        let (h, m, markers) = (self.hashes, self.width, self.markers());
        let outputs = 1u64
            .checked_shl(m)
            .filter(|&n| n <= limit)
            .map(|n| n * u64::from(h))
            .ok_or(TooManyOutputs {
                outputs: u64::MAX,
                k: self.k.get(),
                limit,
            })?;
        TooManyOutputs::check(outputs, self.k, limit)?;
        let reports = (0..h).flat_map(move |row| {
            (0u64..1 << m).map(move |mask| {
                let mut ones: Vec<u32> = (0..m)
                    .filter(|c| mask >> c & 1 == 1)
                    .map(|c| row * m + c)
                    .collect();
                ones.push(markers + row);
                OnesReport { ones }
            })
        });
        Ok(ExactOutputs {
            outputs: reports,
            coverage: Coverage::Every,
        })
    }
}
