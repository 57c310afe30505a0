//! Memoization as a combinator over any mechanism: a first round draws the memo once per
//! value, and every collection sends either the memo itself (a permanent memo, replayed)
//! or a fresh second-round randomization of it, chosen by the shape of the family's
//! report ([`MemoShape`], stated by the family's [`FamilyMechanism::refresh`]):
//!
//! | shape | second round | families |
//! |---|---|---|
//! | [`MemoShape::Value`] | keep the value w.p. `p2`, else another of the values uniformly | GRR |
//! | [`MemoShape::Bits`] | keep each one-bit w.p. `p2`, set each zero bit w.p. `q2` | UE |
//! | [`MemoShape::SeededValue`] | the value as [`MemoShape::Value`], the seed kept | LH |
//!
//! One refreshed report, given the true item, follows the family's own law at the chained
//! probabilities ([`Round::then`]): [`Memoized::one_report`] is that one-shot mechanism,
//! which validates, aggregates, scores and audits one report, so every consumer takes the
//! one-shot path for it. The paper's chains (L-GRR, L-SUE, ...) are presets:
//! [`Longitudinal`](super::Longitudinal) derives their rounds, and
//! [`Longitudinal::memoized`](super::Longitudinal::memoized) (typed) or
//! [`dispatch_memoized!`](crate::dispatch_memoized) (any family) builds this.

use rand::Rng;
use rand_distr::{Bernoulli, Distribution};

use crate::error::{ItemOutOfRange, ParamError, ReportError};
use crate::families::FamilyMechanism;
use crate::report::{GrrReport, LhReport, OnesReport, SheReport, SubsetReport};
use crate::sampling::{BernoulliSet, uniform_other};
use crate::vocab::Epsilon;

use super::Round;

/// The shape of a family's report, as memoization's second round refreshes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoShape {
    /// One value of `0..values` (a [`GrrReport`]), refreshed by randomized response over
    /// the values.
    Value {
        /// How many values a report can take.
        values: u32,
    },
    /// A set of one-bits of `0..bits` (a [`OnesReport`]), refreshed bit by bit.
    Bits {
        /// How many bits a report has.
        bits: u32,
    },
    /// A public seed and a value of `0..values` (an [`LhReport`]): the seed kept, the value
    /// refreshed as [`MemoShape::Value`].
    SeededValue {
        /// How many values the hashed value can take.
        values: u32,
    },
}

/// What a family states to be memoized with a second round
/// ([`FamilyMechanism::refresh`]): its report's shape, and the parameter of the one-shot
/// mechanism one refreshed report follows.
#[derive(Debug, Clone, Copy)]
pub struct Refresh<P> {
    /// The report's shape.
    pub shape: MemoShape,
    /// The family parameter of one refreshed report, from the first round's parameter and
    /// the chained law `first.then(second)` (UE: the chained `p`; GRR and LH: unchanged).
    pub chained: fn(P, Round) -> P,
}

/// A report type's second round: how a memo of this shape is refreshed.
pub trait Refreshable: Clone {
    /// Whether this report type has the shape `shape`.
    fn has_shape(shape: MemoShape) -> bool;

    /// A fresh randomization of the memo `self` (valid, of the second round's shape).
    fn refresh<R: Rng + ?Sized>(&self, second: &SecondRound, rng: &mut R) -> Self;
}

/// The second round of a refreshed memo: its probabilities and samplers.
#[derive(Debug, Clone)]
pub struct SecondRound {
    shape: MemoShape,
    round: Round,
    keep: Bernoulli,
    others: BernoulliSet,
}

impl SecondRound {
    /// The round `round` over reports of shape `shape`: `0 <= q < p <= 1`, and for the
    /// value shapes `q = (1 - p) / (values - 1)`, the law of randomized response.
    pub fn new(shape: MemoShape, round: Round) -> Result<Self, ParamError> {
        let Round { p, q } = round;
        let bad = |name, requirement: &str, value| ParamError::Parameter {
            name,
            description: name,
            requirement: requirement.to_owned(),
            value,
        };
        if !(q >= 0.0 && q < p && p <= 1.0) {
            return Err(bad("p2", "lie in (q2, 1] with q2 in [0, p2)", p));
        }
        if let MemoShape::Value { values } | MemoShape::SeededValue { values } = shape {
            let rr = (1.0 - p) / (f64::from(values) - 1.0);
            if values < 2 || (q - rr).abs() > 1e-12 * rr.max(f64::MIN_POSITIVE) {
                return Err(bad(
                    "q2",
                    "be (1 - p2) / (values - 1) for a report of one value",
                    q,
                ));
            }
        }
        Ok(Self {
            shape,
            round,
            keep: Bernoulli::new(p).map_err(|_| bad("p2", "be a probability", p))?,
            others: BernoulliSet::new(q),
        })
    }

    /// The round's `(p2, q2)`.
    pub fn round(&self) -> Round {
        self.round
    }

    /// The shape it refreshes.
    pub fn shape(&self) -> MemoShape {
        self.shape
    }

    /// Keeps `value` w.p. `p2`, else draws one of the other values uniformly.
    fn refresh_value<R: Rng + ?Sized>(&self, value: u32, values: u32, rng: &mut R) -> u32 {
        if self.keep.sample(rng) {
            value
        } else {
            uniform_other(values, value, rng)
        }
    }
}

impl Refreshable for GrrReport {
    fn has_shape(shape: MemoShape) -> bool {
        matches!(shape, MemoShape::Value { .. })
    }

    fn refresh<R: Rng + ?Sized>(&self, second: &SecondRound, rng: &mut R) -> Self {
        let MemoShape::Value { values } = second.shape else {
            return *self;
        };
        GrrReport {
            y: second.refresh_value(self.y, values, rng),
        }
    }
}

impl Refreshable for LhReport {
    fn has_shape(shape: MemoShape) -> bool {
        matches!(shape, MemoShape::SeededValue { .. })
    }

    fn refresh<R: Rng + ?Sized>(&self, second: &SecondRound, rng: &mut R) -> Self {
        let MemoShape::SeededValue { values } = second.shape else {
            return *self;
        };
        LhReport {
            seed: self.seed,
            y: second.refresh_value(self.y, values, rng),
        }
    }
}

impl Refreshable for OnesReport {
    fn has_shape(shape: MemoShape) -> bool {
        matches!(shape, MemoShape::Bits { .. })
    }

    fn refresh<R: Rng + ?Sized>(&self, second: &SecondRound, rng: &mut R) -> Self {
        let MemoShape::Bits { bits } = second.shape else {
            return self.clone();
        };
        // Each memoized one-bit stays w.p. p2; the zero bits between them are set w.p.
        // q2, drawn by geometric gaps over each run of zeros (O(|memo| + bits q2)).
        let mut ones =
            Vec::with_capacity(self.ones.len() + (bits as f64 * second.round.q) as usize + 4);
        let mut start = 0u32;
        for &b in self.ones.iter().chain(std::iter::once(&bits)) {
            second
                .others
                .for_each(b - start, rng, |i| ones.push(start + i));
            if b < bits && second.keep.sample(rng) {
                ones.push(b);
            }
            start = b + 1;
        }
        OnesReport { ones }
    }
}

/// Reports with no second round: a memo of them is only replayed.
macro_rules! replay_only {
    ($($report:ty),+) => {$(
        impl Refreshable for $report {
            fn has_shape(_: MemoShape) -> bool {
                false
            }

            fn refresh<R: Rng + ?Sized>(&self, _: &SecondRound, _: &mut R) -> Self {
                self.clone()
            }
        }
    )+};
}
replay_only!(SubsetReport, SheReport);

/// A mechanism under memoization: `first` draws one memo per value, and each collection
/// sends the memo refreshed by a second round, or the memo itself (a permanent memo).
///
/// ```
/// use ldp_core::longitudinal::{Longitudinal, LongitudinalProtocol, Memoized};
/// use ldp_core::simulation::{Role, stream_rng};
/// use ldp_core::{Aggregator, DomainSize, Epsilon, Estimator, Mechanism, UnaryEncoding};
///
/// let (k, perm, one) = (DomainSize::new(10)?, Epsilon::new(2.0)?, Epsilon::new(1.0)?);
/// let l_osue = Longitudinal::new(LongitudinalProtocol::LOsue, k, perm, one)?;
/// let memoized: Memoized<UnaryEncoding> = l_osue.memoized()?;
/// let mut rng = stream_rng(7, 0, Role::Genuine, 0);
/// let mut server = memoized.one_report().aggregator(); // one collection's server
/// for user in 0..2_000u32 {
///     let memo = memoized.memoize(user % 10, &mut rng)?; // once per user and value
///     server.add(&memoized.report(&memo, &mut rng)?)?;  // at every collection
/// }
/// assert_eq!(memoized.one_report().epsilon(), one);     // one report spends eps_1
/// let freq = server.estimate(Estimator::Simplex)?;
/// assert!((freq.iter().sum::<f64>() - 1.0).abs() < 1e-9);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Memoized<M> {
    first: M,
    one_report: M,
    second: Option<SecondRound>,
}

impl<M: FamilyMechanism> PartialEq for Memoized<M> {
    fn eq(&self, other: &Self) -> bool {
        self.first == other.first
            && self.one_report == other.one_report
            && self.second.as_ref().map(SecondRound::round)
                == other.second.as_ref().map(SecondRound::round)
    }
}

impl<M: FamilyMechanism> Memoized<M>
where
    M::Report: Refreshable,
{
    /// A permanent memo: every collection replays the first round's report, so any number
    /// of linked reports reveal what one does (`first`'s budget), and one report is
    /// `first`'s.
    pub fn permanent(first: M) -> Self {
        Self {
            one_report: first.clone(),
            first,
            second: None,
        }
    }

    /// A memo refreshed at every collection by the second round `second` (`(p2, q2)`), so
    /// that one report spends `eps_1`: the chained law `first.then(second)` must be the
    /// family's at `eps_1` (the presets' rounds are derived so; checked to 1e-9). Fails
    /// when the family's reports have no second round ([`ParamError::NoRefresh`]), or when
    /// the round or `eps_1` is not one the family takes.
    pub fn refreshed(first: M, second: Round, eps_1: Epsilon) -> Result<Self, ParamError> {
        let spec = first.spec();
        let no_refresh = ParamError::NoRefresh {
            family: spec.family(),
        };
        let param = M::param_of(&spec.params()).ok_or(no_refresh.clone())?;
        let refresh = M::refresh(spec.k(), param)
            .filter(|r| M::Report::has_shape(r.shape))
            .ok_or(no_refresh.clone())?;
        let (p1, q1) = M::probabilities(spec.k(), spec.eps(), param).ok_or(no_refresh.clone())?;
        let chained = Round { p: p1, q: q1 }.then(second);
        let one_param = (refresh.chained)(param, chained);
        // One report must be the family's at eps_1: a round that spends another budget
        // would leave the server estimating with the wrong law.
        let (p, q) = M::probabilities(spec.k(), eps_1, one_param).ok_or(no_refresh)?;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
        if !(close(p, chained.p) && close(q, chained.q)) {
            return Err(ParamError::Parameter {
                name: "eps_1",
                description: "the per-report budget eps_1",
                requirement: format!(
                    "be the chained round's budget (its law is p* = {}, q* = {}; eps_1 gives p* = {p}, q* = {q})",
                    chained.p, chained.q
                ),
                value: eps_1.get(),
            });
        }
        let one_report = M::build(spec.k(), eps_1, one_param)?;
        Ok(Self {
            first,
            one_report,
            second: Some(SecondRound::new(refresh.shape, second)?),
        })
    }

    /// The memo of `item`: a first-round report, drawn once per value and kept.
    pub fn memoize<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<M::Report, ItemOutOfRange> {
        self.first.perturb(item, rng)
    }

    /// This collection's report of `memo`, which must be a valid first-round report
    /// (memos of [`Memoized::memoize`] are).
    pub fn report<R: Rng + ?Sized>(
        &self,
        memo: &M::Report,
        rng: &mut R,
    ) -> Result<M::Report, ReportError> {
        self.first.validate(memo)?;
        Ok(self.refresh(memo, rng))
    }

    /// [`Memoized::report`] without validating `memo`: for memos this value drew.
    pub fn refresh<R: Rng + ?Sized>(&self, memo: &M::Report, rng: &mut R) -> M::Report {
        match &self.second {
            Some(second) => memo.refresh(second, rng),
            None => memo.clone(),
        }
    }

    /// The first round, which draws the memo: what any number of linked reports reveal
    /// at most.
    pub fn first(&self) -> &M {
        &self.first
    }

    /// The one-shot mechanism one report follows given the true item: the first round
    /// itself for a permanent memo, the family at `eps_1` with the chained probabilities
    /// for a refreshed one. One collection's reports validate, aggregate, and are
    /// attacked and audited as its reports; one user's reports at several collections
    /// share a memo, so they are not independent.
    pub fn one_report(&self) -> &M {
        &self.one_report
    }

    /// The second round's `(p2, q2)`; `None` for a permanent memo.
    pub fn second_round(&self) -> Option<Round> {
        self.second.as_ref().map(SecondRound::round)
    }
}

/// The serialized form of [`Memoized`]: the first round's spec, the second round (none
/// for a permanent memo) and one report's budget; deserializing rebuilds and checks it.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoizedState {
    first: crate::Spec,
    second: Option<Round>,
    eps_1: Epsilon,
}

#[cfg(feature = "serde")]
impl<M: FamilyMechanism> serde::Serialize for Memoized<M> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        MemoizedState {
            first: self.first.spec(),
            second: self.second.as_ref().map(SecondRound::round),
            eps_1: self.one_report.epsilon(),
        }
        .serialize(serializer)
    }
}

#[cfg(feature = "serde")]
impl<'de, M: FamilyMechanism> serde::Deserialize<'de> for Memoized<M>
where
    M::Report: Refreshable,
{
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let state = MemoizedState::deserialize(deserializer)?;
        let spec = state.first;
        let param = M::param_of(&spec.params()).ok_or_else(|| {
            D::Error::custom(crate::WrongFamily {
                expected: M::FAMILY,
                found: spec.family(),
            })
        })?;
        let first = M::build(spec.k(), spec.eps(), param).map_err(D::Error::custom)?;
        match state.second {
            Some(round) => Self::refreshed(first, round, state.eps_1).map_err(D::Error::custom),
            None if state.eps_1 == spec.eps() => Ok(Self::permanent(first)),
            None => Err(D::Error::custom(format!(
                "a permanent memo's report spends the first round's eps = {}, not {}",
                spec.eps().get(),
                state.eps_1.get()
            ))),
        }
    }
}

/// Runs `$body` with `$m` bound to the [`Memoized`] instance of the preset `$preset` (a
/// [`Longitudinal`](crate::longitudinal::Longitudinal)), whatever its first round's
/// family: `Ok($body)`, or the [`ParamError`] of building it.
///
/// ```
/// use ldp_core::longitudinal::{Longitudinal, LongitudinalProtocol};
/// use ldp_core::{dispatch_memoized, DomainSize, Epsilon, Mechanism};
/// let (k, perm, one) = (DomainSize::new(10)?, Epsilon::new(2.0)?, Epsilon::new(1.0)?);
/// let l_grr = Longitudinal::new(LongitudinalProtocol::LGrr, k, perm, one)?;
/// let eps = dispatch_memoized!(&l_grr, m => m.one_report().epsilon().get())?;
/// assert_eq!(eps, 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[macro_export]
macro_rules! dispatch_memoized {
    ($preset:expr, $m:ident => $body:expr) => {{
        let preset: &$crate::longitudinal::Longitudinal = $preset;
        match preset.first_spec().build() {
            Err(e) => Err(e),
            Ok(first) => $crate::dispatch!(first, first => {
                match $crate::longitudinal::Memoized::refreshed(
                    first,
                    preset.second_round(),
                    preset.eps_1(),
                ) {
                    Ok($m) => Ok($body),
                    Err(e) => Err(e),
                }
            }),
        }
    }};
}
