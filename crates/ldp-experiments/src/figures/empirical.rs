//! Measured ASR and MSE on real data beside their closed forms
//! (Section "empirical_results", figure "fig_asr_mse_analytical_vs_empirical").

use ldp_analytic::compare::Row;
use ldp_analytic::{LhAsr, asr};
use ldp_attack::{MeasureConfig, Population, ReconstructionAttack, measure};
use ldp_core::{Family, Protocol};
use ldp_optimize::{TuneOptions, protocol_spec};

use super::{Output, budget, measured_point, under_counterparts};
use crate::config::{Dataset, EpsRange, Experiment, eps_values};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, ColorBar, Dash, Figure, GREY, Look, Marker, OKABE_ITO, Panel, Point, RED, Series,
    coincidence_note,
};
use crate::table::Table;

pub(super) fn run(
    exp: &Experiment,
    options: &TuneOptions,
    protocols: &[Protocol],
    dataset: Dataset,
    eps: &[EpsRange],
    runs: u64,
    seed: u64,
) -> Result<Output, ExperimentError> {
    let pop = match dataset {
        Dataset::AdultAge => Population::adult_age(),
    };
    let truth = pop.frequencies();
    let n = pop.len() as f64;
    let mut table = Table::new(&[
        "protocol",
        "eps",
        "param",
        "runs",
        "users",
        "asr",
        "asr_se",
        "asr_expected",
        "asr_paper",
        "asr_z",
        "mse",
        "mse_se",
        "mse_expected",
        "mse_z",
    ]);
    let mut worst: (f64, String) = (0.0, String::new());
    for &p in protocols {
        for (i, (_, e)) in eps_values(eps).into_iter().enumerate() {
            let spec = protocol_spec(p, pop.k(), budget(e)?, options)?;
            // Distinct seeds per (protocol, eps) point keep the points independent.
            let point_seed = seed ^ (u64::from(p.id()) << 40) ^ (i as u64);
            let config = MeasureConfig {
                runs,
                seed: point_seed,
                attack: ReconstructionAttack::Paper,
                poisoning: None,
            };
            let m = measure(&spec, &pop, &config)?;
            // The LH family is checked against the exact form (with collisions), the
            // paper's approximation drawn beside it.
            let asr = Row::asr(&spec, m.asr);
            let mse = Row::mse(&spec, &truth, pop.len(), m.mse);
            let paper = asr::expected(&spec, LhAsr::Paper);
            let asr_z = asr.z();
            if let Some(z) = asr_z.filter(|z| z.abs() > worst.0) {
                worst = (z.abs(), format!("{} at eps = {e}", p.label()));
            }
            table.push(vec![
                p.label().into(),
                e.into(),
                spec.params().value().into(),
                (runs as f64).into(),
                n.into(),
                asr.measured.mean.into(),
                asr.measured.se.into(),
                asr.expected().into(),
                paper.into(),
                asr_z.into(),
                mse.measured.mean.into(),
                mse.measured.se.into(),
                mse.expected().into(),
                mse.z().into(),
            ]);
        }
    }
    // Red dashed, as the paper's caption says.
    let analytical = Look::line(RED).with_dash(Dash::Dashed);
    let approximation = Look::line(OKABE_ITO[5]).with_dash(Dash::DashDot);
    let empirical = Look {
        color: GREY,
        dash: Dash::None,
        marker: Some(Marker::Circle),
        filled: true,
    };
    let (panels, columns) = under_counterparts(protocols, |p| {
        let rows: Vec<_> = table.rows_where("protocol", p.label()).collect();
        let lh = p.family() == Family::LocalHashing;
        let line = |column: &str, label: &str, look: Look| Series {
            label: label.into(),
            look,
            points: rows
                .iter()
                .map(|r| Point::at(table.num(r, "mse_expected"), table.num(r, column)))
                .collect(),
        };
        // One label per style, so the shared legend has one key per look.
        let mut series = vec![line(
            "asr_expected",
            "analytical (LH: exact, with hash collisions)",
            analytical,
        )];
        if lh {
            series.push(line(
                "asr_paper",
                "LH: the paper's approximation",
                approximation,
            ));
        }
        series.push(Series {
            label: "empirical, mean ± 3 SE".into(),
            look: empirical,
            points: rows.iter().map(|r| measured_point(&table, r)).collect(),
        });
        Panel {
            title: p.label().into(),
            x: Axis::log(&format!("MSE (n = {})", pop.len())),
            y: Axis::linear("ASR"),
            series,
            vlines: vec![],
        }
    });
    let (lo, hi) = eps_values(eps)
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (_, e)| {
            (a.min(*e), b.max(*e))
        });
    let within = table
        .rows
        .iter()
        .filter(|r| table.num(r, "asr_z").abs() <= 3.0)
        .count();
    let findings = vec![
        format!(
            "{within} of {} points have |ASR z| <= 3 against the closed form (LH: exact form)",
            table.rows.len()
        ),
        format!("largest |ASR z| = {:.2} ({})", worst.0, worst.1),
    ];
    let notes = coincidence_note(&panels, "Lines on one another where the two forms agree:")
        .into_iter()
        .collect();
    Ok(Output {
        table,
        figure: Figure {
            width: exp.width,
            columns,
            panel_height: 100.0,
            legend: Figure::legend_from_series(&panels),
            panels,
            color_bar: Some(ColorBar {
                label: "privacy budget ε".into(),
                min: lo,
                max: hi,
            }),
            share_y: false,
            notes,
        },
        findings,
    })
}
