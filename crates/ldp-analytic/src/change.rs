//! Detecting that a user's value changed, from linked daily reports (the paper's
//! Example 2): closed forms of the change detector of `ldp_attack::change` where the
//! report determines the guess simply: a report of one value (GRR and L-GRR), a hashed
//! value under one seed (L-OLH, L-BLH, [`hashed_memo`]), dBitFlipPM's memos per class
//! ([`bit_flip_pm`]), and a fresh report of any family whose law ignores the domain's
//! labels ([`fresh`]).
//!
//! The attacker links a user's reports and reconstructs each day's value from that day's
//! report (the MAP guess, uniform prior); it flags day t when the guess differs from day
//! t - 1's, keeping the guess when a memo is replayed (an identical report of a memoized
//! collection). The detector is judged by
//!
//! - `detect = P[flag | x_t != x_{t-1}]` (its recall), and
//! - `false_alarm = P[flag | x_t = x_{t-1}]`,
//!
//! and, when the value changes on a day with probability r, by its precision
//! `r detect / (r detect + (1 - r) false_alarm)` ([`ChangeRates::precision`]).
//!
//! When a report is one value (GRR, L-GRR's second round, a permanent GRR memo), the MAP
//! guess is the reported value, so a flag is a changed report. Memos are drawn per value
//! (RAPPOR's rule; a value that comes back reuses its memo), so the two days' reports
//! come from one memo when the value is unchanged and from independent memos of two
//! distinct values when it changed. With `P(y | x)` the report's law given the value
//! (keep `p`, each other value `q`):
//!
//! | collection | false_alarm | detect |
//! |---|---|---|
//! | fresh GRR at eps | `1 - p^2 - (k - 1) q^2` | `1 - 2 p q - (k - 2) q^2` |
//! | fresh SS, UE, LH, HE, THE, dBitFlip ([`fresh`]) | `1 - a^2 - (k - 1) b^2` | `1 - 2 a b - (k - 2) b^2` |
//! | L-GRR (memo, then refreshed) | `1 - p2^2 - (k - 1) q2^2` | `1 - 2 p_s q_s - (k - 2) q_s^2` |
//! | permanent GRR memo at eps_perm | 0 | `1 - 2 p1 q1 - (k - 2) q1^2` |
//! | dBitFlipPM ([`bit_flip_pm`]) | 0 | at d = 1, `(2/k) (p^2 + q^2) (1 - 1/k)`; any d in [`bit_flip_pm`] |
//! | L-OLH, L-BLH ([`hashed_memo`]) | about `1 - p2^2 - (g - 1) q2^2` | about `FA/g + (1 - 1/g)(1 - 2 p_c q_c - (g - 2) q_c^2)` |
//!
//! (`p_s, q_s`: the chained law, [`Longitudinal::chained`]; `a` the exact ASR,
//! `b = (1 - a) / (k - 1)`). A permanent memo never raises a false alarm, so every flag is
//! a change: Example 2's point, that memoization which replays a report makes the change
//! itself visible. Memos of reports of several items (UE, the memoized unary chains) tie,
//! and two memos of distinct values can be equal; they have no closed form here and are
//! measured.
//!
//! ```
//! use ldp_analytic::change;
//! use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
//! let grr = Spec::classic(Protocol::Grr, DomainSize::new(10)?, Epsilon::new(2.0)?)?;
//! let fresh = change::one_shot(&grr).unwrap();
//! let replayed = change::permanent(&grr).unwrap();
//! assert_eq!(replayed.false_alarm, 0.0);
//! assert!((fresh.detect - replayed.detect).abs() < 1e-12); // one report each way
//! assert_eq!(replayed.precision(0.05), Some(1.0));
//! assert!(fresh.precision(0.05).unwrap() < 0.1);           // fresh noise drowns changes
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::asr::LhAsr;
use crate::longitudinal::binomial;
use ldp_core::families::bit_flip::keep_probability;
use ldp_core::longitudinal::{Longitudinal, Round};
use ldp_core::{DomainSize, Epsilon, Family, FamilyParams, Spec};

/// The change detector's two conditional flag rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangeRates {
    /// `P[flag | the value changed]`: the detector's recall.
    pub detect: f64,
    /// `P[flag | the value is unchanged]`.
    pub false_alarm: f64,
}

impl ChangeRates {
    /// `P[flag]` when the value changes on a day with probability `change`.
    pub fn flag_rate(&self, change: f64) -> f64 {
        change * self.detect + (1.0 - change) * self.false_alarm
    }

    /// The share of flags that are changes, when the value changes on a day with
    /// probability `change`; `None` when nothing is ever flagged.
    pub fn precision(&self, change: f64) -> Option<f64> {
        let flags = self.flag_rate(change);
        (flags > 0.0).then(|| change * self.detect / flags)
    }
}

/// Rates when two days' reports are one value each, drawn from one memo with law `same`
/// when the value is unchanged and from two memos of distinct values with law `apart`.
fn one_value(k: f64, same: Round, apart: Round) -> ChangeRates {
    let equal_same = same.p * same.p + (k - 1.0) * same.q * same.q;
    let equal_apart = 2.0 * apart.p * apart.q + (k - 2.0) * apart.q * apart.q;
    ChangeRates {
        detect: (1.0 - equal_apart).clamp(0.0, 1.0),
        false_alarm: (1.0 - equal_same).clamp(0.0, 1.0),
    }
}

/// A fresh report every day (no memo): GRR exactly, and every family whose law is the
/// same under any relabelling of the domain through [`fresh`] at its exact ASR
/// (`None` for the others: HR, HM, FLH and the sketches).
pub fn one_shot(spec: &Spec) -> Option<ChangeRates> {
    if let Some(law) = grr_law(spec) {
        return Some(one_value(spec.k().as_f64(), law, law));
    }
    spec.family()
        .relabelling_invariant()
        .then(|| fresh(spec.k(), crate::asr::expected(spec, LhAsr::Exact)))
}

/// Fresh reports of a family whose law is the same under any relabelling of the domain
/// ([`Family::relabelling_invariant`]), whose attack succeeds with probability `asr`: each
/// day's guess is `x` with probability `a = asr` and each other item with
/// `b = (1 - a) / (k - 1)`, independently across days, so
///
/// ```text
/// false_alarm = 1 - a^2 - (k - 1) b^2,   detect = 1 - 2 a b - (k - 2) b^2
/// ```
///
/// Both are functions of the ASR alone: the detector's precision rises with it from the
/// change rate itself (at `a = 1/k`), so bounding one report's ASR bounds the precision
/// ([`asr_for_precision`]). Derived here, and checked against the measured detector,
/// which reconstructs a fresh report on its own each day (as Example 2's `x^_t`), also
/// when two days' reports happen to be identical.
pub fn fresh(k: DomainSize, asr: f64) -> ChangeRates {
    let kf = k.as_f64(); // at least 2
    let a = asr.clamp(0.0, 1.0);
    let b = (1.0 - a) / (kf - 1.0);
    one_value(kf, Round { p: a, q: b }, Round { p: a, q: b })
}

/// The largest ASR of one report at which the change detector on fresh reports
/// ([`fresh`]) flags changes with precision at most `precision`, when values change on a
/// day with probability `change_rate`: `None` when even random guessing (ASR `1/k`,
/// precision `change_rate`) is above the bound, and 1 when every ASR meets it. Found by
/// bisection (the precision rises with the ASR), to 1e-12.
///
/// ```
/// use ldp_analytic::change::{asr_for_precision, fresh};
/// use ldp_core::DomainSize;
/// let k = DomainSize::new(100)?;
/// let a = asr_for_precision(k, 0.1, 0.2).unwrap();
/// assert!((fresh(k, a).precision(0.1).unwrap() - 0.2).abs() < 1e-9);
/// assert_eq!(asr_for_precision(k, 0.1, 0.05), None); // below the change rate itself
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn asr_for_precision(k: DomainSize, change_rate: f64, precision: f64) -> Option<f64> {
    let at = |a: f64| fresh(k, a).precision(change_rate).unwrap_or(0.0);
    let floor = 1.0 / k.as_f64();
    if at(floor) > precision {
        return None;
    }
    if at(1.0) <= precision {
        return Some(1.0);
    }
    let (mut lo, mut hi) = (floor, 1.0);
    while hi - lo > 1e-12 {
        let mid = 0.5 * (lo + hi);
        if at(mid) <= precision {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// A permanent memo, replayed every day: GRR, and dBitFlipPM ([`bit_flip_pm`]); `None` for
/// other families.
pub fn permanent(spec: &Spec) -> Option<ChangeRates> {
    if let FamilyParams::DBitFlip { bits } = spec.params() {
        return Some(bit_flip_pm(spec.k(), spec.eps(), bits));
    }
    let law = grr_law(spec)?;
    Some(ChangeRates {
        false_alarm: 0.0,
        ..one_value(spec.k().as_f64(), law, law)
    })
}

/// dBitFlipPM with d bits: the user's d buckets S are drawn once and a d-bit memo kept per
/// class (the value in one of S's buckets, or in none), so a report changes only when the
/// value moves between classes, and then only when the two classes' memos differ. The
/// attacker guesses uniformly over the sampled buckets whose bit is 1, or over all k when
/// none is.
///
/// # Formula
///
/// `false_alarm = 0`. A change x -> x' has both values in S with probability
/// `d (d - 1) / (k (k - 1))`, one with `2 d (k - d) / (k (k - 1))`, and none (one class,
/// no flag) otherwise. Two distinct classes' memos are independent, and the day's guesses
/// are independent given two different reports, while an identical report keeps the
/// guess, so
///
/// ```text
/// P[no flag] = sum_v pi1(v) pi2(v) + sum_r P1(r) P2(r) (1 - s(r))
/// ```
///
/// with `pi` the guess's law under each class, `P(r)` the memo's law and `s(r)` the chance
/// that two guesses from r agree (1/m for m ones, 1/k for none). With `p = e^(eps/2) /
/// (e^(eps/2) + 1)`, `q = 1 - p` and `B(n, r)` a binomial, the guess of a memo of class j
/// lands on j with probability `a = p E[1/(1 + B(d-1, q))] + z/k`, on another sampled
/// bucket with `b = q (p E[1/(2 + B(d-2, q))] + q E[1/(1 + B(d-2, q))]) + z/k` and on an
/// unsampled one with `c = z/k` (`z = q p^(d-1)`, no bit set); the "none" class's on a
/// sampled bucket with `e = q E[1/(1 + B(d-1, q))] + p^d/k`, and elsewhere `p^d/k`. Two
/// memos agree bit by bit with weight `p q` on the bits that differ in law and `p^2 + q^2`
/// on the others (`B(., q^2/(p^2 + q^2))` ones among them). Derived here; at d = 1 it is
/// `(2/k) (p^2 + q^2) (1 - 1/k)`, and it is checked by enumerating every memo and against
/// the measured detector.
pub fn bit_flip_pm(k: DomainSize, eps: Epsilon, bits: u32) -> ChangeRates {
    // dBitFlip samples 1..=k buckets (`DBitFlip::new` checks it).
    let bits = bits.clamp(1, k.get());
    let p = keep_probability(eps);
    let q = 1.0 / (1.0 + (eps.get() / 2.0).exp());
    let (kf, d) = (k.as_f64(), f64::from(bits));
    // E[g(B)] for B ~ Bin(n, r).
    let mean = |n: u32, r: f64, g: &dyn Fn(u32) -> f64| -> f64 {
        binomial(n, r)
            .iter()
            .zip(0u32..)
            .map(|(w, b)| w * g(b))
            .sum()
    };
    let from = |c: u32| move |b: u32| 1.0 / f64::from(c + b);
    // The guess's law: a memo of the value's own class, then the class "none".
    let none_set_own = q * p.powf(d - 1.0);
    let own = p * mean(bits - 1, q, &from(1)) + none_set_own / kf;
    let other = if bits >= 2 {
        let rest = bits - 2;
        q * (p * mean(rest, q, &from(2)) + q * mean(rest, q, &from(1))) + none_set_own / kf
    } else {
        0.0
    };
    let unsampled = none_set_own / kf;
    let none_set = p.powf(d);
    let none_sampled = q * mean(bits - 1, q, &from(1)) + none_set / kf;
    let none_unsampled = none_set / kf;
    // Identical memos keep the guess: weight 1 - s(r) on each report both classes give.
    let keep = |m: u32| {
        if m == 0 {
            1.0 - 1.0 / kf
        } else {
            1.0 - 1.0 / f64::from(m)
        }
    };
    let (agree, tie) = (p * p + q * q, q * q / (p * p + q * q));
    let tie_two = if bits >= 2 {
        let rest = bits - 2;
        let weighted = |a: u32| mean(rest, tie, &|b| keep(a + b));
        (p * q).powi(2) * agree.powf(d - 2.0) * (weighted(0) + 2.0 * weighted(1) + weighted(2))
    } else {
        0.0
    };
    let tie_one = p
        * q
        * agree.powf(d - 1.0)
        * (mean(bits - 1, tie, &keep) + mean(bits - 1, tie, &|b| keep(1 + b)));
    let stay_two =
        2.0 * own * other + (d - 2.0) * other * other + (kf - d) * unsampled * unsampled + tie_two;
    let stay_one =
        (own + (d - 1.0) * other) * none_sampled + (kf - d) * unsampled * none_unsampled + tie_one;
    let pairs = kf * (kf - 1.0);
    let detect =
        d * (d - 1.0) / pairs * (1.0 - stay_two) + 2.0 * d * (kf - d) / pairs * (1.0 - stay_one);
    ChangeRates {
        detect: detect.clamp(0.0, 1.0),
        false_alarm: 0.0,
    }
}

/// A memo refreshed every day: L-GRR, and L-OLH and L-BLH ([`hashed_memo`]); `None` for
/// the unary chains.
pub fn memoized(l: &Longitudinal) -> Option<ChangeRates> {
    if let Some(g) = l.hash_range() {
        return Some(hashed_memo(
            l.domain_size(),
            g,
            l.first_round(),
            l.second_round(),
        ));
    }
    l.reports_items()
        .then(|| one_value(l.domain_size().as_f64(), l.second_round(), l.chained()))
}

/// LOLOHA's L-OLH and L-BLH: one seed per user, a memo per hashed value drawn by the first
/// round (GRR over the g values, `first`) and refreshed every day by the second (`second`);
/// the attacker guesses uniformly among the items that hash to the reported value under
/// the user's seed, or among all k when none does. Exact under an ideal hash (the k items'
/// hash values independent and uniform over g for a given seed).
///
/// # Formula
///
/// The guess moves exactly when the reported value does, unless a guess drawn among all k
/// (an empty support) hits the other: probability 1/k when either day's value has no
/// item. With `s` the probability that two reports are equal, and the reported values'
/// supports empty with probability `E1 = (1 - 1/g)^n` (one) and `E2 = (1 - 2/g)^n` (two
/// values, both), n the items other than the user's:
///
/// ```text
/// P[no flag] = s + (1/k) (one_special E1 + none_special (2 E1 - E2))
/// ```
///
/// where `one_special` and `none_special` are the probabilities that the two (distinct)
/// reported values hold one or none of the user's hashed values. Unchanged, both days
/// refresh one memo (n = k - 1, `s = p2^2 + (g - 1) q2^2`); changed, the two values share
/// a hash with probability 1/g (one memo, n = k - 2) and otherwise report through two
/// independent chains `(p_c, q_c) = first.then(second)` (`s = 2 p_c q_c + (g - 2) q_c^2`).
/// Derived here, and checked against the measured detector.
pub fn hashed_memo(k: DomainSize, g: u32, first: Round, second: Round) -> ChangeRates {
    let (kf, gf) = (k.as_f64(), f64::from(g));
    let empty = |others: f64| ((1.0 - 1.0 / gf).powf(others), (1.0 - 2.0 / gf).powf(others));
    let chain = first.then(second);
    // One memo refreshed on both days: P[equal], and the probabilities that two distinct
    // reported values hold the user's hashed value once or not at all.
    let one_memo = |others: f64| -> f64 {
        let equal = second.p * second.p + (gf - 1.0) * second.q * second.q;
        let both_own = first.p * second.p * second.p + (1.0 - first.p) * second.q * second.q;
        let one = 2.0 * (chain.p - both_own);
        let none = (1.0 - equal) - one;
        let (e1, e2) = empty(others);
        equal + (one * e1 + none * (2.0 * e1 - e2)) / kf
    };
    // Two independent chains from two distinct hashed values a, a'.
    let two_memos = {
        let (pc, qc) = (chain.p, chain.q);
        let equal = 2.0 * pc * qc + (gf - 2.0) * qc * qc;
        let inside = pc + qc; // P[a report lands on a or a']
        let one = 2.0 * inside * (1.0 - inside);
        let none = (1.0 - inside) * (1.0 - inside) - (gf - 2.0) * qc * qc;
        let (e1, e2) = empty(kf - 2.0);
        equal + (one * e1 + none * (2.0 * e1 - e2)) / kf
    };
    let unchanged = one_memo(kf - 1.0);
    let changed = one_memo(kf - 2.0) / gf + (1.0 - 1.0 / gf) * two_memos;
    ChangeRates {
        detect: (1.0 - changed).clamp(0.0, 1.0),
        false_alarm: (1.0 - unchanged).clamp(0.0, 1.0),
    }
}

fn grr_law(spec: &Spec) -> Option<Round> {
    if spec.family() != Family::Grr {
        return None;
    }
    let (p, q) = spec.pure_probabilities()?;
    Some(Round { p, q })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::longitudinal::LongitudinalProtocol;
    use ldp_core::{DomainSize, Epsilon, Protocol};

    fn grr(k: u32, eps: f64) -> Spec {
        Spec::classic(
            Protocol::Grr,
            DomainSize::new(k).unwrap(),
            Epsilon::new(eps).unwrap(),
        )
        .unwrap()
    }

    /// The equal-report probabilities summed over every pair of values by brute force.
    #[test]
    fn one_value_rates_match_a_sum_over_reports() {
        let (k, same, apart) = (5u32, Round { p: 0.6, q: 0.1 }, Round { p: 0.4, q: 0.15 });
        let law = |r: Round, x: u32, y: u32| if x == y { r.p } else { r.q };
        let (mut eq_same, mut eq_apart) = (0.0, 0.0);
        for y in 0..k {
            eq_same += law(same, 0, y) * law(same, 0, y);
            eq_apart += law(apart, 0, y) * law(apart, 1, y);
        }
        let rates = one_value(f64::from(k), same, apart);
        assert!((rates.false_alarm - (1.0 - eq_same)).abs() < 1e-15);
        assert!((rates.detect - (1.0 - eq_apart)).abs() < 1e-15);
    }

    /// dBitFlipPM's detect rate against a sum over every sampled set and every pair of
    /// memos, guesses compared exactly: a report's guess is uniform over its set bits, or
    /// over all k when none is set, and an identical report keeps the guess.
    #[test]
    fn bit_flip_pm_matches_a_sum_over_every_memo() {
        for (k, d, eps) in [
            (5u32, 1u32, 1.3),
            (5, 2, 0.7),
            (5, 3, 1.3),
            (6, 4, 2.5),
            (4, 4, 3.0),
        ] {
            let p = keep_probability(Epsilon::new(eps).unwrap());
            let q = 1.0 - p;
            let kf = f64::from(k);
            // The guess's law given a memo (bit i for the i-th sampled bucket).
            let guess = |set: &[u32], memo: u32, v: u32| -> f64 {
                let ones = memo.count_ones();
                if ones == 0 {
                    return 1.0 / kf;
                }
                match set.iter().position(|&b| b == v) {
                    Some(i) if memo >> i & 1 == 1 => 1.0 / f64::from(ones),
                    _ => 0.0,
                }
            };
            // The memo's law for a value: bit i is 1 with p on the value's bucket, q elsewhere.
            let law = |set: &[u32], x: u32, memo: u32| -> f64 {
                (0..set.len())
                    .map(|i| {
                        let on = if set[i] == x { p } else { q };
                        if memo >> i & 1 == 1 { on } else { 1.0 - on }
                    })
                    .product()
            };
            let sets: Vec<Vec<u32>> = (0u32..1 << k)
                .filter(|m| m.count_ones() == d)
                .map(|m| (0..k).filter(|b| m >> b & 1 == 1).collect())
                .collect();
            let (x, y) = (0, 1);
            let mut flag = 0.0;
            for set in &sets {
                let class = |v: u32| set.iter().position(|&b| b == v);
                if class(x) == class(y) {
                    continue; // one memo: the report never moves
                }
                for r1 in 0..1u32 << d {
                    for r2 in 0..1u32 << d {
                        let w = law(set, x, r1) * law(set, y, r2);
                        let same = if r1 == r2 {
                            1.0
                        } else {
                            (0..k).map(|v| guess(set, r1, v) * guess(set, r2, v)).sum()
                        };
                        flag += w * (1.0 - same);
                    }
                }
            }
            flag /= sets.len() as f64;
            let form = bit_flip_pm(DomainSize::new(k).unwrap(), Epsilon::new(eps).unwrap(), d);
            assert!(
                (form.detect - flag).abs() < 1e-13,
                "k={k} d={d}: {form:?} vs {flag}"
            );
            assert_eq!(form.false_alarm, 0.0);
        }
    }

    /// Fresh OUE has the ASR form; its memos, which tie, have none.
    #[test]
    fn memos_of_several_items_have_no_closed_form() {
        let oue = Spec::classic(
            Protocol::Oue,
            DomainSize::new(10).unwrap(),
            Epsilon::new(1.0).unwrap(),
        )
        .unwrap();
        assert!(one_shot(&oue).is_some() && permanent(&oue).is_none());
        let (k, perm, one) = (
            DomainSize::new(10).unwrap(),
            Epsilon::new(2.0).unwrap(),
            Epsilon::new(1.0).unwrap(),
        );
        let l_osue = Longitudinal::new(LongitudinalProtocol::LOsue, k, perm, one).unwrap();
        assert!(memoized(&l_osue).is_none());
        let l_grr = Longitudinal::new(LongitudinalProtocol::LGrr, k, perm, one).unwrap();
        assert!(memoized(&l_grr).is_some());
    }

    /// Limits: a report that keeps the value (eps -> inf) flags exactly the changes;
    /// at eps -> 0 every report is uniform, so both rates are 1 - 1/k.
    #[test]
    fn the_limits_in_eps() {
        let sharp = one_shot(&grr(8, 60.0)).unwrap();
        assert!(sharp.detect > 1.0 - 1e-12 && sharp.false_alarm < 1e-12);
        let blind = one_shot(&grr(8, 1e-9)).unwrap();
        assert!((blind.detect - 7.0 / 8.0).abs() < 1e-8);
        assert!((blind.false_alarm - 7.0 / 8.0).abs() < 1e-8);
        assert_eq!(permanent(&grr(8, 1e-9)).unwrap().precision(0.1), Some(1.0));
        let never = ChangeRates {
            detect: 0.0,
            false_alarm: 0.0,
        };
        assert_eq!(never.precision(0.5), None);
    }

    /// L-GRR with a second round that keeps every value is a permanent memo.
    #[test]
    fn l_grr_near_eps_perm_tends_to_the_permanent_memo() {
        let (k, perm) = (DomainSize::new(6).unwrap(), Epsilon::new(2.0).unwrap());
        let l = Longitudinal::new(
            LongitudinalProtocol::LGrr,
            k,
            perm,
            Epsilon::new(2.0 - 1e-9).unwrap(),
        )
        .unwrap();
        let (m, p) = (memoized(&l).unwrap(), permanent(&grr(6, 2.0)).unwrap());
        assert!(m.false_alarm < 1e-6, "{m:?}");
        assert!((m.detect - p.detect).abs() < 1e-6, "{m:?} {p:?}");
    }

    /// GRR's ASR is its keep probability: the ASR form is GRR's own; at the ASR of
    /// random guessing the detector's precision is the change rate itself; and the
    /// bound's inverse meets the bound.
    #[test]
    fn the_asr_form_agrees_with_grr_and_its_limits() {
        for (k, eps) in [(2, 0.5), (10, 2.0), (100, 4.0)] {
            let spec = grr(k, eps);
            let (exact, by_asr) = (
                one_shot(&spec).unwrap(),
                fresh(spec.k(), spec.pure_probabilities().unwrap().0),
            );
            assert!((exact.detect - by_asr.detect).abs() < 1e-14);
            assert!((exact.false_alarm - by_asr.false_alarm).abs() < 1e-14);
            let random = fresh(spec.k(), 1.0 / f64::from(k));
            assert!((random.precision(0.2).unwrap() - 0.2).abs() < 1e-12);
            for target in [0.25, 0.5, 0.9] {
                let a = asr_for_precision(spec.k(), 0.2, target).unwrap();
                let at = fresh(spec.k(), a).precision(0.2).unwrap();
                assert!((at - target).abs() < 1e-9, "{k} {target}: {at}");
            }
        }
        let k = DomainSize::new(50).unwrap();
        assert_eq!(asr_for_precision(k, 0.2, 0.1), None);
        assert_eq!(asr_for_precision(k, 0.2, 1.0), Some(1.0));
    }
}
