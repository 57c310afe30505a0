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

use ldp_core::families::subset::ln_binomial;
use ldp_core::{FamilyParams, Spec};
use serde::{Deserialize, Serialize};

/// A way to write one report down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// One index in `0..k` (GRR): `ceil(log2 k)` bits.
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
    /// k IEEE doubles (SHE, as this toolkit sends them): `64 k` bits.
    Float64,
    /// k IEEE singles (SHE, if a deployment rounds its reports): `32 k` bits.
    Float32,
}

/// `ceil(log2 x)` of an exact integer count given by its logarithm, robust to rounding.
fn whole_bits(log2: f64) -> f64 {
    (log2 - 1e-9).ceil().max(0.0)
}

/// `ceil(log2 n)`.
fn index_bits(n: f64) -> f64 {
    whole_bits(n.log2())
}

/// Expected number of one-bits of a UE or THE report: `p + (k - 1) q`.
fn expected_ones(spec: &Spec) -> f64 {
    let (p, q) = spec.pure_probabilities().expect("UE and THE are pure");
    p + (spec.k().as_f64() - 1.0) * q
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
    let k = spec.k().as_f64();
    let mut out = match spec.family() {
        FamilyParams::Grr => vec![(Encoding::Index, index_bits(k))],
        FamilyParams::SubsetSelection { omega } => {
            let rank =
                ln_binomial(u64::from(spec.k().get()), u64::from(omega)) / std::f64::consts::LN_2;
            vec![
                (Encoding::SubsetRank, whole_bits(rank)),
                (Encoding::SubsetIndices, f64::from(omega) * index_bits(k)),
            ]
        }
        FamilyParams::UnaryEncoding { .. } | FamilyParams::ThresholdHistogram { .. } => vec![
            (Encoding::Dense, k),
            (
                Encoding::Sparse,
                index_bits(k + 1.0) + expected_ones(spec) * index_bits(k),
            ),
        ],
        FamilyParams::LocalHashing { g } => {
            vec![(Encoding::SeedAndValue, 32.0 + index_bits(f64::from(g)))]
        }
        FamilyParams::SummationHistogram => {
            vec![(Encoding::Float64, 64.0 * k), (Encoding::Float32, 32.0 * k)]
        }
    };
    // SHE's smallest listed encoding is not what it sends: keep Float64 first.
    if spec.family() != FamilyParams::SummationHistogram {
        out.sort_by(|a, b| a.1.total_cmp(&b.1));
    }
    out
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
    let k = spec.k().as_f64();
    // The smallest entry of [`encodings`], without building the list (tuning calls this
    // at every grid point).
    match spec.family() {
        FamilyParams::Grr => index_bits(k),
        FamilyParams::SubsetSelection { omega } => whole_bits(
            ln_binomial(u64::from(spec.k().get()), u64::from(omega)) / std::f64::consts::LN_2,
        )
        .min(f64::from(omega) * index_bits(k)),
        FamilyParams::UnaryEncoding { .. } | FamilyParams::ThresholdHistogram { .. } => {
            k.min(index_bits(k + 1.0) + expected_ones(spec) * index_bits(k))
        }
        FamilyParams::LocalHashing { g } => 32.0 + index_bits(f64::from(g)),
        FamilyParams::SummationHistogram => 64.0 * k,
    }
}

/// Expected server operations to aggregate one report (counter increments, hash
/// evaluations and floating-point additions; see the module docs).
pub fn server_ops(spec: &Spec) -> f64 {
    let k = spec.k().as_f64();
    match spec.family() {
        FamilyParams::Grr => 1.0,
        FamilyParams::SubsetSelection { omega } => f64::from(omega),
        FamilyParams::UnaryEncoding { .. } | FamilyParams::ThresholdHistogram { .. } => {
            expected_ones(spec)
        }
        FamilyParams::LocalHashing { g } => {
            let (p, _) = spec.pure_probabilities().expect("LH is pure");
            // k hashes, then one increment per supported item.
            k + p + (k - 1.0) / f64::from(g)
        }
        FamilyParams::SummationHistogram => k,
    }
}

/// Expected random variates one report consumes on the client (see the module docs).
pub fn client_draws(spec: &Spec) -> f64 {
    let k = spec.k().as_f64();
    let p = spec.pure_probabilities().map_or(0.0, |(p, _)| p);
    match spec.family() {
        // A coin, and another item when it says not to keep the true one.
        FamilyParams::Grr => 2.0 - p,
        // A coin, then omega - 1 or omega draws of Floyd's algorithm.
        FamilyParams::SubsetSelection { omega } => 1.0 + f64::from(omega) - p,
        // The true bit, one geometric gap per other one-bit, and the gap that ends each of
        // the two ranges (below and above the item).
        FamilyParams::UnaryEncoding { .. } | FamilyParams::ThresholdHistogram { .. } => {
            let (_, q) = spec.pure_probabilities().expect("UE and THE are pure");
            3.0 + (k - 1.0) * q
        }
        // The seed, a coin, and another value when the coin says not to keep the hash.
        FamilyParams::LocalHashing { .. } => 3.0 - p,
        // Two exponentials per coordinate.
        FamilyParams::SummationHistogram => 2.0 * k,
    }
}
