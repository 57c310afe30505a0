//! What an exact privacy audit needs from a family: the outputs at which to evaluate the
//! likelihood ratio, and why they are enough ([`Coverage`]). Each family states them
//! beside its attack surface ([`AttackSurface::exact_outputs`]); `ldp-audit`'s exact
//! audit evaluates them for any mechanism of the registry.
//!
//! [`AttackSurface::exact_outputs`]: crate::AttackSurface::exact_outputs

use crate::vocab::DomainSize;

/// How the outputs of an exact audit were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "kebab-case")
)]
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

/// The outputs an exact audit evaluates, and how they cover the output space.
#[derive(Debug, Clone)]
pub struct ExactOutputs<I> {
    /// The outputs, each a valid report of the mechanism.
    pub outputs: I,
    /// Why they are enough.
    pub coverage: Coverage,
}

/// An exact audit that would evaluate more likelihoods (outputs times k) than allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "an exact audit of {outputs} outputs at k = {k} needs more than {limit} likelihood evaluations"
)]
pub struct TooManyOutputs {
    /// The outputs to evaluate (`u64::MAX` when they do not fit in 64 bits).
    pub outputs: u64,
    /// The domain size: each output is evaluated at every input.
    pub k: u32,
    /// The most likelihood evaluations allowed.
    pub limit: u64,
}

impl TooManyOutputs {
    /// Refuses `outputs` outputs over the domain `k` when they take more than `limit`
    /// likelihood evaluations.
    pub fn check(outputs: u64, k: DomainSize, limit: u64) -> Result<(), TooManyOutputs> {
        let k = k.get();
        if outputs.saturating_mul(u64::from(k)) > limit {
            Err(TooManyOutputs { outputs, k, limit })
        } else {
            Ok(())
        }
    }
}

/// The sets of items of `size` that hold items 0 and 1 in each of the four ways (neither,
/// 0 only, 1 only, both), filled with the items `2, 3, ...`: the outputs a family that
/// treats items alike needs ([`Coverage::Symmetry`]). A way that cannot reach `size`
/// items within `0..k` is left out.
pub(crate) fn symmetry_patterns(k: DomainSize, size: u32) -> Vec<Vec<u32>> {
    let k = k.get();
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_set_items_0_and_1_every_way() {
        let k = DomainSize::new(4).unwrap();
        assert_eq!(
            symmetry_patterns(k, 2),
            vec![vec![2, 3], vec![0, 2], vec![1, 2], vec![0, 1]]
        );
        // Neither item 0 nor 1 leaves only k - 2 = 2 items to fill 3.
        assert_eq!(
            symmetry_patterns(k, 3),
            vec![vec![0, 2, 3], vec![1, 2, 3], vec![0, 1, 2]]
        );
        assert_eq!(symmetry_patterns(k, 0), vec![Vec::<u32>::new()]);
    }

    #[test]
    fn the_budget_counts_outputs_times_k() {
        let k = DomainSize::new(8).unwrap();
        assert!(TooManyOutputs::check(4, k, 32).is_ok());
        let err = TooManyOutputs::check(5, k, 32).unwrap_err();
        assert_eq!(
            err,
            TooManyOutputs {
                outputs: 5,
                k: 8,
                limit: 32
            }
        );
        assert!(TooManyOutputs::check(u64::MAX, k, u64::MAX - 1).is_err());
    }
}
