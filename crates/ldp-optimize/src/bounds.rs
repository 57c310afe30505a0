//! Lower bounds of each objective over an interval of an integer parameter (ASS's omega,
//! ALH's g), for the branch-and-bound search of [`crate::search`].
//!
//! Every bound is exact arithmetic on the objective's shape, written as products and sums
//! of terms that are monotone in the parameter (or convex, with a known minimizer), each
//! taken at the end of the interval where it is smallest. A bound may be loose; it must
//! never exceed the objective at an integer point of the interval.

use ldp_analytic::LhAsr;
use ldp_core::families::subset::ln_binomial;
use ldp_core::{DomainSize, Epsilon, Protocol};

use crate::objective::{Objective, ObjectiveSet, Objectives};
use crate::tune::TuneOptions;

/// Which objectives have bounds for which protocol: ASS has ASR, MSE and bits (its EPG
/// is not monotone in omega), ALH has all four. `None` when some objective of `needed`
/// has no bound, and the search falls back to a full scan.
pub(crate) fn supported(protocol: Protocol, needed: ObjectiveSet) -> bool {
    match protocol {
        Protocol::Ass => !needed.contains(Objective::Epg),
        Protocol::Alh => true,
        _ => false,
    }
}

/// Lower bounds of the objectives over the integers `a..=b` of `protocol`'s parameter.
/// Objectives that are not needed are bounded by 0.
pub(crate) fn lower_bounds(
    protocol: Protocol,
    k: DomainSize,
    eps: Epsilon,
    options: &TuneOptions,
    needed: ObjectiveSet,
    a: u32,
    b: u32,
) -> Objectives {
    let poisoning = &options.poisoning;
    let t = (-eps.get()).exp();
    let s = -(-eps.get()).exp_m1(); // 1 - t
    let kf = k.as_f64();
    let (af, bf) = (f64::from(a), f64::from(b));
    let mut lb = Objectives::splat(0.0);
    match protocol {
        Protocol::Ass => {
            if needed.contains(Objective::Asr) {
                // 1 / (omega s + k t): decreasing in omega.
                lb.asr = 1.0 / (bf * s + kf * t);
            }
            if needed.contains(Objective::Mse) {
                // (s w + k t - 1)(s w + (k - 1) t) / (w (k - w) s^2): both numerator
                // factors are nonnegative and increasing, the denominator concave with
                // its largest value at w = k/2.
                let w_max = (kf / 2.0).clamp(af, bf);
                let numerator = (s * af + kf * t - 1.0).max(0.0) * (s * af + (kf - 1.0) * t);
                lb.mse = numerator / (w_max * (kf - w_max) * s * s);
            }
            if needed.contains(Objective::Bits) {
                // ceil(log2 C(k, w)) is unimodal in w: smallest at an end.
                let bits = |w: u32| {
                    (ln_binomial(u64::from(k.get()), u64::from(w)) / std::f64::consts::LN_2 - 1e-9)
                        .ceil()
                };
                lb.bits = bits(a).min(bits(b));
            }
        }
        Protocol::Alh => {
            // p(g) = 1 / (1 + (g - 1) t), decreasing in g.
            let p = |g: f64| 1.0 / (1.0 + (g - 1.0) * t);
            if needed.contains(Objective::Asr) {
                lb.asr = match options.lh_asr {
                    // p / max(k/g, 1): increasing up to g = k, decreasing after, so
                    // smallest at an end.
                    LhAsr::Paper => {
                        let f = |g: f64| p(g) / (kf / g).max(1.0);
                        f(af).min(f(bf))
                    }
                    // p g (1 - (1 - 1/g)^k) / k + (1 - p)(1 - 1/g)^(k-1) / k: p falls,
                    // g (1 - (1 - 1/g)^k) and (1 - 1/g)^(k-1) rise with g.
                    LhAsr::Exact => {
                        let miss = |g: f64| (-1.0 / g).ln_1p();
                        let kept = p(bf) * af * -(kf * miss(af)).exp_m1() / kf;
                        let lost = (1.0 - p(af)) * ((kf - 1.0) * miss(af)).exp() / kf;
                        kept + lost
                    }
                };
            }
            if needed.contains(Objective::Mse) {
                // (1 + h t)^2 / (s^2 h) with h = g - 1 is convex, smallest at h = 1/t.
                let h = (1.0 / t).clamp(af - 1.0, bf - 1.0);
                lb.mse = (1.0 + h * t).powi(2) / (s * s * h);
            }
            if needed.contains(Objective::Epg) {
                // beta (r (1 + (g - 1) t) / s - f_T): increasing in g.
                let r = f64::from(poisoning.targets());
                lb.epg =
                    poisoning.beta() * (r * (1.0 + (af - 1.0) * t) / s - poisoning.target_mass());
            }
            if needed.contains(Objective::Bits) {
                lb.bits = 32.0 + (af.log2() - 1e-9).ceil();
            }
        }
        _ => unreachable!("bounds exist for ASS and ALH only"),
    }
    lb
}
