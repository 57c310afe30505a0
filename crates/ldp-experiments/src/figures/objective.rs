//! The tuning objective against the parameter, with the adaptive and classic choices
//! marked (appendix "parameter_results").

use ldp_core::Protocol;
use ldp_optimize::{TuneOptions, candidates, tune};

use super::{Output, budget, classic_param, domain, param_name, value};
use crate::config::Experiment;
use crate::error::ExperimentError;
use crate::plot::{Axis, Dash, Figure, Look, OKABE_ITO, Panel, Point, RED, Series, VLine};
use crate::table::Table;

pub(super) fn run(
    exp: &Experiment,
    options: &TuneOptions,
    protocols: &[Protocol],
    k: u32,
    eps: f64,
) -> Result<Output, ExperimentError> {
    let (kk, ee) = (domain(k)?, budget(eps)?);
    let mut table = Table::new(&[
        "protocol",
        "k",
        "eps",
        "param",
        "objective",
        "asr",
        "mse",
        "adaptive_param",
        "classic",
        "classic_param",
    ]);
    let mut findings = Vec::new();
    let mut panels = Vec::new();
    for &p in protocols {
        let chosen = tune(p, kk, ee, options)?.param();
        let classic = p.classic_counterpart();
        let classic_param = classic_param(p, kk, ee)?.unwrap_or(f64::NAN);
        findings.push(format!(
            "{}: {} = {} (tuned) vs {} = {} ({})",
            p.label(),
            param_name(p),
            value(chosen),
            param_name(p),
            value(classic_param),
            classic.label()
        ));
        let mut points = Vec::new();
        for c in candidates(p, kk, ee, options)? {
            let j = options.weights.weighted_sum(&c.objectives);
            // AUE's grid ends at p = 0.999999, where the objective reaches 1e4: the figure
            // leaves that last point out and ends at p = 0.995, as the paper's does
            // (data.csv holds the whole grid).
            if p != Protocol::Aue || c.param() < 0.999 {
                points.push(Point::at(c.param(), j));
            }
            table.push(vec![
                p.label().into(),
                k.into(),
                eps.into(),
                c.param().into(),
                j.into(),
                c.objectives.asr.into(),
                c.objectives.mse.into(),
                chosen.into(),
                classic.label().into(),
                classic_param.into(),
            ]);
        }
        let name = param_name(p);
        panels.push(Panel {
            title: format!("objective vs {name}: {}", p.label()),
            x: Axis::linear(name),
            y: Axis::linear("objective"),
            series: vec![Series {
                label: format!("{} w_ASR·ASR + w_MSE·MSE", "objective"),
                look: Look::line(OKABE_ITO[5]),
                points,
            }],
            vlines: vec![
                VLine {
                    x: chosen,
                    label: format!("{}: {name} = {}", p.label(), value(chosen)),
                    look: Look::line(OKABE_ITO[3]).with_dash(Dash::Dashed),
                },
                VLine {
                    x: classic_param,
                    label: format!("{}: {name} = {}", classic.label(), value(classic_param)),
                    // Red dash-dotted, as the paper's caption says.
                    look: Look::line(RED).with_dash(Dash::DashDot),
                },
            ],
        });
    }
    let mut legend = vec![(
        "objective w_ASR·ASR + w_MSE·MSE".to_owned(),
        Look::line(OKABE_ITO[5]),
    )];
    legend.push((
        "tuned parameter (adaptive)".into(),
        Look::line(OKABE_ITO[3]).with_dash(Dash::Dashed),
    ));
    legend.push((
        "preset parameter (classic)".into(),
        Look::line(RED).with_dash(Dash::DashDot),
    ));
    // The values are in each panel's title line below the legend keys.
    for panel in &mut panels {
        let tuned = &panel.vlines[0].label;
        let classic = &panel.vlines[1].label;
        panel.title = format!("{tuned} (vs {classic})");
    }
    Ok(Output {
        table,
        figure: Figure {
            width: exp.width,
            columns: 2,
            panel_height: 120.0,
            panels,
            legend,
            color_bar: None,
            share_y: false,
            notes: Vec::new(),
        },
        findings,
    })
}
