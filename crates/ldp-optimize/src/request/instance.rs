//! One protocol instance as a front end asks for it, resolved.

use ldp_core::{DomainSize, Epsilon, Protocol, Spec};

use super::{RequestError, TuneRequest};
use crate::param_values::{ParamValues, Short};
use crate::strategy::Strategy;
use crate::tune::Tuned;

/// One protocol instance as a front end asks for it: a protocol at (k, eps), with its
/// parameter given, or its preset, or tuned.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceRequest {
    /// The protocol.
    pub protocol: Protocol,
    /// The domain size.
    pub k: DomainSize,
    /// The budget.
    pub eps: Epsilon,
    /// The family parameters, instead of the preset (classic) or tuning (adaptive).
    pub param: Option<ParamValues>,
    /// How an adaptive protocol without `param` is tuned; refused for any other instance.
    pub tuning: TuneRequest,
}

/// A resolved instance, and how it was tuned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Instance {
    /// The protocol.
    pub protocol: Protocol,
    /// The instance.
    pub spec: Spec,
    /// The tuning that chose the parameter, for an adaptive protocol without one given.
    pub tuned: Option<Tuned>,
}

impl Instance {
    /// The parameter shown beside the instance: its family's parameter, none for a family
    /// without one (GRR, SHE).
    pub fn shown_param(&self) -> Option<f64> {
        self.spec.params().value()
    }

    /// One line on how an adaptive protocol was tuned:
    /// `aue tuned at k = 100, eps = 4: p = 0.818 (weighted, w_asr = 0.5)`.
    pub fn tuning_note(&self) -> Option<String> {
        let t = self.tuned.as_ref()?;
        let (k, eps) = (self.spec.k(), self.spec.eps());
        let mut note = format!(
            "{} tuned at k = {k}, eps = {eps}: {} = {} ({}",
            self.protocol.name(),
            self.protocol.parameter_name().unwrap_or("-"),
            Short(t.param()),
            t.strategy.name(),
        );
        if let Strategy::EpsConstraint(b) = t.strategy {
            for (o, v) in b.iter() {
                note += &format!(", {} <= {}", o.name(), Short(v));
            }
        } else {
            note += &format!(", w_asr = {}", Short(t.weights.asr()));
        }
        note += ")";
        if t.fell_back {
            note += "; no parameter meets the bound, the utopia point was chosen instead";
        }
        Some(note)
    }
}

impl InstanceRequest {
    /// The instance: `param` if given, else the preset (classic) or the tuned parameter
    /// (adaptive). Tuning settings for an instance that is not tuned are refused.
    ///
    /// ```
    /// use ldp_core::{DomainSize, Epsilon, Protocol};
    /// use ldp_optimize::{InstanceRequest, Knob, TuneRequest};
    /// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(4.0)?);
    /// let aue = InstanceRequest { protocol: Protocol::Aue, k, eps, param: None, tuning: TuneRequest::default() };
    /// let i = aue.resolve()?;
    /// assert!((i.shown_param().unwrap() - 0.818).abs() < 1e-3);
    /// assert!(i.tuning_note().unwrap().starts_with("aue tuned at k = 100, eps = 4: p = 0.818"));
    /// let oue = InstanceRequest { protocol: Protocol::Oue, param: Some(0.6.into()), ..aue };
    /// assert_eq!(oue.resolve().unwrap_err().knob(), Some(Knob::Param)); // OUE fixes p
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve(&self) -> Result<Instance, RequestError> {
        let protocol = self.protocol;
        let tuned = protocol.is_adaptive() && self.param.is_none();
        if !tuned && let Some(knob) = self.tuning.given() {
            return Err(RequestError::NotTuned {
                knob,
                protocol: protocol.name(),
            });
        }
        let spec = match &self.param {
            None if tuned => {
                let t = self.tuning.tune(protocol, self.k, self.eps)?;
                return Ok(Instance {
                    protocol,
                    spec: t.spec,
                    tuned: Some(t),
                });
            }
            None => Spec::classic(protocol, self.k, self.eps).expect("a classic protocol"),
            Some(given) => Spec::new(
                self.k,
                self.eps,
                given.family_params(protocol, self.k, self.eps)?,
            )
            .map_err(RequestError::Param)?,
        };
        Ok(Instance {
            protocol,
            spec,
            tuned: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::TuneRequest;

    #[test]
    fn instances_refuse_what_would_do_nothing() {
        let k = DomainSize::new(100).unwrap();
        let eps = Epsilon::new(1.0).unwrap();
        let request = |protocol, param: Option<f64>, tuning| InstanceRequest {
            protocol,
            k,
            eps,
            param: param.map(ParamValues::One),
            tuning,
        };
        let named = |protocol, text: &str| InstanceRequest {
            protocol,
            k,
            eps,
            param: Some(text.parse().unwrap()),
            tuning: TuneRequest::default(),
        };
        let weight = TuneRequest {
            w_asr: Some(0.3),
            ..TuneRequest::default()
        };
        let cases = [
            (
                request(Protocol::Oue, None, weight),
                "oue is not tuned here",
            ),
            (
                request(Protocol::Aue, Some(0.7), weight),
                "aue is not tuned here",
            ),
            (
                request(Protocol::Grr, Some(2.0), TuneRequest::default()),
                "grr has no parameter",
            ),
            (
                request(Protocol::Sue, Some(0.6), TuneRequest::default()),
                "sue fixes p by its definition; for another p use aue",
            ),
            (
                request(Protocol::Olh, Some(7.0), TuneRequest::default()),
                "olh fixes g by its definition; for another g use alh",
            ),
            (
                request(Protocol::Ss, Some(2.5), TuneRequest::default()),
                "omega must be a whole number",
            ),
            (
                request(Protocol::Ss, Some(100.0), TuneRequest::default()),
                "subset size omega must lie in [1, 99]",
            ),
            (
                named(Protocol::Ss, "w=3"),
                "ss has no parameter `w`; its parameters are omega",
            ),
            (
                named(Protocol::Ss, "omega=3,omega=4"),
                "omega is given twice",
            ),
            (
                named(Protocol::Ss, "omega=3.5"),
                "omega must be a whole number",
            ),
            (named(Protocol::Grr, "x=1"), "grr has no parameter"),
            (
                named(Protocol::Hr, "blocks=3"),
                "the number of Hadamard blocks must be a power of two in [1, 128], got 3",
            ),
        ];
        for (r, message) in cases {
            let err = r.resolve().unwrap_err();
            assert!(err.to_string().starts_with(message), "{err}");
            assert!(err.knob().is_some(), "{err}");
        }
        assert!(
            request(Protocol::Oue, None, weight)
                .resolve()
                .unwrap_err()
                .to_string()
                .contains(&format!(
                    "only {} are",
                    super::super::error::adaptive_names()
                ))
        );
        let ss = request(Protocol::Ss, Some(7.0), TuneRequest::default())
            .resolve()
            .unwrap();
        assert_eq!(ss.shown_param(), Some(7.0));
        let by_name = named(Protocol::Ss, "omega=7").resolve().unwrap();
        assert_eq!(by_name.spec, ss.spec);
        assert_eq!(ss.tuning_note(), None);
        let grr = request(Protocol::Grr, None, TuneRequest::default())
            .resolve()
            .unwrap();
        assert_eq!(grr.shown_param(), None);
    }
}
