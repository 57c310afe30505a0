//! Permanent memoization by class, over any family: the device of dBitFlipPM (Ding,
//! Kulkarni and Yekhanin, NeurIPS 2017), and of RAPPOR's permanent response per value.

use std::collections::BTreeMap;

use rand::Rng;

use crate::error::ItemOutOfRange;
use crate::families::FamilyMechanism;
use crate::mechanism::Mechanism;

use super::reporter::Device;

/// A permanent memo kept per class ([`FamilyMechanism::memo_class`]): the user's public
/// randomness (a 64-bit draw, for the families with [`FamilyMechanism::PUBLIC_DRAW`]) is
/// drawn at the first collection and kept, and the first
/// report of a class is replayed whenever the value is in that class again.
///
/// - Most families have no public randomness and each value is its own class: a memo per
///   value, RAPPOR's permanent response.
/// - dBitFlipPM is `ClassMemo<DBitFlip>`: its d buckets are drawn once, and at most d + 1
///   reports (one per sampled bucket holding the value, one for "none of them") are ever
///   sent, so a user spends at most `(d + 1) eps` however often its value changes, and a
///   change is seen only when it moves the value between classes.
/// - Local hashing keeps its seed and a memo per hashed value: at most `g eps` (LOLOHA's
///   rule without its second round).
///
/// ```
/// use ldp_core::longitudinal::{ClassMemo, Device};
/// use ldp_core::families::bit_flip::DBitFlip;
/// use ldp_core::simulation::{Role, stream_rng};
/// use ldp_core::{DomainSize, Epsilon};
/// let pm = ClassMemo(DBitFlip::new(DomainSize::new(100)?, Epsilon::new(1.0)?, 2)?);
/// let (mut memory, mut rng) = (Default::default(), stream_rng(1, 0, Role::Genuine, 0));
/// for value in 0..100 {
///     pm.report_value(&mut memory, value, &mut rng)?;
/// }
/// assert!(pm.spent(&memory) <= 3.0 * 1.0); // at most d + 1 = 3 memos of eps = 1
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ClassMemo<M>(pub M);

/// What a [`ClassMemo`] device keeps: its public randomness and one report per class seen.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassMemory<M: Mechanism> {
    public: Option<u64>,
    memos: BTreeMap<u32, M::Report>,
}

impl<M: Mechanism> Default for ClassMemory<M> {
    fn default() -> Self {
        Self {
            public: None,
            memos: BTreeMap::new(),
        }
    }
}

impl<M: Mechanism> ClassMemory<M> {
    /// The public randomness, once the user has reported.
    pub fn public(&self) -> Option<u64> {
        self.public
    }

    /// The memoized report of each class reported so far.
    pub fn memos(&self) -> &BTreeMap<u32, M::Report> {
        &self.memos
    }
}

impl<M: FamilyMechanism> Device for ClassMemo<M>
where
    M::Report: Send,
{
    type Mechanism = M;
    type Memory = ClassMemory<M>;

    fn mechanism(&self) -> &M {
        &self.0
    }

    fn report_value<R: Rng + ?Sized>(
        &self,
        memory: &mut ClassMemory<M>,
        item: u32,
        rng: &mut R,
    ) -> Result<M::Report, ItemOutOfRange> {
        self.0.domain_size().check_item(item)?;
        // Drawn only by families that use it: the others' memos are their reports alone.
        let public = *memory
            .public
            .get_or_insert_with(|| if M::PUBLIC_DRAW { rng.next_u64() } else { 0 });
        let class = self.0.memo_class(item, public);
        let report = match memory.memos.entry(class) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(self.0.perturb_public(item, public, rng)?)
            }
        };
        Ok(report.clone())
    }

    /// eps per class memoized.
    fn spent(&self, memory: &ClassMemory<M>) -> f64 {
        memory.memos.len() as f64 * self.0.epsilon().get()
    }
}
