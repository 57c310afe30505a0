//! The adaptive protocols: evaluate a parameter space, then pick a parameter.

use ldp_analytic::{LhAsr, Poisoning, asr, epg, variance};
use ldp_core::{AnyMechanism, DomainSize, Epsilon, Protocol, Spec};
use serde::{Deserialize, Serialize};

use crate::error::OptimizeError;
use crate::objective::{Objectives, Scale, Scaler, Weights};
use crate::pareto::{Candidate, frontier};
use crate::space::{ParameterSpace, Search, paper_space, params_at};
use crate::strategy::{Strategy, select};

/// Everything that shapes a tuning, with the paper's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TuneOptions {
    /// Objective weights (default 0.5 / 0.5, no EPG).
    pub weights: Weights,
    /// Grid only, or grid then golden-section refinement.
    pub search: Search,
    /// How to pick the parameter (default: weighted scalarization).
    pub strategy: Strategy,
    /// Raw or min-max normalized objectives.
    pub scale: Scale,
    /// LH ASR form used in the objective (default: the paper's).
    pub lh_asr: LhAsr,
    /// The poisoning attack whose gain is the third objective.
    pub poisoning: Poisoning,
}

impl Default for TuneOptions {
    fn default() -> Self {
        Self {
            weights: Weights::default(),
            search: Search::Paper,
            strategy: Strategy::Weighted,
            scale: Scale::Raw,
            lh_asr: LhAsr::Paper,
            poisoning: Poisoning::default(),
        }
    }
}

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
    /// True when the epsilon-constraint had no feasible point and the utopia point was
    /// taken instead.
    pub fell_back: bool,
    /// Number of objective evaluations spent.
    pub evaluations: usize,
}

impl Tuned {
    /// The tuned parameter (omega, p, g or theta).
    pub fn param(&self) -> f64 {
        self.spec.family().value().unwrap_or(f64::NAN)
    }

    /// The runnable mechanism.
    pub fn mechanism(&self) -> AnyMechanism {
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
    })
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
        objectives: objectives(&spec, o.lh_asr, &o.poisoning)?,
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

/// Every grid point of `space`, evaluated, in scan order.
pub fn candidates_in(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    space: &ParameterSpace,
    options: &TuneOptions,
) -> Result<Vec<Candidate>, OptimizeError> {
    space.validate()?;
    paper_space(protocol, k, eps)?; // rejects non-adaptive protocols
    space
        .grid()
        .into_iter()
        .map(|v| candidate(protocol, k, eps, v, options))
        .collect()
}

/// Tunes an adaptive protocol (ASS, AUE, ALH, ATHE) at (k, eps) over the paper's space.
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
pub fn tune_in(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    space: &ParameterSpace,
    options: &TuneOptions,
) -> Result<Tuned, OptimizeError> {
    options.strategy.validate()?;
    let grid = candidates_in(protocol, k, eps, space, options)?;
    let mut evaluations = grid.len();
    let scaler = Scaler::new(options.scale, grid.iter().map(|c| c.objectives));
    let score = |c: &Candidate| {
        options
            .strategy
            .scalarize(&options.weights, &scaler.apply(&c.objectives))
    };

    let (mut best, fell_back) = if score(&grid[0]).is_some() {
        // Scalarizations scan the grid in order: ties go to the first grid point, as in
        // the paper's scan (the minimizer is on the frontier anyway).
        let (mut best, mut best_score) = (0, f64::INFINITY);
        for (i, c) in grid.iter().enumerate() {
            let s = score(c).expect("a scalarization");
            // Strictly less: ties keep the earlier grid point.
            if s < best_score {
                (best, best_score) = (i, s);
            }
        }
        (grid[best], false)
    } else {
        let front = frontier(&grid);
        let pick = select(&front, options.strategy, &options.weights, options.scale)?;
        (front[pick.index], pick.fell_back)
    };

    if options.search == Search::Refined
        && let (ParameterSpace::Interval { lo, hi, .. }, Some(best_score)) = (space, score(&best))
    {
        let values = space.grid();
        let i = values.iter().position(|&v| v == best.param()).unwrap_or(0);
        let a = if i > 0 { values[i - 1] } else { *lo };
        let b = values.get(i + 1).copied().unwrap_or(*hi);
        let f = |v: f64| {
            candidate(protocol, k, eps, v, options)
                .ok()
                .and_then(|c| score(&c).map(|s| (s, c)))
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
    Ok(Tuned {
        protocol,
        spec,
        objectives: best.objectives,
        strategy: options.strategy,
        fell_back,
        evaluations,
    })
}

/// The instance of any of the twelve protocols at (k, eps): the paper's preset for a
/// classic protocol, the tuned parameter for an adaptive one.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, FamilyParams, Protocol};
/// use ldp_optimize::{protocol_spec, TuneOptions};
/// let (k, eps, o) = (DomainSize::new(100)?, Epsilon::new(4.0)?, TuneOptions::default());
/// assert_eq!(protocol_spec(Protocol::Ss, k, eps, &o)?.family(), FamilyParams::SubsetSelection { omega: 2 });
/// assert_eq!(protocol_spec(Protocol::Ass, k, eps, &o)?.family(), FamilyParams::SubsetSelection { omega: 7 });
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

/// Golden-section minimization of `f` on `[a, b]` to an interval width `tol`. Returns the
/// minimizer and the number of evaluations.
fn golden_section(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64, tol: f64) -> (f64, usize) {
    let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - inv_phi * (b - a);
    let mut d = a + inv_phi * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    let mut n = 2;
    while b - a > tol {
        if fc <= fd {
            (b, d, fd) = (d, c, fc);
            c = b - inv_phi * (b - a);
            fc = f(c);
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + inv_phi * (b - a);
            fd = f(d);
        }
        n += 1;
    }
    ((a + b) / 2.0, n)
}
