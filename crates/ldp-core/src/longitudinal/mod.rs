//! Repeated collection with memoization: the longitudinal protocols L-GRR, L-SUE, L-OUE,
//! L-OSUE, L-SOUE and L-ADP of Arcolezi et al. (2021), "Improving the utility of locally
//! differentially private protocols for longitudinal and multidimensional frequency
//! estimates" (arXiv:2111.04636), in the spirit of RAPPOR.
//!
//! A client perturbs its value once with the permanent budget `eps_perm` and keeps the
//! result, the memo ([`Memoized::memoize`]); at every collection it sends a fresh perturbation of the
//! memo. One report is `eps_1`-LDP (`eps_1 < eps_perm`); however many reports of one value
//! are linked, together they reveal no more than the memo, which is `eps_perm`-LDP.
//!
//! | protocol | first round (memo) | second round (report) | report |
//! |---|---|---|---|
//! | L-GRR | GRR | GRR over the memo | [`GrrReport`](crate::GrrReport) |
//! | L-SUE (RAPPOR) | SUE | symmetric bits (`p2 = 1 - q2`) | [`OnesReport`](crate::OnesReport) |
//! | L-OUE | OUE | `p2 = 1/2` | [`OnesReport`](crate::OnesReport) |
//! | L-OSUE | OUE | symmetric bits | [`OnesReport`](crate::OnesReport) |
//! | L-SOUE | SUE | `p2 = 1/2` | [`OnesReport`](crate::OnesReport) |
//! | L-OLH (LOLOHA) | LH at LOLOHA's g: GRR over the hashed value | GRR over the g values, the seed kept | [`LhReport`](crate::LhReport) |
//! | L-BLH (BiLOLOHA) | LH with g = 2 | as L-OLH | [`LhReport`](crate::LhReport) |
//! | L-ADP | L-GRR or L-OSUE, whichever has the smaller variance | | |
//!
//! L-OLH and L-BLH are Arcolezi et al.'s LOLOHA (EDBT 2023, "Frequency Estimation of
//! Evolving Data Under Local Differential Privacy"): a user hashes its value with a seed
//! drawn once and memoizes per hashed value, so however its value changes it spends at
//! most `g eps_perm` in all, against `k eps_perm` for the chains memoized per value
//! ([`Device`] for [`Memoized`] keeps one memo per value; [`HashedMemo`] keeps LOLOHA's).
//! Their second round is L-GRR's over the g values, with this module's exact chain (see
//! [`rounds`] on the published L-GRR's).
//!
//! The chains are presets of the memoization combinator [`Memoized`], which works over any
//! family by the shape of its report ([`memoize`]): [`Longitudinal`] derives the two
//! rounds' probabilities ([`rounds`]) so that one report spends exactly `eps_1`, and
//! builds the combinator ([`Longitudinal::memoized`], or
//! [`dispatch_memoized!`](crate::dispatch_memoized) for any family). One report then
//! follows a one-shot protocol with the chained `(p_s, q_s)` ([`Longitudinal::chained`]),
//! [`Memoized::one_report`], whose server estimates with those.
//!
//! ```
//! use ldp_core::longitudinal::{Longitudinal, LongitudinalClient, LongitudinalProtocol};
//! use ldp_core::{Aggregator, DomainSize, Epsilon, Estimator, Mechanism, UnaryEncoding};
//!
//! let (k, perm, one) = (DomainSize::new(10)?, Epsilon::new(2.0)?, Epsilon::new(1.0)?);
//! let l_osue = Longitudinal::new(LongitudinalProtocol::LOsue, k, perm, one)?;
//! let memoized = l_osue.memoized::<UnaryEncoding>()?;
//! let mut server = memoized.one_report().aggregator();
//! for user in 0..2_000u32 {
//!     let mut device = LongitudinalClient::from_os_rng(memoized.clone())?;
//!     for _day in 0..3 {
//!         server.add(&device.report(user % 10)?)?; // the same memo every day
//!     }
//! }
//! let freq = server.estimate(Estimator::Simplex)?;
//! assert!((freq.iter().sum::<f64>() - 1.0).abs() < 1e-9);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod class_memo;
mod client;
mod hashed;
pub mod memoize;
mod reporter;
pub mod rounds;

use std::fmt;
use std::str::FromStr;

pub use class_memo::{ClassMemo, ClassMemory};
pub use client::{LongitudinalClient, MemoTable};
pub use hashed::{HashedMemo, HashedMemory};
pub use memoize::{MemoShape, Memoized, Refresh, Refreshable, SecondRound};
pub use reporter::{Device, Fresh, Reporter};
pub use rounds::Round;

use crate::Protocol;
use crate::error::{Error, ParamError};
use crate::families::unary;
use crate::families::{FamilyMechanism, FamilyParams, WrongFamily};
use crate::mechanism::check_runnable;
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
    /// Local hashing with the hash range of LOLOHA (Arcolezi et al. 2023): one seed per
    /// user, GRR over the hashed value memoized, then GRR over the g values.
    LOlh,
    /// LOLOHA's binary variant (BiLOLOHA): L-OLH with g = 2.
    LBlh,
    /// L-GRR or L-OSUE, whichever has the smaller variance at (k, eps_perm, eps_1).
    LAdp,
}

impl LongitudinalProtocol {
    /// All eight, L-ADP last.
    pub const ALL: [Self; 8] = [
        Self::LGrr,
        Self::LSue,
        Self::LOue,
        Self::LOsue,
        Self::LSoue,
        Self::LOlh,
        Self::LBlh,
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
            Self::LOlh => "l-olh",
            Self::LBlh => "l-blh",
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
            Self::LOlh => "L-OLH",
            Self::LBlh => "L-BLH",
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
    "unknown longitudinal protocol {0:?} (expected one of l-grr, l-sue, l-oue, l-osue, l-soue, l-olh, l-blh, l-adp)"
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
    first_spec: Spec,
    first: Round,
    second: Round,
    /// L-OLH and L-BLH: the hash range g, over which both rounds are GRR.
    hash_range: Option<u32>,
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
        check_runnable(k, eps_1)?;
        let protocol = match protocol {
            LongitudinalProtocol::LAdp => Self::adaptive_choice(k, eps_perm, eps_1)?,
            other => other,
        };
        let g = match protocol {
            LongitudinalProtocol::LOlh => Some(rounds::loloha_range(eps_perm, eps_1)),
            LongitudinalProtocol::LBlh => Some(crate::families::local_hash::BINARY_RANGE),
            _ => None,
        };
        let values = match g {
            // The memo's rounds and their closed forms are O(g): a g beyond what any
            // family runs is refused, as a k would be (after the budgets: at eps_1 =
            // eps_perm the formula's g is infinite, and the budgets are what is wrong).
            Some(g) if g > crate::MAX_RUNNABLE_DOMAIN && eps_1.get() < eps_perm.get() => {
                return Err(ParamError::Parameter {
                    name: "g",
                    description: "L-OLH's hash range g (LOLOHA's formula at eps_perm and eps_1 / eps_perm)",
                    requirement: format!(
                        "be at most {} (lower eps_perm, or eps_1 against it)",
                        crate::MAX_RUNNABLE_DOMAIN
                    ),
                    value: f64::from(g),
                });
            }
            Some(g) => DomainSize::new(g)?,
            None => k,
        };
        let first = rounds::first(protocol, values, eps_perm);
        let second = rounds::second(protocol, values, eps_perm, eps_1, first)?;
        let first_params = match protocol {
            LongitudinalProtocol::LGrr => FamilyParams::Grr,
            LongitudinalProtocol::LOlh | LongitudinalProtocol::LBlh => {
                FamilyParams::LocalHashing { g: values.get() }
            }
            LongitudinalProtocol::LSue | LongitudinalProtocol::LSoue => {
                FamilyParams::UnaryEncoding {
                    p: unary::symmetric_p(eps_perm),
                }
            }
            _ => FamilyParams::UnaryEncoding {
                p: unary::OPTIMIZED_P,
            },
        };
        Ok(Self {
            first_spec: Spec::new(k, eps_perm, first_params)?,
            params: LongitudinalParams {
                protocol,
                k,
                eps_perm,
                eps_1,
            },
            first,
            second,
            hash_range: g,
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

    /// The first round's `(p1, q1)`: the memo's law (for L-OLH and L-BLH, GRR's over the
    /// g hashed values: q1 is the chance of one given other hashed value).
    pub fn first_round(&self) -> Round {
        self.first
    }

    /// L-OLH's and L-BLH's hash range g: both rounds are GRR over the user's hashed value,
    /// under a seed drawn once per user. `None` for the other chains.
    pub fn hash_range(&self) -> Option<u32> {
        self.hash_range
    }

    /// How many values a memo takes when it is one value: k for L-GRR, g for L-OLH and
    /// L-BLH; `None` for the unary chains, whose memo is a set of bits.
    pub fn memo_values(&self) -> Option<u32> {
        match self.hash_range {
            Some(g) => Some(g),
            None => self.reports_items().then_some(self.params.k.get()),
        }
    }

    /// The second round's `(p2, q2)`: a report's law given the memo.
    pub fn second_round(&self) -> Round {
        self.second
    }

    /// The chained `(p_s, q_s)`: one report's law given the true item, the `(p*, q*)` the
    /// server estimates with.
    pub fn chained(&self) -> Round {
        let chain = self.first.then(self.second);
        match self.hash_range {
            // Another item supports the report when it hashes to the reported value,
            // w.p. 1/g under a universal hash, whatever the rounds did.
            Some(g) => Round {
                p: chain.p,
                q: 1.0 / f64::from(g),
            },
            None => chain,
        }
    }

    /// The one-shot protocol one report follows: GRR at `eps_1` (L-GRR), LH at `eps_1`
    /// with the same g (L-OLH, L-BLH), or UE at `eps_1` with the chained true-bit
    /// probability `p_s` (the unary chains; for L-OUE and L-SOUE `p_s < 1/2`). Each round
    /// treats the items alike, so one report's law given the true item is that
    /// protocol's, and [`Longitudinal::chained`] is its `(p*, q*)`: one collection's
    /// reports aggregate, store and convert as its reports
    /// ([`Memoized::one_report`] is that mechanism). The reports one user sends at
    /// several collections share a memo, so they are not independent.
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
        } else if let Some(g) = self.hash_range {
            Spec::new(k, eps_1, FamilyParams::LocalHashing { g })
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

    /// The first round's one-shot protocol at `eps_perm`, which draws the memo: GRR
    /// (L-GRR), SUE (L-SUE, L-SOUE) or OUE (L-OUE, L-OSUE).
    pub fn first_spec(&self) -> Spec {
        self.first_spec
    }

    /// The memoization combinator of this chain, over its first round's family `M`
    /// ([`Longitudinal::first_spec`]; any family:
    /// [`dispatch_memoized!`](crate::dispatch_memoized)).
    pub fn memoized<M>(&self) -> Result<Memoized<M>, Error>
    where
        M: FamilyMechanism,
        M::Report: Refreshable,
    {
        let spec = self.first_spec();
        let param = M::param_of(&spec.params()).ok_or(WrongFamily {
            expected: M::FAMILY,
            found: spec.family(),
        })?;
        let first = M::build(spec.k(), spec.eps(), param)?;
        Ok(Memoized::refreshed(first, self.second, self.params.eps_1)?)
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

    /// L-OLH and L-BLH are LH chains: one report is LH at eps_1 with the memo's g, GRR
    /// over the g hashed values spends exactly eps_1, and the server's q* is 1/g.
    #[test]
    fn loloha_presets_are_local_hashing_chains() {
        use crate::{LocalHashing, Mechanism};
        for (protocol, perm, one) in [
            (LongitudinalProtocol::LOlh, 4.0, 2.0),
            (LongitudinalProtocol::LOlh, 6.0, 1.0),
            (LongitudinalProtocol::LBlh, 2.0, 1.0),
        ] {
            let l = l(protocol, 50, perm, one);
            let g = l.hash_range().unwrap();
            assert_eq!(l.memo_values(), Some(g));
            if protocol == LongitudinalProtocol::LBlh {
                assert_eq!(g, 2);
            } else {
                let e = |v| Epsilon::new(v).unwrap();
                assert_eq!(g, rounds::loloha_range(e(perm), e(one)));
            }
            let chain = l.first_round().then(l.second_round());
            assert!(((chain.p / chain.q).ln() - one).abs() < 1e-12, "{chain:?}");
            let (p1, _) =
                crate::families::grr::probabilities(DomainSize::new(g).unwrap(), l.eps_perm());
            assert!((l.first_round().p - p1).abs() < 1e-15);
            assert_eq!(l.chained().q, 1.0 / f64::from(g));
            let m = l.memoized::<LocalHashing>().unwrap();
            assert_eq!(m.one_report().spec(), l.report_spec().unwrap());
            assert_eq!(m.one_report().hash_range(), g);
            let (p, q) = l.report_spec().unwrap().pure_probabilities().unwrap();
            assert!((p - l.chained().p).abs() < 1e-12 && q == l.chained().q);
        }
        // The chain needs eps_1 < eps_perm, as L-GRR's.
        let err = Longitudinal::new(
            LongitudinalProtocol::LOlh,
            DomainSize::new(50).unwrap(),
            Epsilon::new(1.0).unwrap(),
            Epsilon::new(1.0).unwrap(),
        )
        .unwrap_err();
        assert!(
            matches!(err, ParamError::LongitudinalBudget { .. }),
            "{err:?}"
        );
        // A g beyond what any family runs is refused, naming it.
        let err = Longitudinal::new(
            LongitudinalProtocol::LOlh,
            DomainSize::new(50).unwrap(),
            Epsilon::new(60.0).unwrap(),
            Epsilon::new(30.0).unwrap(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("hash range g"), "{err}");
    }

    /// LOLOHA's published g (the Python formula of hharcolezi/LOLOHA, evaluated directly)
    /// at budgets where it does not overflow, and a sane value where it would.
    #[test]
    fn loloha_range_matches_the_published_formula() {
        let published = |e: f64, a: f64| -> u32 {
            let x = |v: f64| v.exp();
            let num = (x(4.0 * e) - 14.0 * x(2.0 * e) - 12.0 * x(2.0 * e * (a + 1.0))
                + 12.0 * x(e * (a + 1.0))
                + 12.0 * x(e * (a + 3.0))
                + 1.0)
                .sqrt()
                - x(2.0 * e)
                + 6.0 * x(e)
                - 6.0 * x(e * a)
                + 1.0;
            ((num / (6.0 * (x(e) - x(e * a)))).round() as u32).max(2)
        };
        for e in [0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0] {
            for a in [0.1, 0.3, 0.5, 0.7, 0.9] {
                let (perm, one) = (Epsilon::new(e).unwrap(), Epsilon::new(a * e).unwrap());
                assert_eq!(rounds::loloha_range(perm, one), published(e, a), "{e} {a}");
            }
        }
        let big = rounds::loloha_range(Epsilon::new(400.0).unwrap(), Epsilon::new(200.0).unwrap());
        assert_eq!(big, u32::MAX);
    }

    /// LOLOHA's device: one seed per user, a memo per hashed value, reports that support
    /// the true item at the chained rate p_s (goodness of fit over many users).
    #[test]
    fn the_hashed_device_keeps_its_seed_and_memos_per_hash() {
        use crate::Support;
        let l = l(LongitudinalProtocol::LOlh, 30, 4.0, 2.0);
        let device = HashedMemo::new(&l).unwrap();
        let mut rng = stream_rng(5, 0, Role::Genuine, 0);
        let (users, mut supported) = (20_000u32, 0u64);
        for u in 0..users {
            let mut memory = HashedMemory::default();
            let report = device.report_value(&mut memory, u % 30, &mut rng).unwrap();
            supported += u64::from(device.mechanism().supports(&report, u % 30));
            // Every value of the domain: at most g memos, one seed.
            for v in 0..30 {
                assert_eq!(
                    device.report_value(&mut memory, v, &mut rng).unwrap().seed,
                    report.seed
                );
            }
            assert!(memory.memos().len() <= l.hash_range().unwrap() as usize);
            assert_eq!(memory.seed(), Some(report.seed));
        }
        let p = l.chained().p;
        let se = (p * (1.0 - p) / f64::from(users)).sqrt();
        let rate = supported as f64 / f64::from(users);
        assert!((rate - p).abs() < 4.0 * se, "{rate} vs {p} +- {se}");
        assert!(
            HashedMemo::new(&super::tests::l(LongitudinalProtocol::LGrr, 30, 4.0, 2.0)).is_err()
        );
    }

    #[test]
    fn a_memo_out_of_range_or_unsorted_is_rejected() {
        use crate::{Grr, GrrReport, OnesReport, UnaryEncoding};
        let mut rng = stream_rng(1, 0, Role::Other(0), 0);
        let grr = l(LongitudinalProtocol::LGrr, 5, 2.0, 1.0)
            .memoized::<Grr>()
            .unwrap();
        let oue = l(LongitudinalProtocol::LOue, 5, 2.0, 1.0)
            .memoized::<UnaryEncoding>()
            .unwrap();
        assert!(grr.report(&GrrReport { y: 5 }, &mut rng).is_err());
        assert!(
            oue.report(&OnesReport { ones: vec![3, 1] }, &mut rng)
                .is_err()
        );
        assert!(oue.report(&OnesReport { ones: vec![] }, &mut rng).is_ok());
        assert!(grr.memoize(5, &mut rng).is_err());
        // The chain's family is the first round's: another is a typed error.
        let err = l(LongitudinalProtocol::LGrr, 5, 2.0, 1.0)
            .memoized::<UnaryEncoding>()
            .unwrap_err();
        assert!(matches!(err, Error::WrongFamily(_)), "{err:?}");
    }

    #[test]
    fn reports_without_a_second_round_are_only_replayed() {
        use crate::SubsetSelection;
        let (k, eps) = (DomainSize::new(10).unwrap(), Epsilon::new(2.0).unwrap());
        let ss = SubsetSelection::new(k, eps, 3).unwrap();
        let round = Round { p: 0.9, q: 0.05 };
        let err = Memoized::refreshed(ss.clone(), round, Epsilon::new(1.0).unwrap()).unwrap_err();
        assert!(
            err.to_string().contains("memoize them permanently"),
            "{err}"
        );
        let permanent = Memoized::permanent(ss.clone());
        let mut rng = stream_rng(1, 0, Role::Other(0), 0);
        let memo = permanent.memoize(4, &mut rng).unwrap();
        for _ in 0..3 {
            assert_eq!(permanent.report(&memo, &mut rng).unwrap(), memo);
        }
        assert_eq!(permanent.one_report(), &ss);
        assert_eq!(permanent.second_round(), None);
    }

    #[test]
    fn a_second_round_that_is_not_randomized_response_is_refused() {
        let shape = MemoShape::Value { values: 4 };
        assert!(SecondRound::new(shape, Round { p: 0.7, q: 0.1 }).is_ok());
        assert!(SecondRound::new(shape, Round { p: 0.7, q: 0.2 }).is_err());
        assert!(SecondRound::new(shape, Round { p: 0.1, q: 0.3 }).is_err());
        let bits = MemoShape::Bits { bits: 4 };
        assert!(SecondRound::new(bits, Round { p: 0.7, q: 0.2 }).is_ok());
        assert!(
            SecondRound::new(
                bits,
                Round {
                    p: f64::NAN,
                    q: 0.2
                }
            )
            .is_err()
        );
    }

    /// Memoized local hashing: the seed is kept and the hashed value refreshed by
    /// randomized response over `0..g`; one report is LH at eps_1 with the same g, whose
    /// `q* = 1/g` the chain keeps. Goodness of fit of the refreshed value, and a round
    /// that spends another budget than eps_1 refused.
    #[test]
    fn memoized_local_hashing_keeps_the_seed_and_refreshes_the_value() {
        use crate::{LhReport, LocalHashing, Mechanism};
        let (k, g) = (DomainSize::new(20).unwrap(), 4u32);
        let (perm, one) = (Epsilon::new(3.0).unwrap(), Epsilon::new(1.0).unwrap());
        let first = LocalHashing::new(k, perm, g).unwrap();
        // The GRR chain over g values (rounds::second's L-GRR formula with k -> g).
        let p1 = first.spec().pure_probabilities().unwrap().0;
        let p_s = one.get().exp() / (one.get().exp() + f64::from(g) - 1.0);
        let p2 = ((f64::from(g) - 1.0) * p_s - (1.0 - p1)) / (f64::from(g) * p1 - 1.0);
        let round = Round {
            p: p2,
            q: (1.0 - p2) / f64::from(g - 1),
        };
        let m = Memoized::refreshed(first.clone(), round, one).unwrap();
        assert_eq!(m.one_report(), &LocalHashing::new(k, one, g).unwrap());
        let err = Memoized::refreshed(first, round, Epsilon::new(1.5).unwrap()).unwrap_err();
        assert!(err.to_string().contains("chained round's budget"), "{err}");
        let memo = LhReport { seed: 12345, y: 2 };
        let mut rng = stream_rng(3, 0, Role::Other(0), 0);
        let mut seen = [0u64; 4];
        let draws = 100_000;
        for _ in 0..draws {
            let r = m.report(&memo, &mut rng).unwrap();
            assert_eq!(r.seed, memo.seed);
            seen[r.y as usize] += 1;
        }
        // Chi-square against (q2, q2, p2, q2), 3 degrees of freedom: 16.27 is its 0.999
        // quantile (a seeded draw: the test does not flake).
        let chi2: f64 = seen
            .iter()
            .enumerate()
            .map(|(y, &o)| {
                let e = draws as f64 * if y == 2 { round.p } else { round.q };
                (o as f64 - e).powi(2) / e
            })
            .sum();
        assert!(chi2 < 16.27, "{seen:?}: chi2 = {chi2}");
    }
}
