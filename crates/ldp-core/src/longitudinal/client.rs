//! The device side: memos kept per value, as a device persists them.

use std::collections::BTreeMap;

use rand::{CryptoRng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::error::Error;
use crate::families::FamilyMechanism;

use super::memoize::{Memoized, Refreshable};
use super::reporter::Device;

/// What a device persists: the memoized protocol and one memo per value it has reported.
///
/// Memos are kept per value, as RAPPOR does: a user whose value changes and later changes
/// back reuses the old memo, so alternating values cannot be averaged out. Restoring a
/// table (deserializing, [`MemoTable::restore`]) checks every memo against the protocol's
/// first round.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(
        try_from = "MemoTableState<M>",
        bound(deserialize = "M: FamilyMechanism, M::Report: Refreshable")
    )
)]
pub struct MemoTable<M: FamilyMechanism> {
    protocol: Memoized<M>,
    memos: BTreeMap<u32, M::Report>,
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    bound(deserialize = "M: FamilyMechanism, M::Report: Refreshable")
)]
struct MemoTableState<M: FamilyMechanism> {
    protocol: Memoized<M>,
    memos: BTreeMap<u32, M::Report>,
}

#[cfg(feature = "serde")]
impl<M: FamilyMechanism> TryFrom<MemoTableState<M>> for MemoTable<M>
where
    M::Report: Refreshable,
{
    type Error = Error;
    fn try_from(s: MemoTableState<M>) -> Result<Self, Error> {
        MemoTable::restore(s.protocol, s.memos)
    }
}

impl<M: FamilyMechanism> MemoTable<M>
where
    M::Report: Refreshable,
{
    /// No memos yet.
    pub fn new(protocol: Memoized<M>) -> Self {
        Self {
            protocol,
            memos: BTreeMap::new(),
        }
    }

    /// A table restored from its parts, every value and memo checked.
    pub fn restore(protocol: Memoized<M>, memos: BTreeMap<u32, M::Report>) -> Result<Self, Error> {
        for (&value, memo) in &memos {
            protocol.first().domain_size().check_item(value)?;
            protocol.first().validate(memo)?;
        }
        Ok(Self { protocol, memos })
    }

    /// The protocol.
    pub fn protocol(&self) -> &Memoized<M> {
        &self.protocol
    }

    /// The memo of `value`, if it has been reported.
    pub fn memo(&self, value: u32) -> Option<&M::Report> {
        self.memos.get(&value)
    }

    /// Every value's memo, by value: what to persist.
    pub fn memos(&self) -> &BTreeMap<u32, M::Report> {
        &self.memos
    }
}

/// A device running a memoized protocol with a cryptographically secure generator.
///
/// ```
/// use ldp_core::longitudinal::{Longitudinal, LongitudinalClient, LongitudinalProtocol, MemoTable};
/// use ldp_core::{DomainSize, Epsilon, Grr};
/// let l_grr = Longitudinal::new(
///     LongitudinalProtocol::LGrr, DomainSize::new(5)?, Epsilon::new(3.0)?, Epsilon::new(1.0)?,
/// )?;
/// let mut device = LongitudinalClient::from_os_rng(l_grr.memoized::<Grr>()?)?;
/// let first = device.report(2)?;
/// let saved = device.state().memos().clone();           // persist this between runs
/// let table = MemoTable::restore(l_grr.memoized::<Grr>()?, saved)?;
/// let device = LongitudinalClient::from_os_rng_with(table)?;
/// assert!(device.state().memo(2).is_some());  // the memo of 2 survives
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct LongitudinalClient<M: FamilyMechanism, R = ChaCha20Rng> {
    table: MemoTable<M>,
    rng: R,
}

impl<M: FamilyMechanism> LongitudinalClient<M, ChaCha20Rng>
where
    M::Report: Refreshable,
{
    /// A device without memos, ChaCha20 seeded by the operating system.
    pub fn from_os_rng(protocol: Memoized<M>) -> Result<Self, rand::rngs::SysError> {
        Self::from_os_rng_with(MemoTable::new(protocol))
    }

    /// A device with persisted memos, ChaCha20 seeded by the operating system.
    pub fn from_os_rng_with(table: MemoTable<M>) -> Result<Self, rand::rngs::SysError> {
        Ok(Self {
            table,
            rng: ChaCha20Rng::try_from_rng(&mut rand::rngs::SysRng)?,
        })
    }
}

impl<M: FamilyMechanism, R: CryptoRng> LongitudinalClient<M, R>
where
    M::Report: Refreshable,
{
    /// A device drawing from `rng`, a cryptographically secure generator.
    pub fn with_rng(table: MemoTable<M>, rng: R) -> Self {
        Self { table, rng }
    }

    /// This collection's report of `value`: memoizes `value` the first time it is seen,
    /// then refreshes its memo. Fails only when `value` is outside `0..k`.
    pub fn report(&mut self, value: u32) -> Result<M::Report, Error> {
        let MemoTable { protocol, memos } = &mut self.table;
        Ok(protocol.report_value(memos, value, &mut self.rng)?)
    }

    /// The memos, to persist.
    pub fn state(&self) -> &MemoTable<M> {
        &self.table
    }
}
