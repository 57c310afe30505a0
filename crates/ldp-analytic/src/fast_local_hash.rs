//! Fast local hashing (`ldp_core::families::fast_local_hash`): local hashing over k'
//! public seeds. Its closed forms are local hashing's for an ideal hash (the seeds are a
//! sample of the hash family), except the report size and the server's work.

use ldp_core::families::fast_local_hash::{FastLocalHashing, bias};
use ldp_core::{DomainSize, Epsilon};

use crate::asr::LhAsr;
use crate::cost::{Encoding, index_bits};
use crate::family::ClosedForms;
use crate::local_hash;

impl ClosedForms for FastLocalHashing {
    /// LH's variance at g: the variance over the choice of the seeds.
    ///
    /// # Formula
    ///
    /// ```text
    /// Var = (e^eps - 1 + g)^2 / ((e^eps - 1)^2 (g - 1))
    /// ```
    ///
    /// Paper Eq. "var_lh". Fixed seeds add a collision bias of spread about `1 / sqrt(k' g)` relative to the signal
    /// (`ldp_core::families::fast_local_hash`), which this does not count.
    fn variance(_: DomainSize, eps: Epsilon, (g, _): (u32, u32)) -> f64 {
        local_hash::variance(eps, g)
    }

    /// LH's exact MSE plus the mean squared bias of the items' estimates from the public
    /// seeds.
    ///
    /// # Formula
    ///
    /// ```text
    /// MSE = MSE_LH(n, f) + (1/k) sum_x bias_x^2
    /// ```
    ///
    /// with `MSE_LH` paper Eq. "mse_var" over Eq. "var" and `bias_x` from
    /// `ldp_core::families::fast_local_hash::bias` (O(k' k) hashes): the bias is what k' fixed seeds add, and at n in the tens of thousands it is not small
    /// (k' = 1000, g = 8: about a fifth of the variance on Adult Age).
    fn expected_mse(k: DomainSize, eps: Epsilon, (g, seeds): (u32, u32), n: f64, f: &[f64]) -> f64 {
        let ideal = <ldp_core::LocalHashing as ClosedForms>::expected_mse(k, eps, g, n, f);
        let b = bias(g, seeds, f);
        ideal + b.iter().map(|b| b * b).sum::<f64>() / b.len() as f64
    }

    /// The fixed seeds' mean squared bias in expectation over an ideal hash
    /// ([`crate::variance::collision_squared_bias`] with range g over k' seeds).
    fn expected_squared_bias(k: DomainSize, _: Epsilon, (g, seeds): (u32, u32), mass: f64) -> f64 {
        crate::variance::collision_squared_bias(k, g, seeds, mass)
    }

    /// LH's, the paper's or the exact form for an ideal hash.
    ///
    /// # Formula
    ///
    /// ```text
    /// paper: ASR = e^eps / ((e^eps + g - 1) max(k/g, 1))
    /// exact: ASR = p g (1 - (1 - 1/g)^k) / k + (1 - p) (1 - 1/g)^(k-1) / k
    /// ```
    ///
    /// Paper Eq. "exp_asr_lh", and [`local_hash::asr_exact`].
    fn asr(k: DomainSize, eps: Epsilon, (g, _): (u32, u32), lh: LhAsr) -> f64 {
        match lh {
            LhAsr::Paper => local_hash::asr_paper(k, eps, g),
            LhAsr::Exact => local_hash::asr_exact(k, eps, g),
        }
    }

    /// A seed under which every target hashes to one value, as LH's.
    ///
    /// # Formula
    ///
    /// ```text
    /// gain = r (1 + (g - 1) t) / (1 - t),   t = e^-eps
    /// ```
    ///
    /// Paper Eq. "epg_pq" without its `beta` and `f_T`: for targets that some public seed
    /// hashes together (`epg::expected_with_support` at what `plan_max_gain` finds
    /// otherwise).
    fn fake_report_gain(
        k: DomainSize,
        eps: Epsilon,
        (g, _): (u32, u32),
        targets: u32,
    ) -> Option<f64> {
        <ldp_core::LocalHashing as ClosedForms>::fake_report_gain(k, eps, g, targets)
    }

    /// The seed's index in `0..k'` and the value in `0..g`.
    ///
    /// # Formula
    ///
    /// ```text
    /// bits = ceil(log2 k') + ceil(log2 g)
    /// ```
    fn encodings(k: DomainSize, eps: Epsilon, param: (u32, u32)) -> Vec<(Encoding, f64)> {
        vec![(Encoding::IndexAndValue, Self::bits(k, eps, param))]
    }

    fn bits(_: DomainSize, _: Epsilon, (g, seeds): (u32, u32)) -> f64 {
        index_bits(f64::from(seeds)) + index_bits(f64::from(g))
    }

    /// One counter increment (the k' hashes of the domain run once per estimate).
    ///
    /// # Formula
    ///
    /// ```text
    /// ops = 1
    /// ```
    fn server_ops(_: DomainSize, _: Epsilon, _: (u32, u32)) -> f64 {
        1.0
    }

    /// The seed, a coin, and another value when the coin says not to keep the hash.
    ///
    /// # Formula
    ///
    /// ```text
    /// draws = 3 - p*,   p* = e^eps / (e^eps + g - 1)
    /// ```
    fn client_draws(_: DomainSize, eps: Epsilon, (g, _): (u32, u32)) -> f64 {
        3.0 - local_hash::probabilities(eps, g).0
    }

    /// No exact form implemented: linked reports can repeat a public seed.
    fn asr_after(_: DomainSize, _: Epsilon, _: (u32, u32), _: u32) -> Option<f64> {
        None
    }

    fn pairwise_support(_: DomainSize, _: Epsilon, _: (u32, u32)) -> Option<(f64, f64)> {
        None
    }

    fn map_asr(_: DomainSize, _: Epsilon, _: (u32, u32), _: &[f64]) -> Option<f64> {
        None
    }
}
