//! Audits of the memoized longitudinal protocols over t linked reports of one value:
//! one report spends `eps_1`, the memo bounds any number of them by `eps_perm`, and in
//! between t reports spend an exact budget that this module computes and measures.

use ldp_core::attack_surface::argmax_uniform;
use ldp_core::longitudinal::{Longitudinal, Reporter, Round};
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{AttackSurface, Mechanism, dispatch_memoized};
use serde::Serialize;

use crate::tally::{BATCH, count_batches};
use crate::{Audit, AuditConfig, AuditError, Plan, Statistic};

/// The most linked reports an audit considers (10^7).
pub const MAX_LINKED: u32 = 10_000_000;

/// The exact budget of t linked reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkedExact {
    /// The budget one report claims.
    pub eps_1: f64,
    /// The memo's budget, the bound of any number of reports.
    pub eps_perm: f64,
    /// `(t, eps_t)`: the worst likelihood ratio of t reports of one value.
    pub budgets: Vec<(u32, f64)>,
}

impl LinkedExact {
    /// The verdict on the budget `eps_t` of t linked reports: whether it exceeds the
    /// memo's `eps_perm` (which bounds any number of reports) beyond rounding (a relative
    /// 1e-12).
    pub fn flagged(&self, eps_t: f64) -> bool {
        eps_t > self.eps_perm * (1.0 + 1e-12)
    }
}

/// The worst likelihood ratio, over every input pair and every sequence of t reports, of
/// the t reports a device sends for one value, for each t in `collections`.
///
/// L-GRR: the reports' law depends on their counts, and the ratio is largest when all t
/// name x: `ln((p1 + q1 (k-1) r^-t) / (q1 + (p1 + q1 (k-2)) r^-t))` with `r = p2 / q2`.
/// Unary chains: the bits of different items are independent, so the ratio is the product
/// of the two items' columns' ratios, each a function of the number n of ones among t,
/// maximized over n = 0..=t. Tests check both against brute-force enumeration.
///
/// ```
/// use ldp_audit::exact_linked;
/// use ldp_core::longitudinal::{Longitudinal, LongitudinalProtocol};
/// use ldp_core::{DomainSize, Epsilon};
/// let l = Longitudinal::new(LongitudinalProtocol::LOsue, DomainSize::new(100)?, Epsilon::new(2.0)?, Epsilon::new(1.0)?)?;
/// let exact = exact_linked(&l, &[1, 10, 1000])?;
/// let eps: Vec<f64> = exact.budgets.iter().map(|b| b.1).collect();
/// assert!((eps[0] - 1.0).abs() < 1e-9);          // one report: eps_1
/// assert!(eps[1] > eps[0] && eps[2] <= 2.0 + 1e-9); // more reveal more, never beyond eps_perm
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn exact_linked(l: &Longitudinal, collections: &[u32]) -> Result<LinkedExact, AuditError> {
    if let Some(&t) = collections.iter().find(|&&t| t == 0 || t > MAX_LINKED) {
        return Err(AuditError::Collections(t));
    }
    let (first, second) = (l.first_round(), l.second_round());
    // L-GRR's memo is one of k values; L-OLH's and L-BLH's one of g hashed values under a
    // seed the reports share, and two items that the seed hashes apart are told apart as
    // two values of a GRR chain over g (those it hashes together, not at all).
    let budget = |t: u32| match l.memo_values() {
        Some(values) => grr_chain(first, second, f64::from(values), t),
        None => bits_chain(first, second, t),
    };
    Ok(LinkedExact {
        eps_1: l.eps_1().get(),
        eps_perm: l.eps_perm().get(),
        budgets: collections.iter().map(|&t| (t, budget(t))).collect(),
    })
}

fn grr_chain(first: Round, second: Round, k: f64, t: u32) -> f64 {
    let (p1, q1) = (first.p, first.q);
    let decay = (f64::from(t) * (second.q / second.p).ln()).exp(); // r^-t
    ((p1 + q1 * (k - 1.0) * decay) / (q1 + (p1 + q1 * (k - 2.0)) * decay)).ln()
}

fn bits_chain(first: Round, second: Round, t: u32) -> f64 {
    // ln P[a column with n ones of t | memo bit set w.p. a].
    let column = |a: f64, n: u32| {
        let (n, m) = (f64::from(n), f64::from(t - n));
        let set = a.ln() + n * second.p.ln() + m * (-second.p).ln_1p();
        let unset = (-a).ln_1p() + n * second.q.ln() + m * (-second.q).ln_1p();
        let hi = set.max(unset);
        hi + ((set - hi).exp() + (unset - hi).exp()).ln()
    };
    let (min, max) = (0..=t)
        .map(|n| column(first.p, n) - column(first.q, n))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
            (lo.min(d), hi.max(d))
        });
    max - min
}

/// The distinguishing test on t linked reports: every trial memoizes the input afresh and
/// sends t reports of it. The likelihood-ratio event is "every report separates v1 from
/// v2" (supports v1 and not v2, [`AttackSurface::separates`]), whose ratio is the exact
/// budget of t reports; the guess is the linked attack's (the item with the most evidence
/// summed over the reports, the support count for the pure families, ties broken
/// uniformly).
pub fn audit_linked(l: &Longitudinal, t: u32, config: &AuditConfig) -> Result<Audit, AuditError> {
    if t == 0 || t > MAX_LINKED {
        return Err(AuditError::Collections(t));
    }
    if config.statistics.contains(&Statistic::FirstListed) {
        return Err(AuditError::Statistic {
            statistic: Statistic::FirstListed,
            reason: "this toolkit's reports are sorted lists: audit an external client for it",
        });
    }
    let plan = Plan::new(l.domain_size().get(), config)?;
    let counters = dispatch_memoized!(l, m => count_linked(&m, t, &plan))?;
    plan.finish(&counters, Some(exact_linked(l, &[t])?.budgets[0].1))
}

/// The counters of `plan` over trials of t linked reports of `reporter`'s users.
fn count_linked<P: Reporter>(reporter: &P, t: u32, plan: &Plan) -> Vec<u64>
where
    P::Mechanism: AttackSurface,
{
    let m = reporter.mechanism();
    let k = m.domain_size().get();
    let guess = plan.needs_guess();
    // Fewer trials per batch as t grows: each trial draws t reports.
    let batch = (BATCH / u64::from(t)).max(16);
    let Ok(counters) = count_batches(plan, batch, |i, b, n| {
        let x = plan.inputs()[i];
        let mut rng = stream_rng(plan.seed(), u64::from(x), Role::Genuine, b);
        let mut attacker = stream_rng(plan.seed(), u64::from(x), Role::Attacker, b);
        let mut counters = plan.counters();
        let pairs: Vec<(u32, u32)> = plan.pairs_of(i).collect();
        let mut separated = vec![true; pairs.len()];
        let (mut scores, mut scratch) = (vec![0.0; k as usize], Vec::new());
        for _ in 0..n {
            let state = reporter
                .start(x, &mut rng)
                .expect("audit inputs are in the domain");
            separated.fill(true);
            if guess {
                scores.fill(0.0);
            }
            for _ in 0..t {
                let report = reporter
                    .report(&state, &mut rng)
                    .expect("audit inputs are in the domain");
                for (sep, &(v1, v2)) in separated.iter_mut().zip(&pairs) {
                    *sep = *sep && m.separates(&report, v1, v2);
                }
                if guess {
                    m.add_evidence(&report, &mut scores, &mut scratch);
                }
            }
            let g = guess.then(|| argmax_uniform(scores.iter().copied(), &mut attacker));
            plan.count(
                &mut counters,
                i,
                |_, v1, v2| {
                    pairs
                        .iter()
                        .zip(&separated)
                        .any(|(&pair, &sep)| sep && pair == (v1, v2))
                },
                g,
            );
        }
        Ok::<_, std::convert::Infallible>(counters)
    });
    counters
}
