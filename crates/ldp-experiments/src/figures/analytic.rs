//! Closed-form figures: ASR and MSE against eps, ASR against MSE, and ASR-MSE-EPG.

use ldp_analytic::{Poisoning, asr, epg, variance};
use ldp_core::Protocol;
use ldp_optimize::{TuneOptions, protocol_spec};
use rayon::prelude::*;

use super::{
    Output, budget, by_family, domain, family_groups, family_label, group_title, under_counterparts,
};
use crate::config::{Experiment, Kind, Panels, eps_values};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, ColorBar, Dash, Figure, GREY, Look, MARKERS, Panel, Point, Scale, Series, Width,
    coincidence_note, ordered_look, protocol_look, protocol_marker,
};
use crate::table::{Cell, Table};

const COLUMNS: [&str; 9] = [
    "protocol", "family", "k", "regime", "eps", "param", "asr", "mse", "epg",
];

pub(super) fn run(exp: &Experiment, options: &TuneOptions) -> Result<Output, ExperimentError> {
    let (protocols, ks, eps, poisoning) = match &exp.kind {
        Kind::AsrVsEps {
            protocols,
            domain_sizes,
            eps,
        }
        | Kind::MseVsEps {
            protocols,
            domain_sizes,
            eps,
            ..
        }
        | Kind::AsrVsMse {
            protocols,
            domain_sizes,
            eps,
            ..
        } => (protocols, domain_sizes.clone(), eps, Poisoning::default()),
        Kind::AsrMseEpg {
            protocols,
            domain_size,
            eps,
            poisoning,
        } => (
            protocols,
            vec![*domain_size],
            eps,
            Poisoning::new(poisoning.beta, poisoning.targets, poisoning.target_mass)?,
        ),
        _ => unreachable!("dispatched by kind"),
    };
    let grid: Vec<(Protocol, u32, String, f64)> = protocols
        .iter()
        .flat_map(|&p| {
            ks.iter()
                .flat_map(move |&k| eps_values(eps).into_iter().map(move |(r, e)| (p, k, r, e)))
        })
        .collect();
    let rows: Result<Vec<Vec<Cell>>, ExperimentError> = grid
        .par_iter()
        .map(|(p, k, regime, e)| {
            let spec = protocol_spec(*p, domain(*k)?, budget(*e)?, options)?;
            Ok(vec![
                p.label().into(),
                family_label(*p).into(),
                (*k).into(),
                regime.clone().into(),
                (*e).into(),
                spec.params().value().into(),
                asr::expected(&spec, options.lh_asr).into(),
                variance::approx_per_user(&spec).into(),
                epg::expected(&spec, &poisoning)?.finite().into(),
            ])
        })
        .collect();
    let mut table = Table::new(&COLUMNS);
    rows?.into_iter().for_each(|r| table.push(r));
    let figure = match &exp.kind {
        Kind::AsrVsEps { .. } => asr_vs_eps(exp, &table, protocols, &ks),
        Kind::MseVsEps {
            panels: Panels::PerProtocol,
            ..
        } => mse_per_protocol(exp, &table, protocols, &ks),
        Kind::MseVsEps {
            panels: Panels::PerFamily,
            ..
        } => mse_per_family(exp, &table, protocols, &ks),
        Kind::AsrVsMse {
            panels: Panels::PerProtocol,
            ..
        } => tradeoff_per_protocol(exp, &table, protocols, &ks),
        Kind::AsrVsMse {
            panels: Panels::PerFamily,
            ..
        } => scatter_by_family(exp, &table, protocols, &[(MSE_AXIS, ASR_AXIS)]),
        Kind::AsrMseEpg { .. } => scatter_by_family(
            exp,
            &table,
            protocols,
            &[
                (MSE_AXIS, ASR_AXIS),
                (MSE_AXIS, EPG_AXIS),
                (EPG_AXIS, ASR_AXIS),
            ],
        ),
        _ => unreachable!(),
    };
    Ok(Output {
        table,
        figure,
        findings: Vec::new(),
    })
}

/// The rows of protocol `p` at domain size `k`.
fn rows_of<'a>(t: &'a Table, p: Protocol, k: u32) -> impl Iterator<Item = &'a Vec<Cell>> + 'a {
    t.rows
        .iter()
        .filter(move |r| t.text(r, "protocol") == p.label() && t.num(r, "k") == f64::from(k))
}

/// The colour bar of the privacy budget over the table's eps.
fn eps_bar(t: &Table) -> ColorBar {
    let (lo, hi) = t
        .rows
        .iter()
        .map(|r| t.num(r, "eps"))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), e| {
            (a.min(e), b.max(e))
        });
    ColorBar {
        label: "privacy budget ε".into(),
        min: lo,
        max: hi,
    }
}

fn eps_axis(t: &Table) -> Axis {
    let bar = eps_bar(t);
    Axis::linear("privacy budget ε").over(bar.min, bar.max)
}

fn k_key(k: u32) -> String {
    format!("k = {k}")
}

/// Column `y` of protocol `p` at domain size `k`, against eps.
fn against_eps(t: &Table, p: Protocol, k: u32, y: &str) -> Vec<Point> {
    rows_of(t, p, k)
        .map(|r| Point::at(t.num(r, "eps"), t.num(r, y)))
        .collect()
}

/// Column `y` of `p` against eps, one unmarked line per domain size, coloured in k's order.
fn line_per_k<'a>(
    t: &'a Table,
    p: Protocol,
    ks: &'a [u32],
    y: &'a str,
) -> impl Iterator<Item = Series> + 'a {
    ks.iter().enumerate().map(move |(i, &k)| Series {
        label: k_key(k),
        look: ordered_look(i, ks.len()).without_marker(),
        points: against_eps(t, p, k, y),
    })
}

/// ASR against eps: panels by family (classic beside adaptive), one line per domain size,
/// one linear 0-1 ASR axis for all.
fn asr_vs_eps(exp: &Experiment, t: &Table, protocols: &[Protocol], ks: &[u32]) -> Figure {
    let panels: Vec<Panel> = by_family(protocols)
        .into_iter()
        .map(|p| Panel {
            title: p.label().into(),
            x: eps_axis(t),
            y: Axis::linear("ASR").over(0.0, 1.0),
            series: line_per_k(t, p, ks, "asr").collect(),
            vlines: vec![],
        })
        .collect();
    Figure {
        width: exp.width,
        columns: 3,
        panel_height: 92.0,
        legend: Figure::legend_from_series(&panels),
        notes: equal_note(&panels),
        panels,
        color_bar: None,
        share_y: true,
    }
}

/// MSE against eps, a panel per protocol sharing one log y axis, a line per domain size.
fn mse_per_protocol(exp: &Experiment, t: &Table, protocols: &[Protocol], ks: &[u32]) -> Figure {
    let panels: Vec<Panel> = protocols
        .iter()
        .map(|&p| Panel {
            title: p.label().into(),
            x: eps_axis(t),
            y: Axis::log("MSE (variance per user)"),
            series: line_per_k(t, p, ks, "mse").collect(),
            vlines: vec![],
        })
        .collect();
    Figure {
        width: exp.width,
        columns: protocols.len().max(1),
        panel_height: 150.0,
        legend: Figure::legend_from_series(&panels),
        notes: equal_note(&panels),
        panels,
        color_bar: None,
        share_y: true,
    }
}

/// Whether `p`'s column `y` is the same at every domain size (to rounding).
fn independent_of_k(t: &Table, p: Protocol, ks: &[u32], y: &str) -> bool {
    let first: Vec<f64> = rows_of(t, p, ks[0]).map(|r| t.num(r, y)).collect();
    ks[1..].iter().all(|&k| {
        rows_of(t, p, k)
            .map(|r| t.num(r, y))
            .zip(&first)
            .all(|(a, b)| (a - b).abs() <= 1e-9 * b.abs().max(1e-300))
    })
}

/// MSE against eps, a panel per family with its classic and adaptive protocols overlaid:
/// one line for a protocol whose MSE does not depend on k, one per k (dashed, coloured by
/// k) for the others.
fn mse_per_family(exp: &Experiment, t: &Table, protocols: &[Protocol], ks: &[u32]) -> Figure {
    let mut panels = Vec::new();
    let mut legend: Vec<(String, Look)> = Vec::new();
    let mut k_dependent = false;
    // The protocols drawn one line per k: one legend key for all of them.
    let mut per_k: Vec<&str> = Vec::new();
    for group in family_groups(protocols) {
        let mut series = Vec::new();
        for &p in &group {
            if independent_of_k(t, p, ks, "mse") {
                let look = protocol_look(p);
                legend.push((p.label().into(), look));
                series.push(Series {
                    label: p.label().into(),
                    look,
                    points: against_eps(t, p, ks[0], "mse"),
                });
            } else {
                k_dependent = true;
                per_k.push(p.label());
                // Keyed once by k below the protocols, not per protocol; labelled for
                // the note on lines that meet.
                series.extend(line_per_k(t, p, ks, "mse").map(|line| Series {
                    label: format!("{} ({})", p.label(), line.label),
                    look: line.look.with_dash(Dash::Dashed),
                    ..line
                }));
            }
        }
        panels.push(Panel {
            title: group_title(group[0]).into(),
            x: eps_axis(t),
            y: Axis::log("MSE (variance per user)"),
            series,
            vlines: vec![],
        });
    }
    let mut notes = Vec::new();
    if k_dependent {
        notes.push(
            "Where a protocol's lines for each k meet, its MSE does not depend on k there (an adaptive protocol tuned to its classic counterpart's parameter)."
                .to_owned(),
        );
    }
    notes.extend(equal_note(&panels));
    if k_dependent {
        let names = match per_k.as_slice() {
            [rest @ .., last] if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => per_k.join(""),
        };
        legend.push((
            format!("{names} (one line per k)"),
            Look::line(GREY).with_dash(Dash::Dashed),
        ));
        for (i, &k) in ks.iter().enumerate() {
            legend.push((
                k_key(k),
                ordered_look(i, ks.len())
                    .without_marker()
                    .with_dash(Dash::Dashed),
            ));
        }
    }
    Figure {
        width: exp.width,
        columns: panels.len().max(1),
        panel_height: 150.0,
        legend,
        panels,
        color_bar: None,
        share_y: false,
        notes,
    }
}

/// ASR against MSE, a panel per protocol: a point per (k, eps), marker by k, colour by eps.
fn tradeoff_per_protocol(
    exp: &Experiment,
    t: &Table,
    protocols: &[Protocol],
    ks: &[u32],
) -> Figure {
    let marker_look = |i: usize| Look {
        color: GREY,
        dash: Dash::None,
        marker: Some(MARKERS[i % MARKERS.len()]),
        filled: true,
    };
    let (panels, columns) = under_counterparts(protocols, |p| Panel {
        title: p.label().into(),
        x: Axis::log("MSE (variance per user)"),
        y: Axis::linear("ASR"),
        series: ks
            .iter()
            .enumerate()
            .map(|(i, &k)| Series {
                label: k_key(k),
                look: marker_look(i),
                points: rows_of(t, p, k)
                    .map(|r| Point {
                        shade: Some(t.num(r, "eps")),
                        ..Point::at(t.num(r, "mse"), t.num(r, "asr"))
                    })
                    .collect(),
            })
            .collect(),
        vlines: vec![],
    });
    Figure {
        width: exp.width,
        columns,
        panel_height: 95.0,
        legend: Figure::legend_from_series(&panels),
        notes: equal_note(&panels),
        panels,
        color_bar: Some(eps_bar(t)),
        share_y: false,
    }
}

/// The note naming the series drawn on one another: two protocols or domain sizes at one
/// point (SS with omega = 1 is GRR; an adaptive protocol tuned to its classic counterpart's
/// parameter is that protocol), or lines that meet.
fn equal_note(panels: &[Panel]) -> Vec<String> {
    coincidence_note(panels, "Drawn on one another where equal:")
        .into_iter()
        .collect()
}

/// An axis of the ASR-MSE-EPG views: table column, label, scale.
type View = (&'static str, &'static str, Scale);

const MSE_AXIS: View = ("mse", "MSE (variance per user)", Scale::Log);
const ASR_AXIS: View = ("asr", "ASR", Scale::Linear);
const EPG_AXIS: View = ("epg", "EPG", Scale::Linear);

/// Scatter views per family: a point per (protocol, eps), marker by protocol, colour by
/// eps. With several views, a row of panels per family; in a figure one column wide, a
/// column per family instead (three views side by side would not fit their labels).
fn scatter_by_family(
    exp: &Experiment,
    t: &Table,
    protocols: &[Protocol],
    views: &[(View, View)],
) -> Figure {
    let groups = family_groups(protocols);
    let narrow = exp.width.points() <= Width::COLUMN_PT;
    let transposed = narrow && views.len() > 1;
    let mut cells: Vec<(usize, usize)> = Vec::new();
    for g in 0..groups.len() {
        for v in 0..views.len() {
            cells.push((g, v));
        }
    }
    if transposed {
        cells.sort_by_key(|&(g, v)| (v, g));
    }
    // One column wide, the long MSE label would run past its panel.
    let label = |l: &str| -> String {
        if narrow {
            l.replace(" (variance per user)", " per user")
        } else {
            l.into()
        }
    };
    let mut panels = Vec::new();
    for (g, v) in cells {
        let group = &groups[g];
        let ((x, x_label, x_scale), (y, y_label, y_scale)) = views[v];
        panels.push(Panel {
            // Several views: each family is one of the paper's subfigures, (a), (b).
            title: if views.len() == 1 {
                group_title(group[0]).into()
            } else {
                format!(
                    "({}) {}: {} vs {}",
                    char::from(b'a' + g as u8),
                    group_title(group[0]),
                    y.to_uppercase(),
                    x.to_uppercase()
                )
            },
            x: Axis {
                label: label(x_label),
                scale: x_scale,
                range: None,
                ticks: None,
            },
            y: Axis {
                label: label(y_label),
                scale: y_scale,
                range: None,
                ticks: None,
            },
            series: group
                .iter()
                .map(|&p| Series {
                    label: p.label().into(),
                    look: protocol_marker(p),
                    points: t
                        .rows_where("protocol", p.label())
                        .map(|r| Point {
                            shade: Some(t.num(r, "eps")),
                            ..Point::at(t.num(r, x), t.num(r, y))
                        })
                        .collect(),
                })
                .collect(),
            vlines: vec![],
        });
    }
    let columns = if views.len() == 1 {
        panels.len().clamp(1, 4)
    } else if transposed {
        groups.len()
    } else {
        views.len()
    };
    let mut notes = Vec::new();
    if views.len() > 1 {
        let subfigures: Vec<String> = groups
            .iter()
            .enumerate()
            .map(|(g, group)| {
                let names: Vec<&str> = group.iter().map(|p| p.label()).collect();
                format!(
                    "({}) {} ({})",
                    char::from(b'a' + g as u8),
                    group_title(group[0]),
                    names.join(", ")
                )
            })
            .collect();
        let layout = if transposed { "Columns" } else { "Rows" };
        notes.push(format!(
            "{layout}: the paper's 3-D subfigures {}, each drawn as 2-D projections.",
            subfigures.join(" and ")
        ));
    }
    notes.extend(equal_note(&panels));
    Figure {
        width: exp.width,
        columns,
        panel_height: if views.len() == 1 { 120.0 } else { 105.0 },
        legend: Figure::legend_from_series(&panels),
        panels,
        color_bar: Some(eps_bar(t)),
        share_y: false,
        notes,
    }
}
