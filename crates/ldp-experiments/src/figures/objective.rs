//! The tuning objective against the parameter, with the adaptive and classic choices
//! marked (appendix "parameter_results").

use ldp_core::Protocol;
use ldp_optimize::{TuneOptions, candidates, tune};

use super::{Output, budget, classic_of, classic_param, domain, param_name};
use crate::config::Experiment;
use crate::error::ExperimentError;
use crate::plot::{Figure, Panel, Series, Style, VLine};
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
        let classic = classic_of(p);
        let classic_param = classic_param(p, kk, ee)?.unwrap_or(f64::NAN);
        findings.push(format!(
            "{}: {} = {chosen} (tuned) vs {} = {classic_param} ({})",
            p.label(),
            param_name(p),
            param_name(p),
            classic.label()
        ));
        let mut points = Vec::new();
        for c in candidates(p, kk, ee, options)? {
            let j = options.weights.weighted_sum(&c.objectives);
            points.push((c.param(), j));
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
        panels.push(Panel {
            title: format!("{} (k = {k}, eps = {eps})", p.label()),
            x_label: param_name(p).into(),
            y_label: "objective w_ASR ASR + w_MSE MSE".into(),
            x_log: matches!(p, Protocol::Alh | Protocol::Ass),
            y_log: true,
            series: vec![Series {
                label: "objective".into(),
                color: 0,
                points,
                style: Style::Line,
                errors: vec![],
            }],
            vlines: vec![
                VLine {
                    x: chosen,
                    label: format!("{} = {chosen:.4}", p.label()),
                    color: 2,
                },
                VLine {
                    x: classic_param,
                    label: format!("{} = {classic_param:.4}", classic.label()),
                    color: 3,
                },
            ],
        });
    }
    Ok(Output {
        table,
        figure: Figure {
            title: exp.title.clone(),
            columns: 2,
            panels,
        },
        findings,
    })
}
