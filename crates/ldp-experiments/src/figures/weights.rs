//! The tuned parameter against the ASR weight (appendix "weights_results").

use ldp_core::Protocol;
use ldp_optimize::{TuneOptions, Weights, tune};

use super::{Output, budget, classic_of, classic_param, domain, param_name};
use crate::config::{EpsRange, Experiment};
use crate::error::ExperimentError;
use crate::plot::{Figure, Panel, Series, Style, VLine};
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
        let classic = classic_of(p);
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
    let panels = protocols
        .iter()
        .map(|&p| {
            let rows: Vec<_> = table.rows_where("protocol", p.label()).collect();
            // The classic parameter as a horizontal reference line across the weights.
            let classic = rows
                .first()
                .map_or(f64::NAN, |r| table.num(r, "classic_param"));
            let ends = [
                rows.first().map_or(0.0, |r| table.num(r, "w_asr")),
                rows.last().map_or(1.0, |r| table.num(r, "w_asr")),
            ];
            Panel {
                title: format!(
                    "{} vs {} (k = {k}, eps = {eps})",
                    p.label(),
                    classic_of(p).label()
                ),
                x_label: "w_ASR (w_MSE = 1 - w_ASR)".into(),
                y_label: param_name(p).into(),
                x_log: false,
                y_log: false,
                series: vec![
                    Series {
                        label: format!("{} (tuned)", p.label()),
                        color: 0,
                        points: rows
                            .iter()
                            .map(|r| (table.num(r, "w_asr"), table.num(r, "param")))
                            .collect(),
                        style: Style::LineMarkers,
                        errors: vec![],
                    },
                    Series {
                        label: format!("{} (fixed)", classic_of(p).label()),
                        color: 3,
                        points: ends.iter().map(|&w| (w, classic)).collect(),
                        style: Style::Dashed,
                        errors: vec![],
                    },
                ],
                vlines: Vec::<VLine>::new(),
            }
        })
        .collect();
    Ok(Output {
        table,
        figure: Figure {
            title: exp.title.clone(),
            columns: 2,
            panels,
        },
        findings: Vec::new(),
    })
}
