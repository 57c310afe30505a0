//! Report size against MSE, attackability as colour: the communication cost the paper
//! names as its framework's next axis ("complementary system-level metrics").

use ldp_analytic::{asr, cost, variance};
use ldp_core::Protocol;
use ldp_optimize::{TuneOptions, protocol_spec};
use rayon::prelude::*;

use super::{Output, budget, by_family, domain, value};
use crate::config::Experiment;
use crate::error::ExperimentError;
use crate::plot::{
    Axis, ColorBar, Figure, Panel, Point, Series, coincidence_note, protocol_marker,
};
use crate::table::{Cell, Table};

const COLUMNS: [&str; 9] = [
    "protocol",
    "k",
    "eps",
    "param",
    "bits",
    "mse",
    "asr",
    "server_ops",
    "client_draws",
];

pub(super) fn run(
    exp: &Experiment,
    options: &TuneOptions,
    protocols: &[Protocol],
    domain_sizes: &[u32],
    eps: &[f64],
) -> Result<Output, ExperimentError> {
    let protocols = by_family(protocols);
    let mut grid: Vec<(f64, u32, Protocol)> = Vec::new();
    for &e in eps {
        for &k in domain_sizes {
            grid.extend(protocols.iter().map(|&p| (e, k, p)));
        }
    }
    let rows: Result<Vec<Vec<Cell>>, ExperimentError> = grid
        .par_iter()
        .map(|&(e, k, p)| {
            let spec = protocol_spec(p, domain(k)?, budget(e)?, options)?;
            Ok(vec![
                p.label().into(),
                k.into(),
                e.into(),
                spec.params().value().into(),
                cost::bits(&spec).into(),
                variance::approx_per_user(&spec).into(),
                asr::expected(&spec, options.lh_asr).into(),
                cost::server_ops(&spec).into(),
                cost::client_draws(&spec).into(),
            ])
        })
        .collect();
    let mut table = Table::new(&COLUMNS);
    rows?.into_iter().for_each(|r| table.push(r));

    let mut panels = Vec::new();
    let mut findings = Vec::new();
    for &e in eps {
        for &k in domain_sizes {
            let at = |r: &&Vec<Cell>| table.num(r, "eps") == e && table.num(r, "k") == f64::from(k);
            let here: Vec<&Vec<Cell>> = table.rows.iter().filter(at).collect();
            findings.push(panel_finding(&table, &here, k, e));
            panels.push(Panel {
                title: format!("k = {k}, ε = {}", value(e)),
                x: Axis::log("MSE (variance per user)"),
                y: Axis::log("bits per report"),
                series: protocols
                    .iter()
                    .map(|&p| Series {
                        label: p.label().into(),
                        look: protocol_marker(p),
                        points: here
                            .iter()
                            .filter(|r| table.text(r, "protocol") == p.label())
                            .map(|r| Point {
                                shade: Some(table.num(r, "asr")),
                                ..Point::at(table.num(r, "mse"), table.num(r, "bits"))
                            })
                            .collect(),
                    })
                    .collect(),
                vlines: vec![],
            });
        }
    }
    // A hollow adaptive marker around its classic counterpart's is the tuned parameter
    // equal to the preset one.
    let notes = coincidence_note(
        &panels,
        "Hollow around filled (one point): the adaptive protocol tuned to its classic counterpart's parameter:",
    )
    .into_iter()
    .collect();
    let asr_max = table
        .rows
        .iter()
        .map(|r| table.num(r, "asr"))
        .fold(0.0, f64::max);
    Ok(Output {
        figure: Figure {
            width: exp.width,
            columns: domain_sizes.len().clamp(1, 4),
            panel_height: 120.0,
            legend: Figure::legend_from_series(&panels),
            panels,
            color_bar: Some(ColorBar {
                label: "expected ASR".into(),
                min: 0.0,
                max: asr_max.max(f64::MIN_POSITIVE),
            }),
            share_y: false,
            notes,
        },
        table,
        findings,
    })
}

/// The cheapest report and the most accurate protocol of one panel, with what each
/// costs in the other currency.
fn panel_finding(t: &Table, rows: &[&Vec<Cell>], k: u32, e: f64) -> String {
    let by = |column: &str| {
        rows.iter()
            .min_by(|a, b| t.num(a, column).total_cmp(&t.num(b, column)))
            .copied()
    };
    match (by("bits"), by("mse")) {
        (Some(small), Some(accurate)) => format!(
            "k = {k}, eps = {}: smallest report {} ({} bits, MSE {:.3e}); lowest MSE {} ({:.3e}, {} bits)",
            value(e),
            t.text(small, "protocol"),
            value(t.num(small, "bits")),
            t.num(small, "mse"),
            t.text(accurate, "protocol"),
            t.num(accurate, "mse"),
            value(t.num(accurate, "bits")),
        ),
        _ => format!("k = {k}, eps = {}: no protocols", value(e)),
    }
}
