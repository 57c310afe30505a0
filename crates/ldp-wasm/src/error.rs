//! Errors as JavaScript sees them: an `Error` whose `name` says what kind of mistake it
//! is and whose message names the argument at fault.

use ldp_optimize::RequestError;
use wasm_bindgen::JsValue;

/// The kinds of error this module throws, as the `name` of the JavaScript `Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A parameter out of its range or of the wrong type (k, eps, an option).
    Param,
    /// An item outside the domain, or a report that does not parse or validate.
    Input,
    /// No instance meets the bounds, or tuning failed.
    Tuning,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Param => "ParamError",
            Kind::Input => "InputError",
            Kind::Tuning => "TuningError",
        }
    }
}

/// A JavaScript `Error` of `kind` with `message`.
pub(crate) fn error(kind: Kind, message: impl std::fmt::Display) -> JsValue {
    let e = js_sys::Error::new(&message.to_string());
    e.set_name(kind.name());
    e.into()
}

/// A request error of ldp-optimize, naming the option at fault as this module spells it.
pub(crate) fn request(e: RequestError) -> JsValue {
    match e.knob() {
        Some(knob) => error(Kind::Param, format!("{}: {e}", knob.name())),
        None => error(Kind::Tuning, e),
    }
}
