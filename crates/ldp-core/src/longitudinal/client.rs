//! The device side: memos kept per value, as a device persists them.

use std::collections::BTreeMap;

use rand::{CryptoRng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::error::{Error, ReportError};

use super::{Longitudinal, LongitudinalReport};

/// A memoized first-round output: an item (L-GRR) or one-bits (the unary chains).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Memo {
    /// L-GRR: the memoized item.
    Item(u32),
    /// Unary chains: the memoized one-bits, strictly increasing.
    Ones(Vec<u32>),
}

/// What a device persists: the protocol and one memo per value it has reported.
///
/// Memos are kept per value, as RAPPOR does: a user whose value changes and later changes
/// back reuses the old memo, so alternating values cannot be averaged out. Restoring a
/// table (deserializing, [`MemoTable::restore`]) checks every memo against the protocol.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "MemoTableState")
)]
pub struct MemoTable {
    protocol: Longitudinal,
    memos: BTreeMap<u32, Memo>,
}

#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoTableState {
    protocol: Longitudinal,
    memos: BTreeMap<u32, Memo>,
}

#[cfg(feature = "serde")]
impl TryFrom<MemoTableState> for MemoTable {
    type Error = Error;
    fn try_from(s: MemoTableState) -> Result<Self, Error> {
        MemoTable::restore(s.protocol, s.memos)
    }
}

impl MemoTable {
    /// No memos yet.
    pub fn new(protocol: Longitudinal) -> Self {
        Self {
            protocol,
            memos: BTreeMap::new(),
        }
    }

    /// A table restored from its parts, every value and memo checked.
    pub fn restore(protocol: Longitudinal, memos: BTreeMap<u32, Memo>) -> Result<Self, Error> {
        for (&value, memo) in &memos {
            protocol.domain_size().check_item(value)?;
            protocol.validate_memo(memo)?;
        }
        Ok(Self { protocol, memos })
    }

    /// The protocol.
    pub fn protocol(&self) -> &Longitudinal {
        &self.protocol
    }

    /// The memo of `value`, if it has been reported.
    pub fn memo(&self, value: u32) -> Option<&Memo> {
        self.memos.get(&value)
    }
}

/// A device running a longitudinal protocol with a cryptographically secure generator.
///
/// ```
/// use ldp_core::longitudinal::{Longitudinal, LongitudinalClient, LongitudinalProtocol};
/// use ldp_core::{DomainSize, Epsilon};
/// let l_grr = Longitudinal::new(
///     LongitudinalProtocol::LGrr, DomainSize::new(5)?, Epsilon::new(3.0)?, Epsilon::new(1.0)?,
/// )?;
/// let mut device = LongitudinalClient::from_os_rng(l_grr)?;
/// device.report(2)?;
/// let saved = device.state().clone();           // persist this between runs
/// let mut device = LongitudinalClient::from_os_rng_with(saved)?;
/// assert!(device.state().memo(2).is_some());  // the memo of 2 survives
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct LongitudinalClient<R = ChaCha20Rng> {
    table: MemoTable,
    rng: R,
}

impl LongitudinalClient<ChaCha20Rng> {
    /// A device without memos, ChaCha20 seeded by the operating system.
    pub fn from_os_rng(protocol: Longitudinal) -> Result<Self, rand::rngs::SysError> {
        Self::from_os_rng_with(MemoTable::new(protocol))
    }

    /// A device with persisted memos, ChaCha20 seeded by the operating system.
    pub fn from_os_rng_with(table: MemoTable) -> Result<Self, rand::rngs::SysError> {
        Ok(Self {
            table,
            rng: ChaCha20Rng::try_from_rng(&mut rand::rngs::SysRng)?,
        })
    }
}

impl<R: CryptoRng> LongitudinalClient<R> {
    /// A device drawing from `rng`, a cryptographically secure generator.
    pub fn with_rng(table: MemoTable, rng: R) -> Self {
        Self { table, rng }
    }

    /// This collection's report of `value`: memoizes `value` the first time it is seen,
    /// then perturbs its memo afresh. Fails only when `value` is outside `0..k`.
    pub fn report(&mut self, value: u32) -> Result<LongitudinalReport, Error> {
        let protocol = &self.table.protocol;
        let memo = match self.table.memos.entry(value) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(protocol.memoize(value, &mut self.rng)?)
            }
        };
        protocol
            .report(memo, &mut self.rng)
            .map_err(|e: ReportError| e.into())
    }

    /// The memos, to persist.
    pub fn state(&self) -> &MemoTable {
        &self.table
    }
}
