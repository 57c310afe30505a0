//! What a front end asks for (the `ldp` tool's flags, the Python keywords, the browser
//! page's inputs), each setting optional: one place for the defaults, the cross-checks and
//! the messages, so that every front end resolves the same request to the same instance
//! and refuses the same mistakes with the same words. A front end parses its input into a
//! [`TuneRequest`] or an [`InstanceRequest`], calls it, and names the setting at fault
//! ([`RequestError::knob`]) in its own spelling.
//!
//! - `settings`: the one table of the settings: [`TuneRequest`]'s fields, their
//!   [`Knob`]s and names, whether each was given, their text and serde forms;
//! - `tuning`: what a request does with them (checks, then tuning, choosing or a
//!   frontier);
//! - `instance`: one instance, given, preset or tuned ([`InstanceRequest`]);
//! - `error`: the refusals, each naming the setting at fault ([`RequestError`]).

mod error;
mod instance;
mod settings;
mod tuning;

pub use error::RequestError;
pub use instance::{Instance, InstanceRequest};
pub use settings::{Knob, SettingGroup, SettingSyntax, SettingValue, TuneRequest};
