//! The names of the knobs front ends expose (estimators, LH ASR forms, search modes,
//! strategies, objectives, poisoning attacks): one spelling each, parsed and printed the
//! same way by the `ldp` tool, the Python package and the engine adapter.

/// A name that is none of a knob's values.
///
/// ```
/// use ldp_core::Estimator;
/// let err = "median".parse::<Estimator>().unwrap_err();
/// assert_eq!(err.to_string(), "unknown estimator `median`; expected one of unbiased, base-pos, norm, clip, norm-cut, norm-sub, simplex, base-cut, mle-apx, ibu, ibu-squarem, mle");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{given}`; expected one of {expected}")]
pub struct UnknownName {
    /// The knob (`estimator`, `strategy`, ...).
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// The names it takes, comma-separated.
    pub expected: String,
}

/// The value of `all` named `given` (trimmed, case-insensitive).
pub fn parse<T: Copy>(
    given: &str,
    what: &'static str,
    all: &[T],
    name: impl Fn(T) -> &'static str,
) -> Result<T, UnknownName> {
    let wanted = given.trim();
    all.iter()
        .copied()
        .find(|&v| name(v).eq_ignore_ascii_case(wanted))
        .ok_or_else(|| UnknownName {
            what,
            given: given.to_owned(),
            expected: all.iter().map(|&v| name(v)).collect::<Vec<_>>().join(", "),
        })
}

/// Implements `FromStr` (by [`parse`]) and `Display` for a knob enum with an `ALL`
/// constant and a `name(self) -> &'static str` method: the one spelling of each value.
#[macro_export]
macro_rules! named_knob {
    ($ty:ty, $what:literal) => {
        impl ::std::str::FromStr for $ty {
            type Err = $crate::names::UnknownName;
            fn from_str(s: &str) -> Result<Self, $crate::names::UnknownName> {
                $crate::names::parse(s, $what, &<$ty>::ALL, <$ty>::name)
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
