//! `ldp simulate --days D --change-rate R` and `--trajectories FILE.csv`: the change
//! detector of the paper's Example 2 on users whose values change (a Markov chain, or
//! recorded values replayed), beside its closed form where there is one.

use anyhow::{Context, Result, bail};
use ldp_analytic::change::{self, ChangeRates};
use ldp_attack::change::{ChangeConfig, ReplayConfig, measure_changes, measure_replayed};
use ldp_attack::data::Trajectories;
use ldp_attack::longitudinal::Collection;
use ldp_attack::{Estimate, MeasureError, Population};

use super::longitudinal::Target;
use crate::output::{Value, number};

/// The columns of one row: the setting, then each rate with its SE and closed form.
const COLUMNS: [&str; 25] = [
    "protocol",
    "collection",
    "k",
    "eps",
    "eps_perm",
    "runs",
    "users",
    "days",
    "change_rate",
    "detect",
    "detect_se",
    "detect_expected",
    "false_alarm",
    "false_alarm_se",
    "false_alarm_expected",
    "precision",
    "precision_se",
    "precision_expected",
    "flag_rate",
    "flag_rate_se",
    "flag_rate_expected",
    "change_rate_measured",
    "change_rate_se",
    "values_per_user",
    "budget_per_user",
];

/// Where the users' values over the days come from.
pub(crate) enum Values<'a> {
    /// A Markov chain per user from its item in `population`: `days` days, each later day
    /// a change with probability `rate`.
    Markov {
        population: &'a Population,
        days: u32,
        rate: f64,
    },
    /// Recorded values (`--trajectories`).
    Replayed(&'a Trajectories),
}

/// The measured rates of `target`'s reports on users whose values move as `values` says,
/// in one row.
pub(crate) fn simulate_rows(
    target: &Target,
    name: &str,
    values: &Values<'_>,
    runs: u64,
    seed: u64,
) -> Result<(Vec<&'static str>, Vec<Vec<Value>>)> {
    let (collection, kind, eps, perm, exact) = match target {
        Target::OneShot(spec) => (
            Collection::OneShot(*spec),
            "fresh",
            spec.eps().get(),
            None,
            change::one_shot(spec),
        ),
        Target::Permanent(spec) => (
            Collection::Permanent(*spec),
            "permanent",
            spec.eps().get(),
            Some(spec.eps().get()),
            change::permanent(spec),
        ),
        Target::Memoized(l) => (
            Collection::Memoized(l.clone()),
            "memoized",
            l.eps_1().get(),
            Some(l.eps_perm().get()),
            change::memoized(l),
        ),
    };
    let (m, k, rate) = match *values {
        Values::Markov {
            population,
            days,
            rate,
        } => {
            let config = ChangeConfig {
                runs,
                seed,
                users: None,
                days,
                change_rate: rate,
            };
            let m = measure_changes(&collection, population, &config).map_err(|e| {
                let flag = match &e {
                    MeasureError::Days { .. } => format!("--days {days}"),
                    MeasureError::ChangeRate { .. } | MeasureError::OneValue { .. } => {
                        format!("--change-rate {}", number(rate))
                    }
                    MeasureError::NoRuns | MeasureError::TooManyRuns { .. } => {
                        format!("--runs {runs}")
                    }
                    _ => "simulation".to_owned(),
                };
                anyhow::Error::new(e).context(flag)
            })?;
            (m, population.k(), rate)
        }
        Values::Replayed(trajectories) => {
            let config = ReplayConfig { runs, seed };
            let m = measure_replayed(&collection, trajectories, &config).map_err(|e| {
                let flag = match &e {
                    MeasureError::Days { .. } => {
                        "--trajectories: every user reports on one day only; a change is seen \
                         between two"
                            .to_owned()
                    }
                    MeasureError::NoRuns | MeasureError::TooManyRuns { .. } => {
                        format!("--runs {runs}")
                    }
                    _ => "simulation".to_owned(),
                };
                anyhow::Error::new(e).context(flag)
            })?;
            let (changes, pairs) = trajectories.changes();
            (m, trajectories.k(), changes as f64 / pairs as f64)
        }
    };
    let days = m.days;
    let se = |e: &Estimate| -> Value { e.se.is_finite().then_some(e.se).into() };
    let closed = |f: fn(&ChangeRates, f64) -> Option<f64>| -> Value {
        exact.as_ref().and_then(|r| f(r, rate)).into()
    };
    let mut row = vec![
        Value::from(name),
        Value::from(kind),
        Value::Int(u64::from(k.get())),
        Value::Num(eps),
        perm.into(),
        Value::Int(runs),
        Value::Int(m.users as u64),
        Value::Int(u64::from(days)),
        Value::Num(rate),
        Value::Num(m.detect.mean),
        se(&m.detect),
        closed(|r, _| Some(r.detect)),
        Value::Num(m.false_alarm.mean),
        se(&m.false_alarm),
        closed(|r, _| Some(r.false_alarm)),
    ];
    match &m.precision {
        Some(p) => row.extend([Value::Num(p.mean), se(p)]),
        None => row.extend([None::<f64>.into(), None::<f64>.into()]),
    }
    row.extend([
        closed(|r, rate| r.precision(rate)),
        Value::Num(m.flag_rate.mean),
        se(&m.flag_rate),
        closed(|r, rate| Some(r.flag_rate(rate))),
        Value::Num(m.change_rate.mean),
        se(&m.change_rate),
        Value::Num(m.values_per_user),
        Value::Num(m.budget_per_user),
    ]);
    Ok((COLUMNS.to_vec(), vec![row]))
}

/// The columns `ldp analyze --change-rate R` adds.
pub(crate) const ANALYZE_COLUMNS: [&str; 4] = ["change_rate", "detect", "false_alarm", "precision"];

/// The closed forms `ldp analyze --change-rate R` adds to a row: empty where there is none.
pub(crate) fn analyze_values(rate: f64, rates: Option<ChangeRates>) -> [Value; 4] {
    [
        Value::Num(rate),
        rates.map(|r| r.detect).into(),
        rates.map(|r| r.false_alarm).into(),
        rates.and_then(|r| r.precision(rate)).into(),
    ]
}

/// `--change-rate R`: a probability.
pub(crate) fn check_rate(rate: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&rate) {
        bail!(
            "--change-rate {}: the daily probability that a value changes lies in [0, 1]",
            number(rate)
        );
    }
    Ok(rate)
}

/// `--days D` with its rate: both or neither.
pub(crate) fn setting(days: Option<u32>, rate: Option<f64>) -> Result<Option<(u32, f64)>> {
    match (days, rate) {
        (None, None) => Ok(None),
        (Some(d), Some(r)) => Ok(Some((d, check_rate(r)?))),
        (Some(d), None) => Err(anyhow::anyhow!(
            "add --change-rate R (the daily probability that a value changes)"
        ))
        .context(format!("--days {d}")),
        (None, Some(r)) => bail!(
            "--change-rate {}: goes with --days D (how many days each user reports), not --collections",
            number(r)
        ),
    }
}
