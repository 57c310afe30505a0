//! Closed-form figures: ASR and MSE against eps, ASR against MSE, and ASR-MSE-EPG.

use ldp_analytic::{Poisoning, asr, epg, variance};
use ldp_core::Protocol;
use ldp_optimize::{TuneOptions, protocol_spec};
use rayon::prelude::*;

use super::{Output, budget, domain, family_label};
use crate::config::{Experiment, Kind, Panels, eps_values};
use crate::error::ExperimentError;
use crate::plot::{Figure, Panel, Series, Style};
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
                family_label(p.family()).into(),
                (*k).into(),
                regime.clone().into(),
                (*e).into(),
                spec.family().value().into(),
                asr::expected(&spec, options.lh_asr).into(),
                variance::approx_per_user(&spec).into(),
                epg::expected(&spec, &poisoning)?.finite().into(),
            ])
        })
        .collect();
    let mut table = Table::new(&COLUMNS);
    rows?.into_iter().for_each(|r| table.push(r));
    let figure = match &exp.kind {
        Kind::AsrVsEps { .. } => per_protocol(
            exp,
            &table,
            protocols,
            &ks,
            "eps",
            "ASR",
            true,
            false,
            |t, r| (t.num(r, "eps"), t.num(r, "asr")),
        ),
        Kind::MseVsEps { .. } => per_protocol(
            exp,
            &table,
            protocols,
            &ks,
            "eps",
            "MSE (variance per user)",
            true,
            true,
            |t, r| (t.num(r, "eps"), t.num(r, "mse")),
        ),
        Kind::AsrVsMse {
            panels: Panels::PerProtocol,
            ..
        } => per_protocol(
            exp,
            &table,
            protocols,
            &ks,
            "MSE (variance per user)",
            "ASR",
            true,
            false,
            |t, r| (t.num(r, "mse"), t.num(r, "asr")),
        ),
        Kind::AsrVsMse {
            panels: Panels::PerFamily,
            ..
        } => per_family(exp, &table, protocols),
        Kind::AsrMseEpg { .. } => projections(exp, &table, protocols),
        _ => unreachable!(),
    };
    Ok(Output {
        table,
        figure,
        findings: Vec::new(),
    })
}

/// One panel per protocol, one line per domain size.
#[allow(clippy::too_many_arguments)]
fn per_protocol(
    exp: &Experiment,
    t: &Table,
    protocols: &[Protocol],
    ks: &[u32],
    x_label: &str,
    y_label: &str,
    x_log: bool,
    y_log: bool,
    xy: impl Fn(&Table, &[Cell]) -> (f64, f64),
) -> Figure {
    let panels = protocols
        .iter()
        .map(|p| Panel {
            title: p.label().into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_log,
            y_log,
            series: ks
                .iter()
                .enumerate()
                .map(|(i, &k)| Series {
                    label: format!("k={k}"),
                    color: i,
                    points: t
                        .rows
                        .iter()
                        .filter(|r| {
                            t.text(r, "protocol") == p.label() && t.num(r, "k") == f64::from(k)
                        })
                        .map(|r| xy(t, r))
                        .collect(),
                    style: if x_label == "eps" {
                        Style::Line
                    } else {
                        Style::LineMarkers
                    },
                    errors: vec![],
                })
                .collect(),
            vlines: vec![],
        })
        .collect();
    Figure {
        title: exp.title.clone(),
        columns: 4,
        panels,
    }
}

/// An axis of the ASR-MSE-EPG views: table column, label, log scale.
type Axis = (&'static str, &'static str, bool);

const MSE_AXIS: Axis = ("mse", "MSE (variance per user)", true);
const ASR_AXIS: Axis = ("asr", "ASR", false);
const EPG_AXIS: Axis = ("epg", "EPG", false);

/// One panel per family, one line per protocol: ASR against MSE.
fn per_family(exp: &Experiment, t: &Table, protocols: &[Protocol]) -> Figure {
    family_views(exp, t, protocols, &[(MSE_AXIS, ASR_AXIS)])
}

/// Three projections (ASR-MSE, EPG-MSE, ASR-EPG) per family, one line per protocol.
fn projections(exp: &Experiment, t: &Table, protocols: &[Protocol]) -> Figure {
    family_views(
        exp,
        t,
        protocols,
        &[
            (MSE_AXIS, ASR_AXIS),
            (MSE_AXIS, EPG_AXIS),
            (EPG_AXIS, ASR_AXIS),
        ],
    )
}

/// A row of panels per family, one panel per (x, y) view, one line per protocol.
fn family_views(
    exp: &Experiment,
    t: &Table,
    protocols: &[Protocol],
    views: &[(Axis, Axis)],
) -> Figure {
    let mut families: Vec<&str> = protocols.iter().map(|p| family_label(p.family())).collect();
    families.dedup();
    let mut panels = Vec::new();
    for f in &families {
        for &((x, x_label, x_log), (y, y_label, y_log)) in views {
            panels.push(Panel {
                title: if views.len() == 1 {
                    (*f).into()
                } else {
                    format!("{f}: {y_label} vs {x_label}")
                },
                x_label: x_label.into(),
                y_label: y_label.into(),
                x_log,
                y_log,
                series: protocols
                    .iter()
                    .filter(|p| family_label(p.family()) == *f)
                    .enumerate()
                    .map(|(i, p)| Series {
                        label: p.label().into(),
                        color: i,
                        points: t
                            .rows_where("protocol", p.label())
                            .map(|r| (t.num(r, x), t.num(r, y)))
                            .collect(),
                        style: Style::LineMarkers,
                        errors: vec![],
                    })
                    .collect(),
                vlines: vec![],
            });
        }
    }
    let columns = if views.len() == 1 { 2 } else { views.len() };
    Figure {
        title: exp.title.clone(),
        columns,
        panels,
    }
}
