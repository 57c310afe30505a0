//! Closed forms, tuning, frontiers, attacks and simulations: the `ldp analyze`, `tune`,
//! `frontier`, `attack` and `simulate` commands as functions returning numpy columns.

use crate::threads::InPool;

use ldp_analytic::compare::{self, Poisoned};
use ldp_attack::map::map_guess;
use ldp_attack::{
    MeasureConfig, PoisonConfig, PoisonKind, Population, Prior, ReconstructionAttack, measure_until,
};
use ldp_core::simulation::{BatchStreams, Role, USERS_PER_STREAM};
use ldp_core::{AttackSurface, Protocol, ProtocolSet, dispatch, parallel, with_batch_rng};
use ldp_optimize::{
    ANALYSIS_COLUMNS, AnalysisError, AnalysisRequest, Objective, ObjectiveSet, RowBounds,
    SettingGroup,
};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::columns::Columns;
use crate::errors::{param, tuning};
use crate::mechanism::{Mechanism, family_param};
use crate::options::{budget, domain, named, protocol, request_error, settings};
use crate::reports::Reports;

/// Protocol names: a string, a list of strings, or "all".
fn protocols(arg: &Bound<'_, PyAny>) -> PyResult<Vec<Protocol>> {
    let names: Vec<String> = match arg.extract::<String>() {
        Ok(one) => vec![one],
        Err(_) => arg.extract()?,
    };
    ProtocolSet::one_shot(&names).map_err(param)
}

/// A number or a list of numbers.
fn many<'py, T: FromPyObjectOwned<'py>>(arg: &Bound<'py, PyAny>) -> PyResult<Vec<T>> {
    match arg.extract::<T>() {
        Ok(one) => Ok(vec![one]),
        Err(_) => arg.extract(),
    }
}

/// One row of `analyze`: protocol, k, and the numbers of the columns after them
/// ([`ANALYSIS_COLUMNS`]), then the change detector's rates (NaN where none).
struct Row(Protocol, u32, String, [f64; 9], [f64; 3]);

/// Closed-form ASR, MSE, EPG and costs over protocols x k x eps (see `ldp.analyze`, which
/// wraps this and returns a DataFrame when pandas is installed).
///
/// >>> import ldp
/// >>> list(ldp._ldp.analyze("grr", 10, [1.0, 2.0])["eps"])
/// [1.0, 2.0]
#[pyfunction]
#[pyo3(signature = (protocols, k, eps, param=None, **options))]
pub(crate) fn analyze<'py>(
    py: Python<'py>,
    protocols: &Bound<'py, PyAny>,
    k: &Bound<'py, PyAny>,
    eps: &Bound<'py, PyAny>,
    param: Option<&Bound<'py, PyAny>>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let ps = self::protocols(protocols)?;
    let param = crate::options::param_values(param)?;
    let ks = many::<i64>(k)?
        .into_iter()
        .map(domain)
        .collect::<PyResult<Vec<_>>>()?;
    let budgets = many::<f64>(eps)?
        .into_iter()
        .map(budget)
        .collect::<PyResult<Vec<_>>>()?;
    // asr_max and bits_max filter rows (they are not tuning bounds here, as in `ldp
    // analyze`); linked reports are `asr_after`'s.
    let take = |key: &str| -> PyResult<Option<f64>> {
        // `**options` is this call's own dict: the row bounds leave it before the settings.
        let Some(o) = options else { return Ok(None) };
        let Some(v) = o.get_item(key)? else {
            return Ok(None);
        };
        o.del_item(key)?;
        v.extract::<f64>()
            .map(Some)
            .map_err(|_| crate::errors::param(format!("{key}: a number")))
    };
    let (keep_asr_max, keep_bits_max) = (take("asr_max")?, take("bits_max")?);
    // The change detector's closed forms beside each row (`ldp analyze --change-rate`).
    let change_rate = take("change_rate")?;
    if let Some(r) = change_rate
        && !(0.0..=1.0).contains(&r)
    {
        return Err(crate::errors::param(format!(
            "change_rate: the daily probability that a value changes lies in [0, 1], got {r}"
        )));
    }
    let groups = [
        SettingGroup::Weights,
        SettingGroup::Method,
        SettingGroup::LhAsr,
        SettingGroup::Poisoning,
        SettingGroup::Bias,
    ];
    let tuning = settings("analyze", options, &groups)?;
    let request = AnalysisRequest {
        protocols: ps,
        ks,
        eps: budgets,
        param: param.clone(),
        tuning,
        collections: None,
        keep: RowBounds {
            asr_max: keep_asr_max,
            bits_max: keep_bits_max,
        },
    };
    let analysed = py
        .detach_in_pool(|| ldp_optimize::analyze(&request))
        .map_err(|e| match e {
            AnalysisError::Request(e) => request_error(e, &tuning, param.as_ref()),
            AnalysisError::ParamNeedsOneProtocol(_) => {
                crate::errors::param("param needs a single protocol")
            }
            e @ AnalysisError::AsrMax(_) => crate::errors::param(format!("asr_max: {e}")),
            e @ AnalysisError::BitsMax(_) => crate::errors::param(format!("bits_max: {e}")),
            e => crate::errors::param(e),
        })?;
    let rows: Vec<PyResult<Row>> = analysed
        .into_iter()
        .map(|row| {
            let a = row
                .outcome
                .map_err(|e| request_error(e, &tuning, param.as_ref()))?;
            let change = change_rate.map_or([f64::NAN; 3], |rate| {
                ldp_analytic::change::one_shot(&a.instance.spec).map_or([f64::NAN; 3], |c| {
                    [
                        c.detect,
                        c.false_alarm,
                        c.precision(rate).unwrap_or(f64::NAN),
                    ]
                })
            });
            let [eps, param, rest @ ..] = a.numbers();
            let [asr, mse, bias, epg, bits, server, client] = rest;
            let named: Vec<String> = a
                .instance
                .spec
                .params()
                .named_values()
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            Ok(Row(
                row.protocol,
                row.k.get(),
                named.join(";"),
                [
                    eps.expect("a budget"),
                    // No parameter: NaN; an unbounded gain: infinity.
                    param.unwrap_or(f64::NAN),
                    asr.expect("an ASR"),
                    mse.expect("an MSE"),
                    bias.expect("a bias"),
                    epg.unwrap_or(f64::INFINITY),
                    bits.expect("bits"),
                    server.expect("a server cost"),
                    client.expect("a client cost"),
                ],
                change,
            ))
        })
        .collect();
    let rows = rows.into_iter().collect::<PyResult<Vec<_>>>()?;
    let d = PyDict::new(py);
    d.set_item(
        "protocol",
        PyList::new(py, rows.iter().map(|r| r.0.name()))?,
    )?;
    d.set_item(
        "k",
        rows.iter()
            .map(|r| i64::from(r.1))
            .collect::<Vec<_>>()
            .into_pyarray(py),
    )?;
    for (i, name) in ANALYSIS_COLUMNS[2..].iter().enumerate() {
        let column: Vec<f64> = rows.iter().map(|r| r.3[i]).collect();
        d.set_item(name, column.into_pyarray(py))?;
    }
    if let Some(rate) = change_rate {
        d.set_item("change_rate", vec![rate; rows.len()].into_pyarray(py))?;
        for (i, name) in ["detect", "false_alarm", "precision"].iter().enumerate() {
            let column: Vec<f64> = rows.iter().map(|r| r.4[i]).collect();
            d.set_item(name, column.into_pyarray(py))?;
        }
    }
    // Every parameter by name: the only place a family with several shows them.
    d.set_item(
        "params",
        PyList::new(py, rows.iter().map(|r| r.2.as_str()))?,
    )?;
    Ok(d)
}

/// The tuned parameter of an adaptive protocol (one whose parameter is tuned), with the `ldp tune`
/// arguments and defaults: weights `w_asr` (0.5; the MSE weight is 1 - w_asr), `w_epg`
/// and `w_bits` (0), `search` ("paper" or "refined"), `strategy` (weighted, utopia,
/// elbow, eps-constraint, hypervolume, tchebycheff), bounds `asr_max`, `epg_max`,
/// `bits_max` (which select eps-constraint; without them eps-constraint is the paper's,
/// ASR <= 0.1), `lh_asr`, and the poisoning setting of EPG
/// (`beta`, `targets`, `target_mass`), and `asr_after` (the ASR after that many linked
/// reports as the objective). With protocol "all" and a bound: the instance of all the
/// protocols with the lowest MSE under the bounds (with `asr_after`, among the instances
/// with an exact form: SS and ASS beyond omega = 1, and SHE, are left out).
/// `precision_max` with `change_rate` bounds the change detector's precision on fresh
/// daily reports, an ASR bound for the protocols whose law ignores the domain's labels
/// (LH's exact ASR; HR, HM, FLH and the sketches are left out), as `ldp tune
/// --precision-max P --change-rate R`.
///
/// Returns a dict: `protocol` (the tuned or chosen one), `strategy`, `param` (an int for
/// omega and g, a float for p and theta; None for a family without one), `asr`, `mse`
/// (per user, as `analyze`'s; choosing among all, with the bias of FLH and the sketches
/// at `bias_users` users of a Zipf(`bias_zipf`) population, 10,000 and 1.1 by default),
/// `epg`, `bits` (the expected size of one report: a float),
/// `k`, `eps`, and `fell_back` (True when the eps-constraint had no feasible point and
/// the utopia point of the frontier was taken instead). The LH ASR is the paper's form unless `lh_asr="exact"`.
///
/// >>> import ldp
/// >>> t = ldp.tune("aue", 100, 4.0, w_asr=0.5)
/// >>> t["strategy"], round(t["param"], 4)
/// ('weighted', 0.8182)
#[pyfunction]
#[pyo3(signature = (protocol, k, eps, **options))]
pub(crate) fn tune<'py>(
    py: Python<'py>,
    protocol: &str,
    #[pyo3(from_py_with = crate::args::k)] k: i64,
    #[pyo3(from_py_with = crate::args::eps)] eps: f64,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let (k, eps) = (domain(k)?, budget(eps)?);
    let request = settings("tune", options, &SettingGroup::ALL)?;
    let failed = |e| request_error(e, &request, None);
    let d = PyDict::new(py);
    let one = ProtocolSet::one_or_all(protocol).map_err(param)?;
    if let Some(p) = one {
        let t = py
            .detach_in_pool(|| request.tune(p, k, eps))
            .map_err(failed)?;
        d.set_item("protocol", p.name())?;
        d.set_item("strategy", t.strategy.name())?;
        d.set_item("param", family_param(py, &t.spec.params())?)?;
        d.set_item("asr", t.objectives.asr)?;
        d.set_item("mse", t.objectives.mse)?;
        d.set_item("epg", t.objectives.epg)?;
        d.set_item("bits", t.objectives.bits)?;
        d.set_item("fell_back", t.fell_back)?;
    } else {
        let choice = py
            .detach_in_pool(|| request.choose(k, eps))
            .map_err(failed)?;
        d.set_item("protocol", choice.protocol.name())?;
        d.set_item("strategy", "eps-constraint")?;
        d.set_item("param", family_param(py, &choice.spec.params())?)?;
        d.set_item("asr", choice.objectives.asr)?;
        d.set_item("mse", choice.objectives.mse)?;
        d.set_item("epg", choice.objectives.epg)?;
        d.set_item("bits", choice.objectives.bits)?;
        d.set_item("fell_back", false)?;
    }
    d.set_item("k", k.get())?;
    d.set_item("eps", eps.get())?;
    Ok(d)
}

/// The Pareto frontier of an adaptive protocol's parameter in two or more of the
/// objectives "asr", "mse", "epg", "bits": a dict of numpy arrays, `param` and one per
/// objective, sorted by the first objective.
///
/// >>> import ldp
/// >>> f = ldp.frontier("ass", 20, 2.0)
/// >>> bool((f["asr"][1:] >= f["asr"][:-1]).all())
/// True
#[pyfunction]
#[pyo3(signature = (protocol, k, eps, objectives=None, **options))]
pub(crate) fn frontier<'py>(
    py: Python<'py>,
    protocol: &str,
    #[pyo3(from_py_with = crate::args::k)] k: i64,
    #[pyo3(from_py_with = crate::args::eps)] eps: f64,
    objectives: Option<Vec<String>>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let p = self::protocol(protocol)?;
    // Default: ASR and MSE (a `None` default, so that `help()` shows a value).
    let objectives = objectives.unwrap_or_else(|| vec!["asr".to_owned(), "mse".to_owned()]);
    let list = objectives
        .iter()
        .map(|o| named::<Objective>("objectives", Some(o)).map(|o| o.expect("given")))
        .collect::<PyResult<Vec<_>>>()?;
    let set = ObjectiveSet::of(&list);
    let groups = [SettingGroup::LhAsr, SettingGroup::Poisoning];
    let request = settings("frontier", options, &groups)?;
    let (k, eps) = (domain(k)?, budget(eps)?);
    let front = py
        .detach_in_pool(|| request.frontier(p, k, eps, &list))
        .map_err(|e| request_error(e, &request, None))?;
    let d = PyDict::new(py);
    d.set_item(
        "param",
        front
            .iter()
            .map(|c| c.param())
            .collect::<Vec<_>>()
            .into_pyarray(py),
    )?;
    for o in set.iter() {
        d.set_item(
            o.name(),
            front
                .iter()
                .map(|c| c.objectives.get(o))
                .collect::<Vec<_>>()
                .into_pyarray(py),
        )?;
    }
    Ok(d)
}

fn prior_of(obj: Option<&Bound<'_, PyAny>>, k: u32) -> PyResult<Option<Prior>> {
    let Some(obj) = obj else { return Ok(None) };
    let prior = Prior::new(crate::items::weights(obj)?).map_err(param)?;
    prior.check_len(k as usize).map_err(param)?;
    Ok(Some(prior))
}

/// The reconstruction attack's guess of every report's item: the paper's (uniform among
/// the supported items; SHE: the largest coordinate) or, with `prior` (k weights), the
/// MAP attack. With `seed`, the guesses of `ldp attack --seed SEED`.
///
/// >>> import ldp, numpy as np
/// >>> m = ldp.mechanism("grr", k=5, eps=8.0)
/// >>> ldp.attack(m.perturb(np.array([0, 1, 2, 3, 4]), seed=1), seed=1).tolist()
/// [0, 1, 2, 3, 4]
#[pyfunction]
#[pyo3(signature = (reports, *, seed=None, prior=None))]
pub(crate) fn attack<'py>(
    py: Python<'py>,
    reports: &Reports,
    #[pyo3(from_py_with = crate::args::optional_seed)] seed: Option<u64>,
    prior: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let mech = &reports.mechanism;
    let prior = prior_of(prior, mech.spec.k().get())?;
    let streams = BatchStreams::new(seed, Role::Attacker).map_err(param)?;
    let data = &reports.data;
    let guesses: Vec<u32> = py.detach_interruptibly(|stop| {
        dispatch!(&mech.any, m => with_batch_rng!(streams, make => {
            let n = data.len();
            let parts: Option<Vec<Vec<u32>>> = parallel::map(n.div_ceil(USERS_PER_STREAM), |b| {
                if stop() {
                    return None;
                }
                let mut rng = make(b as u64);
                let mut scratch = Vec::new();
                Some((b * USERS_PER_STREAM..n.min((b + 1) * USERS_PER_STREAM))
                    .map(|i| {
                        let r = m.report(data, i);
                        match &prior {
                            None => m.guess(&r, &mut rng),
                            Some(p) => map_guess(m, &r, p, &mut scratch, &mut rng),
                        }
                    })
                    .collect())
            })
            .into_iter()
            .collect();
            parts.map(|p| p.concat()).unwrap_or_default()
        }))
    })?;
    Ok(guesses.into_pyarray(py))
}

/// The users of a simulation: `items`, or the data set named by `dataset`, whose domain
/// must be `k` (that of `what`).
pub(crate) fn population(
    items: Option<&Bound<'_, PyAny>>,
    dataset: Option<&str>,
    k: ldp_core::DomainSize,
    what: &str,
) -> PyResult<Population> {
    match (items, dataset) {
        (Some(items), None) => {
            Population::from_items(k, crate::items::items(items, k.get(), "items")?).map_err(param)
        }
        (None, Some("adult-age")) => {
            let pop = Population::adult_age();
            if pop.k() != k {
                return Err(param(format!(
                    "dataset \"adult-age\" has k = {}, but {what} has k = {k}",
                    pop.k()
                )));
            }
            Ok(pop)
        }
        (None, Some(other)) => Err(param(format!(
            "dataset {other:?}: the only dataset is \"adult-age\""
        ))),
        (Some(_), Some(_)) => Err(param("give items or dataset, not both")),
        (None, None) => Err(param(
            "give items (an integer array) or dataset=\"adult-age\"",
        )),
    }
}

/// The reconstruction attack (and optionally a poisoning attack: `poison` "mga", "ria"
/// or "roa" with `beta` and `targets`) measured on real reports over `runs` independent
/// runs, on `items` or `dataset="adult-age"`, as `ldp simulate`: ASR and MSE with their
/// standard errors and closed forms, and the measured gain. The GIL is released and
/// Ctrl-C stops it.
///
/// Returns a dict: `protocol`, `k`, `eps`, `param`, `runs`, `users` (n), `asr`, `asr_se`,
/// `asr_expected`, `mse`, `mse_se`, `mse_expected`, `kl`, `kl_se`, `rank_corr`,
/// `rank_corr_se` (None where the true top items all tie; both as `ldp simulate`'s
/// columns describe them, `ldp_attack::shape`), and with `poison` also `gain`,
/// `gain_se`, `epg` (None for "ria" and "roa") and, for "mga", `targets_supported`.
/// `mse` is measured **at n users** (the mean over items of the squared error of the
/// frequency estimates), and `mse_expected` is its closed form, `ldp.analyze`'s per-user
/// `mse` divided by n: the two functions' `mse` differ by that factor.
///
/// >>> import ldp
/// >>> s = ldp.simulate(ldp.mechanism("grr", k=100, eps=4.0), dataset="adult-age", runs=2)
/// >>> abs(s["asr"] - s["asr_expected"]) < 0.01
/// True
#[pyfunction]
#[pyo3(signature = (mechanism, items=None, *, dataset=None, runs=10, seed=0, attack="paper",
    prior=None, poison=None, beta=None, targets=None, she_clip=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate<'py>(
    py: Python<'py>,
    mechanism: &Mechanism,
    items: Option<&Bound<'py, PyAny>>,
    dataset: Option<&str>,
    runs: u64,
    #[pyo3(from_py_with = crate::args::seed)] seed: u64,
    attack: &str,
    prior: Option<&Bound<'py, PyAny>>,
    poison: Option<&str>,
    beta: Option<f64>,
    targets: Option<Vec<u32>>,
    she_clip: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = mechanism.spec;
    let k = spec.k();
    let pop = population(items, dataset, k, "the mechanism")?;
    let prior = match (attack, prior) {
        ("paper", None) => None,
        ("paper", Some(_)) => {
            return Err(param(
                "prior: the paper's attack has a uniform prior; use attack=\"map\"",
            ));
        }
        ("map", None) => {
            return Err(param(
                "attack=\"map\" needs a prior: an array of k weights, or \"data\"",
            ));
        }
        ("map", Some(p)) => match p.extract::<String>() {
            Ok(s) if s == "data" => Some(Prior::from_population(&pop)),
            Ok(s) => {
                return Err(param(format!(
                    "prior = {s:?}: expected an array of k weights or \"data\""
                )));
            }
            Err(_) => prior_of(Some(p), k.get())?,
        },
        (other, _) => {
            return Err(param(format!(
                "attack = {other:?}: expected \"paper\" or \"map\""
            )));
        }
    };
    let poisoning = match poison {
        None => {
            if beta.is_some() || targets.is_some() || she_clip.is_some() {
                return Err(param(
                    "beta, targets, she_clip: apply to a poisoning attack; give poison=\"mga\", \"ria\" or \"roa\"",
                ));
            }
            None
        }
        Some(kind) => {
            let kind: PoisonKind = named("poison", Some(kind))?.expect("given");
            let beta = beta.ok_or_else(|| param("beta is required with poison"))?;
            let targets = targets.ok_or_else(|| param("targets is required with poison"))?;
            let config = PoisonConfig::new(kind, beta, targets).map_err(param)?;
            Some(match she_clip {
                None => config,
                Some(arg) => config.with_clip(crate::aggregator::as_clip(
                    crate::aggregator::she_clip(&spec, Some(arg))?,
                )),
            })
        }
    };
    let config = MeasureConfig {
        runs,
        seed,
        attack: prior
            .clone()
            .map_or(ReconstructionAttack::Paper, ReconstructionAttack::Map),
        poisoning: poisoning.clone(),
    };
    let m = py
        .detach_interruptibly(|stop| measure_until(&spec, &pop, &config, stop))?
        .map_err(tuning)?;
    // Each measurement beside its closed form, as `ldp simulate` pairs them.
    let truth = pop.frequencies();
    let asr_row = match &prior {
        None => compare::Row::asr(&spec, m.asr),
        Some(p) => compare::Row::map_asr(&spec, p.probabilities(), m.asr).map_err(param)?,
    };
    let mse_row = compare::Row::mse(&spec, &truth, pop.len(), m.mse);
    let gain_row = match (&poisoning, m.gain) {
        (Some(p), Some(gain)) => {
            let attack = Poisoned {
                kind: p.kind(),
                targets: p.targets().items(),
                truth: &truth,
                users: pop.len(),
                fake_users: m.fake_users,
                clip: p.clip(),
                supported: m.targets_supported,
            };
            Some(compare::Row::gain(&spec, &attack, gain).map_err(param)?)
        }
        _ => None,
    };
    let d = PyDict::new(py);
    d.set_item("protocol", mechanism.protocol.name())?;
    d.set_item("k", k.get())?;
    d.set_item("eps", spec.eps().get())?;
    d.set_item("param", family_param(py, &spec.params())?)?;
    d.set_item("runs", runs)?;
    d.set_item("users", pop.len())?;
    d.set_item("asr", m.asr.mean)?;
    d.set_item("asr_se", m.asr.se)?;
    d.set_item("asr_expected", asr_row.expected())?;
    d.set_item("mse", m.mse.mean)?;
    d.set_item("mse_se", m.mse.se)?;
    d.set_item("mse_expected", mse_row.expected())?;
    d.set_item("kl", m.kl.mean)?;
    d.set_item("kl_se", m.kl.se)?;
    d.set_item("rank_corr", m.rank_correlation.map(|r| r.mean))?;
    d.set_item("rank_corr_se", m.rank_correlation.map(|r| r.se))?;
    if let (Some(gain), Some(row)) = (m.gain, gain_row) {
        d.set_item("fake_users", m.fake_users)?;
        d.set_item("gain", gain.mean)?;
        d.set_item("gain_se", gain.se)?;
        d.set_item("epg", row.expected())?;
        d.set_item("targets_supported", m.targets_supported)?;
    }
    Ok(d)
}
