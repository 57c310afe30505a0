//! A set of protocols named by a user: the one parser of `--protocol`, Python's
//! `protocols=` and the browser's list, over both registries (the one-shot [`Protocol`]s
//! and the memoized [`LongitudinalProtocol`]s).

use std::fmt;

use crate::Protocol;
use crate::longitudinal::LongitudinalProtocol;

/// Protocols of one registry, as a user names them.
///
/// ```
/// use ldp_core::longitudinal::LongitudinalProtocol;
/// use ldp_core::{Protocol, ProtocolSet};
/// assert_eq!(ProtocolSet::parse(&["grr,oue", "olh"], false)?, ProtocolSet::OneShot(vec![Protocol::Grr, Protocol::Oue, Protocol::Olh]));
/// assert_eq!(ProtocolSet::parse(&["all"], false)?, ProtocolSet::OneShot(Protocol::ALL.to_vec()));
/// // A memoized name, or `memoized` asked (the tool's --eps-perm), reads the memoized registry.
/// assert_eq!(ProtocolSet::parse(&["L-GRR"], false)?, ProtocolSet::Memoized(vec![LongitudinalProtocol::LGrr]));
/// assert_eq!(ProtocolSet::parse(&["all"], true)?, ProtocolSet::Memoized(LongitudinalProtocol::ALL.to_vec()));
/// assert!(ProtocolSet::parse(&["grr", "l-grr"], false).is_err());
/// # Ok::<(), ldp_core::ProtocolSetError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolSet {
    /// One-shot protocols, in the order named (repeats kept).
    OneShot(Vec<Protocol>),
    /// Memoized protocols, in the order named (repeats kept).
    Memoized(Vec<LongitudinalProtocol>),
}

/// A protocol set that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolSetError {
    /// No name was given.
    #[error("no protocol named: give a name, a comma-separated list, or all")]
    Empty,
    /// A name of neither registry.
    #[error("unknown protocol `{name}`; expected all or one of {expected}")]
    Unknown {
        /// The name given.
        name: String,
        /// The names of the registry read.
        expected: String,
    },
    /// A list where one protocol (or all) is expected.
    #[error("`{given}`: name one protocol, or all")]
    NotOne {
        /// What was given.
        given: String,
    },
    /// One-shot and memoized protocols together.
    #[error(
        "`{memoized}` is memoized and `{one_shot}` is not: name protocols of one kind at a time"
    )]
    Mixed {
        /// A memoized name given.
        memoized: String,
        /// A one-shot name given.
        one_shot: String,
    },
}

impl ProtocolSet {
    /// The protocols of `names`, each a name or a comma-separated list of them (trimmed,
    /// case-insensitive). `all` is every protocol of the registry read: the memoized one
    /// when `memoized` is asked or any name is a memoized protocol's, the one-shot one
    /// otherwise.
    pub fn parse<S: AsRef<str>>(names: &[S], memoized: bool) -> Result<Self, ProtocolSetError> {
        let names = split(names)?;
        let memo_name = names
            .iter()
            .find(|n| n.parse::<LongitudinalProtocol>().is_ok());
        if memoized || memo_name.is_some() {
            if let (Some(m), Some(o)) = (
                memo_name,
                names.iter().find(|n| n.parse::<Protocol>().is_ok()),
            ) {
                return Err(ProtocolSetError::Mixed {
                    memoized: (*m).to_owned(),
                    one_shot: (*o).to_owned(),
                });
            }
            return memoized_of(&names).map(Self::Memoized);
        }
        one_shot_of(&names).map(Self::OneShot)
    }

    /// The one-shot protocols of `names`, as [`ProtocolSet::parse`] reads them (`all`:
    /// every one); a memoized name is an unknown one here.
    pub fn one_shot<S: AsRef<str>>(names: &[S]) -> Result<Vec<Protocol>, ProtocolSetError> {
        one_shot_of(&split(names)?)
    }

    /// The memoized protocols of `names`, as [`ProtocolSet::parse`] reads them (`all`:
    /// all eight); a one-shot name is an unknown one here.
    pub fn memoized<S: AsRef<str>>(
        names: &[S],
    ) -> Result<Vec<LongitudinalProtocol>, ProtocolSetError> {
        memoized_of(&split(names)?)
    }

    /// One one-shot protocol, or `None` for `all`: what commands that tune one protocol
    /// or choose among all of them take (`ldp tune`, Python's `tune`).
    ///
    /// ```
    /// use ldp_core::{Protocol, ProtocolSet};
    /// assert_eq!(ProtocolSet::one_or_all("AUE")?, Some(Protocol::Aue));
    /// assert_eq!(ProtocolSet::one_or_all(" all ")?, None);
    /// assert!(ProtocolSet::one_or_all("aue,ass").is_err());
    /// # Ok::<(), ldp_core::ProtocolSetError>(())
    /// ```
    pub fn one_or_all(name: &str) -> Result<Option<Protocol>, ProtocolSetError> {
        let given = [name];
        let names = split(&given)?;
        match names[..] {
            [one] if is_all(&one) => Ok(None),
            [one] => one_shot_of(&[one]).map(|p| Some(p[0])),
            _ => Err(ProtocolSetError::NotOne {
                given: name.trim().to_owned(),
            }),
        }
    }

    /// Whether these are memoized protocols.
    pub fn is_memoized(&self) -> bool {
        matches!(self, Self::Memoized(_))
    }

    /// How many protocols.
    pub fn len(&self) -> usize {
        match self {
            Self::OneShot(p) => p.len(),
            Self::Memoized(p) => p.len(),
        }
    }

    /// Whether the set is empty (never, once parsed).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Display for ProtocolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = match self {
            Self::OneShot(p) => p.iter().map(|p| p.name()).collect(),
            Self::Memoized(p) => p.iter().map(|p| p.name()).collect(),
        };
        f.write_str(&names.join(","))
    }
}

/// The names of `names`, each split at commas and trimmed; at least one.
fn split<S: AsRef<str>>(names: &[S]) -> Result<Vec<&str>, ProtocolSetError> {
    let names: Vec<&str> = names
        .iter()
        .flat_map(|n| n.as_ref().split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() {
        Err(ProtocolSetError::Empty)
    } else {
        Ok(names)
    }
}

fn is_all(name: &&str) -> bool {
    name.eq_ignore_ascii_case("all")
}

fn one_shot_of(names: &[&str]) -> Result<Vec<Protocol>, ProtocolSetError> {
    if names.iter().any(is_all) {
        return Ok(Protocol::ALL.to_vec());
    }
    let expected = Protocol::ALL.map(|p| p.name());
    names
        .iter()
        .map(|n| n.parse().map_err(|_| unknown(n, expected)))
        .collect()
}

fn memoized_of(names: &[&str]) -> Result<Vec<LongitudinalProtocol>, ProtocolSetError> {
    if names.iter().any(is_all) {
        return Ok(LongitudinalProtocol::ALL.to_vec());
    }
    let expected = LongitudinalProtocol::ALL.map(|p| p.name());
    names
        .iter()
        .map(|n| n.parse().map_err(|_| unknown(n, expected)))
        .collect()
}

fn unknown<const N: usize>(name: &str, expected: [&'static str; N]) -> ProtocolSetError {
    ProtocolSetError::Unknown {
        name: name.to_owned(),
        expected: expected.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_both_registries_parse_and_bad_ones_are_named() {
        for p in Protocol::ALL {
            let upper = p.name().to_ascii_uppercase();
            assert_eq!(
                ProtocolSet::parse(&[upper.as_str()], false),
                Ok(ProtocolSet::OneShot(vec![p]))
            );
        }
        for p in LongitudinalProtocol::ALL {
            assert_eq!(
                ProtocolSet::parse(&[p.name()], false),
                Ok(ProtocolSet::Memoized(vec![p]))
            );
            // Asking for memoized protocols accepts their names too.
            assert_eq!(
                ProtocolSet::parse(&[p.label()], true),
                Ok(ProtocolSet::Memoized(vec![p]))
            );
        }
        let err = ProtocolSet::parse(&["grr", "xyz"], false).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("unknown protocol `xyz`; expected all or one of grr, ss"),
            "{err}"
        );
        // With memoized asked, a one-shot name is the mistake: named with the memoized list.
        let err = ProtocolSet::parse(&["grr"], true).unwrap_err();
        assert!(err.to_string().contains("l-grr, l-sue"), "{err}");
        assert_eq!(
            ProtocolSet::parse(&["", " , "], false),
            Err(ProtocolSetError::Empty)
        );
        assert!(matches!(
            ProtocolSet::parse(&["l-oue,oue"], false),
            Err(ProtocolSetError::Mixed { .. })
        ));
        // All wins over the other names of its registry; the set prints as a list.
        let all = ProtocolSet::parse(&["grr", "ALL"], false).unwrap();
        assert_eq!(all.len(), Protocol::ALL.len());
        assert_eq!(
            ProtocolSet::parse(&["oue, grr"], false)
                .unwrap()
                .to_string(),
            "oue,grr"
        );
    }
}
