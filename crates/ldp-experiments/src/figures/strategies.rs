//! The parameter each selection strategy picks, against eps (appendix "optimization_methods").

use ldp_core::Protocol;
use ldp_optimize::{TuneOptions, tune};
use rayon::prelude::*;

use super::{Output, budget, domain, param_name};
use crate::config::{EpsRange, Experiment, eps_values, strategy};
use crate::error::ExperimentError;
use crate::plot::{Figure, Panel, Series, Style};
use crate::table::{Cell, Table};

pub(super) fn run(
    exp: &Experiment,
    options: &TuneOptions,
    protocols: &[Protocol],
    ks: &[u32],
    eps: &[EpsRange],
    strategies: &[String],
) -> Result<Output, ExperimentError> {
    let mut grid = Vec::new();
    for &k in ks {
        for &p in protocols {
            for s in strategies {
                for (_, e) in eps_values(eps) {
                    grid.push((k, p, s.clone(), e));
                }
            }
        }
    }
    let rows: Result<Vec<Vec<Cell>>, ExperimentError> = grid
        .par_iter()
        .map(|(k, p, s, e)| {
            let o = TuneOptions {
                strategy: strategy(s)?,
                ..*options
            };
            let t = tune(*p, domain(*k)?, budget(*e)?, &o)?;
            Ok(vec![
                p.label().into(),
                (*k).into(),
                (*e).into(),
                s.clone().into(),
                t.param().into(),
                t.objectives.asr.into(),
                t.objectives.mse.into(),
                if t.fell_back { "yes" } else { "no" }.into(),
            ])
        })
        .collect();
    let mut table = Table::new(&[
        "protocol",
        "k",
        "eps",
        "strategy",
        "param",
        "asr",
        "mse",
        "fell_back",
    ]);
    rows?.into_iter().for_each(|r| table.push(r));
    let mut panels = Vec::new();
    for &k in ks {
        for &p in protocols {
            panels.push(Panel {
                title: format!("{} (k = {k})", p.label()),
                x_label: "eps".into(),
                y_label: param_name(p).into(),
                x_log: false,
                y_log: p == Protocol::Alh || p == Protocol::Ass,
                series: strategies
                    .iter()
                    .enumerate()
                    .map(|(i, s)| Series {
                        label: s.clone(),
                        color: i,
                        points: table
                            .rows
                            .iter()
                            .filter(|r| {
                                table.text(r, "protocol") == p.label()
                                    && table.num(r, "k") == f64::from(k)
                                    && table.text(r, "strategy") == s
                            })
                            .map(|r| (table.num(r, "eps"), table.num(r, "param")))
                            .collect(),
                        style: Style::LineMarkers,
                        errors: vec![],
                    })
                    .collect(),
                vlines: vec![],
            });
        }
    }
    let fallbacks = table
        .rows
        .iter()
        .filter(|r| table.text(r, "fell_back") == "yes")
        .count();
    let findings = vec![format!(
        "eps-constraint fell back to the utopia point in {fallbacks} of {} cases",
        table.rows.len()
    )];
    Ok(Output {
        table,
        figure: Figure {
            title: exp.title.clone(),
            columns: protocols.len(),
            panels,
        },
        findings,
    })
}
