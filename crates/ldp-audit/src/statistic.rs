//! The events a distinguishing test counts.

use std::fmt;
use std::str::FromStr;

/// Which event of one report a distinguishing test between inputs `v1` and `v2` counts.
///
/// Both are chosen from the report's shape alone, never from the parameters the audited
/// client claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Statistic {
    /// The report supports `v1` and not `v2` (a vector of numbers: coordinate `v1` at
    /// least 1 and coordinate `v2` at most 0). For every pure protocol this event's
    /// likelihood ratio is the mechanism's worst one, so a correct client's bound comes
    /// close to its eps.
    LikelihoodRatio,
    /// LDP-Auditor's event: the reconstruction attacker's guess (uniform among the
    /// supported items, uniform over the domain when there are none; a vector's largest
    /// coordinate) equals `v1`. Its ratio is far below e^eps for SS, UE and LH.
    AttackGuess,
    /// For set reports written as lists: the list names `v1` first and does not hold
    /// `v2`. A client whose lists are sorted or shuffled never shows more than the
    /// likelihood-ratio event; one that writes the true item first (the paper's reference
    /// SS code does) leaks it here, for pairs whose `v1` is not the smallest item (such
    /// as `Pairs::Cycle`). Other shapes count the likelihood-ratio event. External clients
    /// only: this toolkit's reports are canonical, sorted lists.
    FirstListed,
}

impl Statistic {
    /// The statistics of a mechanism audit: ours, then LDP-Auditor's.
    pub const MECHANISM: [Statistic; 2] = [Statistic::LikelihoodRatio, Statistic::AttackGuess];

    /// Every statistic.
    pub const ALL: [Statistic; 3] = [
        Statistic::LikelihoodRatio,
        Statistic::AttackGuess,
        Statistic::FirstListed,
    ];

    /// The name used by the CLI, configs and output: `lr`, `guess` or `first`.
    pub fn name(self) -> &'static str {
        match self {
            Statistic::LikelihoodRatio => "lr",
            Statistic::AttackGuess => "guess",
            Statistic::FirstListed => "first",
        }
    }
}

impl fmt::Display for Statistic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A statistic name that is not `lr`, `guess` or `first`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown statistic {0:?}: expected lr (the likelihood-ratio event), guess (LDP-Auditor's) or first (a set's first-listed item)"
)]
pub struct UnknownStatistic(pub String);

impl FromStr for Statistic {
    type Err = UnknownStatistic;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "lr" | "likelihood-ratio" => Ok(Statistic::LikelihoodRatio),
            "guess" | "attack-guess" => Ok(Statistic::AttackGuess),
            "first" | "first-listed" => Ok(Statistic::FirstListed),
            _ => Err(UnknownStatistic(s.to_string())),
        }
    }
}
