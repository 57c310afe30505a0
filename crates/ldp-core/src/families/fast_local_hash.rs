//! Fast local hashing (Cormode, Maddock and Maple, "Frequency Estimation under Local
//! Differential Privacy", PVLDB 2021): local hashing with a fixed public set of k' hash
//! seeds `0..k'` instead of a fresh 32-bit seed per report.
//!
//! A report is `(seed, y)`, seed uniform in `0..k'` and y the item's hash
//! `XXH32(decimal(v), seed) mod g` kept with probability `p = e^eps / (e^eps + g - 1)`,
//! else another value (the hash of [`super::local_hash`], and pure-LDP's `FastLHClient`).
//! The server counts the k' g (seed, value) cells, O(1) per report, and hashes each seed
//! over the domain once per estimate: O(n + k' k) instead of local hashing's O(n k).
//!
//! The estimator is OLH's, `(c_x / n - 1/g) / (p - 1/g)`, exact in expectation for an
//! ideal hash. With k' fixed seeds two items collide under a fixed share of them, not
//! exactly 1/g, so each estimate carries a bias of about
//! `sum_{x' != x} f_x' (share - 1/g) / (p - 1/g)`, whose spread falls as `1/sqrt(k' g)`;
//! as k' grows the protocol becomes OLH.

use rand::{Rng, RngExt};
use rand_distr::{Bernoulli, Distribution};

use crate::attack_surface::{AttackSurface, MaxGain};
use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::exact_outputs::{Coverage, ExactOutputs, TooManyOutputs};
use crate::families::local_hash::{
    TargetHasher, check_hash_range, collision_bias, hash_item, optimal_range, probabilities, scan,
};
use crate::families::{FamilyMechanism, FamilyParams};
use crate::mechanism::{
    Mechanism, Support, check_runnable, eq_by_spec, two_valued_log_likelihoods,
};
use crate::output_counts::{CountedOutputs, OutputCounts};
use crate::report::{LhReport, ReportLimits};
use crate::sampling::uniform_other;
use crate::server::Clip;
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

/// The preset number of seeds, k' = 1000: an estimate hashes the domain 1000 times.
pub const PRESET_SEEDS: u32 = 1000;

/// The most cells (k' g) a server counts: 2^26, half a gigabyte of counters.
pub const MAX_CELLS: u64 = 1 << 26;

/// The preset `(g, k')`: OLH's hash range `round(e^eps + 1)` over [`PRESET_SEEDS`]
/// seeds, g capped so that the k' g counters fit [`MAX_CELLS`] (from eps of about 11).
pub fn preset(eps: Epsilon) -> (u32, u32) {
    let most = (MAX_CELLS / u64::from(PRESET_SEEDS)) as u32;
    (optimal_range(eps).min(most), PRESET_SEEDS)
}

/// k' must be at least 1, and k' g at most [`MAX_CELLS`].
pub(crate) fn check_seeds(g: u32, seeds: u32) -> Result<(), ParamError> {
    if seeds >= 1 && u64::from(seeds) * u64::from(g) <= MAX_CELLS {
        Ok(())
    } else {
        Err(ParamError::Parameter {
            name: "seeds",
            description: "the number of public hash seeds k'",
            requirement: format!(
                "lie in [1, {}] (k' g counters at most 2^26)",
                (MAX_CELLS / u64::from(g.max(1))).max(1)
            ),
            value: f64::from(seeds),
        })
    }
}

/// The bias of every item's estimate for a population with shares `f`, exactly, from
/// the public seeds: [`collision_bias`] with the seeds `0..k'` and range g.
pub fn bias(g: u32, seeds: u32, f: &[f64]) -> Vec<f64> {
    collision_bias(g, seeds, f)
}

/// Fast local hashing (module docs).
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Mechanism};
/// use ldp_core::families::fast_local_hash::FastLocalHashing;
/// use ldp_core::simulation::{stream_rng, Role};
/// let flh = FastLocalHashing::optimized(DomainSize::new(10_000)?, Epsilon::new(2.0)?)?;
/// assert_eq!((flh.hash_range(), flh.seeds()), (8, 1000)); // g = round(e^2 + 1)
/// let report = flh.perturb(42, &mut stream_rng(1, 0, Role::Genuine, 0))?;
/// assert!(report.seed < 1000 && report.y < 8);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FastLocalHashing {
    k: DomainSize,
    eps: Epsilon,
    g: u32,
    seeds: u32,
    p: f64,
    keep: Bernoulli,
    /// [`FastLocalHashing::log_likelihood_given`] for an unsupported and a supported item,
    /// taken once (the MAP attack asks both per report).
    ln_given: [f64; 2],
}

impl FastLocalHashing {
    /// FLH with hash range `g >= 2` over the seeds `0..seeds`.
    pub fn new(k: DomainSize, eps: Epsilon, g: u32, seeds: u32) -> Result<Self, ParamError> {
        check_hash_range(g)?;
        check_seeds(g, seeds)?;
        check_runnable(k, eps)?;
        let (p, _) = probabilities(eps, g);
        Ok(Self {
            k,
            eps,
            g,
            seeds,
            p,
            keep: Bernoulli::new(p).expect("p in [0, 1]"),
            ln_given: [false, true].map(|supported| ln_report_given(p, g, seeds, supported)),
        })
    }

    /// The preset: [`preset`].
    pub fn optimized(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        let (g, seeds) = preset(eps);
        Self::new(k, eps, g, seeds)
    }

    /// The hash range g.
    pub fn hash_range(&self) -> u32 {
        self.g
    }

    /// k', the number of public seeds.
    pub fn seeds(&self) -> u32 {
        self.seeds
    }
}

eq_by_spec!(FastLocalHashing);

impl FastLocalHashing {
    /// `ln P[report | x]` for an item the report supports or not: one of the seeds, then
    /// the hash value kept with probability p or moved to one of the g - 1 others.
    fn log_likelihood_given(&self, supported: bool) -> f64 {
        self.ln_given[usize::from(supported)]
    }
}

/// [`FastLocalHashing::log_likelihood_given`] of FLH with keep probability `p` over `0..g`
/// and `seeds` seeds.
fn ln_report_given(p: f64, g: u32, seeds: u32, supported: bool) -> f64 {
    let y_prob = if supported {
        p
    } else {
        (1.0 - p) / f64::from(g - 1)
    };
    y_prob.ln() - f64::from(seeds).ln()
}

impl Mechanism for FastLocalHashing {
    type Report = LhReport;
    type Aggregator = OutputCounts<FastLocalHashing>;

    fn spec(&self) -> Spec {
        Spec::from_parts(
            self.k,
            self.eps,
            FamilyParams::FastLocalHashing {
                g: self.g,
                seeds: self.seeds,
            },
        )
    }

    #[inline]
    fn perturb<R: Rng + ?Sized>(&self, item: u32, rng: &mut R) -> Result<LhReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        let seed = rng.random_range(0..self.seeds);
        let h = hash_item(item, seed, self.g);
        let y = if self.keep.sample(rng) {
            h
        } else {
            uniform_other(self.g, h, rng)
        };
        Ok(LhReport { seed, y })
    }

    fn validate(&self, report: &LhReport) -> Result<(), ReportError> {
        report.check_within(u64::from(self.seeds), self.g)
    }

    /// The seed's probability `1/k'` is common to every item and included.
    fn log_likelihood(&self, report: &LhReport, item: u32) -> f64 {
        self.log_likelihood_given(self.supports(report, item))
    }

    fn log_likelihoods(&self, report: &LhReport, out: &mut Vec<f64>) {
        let given = |supported| self.log_likelihood_given(supported);
        two_valued_log_likelihoods(self, report, given(true), given(false), out);
    }

    fn aggregator(&self) -> OutputCounts<FastLocalHashing> {
        OutputCounts::new(self.clone())
    }
}

impl Support for FastLocalHashing {
    /// Hashes every item under the report's seed, O(k), by LH's scan (the same hash of
    /// the same items).
    fn for_each_supported(&self, report: &LhReport, visit: impl FnMut(u32)) {
        scan::for_each_match(self.k.get(), self.g, report.seed, report.y, visit);
    }

    #[inline]
    fn supports(&self, report: &LhReport, item: u32) -> bool {
        hash_item(item, report.seed, self.g) == report.y
    }

    /// `p + (k - 1) / g`, as for LH.
    fn scanned_support_mean(&self) -> Option<f64> {
        Some(self.p + (self.k.as_f64() - 1.0) / f64::from(self.g))
    }
}

impl CountedOutputs for FastLocalHashing {
    /// One cell per (seed, value).
    fn cells(&self) -> usize {
        self.seeds as usize * self.g as usize
    }

    fn cells_per_report(&self) -> (u32, u32) {
        (1, 1)
    }

    #[inline]
    fn for_each_cell(&self, report: &LhReport, mut visit: impl FnMut(usize)) {
        visit(report.seed as usize * self.g as usize + report.y as usize);
    }

    /// `c_x = sum_s count(s, h_s(x))`: each seed some report used hashes the domain once,
    /// O(min(n, k') k) in all (on every core with the `parallel` feature; the sums are
    /// exact, so the result does not depend on the thread count). A seed no report used
    /// adds nothing and is skipped: one report at k = 2^24 costs 2^24 hashes, not 2^34.
    fn support_counts(&self, cells: &[u64], _: u64) -> Vec<u64> {
        let (k, g) = (self.k.get(), self.g as usize);
        let used: Vec<u32> = (0..self.seeds)
            .filter(|&s| cells[s as usize * g..][..g].iter().any(|&c| c > 0))
            .collect();
        // One sum over the domain per thread, each adding its share of the seeds.
        let add_seed = |sums: &mut Vec<u64>, u: usize| {
            let seed = used[u];
            let row = &cells[seed as usize * g..][..g];
            for (item, sum) in (0..k).zip(sums.iter_mut()) {
                *sum += row[hash_item(item, seed, self.g) as usize];
            }
        };
        let add = |a: &mut Vec<u64>, b: Vec<u64>| a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
        crate::parallel::fold(used.len(), || vec![0; k as usize], add_seed, add)
            .unwrap_or_else(|| vec![0; k as usize])
    }
}

impl FamilyMechanism for FastLocalHashing {
    fn check(_: DomainSize, _: Epsilon, (g, seeds): (u32, u32)) -> Result<(), ParamError> {
        check_hash_range(g)?;
        check_seeds(g, seeds)
    }

    fn build(k: DomainSize, eps: Epsilon, (g, seeds): (u32, u32)) -> Result<Self, ParamError> {
        Self::new(k, eps, g, seeds)
    }

    /// LH's: `p* = e^eps / (e^eps + g - 1)`, and `q* = 1/g` for an ideal hash.
    fn probabilities(_: DomainSize, eps: Epsilon, (g, _): (u32, u32)) -> Option<(f64, f64)> {
        Some(probabilities(eps, g))
    }

    fn support_size_range(k: DomainSize, _: (u32, u32)) -> Option<(u32, u32)> {
        Some((0, k.get()))
    }

    /// A seed in `0..k'` and a value in `0..g`.
    fn report_limits(_: DomainSize, (g, seeds): (u32, u32)) -> ReportLimits {
        ReportLimits {
            values: g,
            entries: 1,
            seeds: u64::from(seeds),
        }
    }
}

impl AttackSurface for FastLocalHashing {
    crate::attack_surface::support_attack_surface!(output_counts);

    /// The public seed and value that hash the most targets together: every seed is
    /// searched ([`best_seed`](crate::attack_surface::best_seed) over `0..k'`).
    fn plan_max_gain(&self, targets: &[u32], _: Clip) -> MaxGain<LhReport> {
        let (seed, y, supported) =
            TargetHasher::new(targets, self.g).best_seed(u64::from(self.seeds));
        MaxGain {
            fixed: Some(LhReport {
                seed: seed as u32,
                y,
            }),
            supported,
        }
    }

    fn random_output<R: Rng + ?Sized>(&self, _: Clip, rng: &mut R) -> LhReport {
        LhReport {
            seed: rng.random_range(0..self.seeds),
            y: rng.random_range(0..self.g),
        }
    }

    /// Every output: each public seed with each hash value.
    fn exact_outputs(
        &self,
        limit: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = LhReport>>, TooManyOutputs> {
        let (g, seeds) = (self.g, self.seeds);
        TooManyOutputs::check(u64::from(g) * u64::from(seeds), self.k, limit)?;
        Ok(ExactOutputs {
            outputs: (0..seeds).flat_map(move |seed| (0..g).map(move |y| LhReport { seed, y })),
            coverage: Coverage::Every,
        })
    }
}
