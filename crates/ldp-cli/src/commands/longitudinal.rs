//! Repeated collection in `ldp analyze` and `ldp simulate`: the ASR after T linked reports
//! (`--collections`), and the memoized protocols (`--eps-perm`, `--memoize`).

use anyhow::{Context, Result, bail};
use ldp_analytic::longitudinal;
use ldp_attack::longitudinal::{Collection, LinkedConfig, measure_linked};
use ldp_core::longitudinal::{Longitudinal, LongitudinalProtocol};
use ldp_core::{DomainSize, Epsilon, ParamError, ProtocolSet, Spec};

use crate::output::{Value, number};
use crate::protocol::{budget, protocol_error};

/// Whether `name` is a memoized protocol's (`l-grr`, ..., `l-adp`).
pub(crate) fn is_memoized(name: &str) -> bool {
    name.trim().parse::<LongitudinalProtocol>().is_ok()
}

/// `--protocol` as memoized protocols ([`ProtocolSet`]); `all` is all eight.
pub(crate) fn parse_memoized(names: &[String]) -> Result<Vec<LongitudinalProtocol>> {
    ProtocolSet::memoized(names).map_err(|e| protocol_error(e, true))
}

/// The permanent budget, checked.
pub(crate) fn eps_perm(value: Option<f64>) -> Result<Epsilon> {
    let v = value
        .context("the memoized protocols need --eps-perm E (the memo's budget, above --eps)")?;
    Epsilon::new(v).with_context(|| format!("--eps-perm {}", number(v)))
}

/// `--collections T1,T2,...`: at least one, each in `1..=MAX_COLLECTIONS`.
pub(crate) fn check_collections(flag: &str, collections: &[u32]) -> Result<()> {
    if collections.is_empty() {
        bail!("{flag}: give at least one number of collections");
    }
    longitudinal::check_collections(collections).with_context(|| flag.to_owned())
}

/// The memoized instance, its errors naming the flags at fault.
pub(crate) fn build(
    protocol: LongitudinalProtocol,
    k: DomainSize,
    eps_perm: Epsilon,
    eps_1: Epsilon,
) -> Result<Longitudinal> {
    Longitudinal::new(protocol, k, eps_perm, eps_1).map_err(|e| {
        let flag = match e {
            ParamError::DomainTooLarge { value, .. } => format!("--k {value}"),
            ParamError::LongitudinalBudget {
                eps_1, eps_perm, ..
            } => {
                format!(
                    "--eps {} with --eps-perm {}",
                    number(eps_1),
                    number(eps_perm)
                )
            }
            _ => format!("--protocol {protocol}"),
        };
        anyhow::Error::new(e).context(flag)
    })
}

/// The columns `ldp analyze` prints for the memoized protocols.
pub(crate) fn analyze_columns(collections: Option<u32>) -> Vec<&'static str> {
    let mut columns = vec!["protocol", "k", "eps", "eps_perm", "chain", "asr", "mse"];
    if collections.is_some() {
        columns.extend(["collections", "asr_after"]);
    }
    columns.push("asr_limit");
    columns
}

/// One `ldp analyze` row of a memoized protocol: one report's ASR and variance, the ASR
/// after T linked reports, and its limit (the memo's one-shot ASR).
pub(crate) fn analyze_row(
    protocol: LongitudinalProtocol,
    k: u64,
    eps_1: f64,
    eps_perm: Epsilon,
    collections: Option<u32>,
) -> Result<Vec<Value>> {
    let k = crate::protocol::domain(k)?;
    let l = build(protocol, k, eps_perm, budget(eps_1)?)?;
    let mut row = vec![
        Value::from(protocol.name()),
        Value::Int(u64::from(k.get())),
        Value::Num(eps_1),
        Value::Num(eps_perm.get()),
        Value::from(l.protocol().name()),
        Value::Num(longitudinal::memoized(&l, 1)),
        Value::Num(longitudinal::memoized_variance(&l)),
    ];
    if let Some(t) = collections {
        row.extend([
            Value::Int(u64::from(t)),
            Value::Num(longitudinal::memoized(&l, t)),
        ]);
    }
    row.push(Value::Num(longitudinal::memoized_limit(&l)));
    Ok(row)
}

/// What `ldp simulate --collections` and `--days` measure.
pub(crate) enum Target {
    /// A fresh report at every collection.
    OneShot(Spec),
    /// The first report replayed (`--permanent`; dBitFlip's is dBitFlipPM).
    Permanent(Spec),
    /// A memoized protocol (`--memoize`).
    Memoized(Longitudinal),
}

/// `ldp simulate --collections`: the measured ASR after each number of linked reports,
/// beside the exact closed form where there is one.
pub(crate) fn simulate_rows(
    target: &Target,
    name: &str,
    population: &ldp_attack::Population,
    runs: u64,
    seed: u64,
    collections: &[u32],
) -> Result<(Vec<&'static str>, Vec<Vec<Value>>)> {
    check_collections("--collections", collections)?;
    let config = LinkedConfig::new(runs, seed, None, collections);
    let sorted = config.collections.clone();
    let (collection, eps, perm) = match target {
        Target::OneShot(spec) => (Collection::OneShot(*spec), spec.eps().get(), None),
        Target::Permanent(spec) => (
            Collection::Permanent(*spec),
            spec.eps().get(),
            Some(spec.eps().get()),
        ),
        Target::Memoized(l) => (
            Collection::Memoized(l.clone()),
            l.eps_1().get(),
            Some(l.eps_perm().get()),
        ),
    };
    let m = measure_linked(&collection, population, &config).context("simulation")?;
    let columns = vec![
        "protocol",
        "k",
        "eps",
        "eps_perm",
        "runs",
        "users",
        "collections",
        "asr",
        "asr_se",
        "asr_expected",
    ];
    let rows = sorted
        .iter()
        .zip(&m.asr)
        .map(|(&t, e)| {
            let expected = match target {
                Target::OneShot(spec) => longitudinal::asr_after(spec, t),
                // Linked replays of one report reveal what it does.
                Target::Permanent(spec) => longitudinal::asr_after(spec, 1),
                Target::Memoized(l) => Some(longitudinal::memoized(l, t)),
            };
            vec![
                Value::from(name),
                Value::Int(u64::from(population.k().get())),
                Value::Num(eps),
                perm.into(),
                Value::Int(runs),
                Value::Int(m.users as u64),
                Value::Int(u64::from(t)),
                Value::Num(e.mean),
                e.se.is_finite().then_some(e.se).into(),
                expected.into(),
            ]
        })
        .collect();
    Ok((columns, rows))
}
