//! Privacy amplification by shuffling: the central eps of n shuffled eps0-LDP reports
//! against n, and what tuning at the largest eps0 a central target allows buys over
//! tuning locally at the target.

use ldp_analytic::shuffle::Shuffle;
use ldp_analytic::variance;
use ldp_core::Protocol;
use ldp_optimize::{TuneOptions, protocol_spec};
use rayon::prelude::*;

use super::{Output, budget, by_family, domain, thousands, value};
use crate::config::{Experiment, Kind};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, Dash, Figure, Look, Panel, Point, Series, coincidence_note, ordered_look, protocol_look,
};
use crate::table::{Cell, Table};

const COLUMNS: [&str; 7] = [
    "panel",
    "users",
    "eps0",
    "protocol",
    "central_eps",
    "closed_form",
    "variance",
];

/// The numbers of reports: four per decade from 10^a to 10^b.
fn users_grid(log10_users: (u32, u32)) -> Vec<u64> {
    let (a, b) = log10_users;
    (4 * a..=4 * b)
        .map(|i| 10f64.powf(f64::from(i) / 4.0).round() as u64)
        .collect()
}

pub(super) fn run(exp: &Experiment, options: &TuneOptions) -> Result<Output, ExperimentError> {
    let Kind::Shuffle {
        eps0,
        log10_users,
        delta,
        central_eps,
        protocols,
        domain_size,
    } = &exp.kind
    else {
        unreachable!("dispatched on its kind")
    };
    let (delta, central) = (*delta, *central_eps);
    let users = users_grid(*log10_users);
    let protocols = by_family(protocols);
    let k = domain(*domain_size)?;

    // The central eps of each (n, eps0).
    let grid: Vec<(u64, f64)> = users
        .iter()
        .flat_map(|&n| eps0.iter().map(move |&e| (n, e)))
        .collect();
    let amplified: Result<Vec<Vec<Cell>>, ExperimentError> = grid
        .par_iter()
        .map(|&(n, e)| {
            let shuffle = Shuffle::new(n, delta)?;
            let at = shuffle.central_eps(e)?;
            Ok(vec![
                "amplification".into(),
                Cell::Num(n as f64),
                e.into(),
                "".into(),
                at.upper.into(),
                shuffle.closed_form(e)?.into(),
                f64::NAN.into(),
            ])
        })
        .collect();

    // Each protocol at the largest eps0 for the central target, and locally at it.
    let tuned: Result<Vec<Vec<Vec<Cell>>>, ExperimentError> = users
        .par_iter()
        .map(|&n| {
            let e0 = Shuffle::new(n, delta)?.max_local_eps(central)?;
            protocols
                .iter()
                .map(|&p| {
                    let shuffled = protocol_spec(p, k, budget(e0)?, options)?;
                    Ok(vec![
                        "variance".into(),
                        Cell::Num(n as f64),
                        e0.into(),
                        p.label().into(),
                        central.into(),
                        f64::NAN.into(),
                        variance::approx_per_user(&shuffled).into(),
                    ])
                })
                .collect()
        })
        .collect();
    let local: Result<Vec<(Protocol, f64)>, ExperimentError> = protocols
        .iter()
        .map(|&p| {
            let spec = protocol_spec(p, k, budget(central)?, options)?;
            Ok((p, variance::approx_per_user(&spec)))
        })
        .collect();
    let local = local?;

    let mut table = Table::new(&COLUMNS);
    amplified?.into_iter().for_each(|r| table.push(r));
    tuned?.into_iter().flatten().for_each(|r| table.push(r));
    // The local baseline, once per protocol, at the first number of reports.
    for &(p, v) in &local {
        table.push(vec![
            "local".into(),
            Cell::Num(users[0] as f64),
            central.into(),
            p.label().into(),
            central.into(),
            f64::NAN.into(),
            v.into(),
        ]);
    }

    let rows = |panel: &str| -> Vec<&Vec<Cell>> {
        table
            .rows
            .iter()
            .filter(|r| table.text(r, "panel") == panel)
            .collect()
    };
    let (lo, hi) = (users[0] as f64, users[users.len() - 1] as f64);
    let mut amplification = Vec::new();
    for (i, &e) in eps0.iter().enumerate() {
        let look = ordered_look(i, eps0.len());
        let here: Vec<&Vec<Cell>> = rows("amplification")
            .into_iter()
            .filter(|r| table.num(r, "eps0") == e)
            .collect();
        amplification.push(Series {
            label: format!("ε₀ = {}", value(e)),
            look,
            points: here
                .iter()
                .map(|r| Point::at(table.num(r, "users"), table.num(r, "central_eps")))
                .collect(),
        });
        amplification.push(Series {
            label: String::new(),
            look: Look {
                dash: Dash::Dashed,
                marker: None,
                ..look
            },
            points: here
                .iter()
                .filter(|r| table.num(r, "closed_form").is_finite())
                .map(|r| Point::at(table.num(r, "users"), table.num(r, "closed_form")))
                .collect(),
        });
    }
    let mut variances = Vec::new();
    // A local baseline within 5% of an earlier protocol's (on one another at the
    // drawing's resolution) is not drawn again; the note names the protocols the line
    // stands for.
    let mut baselines: Vec<(f64, Vec<&str>)> = Vec::new();
    for &(p, v) in &local {
        let look = protocol_look(p);
        variances.push(Series {
            label: p.label().into(),
            look,
            points: rows("variance")
                .iter()
                .filter(|r| table.text(r, "protocol") == p.label())
                .map(|r| Point::at(table.num(r, "users"), table.num(r, "variance")))
                .collect(),
        });
        if let Some((_, same)) = baselines
            .iter_mut()
            .find(|(w, _)| (*w - v).abs() <= 0.05 * v.abs())
        {
            same.push(p.label());
            continue;
        }
        baselines.push((v, vec![p.label()]));
        variances.push(Series {
            label: String::new(),
            look: Look {
                dash: Dash::Dashed,
                marker: None,
                ..look
            },
            points: vec![Point::at(lo, v), Point::at(hi, v)],
        });
    }
    let shared: Vec<String> = baselines
        .iter()
        .filter(|(_, same)| same.len() > 1)
        .map(|(_, same)| same.join(" ≈ "))
        .collect();
    let panels = vec![
        Panel {
            title: format!("Central ε, δ = {delta:e}"),
            x: Axis::log("shuffled reports n"),
            y: Axis::log("central ε"),
            series: amplification,
            vlines: vec![],
        },
        Panel {
            title: format!("At central ε = {}, k = {}", value(central), k.get()),
            x: Axis::log("shuffled reports n"),
            y: Axis::log("variance per user"),
            series: variances,
            vlines: vec![],
        },
    ];
    let findings = findings(&table, &users, eps0, central, &local);
    let mut notes = vec![
        "Left: solid, the numerical bound (computed at every clone count); dashed, the closed form where it applies (ε₀ ≤ ln(n / (16 ln(4/δ)))).".to_owned(),
        format!(
            "Right: solid, each protocol at the largest ε₀ whose n shuffled reports are (ε = {}, δ)-DP; dashed, the same protocol at ε = {} without a shuffler. Its ASR is per report at ε₀, against whoever sees reports with their senders.",
            value(central),
            value(central)
        ),
    ];
    notes.extend(coincidence_note(
        &panels,
        "Drawn on one another where equal:",
    ));
    if !shared.is_empty() {
        notes.push(format!(
            "One dashed line for local variances within 5% of one another: {}.",
            shared.join("; ")
        ));
    }
    Ok(Output {
        figure: Figure {
            width: exp.width,
            columns: 2,
            panel_height: 150.0,
            legend: Figure::legend_from_series(&panels),
            panels,
            color_bar: None,
            share_y: false,
            notes,
        },
        table,
        findings,
    })
}

/// The central eps at the middle number of reports, and the variance gained there.
fn findings(
    table: &Table,
    users: &[u64],
    eps0: &[f64],
    central: f64,
    local: &[(Protocol, f64)],
) -> Vec<String> {
    let n = users[users.len() / 2] as f64;
    let mut out = Vec::new();
    for &e in eps0 {
        if let Some(r) = table.rows.iter().find(|r| {
            table.text(r, "panel") == "amplification"
                && table.num(r, "users") == n
                && table.num(r, "eps0") == e
        }) {
            out.push(format!(
                "n = {}: eps0 = {} gives central eps {:.4} (closed form {})",
                thousands(n as u64),
                value(e),
                table.num(r, "central_eps"),
                match table.num(r, "closed_form") {
                    c if c.is_finite() => format!("{c:.4}"),
                    _ => "n/a".into(),
                }
            ));
        }
    }
    for &(p, v) in local {
        if let Some(r) = table.rows.iter().find(|r| {
            table.text(r, "panel") == "variance"
                && table.num(r, "users") == n
                && table.text(r, "protocol") == p.label()
        }) {
            out.push(format!(
                "n = {}, central eps {}: {} at eps0 = {:.3} has {:.3}x less variance than at eps = {} locally",
                thousands(n as u64),
                value(central),
                p.label(),
                table.num(r, "eps0"),
                v / table.num(r, "variance"),
                value(central)
            ));
        }
    }
    out
}
