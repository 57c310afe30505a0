//! Pareto frontiers of candidates, in any set of objectives.

use ldp_core::FamilyParams;
use serde::{Deserialize, Serialize};

use crate::objective::{ObjectiveSet, Objectives};

/// One evaluated parameter value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The family parameter.
    pub params: FamilyParams,
    /// Its objective values.
    pub objectives: Objectives,
}

impl Candidate {
    /// The parameter as a number (omega, p, g or theta).
    pub fn param(&self) -> f64 {
        self.params.value().unwrap_or(f64::NAN)
    }
}

/// Lexicographic order on the set's objectives, in [`crate::Objective::ALL`] order.
fn order(set: ObjectiveSet, a: &Objectives, b: &Objectives) -> std::cmp::Ordering {
    set.iter().fold(std::cmp::Ordering::Equal, |acc, o| {
        acc.then(a.get(o).total_cmp(&b.get(o)))
    })
}

/// The non-dominated candidates in (ASR, MSE), sorted by increasing ASR (hence decreasing
/// MSE). Of candidates with identical objectives only the first (in input order) is kept.
///
/// ```
/// use ldp_core::FamilyParams;
/// use ldp_optimize::{frontier, Candidate, Objectives};
/// let c = |g, asr, mse| Candidate {
///     params: FamilyParams::LocalHashing { g },
///     objectives: Objectives { asr, mse, epg: 0.0, bits: 0.0 },
/// };
/// let front = frontier(&[c(2, 0.1, 5.0), c(3, 0.2, 5.0), c(4, 0.3, 1.0), c(5, 0.1, 5.0)]);
/// let kept: Vec<f64> = front.iter().map(|c| c.param()).collect();
/// assert_eq!(kept, [2.0, 4.0]); // g = 3 is dominated, g = 5 duplicates g = 2
/// ```
pub fn frontier(candidates: &[Candidate]) -> Vec<Candidate> {
    frontier_in(candidates, ObjectiveSet::ASR_MSE)
}

/// The non-dominated candidates in the objectives of `set`, sorted lexicographically by
/// them (for two objectives: by the first increasing, hence the second decreasing).
/// Identical points are kept once, the first in input order.
pub fn frontier_in(candidates: &[Candidate], set: ObjectiveSet) -> Vec<Candidate> {
    let mut idx: Vec<usize> = (0..candidates.len()).collect();
    // Stable sort: equal objectives keep their input order.
    idx.sort_by(|&a, &b| order(set, &candidates[a].objectives, &candidates[b].objectives));
    let mut out: Vec<Candidate> = Vec::new();
    let objectives: Vec<_> = set.iter().collect();
    if let [_, second] = objectives[..] {
        // Two objectives: one sweep, keeping strict improvements in the second.
        let mut best = f64::INFINITY;
        for i in idx {
            let c = candidates[i];
            if c.objectives.get(second) < best {
                best = c.objectives.get(second);
                out.push(c);
            }
        }
        return out;
    }
    // A point can only be dominated by (or equal to) one sorted before it.
    let dominates_or_equals =
        |a: &Objectives, b: &Objectives| objectives.iter().all(|&o| a.get(o) <= b.get(o));
    for i in idx {
        let c = candidates[i];
        if !out
            .iter()
            .any(|kept| dominates_or_equals(&kept.objectives, &c.objectives))
        {
            out.push(c);
        }
    }
    out
}
