//! Searching a parameter space for the best point of a scalar score, optionally under
//! upper bounds on objectives: by a full scan, or, on the integer spaces of ASS and ALH,
//! by branch and bound with the interval bounds of [`crate::bounds`].
//!
//! # Same answer as the scan
//! The scan evaluates every grid point in order and keeps the first with the smallest
//! score among the admissible ones. Branch and bound keeps intervals of the integer range
//! in a queue ordered by a lower bound of their score, always splitting (or, below 64
//! points, scanning) the most promising one. It discards an interval when a lower bound
//! of a constrained objective exceeds its bound, and stops when the smallest lower bound
//! left exceeds the best score found by a relative margin of 1e-12 (far above the
//! rounding of either). Every point it never evaluates therefore scores strictly worse
//! than the answer, or is inadmissible, and among the evaluated points it applies the
//! scan's own rule (smallest score, then smallest parameter): it returns exactly the
//! scan's point. The tests of this crate check it against the scan on the paper's whole
//! grid and on random settings.
//!
//! The cost is about `64 log2(n)` evaluations near each local minimum instead of n: the
//! paper's ALH space at eps = 20 (485 million values) takes a few hundred.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::objective::Objectives;

/// Points per leaf, scanned in full.
const LEAF: u32 = 64;

/// Relative margin by which a bound must exceed the incumbent to prune.
const MARGIN: f64 = 1e-12;

/// The best point found: its parameter, objectives and score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Best {
    pub(crate) x: u32,
    pub(crate) objectives: Objectives,
    pub(crate) score: f64,
}

/// What the search minimizes.
pub(crate) struct Problem<'a> {
    /// The objectives at a point.
    pub(crate) eval: &'a dyn Fn(u32) -> Objectives,
    /// The score to minimize; nondecreasing in every objective.
    pub(crate) score: &'a dyn Fn(&Objectives) -> f64,
    /// Whether a point meets the constraints.
    pub(crate) admit: &'a dyn Fn(&Objectives) -> bool,
    /// Lower bounds of the objectives over `a..=b`, or `None` to scan.
    pub(crate) bounds: Option<&'a dyn Fn(u32, u32) -> Objectives>,
    /// Whether bounds prove that no point of `a..=b` is admissible.
    pub(crate) infeasible: &'a dyn Fn(&Objectives) -> bool,
}

impl Problem<'_> {
    /// The scan's rule on `a..=b`: the first admissible point of smallest score.
    fn scan(&self, a: u32, b: u32, best: &mut Option<Best>, evaluations: &mut usize) {
        for x in a..=b {
            *evaluations += 1;
            let objectives = (self.eval)(x);
            if !(self.admit)(&objectives) {
                continue;
            }
            let score = (self.score)(&objectives);
            if best.is_none_or(|b| score < b.score || (score == b.score && x < b.x)) {
                *best = Some(Best {
                    x,
                    objectives,
                    score,
                });
            }
        }
    }

    /// The scan's answer over `lo..=hi`, by branch and bound when bounds are given.
    pub(crate) fn minimize(&self, lo: u32, hi: u32) -> (Option<Best>, usize) {
        let mut best = None;
        let mut evaluations = 0;
        let Some(bounds) = self.bounds else {
            self.scan(lo, hi, &mut best, &mut evaluations);
            return (best, evaluations);
        };
        // Best first: the interval with the smallest score bound is explored next.
        let mut queue = BinaryHeap::new();
        queue.push(Node::new(lo, hi, f64::NEG_INFINITY));
        while let Some(Node { a, b, floor }) = queue.pop() {
            if let Some(incumbent) = best
                && floor.0 > incumbent.score + MARGIN * incumbent.score.abs()
            {
                break; // every interval left has a larger bound still
            }
            if b - a < LEAF {
                self.scan(a, b, &mut best, &mut evaluations);
                continue;
            }
            let mid = a + (b - a) / 2;
            for (x, y) in [(a, mid), (mid + 1, b)] {
                let lb = bounds(x, y);
                if !(self.infeasible)(&lb) {
                    queue.push(Node::new(x, y, (self.score)(&lb)));
                }
            }
        }
        (best, evaluations)
    }
}

/// An interval waiting in the queue, with the lower bound of its score.
#[derive(Debug, PartialEq, Eq)]
struct Node {
    a: u32,
    b: u32,
    floor: Floor,
}

impl Node {
    fn new(a: u32, b: u32, floor: f64) -> Self {
        Self {
            a,
            b,
            floor: Floor(floor),
        }
    }
}

/// A score bound ordered for a min-heap (smallest first, then leftmost).
#[derive(Debug, PartialEq)]
struct Floor(f64);

impl Eq for Floor {}

impl Ord for Node {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .floor
            .0
            .total_cmp(&self.floor.0)
            .then(other.a.cmp(&self.a))
    }
}

impl PartialOrd for Node {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Golden-section minimization of `f` on `[a, b]` to an interval width `tol`. Returns the
/// minimizer and the number of evaluations.
pub(crate) fn golden_section(
    f: impl Fn(f64) -> f64,
    mut a: f64,
    mut b: f64,
    tol: f64,
) -> (f64, usize) {
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
