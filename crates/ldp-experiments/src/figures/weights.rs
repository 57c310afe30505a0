//! The tuned parameter against the ASR weight (appendix "weights_results").

use ldp_core::Protocol;
use ldp_optimize::{TuneOptions, Weights, tune};

use super::{Output, budget, classic_param, domain, param_name, value};
use crate::config::{EpsRange, Experiment};
use crate::error::ExperimentError;
use crate::plot::{Axis, Dash, Figure, Look, Marker, OKABE_ITO, Panel, Point, RED, Series, VLine};
use crate::table::Table;

pub(super) fn run(
    exp: &Experiment,
    options: &TuneOptions,
    protocols: &[Protocol],
    k: u32,
    eps: f64,
    w_asr: &EpsRange,
) -> Result<Output, ExperimentError> {
    let (kk, ee) = (domain(k)?, budget(eps)?);
    let mut table = Table::new(&[
        "protocol",
        "k",
        "eps",
        "w_asr",
        "w_mse",
        "param",
        "asr",
        "mse",
        "classic",
        "classic_param",
    ]);
    for &p in protocols {
        let classic = p.classic_counterpart();
        let classic_param = classic_param(p, kk, ee)?;
        for w in w_asr.values() {
            let o = TuneOptions {
                weights: Weights::new(w, 1.0 - w)?,
                ..*options
            };
            let t = tune(p, kk, ee, &o)?;
            table.push(vec![
                p.label().into(),
                k.into(),
                eps.into(),
                w.into(),
                (1.0 - w).into(),
                t.param().into(),
                t.objectives.asr.into(),
                t.objectives.mse.into(),
                classic.label().into(),
                classic_param.into(),
            ]);
        }
    }
    // Row 1: the tuned parameter against w_ASR beside the classic preset; row 2: the ASR
    // and MSE at each tuned point (the paper prints them as annotations).
    let mut panels = Vec::new();
    let params: Vec<Panel> = protocols
        .iter()
        .map(|&p| {
            let rows: Vec<_> = table.rows_where("protocol", p.label()).collect();
            let classic = rows
                .first()
                .map_or(f64::NAN, |r| table.num(r, "classic_param"));
            let ends = [
                rows.first().map_or(0.0, |r| table.num(r, "w_asr")),
                rows.last().map_or(1.0, |r| table.num(r, "w_asr")),
            ];
            let name = param_name(p);
            Panel {
                // The setting in the legend: at 0.72 of the text width a title
                // holding it ran into its neighbours.
                title: format!("{}: tuned {name}", p.label()),
                x: Axis::linear("w_ASR").over(0.0, 1.0),
                y: Axis::linear(&format!("tuned {name}")),
                series: vec![
                    Series {
                        label: format!(
                            "tuned parameter (adaptive; k = {k}, ε = {}, w_MSE = 1 − w_ASR)",
                            value(eps)
                        ),
                        look: Look::line(OKABE_ITO[5]).with_marker(Marker::Circle),
                        points: rows
                            .iter()
                            .map(|r| Point::at(table.num(r, "w_asr"), table.num(r, "param")))
                            .collect(),
                    },
                    Series {
                        label: "preset parameter (classic)".into(),
                        // Red dashed, as the paper's caption says.
                        look: Look::line(RED).with_dash(Dash::Dashed),
                        points: ends.iter().map(|&w| Point::at(w, classic)).collect(),
                    },
                ],
                vlines: Vec::<VLine>::new(),
            }
        })
        .collect();
    let objectives: Vec<Panel> = protocols
        .iter()
        .map(|&p| {
            let rows: Vec<_> = table.rows_where("protocol", p.label()).collect();
            let series = |column: &str, label: &str, look: Look| Series {
                label: label.into(),
                look,
                points: rows
                    .iter()
                    .map(|r| Point::at(table.num(r, "w_asr"), table.num(r, column)))
                    .collect(),
            };
            Panel {
                title: format!("{}: ASR and MSE", p.label()),
                x: Axis::linear("w_ASR").over(0.0, 1.0),
                y: Axis::log("ASR, MSE"),
                series: vec![
                    series(
                        "asr",
                        "ASR at the tuned point",
                        Look::line(OKABE_ITO[0]).with_marker(Marker::Square),
                    ),
                    series(
                        "mse",
                        "MSE at the tuned point",
                        Look::line(OKABE_ITO[1])
                            .with_dash(Dash::Dashed)
                            .with_marker(Marker::Diamond),
                    ),
                ],
                vlines: vec![],
            }
        })
        .collect();
    panels.extend(params);
    panels.extend(objectives);
    Ok(Output {
        table,
        figure: Figure {
            width: exp.width,
            columns: protocols.len().max(1),
            panel_height: 105.0,
            legend: Figure::legend_from_series(&panels),
            panels,
            color_bar: None,
            share_y: false,
            notes: Vec::new(),
        },
        findings: Vec::new(),
    })
}
