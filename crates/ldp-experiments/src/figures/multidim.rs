//! Several attributes per user (beyond the paper: its Example 1 and the anchors'
//! multidimensional risks): re-identification across SMP surveys, attribute inference on
//! the RS+ solutions, and RS+RFD's prior fakes against RS+FD's uniform ones.

use ldp_analytic::LhAsr;
use ldp_analytic::multidim::{Collection, Population, Sampling, Unreported};
use ldp_attack::Table as DataTable;
use ldp_attack::multidim::{
    AttributeInference, MatchIndex, Repetition, Scoring, SurveyPlan, reidentify,
};
use ldp_core::multidim::{MultidimSpec, Priors, Solution};
use ldp_core::simulation::{Estimate, Role, stream_rng};
use ldp_core::{DomainSize, Epsilon, Estimator, Protocol, Spec, dispatch_multidim};
use ldp_optimize::{TuneOptions, protocol_spec};
use rand::RngExt;
use rayon::prelude::*;

use super::{Output, budget, value};
use crate::config::{Experiment, Kind};
use crate::error::ExperimentError;
use crate::plot::{
    Axis, Dash, Figure, GREY, Look, Marker, Panel, Point, Series, coincidence_note, protocol_look,
};
use crate::table::Table;

/// The mean and standard error of `values` over runs (SE 0 for one run: no bar).
fn mean_se(values: &[f64]) -> (f64, f64) {
    let e = Estimate::from_runs(values.iter().copied());
    (e.mean, if e.se.is_nan() { 0.0 } else { e.se })
}

/// The seed of one run of one cell: the master seed mixed with everything that tells the
/// cells apart, so that no two cells (budgets, solutions, protocols) share a stream.
fn cell_seed(seed: u64, run: u64, protocol: Protocol, solution: Solution, eps: f64) -> u64 {
    let mut bytes = Vec::with_capacity(32);
    for part in [
        run,
        u64::from(protocol.id()),
        solution as u64,
        eps.to_bits(),
    ] {
        bytes.extend_from_slice(&part.to_le_bytes());
    }
    xxhash_rust::xxh64::xxh64(&bytes, seed)
}

/// Every attribute's spec of `protocol` at the solution's per-report budget (adaptive
/// protocols tuned per attribute).
fn client(
    solution: Solution,
    protocol: Protocol,
    eps: Epsilon,
    domains: &[DomainSize],
    priors: Option<Priors>,
    options: &TuneOptions,
) -> Result<MultidimSpec, ExperimentError> {
    let report_eps = solution.report_epsilon(eps, domains.len())?;
    let specs: Vec<Spec> = domains
        .iter()
        .map(|&k| protocol_spec(protocol, k, report_eps, options))
        .collect::<Result<_, _>>()?;
    let mut given = specs.into_iter();
    Ok(MultidimSpec::new(
        solution,
        eps,
        domains,
        priors,
        |_, _| Ok(given.next().expect("one spec per attribute")),
    )?)
}

/// A line with markers and 3-SE bars.
fn measured_series(label: &str, look: Look, points: Vec<Point>) -> Series {
    Series {
        label: label.to_owned(),
        look,
        points,
    }
}

fn baseline_series(label: String, xs: &[f64], y: f64) -> Series {
    Series {
        label,
        look: Look::line(GREY).with_dash(Dash::Dashed),
        points: xs.iter().map(|&x| Point::at(x, y)).collect(),
    }
}

fn marker_look() -> Look {
    Look {
        color: GREY,
        dash: Dash::None,
        marker: Some(Marker::Circle),
        filled: true,
    }
}

pub(super) fn reidentification(
    exp: &Experiment,
    options: &TuneOptions,
) -> Result<Output, ExperimentError> {
    let Kind::Reidentification {
        protocols,
        data,
        eps,
        surveys,
        repetition,
        partial,
        top,
        runs,
        seed,
    } = &exp.kind
    else {
        unreachable!("dispatched on the kind")
    };
    let table = data.table();
    let domains = table.domain_sizes().to_vec();
    let d = domains.len();
    let codes: Vec<u32> = table.rows().flatten().copied().collect();
    let repetition = if *repetition {
        Repetition::With
    } else {
        Repetition::Without
    };
    let max_top = top.iter().copied().max().unwrap_or(1);
    // Background knowledge per run: every column, or (partial) a random subset of
    // round(d/2)..=d-1 of them, drawn once per run as the anchors do.
    let knowledge: Vec<(&str, Vec<Vec<bool>>)> = {
        let mut k = vec![("full", vec![vec![true; d]; *runs as usize])];
        if *partial {
            let columns = (0..*runs)
                .map(|run| {
                    let mut rng = stream_rng(*seed, run, Role::Genuine, u64::MAX);
                    let plan = SurveyPlan::random(d, 1, Repetition::Without, &mut rng)?;
                    let mut known = vec![false; d];
                    for &j in &plan.surveys()[0] {
                        known[j] = true;
                    }
                    Ok(known)
                })
                .collect::<Result<_, ExperimentError>>()?;
            k.push(("partial", columns));
        }
        k
    };
    let mut rows = Table::new(&[
        "knowledge",
        "protocol",
        "eps",
        "surveys",
        "top",
        "rid_acc",
        "rid_se",
        "baseline",
        "profiled",
        "profiled_se",
        "profiled_exact",
    ]);
    // The closed form of a profile entirely right after the surveys (ldp-analytic), per
    // protocol and budget: each reported attribute reconstructed w.p. its exact ASR.
    let sampling = match repetition {
        Repetition::Without => Sampling::WithoutRepetition,
        Repetition::With => Sampling::WithRepetition,
    };
    let profiled_exact = |p: Protocol, e: f64| -> Result<f64, ExperimentError> {
        let collection = Collection::new(Solution::Smp, budget(e)?, &domains, |k, eps| {
            protocol_spec(p, k, eps, options)
        })
        .map_err(|e| ExperimentError::Config(e.to_string()))?;
        Ok(collection
            .profile(*surveys as u32, sampling, Unreported::Ignored, LhAsr::Exact)
            .map_err(|e| ExperimentError::Config(e.to_string()))?
            .all_correct)
    };
    let mut profile_series = Vec::new();
    let mut panels = Vec::new();
    for (name, columns) in &knowledge {
        // One index per distinct column set, shared by every protocol and budget.
        let indices: Vec<MatchIndex<'_>> = columns
            .iter()
            .map(|known| MatchIndex::new(&codes, &domains, known.clone()))
            .collect::<Result<_, _>>()
            .map_err(ldp_attack::multidim::ReidentifyError::from)?;
        let cells: Vec<(Protocol, f64)> = protocols
            .iter()
            .flat_map(|&p| eps.iter().map(move |&e| (p, e)))
            .collect();
        let results = cells
            .par_iter()
            .map(|&(p, e)| {
                let spec = client(Solution::Smp, p, budget(e)?, &domains, None, options)?;
                let per_run = (0..*runs)
                    .map(|run| {
                        let mut rng = stream_rng(*seed, run, Role::Genuine, u64::MAX - 1);
                        let plan = SurveyPlan::random(d, *surveys, repetition, &mut rng)?;
                        let index = &indices[run as usize];
                        let run_seed = cell_seed(*seed, run, p, Solution::Smp, e);
                        Ok(dispatch_multidim!(&spec, m => reidentify(&m, &plan, index, max_top, Scoring::LastSurvey, run_seed))??)
                    })
                    .collect::<Result<Vec<_>, ExperimentError>>()?;
                let exact = profiled_exact(p, e)?;
                Ok((p, e, per_run, exact))
            })
            .collect::<Result<Vec<_>, ExperimentError>>()?;
        for &k in top {
            let mut series = Vec::new();
            for &p in protocols {
                let mut points = Vec::new();
                let (mut measured, mut exact) = (Vec::new(), Vec::new());
                for (_, e, per_run, right_exact) in results.iter().filter(|r| r.0 == p) {
                    let last: Vec<f64> = per_run
                        .iter()
                        .map(|r| 100.0 * r.accuracy[0][k - 1])
                        .collect();
                    let (mean, se) = mean_se(&last);
                    let right: Vec<f64> = per_run.iter().map(|r| 100.0 * r.profiled[0]).collect();
                    let (right, right_se) = mean_se(&right);
                    let right_exact = 100.0 * right_exact;
                    measured.push(Point {
                        err: 3.0 * right_se,
                        ..Point::at(*e, right)
                    });
                    exact.push(Point::at(*e, right_exact));
                    rows.push(vec![
                        (*name).into(),
                        p.label().into(),
                        (*e).into(),
                        (*surveys as u32).into(),
                        (k as u32).into(),
                        mean.into(),
                        se.into(),
                        (100.0 * per_run[0].baseline(k)).into(),
                        right.into(),
                        right_se.into(),
                        right_exact.into(),
                    ]);
                    points.push(Point {
                        err: 3.0 * se,
                        ..Point::at(*e, mean)
                    });
                }
                series.push(measured_series(p.label(), protocol_look(p), points));
                // The profiles are the same whatever the knowledge and k: drawn once.
                if profile_series.len() < 2 * protocols.len() {
                    let look = protocol_look(p);
                    profile_series.push(Series {
                        label: p.label().to_owned(),
                        look: look.without_marker(),
                        points: exact,
                    });
                    profile_series.push(Series {
                        label: p.label().to_owned(),
                        look: look.with_dash(Dash::None),
                        points: measured,
                    });
                }
            }
            series.push(baseline_series(
                "baseline k/n".to_owned(),
                eps,
                100.0 * k as f64 / table.len() as f64,
            ));
            panels.push(Panel {
                title: format!("{name} knowledge: RID-ACC@{k}"),
                x: Axis::linear("ε"),
                y: Axis::linear(&format!("RID-ACC@{k} after {surveys} surveys (%)")),
                series,
                vlines: vec![],
            });
        }
    }
    panels.push(Panel {
        title: format!("every reported value right after {surveys} surveys"),
        x: Axis::linear("ε"),
        y: Axis::linear("profiles right (%)"),
        series: profile_series,
        vlines: vec![],
    });
    // Each (protocol, budget) once: the profile is the same for every knowledge and k.
    let zs: Vec<f64> = rows
        .rows
        .iter()
        .filter(|r| rows.text(r, "knowledge") == "full" && rows.num(r, "top") == top[0] as f64)
        .filter(|r| rows.num(r, "profiled_se") > 0.0)
        .map(|r| {
            (rows.num(r, "profiled") - rows.num(r, "profiled_exact")) / rows.num(r, "profiled_se")
        })
        .collect();
    // Each run draws its own survey plan, and the closed form averages over plans: the SE
    // is over runs, and with a few of them it is itself rough.
    let mut findings = vec![format!(
        "profiles right: {} of {} measured points within 3 SE of the closed form (largest |z| = {:.2}; SE over {runs} runs, each its own survey plan)",
        zs.iter().filter(|z| z.abs() <= 3.0).count(),
        zs.len(),
        zs.iter().fold(0.0f64, |m, z| m.max(z.abs()))
    )];
    findings.extend(
        rows.rows
            .iter()
            .filter(|r| rows.num(r, "eps") == eps.iter().copied().fold(f64::MIN, f64::max))
            .map(|r| {
                format!(
                    "{} {} at ε = {}: RID-ACC@{} = {:.2}% ± {:.2}",
                    rows.text(r, "knowledge"),
                    rows.text(r, "protocol"),
                    value(rows.num(r, "eps")),
                    rows.num(r, "top"),
                    rows.num(r, "rid_acc"),
                    rows.num(r, "rid_se")
                )
            }),
    );
    let mut legend = Figure::legend_from_series(&panels);
    legend.push(("closed form (line, last panel)".into(), Look::line(GREY)));
    legend.push(("measured ± 3 SE".into(), marker_look()));
    let notes = coincidence_note(&panels, "Drawn on one another where equal:")
        .into_iter()
        .collect();
    Ok(Output {
        table: rows,
        figure: Figure {
            width: exp.width,
            columns: top.len().clamp(2, 4),
            panel_height: 150.0,
            legend,
            panels,
            color_bar: None,
            share_y: false,
            notes,
        },
        findings,
    })
}

/// The look of an RS+ client: its protocol's colour, dashed for zero fakes.
fn client_look(p: Protocol, solution: Solution) -> Look {
    let look = protocol_look(p);
    if solution == Solution::RsFdNull {
        look.with_dash(Dash::Dashed)
    } else {
        look
    }
}

fn client_label(p: Protocol, solution: Solution) -> String {
    let suffix = match solution {
        Solution::RsFdNull => "-z",
        Solution::RsFd | Solution::RsRfd if p.family() == ldp_core::Family::UnaryEncoding => "-r",
        _ => "",
    };
    format!(
        "{}[{}{}]",
        solution.label().trim_end_matches("-z"),
        p.label(),
        suffix
    )
}

/// One run of an RS+ collection over the table: the Bayes attacker's accuracy (with the
/// server's estimate as its belief), and, if `errors`, the average over attributes of the
/// unbiased estimate's mean squared error and its closed form (`ldp_analytic::multidim`:
/// the exact variance for this fixed table, averaged over items and attributes; NaN
/// otherwise).
fn attack_run(
    spec: &MultidimSpec,
    table: &DataTable,
    seed: u64,
    errors: bool,
) -> Result<(f64, f64, f64), ExperimentError> {
    dispatch_multidim!(spec, m => {
        let mut rng = stream_rng(seed, 0, Role::Genuine, 0);
        let mut server = m.aggregator();
        let mut reports = Vec::with_capacity(table.len());
        for row in table.rows() {
            let (report, sampled) = m.perturb_tracked(row, &mut rng)?;
            server.add(&report)?;
            reports.push((report, sampled.expect("RS+ samples an attribute")));
        }
        let attacker = AttributeInference::from_estimates(&m, &server)?;
        let mut hits = 0usize;
        for (report, sampled) in &reports {
            hits += usize::from(attacker.guess(report, &mut rng)? == *sampled);
        }
        let accuracy = hits as f64 / reports.len() as f64;
        if !errors {
            return Ok((accuracy, f64::NAN, f64::NAN));
        }
        let collection = Collection::of(&m);
        let n = table.len() as f64;
        let mut expected = 0.0;
        for j in 0..table.dimensions() {
            let truth = table.frequencies(j);
            let mut sum = 0.0;
            for (v, &f) in truth.iter().enumerate() {
                sum += collection
                    .variance(j, v as u32, n, f, Population::Fixed)
                    .map_err(|e| ExperimentError::Config(e.to_string()))?;
            }
            expected += sum / truth.len() as f64;
        }
        let expected = expected / table.dimensions() as f64;
        let estimates = server.estimate(Estimator::Unbiased)?;
        let mse = estimates
            .iter()
            .enumerate()
            .map(|(j, est)| {
                let truth = table.frequencies(j);
                est.iter().zip(&truth).map(|(a, b)| (a - b).powi(2)).sum::<f64>()
                    / truth.len() as f64
            })
            .sum::<f64>()
            / estimates.len() as f64;
        Ok::<_, ExperimentError>((accuracy, mse, expected))
    })?
}

pub(super) fn attribute_inference(
    exp: &Experiment,
    options: &TuneOptions,
) -> Result<Output, ExperimentError> {
    let Kind::AttributeInference {
        clients,
        data,
        eps,
        runs,
        seed,
    } = &exp.kind
    else {
        unreachable!("dispatched on the kind")
    };
    let table = data.table();
    let domains = table.domain_sizes().to_vec();
    let d = domains.len();
    let parsed: Vec<(Protocol, Solution)> = clients
        .iter()
        .map(|(p, s)| {
            s.parse::<Solution>()
                .map(|s| (*p, s))
                .map_err(|e| ExperimentError::Config(e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    let cells: Vec<(Protocol, Solution, f64, u64)> = parsed
        .iter()
        .flat_map(|&(p, s)| {
            eps.iter()
                .flat_map(move |&e| (0..*runs).map(move |r| (p, s, e, r)))
        })
        .collect();
    let results = cells
        .par_iter()
        .map(|&(p, s, e, run)| {
            let priors = (s == Solution::RsRfd).then(|| uniform_priors(&domains));
            let spec = client(s, p, budget(e)?, &domains, priors, options)?;
            let (accuracy, _, _) = attack_run(&spec, table, cell_seed(*seed, run, p, s, e), false)?;
            Ok(100.0 * accuracy)
        })
        .collect::<Result<Vec<f64>, ExperimentError>>()?;
    let mut rows = Table::new(&[
        "client",
        "eps",
        "runs",
        "accuracy",
        "accuracy_se",
        "baseline",
    ]);
    let mut series = Vec::new();
    let per_client = eps.len() * *runs as usize;
    for (c, &(p, s)) in parsed.iter().enumerate() {
        let mut points = Vec::new();
        for (i, &e) in eps.iter().enumerate() {
            let start = c * per_client + i * *runs as usize;
            let (mean, se) = mean_se(&results[start..start + *runs as usize]);
            rows.push(vec![
                client_label(p, s).into(),
                e.into(),
                (*runs as u32).into(),
                mean.into(),
                se.into(),
                (100.0 / d as f64).into(),
            ]);
            points.push(Point {
                err: 3.0 * se,
                ..Point::at(e, mean)
            });
        }
        series.push(measured_series(
            &client_label(p, s),
            client_look(p, s),
            points,
        ));
    }
    series.push(baseline_series(
        "baseline 1/d".into(),
        eps,
        100.0 / d as f64,
    ));
    let findings = rows
        .rows
        .iter()
        .filter(|r| rows.num(r, "eps") == eps.iter().copied().fold(f64::MIN, f64::max))
        .map(|r| {
            format!(
                "{} at ε = {}: {:.1}% ± {:.1} (baseline {:.1}%)",
                rows.text(r, "client"),
                value(rows.num(r, "eps")),
                rows.num(r, "accuracy"),
                rows.num(r, "accuracy_se"),
                100.0 / d as f64
            )
        })
        .collect();
    let panels = vec![Panel {
        title: format!("{}: which attribute was sampled (d = {d})", data.label()),
        x: Axis::linear("ε"),
        y: Axis::linear("attribute-inference accuracy (%)").over(0.0, 100.0),
        series,
        vlines: vec![],
    }];
    let mut legend = Figure::legend_from_series(&panels);
    legend.push(("measured ± 3 SE".into(), marker_look()));
    Ok(Output {
        table: rows,
        figure: Figure {
            width: exp.width,
            columns: 1,
            panel_height: 170.0,
            legend,
            panels,
            color_bar: None,
            share_y: false,
            notes: vec![],
        },
        findings,
    })
}

/// Uniform priors: RS+RFD with them is RS+FD (used where a config asks rsrfd without one).
fn uniform_priors(domains: &[DomainSize]) -> Priors {
    Priors::new(
        domains
            .iter()
            .map(|k| vec![1.0 / k.as_f64(); k.as_usize()])
            .collect(),
    )
    .expect("uniform distributions")
}

/// The anchors' "correct" prior: each attribute's true counts plus Laplace noise of
/// budget `eps / d` (sensitivity 1), rounded, clipped at zero and normalised.
fn noisy_priors(table: &DataTable, eps: f64, seed: u64) -> Result<Priors, ExperimentError> {
    let d = table.dimensions();
    let scale = d as f64 / eps;
    let mut rng = stream_rng(seed, 0, Role::Genuine, u64::MAX - 2);
    let priors = (0..d)
        .map(|j| {
            let noisy: Vec<f64> = table
                .counts(j)
                .into_iter()
                .map(|c| {
                    // Laplace(scale) as the difference of two exponentials.
                    let u: f64 = rng.random::<f64>();
                    let v: f64 = rng.random::<f64>();
                    let noise = scale * ((1.0 - u).ln() - (1.0 - v).ln());
                    (c as f64 + noise).round().max(0.0)
                })
                .collect();
            let total: f64 = noisy.iter().sum();
            if total > 0.0 {
                noisy.iter().map(|c| c / total).collect()
            } else {
                vec![1.0 / noisy.len() as f64; noisy.len()]
            }
        })
        .collect();
    Ok(Priors::new(priors)?)
}

pub(super) fn fake_data(
    exp: &Experiment,
    options: &TuneOptions,
) -> Result<Output, ExperimentError> {
    let Kind::FakeData {
        protocols,
        data,
        eps,
        prior_eps,
        runs,
        seed,
    } = &exp.kind
    else {
        unreachable!("dispatched on the kind")
    };
    let table = data.table();
    let domains = table.domain_sizes().to_vec();
    let d = domains.len();
    let solutions = [Solution::RsFd, Solution::RsRfd];
    let cells: Vec<(Protocol, Solution, f64, u64)> = protocols
        .iter()
        .flat_map(|&p| {
            solutions.iter().flat_map(move |&s| {
                eps.iter()
                    .flat_map(move |&e| (0..*runs).map(move |r| (p, s, e, r)))
            })
        })
        .collect();
    let results = cells
        .par_iter()
        .map(|&(p, s, e, run)| {
            let run_seed = cell_seed(*seed, run, p, s, e);
            let priors = match s {
                Solution::RsRfd => Some(noisy_priors(table, *prior_eps, run_seed)?),
                _ => None,
            };
            let spec = client(s, p, budget(e)?, &domains, priors, options)?;
            let (accuracy, mse, expected) = attack_run(&spec, table, run_seed, true)?;
            Ok((100.0 * accuracy, mse, expected))
        })
        .collect::<Result<Vec<(f64, f64, f64)>, ExperimentError>>()?;
    let mut rows = Table::new(&[
        "client",
        "eps",
        "runs",
        "mse",
        "mse_se",
        "mse_exact",
        "accuracy",
        "accuracy_se",
    ]);
    let (mut mse_series, mut acc_series) = (Vec::new(), Vec::new());
    let per_curve = eps.len() * *runs as usize;
    let mut curve = 0;
    for &p in protocols {
        for &s in &solutions {
            let label = client_label(p, s);
            let look = if s == Solution::RsRfd {
                protocol_look(p).with_dash(Dash::Dashed)
            } else {
                protocol_look(p)
            };
            let (mut mse_points, mut acc_points, mut mse_lines) =
                (Vec::new(), Vec::new(), Vec::new());
            for (i, &e) in eps.iter().enumerate() {
                let start = curve * per_curve + i * *runs as usize;
                let slice = &results[start..start + *runs as usize];
                let (mse, mse_se) = mean_se(&slice.iter().map(|r| r.1).collect::<Vec<_>>());
                let (acc, acc_se) = mean_se(&slice.iter().map(|r| r.0).collect::<Vec<_>>());
                let (mse_exact, _) = mean_se(&slice.iter().map(|r| r.2).collect::<Vec<_>>());
                mse_lines.push(Point::at(e, mse_exact));
                rows.push(vec![
                    label.clone().into(),
                    e.into(),
                    (*runs as u32).into(),
                    mse.into(),
                    mse_se.into(),
                    mse_exact.into(),
                    acc.into(),
                    acc_se.into(),
                ]);
                mse_points.push(Point {
                    err: 3.0 * mse_se,
                    ..Point::at(e, mse)
                });
                acc_points.push(Point {
                    err: 3.0 * acc_se,
                    ..Point::at(e, acc)
                });
            }
            mse_series.push(Series {
                label: label.clone(),
                look: look.without_marker(),
                points: mse_lines,
            });
            mse_series.push(measured_series(
                &label,
                look.with_dash(Dash::None),
                mse_points,
            ));
            acc_series.push(measured_series(&label, look, acc_points));
            curve += 1;
        }
    }
    acc_series.push(baseline_series(
        "baseline 1/d".into(),
        eps,
        100.0 / d as f64,
    ));
    let panels = vec![
        Panel {
            title: format!("{}: average MSE over attributes", data.label()),
            x: Axis::linear("ε"),
            y: Axis::log("MSE"),
            series: mse_series,
            vlines: vec![],
        },
        Panel {
            title: format!("{}: attribute inference", data.label()),
            x: Axis::linear("ε"),
            y: Axis::linear("accuracy (%)"),
            series: acc_series,
            vlines: vec![],
        },
    ];
    let zs: Vec<f64> = rows
        .rows
        .iter()
        .filter(|r| rows.num(r, "mse_se") > 0.0)
        .map(|r| (rows.num(r, "mse") - rows.num(r, "mse_exact")) / rows.num(r, "mse_se"))
        .collect();
    let mut findings = vec![format!(
        "MSE: {} of {} measured points within 3 SE of the closed form (largest |z| = {:.2})",
        zs.iter().filter(|z| z.abs() <= 3.0).count(),
        zs.len(),
        zs.iter().fold(0.0f64, |m, z| m.max(z.abs()))
    )];
    findings.extend(
        rows.rows
            .iter()
            .filter(|r| rows.num(r, "eps") == eps.iter().copied().fold(f64::MIN, f64::max))
            .map(|r| {
                format!(
                    "{} at ε = {}: MSE {:.3e}, inference {:.1}% ± {:.1}",
                    rows.text(r, "client"),
                    value(rows.num(r, "eps")),
                    rows.num(r, "mse"),
                    rows.num(r, "accuracy"),
                    rows.num(r, "accuracy_se")
                )
            }),
    );
    let mut legend = Figure::legend_from_series(&panels);
    legend.push(("closed form (line, MSE)".into(), Look::line(GREY)));
    legend.push(("measured ± 3 SE".into(), marker_look()));
    let notes = coincidence_note(&panels, "Drawn on one another where equal:")
        .into_iter()
        .collect();
    Ok(Output {
        table: rows,
        figure: Figure {
            width: exp.width,
            columns: 2,
            panel_height: 160.0,
            legend,
            panels,
            color_bar: None,
            share_y: false,
            notes,
        },
        findings,
    })
}
