//! Measured MSE of every estimator against eps, for each protocol, on a data set and on a
//! small sample of it. Not in the paper: the estimators beyond its unbiased one (the NDSS
//! 2020 consistency methods, iterative Bayesian update, maximum likelihood), whose gains
//! depend on the population's size.

use ldp_attack::{Estimate, Population};
use ldp_core::estimate::FitOptions;
use ldp_core::simulation::{Role, simulate};
use ldp_core::{Aggregator, Estimator, dispatch};
use ldp_optimize::{TuneOptions, protocol_spec};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rayon::prelude::*;

use super::{Output, budget, by_family, thousands, value};
use crate::config::{Dataset, Experiment, Kind};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, Dash, Figure, GREY, Look, Marker, OKABE_ITO, Panel, Point, Rgb, Series, coincidence_note,
};
use crate::table::{Cell, Table};

const COLUMNS: [&str; 8] = [
    "protocol",
    "users",
    "eps",
    "estimator",
    "runs",
    "mse",
    "mse_se",
    "relative_to_unbiased",
];

pub(super) fn run(exp: &Experiment, options: &TuneOptions) -> Result<Output, ExperimentError> {
    let Kind::Estimators {
        protocols,
        dataset,
        eps,
        samples,
        estimators,
        runs,
        seed,
    } = &exp.kind
    else {
        unreachable!("dispatched on the kind")
    };
    let estimators = parse(estimators)?;
    let protocols = by_family(protocols);
    let full = match dataset {
        Dataset::AdultAge => Population::adult_age(),
    };
    let populations: Vec<Population> = samples
        .iter()
        .map(|&fraction| sample(&full, fraction, *seed))
        .collect::<Result<_, _>>()?;
    let mut grid = Vec::new();
    for (s, pop) in populations.iter().enumerate() {
        for &p in &protocols {
            for (i, &e) in eps.iter().enumerate() {
                grid.push((s, pop, p, i, e));
            }
        }
    }
    let rows: Result<Vec<Vec<Vec<Cell>>>, ExperimentError> = grid
        .par_iter()
        .map(|&(s, pop, p, i, e)| {
            let spec = protocol_spec(p, pop.k(), budget(e)?, options)?;
            // Distinct seeds per point keep the points independent.
            let point_seed = seed ^ (u64::from(p.id()) << 40) ^ ((s as u64) << 32) ^ (i as u64);
            let measured = measure(&spec, pop, &estimators, *runs, point_seed)?;
            let unbiased = measured
                .iter()
                .find(|(e, ..)| *e == Estimator::Unbiased)
                .map(|(_, mse, _)| *mse);
            Ok(measured
                .into_iter()
                .map(|(est, mse, se)| {
                    vec![
                        p.label().into(),
                        (pop.len() as f64).into(),
                        e.into(),
                        est.name().into(),
                        (*runs as f64).into(),
                        mse.into(),
                        se.into(),
                        unbiased.map_or(f64::NAN, |u| mse / u).into(),
                    ]
                })
                .collect())
        })
        .collect();
    let mut table = Table::new(&COLUMNS);
    rows?.into_iter().flatten().for_each(|r| table.push(r));

    // Each estimator's MSE over the unbiased estimate's at the same point: the absolute
    // MSEs span six decades and bundle into one line per panel; their ratios spread.
    // Around each eps the estimators' markers are spread a little apart (dodged), so that
    // estimators of equal MSE do not hide one another.
    let others = estimators
        .iter()
        .filter(|&&e| e != Estimator::Unbiased)
        .count();
    let mut panels = Vec::new();
    for pop in &populations {
        for &p in &protocols {
            let t = &table;
            let rows = |est: Estimator| -> Vec<&Vec<Cell>> {
                t.rows
                    .iter()
                    .filter(|r| {
                        t.text(r, "protocol") == p.label()
                            && t.num(r, "users") == pop.len() as f64
                            && t.text(r, "estimator") == est.name()
                            && t.num(r, "relative_to_unbiased").is_finite()
                    })
                    .collect()
            };
            let mut dodge = 0;
            let series = estimators
                .iter()
                .map(|&est| {
                    if est == Estimator::Unbiased {
                        return Series {
                            label: est.name().into(),
                            look: look(est).without_marker(),
                            points: rows(est)
                                .into_iter()
                                .map(|r| Point::at(t.num(r, "eps"), 1.0))
                                .collect(),
                        };
                    }
                    let shift = DODGE * (dodge as f64 - (others as f64 - 1.0) / 2.0);
                    dodge += 1;
                    Series {
                        label: est.name().into(),
                        look: look(est),
                        points: rows(est)
                            .into_iter()
                            .map(|r| {
                                Point::at(
                                    t.num(r, "eps") * 10f64.powf(shift),
                                    t.num(r, "relative_to_unbiased"),
                                )
                            })
                            .collect(),
                    }
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            panels.push(Panel {
                title: format!("{}, n = {}", p.label(), thousands(pop.len() as u64)),
                x: Axis::log("privacy budget ε").ticks_at(eps),
                y: Axis::log("relative MSE"),
                series,
                vlines: vec![],
            });
        }
    }
    let mut notes = vec![
        "Relative MSE: an estimator's MSE over the unbiased estimate's at the same point (the line at 1); below 1 is better. Markers are spread around each ε so that none hides another; no error bars (data.csv has each MSE's standard error).".to_owned(),
    ];
    notes.extend(identical_note(
        &table,
        &populations,
        &protocols,
        &estimators,
    ));
    notes.extend(coincidence_note(
        &panels,
        "On the unbiased estimate's line (equal MSE):",
    ));
    let findings = findings(&table, &populations, &estimators);
    Ok(Output {
        table,
        figure: Figure {
            width: exp.width,
            columns: 4,
            panel_height: 90.0,
            legend: Figure::legend_from_series(&panels),
            panels,
            color_bar: None,
            share_y: false,
            notes,
        },
        findings,
    })
}

/// The estimators a config names, in its order.
fn parse(names: &[String]) -> Result<Vec<Estimator>, ExperimentError> {
    names
        .iter()
        .map(|n| {
            n.parse()
                .map_err(|e| ExperimentError::Config(format!("{e}")))
        })
        .collect()
}

/// `fraction` of the population, drawn without replacement by the seed (all of it at 1).
fn sample(full: &Population, fraction: f64, seed: u64) -> Result<Population, ExperimentError> {
    if !(fraction > 0.0 && fraction <= 1.0) {
        return Err(ExperimentError::Config(format!(
            "a sample fraction lies in (0, 1], got {fraction}"
        )));
    }
    if fraction == 1.0 {
        return Ok(full.clone());
    }
    let mut items = full.items().to_vec();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed ^ fraction.to_bits());
    items.shuffle(&mut rng);
    let n = ((items.len() as f64 * fraction).round() as usize).max(1);
    items.truncate(n);
    Population::from_items(full.k(), items).map_err(|e| ExperimentError::Config(e.to_string()))
}

/// `(estimator, mean MSE, its standard error)` over `runs` runs: each run perturbs every
/// user once and every estimator reads the same aggregate. An estimator the family cannot
/// run (the channel-based ones on SHE's sums) gets NaN.
fn measure(
    spec: &ldp_core::Spec,
    pop: &Population,
    estimators: &[Estimator],
    runs: u64,
    seed: u64,
) -> Result<Vec<(Estimator, f64, f64)>, ExperimentError> {
    let truth = pop.frequencies();
    let mut errors = vec![Vec::with_capacity(runs as usize); estimators.len()];
    dispatch!(spec.build().map_err(|e| ExperimentError::Config(e.to_string()))?, m => {
        for run in 0..runs {
            // Streamed: the reports are added as they are drawn, never stored.
            let server = simulate(&m, pop.items(), seed, run, Role::Genuine)
                .map_err(|e| ExperimentError::Config(e.to_string()))?;
            for (errs, &est) in errors.iter_mut().zip(estimators) {
                let mse = match server.fit(est, &FitOptions::default()) {
                    Ok(fit) => {
                        fit.values.iter().zip(&truth).map(|(e, f)| (e - f).powi(2)).sum::<f64>()
                            / truth.len() as f64
                    }
                    Err(ldp_core::AggregateError::NeedsChannel { .. }) => f64::NAN,
                    Err(e) => return Err(ExperimentError::Config(e.to_string())),
                };
                errs.push(mse);
            }
        }
    });
    Ok(estimators
        .iter()
        .zip(errors)
        .map(|(&est, errs)| {
            let mse = Estimate::from_runs(errs.into_iter());
            (est, mse.mean, mse.se)
        })
        .collect())
}

/// The spread of the estimators' markers around each eps, in decades of the log axis.
const DODGE: f64 = 0.02;

/// The estimators whose MSE is the same at every eps of a panel (to 1e-9): one estimate,
/// whatever its name (maximum likelihood reached by each of its three routes).
fn identical_note(
    table: &Table,
    populations: &[Population],
    protocols: &[ldp_core::Protocol],
    estimators: &[Estimator],
) -> Option<String> {
    let mut groups: Vec<(Vec<&str>, Vec<String>)> = Vec::new();
    for pop in populations {
        for &p in protocols {
            let mse = |est: Estimator| -> Vec<f64> {
                table
                    .rows
                    .iter()
                    .filter(|r| {
                        table.text(r, "protocol") == p.label()
                            && table.num(r, "users") == pop.len() as f64
                            && table.text(r, "estimator") == est.name()
                    })
                    .map(|r| table.num(r, "mse"))
                    .collect()
            };
            let mut seen: Vec<Estimator> = Vec::new();
            for &a in estimators.iter().filter(|&&e| e != Estimator::Unbiased) {
                if seen.contains(&a) {
                    continue;
                }
                let va = mse(a);
                let same: Vec<Estimator> = estimators
                    .iter()
                    .copied()
                    .filter(|&b| b != Estimator::Unbiased)
                    .filter(|&b| {
                        let vb = mse(b);
                        va.iter().all(|v| v.is_finite())
                            && va.len() == vb.len()
                            && va
                                .iter()
                                .zip(&vb)
                                .all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(1e-300))
                    })
                    .collect();
                seen.extend(&same);
                if same.len() < 2 {
                    continue;
                }
                let names: Vec<&str> = same.iter().map(|e| e.name()).collect();
                let at = format!("{}, n = {}", p.label(), thousands(pop.len() as u64));
                match groups.iter_mut().find(|(n, _)| *n == names) {
                    Some((_, panels)) => panels.push(at),
                    None => groups.push((names, vec![at])),
                }
            }
        }
    }
    if groups.is_empty() {
        return None;
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(names, panels)| {
            let names = match names.as_slice() {
                [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
                [] => String::new(),
            };
            format!("{names} ({})", panels.join("; "))
        })
        .collect();
    Some(format!(
        "Equal at every ε (one estimate, its markers side by side): {}.",
        parts.join("; ")
    ))
}

/// One look per estimator, each a marker of its own: the unbiased one black and solid,
/// the projections onto the simplex solid, the estimators that keep some negatives or do
/// not renormalize dashed, the likelihood-based ones dash-dotted.
fn look(est: Estimator) -> Look {
    let (color, dash, marker) = match est {
        Estimator::Unbiased => (OKABE_ITO[0], Dash::Solid, Marker::Circle),
        Estimator::BasePos => (GREY, Dash::Dashed, Marker::Plus),
        Estimator::Norm => (OKABE_ITO[2], Dash::Dashed, Marker::Square),
        Estimator::ClipRenormalize => (OKABE_ITO[1], Dash::Solid, Marker::Triangle),
        Estimator::NormCut => (OKABE_ITO[4], Dash::Solid, Marker::Diamond),
        Estimator::NormSub => (OKABE_ITO[5], Dash::Solid, Marker::Pentagon),
        Estimator::Simplex => (OKABE_ITO[5], Dash::Dashed, Marker::Cross),
        Estimator::BaseCut => (OKABE_ITO[7], Dash::Dashed, Marker::TriangleDown),
        Estimator::MleApx => (OKABE_ITO[3], Dash::DashDot, Marker::Star),
        Estimator::Ibu => (OKABE_ITO[6], Dash::DashDot, Marker::Hexagon),
        Estimator::IbuSquarem => (OKABE_ITO[6], Dash::Dashed, Marker::Hexagon),
        Estimator::Mle => (Rgb(120, 70, 170), Dash::DashDot, Marker::Asterisk),
    };
    Look {
        color,
        dash,
        marker: Some(marker),
        filled: true,
    }
}

/// For each population, how often each estimator has the lowest MSE over the
/// (protocol, eps) points, and its median MSE relative to the unbiased estimate.
fn findings(table: &Table, populations: &[Population], estimators: &[Estimator]) -> Vec<String> {
    let mut out = Vec::new();
    for pop in populations {
        let n = pop.len() as f64;
        let rows: Vec<_> = table
            .rows
            .iter()
            .filter(|r| table.num(r, "users") == n)
            .collect();
        let mut points: Vec<(String, f64)> = rows
            .iter()
            .map(|r| (table.text(r, "protocol").to_owned(), table.num(r, "eps")))
            .collect();
        points.dedup();
        let mut wins = vec![0usize; estimators.len()];
        for (protocol, e) in &points {
            let best = estimators
                .iter()
                .enumerate()
                .filter_map(|(i, est)| {
                    rows.iter()
                        .find(|r| {
                            table.text(r, "protocol") == protocol
                                && table.num(r, "eps") == *e
                                && table.text(r, "estimator") == est.name()
                        })
                        .map(|r| (i, table.num(r, "mse")))
                })
                .filter(|(_, mse)| mse.is_finite())
                .min_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((i, _)) = best {
                wins[i] += 1;
            }
        }
        let summary: Vec<String> = estimators
            .iter()
            .zip(&wins)
            .map(|(est, w)| {
                let mut ratios: Vec<f64> = rows
                    .iter()
                    .filter(|r| table.text(r, "estimator") == est.name())
                    .map(|r| table.num(r, "relative_to_unbiased"))
                    .filter(|v| v.is_finite())
                    .collect();
                ratios.sort_by(f64::total_cmp);
                let median = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
                format!("{} best at {w}, median MSE x{}", est.name(), value(median))
            })
            .collect();
        out.push(format!(
            "n = {} ({} points): {}",
            thousands(pop.len() as u64),
            points.len(),
            summary.join("; ")
        ));
    }
    out
}
