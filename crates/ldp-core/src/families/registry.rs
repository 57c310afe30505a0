//! The `registry!` macro: from the one list of families in [`crate::families`], it writes
//! every type and function that must name all families, so that adding a family adds one
//! entry to that list and nothing anywhere else in this crate.
//!
//! From each entry `Family { field: type, .. } = module::Type [ protocols ]` it generates:
//!
//! - the tag enum [`crate::Family`] and the parameter enum [`crate::FamilyParams`] (one
//!   variant each, the fields as written);
//! - [`crate::AnyMechanism`], with conversions from and to each mechanism type, and
//!   [`crate::AnyAggregator`], the server state of any family;
//! - each family type's [`crate::Registered`] implementation: its parameter type (the
//!   fields, as a tuple: `()`, one value, or several) and the conversions between it and
//!   `FamilyParams`;
//! - the checks and constructors behind [`crate::Spec`] (`FamilyParams::check`,
//!   `FamilyParams::build`, `FamilyParams::probabilities`), which call the family's
//!   [`crate::FamilyMechanism`] implementation;
//! - serde for each mechanism type, as its [`crate::Spec`];
//! - the protocol enum [`crate::Protocol`] from the entries' protocol lists, with names,
//!   labels, presets and tuning spaces;
//! - the exported macros [`dispatch!`](crate::dispatch) (over `AnyMechanism`) and
//!   [`dispatch_family!`](crate::dispatch_family) (over `FamilyParams`, binding the family's
//!   type), which other crates use to run their own per-family traits: a family that lacks
//!   an implementation is then a compile error at the dispatch site.
//!
//! A protocol of a family is `Name("name", "LABEL") => kind(...)`, with `kind` one of
//! `classic(preset)` (a preset the protocol's definition does not fix: SS, THE, and
//! families without a parameter), `fixed(preset)` (the definition fixes the parameter:
//! SUE, OUE, BLH, OLH) and `adaptive(Counterpart, space)` (tuned over `space`). A preset
//! is a function of (k, eps) returning the family's [`FamilyMechanism::Param`](crate::FamilyMechanism::Param);
//! a space a function of (k, eps) returning a [`crate::ParameterSpace`].

macro_rules! registry {
    (
        $(
            $(#[$family_meta:meta])*
            $Family:ident $( {
                $( $(#[$field_meta:meta])* $field:ident : $field_ty:ty ),* $(,)?
            } )? = $module:ident :: $Type:ident [
                $(
                    $(#[$protocol_meta:meta])*
                    $Protocol:ident ( $name:literal, $label:literal ) => $kind:ident ( $($kind_arg:tt)* )
                ),+ $(,)?
            ]
        ),+ $(,)?
    ) => {
        /// The mechanism families. Each protocol belongs to one.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub enum Family {
            $( $(#[$family_meta])* $Family, )+
        }

        impl Family {
            /// Every family, in the registry's order.
            pub const ALL: &'static [Family] = &[ $( Family::$Family ),+ ];

            /// Whether relabelling the domain leaves the family's report law unchanged
            /// ([`FamilyMechanism::RELABELLING_INVARIANT`]).
            pub fn relabelling_invariant(self) -> bool {
                match self {
                    $( Family::$Family => <$module::$Type as FamilyMechanism>::RELABELLING_INVARIANT, )+
                }
            }

            /// Whether the family's servers clip report coordinates
            /// ([`FamilyMechanism::CLIPS`]).
            pub fn clips(self) -> bool {
                match self {
                    $( Family::$Family => <$module::$Type as FamilyMechanism>::CLIPS, )+
                }
            }

            /// The family's further instances at (k, eps) beside its presets
            /// ([`FamilyMechanism::alternatives`]).
            pub fn alternatives(self, k: DomainSize, eps: Epsilon) -> Vec<FamilyParams> {
                match self {
                    $( Family::$Family => {
                        <$module::$Type as FamilyMechanism>::alternatives(k, eps)
                            .into_iter()
                            .map(<$module::$Type as Registered>::params)
                            .collect()
                    } )+
                }
            }

            /// The names of the family's parameters, as [`FamilyParams`] spells them
            /// (empty for GRR and SHE).
            #[inline]
            pub fn parameter_names(self) -> &'static [&'static str] {
                match self {
                    $( Family::$Family => &[ $( $( stringify!($field) ),* )? ], )+
                }
            }

            /// Whether each parameter (in [`Family::parameter_names`]' order) is a whole
            /// number, so that front ends print omega, g or m as integers.
            #[inline]
            pub fn parameter_is_whole(self) -> &'static [bool] {
                match self {
                    $( Family::$Family => &[ $( $( <$field_ty as $crate::families::ParamValue>::WHOLE ),* )? ], )+
                }
            }
        }

        /// A family and the values of its parameters.
        #[derive(Debug, Clone, Copy, PartialEq)]
        #[cfg_attr(
            feature = "serde",
            derive(serde::Serialize, serde::Deserialize),
            serde(rename_all = "snake_case")
        )]
        pub enum FamilyParams {
            $(
                $(#[$family_meta])*
                $Family $( { $( $(#[$field_meta])* $field: $field_ty ),* } )?,
            )+
        }

        impl FamilyParams {
            /// The family these parameters belong to.
            #[inline]
            pub fn family(&self) -> Family {
                match self {
                    $( FamilyParams::$Family { .. } => Family::$Family, )+
                }
            }

            /// The parameters as numbers, in the order of [`Family::parameter_names`].
            #[inline]
            pub fn values(&self) -> Vec<f64> {
                match *self {
                    $( FamilyParams::$Family { $( $( $field ),* )? } => {
                        vec![ $( $( $crate::families::ParamValue::to_f64($field) ),* )? ]
                    } )+
                }
            }

            /// The parameters of `family` at `values` (in the order of
            /// [`Family::parameter_names`]); `None` when their number is wrong or a value is
            /// not of its parameter's kind (omega and g are whole numbers). The ranges are
            /// checked by [`Spec::new`](crate::Spec::new).
            #[inline]
            pub fn with_values(family: Family, values: &[f64]) -> Option<Self> {
                match family {
                    $( Family::$Family => {
                        #[allow(unused_mut, unused_variables)]
                        let mut rest = values.iter().copied();
                        $( $( let $field = <$field_ty as $crate::families::ParamValue>::from_f64(rest.next()?)?; )* )?
                        if rest.next().is_some() {
                            return None;
                        }
                        Some(FamilyParams::$Family { $( $( $field ),* )? })
                    } )+
                }
            }

            /// Checks the parameters against (k, eps) ([`FamilyMechanism::check`]).
            #[inline]
            pub(crate) fn check(self, k: DomainSize, eps: Epsilon) -> Result<(), ParamError> {
                match self {
                    $( FamilyParams::$Family { $( $( $field ),* )? } => {
                        #[allow(unused_parens)]
                        let param = ( $( $( $field ),* )? );
                        <$module::$Type as FamilyMechanism>::check(k, eps, param)
                    } )+
                }
            }

            /// The runnable mechanism ([`FamilyMechanism::build`]).
            pub(crate) fn build(self, k: DomainSize, eps: Epsilon) -> Result<AnyMechanism, ParamError> {
                match self {
                    $( FamilyParams::$Family { $( $( $field ),* )? } => {
                        #[allow(unused_parens)]
                        let param = ( $( $( $field ),* )? );
                        <$module::$Type as FamilyMechanism>::build(k, eps, param).map(AnyMechanism::$Family)
                    } )+
                }
            }

            /// `(p*, q*)`, `None` for families that are not pure
            /// ([`FamilyMechanism::probabilities`]).
            #[inline]
            pub(crate) fn probabilities(self, k: DomainSize, eps: Epsilon) -> Option<(f64, f64)> {
                match self {
                    $( FamilyParams::$Family { $( $( $field ),* )? } => {
                        #[allow(unused_parens)]
                        let param = ( $( $( $field ),* )? );
                        <$module::$Type as FamilyMechanism>::probabilities(k, eps, param)
                    } )+
                }
            }

            /// How large a report can be ([`FamilyMechanism::report_limits`]).
            pub(crate) fn report_limits(self, k: DomainSize) -> ReportLimits {
                match self {
                    $( FamilyParams::$Family { $( $( $field ),* )? } => {
                        #[allow(unused_parens)]
                        let param = ( $( $( $field ),* )? );
                        <$module::$Type as FamilyMechanism>::report_limits(k, param)
                    } )+
                }
            }

            /// The fewest and the most items one report supports
            /// ([`FamilyMechanism::support_size_range`]).
            pub(crate) fn support_size_range(self, k: DomainSize) -> Option<(u32, u32)> {
                match self {
                    $( FamilyParams::$Family { $( $( $field ),* )? } => {
                        #[allow(unused_parens)]
                        let param = ( $( $( $field ),* )? );
                        <$module::$Type as FamilyMechanism>::support_size_range(k, param)
                    } )+
                }
            }
        }

        /// Any mechanism, for code that chooses the family at run time. Match it with
        /// [`dispatch!`](crate::dispatch) and run generic code monomorphized from there.
        #[derive(Debug, Clone, PartialEq)]
        pub enum AnyMechanism {
            $( $(#[$family_meta])* $Family($module::$Type), )+
        }

        impl AnyMechanism {
            /// The mechanism's defining parameters.
            pub fn spec(&self) -> Spec {
                match self {
                    $( AnyMechanism::$Family(m) => Mechanism::spec(m), )+
                }
            }
        }

        /// The server state of any family, for code that holds aggregators of a family
        /// chosen at run time (serialized with the family's name as its tag). Match it with
        /// [`dispatch_aggregator!`](crate::dispatch_aggregator).
        #[derive(Debug, Clone, PartialEq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub enum AnyAggregator {
            $( $(#[$family_meta])* $Family(<$module::$Type as Mechanism>::Aggregator), )+
        }

        impl AnyAggregator {
            /// Adds everything `other` has aggregated: both must be built for the same
            /// mechanism (and, for SHE, the same clipping).
            pub fn merge(&mut self, other: &AnyAggregator) -> Result<(), AggregateError> {
                match (self, other) {
                    $( (AnyAggregator::$Family(a), AnyAggregator::$Family(b)) => a.merge(b), )+
                    (left, right) => Err(AggregateError::Incompatible {
                        left: format!("{:?}", left.spec()),
                        right: format!("{:?}", right.spec()),
                    }),
                }
            }

            /// The spec of the mechanism it aggregates.
            pub fn spec(&self) -> Spec {
                match self {
                    $( AnyAggregator::$Family(a) => Mechanism::spec(Aggregator::mechanism(a)), )+
                }
            }
        }

        impl AnyMechanism {
            /// A server for untrusted clients ([`FamilyMechanism::server`]).
            pub fn server(&self, clip: Clip) -> AnyAggregator {
                match self {
                    $( AnyMechanism::$Family(m) => AnyAggregator::$Family(FamilyMechanism::server(m, clip)), )+
                }
            }
        }

        $(
            #[allow(unused_parens)]
            impl Registered for $module::$Type {
                type Param = ( $( $( $field_ty ),* )? );
                const FAMILY: Family = Family::$Family;

                #[allow(unused_parens)]
                fn params(param: Self::Param) -> FamilyParams {
                    let ( $( $( $field ),* )? ) = param;
                    FamilyParams::$Family { $( $( $field ),* )? }
                }

                fn param_of(params: &FamilyParams) -> Option<Self::Param> {
                    if let FamilyParams::$Family { $( $( $field ),* )? } = *params {
                        Some(( $( $( $field ),* )? ))
                    } else {
                        None
                    }
                }
            }

            impl From<$module::$Type> for AnyMechanism {
                fn from(m: $module::$Type) -> Self {
                    AnyMechanism::$Family(m)
                }
            }

            impl TryFrom<AnyMechanism> for $module::$Type {
                type Error = WrongFamily;
                fn try_from(any: AnyMechanism) -> Result<Self, WrongFamily> {
                    if let AnyMechanism::$Family(m) = any {
                        Ok(m)
                    } else {
                        Err(WrongFamily { expected: Family::$Family, found: any.spec().family() })
                    }
                }
            }

            /// Serialized as its [`Spec`], the mechanism's identity.
            #[cfg(feature = "serde")]
            impl serde::Serialize for $module::$Type {
                fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                    serde::Serialize::serialize(&Mechanism::spec(self), serializer)
                }
            }

            /// Deserialized from a [`Spec`] of this family, validated and built.
            #[cfg(feature = "serde")]
            impl<'de> serde::Deserialize<'de> for $module::$Type {
                fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    use serde::de::Error as _;
                    let spec = <Spec as serde::Deserialize>::deserialize(deserializer)?;
                    let any = spec.build().map_err(D::Error::custom)?;
                    <$module::$Type>::try_from(any).map_err(D::Error::custom)
                }
            }
        )+

        /// The protocols: the paper's eight classic presets and four adaptive variants, and
        /// the presets of the families added since.
        ///
        /// Names parse case-insensitively:
        /// ```
        /// use ldp_core::Protocol;
        /// let p: Protocol = "OLH".parse()?;
        /// assert_eq!(p, Protocol::Olh);
        /// assert_eq!(p.name(), "olh");
        /// assert!("xyz".parse::<Protocol>().is_err());
        /// # Ok::<(), ldp_core::UnknownProtocol>(())
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub enum Protocol {
            $( $(
                $(#[$protocol_meta])*
                #[cfg_attr(feature = "serde", serde(rename = $name))]
                $Protocol,
            )+ )+
        }

        impl Protocol {
            /// Every protocol in registry order (families in order, each family's
            /// protocols in order).
            const BY_FAMILY: &'static [Protocol] = &[ $( $( Protocol::$Protocol, )+ )+ ];

            /// Lower-case short name, as used on the command line and in data files.
            pub const fn name(self) -> &'static str {
                match self {
                    $( $( Protocol::$Protocol => $name, )+ )+
                }
            }

            /// Upper-case label, as in the paper's figures.
            pub const fn label(self) -> &'static str {
                match self {
                    $( $( Protocol::$Protocol => $label, )+ )+
                }
            }

            /// The mechanism family the protocol instantiates.
            pub const fn family(self) -> Family {
                match self {
                    $( $( Protocol::$Protocol => Family::$Family, )+ )+
                }
            }

            /// Whether the protocol's parameter is tuned (for ASR and MSE by default).
            pub const fn is_adaptive(self) -> bool {
                match self {
                    $( $( Protocol::$Protocol => registry!(@is_adaptive $kind), )+ )+
                }
            }

            /// Whether the protocol's definition fixes its family parameter, so that another
            /// value would make it a different protocol: SUE and OUE fix p, BLH and OLH fix g.
            /// SS and THE are defined for any omega and theta (their preset is the
            /// variance-optimal one), and an adaptive protocol's parameter is whatever tuning
            /// (or the caller) chooses.
            pub const fn fixes_parameter(self) -> bool {
                match self {
                    $( $( Protocol::$Protocol => registry!(@fixes $kind), )+ )+
                }
            }

            /// The classic protocol an adaptive one refines (ASS: SS, AUE: OUE, ALH: OLH,
            /// ATHE: THE); a classic protocol is its own counterpart.
            ///
            /// ```
            /// use ldp_core::Protocol;
            /// assert_eq!(Protocol::Alh.classic_counterpart(), Protocol::Olh);
            /// assert_eq!(Protocol::Sue.classic_counterpart(), Protocol::Sue);
            /// ```
            pub const fn classic_counterpart(self) -> Protocol {
                match self {
                    $( $( Protocol::$Protocol => registry!(@counterpart $Protocol $kind ($($kind_arg)*)), )+ )+
                }
            }

            /// The protocol's instance at (k, eps): its preset for a classic protocol,
            /// [`NotClassic`] for an adaptive one (tune it with ldp-optimize).
            pub(crate) fn preset(self, k: DomainSize, eps: Epsilon) -> Result<FamilyParams, NotClassic> {
                match self {
                    $( $(
                        Protocol::$Protocol => registry!(
                            @preset $Protocol $module::$Type, k, eps, $kind ($($kind_arg)*)
                        ),
                    )+ )+
                }
            }

            /// The parameter space an adaptive protocol is tuned over at (k, eps), as the
            /// paper defines it; `None` for a classic protocol.
            ///
            /// ```
            /// use ldp_core::{DomainSize, Epsilon, Protocol};
            /// let (k, eps) = (DomainSize::new(100)?, Epsilon::new(4.0)?);
            /// assert_eq!(Protocol::Ass.paper_space(k, eps).unwrap().len(), 99); // omega in [1, 99]
            /// assert!(Protocol::Ss.paper_space(k, eps).is_none());
            /// # Ok::<(), ldp_core::ParamError>(())
            /// ```
            pub fn paper_space(self, k: DomainSize, eps: Epsilon) -> Option<ParameterSpace> {
                match self {
                    $( $( Protocol::$Protocol => registry!(@space k, eps, $kind ($($kind_arg)*)), )+ )+
                }
            }
        }

        registry!(@export_macros ($) $( $Family $module $Type ( $( $( $field ),* )? ) )+ );
    };

    (@is_adaptive adaptive) => { true };
    (@is_adaptive $kind:ident) => { false };
    (@fixes fixed) => { true };
    (@fixes $kind:ident) => { false };
    (@counterpart $Protocol:ident adaptive ($counterpart:ident, $($rest:tt)*)) => { Protocol::$counterpart };
    (@counterpart $Protocol:ident $kind:ident ($($rest:tt)*)) => { Protocol::$Protocol };
    (@preset $Protocol:ident $Type:ty, $k:ident, $eps:ident, adaptive ($($rest:tt)*)) => {
        Err(NotClassic(Protocol::$Protocol))
    };
    (@preset $Protocol:ident $Type:ty, $k:ident, $eps:ident, $kind:ident ($preset:expr)) => {{
        let preset: fn(DomainSize, Epsilon) -> <$Type as Registered>::Param = $preset;
        Ok(<$Type as Registered>::params(preset($k, $eps)))
    }};
    (@space $k:ident, $eps:ident, adaptive ($counterpart:ident, $space:expr)) => {{
        let space: fn(DomainSize, Epsilon) -> ParameterSpace = $space;
        Some(space($k, $eps))
    }};
    (@space $k:ident, $eps:ident, $kind:ident ($($rest:tt)*)) => { None };

    (@export_macros ($d:tt) $( $Family:ident $module:ident $Type:ident ( $( $field:ident ),* ) )+ ) => {
        /// Runs `$body` with `$m` bound to the concrete mechanism inside an
        /// [`AnyMechanism`](crate::AnyMechanism) (by value or by reference, as `$any` is given).
        /// Generated from the registry of [`families`](crate::families).
        ///
        /// ```
        /// use ldp_core::{dispatch, DomainSize, Epsilon, Mechanism, Protocol, Spec};
        /// fn describe<M: Mechanism>(m: &M) -> String { format!("k = {}", m.domain_size()) }
        /// let any = Spec::classic(Protocol::Olh, DomainSize::new(8)?, Epsilon::new(1.0)?)?.build()?;
        /// assert_eq!(dispatch!(&any, m => describe(m)), "k = 8");
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[macro_export]
        macro_rules! dispatch {
            ($d any:expr, $d m:ident => $d body:expr) => {
                match $d any {
                    $( $crate::AnyMechanism::$Family($d m) => $d body, )+
                }
            };
        }

        /// Runs `$body` with `$a` bound to the concrete aggregator inside an
        /// [`AnyAggregator`](crate::AnyAggregator) (by value or by reference, as `$any` is
        /// given). Generated from the registry of [`families`](crate::families).
        #[macro_export]
        macro_rules! dispatch_aggregator {
            ($d any:expr, $d a:ident => $d body:expr) => {
                match $d any {
                    $( $crate::AnyAggregator::$Family($d a) => $d body, )+
                }
            };
        }

        /// Runs `$body` with the type alias `$F` naming the family's mechanism type and
        /// `$param` bound to its [`Registered::Param`](crate::Registered::Param),
        /// for the [`FamilyParams`](crate::FamilyParams) `$params`: how crates above
        /// ldp-core call their own per-family trait without building a mechanism.
        /// Generated from the registry of [`families`](crate::families).
        ///
        /// ```
        /// use ldp_core::{dispatch_family, FamilyMechanism, DomainSize, Epsilon, Protocol, Spec};
        /// let spec = Spec::classic(Protocol::Ss, DomainSize::new(100)?, Epsilon::new(4.0)?)?;
        /// let range = dispatch_family!(spec.params(), F, param => F::support_size_range(spec.k(), param));
        /// assert_eq!(range, Some((2, 2))); // omega = 2
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[macro_export]
        macro_rules! dispatch_family {
            ($d params:expr, $d F:ident, $d param:pat => $d body:expr) => {
                match $d params {
                    $( $crate::FamilyParams::$Family { $( $field ),* } => {
                        #[allow(unused_parens)]
                        let $d param = ( $( $field ),* );
                        #[allow(dead_code)]
                        type $d F = $crate::families::$module::$Type;
                        $d body
                    } )+
                }
            };
        }
    };
}
