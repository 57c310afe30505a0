//! The distinguishing test itself: which inputs are run, what is counted, and the
//! bound on eps that the counts give.

use ldp_core::parallel;
use serde::Serialize;

use crate::interval::{check_alpha, clopper_pearson};
use crate::{AuditError, Statistic};

/// The input pairs `(v1, v2)` a test distinguishes.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pairs {
    /// `(0, k - 1)`, LDP-Auditor's pair.
    #[default]
    Extremes,
    /// `(i, i + 1 mod k)` for every item i: k pairs over k inputs, so that a client that
    /// mishandles one item is caught wherever it is. The level is split among the pairs
    /// (Bonferroni).
    Cycle,
    /// The given pairs, each of two distinct items.
    List(Vec<(u32, u32)>),
}

impl Pairs {
    /// The pairs for domain size `k`, checked.
    pub fn resolve(&self, k: u32) -> Result<Vec<(u32, u32)>, AuditError> {
        if k < 2 {
            return Err(AuditError::Domain(k));
        }
        let pairs = match self {
            Pairs::Extremes => vec![(0, k - 1)],
            Pairs::Cycle => (0..k).map(|i| (i, (i + 1) % k)).collect(),
            Pairs::List(list) => list.clone(),
        };
        if pairs.is_empty() {
            return Err(AuditError::NoPairs);
        }
        for &(v1, v2) in &pairs {
            if v1 >= k || v2 >= k || v1 == v2 {
                return Err(AuditError::Pair { v1, v2, k });
            }
        }
        Ok(pairs)
    }
}

/// How a distinguishing test is run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditConfig {
    /// Reports per input (LDP-Auditor: 10^6).
    pub trials: u64,
    /// Every bound reported holds at once with confidence `1 - alpha` (LDP-Auditor:
    /// 0.01): the level is split among the two bounds of each pair, the pairs and the
    /// statistics.
    pub alpha: f64,
    /// The input pairs.
    pub pairs: Pairs,
    /// The events counted, each on the same reports.
    pub statistics: Vec<Statistic>,
    /// Seed of the clients' (our mechanisms') and the guessing attacker's randomness.
    pub seed: u64,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            trials: 1_000_000,
            alpha: 0.01,
            pairs: Pairs::Extremes,
            statistics: Statistic::MECHANISM.to_vec(),
            seed: 0,
        }
    }
}

/// One pair's counts and bounds under one statistic.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairAudit {
    /// The input the event points to.
    pub v1: u32,
    /// The other input.
    pub v2: u32,
    /// Events among the `trials` reports of `v1` (true positives).
    pub hits_v1: u64,
    /// Events among the `trials` reports of `v2` (false positives).
    pub hits_v2: u64,
    /// Lower confidence bound on P[event | v1].
    pub tpr_low: f64,
    /// Upper confidence bound on P[event | v2].
    pub fpr_high: f64,
    /// `ln(tpr_low / fpr_high)`, or 0 when that is not positive.
    pub eps_emp: f64,
}

/// One statistic's result: the largest bound over the pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatisticAudit {
    /// The event counted.
    pub statistic: Statistic,
    /// With confidence `1 - alpha`, the client spends at least this much privacy.
    pub eps_emp: f64,
    /// Every pair's counts (with `Pairs::Cycle`, k of them).
    pub pairs: Vec<PairAudit>,
}

impl StatisticAudit {
    /// The pair that gave [`StatisticAudit::eps_emp`].
    pub fn worst_pair(&self) -> &PairAudit {
        self.pairs
            .iter()
            .max_by(|a, b| a.eps_emp.total_cmp(&b.eps_emp))
            .expect("an audit has at least one pair")
    }
}

/// The result of a distinguishing test: one [`StatisticAudit`] per statistic, each a
/// bound; together they hold with confidence `1 - alpha`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Audit {
    /// The budget the client claims, when known.
    pub claimed_eps: Option<f64>,
    /// Reports per input.
    pub trials: u64,
    /// One minus the confidence level.
    pub alpha: f64,
    /// The statistics' results, in the configured order.
    pub statistics: Vec<StatisticAudit>,
}

impl Audit {
    /// The result of `statistic`, if it was counted.
    pub fn statistic(&self, statistic: Statistic) -> Option<&StatisticAudit> {
        self.statistics.iter().find(|s| s.statistic == statistic)
    }

    /// The largest bound of any statistic.
    pub fn eps_emp(&self) -> f64 {
        self.statistics
            .iter()
            .map(|s| s.eps_emp)
            .fold(0.0, f64::max)
    }

    /// Whether some statistic shows more privacy spent than claimed (`None` when no
    /// budget is claimed).
    pub fn flagged(&self) -> Option<bool> {
        self.claimed_eps.map(|eps| self.eps_emp() > eps)
    }
}

/// The counting plan of a test: the inputs run, and for each input the counters its
/// reports feed. Counters are laid out `[pair][side][statistic]`, side 0 counting the
/// reports of `v1`, side 1 those of `v2`.
#[derive(Debug, Clone)]
pub struct Plan {
    k: u32,
    pairs: Vec<(u32, u32)>,
    statistics: Vec<Statistic>,
    inputs: Vec<u32>,
    /// For each input (in `inputs`' order), its (pair, side) slots.
    slots: Vec<Vec<(usize, usize)>>,
    config: AuditConfig,
}

impl Plan {
    /// Checks `config` for domain size `k`.
    pub fn new(k: u32, config: &AuditConfig) -> Result<Self, AuditError> {
        check_alpha(config.alpha)?;
        if config.trials == 0 || config.trials > MAX_TRIALS {
            return Err(AuditError::Trials(config.trials));
        }
        if config.statistics.is_empty() {
            return Err(AuditError::NoStatistics);
        }
        let pairs = config.pairs.resolve(k)?;
        let mut inputs: Vec<u32> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
        inputs.sort_unstable();
        inputs.dedup();
        // One pass over the pairs: `Pairs::Cycle` at large k stays linear.
        let mut slots = vec![Vec::new(); inputs.len()];
        let at = |x: u32| {
            inputs
                .binary_search(&x)
                .expect("every pair's items are inputs")
        };
        for (p, &(v1, v2)) in pairs.iter().enumerate() {
            slots[at(v1)].push((p, 0));
            slots[at(v2)].push((p, 1));
        }
        // Each statistic once, in the order first given.
        let mut statistics: Vec<Statistic> = Vec::new();
        for &s in &config.statistics {
            if !statistics.contains(&s) {
                statistics.push(s);
            }
        }
        Ok(Plan {
            k,
            pairs,
            statistics,
            inputs,
            slots,
            config: config.clone(),
        })
    }

    /// The pairs `(v1, v2)` whose counters the reports of `inputs()[input]` feed.
    pub fn pairs_of(&self, input: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.slots[input].iter().map(|&(p, _)| self.pairs[p])
    }

    /// The domain size.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The inputs to run, each `trials` times.
    pub fn inputs(&self) -> &[u32] {
        &self.inputs
    }

    /// Reports per input.
    pub fn trials(&self) -> u64 {
        self.config.trials
    }

    /// The seed of the configuration.
    pub fn seed(&self) -> u64 {
        self.config.seed
    }

    /// Whether the attacker's guess is needed.
    pub fn needs_guess(&self) -> bool {
        self.statistics.contains(&Statistic::AttackGuess)
    }

    /// Zeroed counters.
    pub fn counters(&self) -> Vec<u64> {
        vec![0; self.pairs.len() * 2 * self.statistics.len()]
    }

    /// The statistics counted.
    pub fn statistics(&self) -> &[Statistic] {
        &self.statistics
    }

    /// Counts one report of `inputs()[input]`: `event(statistic, v1, v2)` says whether
    /// the report shows the event of a statistic other than the guess, `guess` is the
    /// attacker's guess (when needed).
    #[inline]
    pub fn count(
        &self,
        counters: &mut [u64],
        input: usize,
        event: impl Fn(Statistic, u32, u32) -> bool,
        guess: Option<u32>,
    ) {
        let s_len = self.statistics.len();
        for &(p, side) in &self.slots[input] {
            let (v1, v2) = self.pairs[p];
            for (s, statistic) in self.statistics.iter().enumerate() {
                let hit = match statistic {
                    Statistic::AttackGuess => guess == Some(v1),
                    other => event(*other, v1, v2),
                };
                counters[(p * 2 + side) * s_len + s] += u64::from(hit);
            }
        }
    }

    /// The bounds the counters give; `claimed_eps` is the budget the client claims.
    pub fn finish(&self, counters: &[u64], claimed_eps: Option<f64>) -> Result<Audit, AuditError> {
        let s_len = self.statistics.len();
        // Bonferroni over the pairs and the statistics: every bound reported holds at
        // once with confidence 1 - alpha, so `Audit::flagged` errs at most alpha.
        let alpha = self.config.alpha / (self.pairs.len() * s_len) as f64;
        let trials = self.config.trials;
        let statistics = self
            .statistics
            .iter()
            .enumerate()
            .map(|(s, &statistic)| {
                let pairs = self
                    .pairs
                    .iter()
                    .enumerate()
                    .map(|(p, &(v1, v2))| {
                        let hits_v1 = counters[(p * 2) * s_len + s];
                        let hits_v2 = counters[(p * 2 + 1) * s_len + s];
                        let (tpr_low, _) = clopper_pearson(hits_v1, trials, alpha)?;
                        let (_, fpr_high) = clopper_pearson(hits_v2, trials, alpha)?;
                        let eps_emp = if tpr_low > 0.0 {
                            (tpr_low / fpr_high).ln().max(0.0)
                        } else {
                            0.0
                        };
                        Ok(PairAudit {
                            v1,
                            v2,
                            hits_v1,
                            hits_v2,
                            tpr_low,
                            fpr_high,
                            eps_emp,
                        })
                    })
                    .collect::<Result<Vec<_>, AuditError>>()?;
                let eps_emp = pairs.iter().map(|p| p.eps_emp).fold(0.0, f64::max);
                Ok(StatisticAudit {
                    statistic,
                    eps_emp,
                    pairs,
                })
            })
            .collect::<Result<Vec<_>, AuditError>>()?;
        Ok(Audit {
            claimed_eps,
            trials,
            alpha: self.config.alpha,
            statistics,
        })
    }
}

/// Reports per batch: each batch draws from its own seeded stream, so results do not
/// depend on the thread count.
pub const BATCH: u64 = 1 << 14;

/// The most reports per input an audit draws (10^12: days of work at any speed).
pub const MAX_TRIALS: u64 = 1_000_000_000_000;

/// The sum of `count(i, b, n)`, the counters of batch b of input i (n reports), over the
/// batches of every input, on every core; an error stops the sum (the batches under way
/// finish) and is returned. Each batch draws from its own streams, so the sum does not
/// depend on the thread count.
pub(crate) fn count_batches<E: Send>(
    plan: &Plan,
    batch: u64,
    count: impl Fn(usize, u64, usize) -> Result<Vec<u64>, E> + Sync,
) -> Result<Vec<u64>, E> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let trials = plan.trials();
    let per_input = trials.div_ceil(batch);
    let tasks = plan.inputs().len() as u64 * per_input;
    let failed = AtomicBool::new(false);
    let merge = |sum: &mut Result<Vec<u64>, E>, more: Result<Vec<u64>, E>| match (&mut *sum, more) {
        (Ok(counters), Ok(more)) => add(counters, &more),
        (Ok(_), Err(e)) => *sum = Err(e),
        (Err(_), _) => {}
    };
    let mut total = Ok(plan.counters());
    // In waves a usize counts: one wave on 64-bit targets.
    let mut start = 0u64;
    while start < tasks && total.is_ok() {
        let wave = (tasks - start).min(usize::MAX as u64);
        let sum = parallel::fold(
            wave as usize,
            || Ok(plan.counters()),
            |sum: &mut Result<Vec<u64>, E>, task| {
                let Ok(counters) = sum else { return };
                if failed.load(Ordering::Relaxed) {
                    return;
                }
                let task = start + task as u64;
                let (i, b) = ((task / per_input) as usize, task % per_input);
                match count(i, b, (trials - b * batch).min(batch) as usize) {
                    Ok(more) => add(counters, &more),
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        *sum = Err(e);
                    }
                }
            },
            merge,
        );
        if let Some(sum) = sum {
            merge(&mut total, sum);
        }
        start += wave;
    }
    total
}

/// Adds `b` into `a`.
fn add(a: &mut [u64], b: &[u64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// `stop`, latched: true from the first time it says so. A batch skipped by a stop that
/// later turned false again must not pass for a batch with no hits.
pub(crate) fn latched(stop: &(dyn Fn() -> bool + Sync)) -> impl Fn() -> bool + Sync + '_ {
    let seen = std::sync::atomic::AtomicBool::new(false);
    move || {
        use std::sync::atomic::Ordering;
        if seen.load(Ordering::Relaxed) || stop() {
            seen.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }
}
