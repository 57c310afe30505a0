//! The four ways of collecting several attributes, and the budget each report spends.

use std::fmt;
use std::str::FromStr;

use crate::error::ParamError;
use crate::vocab::Epsilon;

/// How a user with `d` attributes spends the budget `eps` on them.
///
/// | solution | what a user sends | each report's budget |
/// |---|---|---|
/// | SPL | a report of every attribute | `eps / d` |
/// | SMP | a report of one attribute sampled uniformly, naming it | `eps` |
/// | RS+FD | a report of a sampled attribute, a fake of every other, not naming it | `eps'` |
/// | RS+FD-z | as RS+FD, the fakes reports of no item (UE-z, THE) | `eps'` |
/// | RS+RFD | as RS+FD, the fakes of an item drawn from a published prior | `eps'` |
///
/// with `eps' = ln(d (e^eps - 1) + 1)` (Arcolezi et al., CIKM 2021): the anchors' budget
/// at which one attribute's report, hidden among `d - 1` fakes, changes by at most
/// `e^eps` when the user's value of that one attribute changes. It holds exactly for
/// UE-z and for GRR over equal domains only, and the report of a user whose every
/// attribute changes changes by up to `e^eps'` (see [`crate::multidim`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum Solution {
    /// Every attribute reported, each at `eps / d`.
    Spl,
    /// One attribute sampled uniformly and reported at `eps`, with its index.
    Smp,
    /// One attribute sampled and reported at `eps'`, every other one a report of a
    /// uniform item.
    #[cfg_attr(feature = "serde", serde(rename = "rsfd"))]
    RsFd,
    /// As [`Solution::RsFd`], with every fake the report of no item
    /// ([`crate::Mechanism::NULL_INPUT`]): UE-z.
    #[cfg_attr(feature = "serde", serde(rename = "rsfd-z"))]
    RsFdNull,
    /// As [`Solution::RsFd`], with every fake the report of an item drawn from a prior the
    /// server publishes ([`crate::multidim::Priors`]).
    #[cfg_attr(feature = "serde", serde(rename = "rsrfd"))]
    RsRfd,
}

impl Solution {
    /// Every solution, in the order of the table above.
    pub const ALL: [Solution; 5] = [
        Solution::Spl,
        Solution::Smp,
        Solution::RsFd,
        Solution::RsFdNull,
        Solution::RsRfd,
    ];

    /// The name front ends use: `spl`, `smp`, `rsfd`, `rsfd-z`, `rsrfd`.
    pub fn name(self) -> &'static str {
        match self {
            Solution::Spl => "spl",
            Solution::Smp => "smp",
            Solution::RsFd => "rsfd",
            Solution::RsFdNull => "rsfd-z",
            Solution::RsRfd => "rsrfd",
        }
    }

    /// The label figures and tables use.
    pub fn label(self) -> &'static str {
        match self {
            Solution::Spl => "SPL",
            Solution::Smp => "SMP",
            Solution::RsFd => "RS+FD",
            Solution::RsFdNull => "RS+FD-z",
            Solution::RsRfd => "RS+RFD",
        }
    }

    /// Whether a user sends a report of one attribute only, naming it (SMP).
    pub fn names_its_attribute(self) -> bool {
        self == Solution::Smp
    }

    /// Whether the reports of the attributes not sampled are fakes (the RS+ solutions).
    pub fn fakes(self) -> bool {
        matches!(self, Solution::RsFd | Solution::RsFdNull | Solution::RsRfd)
    }

    /// The budget each report spends, for a user's total `eps` over `d` attributes.
    ///
    /// # Formula
    ///
    /// ```text
    /// SPL: eps / d        SMP: eps        RS+: eps' = ln(d (e^eps - 1) + 1)
    /// ```
    ///
    /// `eps'` is written `ln(1 + d expm1(eps))` below 1 and
    /// `eps + ln(d - (d - 1) e^-eps)` above, so that neither a small `eps` nor one past
    /// 709 (where `e^eps` overflows) loses it.
    ///
    /// ```
    /// use ldp_core::multidim::Solution;
    /// use ldp_core::Epsilon;
    /// let eps = Epsilon::new(1.0)?;
    /// assert_eq!(Solution::Spl.report_epsilon(eps, 4)?.get(), 0.25);
    /// let amplified = Solution::RsFd.report_epsilon(eps, 4)?.get();
    /// assert!((amplified - (4.0 * (1f64.exp() - 1.0) + 1.0).ln()).abs() < 1e-12);
    /// # Ok::<(), ldp_core::ParamError>(())
    /// ```
    pub fn report_epsilon(self, eps: Epsilon, d: usize) -> Result<Epsilon, ParamError> {
        let (e, d) = (eps.get(), d as f64);
        let value = match self {
            Solution::Spl => e / d,
            Solution::Smp => e,
            Solution::RsFd | Solution::RsFdNull | Solution::RsRfd => amplified(e, d),
        };
        Epsilon::new(value)
    }
}

/// `ln(d (e^eps - 1) + 1)`, without overflow or cancellation.
pub(crate) fn amplified(eps: f64, d: f64) -> f64 {
    if eps < 1.0 {
        (d * eps.exp_m1()).ln_1p()
    } else {
        eps + (d - (d - 1.0) * (-eps).exp()).ln()
    }
}

impl fmt::Display for Solution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`Solution`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown solution `{0}`: expected one of spl, smp, rsfd, rsfd-z, rsrfd")]
pub struct UnknownSolution(pub String);

impl FromStr for Solution {
    type Err = UnknownSolution;

    fn from_str(s: &str) -> Result<Self, UnknownSolution> {
        let wanted = s.trim().to_ascii_lowercase().replace(['+', '_'], "");
        Solution::ALL
            .into_iter()
            .find(|solution| solution.name().replace('-', "") == wanted.replace('-', ""))
            .ok_or_else(|| UnknownSolution(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_the_papers_spellings_are_accepted() {
        for solution in Solution::ALL {
            assert_eq!(solution.name().parse::<Solution>(), Ok(solution));
            assert_eq!(solution.label().parse::<Solution>(), Ok(solution));
        }
        assert_eq!("RS+FD".parse::<Solution>(), Ok(Solution::RsFd));
        assert!("rs".parse::<Solution>().is_err());
    }

    #[test]
    fn the_amplified_budget_is_the_formula_at_every_scale() {
        for &(eps, d) in &[(0.5, 3.0), (1.0, 10.0), (5.0, 18.0), (30.0, 4.0)] {
            let direct = (d * (f64::exp(eps) - 1.0) + 1.0_f64).ln();
            assert!(
                (amplified(eps, d) - direct).abs() <= 1e-12 * direct,
                "{eps} {d}"
            );
        }
        // Near zero: ln(1 + d (eps + eps^2 / 2)) = d eps + (d - d^2) eps^2 / 2 + O(eps^3).
        let (eps, d) = (1e-6, 3.0);
        let series = d * eps + (d - d * d) * eps * eps / 2.0;
        assert!(
            (amplified(eps, d) - series).abs() < 1e-17,
            "{}",
            amplified(eps, d)
        );
        // Past e^eps's overflow the formula is eps + ln d.
        assert!((amplified(800.0, 5.0) - (800.0 + 5f64.ln())).abs() < 1e-9);
        // One attribute: nothing to hide among.
        assert!((amplified(2.0, 1.0) - 2.0).abs() < 1e-15);
    }
}
