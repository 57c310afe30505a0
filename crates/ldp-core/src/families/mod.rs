//! The six mechanism families, one module each, with the paper's presets and the formulas
//! for their probabilities (the one place each is written).

pub(crate) mod bits;
pub mod grr;
pub mod local_hash;
pub mod subset;
pub mod summation;
pub mod threshold;
pub mod unary;
