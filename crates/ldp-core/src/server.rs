//! How a server aggregates reports from clients it does not trust: the options every
//! server path (the `ldp` tool, Python, the engine adapter, simulations) resolves the same
//! way.
//!
//! The one option today is clipping real-valued reports (SHE): a clipping server bounds
//! what one fake report can add to an estimate, at the price of a negligible bias on
//! genuine reports ([`ClipBound`]). Families whose reports are indices or bits have
//! bounded influence by construction and take no clipping.

use std::fmt;
use std::str::FromStr;

use crate::error::ParamError;
use crate::report::REPORT_BOUND;
use crate::vocab::{Epsilon, Family};

/// Whether and where a server clips report coordinates.
///
/// Parsed from the front ends' spelling: `recommended`, `none`, or a number.
///
/// ```
/// use ldp_core::{Clip, ClipBound, Epsilon};
/// let eps = Epsilon::new(1.0)?;
/// assert_eq!("none".parse::<Clip>()?, Clip::Off);
/// assert_eq!("12.5".parse::<Clip>()?.bound(eps), Some(ClipBound::new(12.5)?));
/// assert_eq!(Clip::default().bound(eps), Some(ClipBound::recommended(eps))); // 41
/// assert!("0.5".parse::<Clip>().is_err()); // below the one-hot value 1
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "ClipForm", try_from = "ClipForm")
)]
pub enum Clip {
    /// The recommended bound, `1 + 40 / eps` ([`ClipBound::recommended`]): the default of
    /// every server path.
    #[default]
    Recommended,
    /// No clipping: reports are summed as they are, as the paper's server does.
    Off,
    /// Clip at this bound.
    At(ClipBound),
}

impl Clip {
    /// The bound a server at budget `eps` clips at, `None` for [`Clip::Off`].
    pub fn bound(self, eps: Epsilon) -> Option<ClipBound> {
        match self {
            Clip::Recommended => Some(ClipBound::recommended(eps)),
            Clip::Off => None,
            Clip::At(bound) => Some(bound),
        }
    }

    /// A clipping choice given for `family`, checked: only families whose reports are real
    /// vectors clip ([`crate::FamilyMechanism::CLIPS`]).
    pub fn check_for(self, family: Family) -> Result<Self, ClipError> {
        if family.clips() {
            Ok(self)
        } else {
            Err(ClipError::NotClipped(family))
        }
    }
}

impl fmt::Display for Clip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Clip::Recommended => f.write_str("recommended"),
            Clip::Off => f.write_str("none"),
            Clip::At(bound) => write!(f, "{}", bound.get()),
        }
    }
}

/// A clipping choice that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClipError {
    /// Neither `recommended`, `none` nor a number.
    #[error("expected a number, `none` or `recommended`, got `{0}`")]
    Syntax(String),
    /// A number outside the bounds of [`ClipBound`].
    #[error(transparent)]
    Bound(#[from] ParamError),
    /// The family's reports are not real vectors: its servers do not clip.
    #[error(
        "clipping applies to SHE reports only (the {0:?} family's reports are indices or bits)"
    )]
    NotClipped(Family),
}

impl FromStr for Clip {
    type Err = ClipError;
    fn from_str(s: &str) -> Result<Self, ClipError> {
        match s.trim() {
            "recommended" => Ok(Clip::Recommended),
            "none" => Ok(Clip::Off),
            text => {
                let v: f64 = text
                    .parse()
                    .map_err(|_| ClipError::Syntax(text.to_owned()))?;
                Ok(Clip::At(ClipBound::new(v)?))
            }
        }
    }
}

/// [`Clip`] as data: a bound, or `"recommended"` / `"none"`.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum ClipForm {
    Bound(f64),
    Name(String),
}

#[cfg(feature = "serde")]
impl From<Clip> for ClipForm {
    fn from(c: Clip) -> Self {
        match c {
            Clip::At(bound) => ClipForm::Bound(bound.get()),
            other => ClipForm::Name(other.to_string()),
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<ClipForm> for Clip {
    type Error = ClipError;
    fn try_from(form: ClipForm) -> Result<Self, ClipError> {
        match form {
            ClipForm::Bound(v) => Ok(Clip::At(ClipBound::new(v)?)),
            ClipForm::Name(name) => name.parse(),
        }
    }
}

/// A server's clipping bound c in `[1, REPORT_BOUND]`: every report coordinate is
/// clamped to `[-c, c]` before it is summed (the families whose reports are real vectors,
/// SHE's).
///
/// Clipping bounds a fake report's effect: the maximal gain attack then puts c on each of
/// r targets, for an expected gain of `beta (r c - f_T)` (ldp-analytic's
/// `expected_she_clipped`), instead of any amount. It biases genuine coordinates by at most
/// `(b/2) e^-((c - 1)/b)` each, with `b = 2/eps`.
///
/// ```
/// use ldp_core::{ClipBound, Epsilon};
/// let c = ClipBound::recommended(Epsilon::new(1.0)?);
/// assert_eq!(c.get(), 41.0); // 1 + 20 b, b = 2
/// assert!(ClipBound::new(0.5).is_err());
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "f64", into = "f64")
)]
pub struct ClipBound(f64);

impl ClipBound {
    /// Validates `bound`: finite, at least 1 (the one-hot value), at most [`REPORT_BOUND`].
    pub fn new(bound: f64) -> Result<Self, ParamError> {
        if (1.0..=REPORT_BOUND).contains(&bound) {
            Ok(Self(bound))
        } else {
            Err(ParamError::ClipBound { value: bound })
        }
    }

    /// `1 + 20 b` with `b = 2 / eps`: the clipping bias on a genuine coordinate is then
    /// below `(b/2) e^-20`, about `1e-9 b`, far under the estimate's noise.
    pub fn recommended(eps: Epsilon) -> Self {
        Self((1.0 + 20.0 * 2.0 / eps.get()).min(REPORT_BOUND))
    }

    /// The bound as a number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for ClipBound {
    type Error = ParamError;
    fn try_from(v: f64) -> Result<Self, ParamError> {
        Self::new(v)
    }
}

impl From<ClipBound> for f64 {
    fn from(c: ClipBound) -> f64 {
        c.0
    }
}
