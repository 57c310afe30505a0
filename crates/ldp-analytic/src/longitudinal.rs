//! Repeated collection: the expected success rate of the MAP attack that links t reports of
//! one unchanged value and combines their likelihoods (uniform prior), with and without
//! memoization, and the estimation variance of the memoized protocols.
//!
//! For every pure protocol one report's likelihood is `c(report) rho^[report supports x]`,
//! so t reports' likelihood is `rho^(s_x)` times a constant, where `s_x` counts the reports
//! supporting x: the MAP guess is the most supported item, ties broken uniformly. The same
//! holds with memoization (the likelihood is an increasing function of `s_x`: see
//! [`memoized`]). What differs between families is the joint law of the counts:
//!
//! - **independent counts** (UE and THE, whose bits are independent; LH under an ideal hash,
//!   whose other items collide with each report independently with probability 1/g; the
//!   unary memoized chains): `s_x` and the k - 1 other counts are independent, the others
//!   identically distributed, and the ASR is a sum over `s_x = c` of
//!   `P[s_x = c] ((F(c-1) + f(c))^k - F(c-1)^k) / (k f(c))`, the expectation of
//!   `1 / (1 + ties)` over the others (`F`, `f`: their CDF and pmf). Exact, O(t).
//! - **multinomial counts** (GRR, SS with omega = 1, L-GRR's second round): given `s_x = c`
//!   the other k - 1 counts share `n = t - c` reports uniformly. The expectation over them
//!   is a coefficient of a generating function, computed exactly with Poisson-scaled
//!   truncated polynomials: O(t^2 log k) per value of c, summing positive
//!   terms only. Values of c whose probability is below 1e-18 are skipped.
//!
//! Every weight is evaluated in logs from `ln n!` of size up to `t ln t`, so results carry an
//! absolute error of about `1e-16 t ln t` (1e-12 at t = 1000): `1 - ASR` below that is noise.
//! - SS with omega > 1 (the counts of one report's subset are dependent) and SHE (continuous
//!   reports) have no closed form here: `ldp-attack` estimates them by seeded Monte Carlo.
//!
//! As t grows without memoization the ASR tends to 1, the error falling as
//! `exp(-t C)` up to a polynomial factor ([`error_exponent`]); with memoization it tends to
//! the first round's one-shot ASR at eps_perm ([`memoized_limit`]).

use ldp_core::longitudinal::{Longitudinal, Round};
use ldp_core::{DomainSize, Spec, dispatch_family};

use crate::asr;
use crate::family::ClosedForms;

/// Terms of the outer sum below this probability are skipped (see the module docs).
const NEGLIGIBLE: f64 = 1e-18;

/// The largest number of collections the `ldp` tool and the Python package accept. The
/// functions here take any t, but GRR's and L-GRR's exact forms grow faster than t^2 where
/// the own count overlaps the others' (k = 100 on one core: 0.007 s at t = 365, 0.13 s at
/// 3000, 1.3 s at 10 000; at most 2 s at 10 000 for k from 3 to 10 000 and eps from 0.01
/// to 3); the unary and LH forms are O(t).
pub const MAX_COLLECTIONS: u32 = 10_000;

/// A number of collections outside `1..=`[`MAX_COLLECTIONS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CollectionsError {
    /// No report at all.
    #[error("the number of collections must be at least 1, got 0")]
    Zero,
    /// More than [`MAX_COLLECTIONS`].
    #[error(
        "at most {MAX_COLLECTIONS} collections (the exact forms grow faster than t^2 for GRR), got {0}"
    )]
    TooMany(u32),
    /// A list of more than [`MAX_COLLECTION_VALUES`] values.
    #[error(
        "at most {MAX_COLLECTION_VALUES} numbers of collections in one request (each is one measurement or closed form of its own), got {0}"
    )]
    TooManyValues(usize),
}

/// The most numbers of collections one request lists: each costs a measurement of every
/// user (or a closed form) of its own, so `1,2,...,10000` would run for hours.
pub const MAX_COLLECTION_VALUES: usize = 1000;

/// Checks that every number of collections lies in `1..=`[`MAX_COLLECTIONS`], the range
/// the `ldp` tool, the Python package and `ldp_optimize::TuneRequest` accept.
///
/// ```
/// use ldp_analytic::longitudinal::{check_collections, CollectionsError, MAX_COLLECTIONS};
/// assert_eq!(check_collections(&[1, 365, MAX_COLLECTIONS]), Ok(()));
/// assert_eq!(check_collections(&[30, 0]), Err(CollectionsError::Zero));
/// assert_eq!(check_collections(&[20_000]), Err(CollectionsError::TooMany(20_000)));
/// let every_day: Vec<u32> = (1..=10_000).collect();
/// assert_eq!(check_collections(&every_day), Err(CollectionsError::TooManyValues(10_000)));
/// ```
pub fn check_collections(collections: &[u32]) -> Result<(), CollectionsError> {
    if collections.len() > MAX_COLLECTION_VALUES {
        return Err(CollectionsError::TooManyValues(collections.len()));
    }
    if collections.contains(&0) {
        return Err(CollectionsError::Zero);
    }
    match collections.iter().find(|&&t| t > MAX_COLLECTIONS) {
        Some(&t) => Err(CollectionsError::TooMany(t)),
        None => Ok(()),
    }
}

/// Exact expected ASR after `t >= 1` linked reports of one value, one-shot protocol (no
/// memoization), uniform prior; `None` where no exact form is implemented (SS with
/// omega > 1, SHE). Local hashing is evaluated under an ideal hash, so `t = 1` gives
/// [`crate::local_hash::asr_exact`], not the paper's approximation; every other family's `t = 1`
/// value is its one-shot [`asr::expected`].
///
/// ```
/// use ldp_analytic::longitudinal::asr_after;
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let oue = Spec::classic(Protocol::Oue, DomainSize::new(100)?, Epsilon::new(1.0)?)?;
/// let (one, month) = (asr_after(&oue, 1).unwrap(), asr_after(&oue, 30).unwrap());
/// assert!(one < 0.02 && month > 0.5); // a month of daily reports gives the value away
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn asr_after(spec: &Spec, t: u32) -> Option<f64> {
    let (k, eps) = (spec.k(), spec.eps());
    let asr = dispatch_family!(spec.params(), F, param => F::asr_after(k, eps, param, t));
    // Rounding (about 1e-16 t ln t) must not print a probability above 1.
    asr.map(|a| a.clamp(0.0, 1.0))
}

/// Exact expected ASR after `t >= 1` linked reports of one memoized value, uniform prior.
///
/// The attacker's likelihood of x is increasing in the number of reports supporting x:
/// for L-GRR it is `(p1 - q1) r^(s_x) + q1 sum_m r^(s_m)` with `r = p2 / q2`; for the unary
/// chains each bit's factor is `(p1 R + 1 - p1) / (q1 R + 1 - q1)` with R the ratio of the
/// bit's counts under a memoized one and zero, increasing in R. So the MAP guess is the
/// most supported item. For L-GRR, given the memo m the guess is m with probability
/// `A = ` GRR's t-report ASR at `p2`, and otherwise uniform over the k - 1 others:
/// `ASR = p1 A + (1 - p1)(1 - A) / (k - 1)`. For the unary chains the counts are
/// independent, each a mixture of two binomials. L-OLH and L-BLH keep one seed, so the
/// reports say nothing beyond the hashed value: the attacker finds the memo's hashed value
/// as L-GRR's over g values, then picks uniformly among the items sharing it, which under
/// an ideal hash succeeds with `E[1/(1 + Bin(k - 1, 1/g))] = g (1 - (1 - 1/g)^k) / k`.
/// That leaves out the event that the most supported hashed value is no item's hash (the
/// guess then falls to the next value), of probability at most `(g - 1)(1 - 1/g)^(k-1)`:
/// an approximation when g is not small against k.
///
/// At `t = 1` this is the one-shot ASR of the chained pure protocol.
pub fn memoized(l: &Longitudinal, t: u32) -> f64 {
    let (k, Round { p: p1, q: q1 }, second) = (l.domain_size(), l.first_round(), l.second_round());
    let asr = if l.reports_items() {
        let a = multinomial(k, t, second.p);
        p1 * a + (1.0 - p1) * (1.0 - a) / (k.as_f64() - 1.0)
    } else if let Some(g) = l.hash_range() {
        let values = DomainSize::new(g).expect("a hash range is at least 2");
        let a = multinomial(values, t, second.p);
        let hit = p1 * a + (1.0 - p1) * (1.0 - a) / (f64::from(g) - 1.0);
        hit * shared_hash(k, g)
    } else {
        let (kept, added) = (binomial(t, second.p), binomial(t, second.q));
        let mix = |w: f64| -> Vec<f64> {
            kept.iter()
                .zip(&added)
                .map(|(a, b)| w * a + (1.0 - w) * b)
                .collect()
        };
        independent(k, &mix(p1), &mix(q1))
    };
    asr.clamp(0.0, 1.0)
}

/// The limit of [`memoized`] as t grows: the attacker learns the memo, and guesses as from
/// one first-round report at eps_perm (L-GRR: p1; the unary chains: UE's one-shot ASR with
/// the first round's (p1, q1)).
pub fn memoized_limit(l: &Longitudinal) -> f64 {
    let Round { p, q } = l.first_round();
    if l.reports_items() {
        p
    } else if let Some(g) = l.hash_range() {
        p * shared_hash(l.domain_size(), g)
    } else {
        asr::ones(l.domain_size(), p, q)
    }
}

/// `E[1 / (1 + B)]` for `B ~ Bin(k - 1, 1/g)`: the chance of picking the true item
/// uniformly among the items that share its hash under one seed (an ideal hash),
/// `g (1 - (1 - 1/g)^k) / k`.
fn shared_hash(k: DomainSize, g: u32) -> f64 {
    let (k, g) = (k.as_f64(), f64::from(g));
    -(k * (-1.0 / g).ln_1p()).exp_m1() * g / k
}

/// The rate C at which the attack's error `1 - ASR_t` falls without memoization,
/// `-ln(1 - ASR_t) / t -> C`: for the comparison of the true item with one other, whose
/// per-report supports are (1, 0) with probability `P10` and (0, 1) with `P01`, Chernoff's
/// bound is tight and `C = -ln(1 - (sqrt(P10) - sqrt(P01))^2)`; the k - 2 further
/// competitors change only the polynomial factor. `None` for SHE.
pub fn error_exponent(spec: &Spec) -> Option<f64> {
    let (k, eps) = (spec.k(), spec.eps());
    let (p10, p01) =
        dispatch_family!(spec.params(), F, param => F::pairwise_support(k, eps, param))?;
    Some(-(-(p10.sqrt() - p01.sqrt()).powi(2)).ln_1p())
}

/// The smallest t in `1..=max_t` after which the exact ASR ([`asr_after`]) exceeds
/// `level`; `None` when it does not within `max_t` or has no exact form. The ASR grows
/// with t (more linked reports never hurt the Bayes-optimal attack), so a doubling search
/// and bisection find it in O(log max_t) evaluations.
pub fn collections_to_exceed(spec: &Spec, level: f64, max_t: u32) -> Option<u32> {
    let above = |t: u32| asr_after(spec, t).map(|a| a > level);
    if above(1)? {
        return Some(1);
    }
    let (mut lo, mut hi) = (1u32, 2u32);
    while !above(hi.min(max_t))? {
        if hi >= max_t {
            return None;
        }
        lo = hi;
        hi = hi.saturating_mul(2);
    }
    hi = hi.min(max_t);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if above(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The approximate per-user variance of one collection's estimate for a memoized protocol,
/// `q_s (1 - q_s) / (p_s - q_s)^2` with the chained probabilities (Arcolezi et al. 2021).
/// L-GRR's chain is GRR at eps_1, so its variance is GRR's at eps_1.
pub fn memoized_variance(l: &Longitudinal) -> f64 {
    let Round { p, q } = l.chained();
    q * (1.0 - q) / (p - q).powi(2)
}

/// `Bin(t, p)`'s pmf on `0..=t`, each term computed in logs.
pub(crate) fn binomial(t: u32, p: f64) -> Vec<f64> {
    let ln_fact = ln_factorials(t as usize);
    let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
    (0..=t as usize)
        .map(|c| {
            let ln_choose = ln_fact[t as usize] - ln_fact[c] - ln_fact[t as usize - c];
            let (a, b) = (c as f64, (t as usize - c) as f64);
            // 0 * ln 0 is 0: a certain outcome keeps probability one.
            let term = |n: f64, ln: f64| if n == 0.0 { 0.0 } else { n * ln };
            (ln_choose + term(a, ln_p) + term(b, ln_q)).exp()
        })
        .collect()
}

/// `ln n!` for n in `0..=max`, each to within an ulp or so (a running sum of logs would
/// drift by up to 1e-9 at n = 10^4, and the binomial weights with it).
fn ln_factorials(max: usize) -> Vec<f64> {
    (0..=max).map(|n| libm::lgamma(n as f64 + 1.0)).collect()
}

/// Independent supports (the true item w.p. p, each other w.p. q, per report): the exact
/// ASR of "guess the most supported item, ties uniform" after t reports.
pub(crate) fn independent_counts(k: DomainSize, t: u32, p: f64, q: f64) -> f64 {
    independent(k, &binomial(t, p), &binomial(t, q))
}

/// ASR of "guess the most supported item, ties uniform" when the true item's count has pmf
/// `own` and each of the k - 1 others, independently, pmf `other` (both on `0..=t`).
fn independent(k: DomainSize, own: &[f64], other: &[f64]) -> f64 {
    let k = k.as_f64();
    let mut below = 0.0; // F(c - 1) = P[other < c]
    let mut sum = 0.0;
    for (&pc, &f) in own.iter().zip(other) {
        if pc > 0.0 {
            sum += pc * tie_share(below, f, k);
        }
        below = (below + f).min(1.0);
    }
    sum
}

/// `E[1 / (1 + J)] P[no other above]` for k - 1 independent others, each below the true
/// count with probability `below` and equal to it with `equal`: `((below + equal)^k -
/// below^k) / (k equal)`, written without cancellation.
fn tie_share(below: f64, equal: f64, k: f64) -> f64 {
    if equal == 0.0 {
        return below.powf(k - 1.0);
    }
    if equal < below {
        // below^(k-1) ((1 + r)^k - 1) / (k r), r = equal / below < 1, in logs: below^(k-1)
        // may underflow while (1 + r)^k overflows.
        let r = equal / below;
        ((k - 1.0) * below.ln() + ln_exp_m1(k * r.ln_1p()) - (k * r).ln()).exp()
    } else {
        // (below + equal)^k (1 - (below / (below + equal))^k) / (k equal): no huge
        // (1 + r)^k times a vanishing below^(k-1) (which would be inf * 0).
        let s = below + equal;
        let lead = (k * s.ln() - (k * equal).ln()).exp();
        lead * -(k * (below / s).ln()).exp_m1()
    }
}

/// `ln(e^x - 1)` for `x > 0`, without overflow.
fn ln_exp_m1(x: f64) -> f64 {
    if x > 30.0 {
        x + (-(-x).exp()).ln_1p()
    } else {
        x.exp_m1().ln()
    }
}

/// GRR-like counts: the true item is supported by each of t reports with probability p,
/// and a report that misses it supports one of the k - 1 others uniformly. Exact ASR of
/// "guess the most supported item, ties uniform".
///
/// Given `s_x = c`, the others' counts are multinomial: n = t - c reports in m = k - 1
/// bins. With `1 / (1 + J) = C(m, J)`-weights, `E[1{max <= c} / (1 + J)]` is
/// `sum_J C(m, J) / (J + 1) P[J bins hold c, the rest fewer]`, and by Poissonization
/// (each bin Poisson(n / m), conditioned on the total n)
/// `P[...] = n! e^n / n^n [w^n] (pi_c w^c)^J A(w)^(m - J)`, with `pi_j` the Poisson pmf and
/// `A(w) = sum_{j < c} pi_j w^j`. Every coefficient is a probability, so nothing overflows
/// and nothing cancels.
///
/// It costs O(t^2 log k) per own count left after pruning, about 2 s at t = 10^4 (k from
/// 10^2 to 10^4, eps up to 3), so values are remembered for the process: GRR, SS and ASS
/// at omega = 1 and L-GRR's rounds ask for the same (k, t, p) when tuned side by side.
pub(crate) fn multinomial(k: DomainSize, t: u32, p: f64) -> f64 {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Key = (u32, u32, u64);
    static SEEN: OnceLock<Mutex<HashMap<Key, f64>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let key = (k.get(), t, p.to_bits());
    if let Some(&asr) = seen.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return asr;
    }
    let asr = multinomial_uncached(k, t, p);
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    if seen.len() >= 4096 {
        seen.clear(); // a bound on memory, not an eviction policy: sweeps are short
    }
    seen.insert(key, asr);
    asr
}

fn multinomial_uncached(k: DomainSize, t: u32, p: f64) -> f64 {
    let own = binomial(t, p);
    let m = k.get() as usize - 1;
    let ln_fact = ln_factorials((t as usize).max(m));
    own.iter()
        .enumerate()
        .filter(|&(_, &pc)| pc >= NEGLIGIBLE)
        .map(|(c, &pc)| pc * others_share(c, t as usize - c, m, &ln_fact))
        .sum()
}

/// `E[1{every other count <= c} / (1 + #{others equal to c})]` for n reports spread
/// uniformly over m other items.
fn others_share(c: usize, n: usize, m: usize, ln_fact: &[f64]) -> f64 {
    others_share_pruned(c, n, m, ln_fact, true)
}

/// [`others_share`], with the bounds that skip negligible work on or (in tests) off.
fn others_share_pruned(c: usize, n: usize, m: usize, ln_fact: &[f64], prune: bool) -> f64 {
    if n == 0 {
        // Every other count is 0: a tie with all of them when c = 0.
        return if c == 0 { 1.0 / (m as f64 + 1.0) } else { 1.0 };
    }
    if c == 0 {
        return 0.0;
    }
    if n < c {
        return 1.0;
    }
    // Each other count is Binomial(n, 1/m). Multinomial counts are negatively associated,
    // so P[every other <= c] <= F(c)^m; and P[every other < c] >= 1 - m (1 - F(c - 1)).
    // Where either bound settles the share to within NEGLIGIBLE, skip the O(n^2)
    // generating function below: most of the own count's range lies far from the others'.
    let (at_most_c, at_least_c) = binomial_tails(n, m, c, ln_fact);
    let prune = prune && m > 1;
    if prune && (m as f64) * at_most_c.ln() < NEGLIGIBLE.ln() {
        return 0.0;
    }
    if prune && (m as f64) * at_least_c < NEGLIGIBLE {
        return 1.0;
    }
    let lambda = n as f64 / m as f64;
    let ln_pi = |j: usize| -lambda + j as f64 * lambda.ln() - ln_fact[j];
    let a: Vec<f64> = (0..c.min(n + 1)).map(|j| ln_pi(j).exp()).collect();
    let ln_pi_c = ln_pi(c);
    // P[J = j] <= C(m, j) P[X >= c]^j (negative association again): larger J are skipped.
    let ln_at_least = at_least_c.ln();
    let j_max = (1..=m.min(n / c))
        .take_while(|&j| {
            !prune
                || ln_fact[m] - ln_fact[j] - ln_fact[m - j] + j as f64 * ln_at_least
                    >= NEGLIGIBLE.ln()
        })
        .last()
        .unwrap_or(0);
    // A^(m - j_max), then multiplied by A once per step down in J.
    let mut power = truncated_pow(&a, m - j_max, n);
    let mut total = 0.0;
    for j in (0..=j_max).rev() {
        if j < j_max {
            power = truncated_mul(&power, &a, n);
        }
        let rest = n - c * j;
        let coefficient = power.get(rest).copied().unwrap_or(0.0);
        if coefficient > 0.0 {
            let ln_weight = ln_fact[m] - ln_fact[j] - ln_fact[m - j] - ((j + 1) as f64).ln()
                + j as f64 * ln_pi_c;
            total += (ln_weight + coefficient.ln()).exp();
        }
    }
    let ln_scale = ln_fact[n] + n as f64 - n as f64 * (n as f64).ln();
    (total * ln_scale.exp()).min(1.0)
}

/// `(P[X <= c], P[X >= c])` for X ~ Binomial(n, 1/m).
fn binomial_tails(n: usize, m: usize, c: usize, ln_fact: &[f64]) -> (f64, f64) {
    let (ln_p, ln_q) = (-(m as f64).ln(), (-1.0 / m as f64).ln_1p());
    let pmf = |i: usize| {
        (ln_fact[n] - ln_fact[i] - ln_fact[n - i] + i as f64 * ln_p + (n - i) as f64 * ln_q).exp()
    };
    let at_most: f64 = (0..=c.min(n)).map(pmf).sum();
    let at_least: f64 = (c..=n).map(pmf).sum();
    (at_most.min(1.0), at_least.min(1.0))
}

/// `a * b` truncated to degree `deg`.
fn truncated_mul(a: &[f64], b: &[f64], deg: usize) -> Vec<f64> {
    let len = (a.len() + b.len() - 1).min(deg + 1);
    let mut out = vec![0.0; len];
    for (i, &x) in a.iter().enumerate().take(len) {
        if x == 0.0 {
            continue;
        }
        for (o, &y) in out[i..].iter_mut().zip(b) {
            *o += x * y;
        }
    }
    out
}

/// `a^e` truncated to degree `deg`, by squaring.
fn truncated_pow(a: &[f64], mut e: usize, deg: usize) -> Vec<f64> {
    let mut result = vec![1.0];
    let mut base = a[..a.len().min(deg + 1)].to_vec();
    while e > 0 {
        if e & 1 == 1 {
            result = truncated_mul(&result, &base, deg);
        }
        e >>= 1;
        if e > 0 {
            base = truncated_mul(&base, &base, deg);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds that skip work move no share by more than the generating function's own
    /// rounding (about 1e-12 from ln n! at n in the thousands; the bounds themselves are
    /// within NEGLIGIBLE), where they skip (far tails, both ends) and where they do not.
    #[test]
    fn pruning_changes_nothing_visible() {
        let ln_fact = ln_factorials(4000);
        let mut pruned_somewhere = false;
        for (n, m) in [(400, 9), (1500, 30), (3000, 99), (800, 499)] {
            let lambda = n / m;
            for c in (1..=n.min(6 * lambda + 40)).step_by(3) {
                let (fast, full) = (
                    others_share_pruned(c, n, m, &ln_fact, true),
                    others_share_pruned(c, n, m, &ln_fact, false),
                );
                assert!(
                    (fast - full).abs() <= 1e-11,
                    "n {n} m {m} c {c}: {fast} vs {full}"
                );
                pruned_somewhere |= (fast == 0.0 || fast == 1.0) && fast != full;
            }
        }
        assert!(pruned_somewhere, "the grid never reached a bound");
    }
}
