//! Poisoning attacks (Cao, Jia and Gong 2021): fake users inject crafted reports to raise
//! the estimated frequency of target items.

use serde::{Deserialize, Serialize};

/// Which fake reports the attacker sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoisonKind {
    /// Maximal gain attack: the report that supports as many targets as possible.
    Mga,
    /// Random item attack: a uniformly chosen target, perturbed honestly.
    Ria,
    /// Random output attack: a uniformly random report.
    Roa,
}

impl PoisonKind {
    /// Short name: mga, ria, roa.
    pub fn name(self) -> &'static str {
        match self {
            PoisonKind::Mga => "mga",
            PoisonKind::Ria => "ria",
            PoisonKind::Roa => "roa",
        }
    }
}

/// A poisoning attack to simulate alongside the genuine users.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoisonConfig {
    /// The attack.
    pub kind: PoisonKind,
    /// Fraction of fake reports among all reports, in `[0, 1)`.
    pub beta: f64,
    /// Target items: non-empty, distinct, in `0..k`.
    pub targets: Vec<u32>,
    /// The SHE server's clipping bound. `None`: `1 + 20 b` with `b = 2/eps`, at which the
    /// clipping bias on genuine reports is below `b e^-20`.
    pub she_clip: Option<f64>,
}
