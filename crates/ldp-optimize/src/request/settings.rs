//! The settings of a request, written once: the table at the bottom of this file makes
//! [`TuneRequest`]'s fields, their [`Knob`]s and keyword names, whether each was given,
//! their text and their serde form. A front end reads its flags, keywords or option
//! object through these, and names what it refuses by [`Knob::name`].

use std::fmt;
use std::str::FromStr;

use ldp_analytic::LhAsr;
use serde::de::{self, Deserializer, MapAccess};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::param_values::Short;
use crate::space::Search;
use crate::strategy::Strategy;

/// What a setting is about. Each operation of a request takes some groups and refuses
/// the others by name ([`TuneRequest::first_given`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SettingGroup {
    /// The weights of the objectives.
    Weights,
    /// How the space is searched and the point picked: the search mode and the strategy.
    Method,
    /// The bounds of the eps-constraint strategy.
    Bounds,
    /// The linked reports behind the ASR objective.
    Collections,
    /// The form of local hashing's ASR.
    LhAsr,
    /// The maximal gain attack behind EPG.
    Poisoning,
    /// The change detector's bound on fresh daily reports (`precision_max` at
    /// `change_rate`): where a protocol is tuned or chosen at a domain size.
    Change,
    /// The users and prior behind the bias of the fixed-hash protocols (FLH and the
    /// sketches) in the MSE.
    Bias,
}

impl SettingGroup {
    /// Every group, in the order of the settings' table.
    pub const ALL: [SettingGroup; 8] = [
        SettingGroup::Weights,
        SettingGroup::Method,
        SettingGroup::Bounds,
        SettingGroup::Collections,
        SettingGroup::LhAsr,
        SettingGroup::Poisoning,
        SettingGroup::Change,
        SettingGroup::Bias,
    ];

    /// The groups that mean something only where a protocol is tuned or chosen.
    pub const TUNING: [SettingGroup; 4] = [
        SettingGroup::Weights,
        SettingGroup::Method,
        SettingGroup::Bounds,
        SettingGroup::Collections,
    ];
}

/// A setting's value as a front end shows it beside the setting's name: a number in its
/// short form (`1e-9`, `0.25`), a count, or a name (`refined`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SettingValue {
    /// A real number.
    Number(f64),
    /// A whole number.
    Count(u32),
    /// A named choice.
    Name(&'static str),
}

impl fmt::Display for SettingValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingValue::Number(v) => Short(*v).fmt(f),
            SettingValue::Count(n) => n.fmt(f),
            SettingValue::Name(name) => f.write_str(name),
        }
    }
}

/// A setting's text that does not parse, as a command line gives it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{knob}: {message}", knob = .knob.name())]
pub struct SettingSyntax {
    /// The setting.
    pub knob: Knob,
    /// What is wrong with the text.
    pub message: String,
}

/// The type of a setting's value: how it is written as text and as data (numbers as
/// numbers, a named choice by its name), and shown.
trait Setting: Sized + Copy {
    /// The names a named choice takes; `None` for a number.
    fn choices() -> Option<Vec<&'static str>> {
        None
    }
    fn parse(text: &str) -> Result<Self, String>;
    fn shown(self) -> SettingValue;
    fn write<S: Serializer>(self, s: S) -> Result<S::Ok, S::Error>;
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

impl Setting for f64 {
    fn parse(text: &str) -> Result<Self, String> {
        text.trim().parse().map_err(|e| format!("{e}"))
    }
    fn shown(self) -> SettingValue {
        SettingValue::Number(self)
    }
    fn write<S: Serializer>(self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self)
    }
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        f64::deserialize(d)
    }
}

impl Setting for u32 {
    fn parse(text: &str) -> Result<Self, String> {
        text.trim().parse().map_err(|e| format!("{e}"))
    }
    fn shown(self) -> SettingValue {
        SettingValue::Count(self)
    }
    fn write<S: Serializer>(self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self)
    }
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        u32::deserialize(d)
    }
}

/// A named choice: parsed by its `FromStr`, written by its name.
macro_rules! named_setting {
    ($($ty:ty: $all:expr;)+) => {$(
        impl Setting for $ty {
            fn choices() -> Option<Vec<&'static str>> {
                Some($all.iter().map(|v| v.name()).collect())
            }
            fn parse(text: &str) -> Result<Self, String> {
                text.parse().map_err(|e: ldp_core::UnknownName| e.to_string())
            }
            fn shown(self) -> SettingValue {
                SettingValue::Name(self.name())
            }
            fn write<S: Serializer>(self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
            fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = std::borrow::Cow::<str>::deserialize(d)?;
                <$ty as FromStr>::from_str(&text).map_err(de::Error::custom)
            }
        }
    )+};
}

named_setting! {
    Search: Search::ALL;
    Strategy: Strategy::PAPER;
    LhAsr: LhAsr::ALL;
}

/// A setting's value on its way out to data.
struct Out<T>(T);

impl<T: Setting> Serialize for Out<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.write(s)
    }
}

/// A setting's value on its way in from data.
struct In<T>(T);

impl<'de, T: Setting> Deserialize<'de> for In<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::read(d).map(In)
    }
}

/// The table: each setting's knob, its group, its field and type, its keyword name, the
/// placeholder of its value in a command line's help, and its documentation (also that
/// help, so written without links).
macro_rules! settings {
    ($(
        $(#[doc = $doc:literal])+
        $knob:ident ($group:ident) $field:ident: $ty:ty = $name:literal, $placeholder:literal;
    )+) => {
        /// A tuning request; a `None` field takes the default its documentation names.
        /// Its serde form is a map from [`Knob::name`] to the value (a number, or a name for
        /// `search`, `strategy` and `lh_asr`): the Python keywords and the browser's option
        /// objects, which name the key at fault when they do not parse.
        ///
        /// ```
        /// use ldp_optimize::{Bounds, Knob, Strategy, TuneRequest};
        ///
        /// // A bound alone selects the eps-constraint strategy.
        /// let request = TuneRequest { asr_max: Some(0.05), ..TuneRequest::default() };
        /// assert_eq!(request.options()?.strategy, Strategy::EpsConstraint(Bounds::asr(0.05)?));
        ///
        /// // Every refusal names the setting at fault, for the front end to name its flag.
        /// let bad = TuneRequest { w_asr: Some(1.5), ..TuneRequest::default() };
        /// assert_eq!(bad.options().unwrap_err().knob(), Some(Knob::AsrWeight));
        ///
        /// // As data, by the settings' keyword names.
        /// let read: TuneRequest = serde_json::from_str(r#"{"asr_after": 30, "strategy": "utopia"}"#)?;
        /// assert_eq!((read.collections, read.strategy), (Some(30), Some(Strategy::Utopia)));
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        pub struct TuneRequest {
            $(
                $(#[doc = $doc])+
                pub $field: Option<$ty>,
            )+
        }

        /// A setting of a request, as named in its errors. [`Knob::name`] is its keyword
        /// spelling (the Python keyword; the `ldp` tool's flag is `--` and the name with `-`
        /// for `_`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Knob {
            /// The protocol.
            Protocol,
            /// The family parameter given instead of the preset or tuning.
            Param,
            /// The objectives of a frontier.
            Objectives,
            $(
                #[doc = concat!("[`TuneRequest::", stringify!($field), "`].")]
                $knob,
            )+
        }

        impl Knob {
            /// The settings of a [`TuneRequest`], in the order of its fields.
            pub const SETTINGS: &'static [Knob] = &[$(Knob::$knob),+];

            /// The keyword spelling: `w_asr`, `asr_max`, `asr_after`, ...
            pub fn name(self) -> &'static str {
                match self {
                    Knob::Protocol => "protocol",
                    Knob::Param => "param",
                    Knob::Objectives => "objectives",
                    $(Knob::$knob => $name,)+
                }
            }

            /// The group of a setting; `None` for the knobs that are not settings.
            pub fn group(self) -> Option<SettingGroup> {
                match self {
                    $(Knob::$knob => Some(SettingGroup::$group),)+
                    Knob::Protocol | Knob::Param | Knob::Objectives => None,
                }
            }

            /// What a setting means, in one paragraph (a command line's help); empty for
            /// the knobs that are not settings.
            pub fn help(self) -> &'static str {
                match self {
                    $(Knob::$knob => concat!($($doc),+).trim_ascii_start(),)+
                    Knob::Protocol | Knob::Param | Knob::Objectives => "",
                }
            }

            /// The placeholder of a setting's value in a command line's help (`W`, `T`).
            pub fn placeholder(self) -> &'static str {
                match self {
                    $(Knob::$knob => $placeholder,)+
                    Knob::Protocol | Knob::Param | Knob::Objectives => "VALUE",
                }
            }

            /// The names a setting takes when it is a named choice (`paper`, `refined`);
            /// `None` for a number.
            pub fn choices(self) -> Option<Vec<&'static str>> {
                match self {
                    $(Knob::$knob => <$ty as Setting>::choices(),)+
                    Knob::Protocol | Knob::Param | Knob::Objectives => None,
                }
            }
        }

        impl TuneRequest {
            /// Whether the setting `knob` was given (never for a knob that is no setting).
            pub fn is_given(&self, knob: Knob) -> bool {
                match knob {
                    $(Knob::$knob => self.$field.is_some(),)+
                    Knob::Protocol | Knob::Param | Knob::Objectives => false,
                }
            }

            /// The value given for the setting `knob`, as front ends show it.
            pub fn value(&self, knob: Knob) -> Option<SettingValue> {
                match knob {
                    $(Knob::$knob => self.$field.map(Setting::shown),)+
                    Knob::Protocol | Knob::Param | Knob::Objectives => None,
                }
            }

            /// Sets the setting `knob` from its text, as a command line gives it
            /// (`0.5`, `refined`).
            pub fn set_text(&mut self, knob: Knob, text: &str) -> Result<(), SettingSyntax> {
                let syntax = |message| SettingSyntax { knob, message };
                match knob {
                    $(Knob::$knob => self.$field = Some(<$ty as Setting>::parse(text).map_err(syntax)?),)+
                    Knob::Protocol | Knob::Param | Knob::Objectives => {
                        return Err(syntax("not a setting of a tuning request".to_owned()));
                    }
                }
                Ok(())
            }
        }

        impl Serialize for TuneRequest {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(None)?;
                $(
                    if let Some(v) = self.$field {
                        map.serialize_entry($name, &Out(v))?;
                    }
                )+
                map.end()
            }
        }

        impl<'de> Deserialize<'de> for TuneRequest {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Visitor;
                impl<'de> de::Visitor<'de> for Visitor {
                    type Value = TuneRequest;

                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a map of tuning settings by name")
                    }

                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TuneRequest, A::Error> {
                        const NAMES: &[&str] = &[$($name),+];
                        let mut out = TuneRequest::default();
                        let mut seen: Vec<&'static str> = Vec::new();
                        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                            let Some(&name) = NAMES.iter().find(|n| **n == key) else {
                                return Err(de::Error::unknown_field(&key, NAMES));
                            };
                            if seen.contains(&name) {
                                return Err(de::Error::duplicate_field(name));
                            }
                            seen.push(name);
                            let named = |e: A::Error| de::Error::custom(format_args!("{name}: {e}"));
                            match name {
                                $($name => out.$field = map.next_value::<Option<In<$ty>>>().map_err(named)?.map(|v| v.0),)+
                                _ => unreachable!("a name of NAMES"),
                            }
                        }
                        Ok(out)
                    }
                }
                d.deserialize_map(Visitor)
            }
        }
    };
}

settings! {
    /// ASR weight of the tuning objective, in [0, 1] (default 0.5); the MSE weight is
    /// 1 minus it. Weights are normalized once EPG and bits weights are added.
    AsrWeight (Weights) w_asr: f64 = "w_asr", "W";
    /// EPG weight, finite and >= 0 (default 0): the poisoning gain as a further objective.
    EpgWeight (Weights) w_epg: f64 = "w_epg", "W";
    /// Bits weight, finite and >= 0 (default 0): the report size as a further objective.
    BitsWeight (Weights) w_bits: f64 = "w_bits", "W";
    /// Search mode: the paper's grid, or grid then golden section (default paper).
    Search (Method) search: Search = "search", "SEARCH";
    /// Selection strategy (default weighted; eps-constraint when a bound is given, and
    /// without bounds the paper's eps-constraint, ASR at most 0.1). Utopia, elbow,
    /// hypervolume and eps-constraint look only at which weights are positive.
    Strategy (Method) strategy: Strategy = "strategy", "STRATEGY";
    /// Largest ASR of the eps-constraint strategy, the lowest MSE meeting every bound
    /// given; a bound selects that strategy, and no other takes bounds.
    AsrMax (Bounds) asr_max: f64 = "asr_max", "A";
    /// Largest EPG of the eps-constraint strategy.
    EpgMax (Bounds) epg_max: f64 = "epg_max", "E";
    /// Largest report size of the eps-constraint strategy, in bits.
    BitsMax (Bounds) bits_max: f64 = "bits_max", "B";
    /// Largest precision of the change detector of Example 2 on fresh daily reports (the
    /// share of its flags that are changes), at change_rate: a bound of the eps-constraint
    /// strategy, in (0, 1]. It is a bound on one report's exact ASR
    /// (ldp_analytic::change::asr_for_precision) for the protocols whose law ignores the
    /// domain's labels; HR, HM, FLH and the sketches are left out.
    PrecisionMax (Change) precision_max: f64 = "precision_max", "P";
    /// With precision_max: the probability that a user's value changes from one day to
    /// the next, in [0, 1].
    ChangeRate (Change) change_rate: f64 = "change_rate", "R";
    /// Tune against the ASR after T linked reports of an unchanged value (a device that
    /// reports daily for a year: 365), 1 to 10000, instead of one report (default 1).
    /// AUE, ALH and ATHE only: ASS has no exact form after more than one report. Choosing
    /// among every protocol bounds the ASR after T reports (SS and ASS beyond
    /// omega = 1, and SHE, are left out). GRR's exact form costs O(T^2 log k): about 2 s
    /// per budget at T = 10000.
    Collections (Collections) collections: u32 = "asr_after", "T";
    /// LH ASR form: the paper's approximation or the exact expectation (default paper).
    LhAsr (LhAsr) lh_asr: LhAsr = "lh_asr", "LH_ASR";
    /// Fraction of fake users of the maximal gain attack behind EPG (default 0.05).
    Beta (Poisoning) beta: f64 = "beta", "BETA";
    /// Number of target items r of the maximal gain attack (default 1).
    Targets (Poisoning) targets: u32 = "targets", "TARGETS";
    /// True mass f_T of the maximal gain attack's targets (default 0.01).
    TargetMass (Poisoning) target_mass: f64 = "target_mass", "TARGET_MASS";
    /// Users behind the bias of FLH and the sketches (CMS, HCMS), whose fixed public
    /// hashes bias every estimate by an amount that does not shrink with the users: their
    /// MSE is the variance per user plus N times the mean squared bias, N times the MSE at
    /// N users, which is what analysis shows and tuning ranks (default 10000).
    BiasUsers (Bias) bias_users: f64 = "bias_users", "N";
    /// Zipf exponent of the users' values behind that bias, finite and >= 0 (default 1.1;
    /// 0 is a uniform population, and the bias grows with the exponent).
    BiasZipf (Bias) bias_zipf: f64 = "bias_zipf", "S";
}

impl Knob {
    /// The `ldp` tool's flag: `--w-asr`, `--asr-after`, ...
    pub fn flag(self) -> String {
        format!("--{}", self.name().replace('_', "-"))
    }

    /// The settings of `group`, in the order of [`Knob::SETTINGS`].
    pub fn of(group: SettingGroup) -> impl Iterator<Item = Knob> {
        Knob::SETTINGS
            .iter()
            .copied()
            .filter(move |k| k.group() == Some(group))
    }
}

impl TuneRequest {
    /// The first setting given (in the order of [`Knob::SETTINGS`]) of the `groups`, if
    /// any: what an operation that does not take them refuses by name.
    pub fn first_given(&self, groups: &[SettingGroup]) -> Option<Knob> {
        Knob::SETTINGS
            .iter()
            .copied()
            .find(|&knob| knob.group().is_some_and(|g| groups.contains(&g)) && self.is_given(knob))
    }

    /// The first tuning setting given (weights, search, strategy, bounds, collections), if
    /// any: these make sense only where something is tuned or chosen.
    pub fn tuning_given(&self) -> Option<Knob> {
        self.first_given(&SettingGroup::TUNING)
    }

    /// The first setting given, if any: a tuning setting, the LH ASR form or a poisoning
    /// setting. An instance that is not tuned takes none of them.
    pub fn given(&self) -> Option<Knob> {
        Knob::SETTINGS.iter().copied().find(|&k| self.is_given(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every setting at once, none at its default.
    fn full() -> TuneRequest {
        TuneRequest {
            w_asr: Some(0.25),
            w_epg: Some(1e-9),
            w_bits: Some(2.0),
            search: Some(Search::Refined),
            strategy: Some(Strategy::PAPER[5]),
            asr_max: Some(0.1),
            epg_max: Some(3.5),
            bits_max: Some(64.0),
            precision_max: Some(0.3),
            change_rate: Some(0.1),
            collections: Some(365),
            lh_asr: Some(LhAsr::Exact),
            beta: Some(0.1),
            targets: Some(3),
            target_mass: Some(0.02),
            bias_users: Some(2e5),
            bias_zipf: Some(0.8),
        }
    }

    #[test]
    fn every_setting_round_trips_through_its_name_its_text_and_serde() {
        let request = full();
        let json = serde_json::to_value(request).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut names: Vec<&str> = Knob::SETTINGS.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        assert_eq!(keys, names);
        assert_eq!(
            serde_json::from_value::<TuneRequest>(json).unwrap(),
            request
        );
        let mut by_text = TuneRequest::default();
        for &knob in Knob::SETTINGS {
            assert!(request.is_given(knob) && !by_text.is_given(knob));
            let text = request.value(knob).unwrap().to_string();
            by_text.set_text(knob, &text).unwrap();
        }
        assert_eq!(by_text, request);
        assert_eq!(TuneRequest::default().given(), None);
        assert_eq!(
            serde_json::to_string(&TuneRequest::default()).unwrap(),
            "{}"
        );
    }

    #[test]
    fn data_that_does_not_parse_names_its_key() {
        let read = |text: &str| {
            serde_json::from_str::<TuneRequest>(text)
                .unwrap_err()
                .to_string()
        };
        assert!(
            read(r#"{"wasr": 0.5}"#).starts_with("unknown field `wasr`, expected one of `w_asr`")
        );
        assert!(read(r#"{"search": "best"}"#).starts_with("search: unknown search mode `best`"));
        assert!(read(r#"{"targets": 1.5}"#).starts_with("targets: invalid type: floating point"));
        assert!(read(r#"{"beta": 0.1, "beta": 0.2}"#).starts_with("duplicate field `beta`"));
        // A null is a setting not given.
        let none: TuneRequest = serde_json::from_str(r#"{"w_asr": null}"#).unwrap();
        assert_eq!(none, TuneRequest::default());
        let err = TuneRequest::default()
            .set_text(Knob::Targets, "-1")
            .unwrap_err();
        assert_eq!(err.knob, Knob::Targets);
        assert!(TuneRequest::default().set_text(Knob::Param, "1").is_err());
    }

    #[test]
    fn groups_and_choices_follow_the_table() {
        let request = TuneRequest {
            lh_asr: Some(LhAsr::Exact),
            targets: Some(2),
            ..TuneRequest::default()
        };
        assert_eq!(request.tuning_given(), None);
        assert_eq!(request.given(), Some(Knob::LhAsr));
        assert_eq!(
            request.first_given(&[SettingGroup::Poisoning]),
            Some(Knob::Targets)
        );
        assert_eq!(Knob::Search.choices(), Some(vec!["paper", "refined"]));
        assert_eq!(Knob::Beta.choices(), None);
        assert_eq!(Knob::Collections.flag(), "--asr-after");
        assert!(
            Knob::AsrWeight
                .help()
                .starts_with("ASR weight of the tuning objective, in [0, 1]")
        );
        assert!(
            Knob::SETTINGS
                .iter()
                .all(|k| k.group().is_some() && !k.help().is_empty())
        );
        assert_eq!(Knob::Param.group(), None);
    }
}
