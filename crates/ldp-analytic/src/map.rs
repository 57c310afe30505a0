//! The exact expected success rate of the MAP reconstruction attack with an informative
//! prior, `sum_y max_x prior(x) P[y | x]` (paper Eq. "bayes_attack_general_prior"; ties
//! do not matter: every maximizer has the same posterior). The attack itself, measured on
//! reports, is `ldp_attack::map`.
//!
//! Tractable for the families whose likelihood takes two values per report, `c_y rho` on
//! the supported items and `c_y` elsewhere: GRR, SS, UE and THE exactly, LH under an ideal
//! (uniform, independent) hash. With the prior sorted decreasingly,
//! `pi_(1) >= pi_(2) >= ...`, only two items can win: the most probable supported item and
//! the most probable unsupported one; grouping the reports by the rank of those two gives
//! an O(k) sum.

use ldp_core::{Spec, dispatch_family};

use crate::family::ClosedForms;

/// The prior does not have one probability per item of the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the prior has {found} weights but the domain has k = {expected} items")]
pub struct PriorLength {
    /// k of the protocol.
    pub expected: usize,
    /// Probabilities given.
    pub found: usize,
}

/// The MAP attack's exact expected success rate for `spec` and a prior given as one
/// probability per item (non-negative, summing to one); `Ok(None)` where no tractable form
/// exists (SHE).
///
/// ```
/// use ldp_analytic::{asr, map};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let grr = Spec::classic(Protocol::Grr, DomainSize::new(4)?, Epsilon::new(1.0)?)?;
/// // Under a uniform prior the MAP attack is the paper's attack.
/// let uniform = map::asr_exact(&grr, &[0.25; 4])?.unwrap();
/// assert!((uniform - asr::expected(&grr, asr::LhAsr::Paper)).abs() < 1e-12);
/// // A skewed prior can only help.
/// assert!(map::asr_exact(&grr, &[0.7, 0.1, 0.1, 0.1])?.unwrap() > uniform);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn asr_exact(spec: &Spec, prior: &[f64]) -> Result<Option<f64>, PriorLength> {
    let (k, eps) = (spec.k(), spec.eps());
    if prior.len() != k.as_usize() {
        return Err(PriorLength {
            expected: k.as_usize(),
            found: prior.len(),
        });
    }
    let mut pi = prior.to_vec();
    pi.sort_unstable_by(|a, b| b.total_cmp(a));
    Ok(dispatch_family!(spec.params(), F, param => F::map_asr(k, eps, param, &pi)))
}

/// `E_S[max(rho pi_a(S), pi_b(S))]` for S holding each rank independently w.p. `incl`,
/// where a is the best-ranked member and b the best-ranked non-member.
pub(crate) fn product_sum(pi: &[f64], incl: f64, rho: f64) -> f64 {
    let top = pi[0];
    // Rank 1 in S: the value is rho pi_(1) whatever else S holds.
    let mut sum = incl * rho * top;
    // Rank 1 not in S, first member at rank i (or S empty).
    let mut none_before = 1.0 - incl;
    for &pi_i in &pi[1..] {
        sum += none_before * incl * (rho * pi_i).max(top);
        none_before *= 1.0 - incl;
    }
    sum + none_before * top
}

/// `sum_S P[S | x not in S] max(rho pi_a(S), pi_b(S))` over omega-subsets S, for SS
/// (GRR at omega = 1), with `rho = p (k - omega) / ((1 - p) omega)`.
pub(crate) fn subset_sum(pi: &[f64], omega: usize, p: f64) -> f64 {
    let k = pi.len();
    let ln_fact: Vec<f64> = std::iter::once(0.0)
        .chain((1..=k).scan(0.0, |acc, i| {
            *acc += (i as f64).ln();
            Some(*acc)
        }))
        .collect();
    let ln_choose = |n: usize, r: usize| ln_fact[n] - ln_fact[r] - ln_fact[n - r];
    let rho = p * (k - omega) as f64 / ((1.0 - p) * omega as f64);
    // P[S | x] for a subset S without x.
    let ln_c = (1.0 - p).ln() - ln_choose(k - 1, omega);
    let top = pi[0];
    let mut sum = 0.0;
    // Rank 1 in S; first non-member at rank j: ranks 1..j-1 in S, the rest among k - j.
    for j in 2..=omega + 1 {
        sum += (ln_c + ln_choose(k - j, omega + 1 - j)).exp() * rho * top;
    }
    // Rank 1 not in S; first member at rank i.
    for i in 2..=k - omega + 1 {
        sum += (ln_c + ln_choose(k - i, omega - 1)).exp() * (rho * pi[i - 1]).max(top);
    }
    sum
}
