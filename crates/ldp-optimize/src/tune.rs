//! The adaptive protocols: search a parameter space, then pick a parameter.

use ldp_analytic::{LhAsr, Poisoning, asr, cost, epg, variance};
use ldp_core::{AnyMechanism, DomainSize, Epsilon, ParamError, Protocol, Spec};
use serde::{Deserialize, Serialize};

use crate::bounds;
use crate::error::{FullScan, OptimizeError};
use crate::objective::{ObjectiveSet, Objectives, Scale, Scaler, Weights};
use crate::options::TuneOptions;
use crate::pareto::{Candidate, frontier_in};
use crate::search::{Best, Problem, golden_section};
use crate::space::{MAX_GRID_POINTS, Search, paper_space, params_at};
use crate::strategy::{Bounds, Strategy, select};
use ldp_core::ParameterSpace;

/// The outcome of tuning one adaptive protocol.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tuned {
    /// The adaptive protocol.
    pub protocol: Protocol,
    /// The tuned instance.
    pub spec: Spec,
    /// Its objective values (raw).
    pub objectives: Objectives,
    /// The strategy that chose it.
    pub strategy: Strategy,
    /// The weights it was chosen with.
    pub weights: Weights,
    /// True when the epsilon-constraint had no feasible point and the utopia point was
    /// taken instead.
    pub fell_back: bool,
    /// Number of objective evaluations spent.
    pub evaluations: usize,
}

impl Tuned {
    /// The tuned parameter (omega, p, g or theta).
    pub fn param(&self) -> f64 {
        self.spec.params().value().unwrap_or(f64::NAN)
    }

    /// The runnable mechanism (fails only beyond [`ldp_core::MAX_RUNNABLE_DOMAIN`]).
    pub fn mechanism(&self) -> Result<AnyMechanism, ParamError> {
        self.spec.build()
    }
}

/// Objective values of one instance. EPG is `+inf` when unbounded (SHE).
pub fn objectives(
    spec: &Spec,
    lh_asr: LhAsr,
    poisoning: &Poisoning,
) -> Result<Objectives, OptimizeError> {
    Ok(Objectives {
        asr: asr::expected(spec, lh_asr),
        mse: variance::approx_per_user(spec),
        epg: epg::expected(spec, poisoning)?
            .finite()
            .unwrap_or(f64::INFINITY),
        bits: cost::bits(spec),
    })
}

/// The objective values of one instance under `options` (the ASR after
/// `options.collections` linked reports).
pub fn objectives_for(spec: &Spec, options: &TuneOptions) -> Result<Objectives, OptimizeError> {
    let o = objectives(spec, options.lh_asr, &options.poisoning)?;
    Ok(Objectives {
        asr: asr_objective(spec, options)?,
        mse: o.mse + bias_per_user(spec, options),
        ..o
    })
}

/// The bias term of the MSE objective under `options` (0 without a bias setting).
fn bias_per_user(spec: &Spec, options: &TuneOptions) -> f64 {
    options.bias.map_or(0.0, |b| b.per_user(spec))
}

/// The ASR objective: one-shot, or after `options.collections` linked reports.
fn asr_objective(spec: &Spec, options: &TuneOptions) -> Result<f64, OptimizeError> {
    match options.collections {
        0 => Err(OptimizeError::NoCollections),
        1 => Ok(asr::expected(spec, options.lh_asr)),
        t => ldp_analytic::longitudinal::asr_after(spec, t).ok_or(OptimizeError::NoRepeatedForm {
            family: spec.family(),
            collections: t,
        }),
    }
}

/// The objectives of `needed` only (the others NaN): what a search compares. A search
/// evaluates thousands of points, and the unweighted objectives (the report size of SS
/// needs a log-binomial) would double its cost.
fn needed_objectives(
    spec: &Spec,
    options: &TuneOptions,
    needed: ObjectiveSet,
) -> Result<Objectives, OptimizeError> {
    use crate::objective::Objective;
    let mut o = Objectives::splat(f64::NAN);
    if needed.contains(Objective::Asr) {
        o.asr = asr_objective(spec, options)?;
    }
    if needed.contains(Objective::Mse) {
        o.mse = variance::approx_per_user(spec) + bias_per_user(spec, options);
    }
    if needed.contains(Objective::Epg) {
        o.epg = epg::expected(spec, &options.poisoning)?
            .finite()
            .unwrap_or(f64::INFINITY);
    }
    if needed.contains(Objective::Bits) {
        o.bits = cost::bits(spec);
    }
    Ok(o)
}

fn candidate(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    v: f64,
    o: &TuneOptions,
) -> Result<Candidate, OptimizeError> {
    let params = params_at(protocol, v);
    let spec = Spec::new(k, eps, params)?;
    Ok(Candidate {
        params,
        objectives: objectives_for(&spec, o)?,
    })
}

/// Every grid point of the paper's space of `protocol`, evaluated, in scan order.
pub fn candidates(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    options: &TuneOptions,
) -> Result<Vec<Candidate>, OptimizeError> {
    let space = paper_space(protocol, k, eps)?;
    candidates_in(protocol, k, eps, &space, options)
}

/// Every grid point of `space`, evaluated, in scan order. Fails when the space holds
/// more than [`MAX_GRID_POINTS`].
pub fn candidates_in(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    space: &ParameterSpace,
    options: &TuneOptions,
) -> Result<Vec<Candidate>, OptimizeError> {
    paper_space(protocol, k, eps)?; // rejects non-adaptive protocols
    if space.len() > MAX_GRID_POINTS {
        return Err(OptimizeError::SpaceTooLarge {
            protocol,
            points: space.len(),
            limit: MAX_GRID_POINTS,
            reason: FullScan::Frontier,
        });
    }
    space
        .grid()
        .into_iter()
        .map(|v| candidate(protocol, k, eps, v, options))
        .collect()
}

/// Tunes an adaptive protocol ([`Protocol::ADAPTIVE`]) at (k, eps) over the paper's space.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Protocol};
/// use ldp_optimize::{tune, TuneOptions};
/// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(4.0)?);
/// let alh = tune(Protocol::Alh, k, eps, &TuneOptions::default())?;
/// assert_eq!(alh.param(), 13.0); // the paper's appendix value (OLH uses g = 56)
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn tune(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    options: &TuneOptions,
) -> Result<Tuned, OptimizeError> {
    let space = paper_space(protocol, k, eps)?;
    tune_in(protocol, k, eps, &space, options)
}

/// Tunes an adaptive protocol over a caller-chosen parameter space.
///
/// The scalarizations (weighted, Tchebycheff) on raw objectives and the
/// epsilon-constraint's feasible case are searched without a full scan on ASS's and ALH's
/// integer spaces, by branch and bound: intervals of the parameter are explored in the
/// order of a lower bound of their score (from the objectives' monotone and convex
/// pieces), and an interval is dropped only when that bound exceeds the best score found
/// by a relative margin of 1e-12, or when it proves a bound violated. The answer is
/// exactly the full scan's (smallest score, then smallest parameter), which the tests
/// check on the paper's whole grid and on random settings. The other strategies need the
/// whole frontier and scan up to [`MAX_GRID_POINTS`] points.
pub fn tune_in(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    space: &ParameterSpace,
    options: &TuneOptions,
) -> Result<Tuned, OptimizeError> {
    paper_space(protocol, k, eps)?; // rejects non-adaptive protocols
    let set = options.weights.active();
    options.strategy.check_dimensions(set)?;
    let (mut best, fell_back, mut evaluations) = match options.strategy {
        // The branch and bound's lower bounds are the one-shot ASR's.
        _ if options.scale == Scale::Normalized || options.collections != 1 => {
            select_on_frontier(protocol, k, eps, space, options)?
        }
        Strategy::Weighted | Strategy::Tchebycheff(_) => {
            let score = |o: &Objectives| {
                options
                    .strategy
                    .scalarize(&options.weights, o)
                    .expect("a scalarization")
            };
            let (best, n) = minimize(protocol, k, eps, space, options, set, &score, None)?;
            let best = best.map(|c| (c, false, n));
            best.expect("every point is admissible")
        }
        Strategy::EpsConstraint(bounds) => {
            let needed = ObjectiveSet::of(
                &bounds
                    .iter()
                    .map(|(o, _)| o)
                    .chain([crate::Objective::Mse])
                    .collect::<Vec<_>>(),
            );
            match minimize_mse_within(protocol, k, eps, space, options, needed, &bounds)? {
                (Some(best), n) => (best, false, n),
                // Nothing meets the bounds: the utopia point of the frontier, said so.
                (None, n) => {
                    let (best, fell_back, m) =
                        select_on_frontier(protocol, k, eps, space, options)?;
                    (best, fell_back, n + m)
                }
            }
        }
        _ => select_on_frontier(protocol, k, eps, space, options)?,
    };

    if options.search == Search::Refined
        && let Some((lo, hi)) = space.interval_bounds()
        && options.strategy.uses_weight_values()
    {
        // The scale of the grid's scan, so that the refinement minimizes the same score.
        let scaler = match options.scale {
            Scale::Raw => Scaler::new(Scale::Raw, std::iter::empty()),
            Scale::Normalized => {
                let grid = candidates_in(protocol, k, eps, space, options)
                    .map_err(|e| e.for_scan(scan_reason(options)))?;
                Scaler::new(Scale::Normalized, grid.into_iter().map(|c| c.objectives))
            }
        };
        let score = |o: &Objectives| {
            options
                .strategy
                .scalarize(&options.weights, &scaler.apply(o))
                .expect("a scalarization")
        };
        let best_score = score(&best.objectives);
        let values = space.grid();
        let i = values.iter().position(|&v| v == best.param()).unwrap_or(0);
        let a = if i > 0 { values[i - 1] } else { lo };
        let b = values.get(i + 1).copied().unwrap_or(hi);
        let f = |v: f64| {
            candidate(protocol, k, eps, v, options)
                .ok()
                .map(|c| (score(&c.objectives), c))
        };
        let (v, n) = golden_section(|v| f(v).map_or(f64::INFINITY, |(s, _)| s), a, b, 1e-10);
        evaluations += n;
        if let Some((s, c)) = f(v)
            && s < best_score
        {
            best = c;
        }
    }

    let spec = Spec::new(k, eps, best.params).expect("candidates are valid");
    // Searches compare only the objectives they need; report them all.
    let objectives = objectives_for(&spec, options)?;
    Ok(Tuned {
        protocol,
        spec,
        objectives,
        strategy: options.strategy,
        weights: options.weights,
        fell_back,
        evaluations,
    })
}

/// The full scan, the frontier in the weighted objectives, and the strategy's pick.
fn select_on_frontier(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    space: &ParameterSpace,
    options: &TuneOptions,
) -> Result<(Candidate, bool, usize), OptimizeError> {
    let grid = candidates_in(protocol, k, eps, space, options)
        .map_err(|e| e.for_scan(scan_reason(options)))?;
    let n = grid.len();
    if let Some(best) = scalarized_scan(&grid, options) {
        return Ok((best, false, n));
    }
    let front = frontier_in(&grid, options.weights.active());
    let pick = select(&front, options.strategy, &options.weights, options.scale)?;
    Ok((front[pick.index], pick.fell_back, n))
}

/// A scalarization scans the grid in order: ties go to the first grid point, as in the
/// paper's scan (the minimizer is on the frontier anyway). `None` for other strategies.
fn scalarized_scan(grid: &[Candidate], options: &TuneOptions) -> Option<Candidate> {
    let scaler = Scaler::new(options.scale, grid.iter().map(|c| c.objectives));
    let scores: Vec<f64> = grid
        .iter()
        .map(|c| {
            options
                .strategy
                .scalarize(&options.weights, &scaler.apply(&c.objectives))
        })
        .collect::<Option<_>>()?;
    Some(grid[crate::strategy::argmin(scores.into_iter())])
}

/// The scan's answer for `score` under `bounds`: branch and bound on ASS's and ALH's
/// integer spaces, a full scan elsewhere.
#[allow(clippy::too_many_arguments)]
fn minimize(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    space: &ParameterSpace,
    options: &TuneOptions,
    needed: ObjectiveSet,
    score: &dyn Fn(&Objectives) -> f64,
    bounds: Option<&Bounds>,
) -> Result<(Option<Candidate>, usize), OptimizeError> {
    // Both ends inside the family's range means every point is (the ranges are
    // intervals); this also surfaces a bad poisoning setting before the search.
    candidate(protocol, k, eps, space.first(), options)?;
    candidate(protocol, k, eps, space.last(), options)?;
    let admit = |o: &Objectives| bounds.is_none_or(|b| b.admit(o));
    let infeasible = |lb: &Objectives| bounds.is_some_and(|b| b.iter().any(|(o, v)| lb.get(o) > v));
    let to_candidate = |b: Best| Candidate {
        params: params_at(protocol, f64::from(b.x)),
        objectives: b.objectives,
    };
    let eval = |v: f64| {
        let spec = Spec::new(k, eps, params_at(protocol, v)).expect("the space's values are valid");
        needed_objectives(&spec, options, needed).expect("checked at the ends")
    };
    match space.integer_bounds() {
        Some((lo, hi))
            if bounds::lower_bounds(protocol, k, eps, options, needed, lo, hi).is_some() =>
        {
            let eval = |x: u32| eval(f64::from(x));
            let lower = |a: u32, b: u32| {
                bounds::lower_bounds(protocol, k, eps, options, needed, a, b)
                    .expect("a family's bounds exist on every interval when they do on one")
            };
            let problem = Problem {
                eval: &eval,
                score,
                admit: &admit,
                bounds: Some(&lower),
                infeasible: &infeasible,
            };
            let (best, n) = problem.minimize(lo, hi);
            Ok((best.map(to_candidate), n))
        }
        _ => {
            if space.len() > MAX_GRID_POINTS {
                return Err(OptimizeError::SpaceTooLarge {
                    protocol,
                    points: space.len(),
                    limit: MAX_GRID_POINTS,
                    reason: scan_reason(options),
                });
            }
            let grid = space.grid();
            let n = grid.len();
            let mut best: Option<(f64, Candidate)> = None;
            for v in grid {
                let objectives = eval(v);
                if !admit(&objectives) {
                    continue;
                }
                let s = score(&objectives);
                if best.is_none_or(|(bs, _)| s < bs) {
                    let params = params_at(protocol, v);
                    best = Some((s, Candidate { params, objectives }));
                }
            }
            Ok((best.map(|(_, c)| c), n))
        }
    }
}

/// The instance of any protocol at (k, eps): the paper's preset for a
/// classic protocol, the tuned parameter for an adaptive one.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol};
/// use ldp_optimize::{protocol_spec, TuneOptions};
/// let (k, eps, o) = (DomainSize::new(100)?, Epsilon::new(4.0)?, TuneOptions::default());
/// assert_eq!(protocol_spec(Protocol::Ss, k, eps, &o)?.params(), FamilyParams::SubsetSelection { omega: 2 });
/// assert_eq!(protocol_spec(Protocol::Ass, k, eps, &o)?.params(), FamilyParams::SubsetSelection { omega: 7 });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn protocol_spec(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    options: &TuneOptions,
) -> Result<Spec, OptimizeError> {
    if protocol.is_adaptive() {
        Ok(tune(protocol, k, eps, options)?.spec)
    } else {
        Ok(Spec::classic(protocol, k, eps).expect("classic protocol"))
    }
}

/// The lowest-MSE point of `space` meeting `bounds` (the scan's answer, without a full
/// scan where [`crate::search`] applies); `needed` holds MSE and the bounded objectives.
pub(crate) fn minimize_mse_within(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    space: &ParameterSpace,
    options: &TuneOptions,
    needed: ObjectiveSet,
    bounds: &Bounds,
) -> Result<(Option<Candidate>, usize), OptimizeError> {
    minimize(
        protocol,
        k,
        eps,
        space,
        options,
        needed,
        &|o: &Objectives| o.mse,
        Some(bounds),
    )
}

/// Why tuning with `options` needs a full scan: the ASR after several reports, which has
/// no bound to prune with, or else the strategy.
fn scan_reason(options: &TuneOptions) -> FullScan {
    if options.collections > 1 {
        FullScan::RepeatedAsr
    } else {
        FullScan::Strategy
    }
}
