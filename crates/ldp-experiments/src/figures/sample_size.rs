//! Measured ASR-MSE frontiers at several numbers of users (figure `frontier_vs_n`, after
//! the authors' `fig_asr_mse_pareto_frontier_empirical_n_*`): what a deployment with a
//! few hundred users can expect of the paper's trade-offs.

use ldp_analytic::compare::Row;
use ldp_attack::{MeasureConfig, Population, ReconstructionAttack, measure};
use ldp_core::Protocol;
use ldp_core::simulation::{Role, stream_rng};
use ldp_optimize::{TuneOptions, protocol_spec};

use super::{Output, budget, measured_point, thousands};
use crate::config::{Dataset, Experiment, Kind, eps_values};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, ColorBar, Figure, Panel, Point, Scale, Series, coincidence_note, fitted_range,
    protocol_look, protocol_marker,
};
use crate::table::Table;

pub(super) fn run(exp: &Experiment, options: &TuneOptions) -> Result<Output, ExperimentError> {
    let Kind::FrontierVsN {
        pairs,
        dataset,
        users,
        eps,
        runs,
        seed,
    } = &exp.kind
    else {
        unreachable!("dispatched on the kind")
    };
    let data = match dataset {
        Dataset::AdultAge => Population::adult_age(),
    };
    let budgets = eps_values(eps);
    let mut table = Table::new(&[
        "protocol",
        "users",
        "eps",
        "param",
        "runs",
        "asr",
        "asr_se",
        "asr_expected",
        "asr_z",
        "mse",
        "mse_se",
        "mse_expected",
        "mse_z",
    ]);
    for (row, &n) in users.iter().enumerate() {
        // One sample of n users per row, shared by every protocol and budget, so that the
        // closed forms are those of the very frequencies the points estimate.
        let mut rng = stream_rng(*seed, n, Role::Other(0), 0);
        let pop = data.resample(n as usize, &mut rng)?;
        let truth = pop.frequencies();
        for &p in pairs.iter().flat_map(|(c, a)| [c, a]) {
            for (i, (_, e)) in budgets.iter().enumerate() {
                let spec = protocol_spec(p, pop.k(), budget(*e)?, options)?;
                let config = MeasureConfig {
                    runs: *runs,
                    // Distinct seeds per (users, protocol, eps) point keep them independent.
                    seed: seed ^ (u64::from(p.id()) << 40) ^ ((row as u64) << 32) ^ (i as u64),
                    attack: ReconstructionAttack::Paper,
                    poisoning: None,
                };
                let m = measure(&spec, &pop, &config)?;
                let asr = Row::asr(&spec, m.asr);
                let mse = Row::mse(&spec, &truth, pop.len(), m.mse);
                table.push(vec![
                    p.label().into(),
                    (n as f64).into(),
                    (*e).into(),
                    spec.params().value().into(),
                    (*runs as f64).into(),
                    asr.measured.mean.into(),
                    asr.measured.se.into(),
                    asr.expected().into(),
                    asr.z().into(),
                    mse.measured.mean.into(),
                    mse.measured.se.into(),
                    mse.expected().into(),
                    mse.z().into(),
                ]);
            }
        }
    }
    let panels = draw(&table, pairs, users);
    let findings = findings(&table, users);
    let (lo, hi) = budgets
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (_, e)| {
            (a.min(*e), b.max(*e))
        });
    let mut notes =
        vec!["Lines: closed forms; markers: measured, ± 3 SE, coloured by ε.".to_owned()];
    notes.extend(coincidence_note(
        &panels,
        "Drawn on one another where equal:",
    ));
    Ok(Output {
        table,
        figure: Figure {
            width: exp.width,
            columns: pairs.len(),
            panel_height: 82.0,
            // One key per protocol (its line and marker); the note says that lines are
            // closed forms and markers measurements coloured by eps.
            legend: pairs
                .iter()
                .flat_map(|(c, a)| [c, a])
                .map(|p| (p.label().to_owned(), protocol_look(*p)))
                .collect(),
            panels,
            color_bar: Some(ColorBar {
                label: "privacy budget ε".into(),
                min: lo,
                max: hi,
            }),
            share_y: false,
            notes,
        },
        findings,
    })
}

/// A panel per (number of users, pair), rows by users; each column (one pair) on one ASR
/// range and one MSE range, so that going down a column shows the frontier keep its
/// height and move right as the users grow fewer.
fn draw(table: &Table, pairs: &[(Protocol, Protocol)], users: &[u64]) -> Vec<Panel> {
    let mut grid: Vec<Vec<Panel>> = users
        .iter()
        .map(|&n| {
            pairs
                .iter()
                .map(|&(c, a)| panel(table, n, [c, a]))
                .collect()
        })
        .collect();
    for column in 0..pairs.len() {
        let points: Vec<Point> = grid
            .iter()
            .flat_map(|row| &row[column].series)
            .flat_map(|s| s.points.iter().copied())
            .collect();
        let x = fitted_range(
            points.iter().flat_map(|q| [q.x - q.xerr, q.x + q.xerr]),
            Scale::Log,
        );
        let y = fitted_range(
            points.iter().flat_map(|q| [q.y - q.err, q.y + q.err]),
            Scale::Linear,
        );
        for row in &mut grid {
            row[column].x.range = Some(x);
            row[column].y.range = Some(y);
        }
    }
    grid.concat()
}

fn panel(table: &Table, n: u64, protocols: [Protocol; 2]) -> Panel {
    let mut series = Vec::new();
    for p in protocols {
        let rows: Vec<_> = table
            .rows_where("protocol", p.label())
            .filter(|r| table.num(r, "users") == n as f64)
            .collect();
        // The closed forms as a line in the protocol's look, the measurements as its
        // marker coloured by the budget.
        series.push(Series {
            label: p.label().into(),
            look: protocol_look(p).without_marker(),
            points: rows
                .iter()
                .map(|r| Point::at(table.num(r, "mse_expected"), table.num(r, "asr_expected")))
                .collect(),
        });
        series.push(Series {
            label: p.label().into(),
            look: protocol_marker(p),
            points: rows.iter().map(|r| measured_point(table, r)).collect(),
        });
    }
    Panel {
        title: format!(
            "{} vs {}, n = {}",
            protocols[0].label(),
            protocols[1].label(),
            thousands(n)
        ),
        x: Axis::log("MSE"),
        y: Axis::linear("ASR"),
        series,
        vlines: vec![],
    }
}

/// How the measurements sit on the closed forms, and how the MSE scales with n.
fn findings(table: &Table, users: &[u64]) -> Vec<String> {
    let z_within = |column: &str| {
        table
            .rows
            .iter()
            .filter(|r| table.num(r, column).abs() <= 3.0)
            .count()
    };
    let mut out = vec![format!(
        "{} of {} points have |ASR z| <= 3 and {} have |MSE z| <= 3 against the closed forms",
        z_within("asr_z"),
        table.rows.len(),
        z_within("mse_z"),
    )];
    if let (Some(&few), Some(&many)) = (users.first(), users.last())
        && few != many
    {
        // n * MSE is the per-user variance: the same at every n when the MSE is 1/n.
        let scaled = |n: u64| -> f64 {
            let rows: Vec<_> = table
                .rows
                .iter()
                .filter(|r| table.num(r, "users") == n as f64)
                .collect();
            rows.iter()
                .map(|r| table.num(r, "mse") * n as f64)
                .sum::<f64>()
                / rows.len() as f64
        };
        out.push(format!(
            "mean n x MSE: {:.4} at n = {few}, {:.4} at n = {many} (the MSE scales as 1/n)",
            scaled(few),
            scaled(many)
        ));
    }
    out
}
