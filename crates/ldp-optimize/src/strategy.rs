//! The six selection strategies of the paper's appendix "optimization_methods".

use serde::{Deserialize, Serialize};

use crate::error::OptimizeError;
use crate::objective::{Objectives, Scale, Scaler, Weights};
use crate::pareto::Candidate;

/// How to pick one point of a Pareto frontier.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Minimize the weighted sum of the objectives (the paper's default).
    Weighted,
    /// Closest point (Euclidean) to the ideal (0, 0).
    Utopia,
    /// Largest perpendicular distance to the chord between the frontier's extreme points.
    Elbow,
    /// Lowest MSE among points with ASR at most `asr_max`; the utopia point when none is.
    EpsConstraint {
        /// Largest admissible ASR (raw, a probability).
        asr_max: f64,
    },
    /// Largest exclusive hypervolume contribution, with respect to `reference`.
    Hypervolume {
        /// Reference point (ASR, MSE), in the chosen scale.
        reference: [f64; 2],
    },
    /// Minimize `max_i w_i f_i + rho sum_i w_i f_i` (augmented Tchebycheff).
    Tchebycheff {
        /// Augmentation factor.
        rho: f64,
    },
}

impl Strategy {
    /// The six strategies with the paper's defaults (ASR bound 0.1, reference (1, 1),
    /// rho 1e-6), in the paper's order.
    pub const PAPER: [Strategy; 6] = [
        Strategy::Utopia,
        Strategy::Weighted,
        Strategy::Elbow,
        Strategy::EpsConstraint { asr_max: 0.1 },
        Strategy::Hypervolume {
            reference: [1.0, 1.0],
        },
        Strategy::Tchebycheff { rho: 1e-6 },
    ];

    /// Short name: weighted, utopia, elbow, eps-constraint, hypervolume, tchebycheff.
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Weighted => "weighted",
            Strategy::Utopia => "utopia",
            Strategy::Elbow => "elbow",
            Strategy::EpsConstraint { .. } => "eps-constraint",
            Strategy::Hypervolume { .. } => "hypervolume",
            Strategy::Tchebycheff { .. } => "tchebycheff",
        }
    }

    /// The strategy named `name`, with the paper's default settings.
    pub fn from_name(name: &str) -> Option<Strategy> {
        Strategy::PAPER.into_iter().find(|s| s.name() == name)
    }

    /// Checks the strategy's settings.
    pub fn validate(&self) -> Result<(), OptimizeError> {
        match *self {
            Strategy::EpsConstraint { asr_max } if !(0.0..=1.0).contains(&asr_max) => {
                Err(OptimizeError::AsrBound(asr_max))
            }
            Strategy::Hypervolume { reference: [a, m] } if !(a.is_finite() && m.is_finite()) => {
                Err(OptimizeError::Reference(a, m))
            }
            Strategy::Tchebycheff { rho } if !(rho.is_finite() && rho >= 0.0) => {
                Err(OptimizeError::Rho(rho))
            }
            _ => Ok(()),
        }
    }

    /// The scalar this strategy minimizes at a point, for the strategies that are
    /// scalarizations (weighted and Tchebycheff); `None` for the geometric ones.
    pub(crate) fn scalarize(&self, w: &Weights, p: &Objectives) -> Option<f64> {
        match *self {
            Strategy::Weighted => Some(w.weighted_sum(p)),
            Strategy::Tchebycheff { rho } => {
                let terms = [
                    w.asr() * p.asr,
                    w.mse() * p.mse,
                    if w.epg() > 0.0 { w.epg() * p.epg } else { 0.0 },
                ];
                let max = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                Some(max + rho * terms.iter().sum::<f64>())
            }
            _ => None,
        }
    }
}

/// The point a strategy picked.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Index into the frontier given to [`select`].
    pub index: usize,
    /// True when the epsilon-constraint had no feasible point and fell back to the
    /// utopia point.
    pub fell_back: bool,
}

/// Picks a point of `frontier` (sorted by increasing ASR, as [`crate::frontier`] returns
/// it). Ties go to the earliest point.
///
/// ```
/// use ldp_core::FamilyParams;
/// use ldp_optimize::{select, Candidate, Objectives, Scale, Strategy, Weights};
/// let c = |omega, asr, mse| Candidate {
///     params: FamilyParams::SubsetSelection { omega },
///     objectives: Objectives { asr, mse, epg: 0.0 },
/// };
/// let front = [c(9, 0.05, 0.9), c(5, 0.2, 0.3), c(2, 0.6, 0.1)];
/// let pick = select(&front, Strategy::EpsConstraint { asr_max: 0.1 }, &Weights::default(), Scale::Raw)?;
/// assert_eq!((pick.index, pick.fell_back), (0, false));
/// let none = select(&front, Strategy::EpsConstraint { asr_max: 0.01 }, &Weights::default(), Scale::Raw)?;
/// assert!(none.fell_back); // nothing has ASR <= 0.01: the utopia point, and it says so
/// # Ok::<(), ldp_optimize::OptimizeError>(())
/// ```
pub fn select(
    frontier: &[Candidate],
    strategy: Strategy,
    weights: &Weights,
    scale: Scale,
) -> Result<Selection, OptimizeError> {
    strategy.validate()?;
    if frontier.is_empty() {
        return Err(OptimizeError::NoCandidates);
    }
    let scaler = Scaler::new(scale, frontier.iter().map(|c| c.objectives));
    let pts: Vec<Objectives> = frontier
        .iter()
        .map(|c| scaler.apply(&c.objectives))
        .collect();
    let chosen = |index| {
        Ok(Selection {
            index,
            fell_back: false,
        })
    };
    match strategy {
        Strategy::Weighted | Strategy::Tchebycheff { .. } => {
            chosen(argmin(pts.iter().map(|p| {
                strategy.scalarize(weights, p).expect("scalarization")
            })))
        }
        Strategy::Utopia => chosen(utopia(&pts)),
        Strategy::Elbow => chosen(elbow(&pts)),
        Strategy::EpsConstraint { asr_max } => {
            let feasible = frontier
                .iter()
                .zip(&pts)
                .enumerate()
                .filter(|(_, (c, _))| c.objectives.asr <= asr_max)
                .min_by(|a, b| a.1.1.mse.total_cmp(&b.1.1.mse).then(a.0.cmp(&b.0)));
            match feasible {
                Some((index, _)) => chosen(index),
                None => Ok(Selection {
                    index: utopia(&pts),
                    fell_back: true,
                }),
            }
        }
        Strategy::Hypervolume { reference } => chosen(hypervolume(&pts, reference)),
    }
}

/// Index of the smallest value; the first on ties.
fn argmin(values: impl Iterator<Item = f64>) -> usize {
    let mut best = (0, f64::INFINITY);
    for (i, v) in values.enumerate() {
        if v < best.1 {
            best = (i, v);
        }
    }
    best.0
}

fn utopia(pts: &[Objectives]) -> usize {
    argmin(pts.iter().map(|p| p.asr.hypot(p.mse)))
}

fn elbow(pts: &[Objectives]) -> usize {
    let (first, last) = (pts[0], pts[pts.len() - 1]);
    let (dx, dy) = (last.asr - first.asr, last.mse - first.mse);
    let norm = dx.hypot(dy);
    if norm == 0.0 {
        return 0;
    }
    // Perpendicular distance to the chord; maximize it (argmin of the negative).
    argmin(
        pts.iter()
            .map(|p| -((p.asr - first.asr) * dy - (p.mse - first.mse) * dx).abs() / norm),
    )
}

fn hypervolume(pts: &[Objectives], reference: [f64; 2]) -> usize {
    let [ra, rm] = reference;
    argmin(pts.iter().enumerate().map(|(i, p)| {
        let next_asr = pts.get(i + 1).map_or(ra, |n| n.asr.min(ra));
        let prev_mse = if i == 0 { rm } else { pts[i - 1].mse.min(rm) };
        let width = (next_asr - p.asr).max(0.0);
        let height = (prev_mse - p.mse).max(0.0);
        -(width * height)
    }))
}
