//! The options of one tuning: what shapes the search and the pick, with the paper's
//! defaults. Below the searches ([`crate::bounds`], [`crate::tune`]) and the choice among
//! protocols, which all read them.

use ldp_analytic::variance::BiasSetting;
use ldp_analytic::{LhAsr, Poisoning};
use serde::{Deserialize, Serialize};

use crate::objective::{Scale, Weights};
use crate::space::Search;
use crate::strategy::Strategy;

/// Everything that shapes a tuning, with the paper's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TuneOptions {
    /// Objective weights (default 0.5 / 0.5 on ASR and MSE). The objectives with a
    /// positive weight are the ones every strategy looks at.
    pub weights: Weights,
    /// Grid only, or grid then golden-section refinement.
    pub search: Search,
    /// How to pick the parameter (default: weighted scalarization).
    pub strategy: Strategy,
    /// Raw or min-max normalized objectives.
    pub scale: Scale,
    /// LH ASR form used in the objective (default: the paper's).
    pub lh_asr: LhAsr,
    /// The poisoning attack whose gain is the EPG objective.
    pub poisoning: Poisoning,
    /// Reports of one unchanged value the attacker links: the ASR objective is the exact
    /// ASR after this many collections (`ldp_analytic::longitudinal::asr_after`; LH under an
    /// ideal hash). The default, 1, is the paper's one-shot ASR (LH in the `lh_asr` form).
    /// Above 1 every strategy scans the whole grid, and protocols without an exact form
    /// (ASS beyond omega = 1) fail with [`OptimizeError::NoRepeatedForm`](crate::OptimizeError::NoRepeatedForm).
    #[serde(default = "one")]
    pub collections: u32,
    /// The users and prior behind the bias of the fixed-hash families, added to the MSE
    /// objective ([`BiasSetting::per_user`]); `None` (the default) is the paper's MSE, a
    /// variance per user.
    #[serde(default)]
    pub bias: Option<BiasSetting>,
}

fn one() -> u32 {
    1
}

impl Default for TuneOptions {
    fn default() -> Self {
        Self {
            weights: Weights::default(),
            search: Search::Paper,
            strategy: Strategy::Weighted,
            scale: Scale::Raw,
            lh_asr: LhAsr::Paper,
            poisoning: Poisoning::default(),
            collections: 1,
            bias: None,
        }
    }
}
