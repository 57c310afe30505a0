//! The Hadamard mechanism: one Hadamard coefficient of the one-hot item, through binary
//! randomized response (as pure-LDP's `HadamardMechClient` with t = 1; Cormode, Maddock
//! and Maple, "Frequency Estimation under Local Differential Privacy", PVLDB 2021).
//!
//! With K the smallest power of two at least k, item x's coefficients are the row
//! `H[x][0..K]` of the K x K Sylvester Hadamard matrix. A client draws a uniform column
//! j and reports `(j, bit)`, `bit` the sign of `H[x][j]` (0 for +1, 1 for -1) kept with
//! probability `p = e^eps / (1 + e^eps)`. The report is an [`LhReport`]: `seed` is j,
//! `y` the bit. It costs O(1) on the client and `log2 K + 1` bits; the server counts the
//! 2K (column, bit) cells and inverts the transform once, in O(n + K log K).
//!
//! A report supports the items whose sign at j it carries: the reporter's with
//! probability p, any other with probability exactly 1/2 (two rows agree on half the
//! columns). The mechanism is pure with `p* = p`, `q* = 1/2`, and its estimator is the
//! pure one, `(c_x / n - 1/2) / (p - 1/2)`.

use rand::{Rng, RngExt};
use rand_distr::{Bernoulli, Distribution};

use crate::attack_surface::{AttackSurface, MaxGain};
use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::exact_outputs::{Coverage, ExactOutputs, TooManyOutputs};
use crate::families::FamilyMechanism;
use crate::mechanism::{Mechanism, Support, check_runnable, eq_by_spec};
use crate::output_counts::{CountedOutputs, OutputCounts};
use crate::report::{LhReport, ReportLimits};
use crate::server::Clip;
use crate::spec::Spec;
use crate::transform::{hadamard_bit, walsh_hadamard};
use crate::vocab::{DomainSize, Epsilon};

/// K, the number of coefficients: the smallest power of two at least k (64 bits: the
/// closed forms take any k).
pub fn coefficients(k: DomainSize) -> u64 {
    u64::from(k.get()).next_power_of_two()
}

/// `p = e^eps / (1 + e^eps)`, the probability of keeping the sign.
pub fn keep_probability(eps: Epsilon) -> f64 {
    1.0 / (1.0 + (-eps.get()).exp())
}

/// `(ln p, ln (1 - p))` for `p = e^eps / (1 + e^eps)`, as `-softplus(-eps)` and
/// `-softplus(eps)`: finite at any budget (`ln(1 + e^eps)` overflows from eps = 710).
pub(crate) fn ln_keep_flip(eps: Epsilon) -> (f64, f64) {
    let softplus = |x: f64| x.max(0.0) + (-x.abs()).exp().ln_1p();
    (-softplus(-eps.get()), -softplus(eps.get()))
}

/// The Hadamard mechanism (module docs).
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Mechanism, Support};
/// use ldp_core::families::hadamard_mechanism::HadamardMechanism;
/// use ldp_core::simulation::{stream_rng, Role};
/// let hm = HadamardMechanism::new(DomainSize::new(100)?, Epsilon::new(1.0)?)?;
/// assert_eq!(hm.coefficients(), 128);
/// let report = hm.perturb(42, &mut stream_rng(1, 0, Role::Genuine, 0))?;
/// assert!(report.seed < 128 && report.y < 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct HadamardMechanism {
    k: DomainSize,
    eps: Epsilon,
    coefficients: u32,
    keep: Bernoulli,
    /// ln P[(j, bit) | x] when the bit is x's sign at j, and when it is not.
    ln_kept: f64,
    ln_flipped: f64,
}

impl HadamardMechanism {
    /// The Hadamard mechanism over `0..k`.
    pub fn new(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        check_runnable(k, eps)?;
        let coefficients = u32::try_from(coefficients(k)).expect("a runnable k is below 2^24");
        let p = keep_probability(eps);
        let ln_k = f64::from(coefficients).ln();
        let (ln_keep, ln_flip) = ln_keep_flip(eps);
        Ok(Self {
            k,
            eps,
            coefficients,
            keep: Bernoulli::new(p).expect("a probability"),
            ln_kept: ln_keep - ln_k,
            ln_flipped: ln_flip - ln_k,
        })
    }

    /// K, the number of coefficients a report can name.
    pub fn coefficients(&self) -> u32 {
        self.coefficients
    }

    /// The sign bit of item x at column j.
    #[inline]
    fn sign(item: u32, column: u32) -> u32 {
        hadamard_bit(item, column)
    }
}

eq_by_spec!(HadamardMechanism);

impl Mechanism for HadamardMechanism {
    type Report = LhReport;
    type Aggregator = OutputCounts<HadamardMechanism>;

    fn spec(&self) -> Spec {
        Spec::from_parts(
            self.k,
            self.eps,
            crate::families::FamilyParams::HadamardMechanism,
        )
    }

    #[inline]
    fn perturb<R: Rng + ?Sized>(&self, item: u32, rng: &mut R) -> Result<LhReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        let seed = rng.random_range(0..self.coefficients);
        let flip = u32::from(!self.keep.sample(rng));
        Ok(LhReport {
            seed,
            y: Self::sign(item, seed) ^ flip,
        })
    }

    fn validate(&self, report: &LhReport) -> Result<(), ReportError> {
        report.check_within(u64::from(self.coefficients), 2)
    }

    fn log_likelihood(&self, report: &LhReport, item: u32) -> f64 {
        if self.supports(report, item) {
            self.ln_kept
        } else {
            self.ln_flipped
        }
    }

    fn aggregator(&self) -> OutputCounts<HadamardMechanism> {
        OutputCounts::new(self.clone())
    }
}

impl Support for HadamardMechanism {
    /// The items whose sign at the report's column is its bit: O(k).
    fn for_each_supported(&self, report: &LhReport, mut visit: impl FnMut(u32)) {
        for item in 0..self.k.get() {
            if Self::sign(item, report.seed) == report.y {
                visit(item);
            }
        }
    }

    #[inline]
    fn supports(&self, report: &LhReport, item: u32) -> bool {
        Self::sign(item, report.seed) == report.y
    }

    /// About half the items: a column's signs split the items evenly.
    fn scanned_support_mean(&self) -> Option<f64> {
        Some(self.k.as_f64() / 2.0)
    }
}

impl CountedOutputs for HadamardMechanism {
    /// One cell per (column, bit).
    fn cells(&self) -> usize {
        2 * self.coefficients as usize
    }

    fn cells_per_report(&self) -> (u32, u32) {
        (1, 1)
    }

    #[inline]
    fn for_each_cell(&self, report: &LhReport, mut visit: impl FnMut(usize)) {
        visit(2 * report.seed as usize + report.y as usize);
    }

    /// `c_x = (n + W_x) / 2`, W the transform of the columns' `count(+) - count(-)`.
    fn support_counts(&self, cells: &[u64], n: u64) -> Vec<u64> {
        let mut w: Vec<f64> = cells
            .chunks_exact(2)
            .map(|c| c[0] as f64 - c[1] as f64)
            .collect();
        walsh_hadamard(&mut w);
        w.truncate(self.k.as_usize());
        w.iter()
            .map(|&w| ((n as f64 + w) / 2.0).round() as u64)
            .collect()
    }
}

impl FamilyMechanism for HadamardMechanism {
    fn check(_: DomainSize, _: Epsilon, (): ()) -> Result<(), ParamError> {
        Ok(())
    }

    fn build(k: DomainSize, eps: Epsilon, (): ()) -> Result<Self, ParamError> {
        Self::new(k, eps)
    }

    fn probabilities(_: DomainSize, eps: Epsilon, (): ()) -> Option<(f64, f64)> {
        Some((keep_probability(eps), 0.5))
    }

    /// None (column 0 with bit 1: every row is +1 there) to all k (column 0, bit 0).
    fn support_size_range(k: DomainSize, (): ()) -> Option<(u32, u32)> {
        Some((0, k.get()))
    }

    /// A column in `0..K` and a bit.
    fn report_limits(k: DomainSize, (): ()) -> ReportLimits {
        ReportLimits {
            values: 2,
            entries: 1,
            seeds: coefficients(k),
        }
    }
}

impl AttackSurface for HadamardMechanism {
    crate::attack_surface::support_attack_surface!(output_counts);

    /// Column 0 with bit 0: every row is +1 there, so it supports every target.
    fn plan_max_gain(&self, targets: &[u32], _: Clip) -> MaxGain<LhReport> {
        MaxGain {
            fixed: Some(LhReport { seed: 0, y: 0 }),
            supported: targets.len() as u32,
        }
    }

    fn random_output<R: Rng + ?Sized>(&self, _: Clip, rng: &mut R) -> LhReport {
        LhReport {
            seed: rng.random_range(0..self.coefficients),
            y: rng.random_range(0..2),
        }
    }

    /// Every output: each coefficient with either bit.
    fn exact_outputs(
        &self,
        limit: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = LhReport>>, TooManyOutputs> {
        TooManyOutputs::check(2 * u64::from(self.coefficients), self.k, limit)?;
        Ok(ExactOutputs {
            outputs: (0..self.coefficients).flat_map(|seed| [0, 1].map(|y| LhReport { seed, y })),
            coverage: Coverage::Every,
        })
    }
}
