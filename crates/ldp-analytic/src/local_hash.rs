//! Local hashing (BLH, OLH, ALH): p* and q*, MSE, ASR (the paper's and the exact form),
//! EPG, costs and repeated collection, side by side.

use ldp_core::{DomainSize, Epsilon, LocalHashing, families};

use crate::asr::LhAsr;
use crate::bounds::{LowerBounds, Wanted};
use crate::cost::{Encoding, index_bits};
use crate::epg::Poisoning;
use crate::family::ClosedForms;
use crate::pure::{one_minus_t, t};
use crate::support::SupportLaw;

/// LH's `(p*, q*)`: the report keeps the item's hash w.p. p*, and under an ideal hash
/// any other item shares the reported value w.p. 1/g.
///
/// # Formula
///
/// ```text
/// p* = e^eps / (e^eps + g - 1)
/// q* = 1 / g
/// ```
///
/// Paper Section "lh_protocols".
pub fn probabilities(eps: Epsilon, g: u32) -> (f64, f64) {
    families::local_hash::probabilities(eps, g)
}

/// LH's approximate variance per user (n = 1): the paper's MSE.
///
/// # Formula
///
/// ```text
/// Var = (e^eps - 1 + g)^2 / ((e^eps - 1)^2 (g - 1))
/// ```
///
/// Paper Eq. "var_lh".
pub fn variance(eps: Epsilon, g: u32) -> f64 {
    let (t, g) = (t(eps), f64::from(g));
    (1.0 + (g - 1.0) * t).powi(2) / (one_minus_t(eps).powi(2) * (g - 1.0))
}

/// The paper's expected ASR of LH: a uniform guess among the items hashing to the
/// reported value, taken to be `max(k/g, 1)` of them.
///
/// # Formula
///
/// ```text
/// ASR = e^eps / ((e^eps + g - 1) max(k/g, 1))
/// ```
///
/// Paper Eq. "exp_asr_lh".
///
/// # Erratum
/// This treats the support as exactly `max(k/g, 1)` items and ignores that the true item
/// may be missing from it. It overestimates the real attack, e.g. 0.279 against 0.234
/// (exact, and measured) for OLH at k = 100, eps = 4. See [`asr_exact`].
pub fn asr_paper(k: DomainSize, eps: Epsilon, g: u32) -> f64 {
    let g_f = f64::from(g);
    probabilities(eps, g).0 / (k.as_f64() / g_f).max(1.0)
}

/// The exact expected ASR of LH with an ideal (uniform, independent) hash.
///
/// # Formula
///
/// ```text
/// ASR = p g (1 - (1 - 1/g)^k) / k + (1 - p) (1 - 1/g)^(k-1) / k,   p = p*
/// ```
///
/// The UE form of paper Eq. "exp_asr_ue_closed" with `q = 1/g` (the paper gives only
/// Eq. "exp_asr_lh"). When the hash value is kept (probability p) the support is the true item plus
/// Bin(k-1, 1/g) colliding items; otherwise the true item is not in the support, and the
/// attack succeeds only by the uniform guess when the support is empty.
pub fn asr_exact(k: DomainSize, eps: Epsilon, g: u32) -> f64 {
    let (p, _) = probabilities(eps, g);
    let (k, g) = (k.as_f64(), f64::from(g));
    let ln_miss = (-1.0 / g).ln_1p();
    let kept = p * g * -(k * ln_miss).exp_m1() / k;
    let lost = (1.0 - p) * ((k - 1.0) * ln_miss).exp() / k;
    kept + lost
}

/// Under an ideal hash every other item collides with a report independently, with
/// probability `q* = 1/g`.
fn law(eps: Epsilon, g: u32) -> SupportLaw {
    let (p, q) = probabilities(eps, g);
    SupportLaw::Independent { p, q }
}

impl ClosedForms for LocalHashing {
    fn variance(_: DomainSize, eps: Epsilon, g: u32) -> f64 {
        variance(eps, g)
    }

    fn asr(k: DomainSize, eps: Epsilon, g: u32, lh: LhAsr) -> f64 {
        match lh {
            LhAsr::Paper => asr_paper(k, eps, g),
            LhAsr::Exact => asr_exact(k, eps, g),
        }
    }

    /// A seed under which every target hashes to one value.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = r (1 - q*) / (p* - q*) = r (1 + (g - 1) t) / (1 - t),   t = e^-eps
    /// ```
    ///
    /// Paper Eq. "epg_pq" without its `beta` and `f_T`.
    fn fake_report_gain(_: DomainSize, eps: Epsilon, g: u32, targets: u32) -> Option<f64> {
        let r = f64::from(targets);
        Some(r * (1.0 + (f64::from(g) - 1.0) * t(eps)) / one_minus_t(eps))
    }

    /// The 32-bit seed and the value in `0..g`.
    ///
    /// # Formula
    ///
    /// ```text
    /// bits = 32 + ceil(log2 g)
    /// ```
    fn encodings(k: DomainSize, eps: Epsilon, g: u32) -> Vec<(Encoding, f64)> {
        vec![(Encoding::SeedAndValue, Self::bits(k, eps, g))]
    }

    fn bits(_: DomainSize, _: Epsilon, g: u32) -> f64 {
        32.0 + index_bits(f64::from(g))
    }

    /// k hashes, then one increment per supported item.
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = k + p* + (k - 1) / g
    /// ```
    fn server_ops(k: DomainSize, eps: Epsilon, g: u32) -> f64 {
        let k = k.as_f64();
        let (p, _) = probabilities(eps, g);
        k + p + (k - 1.0) / f64::from(g)
    }

    /// The seed, a coin, and another value when the coin says not to keep the hash.
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 2 + (1 - p*) = 3 - p*
    /// ```
    fn client_draws(_: DomainSize, eps: Epsilon, g: u32) -> f64 {
        3.0 - probabilities(eps, g).0
    }

    /// Under an ideal hash: independent counts, q* = 1/g.
    fn asr_after(k: DomainSize, eps: Epsilon, g: u32, t: u32) -> Option<f64> {
        law(eps, g).asr_after(k, t)
    }

    fn pairwise_support(k: DomainSize, eps: Epsilon, g: u32) -> Option<(f64, f64)> {
        Some(law(eps, g).pairwise(k))
    }

    /// Under an ideal hash each of the g values' buckets holds every item independently
    /// with probability 1/g.
    fn map_asr(_: DomainSize, eps: Epsilon, g: u32, sorted_prior: &[f64]) -> Option<f64> {
        Some(law(eps, g).map_asr(sorted_prior))
    }

    /// All four objectives over g in `[a, b]`.
    fn lower_bounds(
        k: DomainSize,
        eps: Epsilon,
        a: u32,
        b: u32,
        wanted: Wanted,
        lh: LhAsr,
        poisoning: &Poisoning,
    ) -> LowerBounds {
        let (t, s) = (t(eps), one_minus_t(eps));
        let kf = k.as_f64();
        let (af, bf) = (f64::from(a), f64::from(b));
        // p(g) = 1 / (1 + (g - 1) t), decreasing in g.
        let p = |g: f64| 1.0 / (1.0 + (g - 1.0) * t);
        let asr = || match lh {
            // p / max(k/g, 1): increasing up to g = k, decreasing after, so smallest at an
            // end.
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
        // (1 + h t)^2 / (s^2 h) with h = g - 1 is convex, smallest at h = 1/t.
        let mse = || {
            let h = (1.0 / t).clamp(af - 1.0, bf - 1.0);
            (1.0 + h * t).powi(2) / (s * s * h)
        };
        // beta (r (1 + (g - 1) t) / s - f_T): increasing in g.
        let epg = || {
            let r = f64::from(poisoning.targets());
            poisoning.beta() * (r * (1.0 + (af - 1.0) * t) / s - poisoning.target_mass())
        };
        LowerBounds {
            asr: wanted.asr.then(asr),
            mse: wanted.mse.then(mse),
            epg: wanted.epg.then(epg),
            bits: wanted.bits.then(|| 32.0 + (af.log2() - 1e-9).ceil()),
        }
    }
}
