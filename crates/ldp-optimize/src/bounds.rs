//! Lower bounds of each objective over an interval of an integer parameter (ASS's omega,
//! ALH's g), for the branch-and-bound search of [`crate::search`]: each family's closed
//! forms provide them ([`ldp_analytic::bounds`]).

use ldp_analytic::bounds::Wanted;
use ldp_core::{DomainSize, Epsilon, Protocol, Spec};

use crate::objective::{Objective, ObjectiveSet, Objectives};
use crate::options::TuneOptions;
use crate::space::params_at;

/// Lower bounds of the objectives over the integers `a..=b` of `protocol`'s parameter, the
/// objectives that are not needed bounded by 0; `None` when some objective of `needed` has
/// no bound (the search then scans).
pub(crate) fn lower_bounds(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    options: &TuneOptions,
    needed: ObjectiveSet,
    a: u32,
    b: u32,
) -> Option<Objectives> {
    let spec = |x: u32| Spec::new(k, eps, params_at(protocol, f64::from(x))).ok();
    let wanted = Wanted {
        asr: needed.contains(Objective::Asr),
        mse: needed.contains(Objective::Mse),
        epg: needed.contains(Objective::Epg),
        bits: needed.contains(Objective::Bits),
    };
    let lb = ldp_analytic::bounds::lower_bounds(
        &spec(a)?,
        &spec(b)?,
        wanted,
        options.lh_asr,
        &options.poisoning,
    );
    let mut out = Objectives::splat(0.0);
    for (objective, bound, slot) in [
        (Objective::Asr, lb.asr, &mut out.asr),
        (Objective::Mse, lb.mse, &mut out.mse),
        (Objective::Epg, lb.epg, &mut out.epg),
        (Objective::Bits, lb.bits, &mut out.bits),
    ] {
        if needed.contains(objective) {
            *slot = bound?;
        }
    }
    Some(out)
}
