//! Populations of genuine users, and the Adult Age data of the paper's empirical study.

use ldp_core::{DomainSize, ItemOutOfRange};
use serde::{Deserialize, Serialize};

/// The genuine users: one item each, over the domain `0..k`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Population {
    k: DomainSize,
    items: Vec<u32>,
}

/// A population could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// An item is outside the domain.
    #[error(transparent)]
    Item(#[from] ItemOutOfRange),
    /// No users.
    #[error("the population is empty")]
    Empty,
    /// A line of a data file could not be read.
    #[error("line {line}: {reason}")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

impl Population {
    /// Users holding `items`, each in `0..k`.
    pub fn from_items(k: DomainSize, items: Vec<u32>) -> Result<Self, DataError> {
        if items.is_empty() {
            return Err(DataError::Empty);
        }
        for &x in &items {
            k.check_item(x)?;
        }
        Ok(Self { k, items })
    }

    /// `counts[i]` users holding item i, for `k = counts.len()` items.
    pub fn from_counts(counts: &[u64]) -> Result<Self, DataError> {
        let k = DomainSize::try_from(counts.len() as u64).map_err(|_| DataError::Empty)?;
        let items = counts
            .iter()
            .enumerate()
            .flat_map(|(i, &c)| std::iter::repeat_n(i as u32, c as usize))
            .collect();
        Self::from_items(k, items)
    }

    /// The UCI Adult data's Age attribute: 48,842 people, ages as items of `0..100`
    /// (shipped in `data/adult_age.csv`; CC BY 4.0, Becker and Kohavi 1996).
    pub fn adult_age() -> Self {
        let counts = parse_counts(ADULT_AGE_CSV).expect("the shipped file is well formed");
        Self::from_counts(&counts).expect("the shipped file is non-empty")
    }

    /// Domain size.
    pub fn k(&self) -> DomainSize {
        self.k
    }

    /// Every user's item, in user order.
    pub fn items(&self) -> &[u32] {
        &self.items
    }

    /// Number of users.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no users (never true for a constructed population).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Number of users per item.
    pub fn counts(&self) -> Vec<u64> {
        let mut c = vec![0u64; self.k.as_usize()];
        self.items.iter().for_each(|&x| c[x as usize] += 1);
        c
    }

    /// True frequency of every item.
    pub fn frequencies(&self) -> Vec<f64> {
        let n = self.items.len() as f64;
        self.counts().into_iter().map(|c| c as f64 / n).collect()
    }
}

/// The shipped Adult Age counts (`age,count`, ages 0 to 99).
pub const ADULT_AGE_CSV: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../data/adult_age.csv"
));

/// Reads `age,count` lines (with a header) into counts indexed by age.
pub fn parse_counts(csv: &str) -> Result<Vec<u64>, DataError> {
    let mut counts = Vec::new();
    for (i, line) in csv.lines().enumerate().skip(1) {
        let bad = |reason: &str| DataError::Parse {
            line: i + 1,
            reason: reason.into(),
        };
        let (item, count) = line
            .split_once(',')
            .ok_or_else(|| bad("expected `item,count`"))?;
        let item: usize = item
            .trim()
            .parse()
            .map_err(|_| bad("item is not a number"))?;
        let count: u64 = count
            .trim()
            .parse()
            .map_err(|_| bad("count is not a number"))?;
        if item != counts.len() {
            return Err(bad("items must be listed in order from 0"));
        }
        counts.push(count);
    }
    Ok(counts)
}

/// Age counts (0 to 99) from the raw UCI files `adult.data` and `adult.test`: the first
/// field of every record; blank lines and the test file's `|` header are skipped.
pub fn derive_adult_age(files: &[&str]) -> Result<Vec<u64>, DataError> {
    let mut counts = vec![0u64; 100];
    for text in files {
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('|') {
                continue;
            }
            let bad = |reason: &str| DataError::Parse {
                line: i + 1,
                reason: reason.into(),
            };
            let age: usize = line
                .split(',')
                .next()
                .unwrap_or("")
                .trim()
                .parse()
                .map_err(|_| bad("age is not a number"))?;
            *counts
                .get_mut(age)
                .ok_or_else(|| bad("age outside 0..100"))? += 1;
        }
    }
    Ok(counts)
}
