//! # ldp-wasm
//!
//! The ldp toolkit in the browser: the client of every protocol family ([`Client`]: the
//! raw value never leaves the device, randomness from `crypto.getRandomValues`), and the
//! closed forms and the protocol choice ([`analyze`], [`choose`], [`tune`],
//! [`frontier`]), the shuffle accountant ([`shuffle`], [`max_local_eps`]) and the
//! measurement on real reports (with the `measure` feature: `measure` and `measure_linked` on a `Population`,
//! and `measure_several` on a table of several attributes, as `ldp simulate`), as the
//! `ldp` tool gives them. It calls `ldp-core`, `ldp-analytic`, `ldp-optimize` and
//! `ldp-attack` and adds no algorithm of its own.
//!
//! Build it for the web with `cargo xtask web` (the wasm32 target and `wasm-bindgen-cli`
//! at the version in this crate's `Cargo.lock`); `web/` is the protocol chooser page
//! built on it.
//!
//! ```js
//! import init, { Client, choose } from "./pkg/ldp_wasm.js";
//! await init();
//! const pick = choose(100, 1.0, { asr_max: 0.1 });  // as `ldp tune --protocol all`
//! const client = Client.fromSpec(JSON.stringify(pick.spec));
//! const report = client.perturb(42);               // send this to the server
//! ```
//!
//! Results are plain JavaScript objects with the CLI's column names; errors are
//! JavaScript `Error`s named `ParamError` (a bad argument or option, named in the
//! message), `InputError` (an item outside the domain, a malformed report) or
//! `TuningError` (no instance meets the bounds).

mod analysis;
mod args;
mod client;
mod error;
#[cfg(feature = "measure")]
mod measure;
#[cfg(feature = "measure")]
mod several;
mod shuffle;

pub use analysis::{analyze, choose, frontier, tune};
pub use client::Client;
#[cfg(feature = "measure")]
pub use measure::{Population, measure, measure_linked};
#[cfg(feature = "measure")]
pub use several::{SeveralColumns, measure_several};
pub use shuffle::{max_local_eps, shuffle};

use wasm_bindgen::JsValue;

/// A value as a JavaScript object, through its JSON text (exact for every double).
fn to_js<T: serde::Serialize>(value: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(value).expect("results serialize");
    js_sys::JSON::parse(&text)
}

/// The crate's version, for a page to show what it runs.
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
