//! Detecting that a user's value changed, from linked daily reports: the paper's
//! Example 2, measured on real reports.
//!
//! Each user reports every day for `days` days. Its value starts at its item in the
//! population and, on each later day, changes with probability `change_rate` to another
//! value drawn from the population's distribution (a Markov chain per user,
//! [`measure_changes`]); or the values are recorded ones, replayed ([`Trajectories`],
//! [`measure_replayed`]). The device reports through a [`Collection`]: afresh every day, with a memo per value refreshed
//! every day (the memoized protocols), or with a memo replayed unchanged (a permanent
//! memo, as RAPPOR's permanent response does). Memos are kept per value, so a value that
//! comes back reuses its memo; LOLOHA's L-OLH and L-BLH keep one seed per user and a memo
//! per hashed value ([`HashedMemo`]). A permanent memo keeps a memo per class
//! ([`ClassMemo`]): per value for most families, per hashed value under one seed for local
//! hashing, and for dBitFlip dBitFlipPM's (the d buckets drawn once per user), so a
//! change is seen only when it moves the value into or out of a sampled bucket.
//!
//! The attacker links the user's reports and reconstructs each day's value from that day's
//! report ([`AttackSurface::guess`], the paper's attack): a fresh report on its own each
//! day, as Example 2's `x^_t`, while a memo replayed (an identical report from a memoized
//! collection) keeps the previous guess. It flags day t when its guess differs from day
//! t - 1's. Measured: the detector's recall `P[flag | changed]`, its false alarms
//! `P[flag | unchanged]`, its precision, and `P[x^_t != x^_{t-1}]` beside
//! `P[x_t != x_{t-1}]`. The closed forms are `ldp_analytic::change`.
//!
//! ```
//! use ldp_attack::change::{ChangeConfig, measure_changes};
//! use ldp_attack::longitudinal::Collection;
//! use ldp_attack::Population;
//! use ldp_core::{Epsilon, Protocol, Spec};
//! let pop = Population::adult_age();
//! let grr = Spec::classic(Protocol::Grr, pop.k(), Epsilon::new(4.0)?)?;
//! let config = ChangeConfig { runs: 1, seed: 1, users: Some(2_000), days: 30, change_rate: 0.1 };
//! let fresh = measure_changes(&Collection::OneShot(grr.clone()), &pop, &config)?;
//! let replayed = measure_changes(&Collection::Permanent(grr), &pop, &config)?;
//! assert_eq!(replayed.false_alarm.mean, 0.0);          // a replayed report never moves alone
//! assert_eq!(replayed.precision.unwrap().mean, 1.0);   // so every flag is a change
//! assert!(fresh.precision.unwrap().mean < 0.5);        // fresh noise raises false alarms
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ldp_core::longitudinal::{ClassMemo, Device, Fresh, HashedMemo};
use ldp_core::simulation::{Role, Streams, for_each_batch};
use ldp_core::{AttackSurface, dispatch, dispatch_memoized, parallel};
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use crate::data::{Population, Trajectories};
use crate::longitudinal::Collection;
use crate::measure::{Estimate, MeasureError, check_setting, run_count, spread_users};

/// The stream of the users' value changes (beside `Genuine` for reports and `Attacker`).
const VALUES: Role = Role::Other(0x4348_414e); // "CHAN"

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeConfig {
    /// Independent runs (at least 1).
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
    /// Users per run: this many spread evenly over the population (user `i * len / users`),
    /// or every user with `None`.
    pub users: Option<usize>,
    /// Days each user reports (at least 2: a change needs two days).
    pub days: u32,
    /// The probability that a user's value changes from one day to the next, in [0, 1].
    pub change_rate: f64,
}

/// The change detector's rates, each with its standard error over runs. One run gives
/// the standard error over its users instead: a user's day pairs share its memos and its
/// values, so they are a cluster, not independent trials (the ratio estimator's
/// cluster-robust standard error, which the binomial one undercuts for memos).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeMeasurement {
    /// Runs.
    pub runs: u64,
    /// Users per run.
    pub users: usize,
    /// Days per user.
    pub days: u32,
    /// `P[flag | the value changed]`: the detector's recall (NaN when no value changed,
    /// at a change rate of 0).
    pub detect: Estimate,
    /// `P[flag | the value is unchanged]` (NaN when every value changed, at a rate of 1).
    pub false_alarm: Estimate,
    /// The share of flags that are changes; `None` when no run flagged anything.
    pub precision: Option<Estimate>,
    /// `P[x^_t != x^_{t-1}]`: how often the attacker's guess moves.
    pub flag_rate: Estimate,
    /// `P[x_t != x_{t-1}]` as simulated: the truth the flags are set beside.
    pub change_rate: Estimate,
    /// Distinct values a user held over the days, on average.
    pub values_per_user: f64,
    /// What a user's reports reveal at most over the days, on average, by basic
    /// composition ([`Device::spent`]): eps per fresh report, a memo's budget per memo
    /// (per value, per hashed value for LOLOHA's L-OLH and L-BLH, per class for a
    /// permanent memo: at most d + 1 for dBitFlipPM).
    pub budget_per_user: f64,
}

/// Counts of one run: flags and truths over every user's days 2..=days, each rate with
/// the per-user sums its standard error over users needs.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    /// Flagged changes among changes.
    detect: Clustered,
    /// Flags among unchanged days.
    false_alarm: Clustered,
    /// Flagged changes among flags.
    precision: Clustered,
    /// Flags among pairs of days.
    flag_rate: Clustered,
    /// Changes among pairs of days.
    change_rate: Clustered,
    values: u64,
    spent: f64,
}

impl Tally {
    /// One user's counts of its pairs of days.
    fn user(&mut self, flagged_changes: u64, missed: u64, false_alarms: u64, quiet: u64) {
        let (changes, flags) = (flagged_changes + missed, flagged_changes + false_alarms);
        let pairs = changes + false_alarms + quiet;
        self.detect.user(flagged_changes, changes);
        self.false_alarm.user(false_alarms, false_alarms + quiet);
        self.precision.user(flagged_changes, flags);
        self.flag_rate.user(flags, pairs);
        self.change_rate.user(changes, pairs);
    }

    fn add(&mut self, o: Tally) {
        self.detect.add(o.detect);
        self.false_alarm.add(o.false_alarm);
        self.precision.add(o.precision);
        self.flag_rate.add(o.flag_rate);
        self.change_rate.add(o.change_rate);
        self.values += o.values;
        self.spent += o.spent;
    }
}

/// A rate's hits and trials summed over users, with the sums of squares of each user's
/// (hits, trials) that give its standard error over users.
#[derive(Debug, Clone, Copy, Default)]
struct Clustered {
    hits: u64,
    trials: u64,
    /// Users with at least one trial.
    users: u64,
    /// `sum h_i^2`, `sum h_i n_i`, `sum n_i^2` over users.
    hh: f64,
    hn: f64,
    nn: f64,
}

impl Clustered {
    fn user(&mut self, hits: u64, trials: u64) {
        if trials == 0 {
            return;
        }
        let (h, n) = (hits as f64, trials as f64);
        self.hits += hits;
        self.trials += trials;
        self.users += 1;
        self.hh += h * h;
        self.hn += h * n;
        self.nn += n * n;
    }

    fn add(&mut self, o: Clustered) {
        self.hits += o.hits;
        self.trials += o.trials;
        self.users += o.users;
        self.hh += o.hh;
        self.hn += o.hn;
        self.nn += o.nn;
    }

    /// Hits over trials; NaN with no trial.
    fn rate(&self) -> f64 {
        if self.trials == 0 {
            f64::NAN
        } else {
            self.hits as f64 / self.trials as f64
        }
    }

    /// The ratio estimator's standard error over users,
    /// `sqrt(m / (m - 1) sum_i (h_i - r n_i)^2) / sum_i n_i` for m users: their pairs of
    /// days are clusters (NaN with fewer than two users).
    fn estimate(&self) -> Estimate {
        let r = self.rate();
        let m = self.users as f64;
        let spread = (self.hh - 2.0 * r * self.hn + r * r * self.nn).max(0.0);
        let se = if self.users > 1 {
            (m / (m - 1.0) * spread).sqrt() / self.trials as f64
        } else {
            f64::NAN
        };
        Estimate { mean: r, se }
    }
}

/// Measures the change detector on `collection`'s reports of users whose values move as
/// `config` says, starting from `population`'s items.
///
/// Streams: user i's reports come from the `Genuine` stream of its batch, its value
/// changes from a stream of their own, the attacker's coin flips from `Attacker`:
/// reproducible, and the same on any thread count.
pub fn measure_changes(
    collection: &Collection,
    population: &Population,
    config: &ChangeConfig,
) -> Result<ChangeMeasurement, MeasureError> {
    let k = collection.k();
    check_setting(k, population, config.runs)?;
    if config.days < 2 {
        return Err(MeasureError::Days { days: config.days });
    }
    if !(0.0..=1.0).contains(&config.change_rate) {
        return Err(MeasureError::ChangeRate {
            rate: config.change_rate,
        });
    }
    let all = population.items();
    if config.change_rate > 0.0 && all.iter().all(|&x| x == all[0]) {
        return Err(MeasureError::OneValue { item: all[0] });
    }
    let users = spread_users(all, config.users)?;
    let source = Markov {
        all,
        starts: &users,
        days: config.days,
        rate: config.change_rate,
    };
    let tallies = run_collection(collection, &source, config.runs, config.seed)?;
    Ok(summarize(&tallies, config.runs, users.len(), config.days))
}

/// How many times to replay recorded values, and the master seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayConfig {
    /// Independent runs (at least 1): the reports are drawn afresh, the values replayed.
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
}

/// Measures the change detector on `collection`'s reports of users whose values over
/// consecutive days are recorded in `trajectories` (instead of drawn from a Markov chain):
/// the detector is judged against the recorded changes. `days` in the result is the
/// longest user's; a user of one day adds no pair.
///
/// ```
/// use ldp_attack::change::{ReplayConfig, measure_replayed};
/// use ldp_attack::data::Trajectories;
/// use ldp_attack::longitudinal::Collection;
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let k = DomainSize::new(4)?;
/// // Two users: one moves on day 3 and back on day 5, one never moves.
/// let t = Trajectories::new(k, vec![vec![0, 0, 1, 1, 0], vec![2; 5]])?;
/// let grr = Spec::classic(Protocol::Grr, k, Epsilon::new(3.0)?)?;
/// let m = measure_replayed(&Collection::Permanent(grr), &t, &ReplayConfig { runs: 200, seed: 1 })?;
/// assert_eq!(m.change_rate.mean, 0.25);        // 2 of 8 pairs of days, as recorded
/// assert_eq!(m.false_alarm.mean, 0.0);         // a replayed memo never moves alone
/// assert!(m.detect.mean > 0.6);                // two memos of distinct values differ
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn measure_replayed(
    collection: &Collection,
    trajectories: &Trajectories,
    config: &ReplayConfig,
) -> Result<ChangeMeasurement, MeasureError> {
    let k = collection.k();
    if trajectories.k().get() != k {
        return Err(MeasureError::DomainMismatch {
            spec: k,
            data: trajectories.k().get(),
        });
    }
    if config.runs == 0 {
        return Err(MeasureError::NoRuns);
    }
    let days = trajectories.longest();
    if days < 2 {
        return Err(MeasureError::Days { days });
    }
    let tallies = run_collection(collection, trajectories, config.runs, config.seed)?;
    Ok(summarize(&tallies, config.runs, trajectories.users(), days))
}

/// Every run's tallies of `collection` over the users of `source`.
fn run_collection<V: Values>(
    collection: &Collection,
    source: &V,
    runs: u64,
    seed: u64,
) -> Result<Vec<Tally>, MeasureError> {
    let runs = run_count(runs)?;
    Ok(match collection {
        // Fresh reports: each day's reconstructed on its own, identical or not.
        Collection::OneShot(spec) => {
            dispatch!(spec.build()?, m => run_all(&Fresh(m), source, runs, seed, false))
        }
        // A memo per class: per value for most families, dBitFlipPM's for dBitFlip.
        Collection::Permanent(spec) => {
            dispatch!(spec.build()?, m => run_all(&ClassMemo(m), source, runs, seed, true))
        }
        // LOLOHA's device keeps one seed per user and a memo per hashed value.
        Collection::Memoized(l) if l.hash_range().is_some() => {
            run_all(&HashedMemo::new(l)?, source, runs, seed, true)
        }
        Collection::Memoized(l) => {
            dispatch_memoized!(l, m => run_all(&m, source, runs, seed, true))?
        }
    })
}

/// The rates of a set of runs' tallies: over runs, or for one run over its users.
fn summarize(tallies: &[Tally], runs: u64, users: usize, days: u32) -> ChangeMeasurement {
    let rate = |part: fn(&Tally) -> Clustered| match tallies {
        [one] => part(one).estimate(),
        // No trials (no change at a change rate of 0): no rate, not a rate of 0.
        _ => Estimate::from_runs(tallies.iter().map(|t| part(t).rate())),
    };
    let flagged_runs: Vec<&Tally> = tallies.iter().filter(|t| t.precision.trials > 0).collect();
    let precision = match flagged_runs[..] {
        [] => None,
        [one] if tallies.len() == 1 => Some(one.precision.estimate()),
        _ => Some(Estimate::from_runs(
            flagged_runs.iter().map(|t| t.precision.rate()),
        )),
    };
    ChangeMeasurement {
        runs,
        users,
        days,
        detect: rate(|t| t.detect),
        false_alarm: rate(|t| t.false_alarm),
        precision,
        flag_rate: rate(|t| t.flag_rate),
        change_rate: rate(|t| t.change_rate),
        values_per_user: tallies.iter().map(|t| t.values as f64).sum::<f64>()
            / (tallies.len() * users) as f64,
        budget_per_user: tallies.iter().map(|t| t.spent).sum::<f64>()
            / (tallies.len() * users) as f64,
    }
}

/// Every run's tallies; `replays` when an identical report is a memo replayed, which
/// keeps the attacker's guess.
fn run_all<D: Device, V: Values>(
    device: &D,
    source: &V,
    runs: usize,
    seed: u64,
    replays: bool,
) -> Vec<Tally>
where
    D::Mechanism: AttackSurface,
{
    parallel::map(runs, |run| {
        one_run(device, source, seed, run as u64, replays)
    })
}

/// Where the users' values over the days come from.
trait Values: Sync {
    /// Users.
    fn users(&self) -> usize;
    /// Days user `i` reports on.
    fn days(&self, i: usize) -> u32;
    /// User `i`'s value on its first day.
    fn first(&self, i: usize) -> u32;
    /// User `i`'s value on `day` (from 1), which held `x` the day before; `rng` is the
    /// user's stream of value changes.
    fn next<R: Rng + ?Sized>(&self, i: usize, day: u32, x: u32, rng: &mut R) -> u32;
}

/// A Markov chain per user from its item in the population: on each later day the value
/// changes with probability `rate` to another value drawn from the population.
struct Markov<'a> {
    all: &'a [u32],
    starts: &'a [u32],
    days: u32,
    rate: f64,
}

impl Values for Markov<'_> {
    fn users(&self) -> usize {
        self.starts.len()
    }

    fn days(&self, _: usize) -> u32 {
        self.days
    }

    fn first(&self, i: usize) -> u32 {
        self.starts[i]
    }

    fn next<R: Rng + ?Sized>(&self, _: usize, _: u32, x: u32, rng: &mut R) -> u32 {
        if self.rate == 0.0 || !rng.random_bool(self.rate) {
            return x;
        }
        // Drawing a random user's item until it differs is the population's law given
        // that it differs; the population holds two distinct values (checked).
        loop {
            let y = self.all[rng.random_range(0..self.all.len())];
            if y != x {
                return y;
            }
        }
    }
}

/// Recorded values, replayed.
impl Values for Trajectories {
    fn users(&self) -> usize {
        Trajectories::users(self)
    }

    fn days(&self, i: usize) -> u32 {
        self.user(i).len() as u32
    }

    fn first(&self, i: usize) -> u32 {
        self.user(i)[0]
    }

    fn next<R: Rng + ?Sized>(&self, i: usize, day: u32, _: u32, _: &mut R) -> u32 {
        self.user(i)[day as usize]
    }
}

fn one_run<D: Device, V: Values>(
    device: &D,
    source: &V,
    seed: u64,
    run: u64,
    replays: bool,
) -> Tally
where
    D::Mechanism: AttackSurface,
{
    let genuine = Streams::new(seed, run, Role::Genuine);
    let values = Streams::new(seed, run, VALUES);
    let attacker = Streams::new(seed, run, Role::Attacker);
    let mut total = Tally::default();
    let outcome: Result<(), std::convert::Infallible> = for_each_batch(
        source.users(),
        |b, range| {
            let (mut rng, mut moves, mut coins) =
                (genuine.batch(b), values.batch(b), attacker.batch(b));
            let mut tally = Tally::default();
            let mut seen = Vec::new();
            for i in range {
                let mut memory = D::Memory::default();
                let (mut x, mut seen_values) = (source.first(i), 1u64);
                seen.clear();
                seen.push(x);
                let mut report = device
                    .report_value(&mut memory, x, &mut rng)
                    .expect("values are in the domain (checked)");
                let mut guess = device.mechanism().guess(&report, &mut coins);
                let mut counts = [0u64; 4];
                for day in 1..source.days(i) {
                    let next = source.next(i, day, x, &mut moves);
                    let today = device
                        .report_value(&mut memory, next, &mut rng)
                        .expect("values are in the domain (checked)");
                    let new_guess = if replays && today == report {
                        guess
                    } else {
                        device.mechanism().guess(&today, &mut coins)
                    };
                    let (changed, flagged) = (next != x, new_guess != guess);
                    counts[match (changed, flagged) {
                        (true, true) => 0,
                        (true, false) => 1,
                        (false, true) => 2,
                        (false, false) => 3,
                    }] += 1;
                    if changed && !seen.contains(&next) {
                        seen.push(next);
                        seen_values += 1;
                    }
                    (x, report, guess) = (next, today, new_guess);
                }
                let [flagged_changes, missed, false_alarms, quiet] = counts;
                tally.user(flagged_changes, missed, false_alarms, quiet);
                tally.values += seen_values;
                tally.spent += device.spent(&memory);
            }
            Ok(tally)
        },
        |t| {
            total.add(t);
            Ok(())
        },
    );
    let Ok(()) = outcome;
    total
}
