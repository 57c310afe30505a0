//! Validated vocabulary: the privacy budget, the domain size, and protocol names.
//!
//! Validation happens once, in the constructors; a value of these types is known good.

use std::fmt;
use std::str::FromStr;

use crate::error::{ItemOutOfRange, ParamError};

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

/// The mechanism families of the paper. Each protocol belongs to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Family {
    /// Generalized randomized response.
    Grr,
    /// Subset selection.
    SubsetSelection,
    /// Unary encoding.
    UnaryEncoding,
    /// Local hashing.
    LocalHashing,
    /// Summation with histogram encoding.
    SummationHistogram,
    /// Thresholding with histogram encoding.
    ThresholdHistogram,
}

/// The twelve protocols of the paper: eight classic presets and four adaptive variants.
///
/// Names parse case-insensitively:
/// ```
/// use ldp_core::Protocol;
/// let p: Protocol = "OLH".parse()?;
/// assert_eq!(p, Protocol::Olh);
/// assert_eq!(p.name(), "olh");
/// assert!("xyz".parse::<Protocol>().is_err());
/// # Ok::<(), ldp_core::vocab::UnknownProtocol>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Protocol {
    /// Generalized randomized response.
    Grr,
    /// Subset selection, omega = max(1, round(k / (e^eps + 1))).
    Ss,
    /// Symmetric unary encoding (RAPPOR), p = e^(eps/2) / (e^(eps/2) + 1).
    Sue,
    /// Optimized unary encoding, p = 1/2.
    Oue,
    /// Binary local hashing, g = 2.
    Blh,
    /// Optimized local hashing, g = round(e^eps + 1).
    Olh,
    /// Summation with histogram encoding.
    She,
    /// Thresholding with histogram encoding, theta minimizing the variance.
    The,
    /// Adaptive subset selection (omega tuned for ASR and MSE).
    Ass,
    /// Adaptive unary encoding (p tuned for ASR and MSE).
    Aue,
    /// Adaptive local hashing (g tuned for ASR and MSE).
    Alh,
    /// Adaptive thresholding (theta tuned for ASR and MSE).
    Athe,
}

impl Protocol {
    /// All twelve protocols, in the paper's order.
    pub const ALL: [Protocol; 12] = [
        Protocol::Grr,
        Protocol::Ss,
        Protocol::Sue,
        Protocol::Oue,
        Protocol::Blh,
        Protocol::Olh,
        Protocol::She,
        Protocol::The,
        Protocol::Ass,
        Protocol::Aue,
        Protocol::Alh,
        Protocol::Athe,
    ];

    /// The eight classic protocols.
    pub const CLASSIC: [Protocol; 8] = [
        Protocol::Grr,
        Protocol::Ss,
        Protocol::Sue,
        Protocol::Oue,
        Protocol::Blh,
        Protocol::Olh,
        Protocol::She,
        Protocol::The,
    ];

    /// The four adaptive protocols.
    pub const ADAPTIVE: [Protocol; 4] =
        [Protocol::Ass, Protocol::Aue, Protocol::Alh, Protocol::Athe];

    /// Lower-case short name, as used on the command line and in data files.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Grr => "grr",
            Protocol::Ss => "ss",
            Protocol::Sue => "sue",
            Protocol::Oue => "oue",
            Protocol::Blh => "blh",
            Protocol::Olh => "olh",
            Protocol::She => "she",
            Protocol::The => "the",
            Protocol::Ass => "ass",
            Protocol::Aue => "aue",
            Protocol::Alh => "alh",
            Protocol::Athe => "athe",
        }
    }

    /// Upper-case label, as in the paper's figures.
    pub fn label(self) -> &'static str {
        match self {
            Protocol::Grr => "GRR",
            Protocol::Ss => "SS",
            Protocol::Sue => "SUE",
            Protocol::Oue => "OUE",
            Protocol::Blh => "BLH",
            Protocol::Olh => "OLH",
            Protocol::She => "SHE",
            Protocol::The => "THE",
            Protocol::Ass => "ASS",
            Protocol::Aue => "AUE",
            Protocol::Alh => "ALH",
            Protocol::Athe => "ATHE",
        }
    }

    /// The mechanism family the protocol instantiates.
    pub fn family(self) -> Family {
        match self {
            Protocol::Grr => Family::Grr,
            Protocol::Ss | Protocol::Ass => Family::SubsetSelection,
            Protocol::Sue | Protocol::Oue | Protocol::Aue => Family::UnaryEncoding,
            Protocol::Blh | Protocol::Olh | Protocol::Alh => Family::LocalHashing,
            Protocol::She => Family::SummationHistogram,
            Protocol::The | Protocol::Athe => Family::ThresholdHistogram,
        }
    }

    /// Whether the protocol's parameter is tuned for ASR and MSE.
    pub fn is_adaptive(self) -> bool {
        matches!(
            self,
            Protocol::Ass | Protocol::Aue | Protocol::Alh | Protocol::Athe
        )
    }

    /// The classic protocol an adaptive one refines (ASS: SS, AUE: OUE, ALH: OLH,
    /// ATHE: THE); a classic protocol is its own counterpart.
    ///
    /// ```
    /// use ldp_core::Protocol;
    /// assert_eq!(Protocol::Alh.classic_counterpart(), Protocol::Olh);
    /// assert_eq!(Protocol::Sue.classic_counterpart(), Protocol::Sue);
    /// ```
    pub fn classic_counterpart(self) -> Protocol {
        match self {
            Protocol::Ass => Protocol::Ss,
            Protocol::Aue => Protocol::Oue,
            Protocol::Alh => Protocol::Olh,
            Protocol::Athe => Protocol::The,
            classic => classic,
        }
    }

    /// The name of the family parameter (`omega`, `p`, `g`, `theta`); `None` for GRR and
    /// SHE, which have none.
    pub fn parameter_name(self) -> Option<&'static str> {
        match self.family() {
            Family::SubsetSelection => Some("omega"),
            Family::UnaryEncoding => Some("p"),
            Family::LocalHashing => Some("g"),
            Family::ThresholdHistogram => Some("theta"),
            Family::Grr | Family::SummationHistogram => None,
        }
    }

    /// Whether the protocol's definition fixes its family parameter, so that another value
    /// would make it a different protocol: SUE and OUE fix p, BLH and OLH fix g. SS and THE
    /// are defined for any omega and theta (their preset is the variance-optimal one), and
    /// an adaptive protocol's parameter is whatever tuning (or the caller) chooses.
    pub fn fixes_parameter(self) -> bool {
        matches!(
            self,
            Protocol::Sue | Protocol::Oue | Protocol::Blh | Protocol::Olh
        )
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A protocol name that is not one of the twelve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown protocol `{0}`; expected one of grr, ss, sue, oue, blh, olh, she, the, ass, aue, alh, athe"
)]
pub struct UnknownProtocol(pub String);

impl FromStr for Protocol {
    type Err = UnknownProtocol;
    fn from_str(s: &str) -> Result<Self, UnknownProtocol> {
        let lower = s.trim().to_ascii_lowercase();
        Protocol::ALL
            .into_iter()
            .find(|p| p.name() == lower)
            .ok_or_else(|| UnknownProtocol(s.to_owned()))
    }
}
