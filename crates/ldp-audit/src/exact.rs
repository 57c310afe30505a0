//! The exact audit: the worst likelihood ratio of a mechanism of this toolkit, from its
//! exact output probabilities (`Mechanism::log_likelihoods`).

use ldp_core::families::local_hash::hash_item;
use ldp_core::{
    AnyMechanism, FamilyParams, GrrReport, LhReport, Mechanism, OnesReport, SheReport, SubsetReport,
};
use serde::Serialize;

use crate::AuditError;

/// The most likelihood evaluations (outputs times k) an exact audit makes.
pub const EXACT_LIMIT: u64 = 1 << 28;

/// How the outputs of an exact audit were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coverage {
    /// Every output of the mechanism.
    Every,
    /// The outputs that differ in how they treat items 0 and 1, the rest fixed: the
    /// mechanism treats items alike (SS, UE, THE, SHE), so every output's ratio occurs
    /// among them.
    Symmetry,
    /// One output at which the ratio is provably largest: SHE's one-hot vector of item 0
    /// (every coordinate of x at least 1 and of x' at most 0 maximizes the Laplace ratio).
    Witness,
    /// Every output under the first `seeds` hash seeds: an output's ratio depends on the
    /// seed only through which items share its hash value, and the first seed that
    /// separates two items already gives the largest ratio (LH).
    Seeds {
        /// The seeds enumerated.
        seeds: u32,
    },
}

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

/// The worst likelihood ratio of `mech` over every input pair and (up to the symmetries
/// named in [`Coverage`]) every output. Refused when that takes more than
/// [`EXACT_LIMIT`] likelihood evaluations.
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
    let spec = mech.spec();
    let k = spec.k().get();
    let budget = |outputs: u64| -> Result<(), AuditError> {
        if outputs.saturating_mul(u64::from(k)) > EXACT_LIMIT {
            Err(AuditError::ExactTooLarge { outputs, k })
        } else {
            Ok(())
        }
    };
    // Outputs that set items 0 and 1 every way, filled from 2.. to `size` entries.
    let patterns = |size: u32| -> Vec<Vec<u32>> {
        [(false, false), (true, false), (false, true), (true, true)]
            .into_iter()
            .filter_map(|(a, b)| {
                let mut items: Vec<u32> = [(a, 0), (b, 1)]
                    .into_iter()
                    .filter_map(|(set, i)| set.then_some(i))
                    .collect();
                let rest = size.checked_sub(items.len() as u32)?;
                if rest > k - 2 {
                    return None;
                }
                items.extend(2..2 + rest);
                Some(items)
            })
            .collect()
    };
    let result = match (mech, spec.params()) {
        (AnyMechanism::Grr(m), _) => {
            budget(u64::from(k))?;
            worst(m, (0..k).map(|y| GrrReport { y }), Coverage::Every)
        }
        (AnyMechanism::SubsetSelection(m), FamilyParams::SubsetSelection { omega }) => worst(
            m,
            patterns(omega)
                .into_iter()
                .map(|subset| SubsetReport { subset }),
            Coverage::Symmetry,
        ),
        (AnyMechanism::UnaryEncoding(m), _) => worst(
            m,
            (0..=2).flat_map(patterns).map(|ones| OnesReport { ones }),
            Coverage::Symmetry,
        ),
        (AnyMechanism::ThresholdHistogram(m), _) => worst(
            m,
            (0..=2).flat_map(patterns).map(|ones| OnesReport { ones }),
            Coverage::Symmetry,
        ),
        (AnyMechanism::SummationHistogram(m), _) => {
            // The Laplace density ratio is largest where coordinate x is at least 1 and
            // x' at most 0: the one-hot vector of item 0 is such a point for every pair.
            let mut y = vec![0.0; k as usize];
            y[0] = 1.0;
            worst(m, [SheReport { y }].into_iter(), Coverage::Witness)
        }
        (AnyMechanism::LocalHashing(m), FamilyParams::LocalHashing { g }) => {
            // Seeds until one separates two items (at most 64), every value of each.
            let seeds = (0..64u32)
                .position(|s| (1..k).any(|x| hash_item(x, s, g) != hash_item(0, s, g)))
                .map_or(64, |s| s as u32 + 1);
            budget(u64::from(seeds) * u64::from(g))?;
            worst(
                m,
                (0..seeds).flat_map(|seed| (0..g).map(move |y| LhReport { seed, y })),
                Coverage::Seeds { seeds },
            )
        }
        (AnyMechanism::HadamardResponse(m), _) => {
            budget(u64::from(m.outputs()))?;
            worst(
                m,
                (0..m.outputs()).map(|y| GrrReport { y }),
                Coverage::Every,
            )
        }
        (AnyMechanism::HadamardMechanism(m), _) => {
            budget(2 * u64::from(m.coefficients()))?;
            let outputs =
                (0..m.coefficients()).flat_map(|seed| [0, 1].map(|y| LhReport { seed, y }));
            worst(m, outputs, Coverage::Every)
        }
        (AnyMechanism::FastLocalHashing(m), FamilyParams::FastLocalHashing { g, seeds }) => {
            budget(u64::from(g) * u64::from(seeds))?;
            let outputs = (0..seeds).flat_map(|seed| (0..g).map(move |y| LhReport { seed, y }));
            worst(m, outputs, Coverage::Every)
        }
        (
            AnyMechanism::HadamardCountMeanSketch(m),
            FamilyParams::HadamardCountMeanSketch {
                hashes: h,
                width: cols,
            },
        ) => {
            budget(2 * u64::from(h) * u64::from(cols))?;
            let outputs = (0..h * cols).flat_map(|seed| [0, 1].map(|y| LhReport { seed, y }));
            worst(m, outputs, Coverage::Every)
        }
        (
            AnyMechanism::CountMeanSketch(m),
            FamilyParams::CountMeanSketch {
                hashes: h,
                width: cols,
            },
        ) => {
            // Every row and every pattern of the row's m bits.
            let outputs = 1u64
                .checked_shl(cols)
                .filter(|&n| n <= EXACT_LIMIT)
                .map(|n| n * u64::from(h))
                .ok_or(AuditError::ExactTooLarge {
                    outputs: u64::MAX,
                    k,
                })?;
            budget(outputs)?;
            let reports = (0..h).flat_map(move |row| {
                (0u64..1 << cols).map(move |mask| {
                    let mut ones: Vec<u32> = (0..cols)
                        .filter(|c| mask >> c & 1 == 1)
                        .map(|c| row * cols + c)
                        .collect();
                    ones.push(h * cols + row);
                    OnesReport { ones }
                })
            });
            worst(m, reports, Coverage::Every)
        }
        (mech, family) => unreachable!("{mech:?} has the parameters {family:?}"),
    };
    Ok(ExactAudit {
        claimed_eps: spec.eps().get(),
        ..result
    })
}

/// The largest ratio over `outputs`.
fn worst<M: Mechanism>(
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
