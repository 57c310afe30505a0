//! Pool inference (Gadotti et al., USENIX Security 2022): how well the Bayesian attacker
//! that links a user's reports of many records finds the user's preferred pool of items,
//! against the records each user sends, for Apple's sketches at their deployed parameters
//! beside the toolkit's other protocols. Not in the paper.

use ldp_attack::pool::{NULL_RATES, PoolConfig, Pools, measure_pools};
use ldp_core::{FamilyParams, Spec};
use ldp_optimize::{TuneOptions, protocol_spec};
use rayon::prelude::*;

use super::{Output, budget, domain, thousands, value};
use crate::config::{Experiment, Kind, PoolCurve};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, Dash, Figure, GREY, Look, Panel, Point, Series, coincidence_note, protocol_look,
};
use crate::table::Table;

const COLUMNS: [&str; 13] = [
    "label",
    "protocol",
    "eps",
    "param",
    "records",
    "auc",
    "auc_se",
    "roc_auc",
    "roc_auc_se",
    "precision_nr0",
    "precision_nr50",
    "precision_nr90",
    "null_precision",
];

fn spec(
    curve: &PoolCurve,
    k: u32,
    options: &TuneOptions,
) -> Result<(Spec, String), ExperimentError> {
    let (k, eps) = (domain(k)?, budget(curve.eps)?);
    let spec = match curve.sketch {
        Some((h, m)) => {
            let params =
                FamilyParams::with_values(curve.protocol.family(), &[f64::from(h), f64::from(m)])
                    .ok_or_else(|| {
                    ExperimentError::Config(format!(
                        "pool inference: {} takes no (hashes, width)",
                        curve.protocol.label()
                    ))
                })?;
            Spec::new(k, eps, params)?
        }
        None => protocol_spec(curve.protocol, k, eps, options)?,
    };
    let label = curve.label.clone().unwrap_or_else(|| {
        let shape = curve
            .sketch
            .map_or_else(String::new, |(h, m)| format!(", h = {h}, m = {m}"));
        format!(
            "{} (ε = {}{shape})",
            curve.protocol.label(),
            value(curve.eps)
        )
    });
    Ok((spec, label))
}

pub(super) fn run(exp: &Experiment, options: &TuneOptions) -> Result<Output, ExperimentError> {
    let Kind::PoolInference {
        curves,
        domain_size,
        pools,
        pool_size,
        zipf,
        records,
        users,
        runs,
        seed,
    } = &exp.kind
    else {
        unreachable!("dispatched on the kind")
    };
    let config_error = |e: &dyn std::fmt::Display| ExperimentError::Config(e.to_string());
    let partition = Pools::consecutive(domain(*domain_size)?, *pools, *pool_size)
        .map_err(|e| config_error(&e))?;
    let results = curves
        .par_iter()
        .enumerate()
        .map(|(i, curve)| {
            let (spec, label) = spec(curve, *domain_size, options)?;
            let config = PoolConfig {
                users: *users,
                zipf: *zipf,
                // Distinct seeds per curve keep the curves independent.
                ..PoolConfig::reference(*runs, seed ^ ((i as u64) << 32), records)
            };
            let m = measure_pools(&spec, &partition, &config).map_err(|e| config_error(&e))?;
            Ok((curve, spec, label, m))
        })
        .collect::<Result<Vec<_>, ExperimentError>>()?;

    let mut table = Table::new(&COLUMNS);
    let (mut auc_series, mut roc_series) = (Vec::new(), Vec::new());
    let mut findings = Vec::new();
    for (i, (curve, spec, label, m)) in results.iter().enumerate() {
        // A protocol drawn again (CMS at two budgets) keeps its colour, solid the second time.
        let again = results[..i].iter().any(|r| r.0.protocol == curve.protocol);
        let look = if again {
            protocol_look(curve.protocol).with_dash(Dash::Solid)
        } else {
            protocol_look(curve.protocol)
        };
        let (mut auc, mut roc) = (Vec::new(), Vec::new());
        for (c, &t) in m.records.iter().enumerate() {
            let x = f64::from(t);
            auc.push(Point {
                err: 3.0 * m.auc[c].se,
                ..Point::at(x, m.auc[c].mean)
            });
            roc.push(Point {
                err: 3.0 * m.roc_auc[c].se,
                ..Point::at(x, m.roc_auc[c].mean)
            });
            let params = spec.params().values();
            table.push(vec![
                label.as_str().into(),
                curve.protocol.label().into(),
                curve.eps.into(),
                params
                    .iter()
                    .map(|v| value(*v))
                    .collect::<Vec<_>>()
                    .join(" ")
                    .into(),
                t.into(),
                m.auc[c].mean.into(),
                m.auc[c].se.into(),
                m.roc_auc[c].mean.into(),
                m.roc_auc[c].se.into(),
                m.precision[c][0].mean.into(),
                m.precision[c][1].mean.into(),
                m.precision[c][2].mean.into(),
                m.null_precision.into(),
            ]);
            findings.push(format!(
                "{label}, {t} records: AUC {:.3} ± {:.3}, ROC AUC {:.3} ± {:.3}, precision {:.3} / {:.3} / {:.3} at null rates {:?} (blind: {:.3})",
                m.auc[c].mean,
                m.auc[c].se,
                m.roc_auc[c].mean,
                m.roc_auc[c].se,
                m.precision[c][0].mean,
                m.precision[c][1].mean,
                m.precision[c][2].mean,
                NULL_RATES,
                m.null_precision,
            ));
        }
        auc_series.push(Series {
            label: label.clone(),
            look,
            points: auc,
        });
        roc_series.push(Series {
            label: label.clone(),
            look,
            points: roc,
        });
    }
    let xs: Vec<f64> = records.iter().map(|&t| f64::from(t)).collect();
    let (lo, hi) = (xs[0], xs[xs.len() - 1]);
    let blind = |label: &str, y: f64| Series {
        label: label.to_owned(),
        look: Look::line(GREY).with_dash(Dash::Dashed),
        points: vec![Point::at(lo, y), Point::at(hi, y)],
    };
    // One legend key for both: AUC 1/n on the left, ROC AUC 1/2 on the right.
    let blind_label = format!("blind guess (AUC 1/{pools}, ROC AUC 1/2)");
    auc_series.push(blind(&blind_label, 1.0 / f64::from(*pools)));
    roc_series.push(blind(&blind_label, 0.5));
    let x = || {
        Axis::log("records per user")
            .over(lo * 0.8, hi * 1.25)
            .ticks_at(&xs)
    };
    let setting = format!(
        "{pools} pools of {pool_size} in k = {}, Zipf {}",
        thousands(u64::from(*domain_size)),
        value(*zipf)
    );
    let panels = vec![
        Panel {
            title: "AUC: precision against null rate".into(),
            x: x(),
            y: Axis::linear("AUC (precision vs null rate)").over(0.0, 1.0),
            series: auc_series,
            vlines: vec![],
        },
        Panel {
            title: "ROC AUC of each pool's posterior, mean over pools".into(),
            x: x(),
            y: Axis::linear("ROC AUC").over(0.4, 1.0),
            series: roc_series,
            vlines: vec![],
        },
    ];
    let mut legend = Figure::legend_from_series(&panels);
    legend.dedup_by(|a, b| a.0 == b.0);
    let mut notes = vec![format!(
        "{setting}; {} users per run, {runs} runs, bars ± 3 SE over runs; the uniform-prior attacker (the reference's Adv_weak).",
        thousands(*users as u64)
    )];
    notes.extend(coincidence_note(
        &panels,
        "Drawn on one another where equal:",
    ));
    Ok(Output {
        table,
        figure: Figure {
            width: exp.width,
            columns: 2,
            panel_height: 170.0,
            legend,
            panels,
            color_bar: None,
            share_y: false,
            notes,
        },
        findings,
    })
}
