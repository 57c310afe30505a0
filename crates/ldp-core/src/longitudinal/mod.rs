//! Repeated collection with memoization: the longitudinal protocols L-GRR, L-SUE, L-OUE,
//! L-OSUE, L-SOUE and L-ADP of Arcolezi et al. (2021), "Improving the utility of locally
//! differentially private protocols for longitudinal and multidimensional frequency
//! estimates" (arXiv:2111.04636), in the spirit of RAPPOR.
//!
//! A client perturbs its value once with the permanent budget `eps_perm` and keeps the
//! result, the memo ([`Memo`]); at every collection it sends a fresh perturbation of the
//! memo. One report is `eps_1`-LDP (`eps_1 < eps_perm`); however many reports of one value
//! are linked, together they reveal no more than the memo, which is `eps_perm`-LDP.
//!
//! | protocol | first round (memo) | second round (report) | report |
//! |---|---|---|---|
//! | L-GRR | GRR | GRR over the memo | [`GrrReport`] |
//! | L-SUE (RAPPOR) | SUE | symmetric bits (`p2 = 1 - q2`) | [`OnesReport`] |
//! | L-OUE | OUE | `p2 = 1/2` | [`OnesReport`] |
//! | L-OSUE | OUE | symmetric bits | [`OnesReport`] |
//! | L-SOUE | SUE | `p2 = 1/2` | [`OnesReport`] |
//! | L-ADP | L-GRR or L-OSUE, whichever has the smaller variance | | |
//!
//! The second round's probabilities are derived in [`rounds`] so that one report spends
//! exactly `eps_1`. One report is then distributed as a pure protocol with the chained
//! `(p_s, q_s)` ([`Longitudinal::chained`]); the server estimates with those.
//!
//! ```
//! use ldp_core::longitudinal::{Longitudinal, LongitudinalClient, LongitudinalProtocol};
//! use ldp_core::{DomainSize, Epsilon, Estimator};
//!
//! let (k, perm, one) = (DomainSize::new(10)?, Epsilon::new(2.0)?, Epsilon::new(1.0)?);
//! let l_osue = Longitudinal::new(LongitudinalProtocol::LOsue, k, perm, one)?;
//! let mut server = l_osue.aggregator();
//! for user in 0..2_000u32 {
//!     let mut device = LongitudinalClient::from_os_rng(l_osue.clone())?;
//!     for _day in 0..3 {
//!         server.add(&device.report(user % 10)?)?; // the same memo every day
//!     }
//! }
//! let freq = server.estimate(Estimator::Simplex)?;
//! assert!((freq.iter().sum::<f64>() - 1.0).abs() < 1e-9);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod aggregate;
mod client;
pub mod rounds;

use std::fmt;
use std::str::FromStr;

use rand::Rng;
use rand_distr::{Bernoulli, Distribution};

pub use aggregate::LongitudinalCounts;
pub use client::{LongitudinalClient, Memo, MemoTable};
pub use rounds::Round;

use crate::Protocol;
use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::families::FamilyParams;
use crate::families::grr::Grr;
use crate::families::unary::{self, UnaryEncoding};
use crate::mechanism::{Mechanism, check_runnable};
use crate::report::{GrrReport, OnesReport, check_sorted_distinct};
use crate::sampling::{BernoulliSet, uniform_other};
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

/// A memoization-based longitudinal protocol. Serialized in snake case (`l_grr`, valid in
/// RON and as identifiers); parsed from either `l-grr` or `l_grr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum LongitudinalProtocol {
    /// GRR then GRR.
    LGrr,
    /// SUE then symmetric bits (RAPPOR's basic one-time protocol).
    LSue,
    /// OUE then OUE-like bits.
    LOue,
    /// OUE then symmetric bits.
    LOsue,
    /// SUE then OUE-like bits.
    LSoue,
    /// L-GRR or L-OSUE, whichever has the smaller variance at (k, eps_perm, eps_1).
    LAdp,
}

impl LongitudinalProtocol {
    /// All six, L-ADP last.
    pub const ALL: [Self; 6] = [
        Self::LGrr,
        Self::LSue,
        Self::LOue,
        Self::LOsue,
        Self::LSoue,
        Self::LAdp,
    ];

    /// Lower-case name, as on the command line: `l-grr`, ..., `l-adp`.
    pub fn name(self) -> &'static str {
        match self {
            Self::LGrr => "l-grr",
            Self::LSue => "l-sue",
            Self::LOue => "l-oue",
            Self::LOsue => "l-osue",
            Self::LSoue => "l-soue",
            Self::LAdp => "l-adp",
        }
    }

    /// The paper's label: `L-GRR`, ..., `L-ADP`.
    pub fn label(self) -> &'static str {
        match self {
            Self::LGrr => "L-GRR",
            Self::LSue => "L-SUE",
            Self::LOue => "L-OUE",
            Self::LOsue => "L-OSUE",
            Self::LSoue => "L-SOUE",
            Self::LAdp => "L-ADP",
        }
    }
}

impl fmt::Display for LongitudinalProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`LongitudinalProtocol::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown longitudinal protocol {0:?} (expected one of l-grr, l-sue, l-oue, l-osue, l-soue, l-adp)"
)]
pub struct UnknownLongitudinal(pub String);

impl FromStr for LongitudinalProtocol {
    type Err = UnknownLongitudinal;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase().replace('_', "-");
        Self::ALL
            .into_iter()
            .find(|p| p.name() == lower)
            .ok_or_else(|| UnknownLongitudinal(s.to_string()))
    }
}

/// A report of a longitudinal protocol: a GRR report for L-GRR, one-bits for the unary
/// chains. Serialized exactly as the one-shot reports (`{"y": 3}`, `{"ones": [1, 4]}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(untagged)
)]
pub enum LongitudinalReport {
    /// L-GRR.
    Grr(GrrReport),
    /// L-SUE, L-OUE, L-OSUE, L-SOUE.
    Ones(OnesReport),
}

/// The first-round randomizer, which produces the memo.
#[derive(Debug, Clone)]
enum FirstRound {
    Grr(Grr),
    Unary(UnaryEncoding),
}

/// A longitudinal protocol instance: protocol, k, `eps_perm` and `eps_1`, with its two
/// rounds' probabilities. Identified by those four numbers (L-ADP resolved).
#[derive(Debug, Clone)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "LongitudinalParams", into = "LongitudinalParams")
)]
pub struct Longitudinal {
    params: LongitudinalParams,
    first: Round,
    second: Round,
    memoizer: FirstRound,
    keep: Bernoulli,
    others: BernoulliSet,
}

/// Serialized parameters of [`Longitudinal`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct LongitudinalParams {
    /// The protocol (L-ADP is stored as the protocol it chose).
    pub protocol: LongitudinalProtocol,
    /// Domain size.
    pub k: DomainSize,
    /// Budget of the memo: what any number of linked reports reveal at most.
    pub eps_perm: Epsilon,
    /// Budget of one report, below `eps_perm`.
    pub eps_1: Epsilon,
}

impl PartialEq for Longitudinal {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params
    }
}

impl TryFrom<LongitudinalParams> for Longitudinal {
    type Error = ParamError;
    fn try_from(p: LongitudinalParams) -> Result<Self, ParamError> {
        Self::new(p.protocol, p.k, p.eps_perm, p.eps_1)
    }
}

impl From<Longitudinal> for LongitudinalParams {
    fn from(l: Longitudinal) -> Self {
        l.params
    }
}

impl Longitudinal {
    /// The protocol at permanent budget `eps_perm` and per-report budget `eps_1`.
    ///
    /// Fails when k exceeds [`crate::MAX_RUNNABLE_DOMAIN`], or when the chain cannot spend
    /// exactly `eps_1` per report: every chain needs `eps_1 < eps_perm`, and those whose
    /// second round keeps a memoized bit with probability 1/2 (L-OUE, L-SOUE) a little
    /// less ([`ParamError::LongitudinalBudget`] names the bound).
    pub fn new(
        protocol: LongitudinalProtocol,
        k: DomainSize,
        eps_perm: Epsilon,
        eps_1: Epsilon,
    ) -> Result<Self, ParamError> {
        check_runnable(k)?;
        let protocol = match protocol {
            LongitudinalProtocol::LAdp => Self::adaptive_choice(k, eps_perm, eps_1)?,
            other => other,
        };
        let first = rounds::first(protocol, k, eps_perm);
        let second = rounds::second(protocol, k, eps_perm, eps_1, first)?;
        let memoizer = match protocol {
            LongitudinalProtocol::LGrr => FirstRound::Grr(Grr::new(k, eps_perm)?),
            LongitudinalProtocol::LSue | LongitudinalProtocol::LSoue => {
                FirstRound::Unary(UnaryEncoding::symmetric(k, eps_perm)?)
            }
            _ => FirstRound::Unary(UnaryEncoding::new(k, eps_perm, unary::OPTIMIZED_P)?),
        };
        Ok(Self {
            params: LongitudinalParams {
                protocol,
                k,
                eps_perm,
                eps_1,
            },
            first,
            second,
            memoizer,
            keep: Bernoulli::new(second.p).expect("p2 is a probability"),
            others: BernoulliSet::new(second.q),
        })
    }

    /// What L-ADP picks: L-GRR when its variance is at most L-OSUE's (L-OSUE alone when
    /// L-GRR cannot run at these budgets, and the reverse).
    pub fn adaptive_choice(
        k: DomainSize,
        eps_perm: Epsilon,
        eps_1: Epsilon,
    ) -> Result<LongitudinalProtocol, ParamError> {
        let variance = |protocol| -> Result<f64, ParamError> {
            let first = rounds::first(protocol, k, eps_perm);
            let chain = first.then(rounds::second(protocol, k, eps_perm, eps_1, first)?);
            Ok(chain.q * (1.0 - chain.q) / (chain.p - chain.q).powi(2))
        };
        let grr = variance(LongitudinalProtocol::LGrr);
        let osue = variance(LongitudinalProtocol::LOsue);
        Ok(match (grr, osue) {
            (Ok(g), Ok(o)) if g <= o => LongitudinalProtocol::LGrr,
            (_, Ok(_)) => LongitudinalProtocol::LOsue,
            (Ok(_), Err(_)) => LongitudinalProtocol::LGrr,
            (Err(e), Err(_)) => return Err(e),
        })
    }

    /// The protocol (never L-ADP: its choice).
    pub fn protocol(&self) -> LongitudinalProtocol {
        self.params.protocol
    }

    /// The defining parameters.
    pub fn params(&self) -> LongitudinalParams {
        self.params
    }

    /// Domain size.
    pub fn domain_size(&self) -> DomainSize {
        self.params.k
    }

    /// Budget of the memo.
    pub fn eps_perm(&self) -> Epsilon {
        self.params.eps_perm
    }

    /// Budget of one report.
    pub fn eps_1(&self) -> Epsilon {
        self.params.eps_1
    }

    /// The first round's `(p1, q1)`: the memo's law.
    pub fn first_round(&self) -> Round {
        self.first
    }

    /// The second round's `(p2, q2)`: a report's law given the memo.
    pub fn second_round(&self) -> Round {
        self.second
    }

    /// The chained `(p_s, q_s)`: one report's law given the true item, the `(p*, q*)` the
    /// server estimates with.
    pub fn chained(&self) -> Round {
        self.first.then(self.second)
    }

    /// The one-shot protocol one report follows: GRR at `eps_1` (L-GRR), or UE at
    /// `eps_1` with the chained true-bit probability `p_s` (the unary chains; for L-OUE
    /// and L-SOUE `p_s < 1/2`). Each round treats the items alike, so one report's law
    /// given the true item is that protocol's, and [`Longitudinal::chained`] is its
    /// `(p*, q*)`: one collection's reports aggregate, store and convert as its reports
    /// (a [`GrrReport`] or [`OnesReport`] each), with the same estimates. The reports one
    /// user sends at several collections share a memo, so they are not independent.
    ///
    /// ```
    /// use ldp_core::longitudinal::{Longitudinal, LongitudinalProtocol};
    /// use ldp_core::{DomainSize, Epsilon, PureProtocol};
    /// let (k, perm, one) = (DomainSize::new(10)?, Epsilon::new(2.0)?, Epsilon::new(1.0)?);
    /// let l_oue = Longitudinal::new(LongitudinalProtocol::LOue, k, perm, one)?;
    /// let spec = l_oue.report_spec()?;
    /// assert_eq!(spec.eps(), one);
    /// let (p, q) = spec.pure_probabilities().unwrap();
    /// assert!(p < 0.5 && (p - l_oue.chained().p).abs() < 1e-12);
    /// assert!((q - l_oue.chained().q).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn report_spec(&self) -> Result<Spec, ParamError> {
        let LongitudinalParams { k, eps_1, .. } = self.params;
        if self.reports_items() {
            Ok(Spec::classic(Protocol::Grr, k, eps_1).expect("GRR is classic"))
        } else {
            Spec::new(
                k,
                eps_1,
                FamilyParams::UnaryEncoding {
                    p: self.chained().p,
                },
            )
        }
    }

    /// Whether reports are GRR reports (L-GRR) rather than one-bits.
    pub fn reports_items(&self) -> bool {
        self.params.protocol == LongitudinalProtocol::LGrr
    }

    /// The first round: what a device memoizes for `item`.
    pub fn memoize<R: Rng + ?Sized>(&self, item: u32, rng: &mut R) -> Result<Memo, ItemOutOfRange> {
        Ok(match &self.memoizer {
            FirstRound::Grr(grr) => Memo::Item(grr.perturb(item, rng)?.y),
            FirstRound::Unary(ue) => Memo::Ones(ue.perturb(item, rng)?.ones),
        })
    }

    /// Checks that `memo` is one this protocol can produce (the right shape, items in
    /// `0..k`, one-bits strictly increasing).
    pub fn validate_memo(&self, memo: &Memo) -> Result<(), ReportError> {
        let k = self.params.k.get();
        match (memo, self.reports_items()) {
            (Memo::Item(y), true) if *y < k => Ok(()),
            (Memo::Item(y), true) => Err(ReportError::OutOfRange {
                field: "item",
                value: u64::from(*y),
                bound: u64::from(k),
            }),
            (Memo::Ones(ones), false) => check_sorted_distinct("ones", ones, k),
            (_, items) => Err(ReportError::Shape {
                expected: if items {
                    "an item memo"
                } else {
                    "a one-bits memo"
                },
            }),
        }
    }

    /// The second round: a fresh report of `memo`, which must be valid for this protocol
    /// ([`Longitudinal::validate_memo`]; memos from [`Longitudinal::memoize`] are).
    pub fn report<R: Rng + ?Sized>(
        &self,
        memo: &Memo,
        rng: &mut R,
    ) -> Result<LongitudinalReport, ReportError> {
        self.validate_memo(memo)?;
        let k = self.params.k.get();
        Ok(match memo {
            Memo::Item(y) => {
                let y = if self.keep.sample(rng) {
                    *y
                } else {
                    uniform_other(k, *y, rng)
                };
                LongitudinalReport::Grr(GrrReport { y })
            }
            Memo::Ones(memo) => {
                // Each memoized one-bit stays w.p. p2; the zero bits between them are set
                // w.p. q2, drawn by geometric gaps over each run of zeros (O(|memo| + k q2)).
                let mut ones =
                    Vec::with_capacity(memo.len() + (k as f64 * self.second.q) as usize + 4);
                let mut start = 0u32;
                for &b in memo.iter().chain(std::iter::once(&k)) {
                    self.others
                        .for_each(b - start, rng, |i| ones.push(start + i));
                    if b < k && self.keep.sample(rng) {
                        ones.push(b);
                    }
                    start = b + 1;
                }
                LongitudinalReport::Ones(OnesReport { ones })
            }
        })
    }

    /// Checks that a report lies in the output space (and has the protocol's shape).
    pub fn validate(&self, report: &LongitudinalReport) -> Result<(), ReportError> {
        let k = self.params.k.get();
        match (report, self.reports_items()) {
            (LongitudinalReport::Grr(r), true) if r.y < k => Ok(()),
            (LongitudinalReport::Grr(r), true) => Err(ReportError::OutOfRange {
                field: "y",
                value: u64::from(r.y),
                bound: u64::from(k),
            }),
            (LongitudinalReport::Ones(r), false) => check_sorted_distinct("ones", &r.ones, k),
            (_, items) => Err(ReportError::Shape {
                expected: if items {
                    "a GRR report {\"y\": ...}"
                } else {
                    "a one-bits report {\"ones\": [...]}"
                },
            }),
        }
    }

    /// Calls `visit` with every item a valid report supports, increasingly.
    pub fn for_each_supported(&self, report: &LongitudinalReport, mut visit: impl FnMut(u32)) {
        match report {
            LongitudinalReport::Grr(r) => visit(r.y),
            LongitudinalReport::Ones(r) => r.ones.iter().for_each(|&i| visit(i)),
        }
    }

    /// `ln P[report | item]` of one report, whose law is the chained pure protocol
    /// (the report must be valid).
    pub fn log_likelihood(&self, report: &LongitudinalReport, item: u32) -> f64 {
        let Round { p, q } = self.chained();
        match report {
            LongitudinalReport::Grr(r) => {
                if r.y == item {
                    p.ln()
                } else {
                    q.ln()
                }
            }
            LongitudinalReport::Ones(r) => {
                let set = r.ones.len() as f64;
                let unset = self.params.k.as_f64() - set;
                let base = set * q.ln() + unset * (-q).ln_1p();
                if r.ones.binary_search(&item).is_ok() {
                    base + p.ln() - q.ln()
                } else {
                    base + (-p).ln_1p() - (-q).ln_1p()
                }
            }
        }
    }

    /// A fresh, empty aggregator.
    pub fn aggregator(&self) -> LongitudinalCounts {
        LongitudinalCounts::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulation::{Role, stream_rng};

    fn l(protocol: LongitudinalProtocol, k: u32, perm: f64, one: f64) -> Longitudinal {
        Longitudinal::new(
            protocol,
            DomainSize::new(k).unwrap(),
            Epsilon::new(perm).unwrap(),
            Epsilon::new(one).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn names_round_trip() {
        for p in LongitudinalProtocol::ALL {
            assert_eq!(p.name().parse::<LongitudinalProtocol>().unwrap(), p);
            assert_eq!(p.label().parse::<LongitudinalProtocol>().unwrap(), p);
        }
        let err = "l-xyz".parse::<LongitudinalProtocol>().unwrap_err();
        assert!(err.to_string().contains("l-osue"), "{err}");
    }

    #[test]
    fn l_adp_picks_grr_for_small_domains_and_osue_for_large_ones() {
        assert_eq!(
            l(LongitudinalProtocol::LAdp, 3, 4.0, 2.0).protocol(),
            LongitudinalProtocol::LGrr
        );
        assert_eq!(
            l(LongitudinalProtocol::LAdp, 1000, 4.0, 2.0).protocol(),
            LongitudinalProtocol::LOsue
        );
    }

    #[test]
    fn a_memo_of_the_wrong_shape_or_range_is_rejected() {
        let mut rng = stream_rng(1, 0, Role::Other(0), 0);
        let grr = l(LongitudinalProtocol::LGrr, 5, 2.0, 1.0);
        let oue = l(LongitudinalProtocol::LOue, 5, 2.0, 1.0);
        assert!(grr.report(&Memo::Item(5), &mut rng).is_err());
        assert!(grr.report(&Memo::Ones(vec![1]), &mut rng).is_err());
        assert!(oue.report(&Memo::Ones(vec![3, 1]), &mut rng).is_err());
        assert!(oue.report(&Memo::Item(1), &mut rng).is_err());
        assert!(oue.report(&Memo::Ones(vec![]), &mut rng).is_ok());
        assert!(grr.memoize(5, &mut rng).is_err());
    }
}
