//! The six mechanism families, one module each.

pub(crate) mod bits;
pub mod grr;
pub mod histogram;
pub mod local_hash;
pub mod subset;
pub mod unary;
