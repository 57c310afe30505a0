//! The parameter each selection strategy picks, against eps (appendix "optimization_methods").

use ldp_core::Protocol;
use ldp_optimize::{TuneOptions, tune};
use rayon::prelude::*;

use super::{Output, budget, domain, param_name};
use crate::config::{EpsRange, Experiment, eps_values, strategy_with_scale};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, Dash, Figure, Look, MARKERS, OKABE_ITO, Panel, Point, Series, coincidence_summary,
};
use crate::table::{Cell, Table};

pub(super) fn run(
    exp: &Experiment,
    options: &TuneOptions,
    protocols: &[Protocol],
    ks: &[u32],
    eps: &[EpsRange],
    strategies: &[String],
) -> Result<Output, ExperimentError> {
    let mut grid = Vec::new();
    for &k in ks {
        for &p in protocols {
            for s in strategies {
                for (_, e) in eps_values(eps) {
                    grid.push((k, p, s.clone(), e));
                }
            }
        }
    }
    let rows: Result<Vec<Vec<Cell>>, ExperimentError> = grid
        .par_iter()
        .map(|(k, p, s, e)| {
            let (strategy, scale) = strategy_with_scale(s)?;
            let o = TuneOptions {
                strategy,
                scale: scale.unwrap_or(options.scale),
                ..*options
            };
            let t = tune(*p, domain(*k)?, budget(*e)?, &o)?;
            Ok(vec![
                p.label().into(),
                (*k).into(),
                (*e).into(),
                s.clone().into(),
                t.param().into(),
                t.objectives.asr.into(),
                t.objectives.mse.into(),
                if t.fell_back { "yes" } else { "no" }.into(),
            ])
        })
        .collect();
    let mut table = Table::new(&[
        "protocol",
        "k",
        "eps",
        "strategy",
        "param",
        "asr",
        "mse",
        "fell_back",
    ]);
    rows?.into_iter().for_each(|r| table.push(r));
    let mut panels = Vec::new();
    for &k in ks {
        for &p in protocols {
            panels.push(Panel {
                title: format!("{} (k = {k})", p.label()),
                x: Axis::linear("privacy budget ε"),
                y: if p == Protocol::Alh || p == Protocol::Ass {
                    Axis::log(param_name(p))
                } else {
                    Axis::linear(param_name(p))
                },
                // The default strategy last, on top of those that pick its parameter.
                series: strategies
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.as_str() != DEFAULT)
                    .chain(
                        strategies
                            .iter()
                            .enumerate()
                            .filter(|(_, s)| s.as_str() == DEFAULT),
                    )
                    .map(|(i, s)| Series {
                        label: strategy_label(s),
                        look: strategy_look(i),
                        points: table
                            .rows
                            .iter()
                            .filter(|r| {
                                table.text(r, "protocol") == p.label()
                                    && table.num(r, "k") == f64::from(k)
                                    && table.text(r, "strategy") == s
                            })
                            .map(|r| Point::at(table.num(r, "eps"), table.num(r, "param")))
                            .collect(),
                    })
                    .collect(),
                vlines: vec![],
            });
        }
    }
    // Only the eps-constraint strategy can fall back: count among its rows.
    let constrained: Vec<_> = table
        .rows
        .iter()
        .filter(|r| table.text(r, "strategy").starts_with("eps-constraint"))
        .collect();
    let fallbacks = constrained
        .iter()
        .filter(|r| table.text(r, "fell_back") == "yes")
        .count();
    let mut findings = vec![format!(
        "eps-constraint fell back to the utopia point in {fallbacks} of its {} cases",
        constrained.len()
    )];
    findings.extend(agreement(&table, strategies));
    let legend = strategies
        .iter()
        .enumerate()
        .map(|(i, s)| (strategy_label(s), strategy_look(i)))
        .collect();
    let mut notes = Vec::new();
    if strategies.iter().any(|s| s.starts_with("hypervolume@")) {
        notes.push(format!(
            "The caption's six strategies, drawn as {} curves: the hypervolume on both readings of the paper, on raw objectives with its reference point (1, 1) (the erratic curve, jumping between the grid's ends, is this one, not elbow) and on min-max normalized objectives. The default, weighted, is drawn on top.",
            strategies.len()
        ));
    }
    notes.extend(coincidence_summary(
        &panels,
        "Markers on one another are strategies that pick one parameter, as the paper finds most do:",
    ));
    Ok(Output {
        table,
        figure: Figure {
            width: exp.width,
            columns: protocols.len().max(1),
            panel_height: 100.0,
            legend,
            panels,
            color_bar: None,
            share_y: false,
            notes,
        },
        findings,
    })
}

/// The strategy the paper (and `ldp tune`) uses by default.
const DEFAULT: &str = "weighted";

/// A strategy's legend label: `weighted (default)`, `hypervolume, raw objectives`.
fn strategy_label(s: &str) -> String {
    match s.split_once('@') {
        Some((base, scale)) => format!("{base}, {scale} objectives"),
        None if s == DEFAULT => format!("{s} (default)"),
        None => s.replace("eps-", "ε-"),
    }
}

/// Strategy `i`'s look: its own colour, marker and (for the weighted reference) a solid
/// line and filled markers; the others dashed with hollow markers, so that strategies
/// choosing the same parameters (elbow and the normalized hypervolume for AUE) show each
/// its own outline.
fn strategy_look(i: usize) -> Look {
    let marker = MARKERS[i % MARKERS.len()];
    let look = Look::line(OKABE_ITO[(i + 1) % OKABE_ITO.len()]).with_marker(marker);
    if i == 0 {
        look
    } else {
        Look {
            filled: false,
            ..look.with_dash(Dash::Dashed)
        }
    }
}

/// How often each strategy picks the weighted strategy's parameter (to 1e-9), one
/// finding per strategy.
pub(crate) fn agreement(table: &Table, strategies: &[String]) -> Vec<String> {
    let key = |r: &[Cell]| {
        (
            table.text(r, "protocol").to_owned(),
            table.num(r, "k").to_bits(),
            table.num(r, "eps").to_bits(),
        )
    };
    let weighted: std::collections::HashMap<_, f64> = table
        .rows
        .iter()
        .filter(|r| table.text(r, "strategy") == "weighted")
        .map(|r| (key(r), table.num(r, "param")))
        .collect();
    strategies
        .iter()
        .filter(|s| s.as_str() != "weighted")
        .map(|s| {
            let rows: Vec<_> = table
                .rows
                .iter()
                .filter(|r| table.text(r, "strategy") == s)
                .collect();
            let same = rows
                .iter()
                .filter(|r| {
                    weighted.get(&key(r)).is_some_and(|w| {
                        let v = table.num(r, "param");
                        (v - w).abs() <= 1e-9 * w.abs().max(1.0)
                    })
                })
                .count();
            format!(
                "{s} picks the weighted strategy's parameter in {same} of {} cases",
                rows.len()
            )
        })
        .collect()
}
