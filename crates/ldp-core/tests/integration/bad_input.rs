//! Every kind of bad input yields a typed error naming the field; nothing panics.

use ldp_core::{
    AggregateError, Aggregator, DomainSize, Epsilon, Grr, GrrReport, ItemOutOfRange, LhReport,
    LocalHashing, Mechanism, OnesReport, ParamError, Protocol, ReportError, SheReport, Spec,
    SubsetReport, SubsetSelection, SummationHistogram, SupportCounts, ThresholdHistogram,
    UnaryEncoding,
};

fn k(v: u32) -> DomainSize {
    DomainSize::new(v).unwrap()
}
fn eps(v: f64) -> Epsilon {
    Epsilon::new(v).unwrap()
}

#[test]
fn parameters_are_validated() {
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(Epsilon::new(bad), Err(ParamError::Epsilon { .. })));
    }
    assert_eq!(DomainSize::new(1), Err(ParamError::DomainSize { value: 1 }));
    assert_eq!(DomainSize::new(0), Err(ParamError::DomainSize { value: 0 }));
    assert_eq!(
        SubsetSelection::new(k(10), eps(1.0), 0).unwrap_err(),
        ParamError::Parameter {
            name: "omega",
            description: "subset size omega",
            requirement: "lie in [1, 9] (k - 1)".into(),
            value: 0.0
        }
    );
    assert!(SubsetSelection::new(k(10), eps(1.0), 10).is_err());
    // Any p in (0, 1) is eps-LDP (below 1/2: one report of L-OUE); 0 and 1 are not.
    assert!(UnaryEncoding::new(k(10), eps(1.0), 0.3).is_ok());
    for p in [0.0, -0.1, 1.0, f64::NAN] {
        assert!(matches!(
            UnaryEncoding::new(k(10), eps(1.0), p),
            Err(ParamError::Parameter { name: "p", .. })
        ));
    }
    assert_eq!(
        LocalHashing::new(k(10), eps(1.0), 1).unwrap_err(),
        ParamError::Parameter {
            name: "g",
            description: "hash range g",
            requirement: "be at least 2".into(),
            value: 1.0
        }
    );
    for t in [0.49, 1.01, f64::NAN] {
        assert!(matches!(
            ThresholdHistogram::new(k(10), eps(1.0), t),
            Err(ParamError::Parameter { name: "theta", .. })
        ));
    }
}

/// A budget so small that e^eps = 1 is valid for closed forms, but no runnable mechanism
/// of any family takes it (SHE's own floor is far above).
#[test]
fn every_family_refuses_a_budget_whose_reports_carry_no_signal() {
    for p in Protocol::CLASSIC {
        let tiny = Spec::classic(p, k(10), eps(1e-300)).unwrap().build();
        assert!(
            matches!(
                tiny,
                Err(ParamError::NoSignal { .. } | ParamError::SheBudget { .. })
            ),
            "{p}: {tiny:?}"
        );
    }
    // Just above the floor, reports carry a (faint) signal and mechanisms run.
    for p in [Protocol::Grr, Protocol::Oue] {
        assert!(Spec::classic(p, k(10), eps(1e-10)).unwrap().build().is_ok());
    }
}

#[test]
fn items_outside_the_domain_are_rejected_by_every_family() {
    let mut rng = ldp_core::simulation::stream_rng(1, 0, ldp_core::simulation::Role::Genuine, 0);
    let err = ItemOutOfRange { item: 10, k: 10 };
    assert_eq!(
        Grr::new(k(10), eps(1.0))
            .unwrap()
            .perturb(10, &mut rng)
            .unwrap_err(),
        err
    );
    assert_eq!(
        SubsetSelection::optimized(k(10), eps(1.0))
            .unwrap()
            .perturb(10, &mut rng)
            .unwrap_err(),
        err
    );
    assert_eq!(
        UnaryEncoding::optimized(k(10), eps(1.0))
            .unwrap()
            .perturb(10, &mut rng)
            .unwrap_err(),
        err
    );
    assert_eq!(
        LocalHashing::optimized(k(10), eps(1.0))
            .unwrap()
            .perturb(10, &mut rng)
            .unwrap_err(),
        err
    );
    assert_eq!(
        SummationHistogram::new(k(10), eps(1.0))
            .unwrap()
            .perturb(10, &mut rng)
            .unwrap_err(),
        err
    );
    assert_eq!(
        ThresholdHistogram::optimized(k(10), eps(1.0))
            .unwrap()
            .perturb(u32::MAX, &mut rng)
            .unwrap_err()
            .item,
        u64::from(u32::MAX)
    );
}

#[test]
fn malformed_reports_are_rejected_with_the_field_named() {
    let grr = Grr::new(k(5), eps(1.0)).unwrap();
    assert_eq!(
        grr.validate(&GrrReport { y: 5 }),
        Err(ReportError::OutOfRange {
            field: "y",
            value: 5,
            bound: 5
        })
    );

    let ss = SubsetSelection::new(k(5), eps(1.0), 2).unwrap();
    let sub = |v: &[u32]| SubsetReport { subset: v.to_vec() };
    assert_eq!(
        ss.validate(&sub(&[1])),
        Err(ReportError::Length {
            field: "subset",
            expected: 2,
            found: 1
        })
    );
    assert_eq!(
        ss.validate(&sub(&[1, 5])),
        Err(ReportError::OutOfRange {
            field: "subset",
            value: 5,
            bound: 5
        })
    );
    assert_eq!(
        ss.validate(&sub(&[2, 2])),
        Err(ReportError::Duplicate {
            field: "subset",
            value: 2
        })
    );
    assert_eq!(
        ss.validate(&sub(&[3, 1])),
        Err(ReportError::Unsorted {
            field: "subset",
            position: 1,
            value: 1
        })
    );
    assert_eq!(ss.validate(&sub(&[1, 3])), Ok(()));

    let ue = UnaryEncoding::optimized(k(5), eps(1.0)).unwrap();
    let ones = |v: &[u32]| OnesReport { ones: v.to_vec() };
    assert_eq!(ue.validate(&ones(&[])), Ok(()));
    assert_eq!(
        ue.validate(&ones(&[0, 7])),
        Err(ReportError::OutOfRange {
            field: "ones",
            value: 7,
            bound: 5
        })
    );
    assert_eq!(
        ue.validate(&ones(&[4, 4])),
        Err(ReportError::Duplicate {
            field: "ones",
            value: 4
        })
    );
    let the = ThresholdHistogram::optimized(k(5), eps(1.0)).unwrap();
    assert_eq!(
        the.validate(&ones(&[4, 0])),
        Err(ReportError::Unsorted {
            field: "ones",
            position: 1,
            value: 0
        })
    );

    let lh = LocalHashing::new(k(5), eps(1.0), 3).unwrap();
    assert_eq!(
        lh.validate(&LhReport { seed: 9, y: 3 }),
        Err(ReportError::OutOfRange {
            field: "y",
            value: 3,
            bound: 3
        })
    );

    let she = SummationHistogram::new(k(3), eps(1.0)).unwrap();
    assert_eq!(
        she.validate(&SheReport { y: vec![0.0, 1.0] }),
        Err(ReportError::Length {
            field: "y",
            expected: 3,
            found: 2
        })
    );
    assert_eq!(
        she.validate(&SheReport {
            y: vec![0.0, f64::NAN, 1.0]
        }),
        Err(ReportError::NonFinite {
            field: "y",
            position: 1
        })
    );
}

#[cfg(feature = "serde")]
#[test]
fn wire_format_rejects_bad_seeds_and_unknown_fields() {
    let ok: LhReport = serde_json::from_str(r#"{"seed": 4294967295, "y": 1}"#).unwrap();
    assert_eq!(
        ok,
        LhReport {
            seed: u32::MAX,
            y: 1
        }
    );
    for bad in [
        r#"{"seed": 4294967296, "y": 1}"#,
        r#"{"seed": -1, "y": 1}"#,
        r#"{"seed": 1.5, "y": 1}"#,
        r#"{"seed": 1e20, "y": 1}"#,
    ] {
        let msg = serde_json::from_str::<LhReport>(bad)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("is not a valid seed"), "{msg}");
    }
    assert!(serde_json::from_str::<GrrReport>(r#"{"y": 1, "z": 2}"#).is_err());
    assert!(serde_json::from_str::<OnesReport>(r#"{"ones": [1, -2]}"#).is_err());
    assert!(serde_json::from_str::<Grr>(r#"{"k": 1, "eps": 1.0, "family": "grr"}"#).is_err());
    assert!(serde_json::from_str::<Grr>(r#"{"k": 4, "eps": -1.0, "family": "grr"}"#).is_err());
    // One wire name for the budget, as in `Spec`.
    assert!(serde_json::from_str::<Grr>(r#"{"k": 4, "epsilon": 1.0, "family": "grr"}"#).is_err());
    // A mechanism is its spec: a spec of another family is not a GRR.
    assert!(serde_json::from_str::<Grr>(r#"{"k": 4, "eps": 1.0, "family": "grr"}"#).is_ok());
    let msg =
        serde_json::from_str::<Grr>(r#"{"k": 4, "eps": 1.0, "family": "summation_histogram"}"#)
            .unwrap_err()
            .to_string();
    assert!(
        msg.contains("expected a mechanism of the Grr family"),
        "{msg}"
    );
}

#[test]
fn invalid_reports_leave_the_aggregate_unchanged() {
    let ue = UnaryEncoding::optimized(k(5), eps(1.0)).unwrap();
    let mut agg = ue.aggregator();
    agg.add(&OnesReport { ones: vec![1, 2] }).unwrap();
    let before = agg.clone();
    assert!(agg.add(&OnesReport { ones: vec![1, 9] }).is_err());
    assert_eq!(agg, before);
}

#[cfg(feature = "serde")]
#[test]
fn aggregation_errors_are_typed() {
    let a = Grr::new(k(5), eps(1.0)).unwrap();
    assert_eq!(a.aggregator().raw_estimate(), Err(AggregateError::Empty));
    let mut left = a.aggregator();
    let right = Grr::new(k(5), eps(2.0)).unwrap().aggregator();
    assert!(matches!(
        left.merge(&right),
        Err(AggregateError::Incompatible { .. })
    ));

    // Serialized state is checked when it comes back.
    let json = r#"{"mechanism":{"k":3,"eps":1.0,"family":"grr"},"n":1,"counts":[0,1]}"#;
    assert!(
        serde_json::from_str::<SupportCounts<Grr>>(json)
            .unwrap_err()
            .to_string()
            .contains("corrupt")
    );
    let json = r#"{"mechanism":{"k":2,"eps":1.0,"family":"grr"},"n":1,"counts":[0,2]}"#;
    assert!(serde_json::from_str::<SupportCounts<Grr>>(json).is_err());
    let json = r#"{"mechanism":{"k":2,"eps":1.0,"family":"grr"},"n":2,"counts":[1,1]}"#;
    let agg: SupportCounts<Grr> = serde_json::from_str(json).unwrap();
    assert_eq!(agg.count(), 2);
}

/// Issue 11, item 3: restored states are consistent.
#[cfg(feature = "serde")]
#[test]
fn restored_states_are_consistent() {
    // Each GRR report supports exactly one item, each SS report exactly omega.
    let grr = r#"{"mechanism":{"k":2,"eps":1.0,"family":"grr"},"n":1,"counts":[1,1]}"#;
    let msg = serde_json::from_str::<SupportCounts<Grr>>(grr)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("add up to 2"), "{msg}");
    let ss = r#"{"mechanism":{"k":4,"eps":1.0,"family":{"subset_selection":{"omega":2}}},"n":2,"counts":[1,1,1,0]}"#;
    assert!(serde_json::from_str::<SupportCounts<SubsetSelection>>(ss).is_err());
    let ss = r#"{"mechanism":{"k":4,"eps":1.0,"family":{"subset_selection":{"omega":2}}},"n":2,"counts":[1,1,1,1]}"#;
    assert!(serde_json::from_str::<SupportCounts<SubsetSelection>>(ss).is_ok());

    // SHE: the clipping bound of a restored state obeys the constructor's rule.
    let she = r#"{"mechanism":{"k":2,"eps":1.0,"family":"summation_histogram"},"clip":0.5,"n":0,"sums":[0.0,0.0]}"#;
    assert!(serde_json::from_str::<ldp_core::SheSums>(she).is_err());
    let she = r#"{"mechanism":{"k":2,"eps":1.0,"family":"summation_histogram"},"clip":2.0,"n":1,"sums":[3.0,0.0]}"#;
    assert!(serde_json::from_str::<ldp_core::SheSums>(she).is_err());
    let she = r#"{"mechanism":{"k":2,"eps":1.0,"family":"summation_histogram"},"clip":2.0,"n":1,"sums":[2.0,-1.5]}"#;
    assert!(serde_json::from_str::<ldp_core::SheSums>(she).is_ok());
}

/// Issue 11, item 3: n = u64::MAX, one more report or a merge is an error, not a wrap or a
/// panic, and the state is unchanged.
#[test]
fn counts_cannot_overflow() {
    let grr = Grr::new(k(2), eps(1.0)).unwrap();
    assert!(SupportCounts::restore(grr.clone(), 1, vec![1, 1]).is_err());
    let mut agg = SupportCounts::restore(grr.clone(), u64::MAX, vec![u64::MAX - 1, 1]).unwrap();
    let before = agg.clone();
    assert_eq!(
        agg.add(&GrrReport { y: 0 }),
        Err(AggregateError::CountOverflow)
    );
    assert_eq!(agg, before);
    let mut one = grr.aggregator();
    one.add(&GrrReport { y: 1 }).unwrap();
    assert_eq!(agg.merge(&one), Err(AggregateError::CountOverflow));
    assert_eq!(agg, before);
}

/// Issue 11, item 2: a runnable mechanism's domain is capped before anything allocates.
#[test]
fn runnable_domains_are_capped() {
    let huge = DomainSize::new(u32::MAX).unwrap();
    let too_large = ParamError::DomainTooLarge {
        value: u32::MAX,
        max: ldp_core::MAX_RUNNABLE_DOMAIN,
    };
    assert_eq!(Grr::new(huge, eps(1.0)).unwrap_err(), too_large);
    assert_eq!(
        SummationHistogram::new(huge, eps(1.0)).unwrap_err(),
        too_large
    );
    assert_eq!(
        UnaryEncoding::optimized(huge, eps(1.0)).unwrap_err(),
        too_large
    );
    for p in ldp_core::Protocol::CLASSIC {
        let spec = ldp_core::Spec::classic(p, huge, eps(1.0)).unwrap();
        assert_eq!(spec.build().unwrap_err(), too_large, "{p}");
    }
    let largest = DomainSize::new(ldp_core::MAX_RUNNABLE_DOMAIN).unwrap();
    assert!(Grr::new(largest, eps(1.0)).is_ok());
}

/// Issue 11, item 5: SHE refuses budgets whose noise cannot stay within its report bound.
#[test]
fn she_refuses_budgets_it_cannot_serve() {
    for e in [1e-308, 1e-200, 1e-141] {
        assert!(matches!(
            SummationHistogram::new(k(3), eps(e)),
            Err(ParamError::SheBudget { .. })
        ));
    }
    assert!(SummationHistogram::new(k(3), eps(1e-140)).is_ok());
}

#[test]
fn extreme_budgets_neither_panic_nor_produce_nan() {
    use ldp_core::simulation::{Role, stream_rng};
    use ldp_core::{Protocol, Spec};
    let k = DomainSize::new(10).unwrap();
    for e in [1e-300, 1e-9, 700.0, 710.0, 1e4, f64::MAX] {
        let eps = Epsilon::new(e).unwrap();
        for p in Protocol::CLASSIC {
            let spec = Spec::classic(p, k, eps).unwrap();
            let mech = match spec.build() {
                Ok(mech) => mech,
                Err(ParamError::SheBudget { .. }) if p == Protocol::She && e < 1e-140 => continue,
                Err(ParamError::NoSignal { .. }) if e < 1e-16 => continue,
                Err(err) => panic!("{p} eps={e}: {err}"),
            };
            let mut rng = stream_rng(1, 0, Role::Genuine, 0);
            macro_rules! check {
                ($m:expr) => {{
                    let r = $m.perturb(3, &mut rng).unwrap();
                    $m.validate(&r).unwrap();
                    let mut agg = $m.aggregator();
                    agg.add(&r).unwrap();
                    match agg.raw_estimate() {
                        Ok(f) => assert!(f.iter().all(|v| v.is_finite()), "{p} eps={e}: {f:?}"),
                        Err(err) => assert!(
                            matches!(err, AggregateError::Uninformative { .. }),
                            "{p} eps={e}: {err}"
                        ),
                    }
                }};
            }
            ldp_core::dispatch!(mech, m => check!(m));
        }
    }
}

#[test]
fn a_sketch_report_with_a_cell_outside_its_row_names_the_first_such_cell() {
    // h = 3 rows of m = 4 columns: row j's cells are 4j..4j+4, its own cell 12 + j.
    let cms = ldp_core::families::sketch::CountMeanSketch::new(k(5), eps(1.0), 3, 4).unwrap();
    let ones = |v: &[u32]| OnesReport { ones: v.to_vec() };
    let outside = |value, bound| {
        Err(ReportError::OutOfRange {
            field: "ones",
            value,
            bound,
        })
    };
    assert_eq!(cms.validate(&ones(&[4, 7, 13])), Ok(()));
    assert_eq!(cms.validate(&ones(&[13])), Ok(()));
    // Below the row, then above it: the first cell outside is named.
    assert_eq!(cms.validate(&ones(&[1, 5, 13])), outside(1, 8));
    assert_eq!(cms.validate(&ones(&[1, 9, 13])), outside(1, 8));
    assert_eq!(cms.validate(&ones(&[1, 5, 6, 12])), outside(5, 4));
    assert_eq!(cms.validate(&ones(&[5, 8, 9, 13])), outside(8, 8));
    assert!(matches!(
        cms.validate(&ones(&[4, 5])),
        Err(ReportError::Shape { .. })
    ));
}
