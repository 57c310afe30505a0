//! Attacks on several attributes per user ([`ldp_core::multidim`]), measured on real
//! reports:
//!
//! - joint reconstruction ([`joint`]): every attribute of a user from one report, the
//!   paper's Example 1;
//! - attribute inference ([`inference`]): which attribute an RS+FD or RS+RFD user truly
//!   sampled, by the Bayes-optimal attacker;
//! - re-identification ([`mod@reidentify`]): profiles joined across SMP surveys, matched
//!   against background knowledge ([`matching`]);
//! - a whole table collected, run after run ([`table`]): every attribute's error and
//!   reconstruction rate, the joint one and attribute inference;
//! - poisoning ([`poison`]): the maximal gain attack's gain on each attribute, fake users
//!   crafting every report they send (SMP: naming the attribute they attack).

pub mod inference;
pub mod joint;
pub mod matching;
pub mod poison;
pub mod reidentify;
pub mod table;

pub use inference::{AttributeInference, InferenceError};
pub use joint::{JointReconstruction, guess_all, measure_joint};
pub use matching::{MatchError, MatchIndex, Matcher, Rank};
pub use poison::{
    MultidimPoisoning, PoisonMeasureError, PoisoningMeasurement, SmpFakes, measure_poisoning,
};
pub use reidentify::{
    Reidentification, ReidentifyError, Repetition, Scoring, SurveyPlan, reidentify,
};
pub use table::{TableMeasureError, TableMeasurement, measure_table};
