//! ldp-experiments' integration tests, one binary (one build and link step where there were
//! six, and the slow measurements run beside each other). Each module was a test binary of
//! its own.

mod change_detection;
mod legibility;
mod longitudinal_attack;
mod longitudinal_mse;
mod map_attack;
mod multidim_poison;
mod reproduce;
mod validation;
