//! Pareto frontiers of candidates, in two (ASR, MSE) or three (ASR, MSE, EPG) objectives.

use ldp_core::FamilyParams;
use serde::{Deserialize, Serialize};

use crate::objective::Objectives;

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

fn order(a: &Objectives, b: &Objectives) -> std::cmp::Ordering {
    a.asr
        .total_cmp(&b.asr)
        .then(a.mse.total_cmp(&b.mse))
        .then(a.epg.total_cmp(&b.epg))
}

/// The non-dominated candidates in (ASR, MSE), sorted by increasing ASR (hence decreasing
/// MSE). Of candidates with identical objectives only the first (in input order) is kept.
///
/// ```
/// use ldp_core::FamilyParams;
/// use ldp_optimize::{frontier, Candidate, Objectives};
/// let c = |g, asr, mse| Candidate {
///     params: FamilyParams::LocalHashing { g },
///     objectives: Objectives { asr, mse, epg: 0.0 },
/// };
/// let front = frontier(&[c(2, 0.1, 5.0), c(3, 0.2, 5.0), c(4, 0.3, 1.0), c(5, 0.1, 5.0)]);
/// let kept: Vec<f64> = front.iter().map(|c| c.param()).collect();
/// assert_eq!(kept, [2.0, 4.0]); // g = 3 is dominated, g = 5 duplicates g = 2
/// ```
pub fn frontier(candidates: &[Candidate]) -> Vec<Candidate> {
    let mut idx: Vec<usize> = (0..candidates.len()).collect();
    // Stable sort: equal objectives keep their input order.
    idx.sort_by(|&a, &b| order(&candidates[a].objectives, &candidates[b].objectives));
    let mut out: Vec<Candidate> = Vec::new();
    let mut best_mse = f64::INFINITY;
    for i in idx {
        let c = candidates[i];
        if c.objectives.mse < best_mse {
            best_mse = c.objectives.mse;
            out.push(c);
        }
    }
    out
}

fn dominates_or_equals(a: &Objectives, b: &Objectives) -> bool {
    a.asr <= b.asr && a.mse <= b.mse && a.epg <= b.epg
}

/// The non-dominated candidates in (ASR, MSE, EPG), sorted by increasing ASR; identical
/// points are kept once.
pub fn frontier_3d(candidates: &[Candidate]) -> Vec<Candidate> {
    let mut idx: Vec<usize> = (0..candidates.len()).collect();
    idx.sort_by(|&a, &b| order(&candidates[a].objectives, &candidates[b].objectives));
    // A point can only be dominated by one sorted before it.
    let mut out: Vec<Candidate> = Vec::new();
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
