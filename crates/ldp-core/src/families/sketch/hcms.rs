//! The Hadamard count-mean sketch (HCMS): one Hadamard coefficient of a sketch row.
//!
//! A client with item x picks a row j of h and a coefficient l of m (m a power of two),
//! both uniformly, and sends the sign of `H[l][h_j(x)]` (0 for +1, 1 for -1) kept with
//! probability `p = e^eps / (1 + e^eps)`: `log2 h + log2 m + 1` bits, in O(1). The report
//! is an [`LhReport`] with `seed = j m + l` and `y` the bit. The server counts the 2 h m
//! (row, coefficient, bit) cells and, per row, inverts the transform once:
//! `S_j[v] = h c sum_l H[l][v] (count(j, l, +) - count(j, l, -))` with
//! `c = (e^eps + 1) / (e^eps - 1)`, then estimates as every sketch does
//! (`estimate_from_sketch` in the sketch module). O(n + h m log m + h k).

use std::ops::ControlFlow;

use rand::{Rng, RngExt};
use rand_distr::{Bernoulli, Distribution};

use super::{check_shape, column, estimate_from_sketch, for_each_column_block};
use crate::attack_surface::{AttackSurface, MaxGain};
use crate::error::{AggregateError, ItemOutOfRange, ParamError, ReportError};
use crate::exact_outputs::{Coverage, ExactOutputs, TooManyOutputs};
use crate::families::{FamilyMechanism, FamilyParams};
use crate::mechanism::{
    Mechanism, Support, check_runnable, eq_by_spec, two_valued_log_likelihoods,
};
use crate::output_counts::{CountedOutputs, OutputCounts};
use crate::report::{LhReport, ReportLimits};
use crate::server::Clip;
use crate::spec::Spec;
use crate::transform::{hadamard_bit, walsh_hadamard};
use crate::vocab::{DomainSize, Epsilon};

/// `p = e^eps / (1 + e^eps)`, the probability of keeping the sign.
pub fn keep_probability(eps: Epsilon) -> f64 {
    1.0 / (1.0 + (-eps.get()).exp())
}

/// `c = (e^eps + 1) / (e^eps - 1) = 1 / (2p - 1)`, the sign's debiasing factor.
pub fn debias(eps: Epsilon) -> f64 {
    let t = (-eps.get()).exp();
    (1.0 + t) / -(-eps.get()).exp_m1()
}

/// The Hadamard count-mean sketch (module docs).
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Mechanism};
/// use ldp_core::families::sketch::hcms::HadamardCountMeanSketch;
/// use ldp_core::simulation::{stream_rng, Role};
/// let hcms = HadamardCountMeanSketch::new(DomainSize::new(100_000)?, Epsilon::new(2.0)?, 256, 1024)?;
/// let report = hcms.perturb(42, &mut stream_rng(1, 0, Role::Genuine, 0))?;
/// assert!(report.seed < 256 * 1024 && report.y < 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct HadamardCountMeanSketch {
    k: DomainSize,
    eps: Epsilon,
    hashes: u32,
    width: u32,
    keep: Bernoulli,
    /// ln P[report | x] when the bit is x's sign, and when it is not.
    ln_kept: f64,
    ln_flipped: f64,
}

impl HadamardCountMeanSketch {
    /// HCMS with `hashes` rows of `width` columns (a power of two).
    pub fn new(k: DomainSize, eps: Epsilon, hashes: u32, width: u32) -> Result<Self, ParamError> {
        check_shape(hashes, width, 2, true)?;
        check_runnable(k, eps)?;
        let p = keep_probability(eps);
        let ln_reports = (f64::from(hashes) * f64::from(width)).ln();
        let (ln_keep, ln_flip) = crate::families::hadamard_mechanism::ln_keep_flip(eps);
        Ok(Self {
            k,
            eps,
            hashes,
            width,
            keep: Bernoulli::new(p).expect("a probability"),
            ln_kept: ln_keep - ln_reports,
            ln_flipped: ln_flip - ln_reports,
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

    /// The row and coefficient a report names.
    #[inline]
    fn split(&self, report: &LhReport) -> (u32, u32) {
        (report.seed / self.width, report.seed % self.width)
    }
}

eq_by_spec!(HadamardCountMeanSketch);

impl Mechanism for HadamardCountMeanSketch {
    type Report = LhReport;
    type Aggregator = OutputCounts<HadamardCountMeanSketch>;

    fn spec(&self) -> Spec {
        Spec::from_parts(
            self.k,
            self.eps,
            FamilyParams::HadamardCountMeanSketch {
                hashes: self.hashes,
                width: self.width,
            },
        )
    }

    #[inline]
    fn perturb<R: Rng + ?Sized>(&self, item: u32, rng: &mut R) -> Result<LhReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        let row = rng.random_range(0..self.hashes);
        let coefficient = rng.random_range(0..self.width);
        let flip = u32::from(!self.keep.sample(rng));
        Ok(LhReport {
            seed: row * self.width + coefficient,
            y: hadamard_bit(coefficient, column(item, row, self.width)) ^ flip,
        })
    }

    fn validate(&self, report: &LhReport) -> Result<(), ReportError> {
        report.check_within(u64::from(self.hashes) * u64::from(self.width), 2)
    }

    fn log_likelihood(&self, report: &LhReport, item: u32) -> f64 {
        if self.supports(report, item) {
            self.ln_kept
        } else {
            self.ln_flipped
        }
    }

    fn log_likelihoods(&self, report: &LhReport, out: &mut Vec<f64>) {
        two_valued_log_likelihoods(self, report, self.ln_kept, self.ln_flipped, out);
    }

    fn aggregator(&self) -> OutputCounts<HadamardCountMeanSketch> {
        OutputCounts::new(self.clone())
    }
}

impl Support for HadamardCountMeanSketch {
    /// The items whose column in the report's row has the report's sign: O(k) hashes, a
    /// block of items at a time.
    fn for_each_supported(&self, report: &LhReport, mut visit: impl FnMut(u32)) {
        let (row, coefficient) = self.split(report);
        for_each_column_block(self.k.get(), row, self.width, |base, block| {
            for (item, &c) in (base..).zip(block) {
                if hadamard_bit(coefficient, c) == report.y {
                    visit(item);
                }
            }
            ControlFlow::Continue(())
        });
    }

    #[inline]
    fn supports(&self, report: &LhReport, item: u32) -> bool {
        let (row, coefficient) = self.split(report);
        hadamard_bit(coefficient, column(item, row, self.width)) == report.y
    }

    /// About half the items carry the report's sign (all or none for coefficient 0):
    /// the attack guesses by rejection in a few tests where the scan hashes all k items.
    fn scanned_support_mean(&self) -> Option<f64> {
        Some(self.k.as_f64() / 2.0)
    }
}

impl HadamardCountMeanSketch {
    /// Per row: `T_j[v] = sum_l H[l][v] (count(j, l, +) - count(j, l, -))` and the row's
    /// report count.
    fn transformed_rows(&self, cells: &[u64]) -> (Vec<f64>, Vec<u64>) {
        let m = self.width as usize;
        let mut rows = Vec::with_capacity(self.hashes as usize * m);
        let mut totals = Vec::with_capacity(self.hashes as usize);
        for row in cells.chunks_exact(2 * m) {
            let start = rows.len();
            rows.extend(row.chunks_exact(2).map(|c| c[0] as f64 - c[1] as f64));
            walsh_hadamard(&mut rows[start..]);
            totals.push(row.iter().sum());
        }
        (rows, totals)
    }
}

impl CountedOutputs for HadamardCountMeanSketch {
    /// One cell per (row, coefficient, bit).
    fn cells(&self) -> usize {
        2 * self.hashes as usize * self.width as usize
    }

    fn cells_per_report(&self) -> (u32, u32) {
        (1, 1)
    }

    #[inline]
    fn for_each_cell(&self, report: &LhReport, mut visit: impl FnMut(usize)) {
        visit(2 * report.seed as usize + report.y as usize);
    }

    /// `c_x = sum_j (N_j + T_j[h_j(x)]) / 2`: the reports of each row carrying x's sign,
    /// over the rows some report chose (the others add nothing).
    fn support_counts(&self, cells: &[u64], _: u64) -> Vec<u64> {
        let (rows, totals) = self.transformed_rows(cells);
        let m = self.width;
        let chosen: Vec<u32> = (0..self.hashes)
            .filter(|&j| totals[j as usize] > 0)
            .collect();
        (0..self.k.get())
            .map(|item| {
                chosen
                    .iter()
                    .map(|&j| {
                        let t = rows[(j * m + column(item, j, m)) as usize];
                        ((totals[j as usize] as f64 + t) / 2.0).round() as u64
                    })
                    .sum()
            })
            .collect()
    }

    /// `S_j[v] = h c T_j[v]`, then the sketch estimate.
    fn estimate_from_cells(&self, cells: &[u64], n: u64) -> Result<Vec<f64>, AggregateError> {
        let c = debias(self.eps);
        if !c.is_finite() {
            return Err(AggregateError::Uninformative { p: 0.5, q: 0.5 });
        }
        let (mut rows, _) = self.transformed_rows(cells);
        let scale = f64::from(self.hashes) * c;
        rows.iter_mut().for_each(|v| *v *= scale);
        Ok(estimate_from_sketch(
            &rows,
            self.hashes,
            self.width,
            self.k.get(),
            n,
        ))
    }
}

impl FamilyMechanism for HadamardCountMeanSketch {
    fn check(_: DomainSize, _: Epsilon, (hashes, width): (u32, u32)) -> Result<(), ParamError> {
        check_shape(hashes, width, 2, true)
    }

    fn build(k: DomainSize, eps: Epsilon, (hashes, width): (u32, u32)) -> Result<Self, ParamError> {
        Self::new(k, eps, hashes, width)
    }

    fn alternatives(k: DomainSize, eps: Epsilon) -> Vec<(u32, u32)> {
        super::shape_grid(|shape| Self::check(k, eps, shape).is_ok())
    }

    /// Not pure: another item supports a report with probability `1/2 + rho (p - 1/2)`,
    /// rho the share of rows where it shares x's column.
    fn probabilities(_: DomainSize, _: Epsilon, _: (u32, u32)) -> Option<(f64, f64)> {
        None
    }

    /// None (coefficient 0 with bit 1: row 0 of H is +1 everywhere) to all k.
    fn support_size_range(k: DomainSize, _: (u32, u32)) -> Option<(u32, u32)> {
        Some((0, k.get()))
    }

    /// A (row, coefficient) index in `0..h m` and a bit.
    fn report_limits(_: DomainSize, (hashes, width): (u32, u32)) -> ReportLimits {
        ReportLimits {
            values: 2,
            entries: 1,
            seeds: u64::from(hashes) * u64::from(width),
        }
    }
}

impl AttackSurface for HadamardCountMeanSketch {
    crate::attack_surface::support_attack_surface!(output_counts);

    /// Row 0, coefficient 0, bit 0: `H[0][v] = +1` for every column, so it supports (and
    /// adds the most to) every target.
    fn plan_max_gain(&self, targets: &[u32], _: Clip) -> MaxGain<LhReport> {
        MaxGain {
            fixed: Some(LhReport { seed: 0, y: 0 }),
            supported: targets.len() as u32,
        }
    }

    fn random_output<R: Rng + ?Sized>(&self, _: Clip, rng: &mut R) -> LhReport {
        LhReport {
            seed: rng.random_range(0..self.hashes * self.width),
            y: rng.random_range(0..2),
        }
    }

    /// Every output: each (row, coefficient) index with either bit.
    fn exact_outputs(
        &self,
        limit: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = LhReport>>, TooManyOutputs> {
        let (h, m) = (self.hashes, self.width);
        TooManyOutputs::check(2 * u64::from(h) * u64::from(m), self.k, limit)?;
        Ok(ExactOutputs {
            outputs: (0..h * m).flat_map(|seed| [0, 1].map(|y| LhReport { seed, y })),
            coverage: Coverage::Every,
        })
    }
}
