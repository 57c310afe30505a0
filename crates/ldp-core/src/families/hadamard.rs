//! Hadamard response (Acharya, Sun and Zhang, "Hadamard Response: Estimating
//! Distributions Privately, Efficiently, and with Little Communication", AISTATS 2019), in
//! its general form with blocks, as pure-LDP implements it.
//!
//! The K = B b outputs are B blocks of b columns, b a power of two; each block holds
//! b - 1 items, item x taking row `s = x mod (b - 1) + 1` (never the all-ones row 0) of
//! the b x b Sylvester Hadamard matrix of its block `x / (b - 1)`. A report is one column:
//! with probability `2B / (2B - 1 + e^eps)` a uniform one of all K, otherwise a uniform
//! one of the b/2 columns of the item's block where its row is +1. It costs O(1) on the
//! client and `log2 K` bits; the server counts columns and recovers every item with one
//! fast Walsh-Hadamard transform per block. One block (B = 1) is the basic Hadamard
//! response of the paper; more blocks lower the variance at large eps (at eps = 4 and
//! k = 100, from 1.08 to 0.082 per user).

use rand::{Rng, RngExt};
use rand_distr::{Bernoulli, Distribution};

use crate::attack_surface::{AttackSurface, MaxGain};
use crate::error::{AggregateError, ItemOutOfRange, ParamError, ReportError};
use crate::exact_outputs::{Coverage, ExactOutputs, TooManyOutputs};
use crate::families::{FamilyMechanism, FamilyParams};
use crate::mechanism::{Mechanism, Support, check_runnable, eq_by_spec};
use crate::output_counts::{CountedOutputs, OutputCounts};
use crate::report::{GrrReport, ReportLimits};
use crate::server::Clip;
use crate::spec::Spec;
use crate::transform::{hadamard_bit, walsh_hadamard};
use crate::vocab::{DomainSize, Epsilon};

/// The most blocks a Hadamard response over k items takes: the largest power of two not
/// above 2k (more would only add blocks without items), and at most 2^31.
pub fn max_blocks(k: DomainSize) -> u32 {
    1 << (2 * u64::from(k.get())).ilog2().min(31)
}

/// The layout of a Hadamard response with `blocks` blocks over k items. In 64 bits: the
/// closed forms take any k, whose blocks can hold more than 2^32 columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// B, the number of blocks.
    pub blocks: u32,
    /// b, the columns of a block: `2^ceil(log2(k / B + 1))`, so that B (b - 1) >= k.
    pub block: u64,
}

impl Layout {
    /// The layout of `blocks` blocks over `k` items.
    pub fn new(k: DomainSize, blocks: u32) -> Self {
        // The smallest power of two b with b - 1 >= k / B, i.e. b >= ceil(k / B) + 1.
        let block = (u64::from(k.get()).div_ceil(u64::from(blocks)) + 1).next_power_of_two();
        Layout { blocks, block }
    }

    /// K, the number of outputs.
    pub fn outputs(self) -> u64 {
        u64::from(self.blocks) * self.block
    }

    /// The items of a block, `b - 1`.
    pub fn per_block(self) -> u64 {
        self.block - 1
    }

    /// The number of items in `block` (the last ones may hold fewer, or none).
    pub fn items_in(self, k: DomainSize, block: u32) -> u64 {
        u64::from(k.get())
            .saturating_sub(u64::from(block) * self.per_block())
            .min(self.per_block())
    }
}

/// `D t = (2B - 1) e^-eps + 1`, the normalizer of the output law divided by e^eps: a
/// column where the item's row is +1 has probability `2 / (b D t)`, any other
/// `2 t / (b D t)`.
pub fn normalizer_t(eps: Epsilon, blocks: u32) -> f64 {
    (2.0 * f64::from(blocks) - 1.0) * (-eps.get()).exp() + 1.0
}

/// The probability of drawing the report uniformly from all K columns,
/// `2B / (2B - 1 + e^eps) = 2B t / (D t)`.
pub fn uniform_probability(eps: Epsilon, blocks: u32) -> f64 {
    2.0 * f64::from(blocks) * (-eps.get()).exp() / normalizer_t(eps, blocks)
}

/// pure-LDP's rule: one block up to eps = 1 (the basic Hadamard response), else
/// `B = 2^floor(log2(min(2k, e^eps)))`. Often not the best: at k = 100 and eps = 4 it
/// takes 32 blocks (variance 0.215 per user) where 16 give 0.156; [`optimal_blocks`].
pub fn pure_ldp_blocks(k: DomainSize, eps: Epsilon) -> u32 {
    if eps.get() <= 1.0 {
        return 1;
    }
    let cap = (2.0 * k.as_f64()).min(eps.exp());
    (1u32 << (cap.log2().floor() as u32).min(31)).min(max_blocks(k))
}

/// The preset: the number of blocks minimizing [`uniform_variance`] (one block, the
/// basic response, at small eps; about e^eps / 4 blocks when k is large). The first of
/// equals.
pub fn optimal_blocks(k: DomainSize, eps: Epsilon) -> u32 {
    let mut best = (f64::INFINITY, 1);
    for blocks in (0..=max_blocks(k).ilog2()).map(|e| 1 << e) {
        let v = uniform_variance(k, eps, blocks);
        if v < best.0 {
            best = (v, blocks);
        }
    }
    best.1
}

/// Per-user variance of an item's estimate when its block holds the share `f_block` of
/// the population and the item itself the share `f_x`:
/// `s^2 (f_block (1 + t) + (1 - f_block) 2 t) / (D t) - f_x`, with `t = e^-eps`,
/// `D t` the [`normalizer_t`] and `s = D t / (1 - t)` the estimator's scale.
///
/// The estimate is `s W / n`, W the sum over reports of +1 in the item's half of its
/// block, -1 in the other half and 0 elsewhere. For a fixed population (the paper's
/// Eq. "var") the reports are independent: each one's `s^2 E[w^2]` is `s^2` times the
/// chance of landing in the block, `(1 + t) / (D t)` for a user of the block and
/// `2 t / (D t)` for any other, and its mean `E[s w]` is 1 for a user of the item and 0
/// for any other.
pub fn item_variance(eps: Epsilon, blocks: u32, f_block: f64, f_x: f64) -> f64 {
    let t = (-eps.get()).exp();
    let dt = normalizer_t(eps, blocks);
    let scale = dt / -(-eps.get()).exp_m1();
    let in_block = (f_block * (1.0 + t) + (1.0 - f_block) * 2.0 * t) / dt;
    scale * scale * in_block - f_x
}

/// The per-user variance at an item of frequency tending to 0 whose k - 1 others share
/// the population evenly: its block then holds the share `(min(b - 1, k) - 1) / (k - 1)`.
/// One block (the basic response) gives `((e^eps + 1) / (e^eps - 1))^2`.
pub fn uniform_variance(k: DomainSize, eps: Epsilon, blocks: u32) -> f64 {
    let layout = Layout::new(k, blocks);
    let mates = layout.per_block().min(u64::from(k.get())) as f64 - 1.0;
    item_variance(eps, blocks, mates / (k.as_f64() - 1.0), 0.0)
}

/// The block count must be a power of two in `[1, max_blocks(k)]`.
pub(crate) fn check_blocks(k: DomainSize, blocks: u32) -> Result<(), ParamError> {
    if blocks.is_power_of_two() && blocks <= max_blocks(k) {
        Ok(())
    } else {
        Err(ParamError::Parameter {
            name: "blocks",
            description: "the number of Hadamard blocks",
            requirement: format!("be a power of two in [1, {}]", max_blocks(k)),
            value: f64::from(blocks),
        })
    }
}

/// Hadamard response: report one column of the item's Hadamard row (module docs).
///
/// Privacy: a column where the item's row is +1 has probability `2 e^eps / (b D)`, any
/// other `2 / (b D)` with `D = 2B - 1 + e^eps`; every likelihood ratio is at most e^eps.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Mechanism};
/// use ldp_core::families::hadamard::HadamardResponse;
/// use ldp_core::simulation::{stream_rng, Role};
/// let hr = HadamardResponse::optimized(DomainSize::new(100)?, Epsilon::new(4.0)?)?;
/// assert_eq!((hr.layout().blocks, hr.layout().block), (16, 8)); // K = 128 columns
/// let report = hr.perturb(42, &mut stream_rng(1, 0, Role::Genuine, 0))?;
/// assert!(report.y < 128);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct HadamardResponse {
    k: DomainSize,
    eps: Epsilon,
    layout: Layout,
    /// The layout in 32 bits, for the hot paths: a runnable k keeps K below 2^27.
    block: u32,
    per_block: u32,
    outputs: u32,
    uniform: Bernoulli,
    /// ln P[column | item] where the item's row is +1, and elsewhere.
    ln_high: f64,
    ln_low: f64,
}

impl HadamardResponse {
    /// Hadamard response over `0..k` with `blocks` blocks (a power of two).
    pub fn new(k: DomainSize, eps: Epsilon, blocks: u32) -> Result<Self, ParamError> {
        check_blocks(k, blocks)?;
        check_runnable(k, eps)?;
        let layout = Layout::new(k, blocks);
        let dt = normalizer_t(eps, blocks);
        let b = layout.block as f64;
        let narrow = |v: u64| u32::try_from(v).expect("a runnable k has fewer than 2^27 outputs");
        Ok(Self {
            k,
            eps,
            layout,
            block: narrow(layout.block),
            per_block: narrow(layout.per_block()),
            outputs: narrow(layout.outputs()),
            uniform: Bernoulli::new(uniform_probability(eps, blocks)).expect("a probability"),
            ln_high: (2.0 / (b * dt)).ln(),
            ln_low: (2.0 / (b * dt)).ln() - eps.get(),
        })
    }

    /// The preset number of blocks, [`optimal_blocks`].
    pub fn optimized(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        Self::new(k, eps, optimal_blocks(k, eps))
    }

    /// The blocks and their size.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// K, the number of columns a report can name.
    pub fn outputs(&self) -> u32 {
        self.outputs
    }

    /// Item x's block and row (`1..b`).
    #[inline]
    fn place(&self, item: u32) -> (u32, u32) {
        (item / self.per_block, item % self.per_block + 1)
    }

    /// Whether column `y` is one of item x's (its row is +1 there).
    #[inline]
    fn in_row(&self, y: u32, item: u32) -> bool {
        let (block, row) = self.place(item);
        y / self.block == block && hadamard_bit(row, y % self.block) == 0
    }
}

eq_by_spec!(HadamardResponse);

impl Mechanism for HadamardResponse {
    type Report = GrrReport;
    type Aggregator = OutputCounts<HadamardResponse>;

    fn spec(&self) -> Spec {
        Spec::from_parts(
            self.k,
            self.eps,
            FamilyParams::HadamardResponse {
                blocks: self.layout.blocks,
            },
        )
    }

    #[inline]
    fn perturb<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<GrrReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        let b = self.block;
        if self.uniform.sample(rng) {
            return Ok(GrrReport {
                y: rng.random_range(0..self.outputs),
            });
        }
        // A uniform column of the block, moved into the row's +1 half when it is not
        // there: flipping the column bit of the row's lowest one-bit changes the sign,
        // a bijection between the halves, so the result is uniform on the +1 half.
        let (block, row) = self.place(item);
        let mut column = rng.random_range(0..b);
        if hadamard_bit(row, column) == 1 {
            column ^= row & row.wrapping_neg();
        }
        Ok(GrrReport {
            y: block * b + column,
        })
    }

    fn validate(&self, report: &GrrReport) -> Result<(), ReportError> {
        if report.y < self.outputs {
            Ok(())
        } else {
            Err(ReportError::OutOfRange {
                field: "y",
                value: u64::from(report.y),
                bound: u64::from(self.outputs),
            })
        }
    }

    fn log_likelihood(&self, report: &GrrReport, item: u32) -> f64 {
        if self.in_row(report.y, item) {
            self.ln_high
        } else {
            self.ln_low
        }
    }

    fn aggregator(&self) -> OutputCounts<HadamardResponse> {
        OutputCounts::new(self.clone())
    }
}

impl Support for HadamardResponse {
    /// The items of the column's block whose row is +1 there: O(b).
    fn for_each_supported(&self, report: &GrrReport, mut visit: impl FnMut(u32)) {
        let b = self.block;
        let (block, column) = (report.y / b, report.y % b);
        let first = block * self.per_block;
        for row in 1..=self.layout.items_in(self.k, block) as u32 {
            if hadamard_bit(row, column) == 0 {
                visit(first + row - 1);
            }
        }
    }

    fn supports(&self, report: &GrrReport, item: u32) -> bool {
        self.in_row(report.y, item)
    }

    /// With one block holding the whole domain (the preset at a huge domain: one block of
    /// 2^24 items was 2^24 tests a guess), about half the items: the attack's rejection
    /// takes about two tests. With several blocks a report's block may hold no items, and
    /// rejection from all k would spend k/4 draws where the scan spends none: `None`.
    fn scanned_support_mean(&self) -> Option<f64> {
        (self.k.get() <= self.per_block).then(|| self.k.as_f64() / 2.0)
    }
}

impl CountedOutputs for HadamardResponse {
    fn cells(&self) -> usize {
        self.outputs as usize
    }

    fn cells_per_report(&self) -> (u32, u32) {
        (1, 1)
    }

    #[inline]
    fn for_each_cell(&self, report: &GrrReport, mut visit: impl FnMut(usize)) {
        visit(report.y as usize);
    }

    /// `c_x = (N_block + W_block[row]) / 2`: the reports in the item's block, plus or
    /// minus those in its row's halves.
    fn support_counts(&self, cells: &[u64], _: u64) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.k.as_usize());
        self.for_each_block(cells, |block_total, w, rows| {
            out.extend(rows.map(|row| ((block_total + w[row as usize]) / 2.0).round() as u64));
        });
        out
    }

    /// `f_x = (D t / (1 - t)) W_block[row] / n`: the Hadamard coefficient of the item's
    /// row in its block, scaled. The block's uniform mass cancels in the coefficient
    /// (the row's halves are equally likely under every other item), so the estimate
    /// is unbiased for any distribution (pure-LDP's block correction, simplified).
    fn estimate_from_cells(&self, cells: &[u64], n: u64) -> Result<Vec<f64>, AggregateError> {
        let t = (-self.eps.get()).exp();
        if t >= 1.0 {
            return Err(AggregateError::Uninformative { p: 1.0, q: 1.0 });
        }
        let scale =
            normalizer_t(self.eps, self.layout.blocks) / (-(-self.eps.get()).exp_m1()) / n as f64;
        let mut out = Vec::with_capacity(self.k.as_usize());
        self.for_each_block(cells, |_, w, rows| {
            out.extend(rows.map(|row| scale * w[row as usize]));
        });
        Ok(out)
    }
}

impl HadamardResponse {
    /// For each block holding items, in order: its report count, the Walsh-Hadamard
    /// transform of its column counts, and its items' rows.
    fn for_each_block(
        &self,
        cells: &[u64],
        mut visit: impl FnMut(f64, &[f64], std::ops::RangeInclusive<u32>),
    ) {
        let b = self.block as usize;
        let mut w = vec![0.0; b];
        for (block, columns) in cells.chunks_exact(b).enumerate() {
            let items = self.layout.items_in(self.k, block as u32) as u32;
            if items == 0 {
                break;
            }
            w.iter_mut().zip(columns).for_each(|(v, &c)| *v = c as f64);
            walsh_hadamard(&mut w);
            visit(w[0], &w, 1..=items);
        }
    }
}

impl FamilyMechanism for HadamardResponse {
    fn check(k: DomainSize, _: Epsilon, blocks: u32) -> Result<(), ParamError> {
        check_blocks(k, blocks)
    }

    fn build(k: DomainSize, eps: Epsilon, blocks: u32) -> Result<Self, ParamError> {
        Self::new(k, eps, blocks)
    }

    /// Every number of blocks: more blocks trade variance for fewer bits' worth of
    /// columns per block and a different ASR.
    fn alternatives(k: DomainSize, _: Epsilon) -> Vec<u32> {
        let most = max_blocks(k);
        (0..32)
            .map(|i| 1u32 << i)
            .take_while(|&b| b <= most)
            .collect()
    }

    /// One block only (the basic response): `p* = e^eps / (1 + e^eps)` and `q* = 1/2`,
    /// two rows agreeing on half the columns. With more blocks another item supports the
    /// report with a probability that depends on its block: not pure.
    fn probabilities(_: DomainSize, eps: Epsilon, blocks: u32) -> Option<(f64, f64)> {
        (blocks == 1).then(|| (1.0 / (1.0 + (-eps.get()).exp()), 0.5))
    }

    /// None to all of a block's items (column 0, where every row is +1).
    fn support_size_range(k: DomainSize, blocks: u32) -> Option<(u32, u32)> {
        let most = Layout::new(k, blocks).per_block().min(u64::from(k.get()));
        Some((0, most as u32))
    }

    /// One column in `0..K`.
    fn report_limits(k: DomainSize, blocks: u32) -> ReportLimits {
        ReportLimits {
            values: u32::try_from(Layout::new(k, blocks).outputs()).unwrap_or(u32::MAX),
            entries: 1,
            seeds: 0,
        }
    }
}

impl AttackSurface for HadamardResponse {
    crate::attack_surface::support_attack_surface!(output_counts);

    /// Column 0 of the block holding the most targets (the first on ties): every row is
    /// +1 there, so it supports all of that block's targets.
    fn plan_max_gain(&self, targets: &[u32], _: Clip) -> MaxGain<GrrReport> {
        let mut best = (0u32, 0u32); // (targets in block, block)
        let mut i = 0;
        while i < targets.len() {
            let block = self.place(targets[i]).0;
            let run = targets[i..]
                .iter()
                .take_while(|&&t| self.place(t).0 == block)
                .count();
            if run as u32 > best.0 {
                best = (run as u32, block);
            }
            i += run;
        }
        MaxGain {
            fixed: Some(GrrReport {
                y: best.1 * self.block,
            }),
            supported: best.0,
        }
    }

    fn random_output<R: Rng + ?Sized>(&self, _: Clip, rng: &mut R) -> GrrReport {
        GrrReport {
            y: rng.random_range(0..self.outputs),
        }
    }

    /// Every output: one per column of every block.
    fn exact_outputs(
        &self,
        limit: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = GrrReport>>, TooManyOutputs> {
        TooManyOutputs::check(u64::from(self.outputs), self.k, limit)?;
        Ok(ExactOutputs {
            outputs: (0..self.outputs).map(|y| GrrReport { y }),
            coverage: Coverage::Every,
        })
    }
}
