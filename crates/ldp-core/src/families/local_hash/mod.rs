//! Local hashing (Bassily and Smith 2015; Wang et al. 2017), paper Section "LH".

use rand::{Rng, RngExt};
use rand_distr::{Bernoulli, Distribution};

use crate::aggregate::SupportCounts;
use crate::attack_surface::{
    AttackSurface, MaxGain, SEED_LANES, best_seed, support_attack_surface,
};
use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::exact_outputs::{Coverage, ExactOutputs, TooManyOutputs};
use crate::families::{FamilyMechanism, FamilyParams};
use crate::longitudinal::{MemoShape, Refresh};
use crate::mechanism::{
    Mechanism, PureProtocol, Support, check_runnable, eq_by_spec, two_valued_log_likelihoods,
};
use crate::report::{LhReport, ReportLimits};
use crate::sampling::uniform_other;
use crate::server::Clip;
use crate::space::ParameterSpace;
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

pub(crate) mod scan;
mod xxh32;

pub use xxh32::xxh32_decimal;

/// LH's `(p*, q*) = (e^eps / (e^eps + g - 1), 1/g)`: GRR's p over the g hash values, and
/// the chance 1/g that a universal hash sends another item to the reported value.
pub fn probabilities(eps: Epsilon, g: u32) -> (f64, f64) {
    let g = f64::from(g);
    (1.0 / (1.0 + (g - 1.0) * (-eps.get()).exp()), 1.0 / g)
}

/// OLH's hash range, `g = round(e^eps + 1)`, which minimizes the variance. The hash is
/// 32 bits wide, so g saturates at `u32::MAX` (eps above about 22).
pub fn optimal_range(eps: Epsilon) -> u32 {
    (eps.exp() + 1.0).round().min(f64::from(u32::MAX)) as u32
}

/// Seeds the maximal gain attack's search tries at most, 2^24: it finds a seed hashing all
/// r targets together with probability `1 - (1 - g^-(r-1))^budget`, above `1 - e^-16`
/// whenever `g^(r-1) <= 2^20`; beyond that it supports fewer, and measurements say so.
pub const SEED_BUDGET: u64 = 1 << 24;

/// BLH's hash range.
pub const BINARY_RANGE: u32 = 2;

/// The paper's space for ALH: every g in `[2, max(k, round(e^eps) + 1)]`.
pub fn paper_space(k: DomainSize, eps: Epsilon) -> ParameterSpace {
    ParameterSpace::integers(2, k.get().max(optimal_range(eps))).expect("k >= 2")
}

/// The hash of the Python LDP ecosystem (pure-LDP, multi-freq-ldpy), so that reports
/// interoperate: `h_seed(v) = XXH32(ASCII decimal of v, seed) mod g`.
///
/// ```
/// use ldp_core::families::local_hash::hash_item;
/// assert_eq!(hash_item(5, 123, u32::MAX), 0x1f77b36a % u32::MAX);
/// assert_eq!(hash_item(0, 0, 2), 0x48454cb2 % 2);
/// ```
#[inline]
pub fn hash_item(item: u32, seed: u32, g: u32) -> u32 {
    xxh32_decimal(item, seed) % g
}

/// [`hash_item`] of a fixed list of items under many seeds, the items' decimal digits
/// prepared once: the maximal gain attack's seed search hashes its targets under up to
/// [`SEED_BUDGET`] seeds.
///
/// ```
/// use ldp_core::families::local_hash::{hash_item, TargetHasher};
/// let targets = TargetHasher::new(&[7, 1234], 5);
/// assert_eq!(targets.hash(1, 99), hash_item(1234, 99, 5));
/// let (seed, value, supported) = targets.best_seed(1 << 16);
/// assert_eq!(supported, 2); // g = 5: one seed in five hashes both together
/// assert_eq!((targets.hash(0, seed as u32), targets.hash(1, seed as u32)), (value, value));
/// ```
#[derive(Debug, Clone)]
pub struct TargetHasher {
    digits: Vec<xxh32::Decimal>,
    g: u32,
}

impl TargetHasher {
    /// Prepares `items` for hashing into `0..g` (`g >= 1`).
    pub fn new(items: &[u32], g: u32) -> Self {
        TargetHasher {
            digits: items.iter().map(|&v| xxh32::Decimal::new(v)).collect(),
            g: g.max(1),
        }
    }

    /// `hash_item(items[i], seed, g)`.
    #[inline]
    pub fn hash(&self, i: usize, seed: u32) -> u32 {
        let d = &self.digits[i];
        xxh32::xxh32_short(&d.digits, d.len, seed) % self.g
    }

    /// The values of `items[i]` under the seeds `first, first + 1, ...`, one per slot of
    /// `out` (at most [`SEED_LANES`]): the lanes share the digits and run side by side.
    #[inline]
    pub fn hash_lanes(&self, i: usize, first: u32, out: &mut [u32]) {
        let d = &self.digits[i];
        let mut h = [0u32; SEED_LANES];
        for (l, h) in h.iter_mut().enumerate() {
            *h = xxh32::initial(d.len, first.wrapping_add(l as u32));
        }
        let mut j = 0;
        while j + 4 <= d.len {
            let w = xxh32::word(&d.digits, j);
            h.iter_mut().for_each(|h| *h = xxh32::round4(*h, w));
            j += 4;
        }
        for &byte in &d.digits[j..d.len] {
            h.iter_mut().for_each(|h| *h = xxh32::round1(*h, byte));
        }
        for (o, &h) in out.iter_mut().zip(&h) {
            *o = xxh32::avalanche(h) % self.g;
        }
    }

    /// [`best_seed`] over the seeds `0..seeds`: `(seed, value, supported)`.
    pub fn best_seed(&self, seeds: u64) -> (u64, u32, u32) {
        best_seed(seeds, self.digits.len(), self.g, |first, i, out| {
            self.hash_lanes(i, first as u32, out)
        })
    }
}

/// The bias that hash collisions under the public seeds `0..seeds` give the estimate of
/// every item, for a population with shares `f` (summing to 1): the families that hash
/// items with a fixed public set of seeds (fast local hashing, the count-mean sketches)
/// estimate as if two items collided under exactly `1/g` of them.
/// `b_x = (g / (g - 1)) ((1/s) sum_j F_j(h_j(x)) - f_x - (1 - f_x) / g)`, with `F_j(v)`
/// the share of the population hashing to v under seed j. O(s k) hashes.
///
/// # Formula
/// The estimators are `(g / (g - 1)) (m_x - 1/g)` of a statistic `m_x` whose mean is
/// `f_x + sum_{u != x} f_u rho_ux` for fast local hashing's and the sketches'
/// (normalized), `rho_ux` the share of seeds under which u and x collide; the estimator
/// assumes `rho = 1/g`, and the difference is the bias.
pub fn collision_bias(g: u32, seeds: u32, f: &[f64]) -> Vec<f64> {
    let k = f.len() as u32;
    let mut collided = vec![0.0; f.len()];
    let mut bucket = vec![0.0; g as usize];
    let mut hashes = vec![0u32; f.len()];
    for seed in 0..seeds {
        bucket.fill(0.0);
        for (item, h) in (0..k).zip(&mut hashes) {
            *h = hash_item(item, seed, g);
            bucket[*h as usize] += f[item as usize];
        }
        for (c, &h) in collided.iter_mut().zip(&hashes) {
            *c += bucket[h as usize];
        }
    }
    let (gf, sf) = (f64::from(g), f64::from(seeds));
    collided
        .iter()
        .zip(f)
        .map(|(&c, &fx)| gf / (gf - 1.0) * (c / sf - fx - (1.0 - fx) / gf))
        .collect()
}

/// The hash range must be at least 2.
pub(crate) fn check_hash_range(g: u32) -> Result<(), ParamError> {
    if g >= 2 {
        Ok(())
    } else {
        Err(ParamError::Parameter {
            name: "g",
            description: "hash range g",
            requirement: "be at least 2".into(),
            value: f64::from(g),
        })
    }
}

/// LH: the client draws a hash seed uniformly from the 32-bit seeds, hashes its item into
/// `0..g`, and applies GRR over `0..g`: keep the hash value with `p = e^eps / (e^eps + g - 1)`,
/// otherwise report one of the other `g - 1` values uniformly. One hash per report.
///
/// Privacy: the seed is independent of the item; given the seed, the output is GRR over
/// `g` values, whose likelihood ratio is at most `e^eps`.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, LocalHashing};
/// let olh = LocalHashing::optimized(DomainSize::new(100)?, Epsilon::new(4.0)?)?;
/// assert_eq!(olh.hash_range(), 56); // round(e^4 + 1)
/// assert_eq!(LocalHashing::binary(DomainSize::new(100)?, Epsilon::new(4.0)?)?.hash_range(), 2);
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct LocalHashing {
    k: DomainSize,
    eps: Epsilon,
    g: u32,
    p: f64,
    q: f64,
    keep: Bernoulli,
    /// [`LocalHashing::log_likelihood_given`] for an unsupported and a supported item,
    /// taken once (the MAP attack asks both per report).
    ln_given: [f64; 2],
}

impl LocalHashing {
    /// LH with hash range `g >= 2`.
    pub fn new(k: DomainSize, eps: Epsilon, g: u32) -> Result<Self, ParamError> {
        check_hash_range(g)?;
        check_runnable(k, eps)?;
        let (p, q) = probabilities(eps, g);
        Ok(Self {
            k,
            eps,
            g,
            p,
            q,
            keep: Bernoulli::new(p).expect("p in [0, 1]"),
            ln_given: [false, true].map(|supported| ln_report_given(p, g, supported)),
        })
    }

    /// Binary LH: `g = 2`.
    pub fn binary(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        Self::new(k, eps, BINARY_RANGE)
    }

    /// Optimized LH: `g =` [`optimal_range`]`(eps)`, which minimizes the variance.
    pub fn optimized(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        Self::new(k, eps, optimal_range(eps))
    }

    /// The hash range g.
    pub fn hash_range(&self) -> u32 {
        self.g
    }

    /// A report of `item` hashed with `seed` rather than a fresh one: GRR over the g
    /// hashed values. For clients that keep one seed (LOLOHA's per-user hash,
    /// [`HashedMemo`](crate::longitudinal::HashedMemo)); a seed reused across a user's
    /// reports links them.
    #[inline]
    pub fn perturb_with_seed<R: Rng + ?Sized>(
        &self,
        item: u32,
        seed: u32,
        rng: &mut R,
    ) -> Result<LhReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        let h = hash_item(item, seed, self.g);
        let y = if self.keep.sample(rng) {
            h
        } else {
            uniform_other(self.g, h, rng)
        };
        Ok(LhReport { seed, y })
    }
}

eq_by_spec!(LocalHashing);

impl FamilyMechanism for LocalHashing {
    const RELABELLING_INVARIANT: bool = true;

    const PUBLIC_DRAW: bool = true;

    /// The seed is the public part (its low 32 bits); a value's class is its hash.
    fn memo_class(&self, item: u32, public: u64) -> u32 {
        hash_item(item, public as u32, self.g)
    }

    fn perturb_public<R: Rng + ?Sized>(
        &self,
        item: u32,
        public: u64,
        rng: &mut R,
    ) -> Result<LhReport, ItemOutOfRange> {
        self.perturb_with_seed(item, public as u32, rng)
    }

    fn check(_: DomainSize, _: Epsilon, g: u32) -> Result<(), ParamError> {
        check_hash_range(g)
    }

    fn build(k: DomainSize, eps: Epsilon, g: u32) -> Result<Self, ParamError> {
        Self::new(k, eps, g)
    }

    fn probabilities(_: DomainSize, eps: Epsilon, g: u32) -> Option<(f64, f64)> {
        Some(probabilities(eps, g))
    }

    fn support_size_range(k: DomainSize, _: u32) -> Option<(u32, u32)> {
        Some((0, k.get()))
    }

    /// A 32-bit seed and a value in `0..g`.
    fn report_limits(_: DomainSize, g: u32) -> ReportLimits {
        ReportLimits {
            values: g,
            entries: 1,
            seeds: 1 << 32,
        }
    }

    /// A memo's hashed value is refreshed by randomized response over `0..g`, its seed
    /// kept; one report is LH with the same g.
    fn refresh(_: DomainSize, g: u32) -> Option<Refresh<u32>> {
        Some(Refresh {
            shape: MemoShape::SeededValue { values: g },
            chained: |g, _| g,
        })
    }
}

impl LocalHashing {
    /// `ln P[report | x]` for an item the report supports or not: a uniform seed of 32
    /// bits, then the hash value kept with probability p or moved to one of the g - 1
    /// others.
    fn log_likelihood_given(&self, supported: bool) -> f64 {
        self.ln_given[usize::from(supported)]
    }
}

/// [`LocalHashing::log_likelihood_given`] of LH with keep probability `p` over `0..g`.
fn ln_report_given(p: f64, g: u32, supported: bool) -> f64 {
    let seed_ln = -32.0 * std::f64::consts::LN_2;
    let y_prob = if supported {
        p
    } else {
        (1.0 - p) / f64::from(g - 1)
    };
    seed_ln + y_prob.ln()
}

impl Mechanism for LocalHashing {
    type Report = LhReport;
    type Aggregator = SupportCounts<LocalHashing>;

    fn spec(&self) -> Spec {
        Spec::from_parts(self.k, self.eps, FamilyParams::LocalHashing { g: self.g })
    }

    #[inline]
    fn perturb<R: Rng + ?Sized>(&self, item: u32, rng: &mut R) -> Result<LhReport, ItemOutOfRange> {
        let seed = rng.next_u32();
        self.perturb_with_seed(item, seed, rng)
    }

    fn validate(&self, report: &LhReport) -> Result<(), ReportError> {
        if report.y < self.g {
            Ok(())
        } else {
            Err(ReportError::OutOfRange {
                field: "y",
                value: u64::from(report.y),
                bound: u64::from(self.g),
            })
        }
    }

    /// The seed's probability `2^-32` is common to every item and included.
    fn log_likelihood(&self, report: &LhReport, item: u32) -> f64 {
        self.log_likelihood_given(self.supports(report, item))
    }

    fn log_likelihoods(&self, report: &LhReport, out: &mut Vec<f64>) {
        let given = |supported| self.log_likelihood_given(supported);
        two_valued_log_likelihoods(self, report, given(true), given(false), out);
    }

    fn aggregator(&self) -> SupportCounts<LocalHashing> {
        SupportCounts::new(self.clone())
    }
}

impl Support for LocalHashing {
    /// Hashes every item of the domain once: O(k) per report, in SIMD-friendly blocks
    /// (see the `scan` module). Matches are collected into bit masks without branching
    /// (for small g a match is a coin flip, which a branch would mispredict half the time).
    #[inline]
    fn for_each_supported(&self, report: &LhReport, visit: impl FnMut(u32)) {
        scan::for_each_match(self.k.get(), self.g, report.seed, report.y, visit);
    }

    fn supports(&self, report: &LhReport, item: u32) -> bool {
        hash_item(item, report.seed, self.g) == report.y
    }

    #[inline]
    fn add_support(&self, report: &LhReport, counts: &mut [u64], visit: impl FnMut(u32)) {
        scan::add_matches(self.k.get(), self.g, report.seed, report.y, counts, visit);
    }

    /// `p + (k - 1) / g`: the true item when kept, every other with probability 1/g.
    fn scanned_support_mean(&self) -> Option<f64> {
        Some(self.p + (self.k.as_f64() - 1.0) * self.q)
    }
}

impl PureProtocol for LocalHashing {
    fn p_star(&self) -> f64 {
        self.p
    }
    /// `1/g`: a universal hash sends another item to the reported value with probability 1/g.
    fn q_star(&self) -> f64 {
        self.q
    }
}

impl AttackSurface for LocalHashing {
    support_attack_surface!();

    /// One seed and value that hash as many targets together as a bounded search finds
    /// ([`best_seed`] over the first [`SEED_BUDGET`] seeds: all of them when g^(r-1) is
    /// small); every fake user sends it.
    fn plan_max_gain(&self, targets: &[u32], _: Clip) -> MaxGain<LhReport> {
        let (seed, y, supported) = TargetHasher::new(targets, self.g).best_seed(SEED_BUDGET);
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
            seed: rng.next_u32(),
            y: rng.random_range(0..self.g),
        }
    }

    /// Every hash value of the seeds up to the first that separates two items (at most
    /// 64 seeds): a report's ratio depends on its seed only through which items share its
    /// value, and a separating seed gives the largest.
    fn exact_outputs(
        &self,
        limit: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = LhReport>>, TooManyOutputs> {
        let (g, k) = (self.g, self.k.get());
        let seeds = (0..64u32)
            .position(|s| (1..k).any(|x| hash_item(x, s, g) != hash_item(0, s, g)))
            .map_or(64, |s| s as u32 + 1);
        TooManyOutputs::check(u64::from(seeds) * u64::from(g), self.k, limit)?;
        Ok(ExactOutputs {
            outputs: (0..seeds).flat_map(move |seed| (0..g).map(move |y| LhReport { seed, y })),
            coverage: Coverage::Seeds { seeds },
        })
    }
}
