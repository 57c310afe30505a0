//! The six selection strategies of the paper's appendix "optimization_methods",
//! generalized beyond two objectives where they have a meaning.
//!
//! The objectives a strategy looks at are those with a positive weight
//! ([`Weights::active`]); the paper's are (ASR, MSE).
//!
//! | strategy | two objectives (the paper) | more objectives |
//! |---|---|---|
//! | weighted | `w_ASR ASR + w_MSE MSE` | `sum_i w_i f_i` |
//! | tchebycheff | `max_i w_i f_i + rho sum_i w_i f_i` | the same over all weighted |
//! | utopia | closest point to (0, 0) | closest point to the origin |
//! | eps-constraint | lowest MSE with ASR <= a | lowest MSE with every given bound met (ASR, EPG, bits) |
//! | elbow | farthest point from the chord of the extremes | refused: no unique chord |
//! | hypervolume | largest exclusive area to the reference | refused: defined in 2-D here |
//!
//! The epsilon-constraint falls back to the utopia point when no point meets its bounds,
//! and says so ([`Selection::fell_back`]).
//!
//! The hypervolume has two readings, and the paper does not say which it used. On raw
//! objectives ([`Scale::Raw`]) with the reference (1, 1), a point whose MSE exceeds 1
//! dominates no area, so at small budgets the choice jumps between the ends of the grid.
//! On min-max normalized objectives ([`Scale::Normalized`]) the reference (1, 1) is the
//! candidate set's nadir. Neither reproduces the appendix's statement that every strategy
//! but elbow and epsilon-constraint agrees with the weighted one: over the 240 budgets of
//! `configs/paper/appendix_optimization.ron` the raw reading picks the weighted
//! parameter 39 times and the normalized one 9 times (utopia 130, Tchebycheff 114,
//! epsilon-constraint 64, elbow 9). That figure draws both readings.

use serde::{Deserialize, Serialize};

use crate::error::OptimizeError;
use crate::objective::{Objective, ObjectiveSet, Objectives, Scale, Scaler, Weights};
use crate::pareto::Candidate;

/// Upper bounds of the epsilon-constraint strategy: the lowest MSE among the points that
/// meet every bound given. Validated at construction.
///
/// ```
/// use ldp_optimize::Bounds;
/// let b = Bounds::asr(0.1)?.with_bits(64.0)?;
/// assert_eq!((b.asr_max(), b.bits_max()), (Some(0.1), Some(64.0)));
/// assert!(Bounds::asr(1.5).is_err());
/// # Ok::<(), ldp_optimize::OptimizeError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "BoundFields", into = "BoundFields")]
pub struct Bounds(BoundFields);

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BoundFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    asr_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    epg_max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bits_max: Option<f64>,
}

impl TryFrom<BoundFields> for Bounds {
    type Error = OptimizeError;
    fn try_from(f: BoundFields) -> Result<Self, OptimizeError> {
        let mut b = Bounds(BoundFields::default());
        if let Some(a) = f.asr_max {
            b = b.set(Objective::Asr, a)?;
        }
        if let Some(e) = f.epg_max {
            b = b.set(Objective::Epg, e)?;
        }
        if let Some(bits) = f.bits_max {
            b = b.set(Objective::Bits, bits)?;
        }
        if b.is_empty() {
            return Err(OptimizeError::NoBounds);
        }
        Ok(b)
    }
}

impl From<Bounds> for BoundFields {
    fn from(b: Bounds) -> Self {
        b.0
    }
}

impl Bounds {
    /// ASR at most `asr_max`, a probability (the paper's form, with 0.1 by default).
    pub fn asr(asr_max: f64) -> Result<Self, OptimizeError> {
        Bounds(BoundFields::default()).set(Objective::Asr, asr_max)
    }

    /// EPG at most `epg_max`.
    pub fn epg(epg_max: f64) -> Result<Self, OptimizeError> {
        Bounds(BoundFields::default()).set(Objective::Epg, epg_max)
    }

    /// Reports of at most `bits_max` bits.
    pub fn bits(bits_max: f64) -> Result<Self, OptimizeError> {
        Bounds(BoundFields::default()).set(Objective::Bits, bits_max)
    }

    /// These bounds and ASR at most `asr_max`.
    pub fn with_asr(self, asr_max: f64) -> Result<Self, OptimizeError> {
        self.set(Objective::Asr, asr_max)
    }

    /// These bounds and EPG at most `epg_max`.
    pub fn with_epg(self, epg_max: f64) -> Result<Self, OptimizeError> {
        self.set(Objective::Epg, epg_max)
    }

    /// These bounds and reports of at most `bits_max` bits.
    pub fn with_bits(self, bits_max: f64) -> Result<Self, OptimizeError> {
        self.set(Objective::Bits, bits_max)
    }

    fn set(mut self, objective: Objective, value: f64) -> Result<Self, OptimizeError> {
        let bad = |expected| OptimizeError::Bound {
            objective: objective.name(),
            expected,
            value,
        };
        match objective {
            Objective::Asr if !(0.0..=1.0).contains(&value) => return Err(bad("in [0, 1]")),
            Objective::Epg if !value.is_finite() => return Err(bad("finite")),
            Objective::Bits if !(value.is_finite() && value >= 0.0) => {
                return Err(bad("finite and >= 0"));
            }
            _ => {}
        }
        match objective {
            Objective::Asr => self.0.asr_max = Some(value),
            Objective::Epg => self.0.epg_max = Some(value),
            Objective::Bits => self.0.bits_max = Some(value),
            Objective::Mse => unreachable!("MSE is what the constraint minimizes"),
        }
        Ok(self)
    }

    /// The ASR bound, if any.
    pub fn asr_max(&self) -> Option<f64> {
        self.0.asr_max
    }
    /// The EPG bound, if any.
    pub fn epg_max(&self) -> Option<f64> {
        self.0.epg_max
    }
    /// The bits bound, if any.
    pub fn bits_max(&self) -> Option<f64> {
        self.0.bits_max
    }

    fn is_empty(&self) -> bool {
        self.0 == BoundFields::default()
    }

    /// `(objective, bound)` for every bound given.
    pub fn iter(&self) -> impl Iterator<Item = (Objective, f64)> {
        [
            (Objective::Asr, self.0.asr_max),
            (Objective::Epg, self.0.epg_max),
            (Objective::Bits, self.0.bits_max),
        ]
        .into_iter()
        .filter_map(|(o, b)| b.map(|b| (o, b)))
    }

    /// Whether a point meets every bound (on raw objectives).
    pub fn admit(&self, point: &Objectives) -> bool {
        self.iter().all(|(o, b)| point.get(o) <= b)
    }
}

/// How to pick one point of a Pareto frontier. The settings are validated at
/// construction ([`Bounds`], [`Strategy::hypervolume`], [`Strategy::tchebycheff`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Minimize the weighted sum of the objectives (the paper's default).
    Weighted,
    /// Closest point (Euclidean) to the ideal point (the origin).
    Utopia,
    /// Largest perpendicular distance to the chord between the frontier's extreme points
    /// (two objectives only).
    Elbow,
    /// Lowest MSE among points meeting the bounds; the utopia point when none does.
    EpsConstraint(Bounds),
    /// Largest exclusive hypervolume contribution with respect to a reference point (two
    /// objectives only).
    Hypervolume(Reference),
    /// Minimize `max_i w_i f_i + rho sum_i w_i f_i` (augmented Tchebycheff).
    Tchebycheff(Rho),
}

/// A finite hypervolume reference point, in the chosen [`Scale`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "[f64; 2]", into = "[f64; 2]")]
pub struct Reference([f64; 2]);

impl TryFrom<[f64; 2]> for Reference {
    type Error = OptimizeError;
    fn try_from([a, m]: [f64; 2]) -> Result<Self, OptimizeError> {
        if a.is_finite() && m.is_finite() {
            Ok(Reference([a, m]))
        } else {
            Err(OptimizeError::Reference(a, m))
        }
    }
}

impl From<Reference> for [f64; 2] {
    fn from(r: Reference) -> Self {
        r.0
    }
}

impl Reference {
    /// The point's coordinates (first objective, second objective).
    pub fn get(self) -> [f64; 2] {
        self.0
    }
}

/// The augmentation factor rho of the Tchebycheff scalarization, finite and >= 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Rho(f64);

impl TryFrom<f64> for Rho {
    type Error = OptimizeError;
    fn try_from(rho: f64) -> Result<Self, OptimizeError> {
        if rho.is_finite() && rho >= 0.0 {
            Ok(Rho(rho))
        } else {
            Err(OptimizeError::Rho(rho))
        }
    }
}

impl From<Rho> for f64 {
    fn from(r: Rho) -> f64 {
        r.0
    }
}

impl Strategy {
    /// The paper's epsilon-constraint, ASR at most `asr_max`.
    pub fn eps_constraint(asr_max: f64) -> Result<Strategy, OptimizeError> {
        Ok(Strategy::EpsConstraint(Bounds::asr(asr_max)?))
    }

    /// Hypervolume contribution with respect to `reference`.
    pub fn hypervolume(reference: [f64; 2]) -> Result<Strategy, OptimizeError> {
        Ok(Strategy::Hypervolume(Reference::try_from(reference)?))
    }

    /// Augmented Tchebycheff with factor `rho`.
    pub fn tchebycheff(rho: f64) -> Result<Strategy, OptimizeError> {
        Ok(Strategy::Tchebycheff(Rho::try_from(rho)?))
    }

    /// The six strategies with the paper's defaults (ASR bound 0.1, reference (1, 1),
    /// rho 1e-6), in the paper's order.
    pub const PAPER: [Strategy; 6] = [
        Strategy::Utopia,
        Strategy::Weighted,
        Strategy::Elbow,
        Strategy::EpsConstraint(Bounds(BoundFields {
            asr_max: Some(0.1),
            epg_max: None,
            bits_max: None,
        })),
        Strategy::Hypervolume(Reference([1.0, 1.0])),
        Strategy::Tchebycheff(Rho(1e-6)),
    ];

    /// Short name: weighted, utopia, elbow, eps-constraint, hypervolume, tchebycheff.
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Weighted => "weighted",
            Strategy::Utopia => "utopia",
            Strategy::Elbow => "elbow",
            Strategy::EpsConstraint(_) => "eps-constraint",
            Strategy::Hypervolume(_) => "hypervolume",
            Strategy::Tchebycheff(_) => "tchebycheff",
        }
    }

    /// The strategy named `name`, with the paper's default settings.
    pub fn from_name(name: &str) -> Option<Strategy> {
        Strategy::PAPER.into_iter().find(|s| s.name() == name)
    }

    /// Whether the strategy reads the weights' values (not only which are positive).
    pub fn uses_weight_values(&self) -> bool {
        matches!(self, Strategy::Weighted | Strategy::Tchebycheff(_))
    }

    /// Checks that the strategy has a meaning for the weighted objectives.
    pub fn check_dimensions(&self, objectives: ObjectiveSet) -> Result<(), OptimizeError> {
        match self {
            Strategy::Elbow | Strategy::Hypervolume(_) if objectives.len() != 2 => {
                Err(OptimizeError::Dimensions {
                    strategy: self.name(),
                    objectives: objectives.len(),
                })
            }
            _ => Ok(()),
        }
    }

    /// The scalar this strategy minimizes at a point, for the strategies that are
    /// scalarizations (weighted and Tchebycheff); `None` for the geometric ones. It is
    /// nondecreasing in every objective, so objective lower bounds give score bounds.
    pub(crate) fn scalarize(&self, w: &Weights, p: &Objectives) -> Option<f64> {
        match *self {
            Strategy::Weighted => Some(w.weighted_sum(p)),
            Strategy::Tchebycheff(Rho(rho)) => {
                let terms = w.active().iter().map(|o| w.get(o) * p.get(o));
                let max = terms.clone().fold(f64::NEG_INFINITY, f64::max);
                Some(max + rho * terms.sum::<f64>())
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

/// Picks a point of `frontier` (in the weighted objectives, sorted as
/// [`crate::frontier_in`] returns it). Ties go to the earliest point.
///
/// ```
/// use ldp_core::FamilyParams;
/// use ldp_optimize::{select, Candidate, Objectives, Scale, Strategy, Weights};
/// let c = |omega, asr, mse| Candidate {
///     params: FamilyParams::SubsetSelection { omega },
///     objectives: Objectives { asr, mse, epg: 0.0, bits: 0.0 },
/// };
/// let front = [c(9, 0.05, 0.9), c(5, 0.2, 0.3), c(2, 0.6, 0.1)];
/// let pick = select(&front, Strategy::eps_constraint(0.1)?, &Weights::default(), Scale::Raw)?;
/// assert_eq!((pick.index, pick.fell_back), (0, false));
/// let none = select(&front, Strategy::eps_constraint(0.01)?, &Weights::default(), Scale::Raw)?;
/// assert!(none.fell_back); // nothing has ASR <= 0.01: the utopia point, and it says so
/// # Ok::<(), ldp_optimize::OptimizeError>(())
/// ```
pub fn select(
    frontier: &[Candidate],
    strategy: Strategy,
    weights: &Weights,
    scale: Scale,
) -> Result<Selection, OptimizeError> {
    let set = weights.active();
    strategy.check_dimensions(set)?;
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
        Strategy::Weighted | Strategy::Tchebycheff(_) => {
            chosen(argmin(pts.iter().map(|p| {
                strategy.scalarize(weights, p).expect("scalarization")
            })))
        }
        Strategy::Utopia => chosen(utopia(&pts, set)),
        Strategy::Elbow => chosen(elbow(&pts, set)),
        Strategy::EpsConstraint(bounds) => {
            let feasible = frontier
                .iter()
                .zip(&pts)
                .enumerate()
                .filter(|(_, (c, _))| bounds.admit(&c.objectives))
                .min_by(|a, b| a.1.1.mse.total_cmp(&b.1.1.mse).then(a.0.cmp(&b.0)));
            match feasible {
                Some((index, _)) => chosen(index),
                None => Ok(Selection {
                    index: utopia(&pts, set),
                    fell_back: true,
                }),
            }
        }
        Strategy::Hypervolume(reference) => chosen(hypervolume(&pts, set, reference.get())),
    }
}

/// Index of the smallest value; the first on ties.
pub(crate) fn argmin(values: impl Iterator<Item = f64>) -> usize {
    let mut best = (0, f64::INFINITY);
    for (i, v) in values.enumerate() {
        if v < best.1 {
            best = (i, v);
        }
    }
    best.0
}

fn utopia(pts: &[Objectives], set: ObjectiveSet) -> usize {
    argmin(
        pts.iter()
            .map(|p| set.iter().map(|o| p.get(o).powi(2)).sum::<f64>().sqrt()),
    )
}

/// The two objectives of a two-objective set.
fn pair(set: ObjectiveSet) -> (Objective, Objective) {
    let mut it = set.iter();
    (
        it.next().expect("two objectives"),
        it.next().expect("two objectives"),
    )
}

fn elbow(pts: &[Objectives], set: ObjectiveSet) -> usize {
    let (x, y) = pair(set);
    let (first, last) = (pts[0], pts[pts.len() - 1]);
    let (dx, dy) = (last.get(x) - first.get(x), last.get(y) - first.get(y));
    let norm = dx.hypot(dy);
    if norm == 0.0 {
        return 0;
    }
    // Perpendicular distance to the chord; maximize it (argmin of the negative).
    argmin(
        pts.iter().map(|p| {
            -((p.get(x) - first.get(x)) * dy - (p.get(y) - first.get(y)) * dx).abs() / norm
        }),
    )
}

fn hypervolume(pts: &[Objectives], set: ObjectiveSet, reference: [f64; 2]) -> usize {
    let (x, y) = pair(set);
    let [rx, ry] = reference;
    argmin(pts.iter().enumerate().map(|(i, p)| {
        let next_x = pts.get(i + 1).map_or(rx, |n| n.get(x).min(rx));
        let prev_y = if i == 0 {
            ry
        } else {
            pts[i - 1].get(y).min(ry)
        };
        let width = (next_x - p.get(x)).max(0.0);
        let height = (prev_y - p.get(y)).max(0.0);
        -(width * height)
    }))
}

/// A strategy by name, with the paper's default settings (trimmed, case-insensitive).
///
/// ```
/// use ldp_optimize::Strategy;
/// assert_eq!("eps-constraint".parse::<Strategy>()?, Strategy::eps_constraint(0.1)?);
/// assert!("best".parse::<Strategy>().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl std::str::FromStr for Strategy {
    type Err = ldp_core::UnknownName;
    fn from_str(s: &str) -> Result<Self, ldp_core::UnknownName> {
        ldp_core::names::parse(s, "strategy", &Strategy::PAPER, |s| s.name())
    }
}
