//! LOLOHA's device: memoized local hashing with one seed per user and one memo per hashed
//! value (Arcolezi et al., EDBT 2023).

use std::collections::BTreeMap;

use rand::Rng;

use crate::error::ItemOutOfRange;
use crate::families::local_hash::hash_item;
use crate::mechanism::Mechanism;
use crate::report::LhReport;
use crate::{Error, LocalHashing, ParamError};

use super::Longitudinal;
use super::memoize::Memoized;
use super::reporter::Device;

/// A device running memoized local hashing as LOLOHA does: the seed (the user's hash
/// function) is drawn once, at the first collection, and kept; a value is hashed to one of
/// g values, and the memo is drawn once per *hashed* value. Values that share a hash share
/// a memo, so a user spends at most `g eps_perm` however often its value changes, where
/// the chains memoized per value ([`Memoized`]'s [`Device`]) spend `eps_perm` per value.
///
/// ```
/// use ldp_core::longitudinal::{Device, HashedMemo, Longitudinal, LongitudinalProtocol};
/// use ldp_core::simulation::{Role, stream_rng};
/// use ldp_core::{DomainSize, Epsilon};
/// let l_blh = Longitudinal::new(
///     LongitudinalProtocol::LBlh, DomainSize::new(100)?, Epsilon::new(2.0)?, Epsilon::new(1.0)?,
/// )?;
/// let device = HashedMemo::new(&l_blh)?;
/// let (mut memory, mut rng) = (Default::default(), stream_rng(1, 0, Role::Genuine, 0));
/// let mut seeds = Vec::new();
/// for value in 0..50 {
///     seeds.push(device.report_value(&mut memory, value, &mut rng)?.seed);
/// }
/// assert!(seeds.iter().all(|&s| s == seeds[0]));   // one hash function per user
/// assert!(device.spent(&memory) <= 2.0 * 2.0);     // at most g = 2 memos of eps_perm = 2
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct HashedMemo {
    memoized: Memoized<LocalHashing>,
}

/// What a [`HashedMemo`] device keeps: its seed and one memoized hashed value per hash.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HashedMemory {
    seed: Option<u32>,
    memos: BTreeMap<u32, u32>,
}

impl HashedMemory {
    /// The user's seed, once it has reported.
    pub fn seed(&self) -> Option<u32> {
        self.seed
    }

    /// The memoized (first-round) value of each hashed value reported so far.
    pub fn memos(&self) -> &BTreeMap<u32, u32> {
        &self.memos
    }
}

impl HashedMemo {
    /// The device of L-OLH or L-BLH; another chain is refused ([`ParamError::NotHashed`]).
    pub fn new(preset: &Longitudinal) -> Result<Self, ParamError> {
        let no = ParamError::NotHashed {
            protocol: preset.protocol().name(),
        };
        if preset.hash_range().is_none() {
            return Err(no);
        }
        // The first round of L-OLH and L-BLH is LH: building its combinator fails only as
        // a parameter can.
        let memoized = preset.memoized::<LocalHashing>().map_err(|e| match e {
            Error::Param(p) => p,
            _ => no,
        })?;
        Ok(Self { memoized })
    }

    /// The memoization combinator it runs.
    pub fn memoized(&self) -> &Memoized<LocalHashing> {
        &self.memoized
    }
}

impl Device for HashedMemo {
    type Mechanism = LocalHashing;
    type Memory = HashedMemory;

    fn mechanism(&self) -> &LocalHashing {
        self.memoized.one_report()
    }

    fn report_value<R: Rng + ?Sized>(
        &self,
        memory: &mut HashedMemory,
        item: u32,
        rng: &mut R,
    ) -> Result<LhReport, ItemOutOfRange> {
        let first = self.memoized.first();
        first.domain_size().check_item(item)?;
        let seed = *memory.seed.get_or_insert_with(|| rng.next_u32());
        let hashed = hash_item(item, seed, first.hash_range());
        let y = match memory.memos.entry(hashed) {
            std::collections::btree_map::Entry::Occupied(e) => *e.get(),
            std::collections::btree_map::Entry::Vacant(e) => {
                *e.insert(first.perturb_with_seed(item, seed, rng)?.y)
            }
        };
        Ok(self.memoized.refresh(&LhReport { seed, y }, rng))
    }

    /// `eps_perm` per hashed value memoized: at most `g eps_perm`.
    fn spent(&self, memory: &HashedMemory) -> f64 {
        memory.memos.len() as f64 * self.memoized.first().epsilon().get()
    }
}
