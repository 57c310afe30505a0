//! Unary encoding (RAPPOR's SUE, Wang et al.'s OUE, and any p), paper Eq. "ue_parameters".

use serde::{Deserialize, Serialize};

use crate::error::ParamError;
use crate::families::bits::{IndependentBits, independent_bits_mechanism};
use crate::vocab::{DomainSize, Epsilon};

/// UE: one-hot encode the item, then keep the true bit with probability `p` and set every
/// other bit with probability `q = p / (e^eps (1 - p) + p)`.
///
/// Privacy: `p (1 - q) / ((1 - p) q) = e^eps` for this `q`, which is the largest ratio of
/// two inputs' probabilities for any bit vector.
///
/// Sampling is exact and costs O(1 + kq): only the one-bits are drawn (geometric gaps).
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, PureProtocol, UnaryEncoding};
/// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(2.0)?);
/// let oue = UnaryEncoding::optimized(k, eps);
/// assert_eq!(oue.p_star(), 0.5);
/// let aue = UnaryEncoding::new(k, eps, 0.818)?;
/// assert!(aue.q_star() > oue.q_star());
/// # Ok::<(), ldp_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "UnaryParams", into = "UnaryParams")]
pub struct UnaryEncoding {
    bits: IndependentBits,
}

/// Serialized parameters of [`UnaryEncoding`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnaryParams {
    /// Domain size.
    pub k: DomainSize,
    /// Privacy budget.
    pub epsilon: Epsilon,
    /// Probability of keeping the true bit, in `[0.5, 1)`.
    pub p: f64,
}

impl UnaryEncoding {
    /// UE with true-bit probability `p` in `[0.5, 1)`; `q` follows from `eps`.
    pub fn new(k: DomainSize, eps: Epsilon, p: f64) -> Result<Self, ParamError> {
        check_unary_p(p)?;
        // q = p / (e^eps (1 - p) + p), divided through by e^eps so it cannot overflow.
        let t = (-eps.get()).exp();
        let q = p * t / ((1.0 - p) + p * t);
        Ok(Self::from_pq(k, eps, p, q))
    }

    /// Symmetric UE (RAPPOR): `p = e^(eps/2) / (e^(eps/2) + 1)`, `q = 1 - p`.
    pub fn symmetric(k: DomainSize, eps: Epsilon) -> Self {
        let h = (-eps.get() / 2.0).exp();
        Self::from_pq(k, eps, symmetric_p(eps), h / (1.0 + h))
    }

    /// Optimized UE: `p = 1/2`, `q = 1 / (e^eps + 1)`, which minimizes the variance.
    pub fn optimized(k: DomainSize, eps: Epsilon) -> Self {
        let t = (-eps.get()).exp();
        Self::from_pq(k, eps, 0.5, t / (1.0 + t))
    }

    fn from_pq(k: DomainSize, eps: Epsilon, p: f64, q: f64) -> Self {
        Self {
            bits: IndependentBits::new(k, eps, p, q),
        }
    }
}

impl TryFrom<UnaryParams> for UnaryEncoding {
    type Error = ParamError;
    fn try_from(p: UnaryParams) -> Result<Self, ParamError> {
        Self::new(p.k, p.epsilon, p.p)
    }
}

impl From<UnaryEncoding> for UnaryParams {
    fn from(m: UnaryEncoding) -> Self {
        Self {
            k: m.bits.k,
            epsilon: m.bits.eps,
            p: m.bits.p,
        }
    }
}

/// SUE's `p = e^(eps/2) / (e^(eps/2) + 1)`. Above eps of about 73 it rounds to 1 in f64,
/// outside UE's range `[0.5, 1)`; the largest double below 1 is used instead.
pub(crate) fn symmetric_p(eps: Epsilon) -> f64 {
    (1.0 / (1.0 + (-eps.get() / 2.0).exp())).min(1.0 - f64::EPSILON / 2.0)
}

/// The true-bit probability must lie in `[0.5, 1)`.
pub(crate) fn check_unary_p(p: f64) -> Result<(), ParamError> {
    if (0.5..1.0).contains(&p) {
        Ok(())
    } else {
        Err(ParamError::UnaryP { value: p })
    }
}

independent_bits_mechanism!(UnaryEncoding);
