//! The mechanism families: one module each, and the registry at the end of this file, the
//! one list of them.
//!
//! A family module holds everything about its mechanism: the formulas for its
//! probabilities and presets, the client (perturbation), the server (validation,
//! aggregation), its report's support and likelihood, and its [`FamilyMechanism`]
//! implementation, which the registry calls. Everything that must name every family
//! ([`Family`], [`FamilyParams`], [`crate::AnyMechanism`], [`Protocol`], serde of the
//! mechanisms, and the [`dispatch!`](crate::dispatch) and
//! [`dispatch_family!`](crate::dispatch_family) macros other crates match with) is
//! generated from the registry. `docs/adding-a-family.md` walks through adding one.

#[macro_use]
mod registry;

pub mod bit_flip;
pub(crate) mod bits;
pub mod fast_local_hash;
pub mod grr;
pub mod hadamard;
pub mod hadamard_mechanism;
pub mod local_hash;
pub mod sketch;
pub mod subset;
pub mod summation;
pub mod threshold;
pub mod unary;

use std::fmt;
use std::str::FromStr;

use crate::aggregate::Aggregator;
use crate::error::{AggregateError, ParamError};
use crate::longitudinal::Refresh;
use crate::mechanism::Mechanism;
use crate::report::ReportLimits;
use crate::server::Clip;
use crate::space::ParameterSpace;
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

/// A mechanism as its family's registry entry sees it: how its parameters are checked and
/// built, and the facts about it that closed forms need without building it.
///
/// Every function here takes (k, eps, param), not a built mechanism, so that analysis
/// and tuning (which evaluate millions of instances) never allocate a sampler.
pub trait FamilyMechanism: Mechanism + Registered {
    /// Checks `param` against (k, eps): what [`Spec::new`] accepts.
    fn check(k: DomainSize, eps: Epsilon, param: Self::Param) -> Result<(), ParamError>;

    /// The runnable mechanism: what [`Spec::build`] returns.
    fn build(k: DomainSize, eps: Epsilon, param: Self::Param) -> Result<Self, ParamError>;

    /// `(p*, q*)`, by the same functions the mechanism uses; `None` when reports do not
    /// support items (SHE).
    fn probabilities(k: DomainSize, eps: Epsilon, param: Self::Param) -> Option<(f64, f64)>;

    /// The fewest and the most items one report can support (GRR exactly one, SS exactly
    /// omega, UE between 0 and k); `None` when reports do not support items (SHE).
    fn support_size_range(k: DomainSize, param: Self::Param) -> Option<(u32, u32)>;

    /// How large a report can be ([`ReportLimits`]).
    fn report_limits(k: DomainSize, param: Self::Param) -> ReportLimits;

    /// Whether the family's servers clip report coordinates: true for SHE, whose reports
    /// are real vectors; the others' reports have bounded influence by construction.
    const CLIPS: bool = false;

    /// Whether relabelling the domain leaves the family's report law unchanged (its
    /// public randomness averaged, LH's under an ideal hash), so that the paper's attack
    /// guesses every wrong item equally often: `P[guess = g | x] = (1 - ASR) / (k - 1)`
    /// for `g != x`, and the law of a guess is a function of the ASR alone. True for
    /// GRR, SS, UE, LH, HE, THE and dBitFlip; false (the default) for the Hadamard
    /// families, FLH's fixed seeds and the sketches' fixed hashes.
    const RELABELLING_INVARIANT: bool = false;

    /// Further instances that `ldp_optimize::choose_protocol` compares beside the preset:
    /// a small grid over parameters that trade the objectives but belong to no adaptive
    /// protocol (HR's blocks, the sketches' (h, m)). Each passes [`FamilyMechanism::check`].
    /// None by default.
    fn alternatives(k: DomainSize, eps: Epsilon) -> Vec<Self::Param> {
        let _ = (k, eps);
        Vec::new()
    }

    /// How memoization's second round refreshes a memo of this family's reports
    /// ([`crate::longitudinal::Memoized::refreshed`]): the report's shape, and one
    /// refreshed report's parameter. `None` (the default): the reports have no second
    /// round, and a memo of them is only replayed ([`crate::longitudinal::Memoized::permanent`]).
    fn refresh(k: DomainSize, param: Self::Param) -> Option<Refresh<Self::Param>> {
        let _ = (k, param);
        None
    }

    /// Whether a report has public randomness a permanent memo keeps
    /// ([`FamilyMechanism::memo_class`]): false (the default) for a family whose every
    /// value is its own class, so that its memo draws nothing more than the report.
    const PUBLIC_DRAW: bool = false;

    /// The class of `item` under `public`, the randomness a user draws once for a
    /// permanent memo ([`crate::longitudinal::ClassMemo`]): values of one class have one
    /// report law, so one memo per class reveals all a memo can. By default there is no
    /// public randomness and each value is its own class (RAPPOR's memo per value); LH's
    /// class is the hash under the user's seed, dBitFlip's which of its buckets holds the
    /// value.
    fn memo_class(&self, item: u32, public: u64) -> u32 {
        let _ = public;
        item
    }

    /// A report of `item` given the user's public randomness (see
    /// [`FamilyMechanism::memo_class`]); for a uniform `public` it follows
    /// [`Mechanism::perturb`]'s law. By default `public` is not used.
    fn perturb_public<R: rand::Rng + ?Sized>(
        &self,
        item: u32,
        public: u64,
        rng: &mut R,
    ) -> Result<Self::Report, crate::error::ItemOutOfRange> {
        let _ = public;
        self.perturb(item, rng)
    }

    /// A server for untrusted clients: [`Mechanism::aggregator`], or for a family that
    /// clips ([`FamilyMechanism::CLIPS`]) one that clips as `clip` says.
    fn server(&self, clip: Clip) -> Self::Aggregator {
        let _ = clip;
        self.aggregator()
    }
}

/// What the registry generates for each family type from its entry: the parameter type
/// and its conversions. Implemented by the registry only.
pub trait Registered: Sized {
    /// The family's parameters as one value: `()` for a family without one, the value
    /// for a family with one (omega, p, g, theta), a tuple in field order for several.
    type Param: Copy + fmt::Debug + PartialEq + Send + Sync + 'static;

    /// The family's tag.
    const FAMILY: Family;

    /// The [`FamilyParams`] of this family at `param`.
    fn params(param: Self::Param) -> FamilyParams;

    /// The parameter inside `params`, when they are this family's.
    fn param_of(params: &FamilyParams) -> Option<Self::Param>;
}

/// A value a family parameter can take, converted from and to the numbers front ends pass.
pub trait ParamValue: Copy {
    /// Whether every value is a whole number.
    const WHOLE: bool;
    /// The value of `v`, if it is one (a whole number in range for integer parameters).
    fn from_f64(v: f64) -> Option<Self>;
    /// The value as a number.
    fn to_f64(self) -> f64;
}

impl ParamValue for f64 {
    const WHOLE: bool = false;
    #[inline]
    fn from_f64(v: f64) -> Option<Self> {
        Some(v)
    }
    fn to_f64(self) -> f64 {
        self
    }
}

impl ParamValue for u32 {
    const WHOLE: bool = true;
    #[inline]
    fn from_f64(v: f64) -> Option<Self> {
        (v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&v)).then_some(v as u32)
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl FamilyParams {
    /// The single free parameter as a number (omega, p, g or theta); `None` for families
    /// without one.
    #[inline]
    pub fn value(&self) -> Option<f64> {
        match self.values()[..] {
            [v] => Some(v),
            _ => None,
        }
    }

    /// Every parameter by name, in [`Family::parameter_names`]' order.
    pub fn named_values(&self) -> Vec<(&'static str, f64)> {
        let names = self.family().parameter_names().iter().copied();
        names.zip(self.values()).collect()
    }

    /// The parameters of a one-parameter `family` at `value` (omega and g must be whole
    /// numbers); `None` for a family that takes no single value, and for a value that is
    /// not of the parameter's kind. The range is checked by [`Spec::new`].
    #[inline]
    pub fn with_value(family: Family, value: f64) -> Option<Self> {
        match family.parameter_names() {
            [_] => Self::with_values(family, &[value]),
            _ => None,
        }
    }
}

/// A mechanism of one family was asked for where the spec names another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("expected a mechanism of the {expected:?} family, got the {found:?} family")]
pub struct WrongFamily {
    /// The family asked for.
    pub expected: Family,
    /// The family of the spec.
    pub found: Family,
}

/// The protocol asked for has no fixed preset (it is adaptive: tune it with ldp-optimize).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0} is adaptive: its parameter is chosen by tuning, not by a preset")]
pub struct NotClassic(pub Protocol);

/// Number of protocols in the registry.
const PROTOCOLS: usize = Protocol::BY_FAMILY.len();

/// The protocols with `adaptive` as given, in registry order, and how many there are.
const fn select(adaptive: bool) -> ([Protocol; PROTOCOLS], usize) {
    let mut out = [Protocol::Grr; PROTOCOLS];
    let (mut i, mut n) = (0, 0);
    while i < PROTOCOLS {
        if Protocol::BY_FAMILY[i].is_adaptive() == adaptive {
            out[n] = Protocol::BY_FAMILY[i];
            n += 1;
        }
        i += 1;
    }
    (out, n)
}

const N_CLASSIC: usize = select(false).1;
const N_ADAPTIVE: usize = select(true).1;

/// The first `N` entries of `list`.
const fn prefix<const N: usize>(list: [Protocol; PROTOCOLS]) -> [Protocol; N] {
    let mut out = [Protocol::Grr; N];
    let mut i = 0;
    while i < N {
        out[i] = list[i];
        i += 1;
    }
    out
}

impl Protocol {
    /// Every protocol, by [`Protocol::id`]: the paper's twelve in its order, then the
    /// protocols added since, in registry order.
    pub const ALL: [Protocol; PROTOCOLS] = {
        let mut out = [Protocol::Grr; PROTOCOLS];
        let mut i = 0;
        while i < PROTOCOLS {
            let p = Protocol::BY_FAMILY[i];
            out[p.id() as usize] = p;
            i += 1;
        }
        out
    };

    /// The classic protocols (fixed presets).
    pub const CLASSIC: [Protocol; N_CLASSIC] = prefix(select(false).0);

    /// The adaptive protocols (tuned parameter).
    pub const ADAPTIVE: [Protocol; N_ADAPTIVE] = prefix(select(true).0);

    /// The twelve protocols of the paper, in its order: the figures that reproduce it
    /// draw these.
    pub const PAPER: [Protocol; 12] = [
        Protocol::Grr,
        Protocol::Ss,
        Protocol::Sue,
        Protocol::Oue,
        Protocol::Blh,
        Protocol::Olh,
        Protocol::She,
        Protocol::The,
        Protocol::Ass,
        Protocol::Aue,
        Protocol::Alh,
        Protocol::Athe,
    ];

    /// A number that identifies the protocol across versions, for seeding simulations:
    /// the paper's twelve are 0 to 11 in [`Protocol::PAPER`]'s order, and the protocols
    /// added since follow in registry order (new families are appended to the registry,
    /// so no protocol's number ever changes).
    pub const fn id(self) -> u32 {
        let mut i = 0;
        while i < Protocol::PAPER.len() {
            if Protocol::PAPER[i] as usize == self as usize {
                return i as u32;
            }
            i += 1;
        }
        let (mut later, mut j) = (0, 0);
        while j < PROTOCOLS {
            let p = Protocol::BY_FAMILY[j];
            if p as usize == self as usize {
                break;
            }
            let mut in_paper = false;
            let mut i = 0;
            while i < Protocol::PAPER.len() {
                in_paper |= Protocol::PAPER[i] as usize == p as usize;
                i += 1;
            }
            if !in_paper {
                later += 1;
            }
            j += 1;
        }
        (Protocol::PAPER.len() + later) as u32
    }

    /// The name of the family parameter (`omega`, `p`, `g`, `theta`); `None` for families
    /// with none (GRR and SHE).
    pub fn parameter_name(self) -> Option<&'static str> {
        match self.family().parameter_names() {
            [name] => Some(name),
            _ => None,
        }
    }

    /// The names of every protocol, comma-separated, in [`Protocol::ALL`]'s order.
    pub fn names() -> String {
        Protocol::list(&Protocol::ALL)
    }

    /// The names of `protocols`, comma-separated: help and messages that name a set of
    /// protocols generate it from the registry rather than write it out.
    ///
    /// ```
    /// use ldp_core::Protocol;
    /// assert_eq!(Protocol::list(&[Protocol::Grr, Protocol::Olh]), "grr, olh");
    /// assert_eq!(Protocol::list(&Protocol::ADAPTIVE).split(", ").count(), Protocol::ADAPTIVE.len());
    /// ```
    pub fn list(protocols: &[Protocol]) -> String {
        let names: Vec<&str> = protocols.iter().map(|p| p.name()).collect();
        names.join(", ")
    }
}

/// Protocols order as [`Protocol::ALL`] lists them, by [`Protocol::id`].
impl Ord for Protocol {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.id().cmp(&other.id())
    }
}

impl PartialOrd for Protocol {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A protocol name that is not one of [`Protocol::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProtocol(pub String);

impl fmt::Display for UnknownProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown protocol `{}`; expected one of {}",
            self.0,
            Protocol::names()
        )
    }
}

impl std::error::Error for UnknownProtocol {}

impl FromStr for Protocol {
    type Err = UnknownProtocol;
    fn from_str(s: &str) -> Result<Self, UnknownProtocol> {
        let lower = s.trim().to_ascii_lowercase();
        Protocol::ALL
            .into_iter()
            .find(|p| p.name() == lower)
            .ok_or_else(|| UnknownProtocol(s.to_owned()))
    }
}

registry! {
    /// Generalized randomized response.
    Grr = grr::Grr [
        /// Generalized randomized response.
        Grr("grr", "GRR") => classic(|_, _| ()),
    ],
    /// Subset selection with subset size omega in `[1, k-1]`.
    SubsetSelection {
        /// Subset size.
        omega: u32,
    } = subset::SubsetSelection [
        /// Subset selection, omega = max(1, round(k / (e^eps + 1))).
        Ss("ss", "SS") => classic(subset::optimal_size),
        /// Adaptive subset selection (omega tuned for ASR and MSE).
        Ass("ass", "ASS") => adaptive(Ss, subset::paper_space),
    ],
    /// Unary encoding with true-bit probability p in `(0, 1)` (the paper's protocols:
    /// `[0.5, 1)`).
    UnaryEncoding {
        /// Probability of keeping the true bit.
        p: f64,
    } = unary::UnaryEncoding [
        /// Symmetric unary encoding (RAPPOR), p = e^(eps/2) / (e^(eps/2) + 1).
        Sue("sue", "SUE") => fixed(|_, eps| unary::symmetric_p(eps)),
        /// Optimized unary encoding, p = 1/2.
        Oue("oue", "OUE") => fixed(|_, _| unary::OPTIMIZED_P),
        /// Adaptive unary encoding (p tuned for ASR and MSE).
        Aue("aue", "AUE") => adaptive(Oue, unary::paper_space),
    ],
    /// Local hashing with hash range g >= 2.
    LocalHashing {
        /// Hash range.
        g: u32,
    } = local_hash::LocalHashing [
        /// Binary local hashing, g = 2.
        Blh("blh", "BLH") => fixed(|_, _| local_hash::BINARY_RANGE),
        /// Optimized local hashing, g = round(e^eps + 1).
        Olh("olh", "OLH") => fixed(|_, eps| local_hash::optimal_range(eps)),
        /// Adaptive local hashing (g tuned for ASR and MSE).
        Alh("alh", "ALH") => adaptive(Olh, local_hash::paper_space),
    ],
    /// Summation with histogram encoding.
    SummationHistogram = summation::SummationHistogram [
        /// Summation with histogram encoding.
        She("she", "SHE") => classic(|_, _| ()),
    ],
    /// Thresholding with histogram encoding, threshold theta in `[0.5, 1]`.
    ThresholdHistogram {
        /// Threshold.
        theta: f64,
    } = threshold::ThresholdHistogram [
        /// Thresholding with histogram encoding, theta minimizing the variance.
        The("the", "THE") => classic(|_, eps| threshold::optimal_threshold(eps)),
        /// Adaptive thresholding (theta tuned for ASR and MSE).
        Athe("athe", "ATHE") => adaptive(The, threshold::paper_space),
    ],
    /// Hadamard response with B blocks (Acharya, Sun and Zhang 2019).
    HadamardResponse {
        /// The number of blocks, a power of two.
        blocks: u32,
    } = hadamard::HadamardResponse [
        /// Hadamard response, B minimizing the variance (B = 1 up to eps near 1).
        Hr("hr", "HR") => classic(hadamard::optimal_blocks),
    ],
    /// The Hadamard mechanism: one Hadamard coefficient through randomized response.
    HadamardMechanism = hadamard_mechanism::HadamardMechanism [
        /// The Hadamard mechanism.
        Hm("hm", "HM") => classic(|_, _| ()),
    ],
    /// Fast local hashing: local hashing over k' public seeds.
    FastLocalHashing {
        /// Hash range.
        g: u32,
        /// The number of public hash seeds, k'.
        seeds: u32,
    } = fast_local_hash::FastLocalHashing [
        /// Fast local hashing, OLH's g over 1000 seeds.
        Flh("flh", "FLH") => classic(|_, eps| fast_local_hash::preset(eps)),
    ],
    /// Apple's count-mean sketch: h rows of m columns, a perturbed one-hot row.
    CountMeanSketch {
        /// The number of hash functions (rows), h.
        hashes: u32,
        /// The width (columns), m.
        width: u32,
    } = sketch::CountMeanSketch [
        /// The count-mean sketch, h = 256 rows of m = 1024.
        Cms("cms", "CMS") => classic(|_, _| sketch::preset()),
    ],
    /// Apple's Hadamard count-mean sketch: one Hadamard coefficient of a sketch row.
    HadamardCountMeanSketch {
        /// The number of hash functions (rows), h.
        hashes: u32,
        /// The width (columns), m, a power of two.
        width: u32,
    } = sketch::HadamardCountMeanSketch [
        /// The Hadamard count-mean sketch, h = 256 rows of m = 1024.
        Hcms("hcms", "HCMS") => classic(|_, _| sketch::preset()),
    ],
    /// Ding et al.'s dBitFlip: d sampled buckets, one symmetric bit each.
    DBitFlip {
        /// The number of sampled buckets (bits), d.
        bits: u32,
    } = bit_flip::DBitFlip [
        /// dBitFlip with one bit (d = 1); dBitFlipPM is it under permanent memoization.
        DBitFlip("dbitflip", "dBitFlip") => classic(|_, _| bit_flip::ONE_BIT),
    ],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_the_paper_protocols_in_the_papers_order() {
        assert_eq!(&Protocol::ALL[..12], &Protocol::PAPER[..]);
        assert!(Protocol::CLASSIC.iter().all(|p| !p.is_adaptive()));
        assert!(Protocol::ADAPTIVE.iter().all(|p| p.is_adaptive()));
        assert_eq!(
            Protocol::CLASSIC.len() + Protocol::ADAPTIVE.len(),
            Protocol::ALL.len()
        );
        // Protocols sort as ALL lists them.
        let mut sorted = Protocol::ALL;
        sorted.sort();
        assert_eq!(sorted, Protocol::ALL);
        assert!(Protocol::The < Protocol::Ass);
        // Ids: the paper's order, then later protocols; distinct, and ALL's positions.
        for (i, p) in Protocol::ALL.into_iter().enumerate() {
            assert_eq!(p.id() as usize, i);
        }
        let mut ids: Vec<u32> = Protocol::ALL.iter().map(|p| p.id()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids, (0..Protocol::ALL.len() as u32).collect::<Vec<_>>());
    }

    #[test]
    fn names_labels_and_families_come_from_the_registry() {
        for p in Protocol::ALL {
            assert_eq!(p.name().parse::<Protocol>(), Ok(p));
            assert_eq!(p.label().to_ascii_lowercase(), p.name());
            assert_eq!(p.classic_counterpart().family(), p.family());
            assert!(!p.classic_counterpart().is_adaptive());
            assert_eq!(
                p.is_adaptive(),
                p.paper_space(DomainSize::new(10).unwrap(), Epsilon::new(1.0).unwrap())
                    .is_some()
            );
        }
        let err = "xyz".parse::<Protocol>().unwrap_err().to_string();
        assert!(
            err.starts_with("unknown protocol `xyz`; expected one of grr, ss, sue"),
            "{err}"
        );
    }

    #[test]
    fn parameters_round_trip_through_numbers() {
        let (k, eps) = (DomainSize::new(100).unwrap(), Epsilon::new(4.0).unwrap());
        for p in Protocol::CLASSIC {
            let params = Spec::classic(p, k, eps).unwrap().params();
            let family = params.family();
            assert_eq!(params.values().len(), family.parameter_names().len());
            assert_eq!(
                FamilyParams::with_values(family, &params.values()),
                Some(params)
            );
            // One value too many is refused.
            let mut more = params.values();
            more.push(1.0);
            assert_eq!(FamilyParams::with_values(family, &more), None);
        }
        assert_eq!(
            FamilyParams::with_value(Family::SubsetSelection, 2.5),
            None,
            "omega is a whole number"
        );
        assert_eq!(FamilyParams::with_value(Family::Grr, 1.0), None);
    }

    #[test]
    fn whole_parameters_are_the_integer_ones() {
        for &family in Family::ALL {
            let whole = family.parameter_is_whole();
            assert_eq!(whole.len(), family.parameter_names().len(), "{family:?}");
            // A whole parameter refuses a fraction; a real one takes it.
            for (i, &is_whole) in whole.iter().enumerate() {
                let mut values = vec![2.0; whole.len()];
                values[i] = 2.5;
                let ok = FamilyParams::with_values(family, &values).is_some();
                assert_eq!(ok, !is_whole, "{family:?} parameter {i}");
            }
        }
        assert_eq!(Family::SubsetSelection.parameter_is_whole(), &[true]);
        assert_eq!(Family::UnaryEncoding.parameter_is_whole(), &[false]);
    }
}
