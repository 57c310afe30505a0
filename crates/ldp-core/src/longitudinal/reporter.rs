//! A user's side of repeated collection: what stays fixed for the user between
//! collections (nothing, or a memo), and the report each collection sends. Attacks,
//! audits and simulations of linked reports take any [`Reporter`] (one value per user)
//! or [`Device`] (a value that may change between collections), one path for one-shot
//! and memoized protocols.

use std::collections::BTreeMap;

use rand::Rng;

use crate::error::ItemOutOfRange;
use crate::families::FamilyMechanism;
use crate::mechanism::Mechanism;

use super::memoize::{Memoized, Refreshable};

/// A user reporting one value at every collection.
pub trait Reporter: Sync {
    /// The one-shot law of one report given the value.
    type Mechanism: Mechanism;
    /// What the user keeps between collections.
    type State: Send;

    /// The mechanism one report follows.
    fn mechanism(&self) -> &Self::Mechanism;

    /// The state of a user whose value is `item`, drawn before the first collection.
    fn start<R: Rng + ?Sized>(&self, item: u32, rng: &mut R)
    -> Result<Self::State, ItemOutOfRange>;

    /// One collection's report from `state` (whose value [`Reporter::start`] checked: a
    /// state it returned gives no error).
    fn report<R: Rng + ?Sized>(
        &self,
        state: &Self::State,
        rng: &mut R,
    ) -> Result<<Self::Mechanism as Mechanism>::Report, ItemOutOfRange>;
}

/// A one-shot mechanism reporting afresh at every collection, without memoization.
#[derive(Debug, Clone, PartialEq)]
pub struct Fresh<M>(pub M);

/// The user's value, checked against the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value(u32);

impl<M: Mechanism> Reporter for Fresh<M> {
    type Mechanism = M;
    type State = Value;

    fn mechanism(&self) -> &M {
        &self.0
    }

    /// Draws nothing: the value is only checked.
    fn start<R: Rng + ?Sized>(&self, item: u32, _: &mut R) -> Result<Value, ItemOutOfRange> {
        self.0.domain_size().check_item(item)?;
        Ok(Value(item))
    }

    fn report<R: Rng + ?Sized>(
        &self,
        state: &Value,
        rng: &mut R,
    ) -> Result<M::Report, ItemOutOfRange> {
        self.0.perturb(state.0, rng)
    }
}

impl<M: FamilyMechanism> Reporter for Memoized<M>
where
    M::Report: Refreshable,
{
    type Mechanism = M;
    type State = M::Report;

    fn mechanism(&self) -> &M {
        self.one_report()
    }

    /// Draws the memo.
    fn start<R: Rng + ?Sized>(&self, item: u32, rng: &mut R) -> Result<M::Report, ItemOutOfRange> {
        self.memoize(item, rng)
    }

    fn report<R: Rng + ?Sized>(
        &self,
        memo: &M::Report,
        rng: &mut R,
    ) -> Result<M::Report, ItemOutOfRange> {
        Ok(self.refresh(memo, rng))
    }
}

/// A user's device over collections at which its value may change: what it keeps
/// between collections (its [`Device::Memory`]: nothing, or one memo per value it has
/// reported, as RAPPOR does) and the report each collection sends.
///
/// ```
/// use ldp_core::longitudinal::{Device, Longitudinal, LongitudinalProtocol};
/// use ldp_core::simulation::{Role, stream_rng};
/// use ldp_core::{DomainSize, Epsilon, Grr};
/// let l_grr = Longitudinal::new(
///     LongitudinalProtocol::LGrr, DomainSize::new(5)?, Epsilon::new(3.0)?, Epsilon::new(1.0)?,
/// )?;
/// let device = l_grr.memoized::<Grr>()?;
/// let (mut memory, mut rng) = (Default::default(), stream_rng(1, 0, Role::Genuine, 0));
/// for value in [2, 2, 4, 2] {
///     device.report_value(&mut memory, value, &mut rng)?;
/// }
/// assert_eq!(memory.len(), 2); // one memo for 2 (reused when the value comes back), one for 4
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Device: Sync {
    /// The one-shot law of one report given the current value.
    type Mechanism: Mechanism;
    /// What the device keeps between collections.
    type Memory: Default + Send;

    /// The mechanism one report follows.
    fn mechanism(&self) -> &Self::Mechanism;

    /// This collection's report of `item`, the device's value today; `memory` is what
    /// earlier collections left (updated here). Fails only when `item` is outside `0..k`.
    fn report_value<R: Rng + ?Sized>(
        &self,
        memory: &mut Self::Memory,
        item: u32,
        rng: &mut R,
    ) -> Result<<Self::Mechanism as Mechanism>::Report, ItemOutOfRange>;

    /// The budget the reports sent so far reveal at most, by basic composition: eps per
    /// fresh report, the first round's budget per memo.
    fn spent(&self, memory: &Self::Memory) -> f64;
}

impl<M: Mechanism> Device for Fresh<M> {
    type Mechanism = M;
    /// Reports sent.
    type Memory = u64;

    fn mechanism(&self) -> &M {
        &self.0
    }

    fn report_value<R: Rng + ?Sized>(
        &self,
        sent: &mut u64,
        item: u32,
        rng: &mut R,
    ) -> Result<M::Report, ItemOutOfRange> {
        let report = self.0.perturb(item, rng)?;
        *sent += 1;
        Ok(report)
    }

    fn spent(&self, sent: &u64) -> f64 {
        *sent as f64 * self.0.epsilon().get()
    }
}

impl<M: FamilyMechanism> Device for Memoized<M>
where
    M::Report: Refreshable,
{
    type Mechanism = M;
    type Memory = BTreeMap<u32, M::Report>;

    fn mechanism(&self) -> &M {
        self.one_report()
    }

    /// Memoizes `item` the first time it is seen, then refreshes its memo.
    fn report_value<R: Rng + ?Sized>(
        &self,
        memos: &mut BTreeMap<u32, M::Report>,
        item: u32,
        rng: &mut R,
    ) -> Result<M::Report, ItemOutOfRange> {
        let memo = match memos.entry(item) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => e.insert(self.memoize(item, rng)?),
        };
        Ok(self.refresh(memo, rng))
    }

    fn spent(&self, memos: &BTreeMap<u32, M::Report>) -> f64 {
        memos.len() as f64 * self.first().epsilon().get()
    }
}
