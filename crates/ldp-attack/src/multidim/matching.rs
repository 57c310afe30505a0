//! Matching a profile against background knowledge: how many records agree with it more
//! than the true one does, and how many as much, without a loop over records.
//!
//! A profile fixes m ≤ d attribute values; a record's score is how many of them it shares.
//! For every subset B of the profile's pairs, `N(B)` (the records agreeing on all of B) is
//! one lookup in a sorted table of the records' projections on B's attributes, built once
//! per attribute set and shared. Inclusion–exclusion turns the `2^m` counts into the number
//! of records of each score:
//!
//! ```text
//! E_t = sum_{B, |B| >= t} (-1)^{|B| - t} C(|B|, t) N(B)
//! ```
//!
//! so a profile costs at most `2^m` hash lookups instead of `n m` comparisons, and the
//! walk from the highest score down stops once the true record's score is settled or
//! enough records beat it ([`MatchIndex::rank_within`]): matching every one of Adult's
//! 45,222 users against all 45,222 records is at most 1.5 million lookups per survey
//! count, not 10^10 comparisons. Profiles of more than ten known values are matched by a
//! pass over the records.

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use std::sync::{Arc, RwLock};

use ldp_core::DomainSize;

/// Background knowledge: `n` records of `d` attributes (row-major codes), of which the
/// attacker knows the columns `known`.
#[derive(Debug)]
pub struct MatchIndex<'a> {
    rows: &'a [u32],
    d: usize,
    radix: Vec<u64>,
    known: Vec<bool>,
    /// Per attribute set (a bit mask), the records' projections and their counts.
    tables: RwLock<HashMap<u64, Arc<Projection>>>,
}

/// Profiles of more known values than this are matched by a pass over the records.
const MAX_INDEXED_PAIRS: usize = 10;

/// The records' projections on one attribute set: how many records have each.
#[derive(Debug)]
struct Projection {
    counts: FxHashMap<u64, u32>,
}

/// Where the true record ranks among all records for one profile: `greater` records score
/// higher than it, `equal` as high (itself included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rank {
    /// Records that agree with the profile on more attributes than the true one.
    pub greater: u64,
    /// Records that agree on as many (the true one among them).
    pub equal: u64,
}

impl Rank {
    /// The probability that the true record is among the first `k` candidates when the
    /// candidates are ranked by score and ties are broken uniformly at random:
    /// `clamp((k - greater) / equal, 0, 1)`.
    pub fn top(self, k: u64) -> f64 {
        if self.greater >= k {
            0.0
        } else {
            ((k - self.greater) as f64 / self.equal as f64).min(1.0)
        }
    }
}

/// What is wrong with a background table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MatchError {
    /// The codes do not fill whole rows of d attributes.
    #[error("{len} codes do not make rows of {d} attributes")]
    Ragged {
        /// Codes given.
        len: usize,
        /// Attributes per row.
        d: usize,
    },
    /// A code outside its attribute's domain.
    #[error("record {row}, attribute {attribute}: code {code} is outside 0..{k}")]
    Code {
        /// The record.
        row: usize,
        /// The attribute.
        attribute: usize,
        /// The code.
        code: u32,
        /// The attribute's domain size.
        k: u32,
    },
    /// The known columns do not match the attributes.
    #[error("{found} known-column flags for {d} attributes")]
    Known {
        /// Flags given.
        found: usize,
        /// Attributes.
        d: usize,
    },
    /// A profile value outside its attribute's domain.
    #[error("profile value {value} of attribute {attribute} is outside 0..{k}")]
    Value {
        /// The attribute.
        attribute: usize,
        /// The value.
        value: u32,
        /// Its domain size.
        k: u32,
    },
    /// A profile of another width, or a true record that does not exist.
    #[error(
        "a profile of {attributes} attributes for record {truth}: expected one value or none per attribute, and an existing record"
    )]
    Profile {
        /// The true record asked for.
        truth: usize,
        /// The profile's length.
        attributes: usize,
    },
    /// More than 64 attributes, or projections too wide for 64-bit keys.
    #[error(
        "a profile over these attributes does not fit a 64-bit key (at most 64 attributes whose domain sizes multiply below 2^64)"
    )]
    TooWide,
}

impl<'a> MatchIndex<'a> {
    /// The index of `rows` (row-major, `domains.len()` codes per record), the attacker
    /// knowing the columns where `known` is true.
    pub fn new(
        rows: &'a [u32],
        domains: &[DomainSize],
        known: Vec<bool>,
    ) -> Result<Self, MatchError> {
        let d = domains.len();
        if d == 0 || rows.len() % d != 0 || d > 64 {
            return Err(if d > 64 {
                MatchError::TooWide
            } else {
                MatchError::Ragged { len: rows.len(), d }
            });
        }
        if known.len() != d {
            return Err(MatchError::Known {
                found: known.len(),
                d,
            });
        }
        for (i, &code) in rows.iter().enumerate() {
            let (row, attribute) = (i / d, i % d);
            let k = domains[attribute].get();
            if code >= k {
                return Err(MatchError::Code {
                    row,
                    attribute,
                    code,
                    k,
                });
            }
        }
        Ok(Self {
            rows,
            d,
            radix: domains.iter().map(|k| u64::from(k.get())).collect(),
            known,
            tables: RwLock::new(HashMap::new()),
        })
    }

    /// Each attribute's domain size.
    pub fn domains(&self) -> Vec<DomainSize> {
        self.radix
            .iter()
            .map(|&k| DomainSize::new(k as u32).expect("built from domain sizes"))
            .collect()
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.rows.len() / self.d
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Record `i`'s codes.
    pub fn row(&self, i: usize) -> &'a [u32] {
        &self.rows[i * self.d..(i + 1) * self.d]
    }

    /// The rank of record `truth` for `profile` (an inferred value or `None` per
    /// attribute); attributes the attacker does not know are ignored.
    pub fn rank(&self, profile: &[Option<u32>], truth: usize) -> Result<Rank, MatchError> {
        Ok(self
            .rank_within(profile, truth, u64::MAX)?
            .expect("fewer than u64::MAX records rank above"))
    }

    /// [`MatchIndex::rank`], or `None` as soon as `cap` records are known to score higher
    /// than the true one (RID-ACC@k is then zero for every k up to `cap`).
    ///
    /// The number of records of score exactly `t` needs the counts of subsets of size
    /// `t` or more only, so the sizes are taken from `m` down: each size settles one
    /// score, and the walk stops at the true record's score, or once `cap` records beat
    /// it. A profile the true record matches badly costs a handful of lookups.
    pub fn rank_within(
        &self,
        profile: &[Option<u32>],
        truth: usize,
        cap: u64,
    ) -> Result<Option<Rank>, MatchError> {
        self.matcher().rank_within(profile, truth, cap)
    }

    /// A matcher for one thread: it keeps the projections it has used, so that its
    /// lookups do not touch the index's shared table (whose lock two threads would
    /// otherwise take millions of times).
    pub fn matcher(&self) -> Matcher<'_, 'a> {
        Matcher {
            index: self,
            local: FxHashMap::default(),
            pairs: Vec::new(),
        }
    }

    fn projection(&self, mask: u64) -> Result<Arc<Projection>, MatchError> {
        if let Some(table) = self.tables.read().expect("not poisoned").get(&mask) {
            return Ok(Arc::clone(table));
        }
        let attributes: Vec<usize> = (0..self.d).filter(|j| mask >> j & 1 == 1).collect();
        let mut counts = FxHashMap::default();
        for i in 0..self.len() {
            let row = self.row(i);
            let mut key = 0u64;
            for &j in &attributes {
                key = key
                    .checked_mul(self.radix[j])
                    .and_then(|x| x.checked_add(u64::from(row[j])))
                    .ok_or(MatchError::TooWide)?;
            }
            *counts.entry(key).or_insert(0u32) += 1;
        }
        let table = Arc::new(Projection { counts });
        self.tables
            .write()
            .expect("not poisoned")
            .insert(mask, Arc::clone(&table));
        Ok(table)
    }
}

/// Ranks profiles against a [`MatchIndex`] from one thread ([`MatchIndex::matcher`]).
#[derive(Debug)]
pub struct Matcher<'i, 'a> {
    index: &'i MatchIndex<'a>,
    /// The projections this matcher has used.
    local: FxHashMap<u64, Arc<Projection>>,
    /// The profile's known (attribute, value) pairs, reused across calls.
    pairs: Vec<(usize, u32)>,
}

impl Matcher<'_, '_> {
    /// [`MatchIndex::rank_within`].
    pub fn rank_within(
        &mut self,
        profile: &[Option<u32>],
        truth: usize,
        cap: u64,
    ) -> Result<Option<Rank>, MatchError> {
        let index = self.index;
        if truth >= index.len() || profile.len() != index.d {
            return Err(MatchError::Profile {
                truth,
                attributes: profile.len(),
            });
        }
        // A value outside its domain would alias another in the mixed-radix keys.
        if let Some((attribute, value)) = profile.iter().enumerate().find_map(|(j, v)| {
            v.filter(|&v| u64::from(v) >= index.radix[j])
                .map(|v| (j, v))
        }) {
            return Err(MatchError::Value {
                attribute,
                value,
                k: index.radix[attribute] as u32,
            });
        }
        if cap == 0 {
            return Ok(None);
        }
        let mut pairs = std::mem::take(&mut self.pairs);
        pairs.clear();
        pairs.extend(
            profile
                .iter()
                .enumerate()
                .filter_map(|(j, v)| v.filter(|_| index.known[j]).map(|v| (j, v))),
        );
        let rank = self.rank_of(&pairs, truth, cap);
        self.pairs = pairs;
        rank
    }

    fn rank_of(
        &mut self,
        pairs: &[(usize, u32)],
        truth: usize,
        cap: u64,
    ) -> Result<Option<Rank>, MatchError> {
        let index = self.index;
        let score = |row: &[u32]| pairs.iter().filter(|&&(j, v)| row[j] == v).count();
        let true_score = score(index.row(truth));
        let m = pairs.len();
        if m > MAX_INDEXED_PAIRS {
            // 2^m lookups would cost more than a pass over the records.
            let (mut greater, mut equal) = (0, 0);
            for i in 0..index.len() {
                match score(index.row(i)).cmp(&true_score) {
                    std::cmp::Ordering::Greater => greater += 1,
                    std::cmp::Ordering::Equal => equal += 1,
                    std::cmp::Ordering::Less => {}
                }
            }
            return Ok((greater < cap).then_some(Rank { greater, equal }));
        }
        // by_size[b] = sum of N(B) over the subsets B of b pairs; then the records of
        // score exactly t number E_t = sum over b >= t of (-1)^(b - t) C(b, t) by_size[b].
        let mut by_size = [0i128; MAX_INDEXED_PAIRS + 1];
        let mut greater = 0u64;
        for t in (true_score..=m).rev() {
            for subset in (0u64..(1 << m)).filter(|s| s.count_ones() as usize == t) {
                by_size[t] += i128::from(self.agreeing(pairs, subset)?);
            }
            let exactly: i128 = (t..=m)
                .map(|b| {
                    let sign = if (b - t) % 2 == 0 { 1 } else { -1 };
                    sign * binomial(b, t) * by_size[b]
                })
                .sum();
            // Inclusion-exclusion over exact counts: never negative.
            let exactly = u64::try_from(exactly).expect("a count of records");
            if t == true_score {
                return Ok(Some(Rank {
                    greater,
                    equal: exactly.max(1),
                }));
            }
            greater += exactly;
            if greater >= cap {
                return Ok(None);
            }
        }
        unreachable!("the walk ends at the true score, which is at most m")
    }

    /// N(B): the records agreeing with the pairs selected by `subset`.
    fn agreeing(&mut self, pairs: &[(usize, u32)], subset: u64) -> Result<u64, MatchError> {
        let index = self.index;
        if subset == 0 {
            return Ok(index.len() as u64);
        }
        // The key in attribute order (pairs are sorted by attribute), as the projection
        // table builds it.
        let (mut mask, mut key) = (0u64, 0u64);
        for (i, &(j, v)) in pairs.iter().enumerate() {
            if subset >> i & 1 == 1 {
                mask |= 1 << j;
                key = key
                    .checked_mul(index.radix[j])
                    .and_then(|x| x.checked_add(u64::from(v)))
                    .ok_or(MatchError::TooWide)?;
            }
        }
        let table = match self.local.get(&mask) {
            Some(table) => table,
            None => {
                let table = index.projection(mask)?;
                self.local.entry(mask).or_insert(table)
            }
        };
        Ok(table.counts.get(&key).map_or(0, |&c| u64::from(c)))
    }
}

fn binomial(n: usize, k: usize) -> i128 {
    (0..k).fold(1i128, |acc, i| acc * (n - i) as i128 / (i + 1) as i128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::simulation::{Role, stream_rng};
    use rand::RngExt;

    /// The rank by inclusion–exclusion equals a direct count over the records.
    #[test]
    fn ranks_equal_a_direct_count() {
        let ks = [3u32, 2, 4, 5];
        let domains: Vec<DomainSize> = ks.iter().map(|&k| DomainSize::new(k).unwrap()).collect();
        let mut rng = stream_rng(5, 0, Role::Genuine, 0);
        let n = 400;
        let rows: Vec<u32> = (0..n * 4).map(|i| rng.random_range(0..ks[i % 4])).collect();
        for known in [vec![true; 4], vec![true, false, true, true]] {
            let index = MatchIndex::new(&rows, &domains, known.clone()).unwrap();
            for trial in 0..200 {
                let truth = trial % n;
                let profile: Vec<Option<u32>> = ks
                    .iter()
                    .map(|&k| rng.random_bool(0.6).then(|| rng.random_range(0..k)))
                    .collect();
                let score = |row: &[u32]| {
                    profile
                        .iter()
                        .enumerate()
                        .filter(|&(j, v)| known[j] && *v == Some(row[j]))
                        .count()
                };
                let s = score(index.row(truth));
                let greater = (0..n).filter(|&i| score(index.row(i)) > s).count() as u64;
                let equal = (0..n).filter(|&i| score(index.row(i)) == s).count() as u64;
                assert_eq!(
                    index.rank(&profile, truth).unwrap(),
                    Rank { greater, equal }
                );
            }
        }
    }

    /// Profiles of more than ten known values take a pass over the records: the same rank
    /// as a direct count; a value outside its domain is refused.
    #[test]
    fn wide_profiles_and_bad_values() {
        let ks = [2u32; 12];
        let domains: Vec<DomainSize> = ks.iter().map(|&k| DomainSize::new(k).unwrap()).collect();
        let mut rng = stream_rng(6, 0, Role::Genuine, 0);
        let rows: Vec<u32> = (0..300 * 12).map(|_| rng.random_range(0..2)).collect();
        let index = MatchIndex::new(&rows, &domains, vec![true; 12]).unwrap();
        let profile: Vec<Option<u32>> = (0..12).map(|j| Some(j as u32 % 2)).collect();
        let score = |row: &[u32]| (0..12).filter(|&j| profile[j] == Some(row[j])).count();
        let s = score(index.row(7));
        let greater = (0..300).filter(|&i| score(index.row(i)) > s).count() as u64;
        let equal = (0..300).filter(|&i| score(index.row(i)) == s).count() as u64;
        assert_eq!(index.rank(&profile, 7).unwrap(), Rank { greater, equal });
        let mut bad = profile.clone();
        bad[3] = Some(2);
        assert!(matches!(
            index.rank(&bad, 0),
            Err(MatchError::Value {
                attribute: 3,
                value: 2,
                k: 2
            })
        ));
        assert_eq!(index.rank_within(&profile, 7, 0).unwrap(), None);
    }

    #[test]
    fn top_k_is_the_tie_broken_probability() {
        let rank = Rank {
            greater: 3,
            equal: 4,
        };
        assert_eq!(rank.top(3), 0.0);
        assert_eq!(rank.top(5), 0.5);
        assert_eq!(rank.top(10), 1.0);
    }

    #[test]
    fn bad_tables_are_refused() {
        let domains = [DomainSize::new(2).unwrap(), DomainSize::new(3).unwrap()];
        assert!(matches!(
            MatchIndex::new(&[0, 1, 1], &domains, vec![true; 2]),
            Err(MatchError::Ragged { .. })
        ));
        assert!(matches!(
            MatchIndex::new(&[0, 3], &domains, vec![true; 2]),
            Err(MatchError::Code { attribute: 1, .. })
        ));
        assert!(matches!(
            MatchIndex::new(&[0, 1], &domains, vec![true]),
            Err(MatchError::Known { .. })
        ));
    }
}
