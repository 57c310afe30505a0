//! Lower bounds of the objectives over an interval of a family's parameter, for the
//! branch-and-bound search of `ldp-optimize` (each family's
//! [`crate::ClosedForms::lower_bounds`]: SS's omega and LH's g
//! have them).
//!
//! Every bound is exact arithmetic on the objective's shape, written as products and sums
//! of terms that are monotone in the parameter (or convex, with a known minimizer), each
//! taken at the end of the interval where it is smallest. A bound may be loose; it must
//! never exceed the objective at a point of the interval.

use ldp_core::{Registered, Spec, dispatch_family};

use crate::asr::LhAsr;
use crate::epg::Poisoning;
use crate::family::ClosedForms;

/// Lower bounds of ASR, MSE, EPG and bits over a parameter interval; `None` for an
/// objective without one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LowerBounds {
    /// Of the expected ASR (in the form `lh` asks for).
    pub asr: Option<f64>,
    /// Of the per-user variance.
    pub mse: Option<f64>,
    /// Of the expected poisoning gain.
    pub epg: Option<f64>,
    /// Of the report size in bits.
    pub bits: Option<f64>,
}

/// Which objectives a search needs bounds of (the others are not computed: SS's bits
/// bound takes two log-binomials).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wanted {
    /// The ASR.
    pub asr: bool,
    /// The MSE.
    pub mse: bool,
    /// The EPG.
    pub epg: bool,
    /// The report size.
    pub bits: bool,
}

impl Wanted {
    /// Every objective.
    pub const ALL: Wanted = Wanted {
        asr: true,
        mse: true,
        epg: true,
        bits: true,
    };
}

/// Lower bounds over every instance whose parameter lies between those of `lo` and `hi`
/// (of one family, at one k and eps), of the `wanted` objectives; `None` for an objective
/// not wanted or without a bound, and all `None` when `lo` and `hi` are of different
/// families.
///
/// ```
/// use ldp_analytic::{bounds::{lower_bounds, Wanted}, variance, LhAsr, Poisoning};
/// use ldp_core::{DomainSize, Epsilon, FamilyParams, Spec};
/// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(4.0)?);
/// let lh = |g| Spec::new(k, eps, FamilyParams::LocalHashing { g });
/// let b = lower_bounds(&lh(10)?, &lh(20)?, Wanted::ALL, LhAsr::Paper, &Poisoning::default());
/// for g in 10..=20 {
///     assert!(b.mse.unwrap() <= variance::approx_per_user(&lh(g)?));
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn lower_bounds(
    lo: &Spec,
    hi: &Spec,
    wanted: Wanted,
    lh: LhAsr,
    poisoning: &Poisoning,
) -> LowerBounds {
    let (k, eps) = (lo.k(), lo.eps());
    dispatch_family!(lo.params(), F, a => match F::param_of(&hi.params()) {
        Some(b) => F::lower_bounds(k, eps, a, b, wanted, lh, poisoning),
        None => LowerBounds::default(),
    })
}
