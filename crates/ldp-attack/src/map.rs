//! The Bayesian (MAP) reconstruction attack with an informative prior, and its exact
//! expected success rate where that is tractable.
//!
//! The paper's attack assumes a uniform prior; an attacker who knows the population
//! distribution guesses `argmax_x P[report | x] prior(x)` (paper Eq.
//! "bayes_attack_general_prior"), which can only do better.

use ldp_core::{FamilyParams, Mechanism, Spec};
use rand::{Rng, RngExt};

/// `argmax_x ln P[report | x] + ln prior(x)`, ties broken uniformly at random.
/// `log_prior[x]` may be `-inf` for impossible items. `scratch` is reusable memory.
pub fn map_guess<M: Mechanism, R: Rng + ?Sized>(
    mech: &M,
    report: &M::Report,
    log_prior: &[f64],
    scratch: &mut Vec<f64>,
    rng: &mut R,
) -> u32 {
    mech.log_likelihoods(report, scratch);
    let mut best = f64::NEG_INFINITY;
    let mut chosen = 0u32;
    let mut ties = 0u32;
    for (x, (&lp, &ll)) in log_prior.iter().zip(scratch.iter()).enumerate() {
        if lp == f64::NEG_INFINITY {
            continue;
        }
        let score = lp + ll;
        if score > best {
            (best, chosen, ties) = (score, x as u32, 1);
        } else if score == best {
            // Reservoir sampling over the maximizers.
            ties += 1;
            if rng.random_range(0..ties) == 0 {
                chosen = x as u32;
            }
        }
    }
    chosen
}

/// Natural log of a prior given as non-negative weights (normalized here).
pub fn log_prior(weights: &[f64]) -> Vec<f64> {
    let total: f64 = weights.iter().sum();
    weights.iter().map(|w| (w / total).ln()).collect()
}

/// The exact expected success rate of the MAP attack, `sum_y max_x prior(x) P[y | x]`
/// (ties do not matter: every maximizer has the same posterior), for the families whose
/// likelihood takes two values per report, `c_y rho` on the supported items and `c_y`
/// elsewhere: GRR, SS, UE and THE exactly, LH under an ideal (uniform, independent) hash.
/// `None` for SHE.
///
/// With the prior sorted decreasingly, `pi_(1) >= pi_(2) >= ...`, only two items can win:
/// the most probable supported item and the most probable unsupported one; grouping the
/// reports by the rank of those two gives an O(k) sum.
pub fn map_asr_exact(spec: &Spec, prior: &[f64]) -> Option<f64> {
    let total: f64 = prior.iter().sum();
    let mut pi: Vec<f64> = prior.iter().map(|w| w / total).collect();
    pi.sort_unstable_by(|a, b| b.total_cmp(a));
    let mech = spec.build();
    match spec.family() {
        FamilyParams::Grr => Some(subset_sum(&pi, 1, pstar(&mech))),
        FamilyParams::SubsetSelection { omega } => {
            Some(subset_sum(&pi, omega as usize, pstar(&mech)))
        }
        FamilyParams::UnaryEncoding { .. } | FamilyParams::ThresholdHistogram { .. } => {
            let (p, q) = pq(&mech);
            let rho = p * (1.0 - q) / ((1.0 - p) * q);
            Some((1.0 - p) / (1.0 - q) * product_sum(&pi, q, rho))
        }
        FamilyParams::LocalHashing { g } => {
            let (p, _) = pq(&mech);
            let g = f64::from(g);
            let q_other = (1.0 - p) / (g - 1.0);
            // Each of the g values' buckets holds every item independently w.p. 1/g.
            Some(q_other * g * product_sum(&pi, 1.0 / g, p / q_other))
        }
        FamilyParams::SummationHistogram => None,
    }
}

fn pq(mech: &ldp_core::AnyMechanism) -> (f64, f64) {
    use ldp_core::{AnyMechanism as A, PureProtocol};
    match mech {
        A::Grr(m) => (m.p_star(), m.q_star()),
        A::SubsetSelection(m) => (m.p_star(), m.q_star()),
        A::UnaryEncoding(m) => (m.p_star(), m.q_star()),
        A::LocalHashing(m) => (m.p_star(), m.q_star()),
        A::ThresholdHistogram(m) => (m.p_star(), m.q_star()),
        A::SummationHistogram(_) => (f64::NAN, f64::NAN),
    }
}

/// P[true item in the subset] of GRR/SS.
fn pstar(mech: &ldp_core::AnyMechanism) -> f64 {
    pq(mech).0
}

/// `E_S[max(rho pi_a(S), pi_b(S))]` for S holding each rank independently w.p. `incl`,
/// where a is the best-ranked member and b the best-ranked non-member.
fn product_sum(pi: &[f64], incl: f64, rho: f64) -> f64 {
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
fn subset_sum(pi: &[f64], omega: usize, p: f64) -> f64 {
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
