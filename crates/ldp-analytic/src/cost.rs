//! Communication and computation cost of one report: the "complementary system-level
//! metrics" the paper's conclusion names as the framework's next axis.
//!
//! # Units
//! - **Bits**: the expected size of one report under an information-efficient encoding
//!   ([`Encoding`]; [`bits`] is the smallest of the family's encodings). Fixed-length
//!   codes are rounded up to whole bits; a sparse code's size is an expectation.
//! - **Server operations**: the expected work to aggregate one report, counting one per
//!   counter increment, per hash evaluation and per floating-point addition. It is what
//!   the aggregators of `ldp-core` do: GRR increments one counter, SS omega, UE and THE
//!   one per one-bit, LH hashes all k items and increments the supported ones, SHE adds
//!   k numbers.
//! - **Client draws**: the expected number of random variates one report consumes (a
//!   coin, a uniform index, a geometric gap or an exponential each count one).

use ldp_core::{Spec, dispatch_family};
use serde::{Deserialize, Serialize};

use crate::family::ClosedForms;

/// A way to write one report down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// One index in `0..k` (GRR), or in `0..K` (HR's column): `ceil(log2 k)` bits.
    Index,
    /// The rank of the subset among the `C(k, omega)` subsets (SS, enumerative code):
    /// `ceil(log2 C(k, omega))` bits.
    SubsetRank,
    /// The omega indices one by one (SS): `omega ceil(log2 k)` bits.
    SubsetIndices,
    /// The k bits of the vector (UE, THE).
    Dense,
    /// The number of one-bits, then their indices (UE, THE):
    /// `ceil(log2 (k + 1)) + E[ones] ceil(log2 k)` bits in expectation.
    Sparse,
    /// The 32-bit seed and the value in `0..g` (LH): `32 + ceil(log2 g)` bits.
    SeedAndValue,
    /// An index into a public list and a value (HM: a column of K and a bit):
    /// `ceil(log2 list) + ceil(log2 values)` bits.
    IndexAndValue,
    /// A row index and the row's bits (CMS: one of h rows and m bits):
    /// `ceil(log2 h) + m` bits.
    IndexAndBits,
    /// The rank of a set of buckets among the `C(k, d)` sets, then one bit per bucket
    /// (dBitFlip): `ceil(log2 C(k, d)) + d` bits.
    SubsetRankAndBits,
    /// k IEEE doubles (SHE, as this toolkit sends them): `64 k` bits.
    Float64,
    /// k IEEE singles (SHE, if a deployment rounds its reports): `32 k` bits.
    Float32,
}

/// `ceil(log2 x)` of an exact integer count given by its logarithm, robust to rounding.
pub(crate) fn whole_bits(log2: f64) -> f64 {
    (log2 - 1e-9).ceil().max(0.0)
}

/// `ceil(log2 n)`.
pub(crate) fn index_bits(n: f64) -> f64 {
    whole_bits(n.log2())
}

/// Every encoding of the family and its expected size in bits, smallest first.
///
/// ```
/// use ldp_analytic::cost::{encodings, Encoding};
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let ss = Spec::classic(Protocol::Ss, DomainSize::new(500)?, Epsilon::new(1.0)?)?;
/// let e = encodings(&ss); // omega = 134
/// assert_eq!(e[0].0, Encoding::SubsetRank);
/// assert_eq!(e[1], (Encoding::SubsetIndices, 134.0 * 9.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encodings(spec: &Spec) -> Vec<(Encoding, f64)> {
    let (k, eps) = (spec.k(), spec.eps());
    dispatch_family!(spec.params(), F, param => F::encodings(k, eps, param))
}

/// Expected bits of one report under the family's most compact encoding (SHE: 64-bit
/// floats, as sent by this toolkit).
///
/// ```
/// use ldp_analytic::cost::bits;
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let (k, eps) = (DomainSize::new(500)?, Epsilon::new(1.0)?);
/// assert_eq!(bits(&Spec::classic(Protocol::Grr, k, eps)?), 9.0);
/// assert_eq!(bits(&Spec::classic(Protocol::Olh, k, eps)?), 32.0 + 2.0); // g = 4
/// assert_eq!(bits(&Spec::classic(Protocol::Oue, k, eps)?), 500.0); // dense beats sparse
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn bits(spec: &Spec) -> f64 {
    let (k, eps) = (spec.k(), spec.eps());
    dispatch_family!(spec.params(), F, param => F::bits(k, eps, param))
}

/// Expected server operations to aggregate one report (counter increments, hash
/// evaluations and floating-point additions; see the module docs).
pub fn server_ops(spec: &Spec) -> f64 {
    let (k, eps) = (spec.k(), spec.eps());
    dispatch_family!(spec.params(), F, param => F::server_ops(k, eps, param))
}

/// Expected random variates one report consumes on the client (see the module docs).
pub fn client_draws(spec: &Spec) -> f64 {
    let (k, eps) = (spec.k(), spec.eps());
    dispatch_family!(spec.params(), F, param => F::client_draws(k, eps, param))
}
