//! Populations of genuine users, and the Adult Age data of the paper's empirical study;
//! tables of users with several attributes ([`Table`]), and the two shipped with this
//! crate: UCI Adult (ten attributes) and ACSEmployment (Montana, eighteen); users' values
//! over consecutive days, replayed from data ([`Trajectories`]).

mod table;
mod trajectories;

pub use table::{
    ACS_EMPLOYMENT_CODES_GZ, ACS_EMPLOYMENT_LABELS_CSV, ADULT_CODES_GZ, ADULT_LABELS_CSV, Table,
    TableError,
};
pub use trajectories::Trajectories;

use ldp_core::{DomainSize, ItemOutOfRange};
use rand::{Rng, RngExt};
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
        line: u64,
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
    /// (shipped with this crate in `data/adult_age.csv`; CC BY 4.0, Becker and Kohavi
    /// 1996).
    pub fn adult_age() -> Self {
        let counts = parse_counts(ADULT_AGE_CSV).expect("the shipped file is well formed");
        Self::from_counts(&counts).expect("the shipped file is non-empty")
    }

    /// `n` users drawn i.i.d. from this population's item distribution (with
    /// replacement, so `n` may exceed [`Population::len`]): a sample of size `n` from the
    /// population the data stands for.
    ///
    /// ```
    /// use ldp_attack::Population;
    /// use ldp_core::simulation::{stream_rng, Role};
    /// let mut rng = stream_rng(1, 0, Role::Other(0), 0);
    /// let small = Population::adult_age().resample(500, &mut rng)?;
    /// assert_eq!((small.len(), small.k().get()), (500, 100));
    /// # Ok::<(), ldp_attack::DataError>(())
    /// ```
    pub fn resample<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Result<Self, DataError> {
        if n == 0 {
            return Err(DataError::Empty);
        }
        let items = (0..n)
            .map(|_| self.items[rng.random_range(0..self.items.len())])
            .collect();
        Ok(Self { k: self.k, items })
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
pub const ADULT_AGE_CSV: &str = include_str!("../data/adult_age.csv");

/// One `item,count` row.
#[derive(Deserialize)]
struct CountRow {
    item: u64,
    count: u64,
}

/// A reader of `csv_text` past its header line: columns are positional, the header names
/// them whatever it likes; fields are trimmed.
pub(crate) fn positional_csv(csv_text: &str) -> Result<csv::Reader<&[u8]>, DataError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(csv_text.as_bytes());
    reader.headers().map_err(|e| DataError::Parse {
        line: 1,
        reason: e.to_string(),
    })?;
    Ok(reader)
}

/// What is wrong with a row, without its position (the error names the line itself).
pub(crate) fn csv_reason(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => err.to_string(),
        other => format!("{other:?}"),
    }
}

/// Reads `item,count` rows (after a header line; the column names are free) into counts
/// indexed by item, which must run 0, 1, 2, ...
///
/// ```
/// use ldp_attack::data::parse_counts;
/// assert_eq!(parse_counts("age,count\n0,3\n1,5\n")?, vec![3, 5]);
/// assert!(parse_counts("age,count\n0,3\n2,5\n").is_err());
/// # Ok::<(), ldp_attack::DataError>(())
/// ```
pub fn parse_counts(csv_text: &str) -> Result<Vec<u64>, DataError> {
    let mut reader = positional_csv(csv_text)?;
    reader.set_headers(csv::StringRecord::from(vec!["item", "count"]));
    let mut counts = Vec::new();
    for row in reader.deserialize::<CountRow>() {
        let row = row.map_err(|e| DataError::Parse {
            line: e.position().map_or(0, |p| p.line()),
            reason: csv_reason(&e),
        })?;
        if row.item != counts.len() as u64 {
            return Err(DataError::Parse {
                line: counts.len() as u64 + 2,
                reason: format!(
                    "items must be listed in order from 0: expected {}, found {}",
                    counts.len(),
                    row.item
                ),
            });
        }
        counts.push(row.count);
    }
    Ok(counts)
}
