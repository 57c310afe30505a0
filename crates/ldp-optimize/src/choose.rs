//! Choosing the protocol itself, as practitioners ask: "the lowest MSE with ASR at most a
//! and reports of at most b bits", over all twelve protocols at once.

use ldp_analytic::{LhAsr, Poisoning};
use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
use serde::{Deserialize, Serialize};

use crate::error::OptimizeError;
use crate::objective::{Objective, ObjectiveSet, Objectives, Weights};
use crate::space::paper_space;
use crate::strategy::{Bounds, Strategy};
use crate::tune::{TuneOptions, objectives};

/// The protocol instance [`choose_protocol`] picked.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// The protocol: a classic one at its preset, or an adaptive one at a parameter of
    /// its paper space.
    pub protocol: Protocol,
    /// The instance.
    pub spec: Spec,
    /// Its objective values.
    pub objectives: Objectives,
    /// Objective evaluations spent.
    pub evaluations: usize,
}

/// The lowest-MSE instance among the eight classic protocols at their presets and the
/// four adaptive ones over their paper spaces, subject to `bounds`. Ties go to the
/// earlier protocol of [`Protocol::ALL`] (classic before adaptive), then to the earlier
/// parameter. SHE's EPG is infinite (unbounded without clipping), so an EPG bound
/// excludes it.
///
/// ```
/// use ldp_analytic::{LhAsr, Poisoning};
/// use ldp_core::{DomainSize, Epsilon, Protocol};
/// use ldp_optimize::{choose_protocol, Bounds};
/// let bounds = Bounds::asr(0.05)?.with_bits(64.0)?;
/// let pick = choose_protocol(DomainSize::new(100)?, Epsilon::new(4.0)?, &bounds, LhAsr::Paper, &Poisoning::default())?;
/// assert!(pick.objectives.asr <= 0.05 && pick.objectives.bits <= 64.0);
/// assert_eq!(pick.protocol, Protocol::Alh); // local hashing: 32 + ceil(log2 g) bits
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn choose_protocol(
    k: DomainSize,
    eps: Epsilon,
    bounds: &Bounds,
    lh_asr: LhAsr,
    poisoning: &Poisoning,
) -> Result<Choice, OptimizeError> {
    let options = TuneOptions {
        strategy: Strategy::EpsConstraint(*bounds),
        // Every bounded objective, and MSE, must be computed.
        weights: Weights::all(1.0, 1.0, 1.0, 1.0)?,
        lh_asr,
        poisoning: *poisoning,
        ..TuneOptions::default()
    };
    let needed = ObjectiveSet::of(
        &bounds
            .iter()
            .map(|(o, _)| o)
            .chain([Objective::Mse])
            .collect::<Vec<_>>(),
    );
    let mut best: Option<Choice> = None;
    let mut evaluations = 0;
    for protocol in Protocol::ALL {
        let found = if protocol.is_adaptive() {
            let space = paper_space(protocol, k, eps)?;
            let (found, n) = crate::tune::minimize_mse_within(
                protocol, k, eps, &space, &options, needed, bounds,
            )?;
            evaluations += n;
            match found {
                // The search compared only the bounded objectives and MSE: report all.
                Some(c) => {
                    let spec = Spec::new(k, eps, c.params).expect("valid");
                    Some((spec, objectives(&spec, lh_asr, poisoning)?))
                }
                None => None,
            }
        } else {
            let spec = Spec::classic(protocol, k, eps).expect("classic protocol");
            let o = objectives(&spec, lh_asr, poisoning)?;
            evaluations += 1;
            bounds.admit(&o).then_some((spec, o))
        };
        if let Some((spec, o)) = found
            && best.is_none_or(|b| o.mse < b.objectives.mse)
        {
            best = Some(Choice {
                protocol,
                spec,
                objectives: o,
                evaluations: 0,
            });
        }
    }
    best.map(|b| Choice { evaluations, ..b })
        .ok_or(OptimizeError::Infeasible)
}
