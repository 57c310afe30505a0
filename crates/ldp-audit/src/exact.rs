//! The exact audit: the worst likelihood ratio of a mechanism of this toolkit, from its
//! exact output probabilities (`Mechanism::log_likelihoods`) at the outputs its family
//! names (`AttackSurface::exact_outputs`).

use ldp_core::{AnyMechanism, AttackSurface, ExactOutputs, TooManyOutputs, dispatch};
use serde::Serialize;

use crate::AuditError;

pub use ldp_core::Coverage;

/// The most likelihood evaluations (outputs times k) an exact audit makes.
pub const EXACT_LIMIT: u64 = 1 << 28;

/// The result of an exact audit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExactAudit {
    /// The budget the mechanism claims.
    pub claimed_eps: f64,
    /// The largest `ln P[y | x] - ln P[y | x']` over the outputs y and inputs x, x'.
    pub eps_exact: f64,
    /// The output attaining it, in the report's JSON form.
    pub worst_output: String,
    /// The input most likely to give it.
    pub more_likely: u32,
    /// The input least likely to give it.
    pub less_likely: u32,
    /// The outputs examined.
    pub outputs: u64,
    /// The floating-point error `eps_exact` may carry: the log-likelihoods it subtracts
    /// are large at large k, so compare it with a budget up to this much.
    pub rounding: f64,
    /// How they were chosen.
    pub coverage: Coverage,
}

impl ExactAudit {
    /// The verdict: whether the mechanism spends more than it claims, beyond the rounding
    /// `eps_exact` may carry (`eps_exact > claimed_eps + rounding`).
    ///
    /// ```
    /// use ldp_audit::exact_audit;
    /// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
    /// let grr = Spec::classic(Protocol::Grr, DomainSize::new(10)?, Epsilon::new(1.0)?)?.build()?;
    /// assert!(!exact_audit(&grr)?.flagged());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flagged(&self) -> bool {
        self.eps_exact > self.claimed_eps + self.rounding
    }
}

/// The worst likelihood ratio of `mech` over every input pair and (up to the symmetries
/// named in [`Coverage`]) every output: the outputs its family names
/// ([`AttackSurface::exact_outputs`]). Refused when that takes more than [`EXACT_LIMIT`]
/// likelihood evaluations.
///
/// ```
/// use ldp_audit::exact_audit;
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let the = Spec::classic(Protocol::The, DomainSize::new(25)?, Epsilon::new(1.0)?)?.build()?;
/// let exact = exact_audit(&the)?;
/// // Thresholding spends less than its budget.
/// assert!(exact.eps_exact < 0.9);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn exact_audit(mech: &AnyMechanism) -> Result<ExactAudit, AuditError> {
    let result = dispatch!(mech, m => {
        let ExactOutputs { outputs, coverage } = m.exact_outputs(EXACT_LIMIT).map_err(too_large)?;
        worst(m, outputs, coverage)
    });
    Ok(ExactAudit {
        claimed_eps: mech.spec().eps().get(),
        ..result
    })
}

/// The refusal of outputs over [`EXACT_LIMIT`].
pub(crate) fn too_large(e: TooManyOutputs) -> AuditError {
    AuditError::ExactTooLarge {
        outputs: e.outputs,
        k: e.k,
    }
}

/// The largest ratio over `outputs`.
pub(crate) fn worst<M: AttackSurface>(
    m: &M,
    outputs: impl Iterator<Item = M::Report>,
    coverage: Coverage,
) -> ExactAudit
where
    M::Report: Serialize,
{
    let mut best: Option<(f64, M::Report, u32, u32)> = None;
    let mut count = 0u64;
    let mut lls = Vec::new();
    let mut largest: f64 = 1.0;
    for y in outputs {
        count += 1;
        debug_assert!(m.validate(&y).is_ok(), "{y:?}");
        m.log_likelihoods(&y, &mut lls);
        largest = lls
            .iter()
            .filter(|l| l.is_finite())
            .fold(largest, |a, l| a.max(l.abs()));
        let (mut hi, mut lo) = (0usize, 0usize);
        for (x, &l) in lls.iter().enumerate() {
            if l > lls[hi] {
                hi = x;
            }
            if l < lls[lo] {
                lo = x;
            }
        }
        let ratio = lls[hi] - lls[lo];
        if best.as_ref().is_none_or(|b| ratio > b.0) {
            best = Some((ratio, y, hi as u32, lo as u32));
        }
    }
    let (eps_exact, y, more_likely, less_likely) = best.expect("every mechanism has an output");
    ExactAudit {
        claimed_eps: 0.0,
        eps_exact,
        worst_output: serde_json::to_string(&y).expect("reports serialize"),
        more_likely,
        less_likely,
        outputs: count,
        // A few roundings of the largest log-likelihood on each side of the difference.
        rounding: 16.0 * f64::EPSILON * largest,
        coverage,
    }
}
