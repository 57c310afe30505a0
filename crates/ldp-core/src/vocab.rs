//! Validated vocabulary: the privacy budget, the domain size and the fake-user fraction;
//! the family and protocol names, generated from the registry of [`crate::families`], are
//! re-exported here.
//!
//! Validation happens once, in the constructors; a value of these types is known good.

use std::fmt;

use crate::error::{ItemOutOfRange, ParamError};
pub use crate::families::{Family, Protocol, UnknownProtocol};

/// A privacy budget epsilon: finite and strictly positive.
///
/// ```
/// use ldp_core::Epsilon;
/// let eps = Epsilon::new(1.5)?;
/// assert_eq!(eps.get(), 1.5);
/// assert!(Epsilon::new(0.0).is_err());
/// assert!(Epsilon::new(f64::NAN).is_err());
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "f64", into = "f64")
)]
pub struct Epsilon(f64);

impl Epsilon {
    /// Validates `value` as a privacy budget.
    pub fn new(value: f64) -> Result<Self, ParamError> {
        if value.is_finite() && value > 0.0 {
            Ok(Self(value))
        } else {
            Err(ParamError::Epsilon { value })
        }
    }

    /// The budget as a number.
    #[inline]
    pub fn get(self) -> f64 {
        self.0
    }

    /// Checks that reports made with this budget can carry a signal: `e^eps > 1` in
    /// floating point (eps above about 1.1e-16). A smaller budget is valid for closed
    /// forms, but the runnable mechanisms whose probabilities are written in `e^eps` (all
    /// but SHE, which has its own floor) refuse it ([`ParamError::NoSignal`]).
    ///
    /// ```
    /// use ldp_core::Epsilon;
    /// assert!(Epsilon::new(1e-10)?.check_signal().is_ok());
    /// assert!(Epsilon::new(1e-300)?.check_signal().is_err());
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn check_signal(self) -> Result<(), ParamError> {
        if self.0.exp() > 1.0 {
            Ok(())
        } else {
            Err(ParamError::NoSignal { value: self.0 })
        }
    }

    /// `e^epsilon`, the bound on every likelihood ratio.
    #[inline]
    pub fn exp(self) -> f64 {
        self.0.exp()
    }
}

impl TryFrom<f64> for Epsilon {
    type Error = ParamError;
    fn try_from(value: f64) -> Result<Self, ParamError> {
        Self::new(value)
    }
}

impl From<Epsilon> for f64 {
    fn from(eps: Epsilon) -> f64 {
        eps.0
    }
}

impl fmt::Display for Epsilon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The number of items `k >= 2` in the input domain `0..k`.
///
/// ```
/// use ldp_core::DomainSize;
/// let k = DomainSize::new(100)?;
/// assert!(k.check_item(99).is_ok());
/// assert!(k.check_item(100).is_err());
/// assert!(DomainSize::new(1).is_err());
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "u64", into = "u32")
)]
pub struct DomainSize(u32);

impl DomainSize {
    /// Validates `k` as a domain size.
    pub fn new(k: u32) -> Result<Self, ParamError> {
        Self::try_from(u64::from(k))
    }

    /// The domain size as a number.
    #[inline]
    pub fn get(self) -> u32 {
        self.0
    }

    /// The domain size as an index bound.
    #[inline]
    pub fn as_usize(self) -> usize {
        self.0 as usize
    }

    /// The domain size as a float.
    #[inline]
    pub fn as_f64(self) -> f64 {
        f64::from(self.0)
    }

    /// Checks that `item` lies in `0..k`.
    #[inline]
    pub fn check_item(self, item: u32) -> Result<(), ItemOutOfRange> {
        if item < self.0 {
            Ok(())
        } else {
            Err(ItemOutOfRange {
                item: u64::from(item),
                k: self.0,
            })
        }
    }
}

impl TryFrom<u64> for DomainSize {
    type Error = ParamError;
    fn try_from(k: u64) -> Result<Self, ParamError> {
        match u32::try_from(k) {
            Ok(k32) if k32 >= 2 => Ok(Self(k32)),
            _ => Err(ParamError::DomainSize { value: k }),
        }
    }
}

impl From<DomainSize> for u32 {
    fn from(k: DomainSize) -> u32 {
        k.0
    }
}

impl fmt::Display for DomainSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The fraction beta of fake users among all users of a poisoning attack, in `[0, 1)`.
///
/// Shared by the closed forms (ldp-analytic) and the simulated attacks (ldp-attack), so
/// that both check it the same way.
///
/// ```
/// use ldp_core::FakeFraction;
/// assert_eq!(FakeFraction::new(0.05)?.get(), 0.05);
/// assert!(FakeFraction::new(1.0).is_err());
/// # Ok::<(), ldp_core::ParamError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "f64", into = "f64")
)]
pub struct FakeFraction(f64);

impl FakeFraction {
    /// Validates `beta` as a fraction of fake users.
    pub fn new(beta: f64) -> Result<Self, ParamError> {
        if (0.0..1.0).contains(&beta) {
            Ok(Self(beta))
        } else {
            Err(ParamError::FakeFraction { value: beta })
        }
    }

    /// The fraction as a number.
    #[inline]
    pub fn get(self) -> f64 {
        self.0
    }

    /// Fake users to add to `genuine` ones so that they make up this fraction of all users:
    /// `round(beta n / (1 - beta))`.
    pub fn fake_users(self, genuine: u64) -> u64 {
        (self.0 * genuine as f64 / (1.0 - self.0)).round() as u64
    }
}

impl TryFrom<f64> for FakeFraction {
    type Error = ParamError;
    fn try_from(value: f64) -> Result<Self, ParamError> {
        Self::new(value)
    }
}

impl From<FakeFraction> for f64 {
    fn from(beta: FakeFraction) -> f64 {
        beta.0
    }
}
