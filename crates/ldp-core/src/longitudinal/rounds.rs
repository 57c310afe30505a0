//! The two rounds' probabilities of each longitudinal protocol.
//!
//! A report is the second round's perturbation of the memoized first-round output, so for
//! the true item x (support of x) and any other item the chained probabilities are
//!
//! ```text
//! p_s = P[report supports x | x]  = q2 + p1 (p2 - q2)
//! q_s = P[report supports x | x'] = q2 + q1 (p2 - q2)
//! ```
//!
//! (the memo supports x with probability p1 or q1, and a report supports a memoized item
//! with p2, any other with q2). The second round is chosen so that one report is exactly
//! eps_1-LDP: for L-GRR the chain is GRR over k items, so `p_s / q_s = e^eps_1`; for the
//! unary chains the bits stay independent, so `p_s (1 - q_s) / ((1 - p_s) q_s) = e^eps_1`.
//!
//! # Deviation from the published L-GRR
//! Arcolezi et al. (2021) and multi-freq-ldpy derive L-GRR's p2 from
//! `(p1 p2 + q1 q2) / (p1 q2 + q1 p2) = e^eps_1`, the ratio of a two-valued chain. Over
//! k items the chain keeps the value with `p_s = p1 p2 + (1 - p1) q2` against
//! `q_s = q1 p2 + p1 q2 + (k - 2) q1 q2`, so for k > 2 their report spends less than
//! eps_1 (0.166 of 1 at k = 100, eps_perm = 2): private, but noisier than it needs to be.
//! We solve the chain's own ratio; both agree at k = 2. The unary chains' published
//! closed forms equal ours (the Python package's tests compare estimates on the same reports).

use crate::error::ParamError;
use crate::families::{grr, unary};
use crate::vocab::{DomainSize, Epsilon};

use super::LongitudinalProtocol;

/// One randomization round: a supported item stays supported with probability `p`, any
/// other item becomes supported with probability `q`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Round {
    /// P[supports an item | it is the input].
    pub p: f64,
    /// P[supports an item | it is not the input].
    pub q: f64,
}

impl Round {
    /// This round followed by `second`: the law of one report given the true item.
    pub fn then(self, second: Round) -> Round {
        let gap = second.p - second.q;
        Round {
            p: second.q + self.p * gap,
            q: second.q + self.q * gap,
        }
    }

    /// `ln(p (1 - q) / ((1 - p) q))`: the budget of a round whose bits are independent.
    pub fn bits_budget(self) -> f64 {
        self.p.ln() + (-self.q).ln_1p() - (-self.p).ln_1p() - self.q.ln()
    }
}

/// L-OLH's hash range: LOLOHA's published g (Arcolezi et al., "Frequency Estimation of
/// Evolving Data Under Local Differential Privacy", EDBT 2023), the g that minimizes
/// LOLOHA's approximate variance at `alpha = eps_1 / eps_perm` with its published second
/// round, at least 2. With this module's exact chain one report is LH at eps_1, whose
/// variance is least near `g = e^eps_1 + 1` (OLH's); the published g is a little
/// smaller (7 against 8 at eps_perm = 4, eps_1 = 2: 1% more variance), and spends less in
/// all (`g eps_perm`). We keep the published g, so that L-OLH is LOLOHA's protocol:
///
/// ```text
/// g = round((sqrt(e^4e - 14 e^2e - 12 e^(2e(a+1)) + 12 e^(e(a+1)) + 12 e^(e(a+3)) + 1)
///            - e^2e + 6 e^e - 6 e^(ea) + 1) / (6 (e^e - e^(ea))))
/// ```
///
/// with `e = eps_perm`. Evaluated with every term scaled by `e^-2e` and the square root's
/// difference from 1 written without cancellation, so it neither overflows nor loses
/// digits at large budgets (where g saturates at `u32::MAX`).
///
/// ```
/// use ldp_core::longitudinal::rounds::loloha_range;
/// use ldp_core::Epsilon;
/// let e = |v| Epsilon::new(v).unwrap();
/// assert_eq!(loloha_range(e(2.0), e(1.0)), 3);
/// assert_eq!(loloha_range(e(4.0), e(2.0)), 7);
/// assert_eq!(loloha_range(e(0.5), e(0.25)), 2);
/// ```
pub fn loloha_range(eps_perm: Epsilon, eps_1: Epsilon) -> u32 {
    let e = eps_perm.get();
    let a = eps_1.get() / e;
    // X = (the square root's argument) e^-4e; X - 1 as a sum of small terms.
    let x_minus_1 = -14.0 * (-2.0 * e).exp() - 12.0 * (2.0 * e * (a - 1.0)).exp()
        + 12.0 * (e * (a - 3.0)).exp()
        + 12.0 * (e * (a - 1.0)).exp()
        + (-4.0 * e).exp();
    let root_minus_1 = x_minus_1 / ((1.0 + x_minus_1).max(0.0).sqrt() + 1.0);
    // Numerator and denominator divided by e^e.
    let num = e.exp() * root_minus_1 + 6.0 - 6.0 * (e * (a - 1.0)).exp() + (-e).exp();
    let den = -6.0 * (e * (a - 1.0)).exp_m1();
    let g = (num / den).round();
    if g.is_nan() {
        2
    } else {
        g.clamp(2.0, f64::from(u32::MAX)) as u32
    }
}

/// The first round: the protocol's one-shot randomizer at `eps_perm`, over `values`
/// values for the chains whose memo is one value (k for L-GRR, the hash range g for
/// L-OLH and L-BLH, whose memo is GRR over the hashed value).
pub(super) fn first(
    protocol: LongitudinalProtocol,
    values: DomainSize,
    eps_perm: Epsilon,
) -> Round {
    use LongitudinalProtocol as L;
    let (p, q) = match protocol {
        L::LGrr | L::LOlh | L::LBlh => grr::probabilities(values, eps_perm),
        L::LSue | L::LSoue => unary::probabilities(eps_perm, unary::symmetric_p(eps_perm)),
        L::LOue | L::LOsue => unary::probabilities(eps_perm, unary::OPTIMIZED_P),
        L::LAdp => unreachable!("L-ADP is resolved before its rounds are derived"),
    };
    Round { p, q }
}

/// The second round that makes one report exactly `eps_1`-LDP after `first` (over `values`
/// values, as [`first`]), or the typed error naming the largest per-report budget this
/// chain can reach.
pub(super) fn second(
    protocol: LongitudinalProtocol,
    values: DomainSize,
    eps_perm: Epsilon,
    eps_1: Epsilon,
    first: Round,
) -> Result<Round, ParamError> {
    use LongitudinalProtocol as L;
    let too_large = |max: f64| ParamError::LongitudinalBudget {
        protocol: protocol.label(),
        eps_1: eps_1.get(),
        eps_perm: eps_perm.get(),
        max,
    };
    match protocol {
        L::LGrr | L::LOlh | L::LBlh => {
            // The chain is GRR over the values with keep probability p_s; solving
            // p_s = p1 p2 + (1 - p1)(1 - p2)/(v - 1) for p2:
            // p2 = ((v - 1) p_s - (1 - p1)) / (v p1 - 1).
            if eps_1.get() >= eps_perm.get() {
                return Err(too_large(eps_perm.get()));
            }
            let (p_s, _) = grr::probabilities(values, eps_1);
            let m = values.as_f64() - 1.0;
            let p2 = (m * p_s - (1.0 - first.p)) / (values.as_f64() * first.p - 1.0);
            Ok(Round {
                p: p2,
                q: (1.0 - p2) / m,
            })
        }
        L::LSue | L::LOsue => {
            solve_bits(first, eps_1.get(), |q2| 1.0 - q2).ok_or_else(|| too_large(eps_perm.get()))
        }
        L::LOue | L::LSoue => solve_bits(first, eps_1.get(), |_| unary::OPTIMIZED_P)
            .ok_or_else(|| too_large(first.then(Round { p: 0.5, q: 0.0 }).bits_budget())),
        L::LAdp => unreachable!("L-ADP is resolved before its rounds are derived"),
    }
}

/// The q2 in `(0, 1/2)` with `first.then((p2(q2), q2)).bits_budget() = eps_1`, where the
/// second round keeps a memoized one-bit with probability `p2(q2)` (1/2 for OUE, `1 - q2`
/// for SUE). The chained budget falls strictly as q2 rises (more noise) from its value at
/// q2 = 0 to 0 at `q2 = p2`, so the root is unique when eps_1 is below the q2 = 0 value,
/// and bisection finds it to the last bit.
fn solve_bits(first: Round, eps_1: f64, p2: impl Fn(f64) -> f64) -> Option<Round> {
    let budget = |q2: f64| first.then(Round { p: p2(q2), q: q2 }).bits_budget();
    if budget(0.0) <= eps_1 {
        return None;
    }
    let (mut lo, mut hi) = (0.0f64, 0.5f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if budget(mid) > eps_1 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Both ends are within one ulp of the root; keep the side that does not exceed eps_1.
    let q = hi;
    (q > 0.0).then(|| Round { p: p2(q), q })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(protocol: LongitudinalProtocol, k: u32, perm: f64, one: f64) -> (Round, Round) {
        let (k, perm, one) = (
            DomainSize::new(k).unwrap(),
            Epsilon::new(perm).unwrap(),
            Epsilon::new(one).unwrap(),
        );
        let r1 = first(protocol, k, perm);
        (r1, second(protocol, k, perm, one, r1).unwrap())
    }

    /// Arcolezi et al. (2021) give L-OSUE's second round in closed form,
    /// `p2 = (1 - e^(eps_1 + eps_perm)) / (e^eps_1 - e^eps_perm - e^(eps_1 + eps_perm) + 1)`.
    #[test]
    fn l_osue_second_round_matches_the_published_closed_form() {
        for (perm, one) in [(2.0, 1.0), (4.0, 0.5), (1.0, 0.9), (8.0, 3.0)] {
            let (_, r2) = setup(LongitudinalProtocol::LOsue, 10, perm, one);
            let (a, b) = (f64::exp(one), f64::exp(perm));
            let p2 = (1.0 - a * b) / (a - b - a * b + 1.0);
            assert!((r2.p - p2).abs() < 1e-12, "{perm} {one}: {} vs {p2}", r2.p);
            assert!((r2.p + r2.q - 1.0).abs() < 1e-15);
        }
    }

    #[test]
    fn every_chain_spends_exactly_eps_1_per_report() {
        use LongitudinalProtocol as L;
        for protocol in [L::LGrr, L::LSue, L::LOue, L::LOsue, L::LSoue] {
            for (perm, one) in [(2.0, 1.0), (4.0, 0.5), (1.0, 0.3), (6.0, 2.0)] {
                let (r1, r2) = setup(protocol, 20, perm, one);
                let chain = r1.then(r2);
                let spent = if protocol == L::LGrr {
                    (chain.p / chain.q).ln()
                } else {
                    chain.bits_budget()
                };
                assert!(
                    (spent - one).abs() < 1e-12,
                    "{protocol:?} {perm} {one}: {spent}"
                );
                assert!(
                    0.0 < r2.q && r2.q < r2.p && r2.p < 1.0,
                    "{protocol:?} {r2:?}"
                );
            }
        }
    }

    #[test]
    fn a_per_report_budget_the_chain_cannot_reach_is_a_typed_error() {
        let k = DomainSize::new(10).unwrap();
        let (perm, one) = (Epsilon::new(1.0).unwrap(), Epsilon::new(1.0).unwrap());
        let r1 = first(LongitudinalProtocol::LGrr, k, perm);
        let err = second(LongitudinalProtocol::LGrr, k, perm, one, r1).unwrap_err();
        assert!(matches!(err, ParamError::LongitudinalBudget { max, .. } if max == 1.0));
        // OUE's second round keeps a memoized bit w.p. 1/2, which caps the chain below eps_perm.
        let r1 = first(LongitudinalProtocol::LOue, k, Epsilon::new(2.0).unwrap());
        let one = Epsilon::new(1.9).unwrap();
        let err = second(
            LongitudinalProtocol::LOue,
            k,
            Epsilon::new(2.0).unwrap(),
            one,
            r1,
        );
        let Err(ParamError::LongitudinalBudget { max, .. }) = err else {
            panic!("{err:?}")
        };
        // p1 = 1/2, q1 = 1/(e^2 + 1): max = ln((2 e^2 + 1) / 3).
        assert!((max - ((2.0 * 2f64.exp() + 1.0) / 3.0).ln()).abs() < 1e-12);
    }
}
