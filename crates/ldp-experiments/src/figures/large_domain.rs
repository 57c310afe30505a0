//! Large domains: MSE, exact ASR and report size against k, for every family at its
//! preset, closed forms as lines and measurements at a few k as points with 3-SE bars.
//! Not in the paper: the frequency oracles built for large domains (Hadamard response,
//! the Hadamard mechanism, fast local hashing, the count-mean sketches) beside its
//! protocols, under its attack-aware lens.

use ldp_analytic::compare::Row;
use ldp_analytic::{LhAsr, asr, cost, variance};
use ldp_attack::{MeasureConfig, Population, ReconstructionAttack, measure};
use ldp_core::{Protocol, Spec};
use ldp_optimize::{TuneOptions, protocol_spec};
use rayon::prelude::*;

use super::{Output, budget, by_family, domain, value};
use crate::config::{Experiment, Kind};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, Dash, Figure, GREY, Look, Marker, Panel, Point, Series, coincidence_note, protocol_look,
};
use crate::table::{Cell, Table};

const COLUMNS: [&str; 13] = [
    "protocol",
    "k",
    "eps",
    "params",
    "bits",
    "mse",
    "asr",
    "mse_measured",
    "mse_se",
    "mse_expected",
    "asr_measured",
    "asr_se",
    "z_max",
];

/// The three rows of panels: what each plots from a table row, its axis label and its
/// name in the panel titles.
const METRICS: [(&str, &str, &str); 3] = [
    ("mse", "MSE (variance / n)", "MSE"),
    ("asr", "exact expected ASR", "ASR"),
    ("bits", "bits per report", "bits"),
];

pub(super) fn run(exp: &Experiment, options: &TuneOptions) -> Result<Output, ExperimentError> {
    let Kind::LargeDomain {
        protocols,
        log2_k,
        eps,
        measured,
        users,
        runs,
        seed,
    } = &exp.kind
    else {
        unreachable!("dispatched on the kind")
    };
    let protocols = by_family(protocols);
    let ks: Vec<u32> = (log2_k.0..=log2_k.1).map(|e| 1u32 << e).collect();
    let mut grid: Vec<(usize, f64, u32, Protocol)> = Vec::new();
    for (j, &e) in eps.iter().enumerate() {
        for &k in &ks {
            grid.extend(protocols.iter().map(|&p| (j, e, k, p)));
        }
    }
    let rows: Result<Vec<Vec<Cell>>, ExperimentError> = grid
        .par_iter()
        .map(|&(j, e, k, p)| {
            let spec = protocol_spec(p, domain(k)?, budget(e)?, options)?;
            let n = *users as f64;
            let mut row: Vec<Cell> = vec![
                p.label().into(),
                k.into(),
                e.into(),
                params_text(&spec).into(),
                cost::bits(&spec).into(),
                (variance::approx_per_user(&spec) / n).into(),
                asr::expected(&spec, LhAsr::Exact).into(),
            ];
            if measured.contains(&log2(k)) {
                // Keyed by the point, not its place in the grid: a protocol added to the
                // list leaves the others' measurements as they were.
                let point = (u64::from(p.id()) << 8 | u64::from(log2(k))) << 8 | j as u64;
                let seed = seed ^ (point << 24);
                row.extend(measure_at(&spec, *users, *runs, seed)?);
            } else {
                row.extend([f64::NAN; 6].map(Cell::from));
            }
            Ok(row)
        })
        .collect();
    let mut table = Table::new(&COLUMNS);
    rows?.into_iter().for_each(|r| table.push(r));

    let mut panels = Vec::new();
    for (metric, label, short) in METRICS {
        for &e in eps {
            let here: Vec<&Vec<Cell>> = table
                .rows
                .iter()
                .filter(|r| table.num(r, "eps") == e)
                .collect();
            let mut series = Vec::new();
            for &p in &protocols {
                let mine: Vec<&&Vec<Cell>> = here
                    .iter()
                    .filter(|r| table.text(r, "protocol") == p.label())
                    .collect();
                let look = protocol_look(p);
                // Labelled (the legend is the figure's own): a note names the lines that
                // lie on one another.
                series.push(Series {
                    label: p.label().into(),
                    look: look.without_marker(),
                    points: mine
                        .iter()
                        .map(|r| Point::at(table.num(r, "k"), table.num(r, metric)))
                        .collect(),
                });
                let measured_column = match metric {
                    "mse" => Some(("mse_measured", "mse_se")),
                    "asr" => Some(("asr_measured", "asr_se")),
                    _ => None,
                };
                if let Some((mean, se)) = measured_column {
                    series.push(Series {
                        label: p.label().into(),
                        look: Look {
                            dash: Dash::None,
                            ..look
                        },
                        points: mine
                            .iter()
                            .filter(|r| table.num(r, mean).is_finite())
                            .map(|r| Point {
                                err: 3.0 * table.num(r, se),
                                ..Point::at(table.num(r, "k"), table.num(r, mean))
                            })
                            .collect(),
                    });
                }
            }
            panels.push(Panel {
                title: format!("{short}, ε = {}", value(e)),
                x: Axis::log("domain size k"),
                y: Axis::log(label),
                series,
                vlines: vec![],
            });
        }
    }
    let notes = coincidence_note(&panels, "Lines on one another (equal closed forms):")
        .into_iter()
        .collect();
    let mut legend: Vec<(String, Look)> = protocols
        .iter()
        .map(|&p| (p.label().to_owned(), protocol_look(p)))
        .collect();
    legend.push(("closed form (line)".into(), Look::line(GREY)));
    legend.push((
        "measured ± 3 SE".into(),
        Look {
            color: GREY,
            dash: Dash::None,
            marker: Some(Marker::Circle),
            filled: true,
        },
    ));
    Ok(Output {
        findings: findings(&table, eps, &ks),
        table,
        figure: Figure {
            width: exp.width,
            columns: eps.len().clamp(1, 4),
            panel_height: 130.0,
            legend,
            panels,
            color_bar: None,
            share_y: false,
            notes,
        },
    })
}

fn log2(k: u32) -> u32 {
    k.ilog2()
}

/// The parameters by name, `g=8;seeds=1000` (empty for a family without one).
fn params_text(spec: &Spec) -> String {
    spec.params()
        .named_values()
        .iter()
        .map(|(n, v)| format!("{n}={}", value(*v)))
        .collect::<Vec<_>>()
        .join(";")
}

/// Measured MSE and ASR on `users` users spread evenly over the k items, beside the
/// exact expected MSE of that population (with the sketches' and FLH's collision bias),
/// and the larger |z| of the two measurements against their closed forms.
fn measure_at(
    spec: &Spec,
    users: usize,
    runs: u64,
    seed: u64,
) -> Result<Vec<Cell>, ExperimentError> {
    let k = spec.k();
    let items: Vec<u32> = (0..users as u64)
        .map(|i| (i % u64::from(k.get())) as u32)
        .collect();
    let pop = Population::from_items(k, items)?;
    let m = measure(
        spec,
        &pop,
        &MeasureConfig {
            runs,
            seed,
            attack: ReconstructionAttack::Paper,
            poisoning: None,
        },
    )?;
    let mse = Row::mse(spec, &pop.frequencies(), users, m.mse);
    let asr = Row::asr(spec, m.asr);
    // |z|, or 0 where a measurement has no spread.
    let z = |row: &Row| match row.z() {
        Some(z) if row.measured.se > 0.0 => z.abs(),
        _ => 0.0,
    };
    Ok(vec![
        mse.measured.mean.into(),
        mse.measured.se.into(),
        mse.expected().into(),
        asr.measured.mean.into(),
        asr.measured.se.into(),
        z(&mse).max(z(&asr)).into(),
    ])
}

/// Per budget, at the smallest and the largest k: the most accurate protocol and the
/// least attackable one, each with the other's currency; and the largest |z| of the
/// measurements.
fn findings(t: &Table, eps: &[f64], ks: &[u32]) -> Vec<String> {
    let mut out = Vec::new();
    for &e in eps {
        for k in [ks[0], ks[ks.len() - 1]] {
            let here: Vec<&Vec<Cell>> = t
                .rows
                .iter()
                .filter(|r| t.num(r, "eps") == e && t.num(r, "k") == f64::from(k))
                .collect();
            let best = |column: &str| {
                here.iter()
                    .min_by(|a, b| t.num(a, column).total_cmp(&t.num(b, column)))
                    .copied()
            };
            // The most accurate report that fits in 64 bits.
            let small = here
                .iter()
                .filter(|r| t.num(r, "bits") <= 64.0)
                .min_by(|a, b| t.num(a, "mse").total_cmp(&t.num(b, "mse")));
            if let Some(small) = small {
                out.push(format!(
                    "eps = {}, k = 2^{}: lowest MSE within 64 bits {} ({:.3e}, ASR {:.2e}, {} bits)",
                    value(e),
                    log2(k),
                    t.text(small, "protocol"),
                    t.num(small, "mse"),
                    t.num(small, "asr"),
                    value(t.num(small, "bits")),
                ));
            }
            if let (Some(accurate), Some(safe)) = (best("mse"), best("asr")) {
                out.push(format!(
                    "eps = {}, k = 2^{}: lowest MSE {} ({:.3e}, ASR {:.2e}, {} bits); lowest ASR {} ({:.3e}, MSE {:.3e}, {} bits)",
                    value(e),
                    log2(k),
                    t.text(accurate, "protocol"),
                    t.num(accurate, "mse"),
                    t.num(accurate, "asr"),
                    value(t.num(accurate, "bits")),
                    t.text(safe, "protocol"),
                    t.num(safe, "asr"),
                    t.num(safe, "mse"),
                    value(t.num(safe, "bits")),
                ));
            }
        }
    }
    let z = t
        .rows
        .iter()
        .map(|r| t.num(r, "z_max"))
        .filter(|z| z.is_finite())
        .fold(0.0, f64::max);
    out.push(format!(
        "largest |measured - closed form| / SE over the measured points: {z:.2}"
    ));
    out
}
