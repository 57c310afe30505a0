//! Privacy audits over LDP-Auditor's grid (its `experiment_1.py`): the bound on eps that
//! a distinguishing test proves from the reports of our clients, as a fraction of eps,
//! for this toolkit's likelihood-ratio event and LDP-Auditor's attack guess, beside the
//! exact audit. Not in the paper.

use ldp_audit::{AuditConfig, Statistic, audit_mechanism, exact_audit};
use ldp_optimize::{TuneOptions, protocol_spec};

use super::{Output, budget, by_family};
use crate::config::{Experiment, Kind};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, Dash, Figure, GREY, Look, Marker, OKABE_ITO, Panel, Point, Series, coincidences,
};
use crate::table::{Cell, Table};

const COLUMNS: [&str; 10] = [
    "protocol",
    "k",
    "eps",
    "statistic",
    "trials",
    "hits_v1",
    "hits_v2",
    "eps_emp",
    "eps_exact",
    "ratio",
];

pub(super) fn run(exp: &Experiment, options: &TuneOptions) -> Result<Output, ExperimentError> {
    let Kind::AuditGrid {
        protocols,
        domain_sizes,
        eps,
        trials,
        alpha,
        seed,
    } = &exp.kind
    else {
        unreachable!("dispatched on the kind")
    };
    let protocols = by_family(protocols);
    let mut grid = Vec::new();
    for &p in &protocols {
        for &e in eps {
            for &k in domain_sizes {
                grid.push((p, e, k));
            }
        }
    }
    let config = |i: usize| AuditConfig {
        trials: *trials,
        alpha: *alpha,
        seed: seed.wrapping_add(i as u64),
        ..AuditConfig::default()
    };
    // One point at a time: each audit already runs its batches on every core.
    let rows: Vec<Vec<Vec<Cell>>> = grid
        .iter()
        .enumerate()
        .map(|(i, &(p, e, k))| {
            let spec = protocol_spec(p, super::domain(k)?, budget(e)?, options)?;
            let mech = spec
                .build()
                .map_err(|e| ExperimentError::Config(e.to_string()))?;
            let exact = exact_audit(&mech).map_err(|e| ExperimentError::Config(e.to_string()))?;
            let audit = audit_mechanism(&mech, &config(i))
                .map_err(|e| ExperimentError::Config(e.to_string()))?;
            Ok(audit
                .statistics
                .iter()
                .map(|s| {
                    let pair = s.worst_pair();
                    vec![
                        p.label().into(),
                        f64::from(k).into(),
                        e.into(),
                        s.statistic.name().into(),
                        (*trials as f64).into(),
                        (pair.hits_v1 as f64).into(),
                        (pair.hits_v2 as f64).into(),
                        s.eps_emp.into(),
                        exact.eps_exact.into(),
                        (s.eps_emp / e).into(),
                    ]
                })
                .collect())
        })
        .collect::<Result<_, ExperimentError>>()?;
    let mut table = Table::new(&COLUMNS);
    rows.into_iter().flatten().for_each(|r| table.push(r));

    let panels = protocols
        .iter()
        .map(|&p| {
            let mut series: Vec<Series> = [
                (
                    Statistic::LikelihoodRatio,
                    "likelihood-ratio event (ours)",
                    5,
                    Marker::Circle,
                ),
                (
                    Statistic::AttackGuess,
                    "attack guess (LDP-Auditor)",
                    1,
                    Marker::Square,
                ),
            ]
            .into_iter()
            .map(|(statistic, label, color, marker)| Series {
                label: label.into(),
                look: Look::line(OKABE_ITO[color]).with_marker(marker),
                points: spread(&table, p.label(), statistic.name(), eps, "ratio"),
            })
            .collect();
            series.push(Series {
                label: "exact audit".into(),
                look: Look::line(GREY).with_dash(Dash::Dashed),
                points: spread(
                    &table,
                    p.label(),
                    Statistic::LikelihoodRatio.name(),
                    eps,
                    "exact",
                ),
            });
            Panel {
                title: p.label().into(),
                x: Axis::log("privacy budget ε").ticks_at(&[0.25, 1.0, 4.0, 10.0]),
                y: Axis::linear("ε_emp / ε").over(0.0, 1.05),
                series,
                vlines: vec![],
            }
        })
        .collect::<Vec<_>>();
    let findings = findings(&table);
    // The panels where the guess's line covers ours (GRR: one event).
    let covered: Vec<&str> = panels
        .iter()
        .filter(|p| !coincidences(p).is_empty())
        .map(|p| p.title.as_str())
        .collect();
    let notes = if covered.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "Where the attack guess finds the ε_emp of our likelihood-ratio event, its line covers ours: {}.",
            covered.join(", ")
        )]
    };
    Ok(Output {
        table,
        figure: Figure {
            width: exp.width,
            columns: 4,
            panel_height: 90.0,
            legend: Figure::legend_from_series(&panels),
            panels,
            color_bar: None,
            share_y: true,
            notes,
        },
        findings,
    })
}

/// One point per budget: the midpoint of the values over the domain sizes, with a bar
/// over their range. `what` is `ratio` (eps_emp / eps) or `exact` (eps_exact / eps).
fn spread(table: &Table, protocol: &str, statistic: &str, eps: &[f64], what: &str) -> Vec<Point> {
    eps.iter()
        .filter_map(|&e| {
            let values: Vec<f64> = table
                .rows
                .iter()
                .filter(|r| {
                    table.text(r, "protocol") == protocol
                        && table.text(r, "statistic") == statistic
                        && table.num(r, "eps") == e
                })
                .map(|r| match what {
                    "exact" => table.num(r, "eps_exact") / e,
                    _ => table.num(r, "ratio"),
                })
                .collect();
            let lo = values.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            (!values.is_empty()).then(|| Point {
                err: if what == "exact" {
                    0.0
                } else {
                    (hi - lo) / 2.0
                },
                ..Point::at(e, (lo + hi) / 2.0)
            })
        })
        .collect()
}

fn findings(table: &Table) -> Vec<String> {
    let flagged = table
        .rows
        .iter()
        .filter(|r| table.num(r, "eps_emp") > table.num(r, "eps"))
        .count();
    let mut out = vec![format!(
        "{flagged} of {} audits of correct clients give eps_emp above eps.",
        table.rows.len()
    )];
    for statistic in [Statistic::LikelihoodRatio, Statistic::AttackGuess] {
        let fractions: Vec<f64> = table
            .rows
            .iter()
            .filter(|r| {
                table.text(r, "statistic") == statistic.name() && table.num(r, "eps") == 1.0
            })
            .map(|r| table.num(r, "eps_emp") / table.num(r, "eps_exact"))
            .collect();
        if !fractions.is_empty() {
            let min = fractions.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = fractions.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            out.push(format!(
                "At eps = 1, {} reaches {min:.2} to {max:.2} of eps_exact.",
                statistic.name()
            ));
        }
    }
    out
}
