//! The shuffle accountant, as `ldp shuffle` gives it: the same library calls, the same
//! column names.

use ldp_analytic::shuffle::{MAX_USERS, Shuffle};
use serde_json::json;
use wasm_bindgen::prelude::*;

use crate::args::whole;
use crate::error::{Kind, error};
use crate::to_js;

fn accountant(users: f64, delta: f64) -> Result<Shuffle, JsValue> {
    let users = whole("users", users, MAX_USERS as f64)?;
    Shuffle::new(users as u64, delta).map_err(|e| error(Kind::Param, e))
}

/// `ldp shuffle --users N --delta D --eps0 E`: `{users, delta, eps0, central_eps,
/// central_eps_lower, closed_form}`, the central eps of N shuffled eps0-LDP reports for
/// the analyst of the shuffled batch (`closed_form` is `null` where it does not apply).
///
/// ```js
/// shuffle(1e6, 1e-8, 1.0).central_eps; // about 0.0061
/// ```
#[wasm_bindgen]
pub fn shuffle(users: f64, delta: f64, eps0: f64) -> Result<JsValue, JsValue> {
    let s = accountant(users, delta)?;
    let central = s.central_eps(eps0).map_err(|e| error(Kind::Param, e))?;
    let closed = s.closed_form(eps0).map_err(|e| error(Kind::Param, e))?;
    to_js(&json!({
        "users": s.users(),
        "delta": delta,
        "eps0": eps0,
        "central_eps": central.upper,
        "central_eps_lower": central.lower,
        "closed_form": closed,
    }))
}

/// `ldp shuffle --users N --delta D --central-eps E`: `{users, delta, central_eps,
/// eps0_max, amplification}`, the largest eps0 whose N shuffled reports are (E, D)-DP.
///
/// ```js
/// maxLocalEps(1e6, 1e-8, 1.0).eps0_max; // about 8.99
/// ```
#[wasm_bindgen(js_name = maxLocalEps)]
pub fn max_local_eps(users: f64, delta: f64, central_eps: f64) -> Result<JsValue, JsValue> {
    let s = accountant(users, delta)?;
    let eps0 = s
        .max_local_eps(central_eps)
        .map_err(|e| error(Kind::Param, e))?;
    to_js(&json!({
        "users": s.users(),
        "delta": delta,
        "central_eps": central_eps,
        "eps0_max": eps0,
        "amplification": eps0 / central_eps,
    }))
}
