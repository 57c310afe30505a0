//! Pool inference (Gadotti, Houssiau, Annamalai and de Montjoye, "Pool Inference Attacks on
//! Local Differential Privacy", USENIX Security 2022; code: `computationalprivacy/pool-inference`):
//! the Bayesian attacker that reads one user's many reports, each of a different record,
//! and infers which *pool* of items (a topic: sports emojis, news sites of one leaning) the
//! user prefers. It works on any mechanism's likelihoods, so it runs on every family of the
//! registry, Apple's count-mean sketches among them.
//!
//! # The model (as the reference simulates it)
//!
//! The domain `0..k` is cut into n >= 2 *pools* `P_1..P_n` and a *rest* `P_rest`: the
//! items of no pool, which the reference keeps implicitly (`P_rest = universe[sum of pool
//! sizes:]`) and [`Pools`] keeps explicitly. Each user has a preferred pool `u`, uniform
//! over the n pools, and two numbers drawn uniformly: the interest `gamma` in `[0, 1]` and
//! the polarization `delta` in `[1/n, 1]` ([`Preferences::Uniform`]). Each of the user's
//! records is, independently,
//!
//! - with probability `gamma delta` an item of `P_u`,
//! - with probability `gamma (1 - delta)` an item of another pool (each of the n - 1
//!   equally likely),
//! - with probability `1 - gamma` an item of the rest,
//!
//! and within a pool (or the rest) item r (counted from 1, in the order given) has
//! probability proportional to `r^(-s)`: Zipf with exponent s (1.2 in the reference's emoji
//! setting; the reference's `zip_pdf`). Every record is perturbed into a fresh report, as
//! Apple's clients do; the attacker links the user's reports.
//!
//! # The attacker
//!
//! With `phi_i` the attacker's within-pool distribution ([`Knowledge::Uniform`]: uniform,
//! the reference's default `phi_bar = None`, its "Adv_weak"; [`Knowledge::Exact`]: the true
//! Zipf law, an upper bound for its "Adv_strong", which estimates `phi` from a CMS server's
//! frequencies), report t's probability given `(u, gamma, delta)` is
//!
//! ```text
//! P[r_t | u, gamma, delta] = gamma delta A_tu + gamma (1 - delta) B_tu + (1 - gamma) C_t,
//! A_tu = sum_{x in P_u} phi_u(x) P[r_t | x],
//! B_tu = 1/(n-1) sum_{i != u} sum_{x in P_i} phi_i(x) P[r_t | x],
//! C_t  = sum_{x in P_rest} phi_rest(x) P[r_t | x],
//! ```
//!
//! and the posterior of pool u is
//! `P[u | r] ∝ (1/n) ∫∫ prod_t P[r_t | u, gamma, delta] dgamma ddelta` over the prior's
//! rectangle. We integrate with a fixed tensor Gauss-Legendre grid of
//! [`PoolConfig::quadrature`] nodes per axis (20 by default: 400 nodes, about as many as
//! the degree-50 triangle rule the reference takes from quadpy for n >= 49 records), in log
//! space: the products are taken in blocks short enough never to underflow (each factor is
//! at least `min(gamma delta, gamma (1 - delta)/(n-1), 1 - gamma)` once the report's
//! likelihoods are scaled to a largest term of 1), then summed with log-sum-exp. The pool
//! prior is uniform, as the simulation draws u; the reference multiplies by the pool's
//! prior mass `phi_bar(P_u)` (its size, with the uniform `phi_bar`), the same thing when the
//! pools have equal sizes, as in its emoji setting.
//!
//! ## The Jacobian the paper omits
//!
//! The reference integrates over `alpha = gamma delta`, `beta = gamma (1 - delta)` (the
//! triangle `(0,0), (1,0), (1/n, 1 - 1/n)`), where the likelihood is linear. The change of
//! variables has `|d(alpha, beta)/d(gamma, delta)| = gamma = alpha + beta`, so the uniform
//! prior on `(gamma, delta)` is the density `1 / ((1 - 1/n)(alpha + beta))` on the
//! triangle, not a constant. The paper's formula integrates the likelihood with a flat
//! density in `(alpha, beta)`; the published code multiplies the integrand by
//! `1 / (alpha + beta)` and says in a comment that the code behind the paper's figures
//! lacked that factor (with a negligible effect in its tests). We integrate over
//! `(gamma, delta)` directly, where the prior is flat, so the Jacobian never appears: the
//! result is the corrected one. The integration tests check it against a brute-force
//! integral in `(alpha, beta)` that carries the `1 / (alpha + beta)` factor.
//!
//! # Likelihoods, cheaply and exactly
//!
//! The posterior needs `P[r_t | x]` for every item x with mass, which is every item of
//! `0..k` here, up to a factor common to all x. We take it from
//! [`AttackSurface::add_evidence`]: for the families whose reports support items it adds 1
//! on each supported item (their likelihood takes two values, supported or not), for SHE
//! the log-likelihood; either way `ln P[r | x] = a + b e(x)` for the evidence e. Two calls
//! of [`Mechanism::log_likelihood`] (at the items of least and most evidence) give b
//! exactly, and a cancels. For the count-mean sketch this is k hashes per report instead
//! of k calls of `log_likelihood`, each of which copies the report's row. The integration
//! tests check the result against `log_likelihoods` for every protocol of the registry.
//!
//! # What is scored (as the reference scores it)
//!
//! For each number of records, each user's guess is the pool of highest posterior and its
//! confidence that posterior. Users are sorted by confidence, most confident first; at a
//! null rate r the attacker answers only for the top `floor((1 - r) U)` of the U users, and
//! the *precision* is the share of right guesses among them. The reference's **AUC** is the
//! area under precision against null rate (101 null rates, trapezoids; its
//! `parse_pickle_prec_nr`); guessing at random gives `1/n`, the null line of its figures
//! ([`PoolMeasurement::null_precision`]). We also report, per pool, the ROC AUC of the
//! posterior of that pool as a test of "this user prefers this (sensitive) pool", averaged
//! over pools (0.5 for a blind attacker), and the precision at a few null rates
//! ([`NULL_RATES`]). Ties in confidence keep user order (the reference's tuple sort puts
//! the right guesses first among exact ties).
//!
//! Randomness: run r's user batch b draws from `Streams::new(seed, r, Genuine).batch(b)`
//! (preferences, records and reports, user after user); the attacker draws nothing.
//! Results are identical on any thread count.
//!
//! ```
//! use ldp_attack::pool::{PoolConfig, Pools, measure_pools};
//! use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
//! let k = DomainSize::new(60)?;
//! // Three pools of ten items; the other thirty are the rest.
//! let pools = Pools::new(k, (0..3).map(|i| (10 * i..10 * i + 10).collect()).collect())?;
//! let grr = Spec::classic(Protocol::Grr, k, Epsilon::new(6.0)?)?;
//! let config = PoolConfig { users: 300, ..PoolConfig::reference(1, 7, &[5, 60]) };
//! let m = measure_pools(&grr, &pools, &config)?;
//! assert!((m.null_precision - 1.0 / 3.0).abs() < 1e-12);
//! assert!(m.auc[1].mean > m.auc[0].mean && m.auc[1].mean > 0.6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use ldp_core::simulation::{Estimate, Role, Streams, for_each_batch};
use ldp_core::{AttackSurface, DomainSize, Mechanism, Spec, dispatch, parallel};
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

/// A pool, or the rest, in [`PoolsError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Block {
    /// Pool i (from 0).
    Pool(usize),
    /// The items of no pool.
    Rest,
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Block::Pool(i) => write!(f, "pool {i}"),
            Block::Rest => f.write_str("the rest"),
        }
    }
}

/// Pools that cannot be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolsError {
    /// The model needs at least two pools (the polarization is drawn in `[1/n, 1]`).
    #[error("pool inference needs at least two pools, got {pools}")]
    TooFewPools {
        /// Pools given.
        pools: usize,
    },
    /// A pool with no item.
    #[error("{block} is empty")]
    EmptyPool {
        /// The empty pool (or the rest).
        block: Block,
    },
    /// An item outside the domain.
    #[error("item {item} of {block} is outside the domain 0..{k}")]
    OutsideDomain {
        /// The item.
        item: u32,
        /// Where it was given.
        block: Block,
        /// Domain size.
        k: u32,
    },
    /// An item in two pools (or twice in one, or in a pool and the rest).
    #[error("item {item} is in {first} and in {second}")]
    Overlap {
        /// The item.
        item: u32,
        /// Where it came first.
        first: Block,
        /// Where it came again.
        second: Block,
    },
    /// An explicit rest that leaves an item of the domain in no pool and not in the rest.
    #[error("item {item} is in no pool and not in the rest")]
    LeftOut {
        /// The item.
        item: u32,
    },
}

/// A partition of the domain `0..k` into n >= 2 pools and a non-empty rest (the items of
/// no pool, to which the model sends a share `1 - gamma` of each user's records).
///
/// [`Pools::new`] takes the rest to be every item of no pool (the reference's implicit
/// `P_rest`), so items left out of the pools are allowed there and form the rest, which
/// must not be empty; [`Pools::with_rest`] takes the rest explicitly (its order sets the
/// Zipf ranks) and refuses an item left out of both ([`PoolsError::LeftOut`]). Either way
/// an empty pool, an item outside `0..k`, or an item in two places is an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pools {
    k: DomainSize,
    pools: Vec<Vec<u32>>,
    rest: Vec<u32>,
}

impl Pools {
    /// Pools, in order, each item's Zipf rank its position; the rest is every other item,
    /// in increasing order.
    ///
    /// ```
    /// use ldp_attack::pool::{Block, Pools, PoolsError};
    /// use ldp_core::DomainSize;
    /// let k = DomainSize::new(10)?;
    /// let pools = Pools::new(k, vec![vec![0, 1], vec![2, 3]])?;
    /// assert_eq!(pools.rest(), &[4, 5, 6, 7, 8, 9]);
    /// assert_eq!(
    ///     Pools::new(k, vec![vec![0, 1], vec![1, 2]]),
    ///     Err(PoolsError::Overlap { item: 1, first: Block::Pool(0), second: Block::Pool(1) })
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(k: DomainSize, pools: Vec<Vec<u32>>) -> Result<Self, PoolsError> {
        let owner = Self::owners(k, &pools)?;
        let rest: Vec<u32> = (0..k.get())
            .filter(|&x| owner[x as usize].is_none())
            .collect();
        Self::checked(k, pools, rest)
    }

    /// Pools and an explicit rest; together they must hold every item of `0..k` once.
    ///
    /// ```
    /// use ldp_attack::pool::{Pools, PoolsError};
    /// use ldp_core::DomainSize;
    /// let k = DomainSize::new(5)?;
    /// assert!(Pools::with_rest(k, vec![vec![0], vec![1]], vec![4, 3, 2]).is_ok());
    /// assert_eq!(
    ///     Pools::with_rest(k, vec![vec![0], vec![1]], vec![4, 2]),
    ///     Err(PoolsError::LeftOut { item: 3 })
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_rest(
        k: DomainSize,
        pools: Vec<Vec<u32>>,
        rest: Vec<u32>,
    ) -> Result<Self, PoolsError> {
        let mut owner = Self::owners(k, &pools)?;
        Self::claim(k, &mut owner, Block::Rest, &rest)?;
        if let Some(x) = owner.iter().position(Option::is_none) {
            return Err(PoolsError::LeftOut { item: x as u32 });
        }
        Self::checked(k, pools, rest)
    }

    fn owners(k: DomainSize, pools: &[Vec<u32>]) -> Result<Vec<Option<Block>>, PoolsError> {
        if pools.len() < 2 {
            return Err(PoolsError::TooFewPools { pools: pools.len() });
        }
        let mut owner = vec![None; k.as_usize()];
        for (i, pool) in pools.iter().enumerate() {
            Self::claim(k, &mut owner, Block::Pool(i), pool)?;
        }
        Ok(owner)
    }

    fn claim(
        k: DomainSize,
        owner: &mut [Option<Block>],
        block: Block,
        items: &[u32],
    ) -> Result<(), PoolsError> {
        if items.is_empty() {
            return Err(PoolsError::EmptyPool { block });
        }
        for &item in items {
            let slot = owner
                .get_mut(item as usize)
                .ok_or(PoolsError::OutsideDomain {
                    item,
                    block,
                    k: k.get(),
                })?;
            if let Some(first) = *slot {
                return Err(PoolsError::Overlap {
                    item,
                    first,
                    second: block,
                });
            }
            *slot = Some(block);
        }
        Ok(())
    }

    fn checked(k: DomainSize, pools: Vec<Vec<u32>>, rest: Vec<u32>) -> Result<Self, PoolsError> {
        if rest.is_empty() {
            return Err(PoolsError::EmptyPool { block: Block::Rest });
        }
        Ok(Self { k, pools, rest })
    }

    /// `n` pools of `size` consecutive items from 0 (the reference's layout); the rest is
    /// the other items of `0..k`.
    ///
    /// ```
    /// use ldp_attack::pool::Pools;
    /// use ldp_core::DomainSize;
    /// let emoji = Pools::consecutive(DomainSize::new(2600)?, 6, 228)?; // the emoji setting
    /// assert_eq!(emoji.pools()[5], (1140..1368).collect::<Vec<u32>>());
    /// assert_eq!(emoji.rest().len(), 1232);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn consecutive(k: DomainSize, n: u32, size: u32) -> Result<Self, PoolsError> {
        // Past u32::MAX the items saturate, and the domain check names them.
        let pools = (0..n)
            .map(|i| (i.saturating_mul(size)..(i + 1).saturating_mul(size)).collect())
            .collect();
        Self::new(k, pools)
    }

    /// Domain size.
    pub fn k(&self) -> DomainSize {
        self.k
    }

    /// The pools, each in Zipf-rank order.
    pub fn pools(&self) -> &[Vec<u32>] {
        &self.pools
    }

    /// The rest, in Zipf-rank order.
    pub fn rest(&self) -> &[u32] {
        &self.rest
    }

    /// The n pools and the rest, the rest last.
    fn blocks(&self) -> impl Iterator<Item = &[u32]> {
        self.pools
            .iter()
            .map(Vec::as_slice)
            .chain(std::iter::once(self.rest.as_slice()))
    }
}

/// How each user's `(gamma, delta)` is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Preferences {
    /// The reference's: `gamma` uniform in `[0, 1]`, `delta` uniform in `[1/n, 1]`.
    Uniform,
    /// Every user the same (the attacker still assumes the uniform prior).
    Fixed {
        /// Interest: the share of records from the pools, in `[0, 1]`.
        gamma: f64,
        /// Polarization: the share of those from the preferred pool, in `[1/n, 1]`.
        delta: f64,
    },
}

/// What the attacker knows of the distribution within each pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Knowledge {
    /// Uniform within each pool and the rest: the reference's default (`phi_bar = None`,
    /// "Adv_weak").
    Uniform,
    /// The true Zipf law within each pool and the rest: the best the reference's
    /// "Adv_strong" (which estimates it from a CMS server's frequencies) can do.
    Exact,
}

/// What to simulate and how to attack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolConfig {
    /// Independent runs (at least 1).
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
    /// Users per run (at least 1).
    pub users: usize,
    /// The numbers of records per user at which to attack, strictly increasing from 1.
    /// Each user sends as many reports as the largest; the attack after t reads the
    /// first t (common random numbers across t).
    pub records: Vec<u32>,
    /// Zipf exponent within pools and the rest (finite, at least 0; 0 is uniform).
    pub zipf: f64,
    /// How users' interest and polarization are drawn.
    pub preferences: Preferences,
    /// The attacker's within-pool distribution.
    pub attacker: Knowledge,
    /// Gauss-Legendre nodes per axis of the `(gamma, delta)` integral, in `1..=200`.
    pub quadrature: u32,
}

impl PoolConfig {
    /// The reference's setting: Zipf 1.2, uniform preferences, the uniform-prior attacker,
    /// 20 x 20 quadrature nodes, 2,600 users per run.
    pub fn reference(runs: u64, seed: u64, records: &[u32]) -> Self {
        Self {
            runs,
            seed,
            users: 2600,
            records: records.to_vec(),
            zipf: 1.2,
            preferences: Preferences::Uniform,
            attacker: Knowledge::Uniform,
            quadrature: DEFAULT_QUADRATURE,
        }
    }
}

/// Gauss-Legendre nodes per axis by default.
pub const DEFAULT_QUADRATURE: u32 = 20;

/// The null rates at which [`PoolMeasurement::precision`] is given.
pub const NULL_RATES: [f64; 3] = [0.0, 0.5, 0.9];

/// A configuration the measurement cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PoolError {
    /// The spec and the pools disagree on k.
    #[error("the protocol has k = {spec} but the pools partition 0..{pools}")]
    DomainMismatch {
        /// k of the protocol.
        spec: u32,
        /// k of the pools.
        pools: u32,
    },
    /// No runs.
    #[error("at least one run is needed")]
    NoRuns,
    /// More runs than this platform can count.
    #[error("{runs} runs are more than this platform can count")]
    TooManyRuns {
        /// Runs asked for.
        runs: u64,
    },
    /// No users.
    #[error("at least one user is needed")]
    NoUsers,
    /// Records per user not strictly increasing from 1.
    #[error("records per user must increase strictly from 1 or more, got {records:?}")]
    Records {
        /// As given.
        records: Vec<u32>,
    },
    /// A Zipf exponent that is negative or not finite.
    #[error("the Zipf exponent must be finite and at least 0, got {zipf}")]
    Zipf {
        /// As given.
        zipf: f64,
    },
    /// Fixed preferences outside the prior's rectangle.
    #[error("gamma must lie in [0, 1] and delta in [1/n, 1] = [{low}, 1], got ({gamma}, {delta})")]
    Preferences {
        /// As given.
        gamma: f64,
        /// As given.
        delta: f64,
        /// 1/n.
        low: f64,
    },
    /// Quadrature nodes outside `1..=200`.
    #[error("quadrature nodes per axis must lie in 1..=200, got {nodes}")]
    Quadrature {
        /// As given.
        nodes: u32,
    },
    /// The spec cannot run.
    #[error(transparent)]
    Param(#[from] ldp_core::ParamError),
}

/// The attack's scores after each number of records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolMeasurement {
    /// Runs.
    pub runs: u64,
    /// Users per run.
    pub users: usize,
    /// Pools.
    pub pools: usize,
    /// Records per user, as asked.
    pub records: Vec<u32>,
    /// Precision of a blind guess, `1/n`: the reference's null line.
    pub null_precision: f64,
    /// The reference's AUC (area under precision against null rate), per number of records.
    pub auc: Vec<Estimate>,
    /// ROC AUC of each pool's posterior for "prefers this pool", averaged over pools.
    pub roc_auc: Vec<Estimate>,
    /// Precision at each of [`NULL_RATES`], per number of records.
    pub precision: Vec<Vec<Estimate>>,
}

/// One user's posteriors at each number of records, and the preferred pool.
#[derive(Debug, Clone, PartialEq)]
pub struct Attacked {
    /// The preferred pool.
    pub pool: usize,
    /// `posteriors[c][i]`: the posterior of pool i after `records[c]` reports.
    pub posteriors: Vec<Vec<f64>>,
}

/// Measures the pool inference attack on `spec`'s reports.
pub fn measure_pools(
    spec: &Spec,
    pools: &Pools,
    config: &PoolConfig,
) -> Result<PoolMeasurement, PoolError> {
    validate(spec, pools, config)?;
    let count =
        usize::try_from(config.runs).map_err(|_| PoolError::TooManyRuns { runs: config.runs })?;
    let runs: Vec<Vec<Attacked>> =
        parallel::map(count, |run| simulate_run(spec, pools, config, run as u64))
            .into_iter()
            .collect::<Result<_, _>>()?;
    let n = pools.pools.len();
    let users = config.users;
    let per_run = |c: usize| runs.iter().map(move |r| score(r, c, n));
    let scores: Vec<Vec<Scores>> = (0..config.records.len())
        .map(|c| per_run(c).collect())
        .collect();
    Ok(PoolMeasurement {
        runs: config.runs,
        users,
        pools: n,
        records: config.records.clone(),
        null_precision: 1.0 / n as f64,
        auc: scores
            .iter()
            .map(|s| Estimate::from_runs(s.iter().map(|s| s.auc)))
            .collect(),
        roc_auc: scores
            .iter()
            .map(|s| Estimate::from_runs(s.iter().map(|s| s.roc_auc)))
            .collect(),
        precision: scores
            .iter()
            .map(|s| {
                (0..NULL_RATES.len())
                    .map(|j| {
                        let trials = top(NULL_RATES[j], users).max(1);
                        Estimate::rate_from_runs(s.iter().map(|s| s.precision[j]), trials)
                    })
                    .collect()
            })
            .collect(),
    })
}

/// Every user of one run, attacked (the simulation behind [`measure_pools`]).
pub fn simulate_run(
    spec: &Spec,
    pools: &Pools,
    config: &PoolConfig,
    run: u64,
) -> Result<Vec<Attacked>, PoolError> {
    validate(spec, pools, config)?;
    Ok(dispatch!(spec.build()?, m => run_users(&m, pools, config, run)))
}

fn validate(spec: &Spec, pools: &Pools, config: &PoolConfig) -> Result<(), PoolError> {
    if spec.k() != pools.k {
        return Err(PoolError::DomainMismatch {
            spec: spec.k().get(),
            pools: pools.k.get(),
        });
    }
    if config.runs == 0 {
        return Err(PoolError::NoRuns);
    }
    if config.users == 0 {
        return Err(PoolError::NoUsers);
    }
    let r = &config.records;
    if r.first().is_none_or(|&t| t == 0) || r.windows(2).any(|w| w[0] >= w[1]) {
        return Err(PoolError::Records { records: r.clone() });
    }
    if !(config.zipf.is_finite() && config.zipf >= 0.0) {
        return Err(PoolError::Zipf { zipf: config.zipf });
    }
    if let Preferences::Fixed { gamma, delta } = config.preferences {
        let low = 1.0 / pools.pools.len() as f64;
        if !((0.0..=1.0).contains(&gamma) && (low..=1.0).contains(&delta)) {
            return Err(PoolError::Preferences { gamma, delta, low });
        }
    }
    if !(1..=200).contains(&config.quadrature) {
        return Err(PoolError::Quadrature {
            nodes: config.quadrature,
        });
    }
    Ok(())
}

/// Zipf weights `r^(-s)` of ranks 1..=len, normalized.
fn zipf_weights(len: usize, s: f64) -> Vec<f64> {
    let w: Vec<f64> = (1..=len).map(|r| (r as f64).powf(-s)).collect();
    let total: f64 = w.iter().sum();
    w.into_iter().map(|v| v / total).collect()
}

/// Cumulative sums, the last forced to 1.
fn cumulative(w: &[f64]) -> Vec<f64> {
    let mut acc = 0.0;
    let mut c: Vec<f64> = w
        .iter()
        .map(|v| {
            acc += v;
            acc
        })
        .collect();
    if let Some(last) = c.last_mut() {
        *last = 1.0;
    }
    c
}

fn draw<R: Rng + ?Sized>(items: &[u32], cdf: &[f64], rng: &mut R) -> u32 {
    let u: f64 = rng.random();
    items[cdf.partition_point(|&c| c <= u).min(items.len() - 1)]
}

/// The attacker's view of the pools: each item's block and within-block weight, and the
/// quadrature grid.
#[derive(Debug, Clone)]
pub struct PoolAttacker {
    /// Pools.
    n: usize,
    /// Block of each item (n for the rest).
    block: Vec<usize>,
    /// `phi_block(x)` of each item.
    phi: Vec<f64>,
    /// Per node: the coefficients of A, B and C (`gamma delta`, `gamma (1 - delta)`,
    /// `1 - gamma`), and the log of its quadrature weight.
    nodes: Vec<[f64; 3]>,
    log_weights: Vec<f64>,
    /// Records per block of products that cannot underflow.
    block_len: usize,
}

impl PoolAttacker {
    /// The attacker of `pools` knowing `knowledge` (Zipf exponent `zipf` for
    /// [`Knowledge::Exact`]), integrating with `quadrature` nodes per axis.
    pub fn new(pools: &Pools, knowledge: Knowledge, zipf: f64, quadrature: u32) -> Self {
        let n = pools.pools.len();
        let k = pools.k.as_usize();
        let (mut block, mut phi) = (vec![0; k], vec![0.0; k]);
        for (b, items) in pools.blocks().enumerate() {
            let w = match knowledge {
                Knowledge::Uniform => vec![1.0 / items.len() as f64; items.len()],
                Knowledge::Exact => zipf_weights(items.len(), zipf),
            };
            for (&x, w) in items.iter().zip(w) {
                block[x as usize] = b;
                phi[x as usize] = w;
            }
        }
        let (z, w) = gauss_legendre(quadrature as usize);
        let low = 1.0 / n as f64;
        let (mut nodes, mut log_weights) = (Vec::new(), Vec::new());
        let mut least = f64::INFINITY;
        for (&zg, &wg) in z.iter().zip(&w) {
            let gamma = 0.5 * (zg + 1.0);
            for (&zd, &wd) in z.iter().zip(&w) {
                let delta = low + (1.0 - low) * 0.5 * (zd + 1.0);
                let c = [gamma * delta, gamma * (1.0 - delta), 1.0 - gamma];
                least = least.min(c[0]).min(c[1] / (n - 1) as f64).min(c[2]);
                nodes.push(c);
                log_weights.push((wg * wd).ln());
            }
        }
        // Each factor is at least `least` (module docs): products of this many stay above
        // e^-600.
        let block_len = ((-600.0 / least.ln()).floor() as usize).max(1);
        Self {
            n,
            block,
            phi,
            nodes,
            log_weights,
            block_len,
        }
    }

    /// Report t's sums `[S_1, .., S_n, C]` (`S_i = sum_{x in P_i} phi_i(x) P[r | x]`) from
    /// its log-likelihoods over `0..k`, scaled so that the largest is 1; `None` when every
    /// item is equally likely (the report says nothing).
    pub fn sums(&self, log_likelihoods: &[f64]) -> Option<Vec<f64>> {
        let top = log_likelihoods
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        if log_likelihoods.iter().all(|&l| l == top) {
            return None;
        }
        let mut s = vec![0.0; self.n + 1];
        let mut last = (f64::NAN, 0.0);
        for ((&l, &b), &phi) in log_likelihoods.iter().zip(&self.block).zip(&self.phi) {
            // Two-valued likelihoods (every family but SHE) repeat one value: one exp each.
            if l != last.0 {
                last = (l, (l - top).exp());
            }
            s[b] += phi * last.1;
        }
        let most = s.iter().copied().fold(0.0, f64::max);
        s.iter_mut().for_each(|v| *v /= most);
        Some(s)
    }

    /// The posteriors over pools after each of `checkpoints` (increasing) reports, from
    /// each report's [`PoolAttacker::sums`] in order (`None` for uninformative reports).
    pub fn posteriors(&self, sums: &[Option<Vec<f64>>], checkpoints: &[u32]) -> Vec<Vec<f64>> {
        let (n, q) = (self.n, self.nodes.len());
        let mut log_acc = vec![0.0; n * q];
        let mut prod = vec![1.0; n * q];
        let mut pending = 0;
        let mut out = Vec::with_capacity(checkpoints.len());
        let mut next = 0;
        let flush = |log_acc: &mut [f64], prod: &mut [f64]| {
            for (a, p) in log_acc.iter_mut().zip(prod.iter_mut()) {
                *a += p.ln();
                *p = 1.0;
            }
        };
        for (t, s) in sums.iter().enumerate() {
            if let Some(s) = s {
                let total: f64 = s[..n].iter().sum();
                for u in 0..n {
                    let (a, b, c) = (s[u], (total - s[u]) / (n - 1) as f64, s[n]);
                    let row = &mut prod[u * q..(u + 1) * q];
                    for (p, w) in row.iter_mut().zip(&self.nodes) {
                        *p *= w[0] * a + w[1] * b + w[2] * c;
                    }
                }
                pending += 1;
                if pending == self.block_len {
                    flush(&mut log_acc, &mut prod);
                    pending = 0;
                }
            }
            while next < checkpoints.len() && checkpoints[next] as usize == t + 1 {
                flush(&mut log_acc, &mut prod);
                pending = 0;
                out.push(self.normalize(&log_acc));
                next += 1;
            }
        }
        out
    }

    /// Log-sum-exp over nodes per pool, then normalized over pools.
    fn normalize(&self, log_acc: &[f64]) -> Vec<f64> {
        let q = self.nodes.len();
        let logs: Vec<f64> = (0..self.n)
            .map(|u| {
                let terms = log_acc[u * q..(u + 1) * q]
                    .iter()
                    .zip(&self.log_weights)
                    .map(|(a, w)| a + w);
                log_sum_exp(terms)
            })
            .collect();
        let total = log_sum_exp(logs.iter().copied());
        logs.iter().map(|l| (l - total).exp()).collect()
    }
}

fn log_sum_exp(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let top = values.clone().fold(f64::NEG_INFINITY, f64::max);
    if top == f64::NEG_INFINITY {
        return top;
    }
    top + values.map(|v| (v - top).exp()).sum::<f64>().ln()
}

/// Gauss-Legendre nodes and weights on `[-1, 1]` (Newton on the Legendre recurrence).
fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut z, mut w) = (vec![0.0; n], vec![0.0; n]);
    for i in 0..n.div_ceil(2) {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for j in 2..=n {
                let p2 = ((2 * j - 1) as f64 * x * p1 - (j - 1) as f64 * p0) / j as f64;
                (p0, p1) = (p1, p2);
            }
            let p = if n == 1 { x } else { p1 };
            let pm = if n == 1 { 1.0 } else { p0 };
            dp = n as f64 * (x * p - pm) / (x * x - 1.0);
            let dx = p / dp;
            x -= dx;
            if dx.abs() < 1e-15 {
                break;
            }
        }
        if n == 1 {
            dp = 1.0;
            x = 0.0;
        }
        z[i] = -x;
        z[n - 1 - i] = x;
        let wi = 2.0 / ((1.0 - x * x) * dp * dp);
        w[i] = wi;
        w[n - 1 - i] = wi;
    }
    (z, w)
}

/// A report's log-likelihoods over `0..k` up to a common constant, from the evidence
/// (module docs): `None` when they are all equal.
pub fn report_log_likelihoods<M: Mechanism + AttackSurface>(
    m: &M,
    report: &M::Report,
    evidence: &mut Vec<f64>,
    scratch: &mut Vec<f64>,
) -> Option<()> {
    evidence.clear();
    evidence.resize(m.domain_size().as_usize(), 0.0);
    m.add_evidence(report, evidence, scratch);
    let (mut lo, mut hi) = (0, 0);
    for (i, &e) in evidence.iter().enumerate() {
        if e < evidence[lo] {
            lo = i;
        }
        if e > evidence[hi] {
            hi = i;
        }
    }
    let (e_lo, e_hi) = (evidence[lo], evidence[hi]);
    if e_lo == e_hi {
        return None;
    }
    let slope =
        (m.log_likelihood(report, hi as u32) - m.log_likelihood(report, lo as u32)) / (e_hi - e_lo);
    evidence.iter_mut().for_each(|e| *e = slope * (*e - e_lo));
    Some(())
}

fn run_users<M: Mechanism + AttackSurface + Sync>(
    m: &M,
    pools: &Pools,
    config: &PoolConfig,
    run: u64,
) -> Vec<Attacked>
where
    M::Report: Send + Sync,
{
    let n = pools.pools.len();
    let attacker = PoolAttacker::new(pools, config.attacker, config.zipf, config.quadrature);
    let blocks: Vec<&[u32]> = pools.blocks().collect();
    let cdfs: Vec<Vec<f64>> = blocks
        .iter()
        .map(|b| cumulative(&zipf_weights(b.len(), config.zipf)))
        .collect();
    let t_max = *config.records.last().expect("validated") as usize;
    let genuine = Streams::new(config.seed, run, Role::Genuine);
    let mut all = Vec::with_capacity(config.users);
    let outcome: Result<(), std::convert::Infallible> = for_each_batch(
        config.users,
        |b, users| {
            let mut rng = genuine.batch(b);
            let mut attacked = Vec::with_capacity(users.len());
            let mut reports = Vec::with_capacity(t_max);
            for _ in users {
                let pool = rng.random_range(0..n);
                let (gamma, delta) = match config.preferences {
                    Preferences::Uniform => {
                        let low = 1.0 / n as f64;
                        (rng.random::<f64>(), low + (1.0 - low) * rng.random::<f64>())
                    }
                    Preferences::Fixed { gamma, delta } => (gamma, delta),
                };
                reports.clear();
                for _ in 0..t_max {
                    let y: f64 = rng.random();
                    let b = if y < gamma * delta {
                        pool
                    } else if y < gamma {
                        let other = rng.random_range(0..n - 1);
                        other + usize::from(other >= pool)
                    } else {
                        n
                    };
                    let x = draw(blocks[b], &cdfs[b], &mut rng);
                    reports.push(
                        m.perturb(x, &mut rng)
                            .expect("pool items are in the domain"),
                    );
                }
                // The attacker's work, the bulk of the cost, is pure: in parallel.
                let sums: Vec<Option<Vec<f64>>> = parallel::map_init(
                    reports.len(),
                    || (Vec::new(), Vec::new()),
                    |(ll, scratch), i| {
                        report_log_likelihoods(m, &reports[i], ll, scratch)
                            .and_then(|()| attacker.sums(ll))
                    },
                );
                attacked.push(Attacked {
                    pool,
                    posteriors: attacker.posteriors(&sums, &config.records),
                });
            }
            Ok(attacked)
        },
        |a| {
            all.extend(a);
            Ok(())
        },
    );
    let Ok(()) = outcome;
    all
}

/// Users the attacker answers for at null rate r: `floor((1 - r) U)` (the reference's
/// `int((1 - null_rate) * len(results))`).
fn top(null_rate: f64, users: usize) -> usize {
    ((1.0 - null_rate) * users as f64) as usize
}

struct Scores {
    auc: f64,
    roc_auc: f64,
    precision: Vec<f64>,
}

fn score(users: &[Attacked], c: usize, n: usize) -> Scores {
    let guesses: Vec<(f64, bool)> = users
        .iter()
        .map(|a| {
            let p = &a.posteriors[c];
            let best = (0..n).fold(0, |b, i| if p[i] > p[b] { i } else { b });
            (p[best], best == a.pool)
        })
        .collect();
    let (rates, precision) = precision_curve(&guesses);
    let roc: Vec<f64> = (0..n)
        .filter_map(|i| {
            let scored: Vec<(f64, bool)> = users
                .iter()
                .map(|a| (a.posteriors[c][i], a.pool == i))
                .collect();
            roc_auc(&scored)
        })
        .collect();
    Scores {
        auc: trapezoid(&rates, &precision),
        roc_auc: roc.iter().sum::<f64>() / roc.len().max(1) as f64,
        precision: NULL_RATES
            .iter()
            .map(|&r| precision_at(&guesses, top(r, guesses.len())))
            .collect(),
    }
}

/// Precision among the `keep` most confident guesses (ties in user order).
fn precision_at(guesses: &[(f64, bool)], keep: usize) -> f64 {
    let order = by_confidence(guesses);
    let keep = keep.max(1).min(order.len());
    order[..keep].iter().filter(|&&i| guesses[i].1).count() as f64 / keep as f64
}

fn by_confidence(guesses: &[(f64, bool)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..guesses.len()).collect();
    order.sort_by(|&a, &b| guesses[b].0.total_cmp(&guesses[a].0));
    order
}

/// The reference's precision against null rate: 101 null rates in `[0, 1]`, those that
/// keep no user left out, the value at 1 repeating the last.
pub fn precision_curve(guesses: &[(f64, bool)]) -> (Vec<f64>, Vec<f64>) {
    let order = by_confidence(guesses);
    let mut right = Vec::with_capacity(order.len() + 1);
    right.push(0usize);
    for &i in &order {
        right.push(right.last().copied().unwrap_or(0) + usize::from(guesses[i].1));
    }
    let (mut rates, mut precision) = (Vec::new(), Vec::new());
    for i in 0..=100 {
        let r = if i == 100 { 1.0 } else { i as f64 * 0.01 };
        if i == 100 {
            if let Some(&last) = precision.last() {
                rates.push(r);
                precision.push(last);
            }
            continue;
        }
        let keep = top(r, order.len());
        if keep == 0 {
            continue;
        }
        rates.push(r);
        precision.push(right[keep] as f64 / keep as f64);
    }
    (rates, precision)
}

fn trapezoid(x: &[f64], y: &[f64]) -> f64 {
    x.windows(2)
        .zip(y.windows(2))
        .map(|(x, y)| (x[1] - x[0]) * (y[0] + y[1]) / 2.0)
        .sum()
}

/// ROC AUC (Mann-Whitney, ties counted half) of scores for labels; `None` without both
/// labels.
pub fn roc_auc(scored: &[(f64, bool)]) -> Option<f64> {
    let mut s = scored.to_vec();
    s.sort_by(|a, b| a.0.total_cmp(&b.0));
    let positives = s.iter().filter(|p| p.1).count();
    let negatives = s.len() - positives;
    if positives == 0 || negatives == 0 {
        return None;
    }
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < s.len() {
        let mut j = i;
        while j < s.len() && s[j].0 == s[i].0 {
            j += 1;
        }
        let mid = (i + j + 1) as f64 / 2.0; // ranks i+1..=j
        rank_sum += mid * s[i..j].iter().filter(|p| p.1).count() as f64;
        i = j;
    }
    let p = positives as f64;
    Some((rank_sum - p * (p + 1.0) / 2.0) / (p * negatives as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauss_legendre_integrates_polynomials_exactly() {
        for n in [1, 2, 5, 20, 41] {
            let (z, w) = gauss_legendre(n);
            assert!((w.iter().sum::<f64>() - 2.0).abs() < 1e-12, "n = {n}");
            let deg = 2 * n - 1;
            let exact = if deg % 2 == 0 {
                2.0 / (deg + 1) as f64
            } else {
                0.0
            };
            let got: f64 = z.iter().zip(&w).map(|(x, w)| w * x.powi(deg as i32)).sum();
            assert!((got - exact).abs() < 1e-12, "n = {n}: {got}");
            let even: f64 = z
                .iter()
                .zip(&w)
                .map(|(x, w)| w * x.powi(2 * (n as i32 - 1)))
                .sum();
            assert!((even - 2.0 / (2 * n - 1) as f64).abs() < 1e-12, "n = {n}");
        }
    }

    #[test]
    fn the_precision_curve_is_the_references() {
        // Four users, confidences 0.9 (right), 0.8 (wrong), 0.7 (right), 0.6 (wrong).
        let g = [(0.7, true), (0.9, true), (0.6, false), (0.8, false)];
        let (rates, precision) = precision_curve(&g);
        assert_eq!(rates.len(), 77); // int((1 - r) 4) >= 1 for r <= 0.75, then r = 1
        assert_eq!(precision[0], 0.5);
        assert_eq!(precision[50], 0.5); // top 2: right, wrong
        assert_eq!(precision[51], 1.0); // int(0.49 * 4) = 1
        assert_eq!(
            roc_auc(&[(0.1, false), (0.2, true), (0.2, false)]),
            Some(0.75)
        );
    }
}
