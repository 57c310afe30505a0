//! Users' values over consecutive days, replayed from data: the population of
//! [`crate::change`] when the changes are not drawn from a Markov chain but recorded.

use std::collections::HashMap;

use ldp_core::DomainSize;
use serde::Deserialize;

use super::{DataError, csv_reason, positional_csv};

/// Each user's value on consecutive days, over the domain `0..k`. Users may report on
/// different numbers of days; a user of one day shows no change.
///
/// ```
/// use ldp_attack::data::Trajectories;
/// use ldp_core::DomainSize;
/// let csv = "user,day,value\nann,1,3\nbob,1,0\nann,2,3\nann,3,5\nbob,2,1\n";
/// let t = Trajectories::parse_csv(DomainSize::new(10)?, csv)?;
/// assert_eq!((t.users(), t.longest()), (2, 3));
/// assert_eq!((t.user(0), t.user(1)), (&[3, 3, 5][..], &[0, 1][..]));
/// assert_eq!(t.changes(), (2, 3)); // 2 changes in 3 pairs of consecutive days
/// // A gap in a user's days is refused, naming the user and the line.
/// let gap = Trajectories::parse_csv(DomainSize::new(10)?, "user,day,value\nann,1,3\nann,3,4\n");
/// assert!(gap.unwrap_err().to_string().contains("user \"ann\" reports day 3 after day 1"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectories {
    k: DomainSize,
    /// User i's values are `values[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<usize>,
    values: Vec<u32>,
}

/// One row of `user,day,value`.
#[derive(Deserialize)]
struct Row {
    user: String,
    day: i64,
    value: u32,
}

impl Trajectories {
    /// Users whose values on consecutive days are `users[i]`, each in `0..k`; every user
    /// reports on at least one day.
    pub fn new(k: DomainSize, users: Vec<Vec<u32>>) -> Result<Self, DataError> {
        if users.is_empty() {
            return Err(DataError::Empty);
        }
        let mut offsets = Vec::with_capacity(users.len() + 1);
        let mut values = Vec::with_capacity(users.iter().map(Vec::len).sum());
        offsets.push(0);
        for (i, days) in users.into_iter().enumerate() {
            if days.is_empty() {
                return Err(DataError::Parse {
                    line: 0,
                    reason: format!("user {i} reports on no day"),
                });
            }
            for &x in &days {
                k.check_item(x)?;
            }
            values.extend(days);
            offsets.push(values.len());
        }
        Ok(Self { k, offsets, values })
    }

    /// Reads `user,day,value` rows after a header line (the column names are free): a
    /// user is any text, a day a whole number, the value an item in `0..k`. Rows may come
    /// in any order; each user's days must run without a gap, each day once. Users are
    /// numbered in the order they first appear.
    pub fn parse_csv(k: DomainSize, csv_text: &str) -> Result<Self, DataError> {
        let mut reader = positional_csv(csv_text)?;
        let headers = csv::StringRecord::from(vec!["user", "day", "value"]);
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut names: Vec<String> = Vec::new();
        // (user, day, value, line) of every row.
        let mut rows: Vec<(usize, i64, u32, u64)> = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| DataError::Parse {
                line: e.position().map_or(0, |p| p.line()),
                reason: csv_reason(&e),
            })?;
            let line = record.position().map_or(0, |p| p.line());
            let row: Row = record
                .deserialize(Some(&headers))
                .map_err(|e| DataError::Parse {
                    line,
                    reason: csv_reason(&e),
                })?;
            k.check_item(row.value).map_err(|e| DataError::Parse {
                line,
                reason: e.to_string(),
            })?;
            let user = *index.entry(row.user.clone()).or_insert_with(|| {
                names.push(row.user);
                names.len() - 1
            });
            rows.push((user, row.day, row.value, line));
        }
        if rows.is_empty() {
            return Err(DataError::Empty);
        }
        // Stable: a user's rows keep the file's order among equal days (for the error).
        rows.sort_by_key(|&(user, day, _, _)| (user, day));
        let mut users: Vec<Vec<u32>> = vec![Vec::new(); names.len()];
        for pair in rows.windows(2) {
            let ((u, d, _, _), (v, e, _, line)) = (pair[0], pair[1]);
            if u != v {
                continue;
            }
            let name = &names[u];
            if e == d {
                return Err(DataError::Parse {
                    line,
                    reason: format!("user {name:?} reports day {e} twice"),
                });
            }
            if e != d + 1 {
                return Err(DataError::Parse {
                    line,
                    reason: format!(
                        "user {name:?} reports day {e} after day {d}: a user's days run \
                         without a gap (a change is seen between consecutive days)"
                    ),
                });
            }
        }
        for (user, _, value, _) in rows {
            users[user].push(value);
        }
        Self::new(k, users)
    }

    /// The domain size.
    pub fn k(&self) -> DomainSize {
        self.k
    }

    /// Users.
    pub fn users(&self) -> usize {
        self.offsets.len() - 1
    }

    /// User `i`'s values, one per day (`i < users()`).
    pub fn user(&self, i: usize) -> &[u32] {
        &self.values[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The most days any user reports on.
    pub fn longest(&self) -> u32 {
        (0..self.users())
            .map(|i| self.user(i).len() as u32)
            .max()
            .unwrap_or(0)
    }

    /// Changes and pairs of consecutive days, over every user.
    pub fn changes(&self) -> (u64, u64) {
        (0..self.users()).fold((0, 0), |(c, p), i| {
            let days = self.user(i);
            let changed = days.windows(2).filter(|w| w[0] != w[1]).count() as u64;
            (c + changed, p + days.len().saturating_sub(1) as u64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: u32) -> DomainSize {
        DomainSize::new(n).unwrap()
    }

    #[test]
    fn bad_rows_are_refused_by_line() {
        let err = |text: &str| Trajectories::parse_csv(k(5), text).unwrap_err().to_string();
        assert!(err("u,d,v\na,1,2\na,1,3\n").contains("line 3: user \"a\" reports day 1 twice"));
        assert!(
            err("u,d,v\na,1,7\n").starts_with("line 2:"),
            "{}",
            err("u,d,v\na,1,7\n")
        );
        assert!(err("u,d,v\na,x,1\n").starts_with("line 2:"));
        assert_eq!(err("u,d,v\n"), "the population is empty");
        assert!(Trajectories::new(k(5), vec![vec![1], vec![]]).is_err());
    }

    #[test]
    fn rows_in_any_order_give_each_user_its_days() {
        let t = Trajectories::parse_csv(k(5), "u,d,v\nb,-1,4\na,8,1\nb,0,4\na,7,0\n").unwrap();
        assert_eq!((t.user(0), t.user(1)), (&[4, 4][..], &[0, 1][..]));
        assert_eq!(t.changes(), (1, 2));
    }
}
