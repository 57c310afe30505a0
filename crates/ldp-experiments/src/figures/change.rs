//! Change detection (the paper's Example 2): how often an attacker who reconstructs each
//! day's value from linked daily reports flags the days a user's value changed, for
//! fresh reports, memos refreshed every day, and permanent memos. Beyond the paper.

use ldp_analytic::change::{self, ChangeRates};
use ldp_attack::Population;
use ldp_attack::change::{ChangeConfig, ChangeMeasurement, measure_changes};
use ldp_attack::longitudinal::Collection;
use ldp_core::longitudinal::{Longitudinal, LongitudinalProtocol};
use ldp_core::{Epsilon, Protocol};
use ldp_optimize::{TuneOptions, protocol_spec};
use rayon::prelude::*;

use super::{Output, budget, by_family, value};
use crate::config::{Dataset, Experiment, Kind};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, Dash, Figure, GREY, Look, Marker, Panel, Point, Series, coincidence_note, memoized_look,
    protocol_look,
};
use crate::table::Table;

const COLUMNS: [&str; 17] = [
    "collection",
    "protocol",
    "eps",
    "eps_perm",
    "param",
    "detect",
    "detect_se",
    "detect_exact",
    "false_alarm",
    "false_alarm_se",
    "false_alarm_exact",
    "precision",
    "precision_se",
    "precision_exact",
    "change_rate_measured",
    "values_per_user",
    "budget_per_user",
];

/// One curve: how a protocol's reports are collected day after day.
#[derive(Clone, Copy)]
enum Curve {
    Fresh(Protocol),
    Memoized(LongitudinalProtocol),
    Permanent(Protocol),
}

impl Curve {
    fn label(self) -> String {
        match self {
            Curve::Fresh(p) => p.label().to_owned(),
            Curve::Memoized(p) => p.label().to_owned(),
            // Ding et al.'s name: dBitFlip under its permanent memo by class.
            Curve::Permanent(Protocol::DBitFlip) => "dBitFlipPM".to_owned(),
            Curve::Permanent(p) => format!("{}, permanent memo", p.label()),
        }
    }

    fn look(self) -> Look {
        match self {
            Curve::Fresh(p) => protocol_look(p),
            Curve::Memoized(p) => memoized_look(p),
            Curve::Permanent(p) => protocol_look(p).with_dash(Dash::Dashed),
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Curve::Fresh(_) => "fresh",
            Curve::Memoized(_) => "memoized",
            Curve::Permanent(_) => "permanent",
        }
    }
}

/// One curve at one budget.
struct Computed {
    curve: Curve,
    eps: f64,
    eps_perm: Option<f64>,
    param: Option<f64>,
    measured: ChangeMeasurement,
    exact: Option<ChangeRates>,
    /// What a user spends over the days: days x eps afresh, memos x the memo's budget.
    budget: f64,
}

pub(super) fn run(exp: &Experiment, options: &TuneOptions) -> Result<Output, ExperimentError> {
    let Kind::ChangeDetection {
        protocols,
        memoized,
        permanent,
        eps,
        eps_perm_factor,
        change_rate,
        days,
        dataset,
        users,
        runs,
        seed,
    } = &exp.kind
    else {
        unreachable!("dispatched on the kind")
    };
    let pop = match dataset {
        Dataset::AdultAge => Population::adult_age(),
    };
    let mut curves: Vec<Curve> = by_family(protocols).into_iter().map(Curve::Fresh).collect();
    curves.extend(memoized.iter().map(|&p| Curve::Memoized(p)));
    curves.extend(by_family(permanent).into_iter().map(Curve::Permanent));
    let jobs: Vec<(usize, Curve, f64)> = curves
        .iter()
        .enumerate()
        .flat_map(|(i, &c)| eps.iter().map(move |&e| (i, c, e)))
        .collect();
    let computed: Result<Vec<Computed>, ExperimentError> = jobs
        .par_iter()
        .map(|&(i, curve, e)| {
            // One seed per curve: its points share their users' value paths (common random
            // numbers along eps), and curves stay independent.
            let config = ChangeConfig {
                runs: *runs,
                seed: seed ^ ((i as u64) << 32),
                users: Some(*users),
                days: *days,
                change_rate: *change_rate,
            };
            compute(curve, &pop, budget(e)?, *eps_perm_factor, options, &config)
        })
        .collect();
    let computed = computed?;

    let mut table = Table::new(&COLUMNS);
    for c in &computed {
        let m = &c.measured;
        let exact = c.exact;
        table.push(vec![
            c.curve.kind().into(),
            c.curve.label().into(),
            c.eps.into(),
            c.eps_perm.into(),
            c.param.into(),
            m.detect.mean.into(),
            m.detect.se.into(),
            exact.map(|r| r.detect).into(),
            m.false_alarm.mean.into(),
            m.false_alarm.se.into(),
            exact.map(|r| r.false_alarm).into(),
            m.precision.map(|p| p.mean).into(),
            m.precision.map(|p| p.se).into(),
            exact.and_then(|r| r.precision(*change_rate)).into(),
            m.change_rate.mean.into(),
            m.values_per_user.into(),
            c.budget.into(),
        ]);
    }

    type Pick = fn(&Computed, f64) -> (Option<(f64, f64)>, Option<f64>);
    let quantities: [(&str, &str, Pick); 3] = [
        (
            "detected changes (recall)",
            "P[flag | value changed]",
            |c, _| {
                (
                    Some((c.measured.detect.mean, c.measured.detect.se)),
                    c.exact.map(|r| r.detect),
                )
            },
        ),
        ("false alarms", "P[flag | value unchanged]", |c, _| {
            (
                Some((c.measured.false_alarm.mean, c.measured.false_alarm.se)),
                c.exact.map(|r| r.false_alarm),
            )
        }),
        ("precision", "flags that are changes", |c, rate| {
            (
                c.measured.precision.map(|p| (p.mean, p.se)),
                c.exact.and_then(|r| r.precision(rate)),
            )
        }),
    ];
    let panels: Vec<Panel> = quantities
        .iter()
        .map(|&(title, y, pick)| Panel {
            title: title.to_owned(),
            x: Axis::linear("ε per report"),
            y: Axis::linear(y).over(0.0, 1.0),
            series: curves
                .iter()
                .flat_map(|&curve| {
                    let here: Vec<&Computed> = computed
                        .iter()
                        .filter(|c| c.curve.label() == curve.label())
                        .collect();
                    curve_series(curve, &here, |c| pick(c, *change_rate))
                })
                .collect(),
            vlines: vec![],
        })
        .collect();
    let mut legend: Vec<(String, Look)> = curves.iter().map(|c| (c.label(), c.look())).collect();
    legend.push(("closed form (line)".into(), Look::line(GREY)));
    legend.push((
        "measured ± 3 SE (dash-dot: no closed form)".into(),
        Look {
            color: GREY,
            dash: Dash::DashDot,
            marker: Some(Marker::Circle),
            filled: true,
        },
    ));
    let mut notes = vec![format!(
        "Each day a user's value changes with probability {} to another Adult Age value; {} days, {} users{}. Memoized: ε∞ = {} × ε per report; a permanent memo replays the report drawn at ε.",
        value(*change_rate),
        days,
        super::thousands(*users as u64),
        if *runs > 1 {
            format!(", {runs} runs")
        } else {
            String::new()
        },
        value(*eps_perm_factor),
    )];
    notes.extend(coincidence_note(
        &panels,
        "Drawn on one another where equal:",
    ));
    Ok(Output {
        findings: findings(&table, &computed, *days),
        table,
        figure: Figure {
            width: exp.width,
            columns: 3,
            panel_height: 150.0,
            legend,
            panels,
            color_bar: None,
            share_y: false,
            notes,
        },
    })
}

/// A curve's closed form as a line (where it has one) and its measurements as markers
/// with 3-SE bars, joined by a dash-dot line where there is no closed form.
fn curve_series(
    curve: Curve,
    here: &[&Computed],
    pick: impl Fn(&Computed) -> (Option<(f64, f64)>, Option<f64>),
) -> Vec<Series> {
    let look = curve.look();
    let label = curve.label();
    let exact: Vec<Point> = here
        .iter()
        .filter_map(|c| pick(c).1.map(|y| Point::at(c.eps, y)))
        .collect();
    let measured: Vec<Point> = here
        .iter()
        .filter_map(|c| {
            pick(c).0.map(|(mean, se)| Point {
                err: 3.0 * if se.is_finite() { se } else { 0.0 },
                ..Point::at(c.eps, mean)
            })
        })
        .collect();
    let line = if exact.is_empty() {
        Series {
            label: label.clone(),
            look: look.without_marker().with_dash(Dash::DashDot),
            points: measured.clone(),
        }
    } else {
        Series {
            label: label.clone(),
            look: look.without_marker(),
            points: exact,
        }
    };
    vec![
        line,
        Series {
            label,
            look: Look {
                dash: Dash::None,
                ..look
            },
            points: measured,
        },
    ]
}

fn compute(
    curve: Curve,
    pop: &Population,
    eps: Epsilon,
    factor: f64,
    options: &TuneOptions,
    config: &ChangeConfig,
) -> Result<Computed, ExperimentError> {
    let (collection, exact, eps_perm, param) = match curve {
        Curve::Fresh(p) => {
            let spec = protocol_spec(p, pop.k(), eps, options)?;
            (
                Collection::OneShot(spec),
                change::one_shot(&spec),
                None,
                spec.params().value(),
            )
        }
        Curve::Permanent(p) => {
            let spec = protocol_spec(p, pop.k(), eps, options)?;
            (
                Collection::Permanent(spec),
                change::permanent(&spec),
                Some(eps.get()),
                spec.params().value(),
            )
        }
        Curve::Memoized(p) => {
            let perm = budget(eps.get() * factor)?;
            let l = Longitudinal::new(p, pop.k(), perm, eps)?;
            (
                Collection::Memoized(l.clone()),
                change::memoized(&l),
                Some(perm.get()),
                None,
            )
        }
    };
    let measured = measure_changes(&collection, pop, config)?;
    let budget = measured.budget_per_user;
    Ok(Computed {
        curve,
        eps: eps.get(),
        eps_perm,
        param,
        measured,
        exact,
        budget,
    })
}

/// How measurement and closed forms agree, and per curve at the largest budget its
/// precision and recall and what a user spends.
fn findings(table: &Table, computed: &[Computed], days: u32) -> Vec<String> {
    let mut zs = Vec::new();
    for r in &table.rows {
        for q in ["detect", "false_alarm"] {
            let (m, se, x) = (
                table.num(r, q),
                table.num(r, &format!("{q}_se")),
                table.num(r, &format!("{q}_exact")),
            );
            if x.is_finite() && se > 0.0 {
                zs.push((m - x) / se);
            }
        }
    }
    let within = zs.iter().filter(|z| z.abs() <= 3.0).count();
    let worst = zs.iter().fold(0.0f64, |m, z| m.max(z.abs()));
    let mut out = vec![format!(
        "{within} of {} measured rates with a closed form are within 3 SE of it (largest |z| = {worst:.2})",
        zs.len()
    )];
    let top = computed.iter().map(|c| c.eps).fold(f64::MIN, f64::max);
    for c in computed.iter().filter(|c| c.eps == top) {
        out.push(format!(
            "eps = {}: {}: recall {:.3}, false alarms {:.3}, precision {}; a user spends {:.1} over {days} days",
            value(c.eps),
            c.curve.label(),
            c.measured.detect.mean,
            c.measured.false_alarm.mean,
            c.measured
                .precision
                .map_or("undefined (no flags)".to_owned(), |p| format!("{:.3}", p.mean)),
            c.budget,
        ));
    }
    out
}
