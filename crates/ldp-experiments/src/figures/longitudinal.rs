//! Repeated collection: the ASR of the attack that links t reports of one unchanged value,
//! with and without memoization. Beyond the paper, which names "additional adversarial
//! models" as its next step.

use ldp_analytic::longitudinal;
use ldp_attack::Population;
use ldp_attack::longitudinal::{Collection, LinkedConfig, measure_linked};
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

const COLUMNS: [&str; 10] = [
    "row",
    "protocol",
    "eps",
    "eps_perm",
    "param",
    "collections",
    "asr_exact",
    "asr_measured",
    "asr_se",
    "asr_z",
];

/// One curve: a one-shot protocol or a memoized one, at one budget.
#[derive(Clone, Copy)]
enum Curve {
    OneShot(Protocol),
    Memoized(LongitudinalProtocol),
}

impl Curve {
    fn label(self) -> &'static str {
        match self {
            Curve::OneShot(p) => p.label(),
            Curve::Memoized(p) => p.label(),
        }
    }

    fn look(self) -> Look {
        match self {
            Curve::OneShot(p) => protocol_look(p),
            Curve::Memoized(p) => memoized_look(p),
        }
    }

    fn row(self) -> &'static str {
        match self {
            Curve::OneShot(_) => "no memoization",
            Curve::Memoized(_) => "memoized",
        }
    }
}

/// What one curve's rows hold, before they become table rows.
struct Computed {
    curve: Curve,
    eps: f64,
    eps_perm: Option<f64>,
    param: Option<f64>,
    /// t increasing.
    points: Vec<CurvePoint>,
    /// One-shot protocols with a closed form: the first t with ASR > 1/2 (up to the
    /// largest t drawn). Memoized ones: the limit of the ASR as t grows.
    summary: Option<Summary>,
}

/// (t, exact ASR or None, measured ASR and its SE or None).
type CurvePoint = (u32, Option<f64>, Option<(f64, f64)>);

enum Summary {
    ExceedsHalfAt(Option<u32>),
    Ceiling(f64),
}

pub(super) fn run(exp: &Experiment, options: &TuneOptions) -> Result<Output, ExperimentError> {
    let Kind::Repeated {
        protocols,
        memoized,
        eps,
        eps_perm_factor,
        collections,
        measured,
        dataset,
        users,
        seed,
    } = &exp.kind
    else {
        unreachable!("dispatched on the kind")
    };
    let pop = match dataset {
        Dataset::AdultAge => Population::adult_age(),
    };
    let mut curves: Vec<(Curve, f64)> = Vec::new();
    for &e in eps {
        curves.extend(
            by_family(protocols)
                .into_iter()
                .map(|p| (Curve::OneShot(p), e)),
        );
        curves.extend(memoized.iter().map(|&p| (Curve::Memoized(p), e)));
    }
    let computed: Result<Vec<Computed>, ExperimentError> = curves
        .par_iter()
        .enumerate()
        .map(|(i, &(curve, e))| {
            // Distinct seeds per curve keep the curves independent.
            let config = LinkedConfig {
                runs: 1,
                seed: seed ^ ((i as u64) << 32),
                users: Some(*users),
                collections: measured.clone(),
            };
            compute(
                curve,
                &pop,
                budget(e)?,
                *eps_perm_factor,
                options,
                collections,
                &config,
            )
        })
        .collect();
    let computed = computed?;

    let mut table = Table::new(&COLUMNS);
    for c in &computed {
        for &(t, exact, m) in &c.points {
            let z = match (exact, m) {
                (Some(x), Some((mean, se))) if se > 0.0 => Some((mean - x) / se),
                _ => None,
            };
            table.push(vec![
                c.curve.row().into(),
                c.curve.label().into(),
                c.eps.into(),
                c.eps_perm.into(),
                c.param.into(),
                t.into(),
                exact.into(),
                m.map(|m| m.0).into(),
                m.map(|m| m.1).into(),
                z.into(),
            ]);
        }
    }

    let mut panels = Vec::new();
    let mut notes = Vec::new();
    for memo in [false, true] {
        for &e in eps {
            let here: Vec<&Computed> = computed
                .iter()
                .filter(|c| c.eps == e && matches!(c.curve, Curve::Memoized(_)) == memo)
                .collect();
            let title = if memo {
                format!(
                    "memoized: ε₁ = {}, ε∞ = {}",
                    value(e),
                    value(e * eps_perm_factor)
                )
            } else {
                format!("no memoization: ε = {} per report", value(e))
            };
            // The top row shares the full 0-1 scale; memoized curves stay far below it, so
            // each bottom panel scales to its own data.
            let y = Axis::linear("ASR after t reports");
            let last = collections.last().copied().unwrap_or(1).max(2);
            // A memoized panel whose measurements' 3-SE bars are as wide as its curves'
            // spread shows noise: its closed forms alone, and a note.
            let noisy = memo && bars_span_curves(&here);
            if noisy {
                let (within, total) = here
                    .iter()
                    .flat_map(|c| &c.points)
                    .filter_map(|&(_, x, m)| Some((x?, m?)))
                    .fold((0, 0), |(w, n), (x, (mean, se))| {
                        (w + usize::from((mean - x).abs() <= 3.0 * se), n + 1)
                    });
                notes.push(format!(
                    "{title}: measured points left out, their 3-SE bars (± {:.3} at the median) as wide as the curves' spread; {within} of {total} lie within 3 SE of their lines (data.csv).",
                    median_bar(&here)
                ));
            }
            panels.push(Panel {
                title,
                // The last t (365: a year of daily reports) is labelled, beside the 1-2-5
                // values well below it.
                x: Axis::log("collections t")
                    .over(1.0, f64::from(last) * 1.1)
                    .ticks_at(&end_ticks(last)),
                y: if memo { y } else { y.over(0.0, 1.0) },
                series: here.iter().flat_map(|c| curve_series(c, !noisy)).collect(),
                vlines: vec![],
            });
        }
    }
    let mut legend: Vec<(String, Look)> = curves
        .iter()
        .take(protocols.len() + memoized.len())
        .map(|(c, _)| (c.label().to_owned(), c.look()))
        .collect();
    legend.push(("closed form (line)".into(), Look::line(GREY)));
    // The curves without a closed form, as the data has them.
    let mut monte_carlo: Vec<&str> = Vec::new();
    for c in &computed {
        if c.points.iter().all(|p| p.1.is_none()) && !monte_carlo.contains(&c.curve.label()) {
            monte_carlo.push(c.curve.label());
        }
    }
    if !monte_carlo.is_empty() {
        legend.push((
            format!(
                "Monte Carlo line ({}: no closed form)",
                monte_carlo.join(", ")
            ),
            Look::line(GREY).with_dash(Dash::DashDot),
        ));
    }
    legend.push((
        "measured ± 3 SE".into(),
        Look {
            color: GREY,
            dash: Dash::None,
            marker: Some(Marker::Circle),
            filled: true,
        },
    ));
    notes.extend(coincidence_note(
        &panels,
        "Drawn on one another where equal:",
    ));
    Ok(Output {
        findings: findings(&table, &computed),
        table,
        figure: Figure {
            width: exp.width,
            columns: eps.len().clamp(1, 4),
            panel_height: 150.0,
            legend,
            panels,
            color_bar: None,
            share_y: false,
            notes,
        },
    })
}

/// The median half-width of the 3-SE bars of the curves' measurements.
fn median_bar(curves: &[&Computed]) -> f64 {
    let mut bars: Vec<f64> = curves
        .iter()
        .flat_map(|c| &c.points)
        .filter_map(|p| p.2.map(|(_, se)| 3.0 * se))
        .collect();
    bars.sort_by(f64::total_cmp);
    bars.get(bars.len() / 2).copied().unwrap_or(0.0)
}

/// Whether the measurements' 3-SE bars (at the median, whole) span more than half the
/// spread of the curves' closed forms: the points then show noise, not the curves.
fn bars_span_curves(curves: &[&Computed]) -> bool {
    let (lo, hi) = curves
        .iter()
        .flat_map(|c| &c.points)
        .filter_map(|p| p.1)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    hi > lo && 2.0 * median_bar(curves) > 0.5 * (hi - lo)
}

/// The closed form (or the measurement, where there is none) as a line without markers,
/// and, if `measured`, the measurement as markers with 3-SE bars; both labelled with the
/// curve's protocol, for the note on curves that lie on one another.
fn curve_series(c: &Computed, measured: bool) -> Vec<Series> {
    let look = c.curve.look();
    let exact: Vec<Point> = c
        .points
        .iter()
        .filter_map(|&(t, x, _)| x.map(|x| Point::at(f64::from(t), x)))
        .collect();
    let points: Vec<Point> = c
        .points
        .iter()
        .filter_map(|&(t, _, m)| {
            m.map(|(mean, se)| Point {
                err: 3.0 * se,
                ..Point::at(f64::from(t), mean)
            })
        })
        .collect();
    let label = c.curve.label().to_owned();
    let line = if exact.is_empty() {
        Series {
            label: label.clone(),
            look: look.without_marker().with_dash(Dash::DashDot),
            points: points.clone(),
        }
    } else {
        Series {
            label: label.clone(),
            look: look.without_marker().with_dash(Dash::Solid),
            points: exact,
        }
    };
    let markers = Series {
        label,
        look: Look {
            dash: Dash::None,
            ..look
        },
        points,
    };
    if measured {
        vec![line, markers]
    } else {
        vec![line]
    }
}

fn compute(
    curve: Curve,
    pop: &Population,
    eps: Epsilon,
    factor: f64,
    options: &TuneOptions,
    collections: &[u32],
    config: &LinkedConfig,
) -> Result<Computed, ExperimentError> {
    type Exact = Box<dyn Fn(u32) -> Option<f64> + Sync>;
    let last = collections.last().copied().unwrap_or(1);
    let (collection, exact, eps_perm, param, summary): (Collection, Exact, _, _, _) = match curve {
        Curve::OneShot(p) => {
            let spec = protocol_spec(p, pop.k(), eps, options)?;
            let summary = longitudinal::asr_after(&spec, 1).map(|_| {
                Summary::ExceedsHalfAt(longitudinal::collections_to_exceed(&spec, 0.5, last))
            });
            (
                Collection::OneShot(spec),
                Box::new(move |t| longitudinal::asr_after(&spec, t)),
                None,
                spec.params().value(),
                summary,
            )
        }
        Curve::Memoized(p) => {
            let perm = budget(eps.get() * factor)?;
            let l = Longitudinal::new(p, pop.k(), perm, eps)?;
            let closed = l.clone();
            let ceiling = Summary::Ceiling(longitudinal::memoized_limit(&l));
            (
                Collection::Memoized(l),
                Box::new(move |t| Some(longitudinal::memoized(&closed, t))),
                Some(perm.get()),
                None,
                Some(ceiling),
            )
        }
    };
    let m = measure_linked(&collection, pop, config)?;
    let mut ts: Vec<u32> = collections
        .iter()
        .chain(&config.collections)
        .copied()
        .collect();
    ts.sort_unstable();
    ts.dedup();
    let points = ts
        .into_iter()
        .map(|t| {
            let measured = config
                .collections
                .iter()
                .position(|&c| c == t)
                .map(|i| (m.asr[i].mean, m.asr[i].se));
            (t, exact(t), measured)
        })
        .collect();
    Ok(Computed {
        curve,
        eps: eps.get(),
        eps_perm,
        param,
        points,
        summary,
    })
}

/// The agreement of measurement and closed forms, and, per budget, how many collections
/// each one-shot protocol survives before its ASR exceeds 1/2, and the ceiling each
/// memoized protocol keeps.
fn findings(table: &Table, computed: &[Computed]) -> Vec<String> {
    let zs: Vec<f64> = table
        .rows
        .iter()
        .map(|r| table.num(r, "asr_z"))
        .filter(|z| z.is_finite())
        .collect();
    let within = zs.iter().filter(|z| z.abs() <= 3.0).count();
    let worst = zs.iter().fold(0.0f64, |m, z| m.max(z.abs()));
    let mut out = vec![format!(
        "{within} of {} measured points with a closed form are within 3 SE of it (largest |z| = {worst:.2})",
        zs.len()
    )];
    for c in computed {
        let label = c.curve.label();
        let last_t = c.points.last().map_or(0, |p| p.0);
        let text = match (&c.summary, c.curve) {
            (Some(Summary::ExceedsHalfAt(Some(t))), _) => {
                format!(
                    "eps = {}: {label}: ASR > 1/2 from t = {t} (exact)",
                    value(c.eps)
                )
            }
            (Some(Summary::ExceedsHalfAt(None)), _) => {
                format!(
                    "eps = {}: {label}: ASR <= 1/2 up to t = {last_t} (exact)",
                    value(c.eps)
                )
            }
            (Some(Summary::Ceiling(limit)), _) => format!(
                "eps_1 = {}, eps_perm = {}: {label}: ASR {:.4} at t = {last_t}, ceiling {limit:.4}",
                value(c.eps),
                value(c.eps_perm.unwrap_or(f64::NAN)),
                c.points.last().and_then(|p| p.1).unwrap_or(f64::NAN),
            ),
            (None, _) => match c.points.iter().find(|p| p.2.is_some_and(|m| m.0 > 0.5)) {
                Some(p) => format!(
                    "eps = {}: {label}: measured ASR > 1/2 first at t = {} of the measured t (Monte Carlo)",
                    value(c.eps),
                    p.0
                ),
                None => format!(
                    "eps = {}: {label}: measured ASR <= 1/2 up to t = {last_t} (Monte Carlo)",
                    value(c.eps)
                ),
            },
        };
        out.push(text);
    }
    out
}

/// Ticks of a log axis from 1 to `last`: 1, 2, 5, 10, 20, ... up to half of `last`, then
/// `last` itself.
fn end_ticks(last: u32) -> Vec<f64> {
    let last = f64::from(last);
    let round = (0..10)
        .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
        .take_while(|&v| v <= last / 2.0);
    round.chain([last]).collect()
}

#[cfg(test)]
mod tests {
    use super::end_ticks;

    #[test]
    fn the_axis_labels_its_last_collection() {
        assert_eq!(
            end_ticks(365),
            [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 365.0]
        );
        assert_eq!(end_ticks(100), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        assert_eq!(end_ticks(2), [1.0, 2.0]);
    }
}
