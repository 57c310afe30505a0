//! Choosing the protocol itself, as practitioners ask: "the lowest MSE with ASR at most a
//! and reports of at most b bits", over every protocol at once: the paper's twelve and the
//! large-domain oracles (the protocols after the paper's twelve in `Protocol::ALL`) at
//! their presets.

use ldp_analytic::{LhAsr, Poisoning};
use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
use serde::{Deserialize, Serialize};

use crate::error::{FullScan, OptimizeError};
use crate::objective::{Objective, ObjectiveSet, Objectives, Weights};
use crate::options::TuneOptions;
use crate::space::{MAX_GRID_POINTS, paper_space, params_at};
use crate::strategy::{Bounds, Strategy};
use crate::tune::{objectives, objectives_for};

/// Why no protocol could be chosen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ChooseError {
    /// No protocol instance meets the bounds. `reachable` says, for each bounded
    /// objective, the least value any single instance reaches (one report; empty after
    /// more), so that a caller can tell what to ask for instead.
    #[error(
        "no protocol instance meets the bounds{}",
        describe_reachable(reachable)
    )]
    Infeasible {
        /// The least value of each bounded objective, and an instance reaching it.
        reachable: Vec<Reachable>,
    },
    /// A setting is out of range, or an instance cannot be evaluated.
    #[error(transparent)]
    Optimize(#[from] OptimizeError),
}

/// The protocol instance [`choose_protocol`] (or [`choose_protocol_after`]) picked.
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

/// The lowest-MSE instance among the classic protocols at their presets (and, for HR
/// and the sketches, their families' further instances,
/// [`ldp_core::Family::alternatives`]) and the adaptive ones over their paper spaces,
/// subject to `bounds`. Ties go to the earlier protocol of [`Protocol::ALL`] (the paper's
/// order, then later protocols), then to the preset, then to the earlier parameter. SHE's EPG is infinite (unbounded without clipping), so an EPG bound
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
) -> Result<Choice, ChooseError> {
    choose_protocol_after(k, eps, bounds, lh_asr, poisoning, 1)
}

/// [`choose_protocol`] with the ASR after `collections` linked reports of one unchanged
/// value ([`ldp_analytic::longitudinal::asr_after`], LH under an ideal hash) as the bounded and
/// reported ASR: the question of a deployment that collects daily. Instances without an
/// exact form after more than one report (SS and ASS beyond omega = 1, SHE) are left out.
/// For `collections` > 1 every other instance is evaluated (the classic presets and the
/// whole paper grid of each adaptive protocol); 1 is [`choose_protocol`]. GRR's exact form
/// costs most (k = 100: 0.007 s at t = 365, about 1 s at 10 000).
///
/// ```
/// use ldp_analytic::{LhAsr, Poisoning};
/// use ldp_core::{DomainSize, Epsilon};
/// use ldp_optimize::{choose_protocol, choose_protocol_after, Bounds};
/// let (k, eps, bounds) = (DomainSize::new(100)?, Epsilon::new(1.0)?, Bounds::asr(0.1)?);
/// let once = choose_protocol(k, eps, &bounds, LhAsr::Paper, &Poisoning::default())?;
/// let daily = choose_protocol_after(k, eps, &bounds, LhAsr::Paper, &Poisoning::default(), 365)?;
/// // A year of linked reports costs accuracy: the bound holds only with more noise.
/// assert!(daily.objectives.asr <= 0.1 && daily.objectives.mse > once.objectives.mse);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn choose_protocol_after(
    k: DomainSize,
    eps: Epsilon,
    bounds: &Bounds,
    lh_asr: LhAsr,
    poisoning: &Poisoning,
    collections: u32,
) -> Result<Choice, ChooseError> {
    let settings = TuneOptions {
        lh_asr,
        poisoning: *poisoning,
        collections,
        ..TuneOptions::default()
    };
    choose_protocol_among(k, eps, bounds, &settings, &|_| true)
}

/// [`choose_protocol_after`] over the protocols `among` admits only: the question of a
/// bound that some protocols have no form for (the change detector's precision on fresh
/// reports, for the protocols whose law depends on the domain's labels). `settings` gives
/// the LH ASR form, the poisoning setting, the linked reports behind the ASR and the bias
/// setting (its weights, strategy, search and scale do not apply): with a
/// [`TuneOptions::bias`], the MSE compared counts the bias of the fixed-hash families
/// ([`BiasSetting::per_user`](ldp_analytic::variance::BiasSetting::per_user)); without
/// it, the paper's variance per user, which ranks FLH as OLH.
pub fn choose_protocol_among(
    k: DomainSize,
    eps: Epsilon,
    bounds: &Bounds,
    settings: &TuneOptions,
    among: &dyn Fn(Protocol) -> bool,
) -> Result<Choice, ChooseError> {
    let (lh_asr, poisoning, collections) =
        (settings.lh_asr, &settings.poisoning, settings.collections);
    if collections == 0 {
        return Err(OptimizeError::NoCollections.into());
    }
    let options = TuneOptions {
        strategy: Strategy::EpsConstraint(*bounds),
        // Every bounded objective, and MSE, must be computed.
        weights: Weights::all(1.0, 1.0, 1.0, 1.0)?,
        lh_asr,
        poisoning: *poisoning,
        collections,
        bias: settings.bias,
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
    for protocol in Protocol::ALL.into_iter().filter(|&p| among(p)) {
        let found = match collections {
            1 if protocol.is_adaptive() => {
                let space = paper_space(protocol, k, eps)?;
                let (found, n) = crate::tune::minimize_mse_within(
                    protocol, k, eps, &space, &options, needed, bounds,
                )?;
                evaluations += n;
                match found {
                    // The search compared only the bounded objectives and MSE: report all.
                    Some(c) => {
                        let spec = Spec::new(k, eps, c.params).expect("valid");
                        Some((spec, objectives_for(&spec, &options)?))
                    }
                    None => None,
                }
            }
            1 => {
                let mut found: Option<(Spec, Objectives)> = None;
                for spec in classic_instances(protocol, k, eps) {
                    let o = objectives_for(&spec, &options)?;
                    evaluations += 1;
                    if bounds.admit(&o) && found.is_none_or(|(_, b)| o.mse < b.mse) {
                        found = Some((spec, o));
                    }
                }
                found
            }
            _ => {
                let (found, n) = scan_after(protocol, k, eps, &options, bounds)?;
                evaluations += n;
                found
            }
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
    match best {
        Some(b) => Ok(Choice { evaluations, ..b }),
        None if collections == 1 => Err(ChooseError::Infeasible {
            reachable: reachable(k, eps, bounds, lh_asr, poisoning, among)?,
        }),
        None => Err(ChooseError::Infeasible { reachable: vec![] }),
    }
}

/// The least value of a bounded objective over single instances, and one reaching it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reachable {
    /// The objective.
    pub objective: Objective,
    /// Its bound in the request.
    pub bound: f64,
    /// The least value of it any instance reaches.
    pub lowest: f64,
    /// The protocol of an instance reaching it.
    pub protocol: Protocol,
    /// That instance.
    pub spec: Spec,
}

/// For each bounded objective, its least value over the classic instances and the
/// adaptive protocols' paper grids (one report).
fn reachable(
    k: DomainSize,
    eps: Epsilon,
    bounds: &Bounds,
    lh_asr: LhAsr,
    poisoning: &Poisoning,
    among: &dyn Fn(Protocol) -> bool,
) -> Result<Vec<Reachable>, OptimizeError> {
    let mut lowest: Vec<Option<Reachable>> = bounds.iter().map(|_| None).collect();
    for protocol in Protocol::ALL.into_iter().filter(|&p| among(p)) {
        let specs: Vec<Spec> = if protocol.is_adaptive() {
            paper_space(protocol, k, eps)?
                .grid()
                .into_iter()
                .map(|v| Spec::new(k, eps, params_at(protocol, v)).expect("grid values are valid"))
                .collect()
        } else {
            classic_instances(protocol, k, eps)
        };
        for spec in specs {
            let o = objectives(&spec, lh_asr, poisoning)?;
            for (slot, (objective, bound)) in lowest.iter_mut().zip(bounds.iter()) {
                let value = o.get(objective);
                if slot.as_ref().is_none_or(|r| value < r.lowest) {
                    *slot = Some(Reachable {
                        objective,
                        bound,
                        lowest: value,
                        protocol,
                        spec,
                    });
                }
            }
        }
    }
    Ok(lowest.into_iter().flatten().collect())
}

/// The end of [`ChooseError::Infeasible`]'s message: what can be reached instead.
fn describe_reachable(reachable: &[Reachable]) -> String {
    if reachable.is_empty() {
        return String::new();
    }
    let out_of_reach: Vec<String> = reachable
        .iter()
        .filter(|r| r.lowest > r.bound)
        .map(|r| {
            format!(
                "the lowest {} any instance reaches is {} ({} {}), above the bound {}",
                r.objective.name(),
                format!("{:.6}", r.lowest)
                    .trim_end_matches('0')
                    .trim_end_matches('.'),
                r.protocol.label(),
                params_text(&r.spec),
                r.bound
            )
        })
        .collect();
    if out_of_reach.is_empty() {
        ": each bound alone is met by some instance, but no instance meets them all".into()
    } else {
        format!(": {}", out_of_reach.join("; "))
    }
}

fn params_text(spec: &Spec) -> String {
    let named = spec.params().named_values();
    if named.is_empty() {
        String::new()
    } else {
        let values: Vec<String> = named.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        format!("at {}", values.join(", "))
    }
}

/// The lowest-MSE instance of `protocol` meeting `bounds` with the ASR after
/// `options.collections` reports, among those with an exact form (first of the grid on
/// ties), and the evaluations spent. The branch and bound's lower bounds are the one-shot
/// ASR's, so this scans.
fn scan_after(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    options: &TuneOptions,
    bounds: &Bounds,
) -> Result<(Option<(Spec, Objectives)>, usize), OptimizeError> {
    let specs = if protocol.is_adaptive() {
        let space = paper_space(protocol, k, eps)?;
        if space.len() > MAX_GRID_POINTS {
            return Err(OptimizeError::SpaceTooLarge {
                protocol,
                points: space.len(),
                limit: MAX_GRID_POINTS,
                reason: FullScan::RepeatedAsr,
            });
        }
        let grid = space.grid().into_iter();
        grid.map(|v| Spec::new(k, eps, params_at(protocol, v)))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        classic_instances(protocol, k, eps)
    };
    let mut best: Option<(Spec, Objectives)> = None;
    for spec in &specs {
        let o = match objectives_for(spec, options) {
            Ok(o) => o,
            Err(OptimizeError::NoRepeatedForm { .. }) => continue,
            Err(e) => return Err(e),
        };
        if bounds.admit(&o) && best.is_none_or(|(_, b)| o.mse < b.mse) {
            best = Some((*spec, o));
        }
    }
    Ok((best, specs.len()))
}

/// A classic protocol's preset, then its family's further instances
/// ([`ldp_core::Family::alternatives`]: HR's blocks, the sketches' (h, m)) for a protocol
/// that is its family's only classic one.
fn classic_instances(protocol: Protocol, k: DomainSize, eps: Epsilon) -> Vec<Spec> {
    let preset = Spec::classic(protocol, k, eps).expect("classic protocol");
    let family = protocol.family();
    let alone = Protocol::CLASSIC
        .iter()
        .all(|p| *p == protocol || p.family() != family);
    let mut specs = vec![preset];
    if alone {
        specs.extend(
            family
                .alternatives(k, eps)
                .into_iter()
                .filter(|params| *params != preset.params())
                .map(|params| Spec::new(k, eps, params).expect("alternatives pass the checks")),
        );
    }
    specs
}
