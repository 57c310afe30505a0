//! A user's side of repeated collection: what stays fixed for the user between
//! collections (nothing, or a memo), and the report each collection sends. Attacks,
//! audits and simulations of linked reports take any [`Reporter`], one path for one-shot
//! and memoized protocols.

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
