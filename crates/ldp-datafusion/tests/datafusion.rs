//! `ldp_estimate` and `ldp_counts` in DataFusion: equal to ldp-core's aggregation over
//! four and more partitions for every family, per group under GROUP BY, and refusing
//! reports of the wrong shape with the row named.

mod common;

use std::sync::Arc;

use common::*;
use datafusion::arrow::array::{ArrayRef, AsArray, ListArray, UInt32Array};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::{SessionConfig, SessionContext};
use ldp_arrow::{SetEncoding, writer_properties};
use ldp_core::Protocol;
use ldp_datafusion::{DataFusionLdpError, register_functions, register_reports, spec_literal};

fn context(partitions: usize) -> SessionContext {
    let ctx =
        SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    register_functions(&ctx);
    ctx
}

async fn sql(ctx: &SessionContext, query: &str) -> Vec<RecordBatch> {
    ctx.sql(query).await.unwrap().collect().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_over_four_partitions_equals_the_in_process_aggregate() {
    for &protocol in ALL {
        let k = 24;
        let spec = spec(protocol, k, 1.5);
        let dir_guard = temp_dir(&format!("families-{}", protocol.name()));
        let dir = dir_guard.path();
        let expected = write_reports(dir, &spec, &items(6000, k, 0), 8, 3);
        let ctx = context(4);
        let found = register_reports(&ctx, "reports", dir, &[]).await.unwrap();
        assert_eq!(found, spec);
        let lit = spec_literal(&spec);
        // The scan really is split: four partial aggregates merged into one.
        let plan = sql(
            &ctx,
            &format!("EXPLAIN SELECT ldp_counts(report, {lit}) FROM reports"),
        )
        .await;
        let plan = datafusion::arrow::util::pretty::pretty_format_batches(&plan)
            .unwrap()
            .to_string();
        assert!(plan.contains("file_groups={4 groups"), "{plan}");
        assert!(
            plan.contains("mode=Partial") && plan.contains("mode=Final"),
            "{plan}"
        );
        let batches = sql(
            &ctx,
            &format!("SELECT ldp_counts(report, {lit}), ldp_estimate(report, {lit}) FROM reports"),
        )
        .await;
        let (n, counts, sums) = counts_row(&batches[0], 0, 0);
        assert_eq!(n, expected.n, "{protocol}");
        let estimate = estimate_row(&batches[0], 1, 0);
        if protocol == Protocol::She {
            assert_close(&sums, &expected.sums, "SHE sums");
            assert_close(&estimate, &expected.estimate, "SHE estimate");
        } else {
            assert_eq!(counts, expected.counts, "{protocol}");
            assert_eq!(estimate, expected.estimate, "{protocol}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_by_gives_each_group_its_own_estimate() {
    let spec = spec(Protocol::Olh, 16, 2.0);
    let root_guard = temp_dir("group-by");
    let root = root_guard.path();
    let mut expected = Vec::new();
    for day in 1..=3u32 {
        let dir = root.join(format!("day={day}"));
        expected.push(write_reports(
            &dir,
            &spec,
            &items(3000 * day, 16, day),
            2,
            u64::from(day),
        ));
    }
    let ctx = context(4);
    register_reports(&ctx, "reports", root, &["day"])
        .await
        .unwrap();
    let batches = sql(
        &ctx,
        &format!(
            "SELECT day, count(*) AS n, ldp_estimate(report, {}) AS f FROM reports GROUP BY day ORDER BY day",
            spec_literal(&spec)
        ),
    )
    .await;
    let batch = datafusion::arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    assert_eq!(batch.num_rows(), 3);
    for (row, want) in expected.iter().enumerate() {
        assert_eq!(
            batch
                .column(1)
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .value(row) as u64,
            want.n
        );
        assert_eq!(
            estimate_row(&batch, 2, row),
            want.estimate,
            "day {}",
            row + 1
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_report_fails_the_query_naming_its_row() {
    let spec = spec(Protocol::Oue, 10, 1.0);
    let dir_guard = temp_dir("invalid");
    let dir = dir_guard.path();
    // Reports written without the mechanism's checks: row 2 holds index 10, outside 0..10.
    let item = Arc::new(Field::new("item", DataType::UInt32, false));
    let column: ArrayRef = Arc::new(ListArray::new(
        item.clone(),
        OffsetBuffer::from_lengths([1, 0, 2, 1]),
        Arc::new(UInt32Array::from(vec![3, 4, 10, 5])),
        None,
    ));
    let schema = Arc::new(Schema::new(vec![Field::new(
        "report",
        DataType::List(item),
        false,
    )]));
    let batch = RecordBatch::try_new(schema.clone(), vec![column]).unwrap();
    let file = std::fs::File::create(dir.join("bad.parquet")).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        file,
        schema,
        Some(writer_properties(&spec, SetEncoding::List)),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let ctx = context(1);
    register_reports(&ctx, "reports", dir, &[]).await.unwrap();
    let err = ctx
        .sql(&format!(
            "SELECT ldp_estimate(report, {}) FROM reports",
            spec_literal(&spec)
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("ldp_estimate: row 2"), "{err}");
    assert!(err.contains("10"), "{err}");
    // Reports of another shape: OUE files read as GRR.
    let grr = common::spec(Protocol::Grr, 10, 1.0);
    let err = ctx
        .sql(&format!(
            "SELECT ldp_counts(report, {}) FROM reports",
            spec_literal(&grr)
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("UInt32"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_are_refused_at_planning() {
    let spec = spec(Protocol::Grr, 8, 1.0);
    let dir_guard = temp_dir("arguments");
    let dir = dir_guard.path();
    write_reports(dir, &spec, &items(100, 8, 0), 1, 1);
    let ctx = context(2);
    register_reports(&ctx, "reports", dir, &[]).await.unwrap();
    let lit = spec_literal(&spec);
    for (query, needle) in [
        (
            "SELECT ldp_estimate(report) FROM reports".to_owned(),
            "ldp_estimate",
        ),
        (
            "SELECT ldp_estimate(report, 'nonsense') FROM reports".to_owned(),
            "not a valid spec",
        ),
        (
            "SELECT ldp_estimate(report, 7) FROM reports".to_owned(),
            "JSON string literals",
        ),
        (
            format!(
                "SELECT ldp_estimate(report, {lit}, '{{\"estimator\": \"best\"}}') FROM reports"
            ),
            "estimator",
        ),
        (
            format!("SELECT ldp_estimate(report, {lit}, '{{\"she_clip\": 2}}') FROM reports"),
            "SHE reports only",
        ),
    ] {
        let result = match ctx.sql(&query).await {
            Ok(df) => df.collect().await.map(|_| ()),
            Err(e) => Err(e),
        };
        let err = result.expect_err(&query).to_string();
        assert!(err.contains(needle), "{query}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_table_holds_one_mechanism() {
    let root_guard = temp_dir("mixed");
    let root = root_guard.path();
    write_reports(
        &root.join("a"),
        &spec(Protocol::Oue, 8, 1.0),
        &items(50, 8, 0),
        1,
        1,
    );
    write_reports(
        &root.join("b"),
        &spec(Protocol::Oue, 8, 2.0),
        &items(50, 8, 0),
        1,
        1,
    );
    let ctx = context(2);
    let err = register_reports(&ctx, "reports", root, &[])
        .await
        .unwrap_err();
    assert!(
        matches!(err, DataFusionLdpError::MixedSpecs { .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("one table, one mechanism"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_rows_give_a_null_estimate_and_zero_counts() {
    let spec = spec(Protocol::Sue, 6, 1.0);
    let dir_guard = temp_dir("empty");
    let dir = dir_guard.path();
    write_reports(dir, &spec, &items(40, 6, 0), 1, 1);
    let ctx = context(2);
    register_reports(&ctx, "reports", dir, &[]).await.unwrap();
    let lit = spec_literal(&spec);
    let batches = sql(
        &ctx,
        &format!(
            "SELECT ldp_estimate(report, {lit}), ldp_counts(report, {lit}) FROM reports WHERE false"
        ),
    )
    .await;
    assert!(batches[0].column(0).is_null(0));
    assert_eq!(counts_row(&batches[0], 1, 0), (0, vec![0; 6], vec![]));
}

/// One malicious report among valid ones: refused by default, and with
/// `"on_invalid": "skip"` left out (the estimate is that of the valid reports) and
/// counted in `ldp_counts(...).skipped`, across four partitions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_invalid_report_is_skipped_and_counted_on_request() {
    use ldp_arrow::ReportWriter;
    use ldp_core::{Aggregator, Estimator, GrrReport, Mechanism};
    let spec = spec(Protocol::Grr, 8, 1.0);
    let grr = ldp_core::Grr::new(spec.k(), spec.eps()).unwrap();
    let dir_guard = temp_dir("skip");
    let dir = dir_guard.path();
    let mut valid = Vec::new();
    for part in 0..4u32 {
        let mut w =
            ReportWriter::create(&dir.join(format!("part-{part}.parquet")), grr.clone(), None)
                .unwrap();
        let mut reports: Vec<GrrReport> = (0..500)
            .map(|i| GrrReport {
                y: (i * 3 + part) % 8,
            })
            .collect();
        valid.extend(reports.clone());
        if part == 2 {
            reports.insert(123, GrrReport { y: 8 }); // outside 0..8
        }
        w.write(&reports).unwrap();
        w.finish().unwrap();
    }
    let mut server = grr.aggregator();
    for r in &valid {
        server.add(r).unwrap();
    }
    let expected = server.estimate(Estimator::Unbiased).unwrap();
    let ctx = context(4);
    register_reports(&ctx, "reports", dir, &[]).await.unwrap();
    let lit = spec_literal(&spec);
    let refused = ctx
        .sql(&format!("SELECT ldp_estimate(report, {lit}) FROM reports"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("value 8 is outside 0..8"), "{refused}");
    let skip = r#"'{"on_invalid": "skip"}'"#;
    let batches = sql(
        &ctx,
        &format!(
            "SELECT ldp_counts(report, {lit}, {skip})['skipped'], ldp_counts(report, {lit}, {skip}), ldp_estimate(report, {lit}, {skip}), \
             ldp_counts(report, {lit}, {skip})['skipped_by_reason']['out_of_range'], \
             ldp_counts(report, {lit}, {skip})['skipped_by_reason']['malformed'] FROM reports"
        ),
    )
    .await;
    let column = |i: usize| {
        batches[0]
            .column(i)
            .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
            .value(0)
    };
    // In all, and by reason, merged over the four partitions' states.
    assert_eq!((column(0), column(3), column(4)), (1, 1, 0));
    let (n, counts, _) = counts_row(&batches[0], 1, 0);
    assert_eq!((n, counts), (2000, server.counts().to_vec()));
    assert_eq!(estimate_row(&batches[0], 2, 0), expected);
}

/// Issue 24: a file whose writer dropped the spec (a Spark or pandas job that rewrote the
/// reports) is refused by `register_reports`, and read as the named mechanism's by
/// `register_reports_as` (and `ReportTable::spec`), which lists it; a file recording
/// another spec stays an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_without_a_spec_are_read_as_the_named_mechanism() {
    use ldp_arrow::ReportWriter;
    use ldp_core::{GrrReport, Spec};
    use ldp_datafusion::{ReportTable, register_reports_as, run_sql};
    let spec = spec(Protocol::Grr, 5, 1.0);
    let grr = ldp_core::Grr::new(spec.k(), spec.eps()).unwrap();
    let dir_guard = temp_dir("no-spec");
    let dir = dir_guard.path();
    let mut w = ReportWriter::create(&dir.join("a.parquet"), grr.clone(), None).unwrap();
    w.write(&[GrrReport { y: 0 }, GrrReport { y: 3 }]).unwrap();
    w.finish().unwrap();
    let bare = dir.join("b.parquet");
    let column: ArrayRef = std::sync::Arc::new(UInt32Array::from(vec![1, 3, 3]));
    let schema = std::sync::Arc::new(Schema::new(vec![Field::new(
        "report",
        DataType::UInt32,
        false,
    )]));
    let batch = RecordBatch::try_new(schema.clone(), vec![column]).unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&bare).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();

    let ctx = context(2);
    let refused = register_reports(&ctx, "strict", dir, &[])
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("ldp.spec"), "{refused}");
    let unrecorded = register_reports_as(&ctx, "reports", dir, &[], &spec)
        .await
        .unwrap();
    assert_eq!(unrecorded, vec![bare.clone()]);
    let lit = spec_literal(&spec);
    let batches = sql(
        &ctx,
        &format!("SELECT ldp_counts(report, {lit}) FROM reports"),
    )
    .await;
    assert_eq!(
        counts_row(&batches[0], 0, 0),
        (5, vec![1, 1, 0, 3, 0], vec![])
    );

    let table = |spec| ReportTable {
        name: "t".into(),
        path: dir.to_path_buf(),
        spec,
    };
    let ctx = context(2);
    let batches = run_sql(
        &ctx,
        &[table(Some(spec))],
        &[],
        "SELECT ldp_counts(report, {spec})['n'] FROM t",
    )
    .await
    .unwrap();
    assert_eq!(
        batches[0]
            .column(0)
            .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
            .value(0),
        5
    );
    let other = Spec::classic(
        Protocol::Grr,
        spec.k(),
        ldp_core::Epsilon::new(2.0).unwrap(),
    )
    .unwrap();
    let contradicted = run_sql(&context(2), &[table(Some(other))], &[], "SELECT 1")
        .await
        .unwrap_err()
        .to_string();
    assert!(contradicted.contains("a.parquet"), "{contradicted}");
}

/// Issue 27: every estimator through the options argument, the iterative ones bounded by
/// `max_iterations` and `tolerance`, equal to ldp-core's on the merged counts of three
/// files and four partitions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_estimators_beyond_the_unbiased_one_run_in_sql() {
    use ldp_core::Estimator;
    use ldp_core::estimate::{Channel, FitOptions};
    let spec = spec(Protocol::Olh, 12, 1.5);
    let dir_guard = temp_dir("estimators");
    let dir = dir_guard.path();
    let expected = write_reports(dir, &spec, &items(3_000, 12, 0), 3, 9);
    let ctx = context(4);
    register_reports(&ctx, "reports", dir, &[]).await.unwrap();
    let lit = spec_literal(&spec);
    let (p, q) = spec.pure_probabilities().unwrap();
    let channel = Channel {
        p,
        q,
        one_item_per_report: false,
    };
    for (estimator, options, fit) in [
        (
            Estimator::Ibu,
            r#"{"estimator": "ibu", "max_iterations": 40}"#,
            FitOptions {
                max_iterations: 40,
                ..FitOptions::default()
            },
        ),
        (
            Estimator::Mle,
            r#"{"estimator": "mle"}"#,
            FitOptions::default(),
        ),
        (
            Estimator::NormCut,
            r#"{"estimator": "norm-cut"}"#,
            FitOptions::default(),
        ),
        (
            Estimator::BaseCut,
            r#"{"estimator": "base-cut"}"#,
            FitOptions::default(),
        ),
    ] {
        let batches = sql(
            &ctx,
            &format!("SELECT ldp_estimate(report, {lit}, '{options}') FROM reports"),
        )
        .await;
        let want = estimator
            .from_counts(&expected.counts, expected.n, channel, &fit)
            .unwrap()
            .values;
        assert_close(&estimate_row(&batches[0], 0, 0), &want, estimator.name());
    }
    let refused = ctx
        .sql(&format!(
            "SELECT ldp_estimate(report, {lit}, '{{\"estimator\": \"clip\", \"tolerance\": 1e-3}}') FROM reports"
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("bound the \"ibu\" and \"mle\""),
        "{refused}"
    );
}

/// A collection of three attributes over unequal domains, every attribute of `protocol`.
fn multidim_spec(
    solution: ldp_core::multidim::Solution,
    protocol: Protocol,
    eps: f64,
) -> ldp_core::multidim::MultidimSpec {
    use ldp_core::multidim::{MultidimSpec, Priors, Solution};
    use ldp_core::{DomainSize, Epsilon};
    let ks = [6u32, 4, 9];
    let domains: Vec<DomainSize> = ks.iter().map(|&k| DomainSize::new(k).unwrap()).collect();
    let priors = (solution == Solution::RsRfd).then(|| {
        // Skewed priors: item v of a k-item domain weighs v + 1.
        let values = ks
            .iter()
            .map(|&k| {
                let total = f64::from(k * (k + 1) / 2);
                (1..=k).map(|v| f64::from(v) / total).collect()
            })
            .collect();
        Priors::new(values).unwrap()
    });
    MultidimSpec::classic(
        solution,
        protocol,
        Epsilon::new(eps).unwrap(),
        &domains,
        priors,
    )
    .unwrap()
}

/// Reports of several attributes per user, one SQL estimate per attribute: equal to
/// `MultidimAggregator`'s (bit for bit: the same counts, merged over four partitions,
/// and the same arithmetic, ldp-core's `Multidim::fit_attribute`) for SPL, SMP, RS+FD
/// (GRR and OUE), RS+FD-z (OUE) and RS+RFD (GRR); the channel-reading IBU with the
/// shifted channel, refused for RS+RFD; SMP's other attributes' rows neither counted nor
/// skipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_attribute_of_every_solution_equals_the_multidim_aggregator() {
    use ldp_core::multidim::Solution;
    use ldp_datafusion::{attribute_literal, register_multidim_reports};
    for (solution, protocol) in [
        (Solution::Spl, Protocol::Grr),
        (Solution::Smp, Protocol::Oue),
        (Solution::RsFd, Protocol::Grr),
        (Solution::RsFd, Protocol::Oue),
        (Solution::RsFdNull, Protocol::Oue),
        (Solution::RsRfd, Protocol::Grr),
    ] {
        let what = format!("{} {}", solution.label(), protocol.name());
        let spec = multidim_spec(solution, protocol, 2.0);
        let dir_guard = temp_dir(&format!("multidim-{}-{}", solution.name(), protocol.name()));
        let dir = dir_guard.path();
        let expected = write_multidim_reports(dir, &spec, 4_000, 5, 17);
        let ctx = context(4);
        let found = register_multidim_reports(&ctx, "users", dir, &[])
            .await
            .unwrap();
        assert_eq!(found, spec, "{what}");
        let skip = r#"'{"on_invalid": "skip"}'"#;
        let ibu = r#"'{"estimator": "ibu"}'"#;
        for j in 0..3 {
            let lit = attribute_literal(&spec, j);
            let batches = sql(
                &ctx,
                &format!(
                    "SELECT ldp_estimate(report_{j}, {lit}), ldp_counts(report_{j}, {lit}, {skip}), \
                     ldp_counts(report_{j}, {lit}, {skip})['skipped'] FROM users"
                ),
            )
            .await;
            assert_eq!(
                estimate_row(&batches[0], 0, 0),
                expected.estimate[j],
                "{what}, attribute {j}"
            );
            let (n, _, _) = counts_row(&batches[0], 1, 0);
            assert_eq!(n, expected.reports[j], "{what}, attribute {j}");
            if solution == Solution::Smp {
                assert!(
                    n < expected.users,
                    "{what}: SMP's attribute {j} has {n} users"
                );
            } else {
                assert_eq!(n, expected.users, "{what}");
            }
            assert_eq!(
                batches[0]
                    .column(2)
                    .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
                    .value(0),
                0,
                "{what}: nothing is skipped"
            );
            let ibu_result = match ctx
                .sql(&format!(
                    "SELECT ldp_estimate(report_{j}, {lit}, {ibu}) FROM users"
                ))
                .await
            {
                Ok(df) => df.collect().await,
                Err(e) => Err(e),
            };
            match (&expected.ibu[j], ibu_result) {
                (Ok(want), Ok(batches)) => assert_eq!(
                    &estimate_row(&batches[0], 0, 0),
                    want,
                    "{what}, attribute {j}, IBU"
                ),
                (Err(want), Err(e)) => {
                    assert_eq!(solution, Solution::RsRfd, "{what}: {e}");
                    let e = e.to_string();
                    assert!(e.contains("RS+RFD's fakes"), "{what}: {e}");
                    assert!(want.contains("RS+RFD's fakes"), "{what}: {want}");
                }
                (want, found) => panic!("{what}, attribute {j}: {want:?} vs {found:?}"),
            }
        }
    }
}

/// SMP per day: each group's estimate of an attribute is that of its own users.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_smp_estimate_groups_by_a_partition_column() {
    use ldp_core::multidim::Solution;
    use ldp_datafusion::{attribute_literal, register_multidim_reports};
    let spec = multidim_spec(Solution::Smp, Protocol::Grr, 1.5);
    let root_guard = temp_dir("multidim-group-by");
    let root = root_guard.path();
    let expected: Vec<_> = (1..=3u32)
        .map(|day| {
            write_multidim_reports(
                &root.join(format!("day={day}")),
                &spec,
                1_500 * day,
                2,
                u64::from(day),
            )
        })
        .collect();
    let ctx = context(4);
    register_multidim_reports(&ctx, "users", root, &["day"])
        .await
        .unwrap();
    let lit = attribute_literal(&spec, 2);
    let batches = sql(
        &ctx,
        &format!(
            "SELECT day, ldp_estimate(report_2, {lit}), ldp_counts(report_2, {lit})['n'] \
             FROM users GROUP BY day ORDER BY day"
        ),
    )
    .await;
    let batch = datafusion::arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    assert_eq!(batch.num_rows(), 3);
    for (row, want) in expected.iter().enumerate() {
        assert_eq!(
            estimate_row(&batch, 1, row),
            want.estimate[2],
            "day {}",
            row + 1
        );
        assert_eq!(
            batch
                .column(2)
                .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
                .value(row),
            want.reports[2]
        );
    }
}

/// A literal that names no attribute of the files, or another collection, and files that
/// disagree, are refused with the reason in words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_attribute_literal_is_refused_clearly() {
    use ldp_core::multidim::Solution;
    use ldp_datafusion::{attribute_literal, register_multidim_reports};
    let spec = multidim_spec(Solution::RsFd, Protocol::Grr, 1.0);
    let root_guard = temp_dir("multidim-errors");
    let root = root_guard.path();
    write_multidim_reports(&root.join("a"), &spec, 200, 1, 1);
    let ctx = context(2);
    register_multidim_reports(&ctx, "users", &root.join("a"), &[])
        .await
        .unwrap();
    let oue = multidim_spec(Solution::RsFd, Protocol::Oue, 1.0);
    for (query, needle) in [
        (
            format!(
                "SELECT ldp_estimate(report_0, {}) FROM users",
                attribute_literal(&spec, 3)
            ),
            "attribute 3 does not exist: the client has 3 attributes",
        ),
        (
            // Another family than the files': the column is not of its reports.
            format!(
                "SELECT ldp_estimate(report_0, {}) FROM users",
                attribute_literal(&oue, 0)
            ),
            "UInt32",
        ),
        (
            "SELECT ldp_estimate(report_0, '{\"multidim\": 3, \"attribute\": 0}') FROM users"
                .to_owned(),
            "does not name an attribute of reports of several attributes",
        ),
        (
            "SELECT ldp_estimate(report_0, '{\"multidim\": {}, \"attribute\": 0, \"x\": 1}') FROM users"
                .to_owned(),
            "expected {\"multidim\"",
        ),
    ] {
        let result = match ctx.sql(&query).await {
            Ok(df) => df.collect().await.map(|_| ()),
            Err(e) => Err(e),
        };
        let err = result.expect_err(&query).to_string();
        assert!(err.contains(needle), "{query}: {err}");
    }
    // Files of two collections in one table.
    write_multidim_reports(
        &root.join("b"),
        &multidim_spec(Solution::RsFd, Protocol::Grr, 2.0),
        200,
        1,
        1,
    );
    let err = register_multidim_reports(&context(2), "users", root, &[])
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("one table, one mechanism"),
        "{err}"
    );
    // One attribute's files are not reports of several attributes, and the other way
    // round.
    let single = root.join("single");
    write_reports(
        &single,
        &common::spec(Protocol::Grr, 6, 1.0),
        &items(50, 6, 0),
        1,
        1,
    );
    let err = register_multidim_reports(&context(2), "users", &single, &[])
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("reports of one attribute"),
        "{err}"
    );
    let err = register_reports(&context(2), "users", &root.join("a"), &[])
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("reports of several attributes"),
        "{err}"
    );
}

/// An SMP column's invalid report is named by its row in the partition, counting the
/// NULL rows of other attributes' users before it; with `"on_invalid": "skip"` it alone is
/// skipped, and the NULL rows are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_smp_report_is_named_by_its_row() {
    use ldp_arrow::multidim::multidim_writer_properties;
    use ldp_core::multidim::Solution;
    use ldp_datafusion::{attribute_literal, register_multidim_reports};
    let spec = multidim_spec(Solution::Smp, Protocol::Grr, 1.0);
    let md = spec.build::<ldp_core::Grr>().unwrap();
    let dir_guard = temp_dir("multidim-invalid");
    let dir = dir_guard.path();
    // Written without the writer's checks: row 4 holds item 6 of attribute 0 (k = 6).
    let column = |values: Vec<Option<u32>>| -> ArrayRef { Arc::new(UInt32Array::from(values)) };
    let columns = vec![
        column(vec![Some(1), None, None, Some(2), Some(6), None]),
        column(vec![None, Some(3), None, None, None, None]),
        column(vec![None, None, Some(8), None, None, Some(0)]),
    ];
    let schema = Arc::new(Schema::new(
        (0..3)
            .map(|j| Field::new(format!("report_{j}"), DataType::UInt32, true))
            .collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let file = std::fs::File::create(dir.join("bad.parquet")).unwrap();
    let properties = multidim_writer_properties(&md, SetEncoding::List).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, Some(properties)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let ctx = context(1);
    register_multidim_reports(&ctx, "users", dir, &[])
        .await
        .unwrap();
    let lit = attribute_literal(&spec, 0);
    let err = ctx
        .sql(&format!("SELECT ldp_estimate(report_0, {lit}) FROM users"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("row 4"), "{err}");
    assert!(err.contains("outside 0..6"), "{err}");
    let skip = r#"'{"on_invalid": "skip"}'"#;
    let batches = sql(
        &ctx,
        &format!(
            "SELECT ldp_counts(report_0, {lit}, {skip}), ldp_counts(report_0, {lit}, {skip})['skipped'] FROM users"
        ),
    )
    .await;
    assert_eq!(
        counts_row(&batches[0], 0, 0),
        (2, vec![0, 1, 1, 0, 0, 0], vec![])
    );
    assert_eq!(
        batches[0]
            .column(1)
            .as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
            .value(0),
        1
    );
}

/// `run_sql` (and so `ldp-query`) registers a table of reports of several attributes by
/// what its files record, and fills `{attribute:J}` / `{attribute:NAME:J}` beside
/// `{spec:NAME}`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_sql_fills_attribute_placeholders() {
    use ldp_core::multidim::Solution;
    use ldp_datafusion::{ReportTable, run_sql};
    let spec = multidim_spec(Solution::RsFd, Protocol::Oue, 1.0);
    let root_guard = temp_dir("multidim-run-sql");
    let root = root_guard.path();
    let expected = write_multidim_reports(&root.join("users"), &spec, 1_000, 2, 5);
    let single = common::spec(Protocol::Grr, 5, 1.0);
    let single_expected = write_reports(&root.join("reports"), &single, &items(300, 5, 0), 1, 2);
    let tables = ["users", "reports"].map(|name| ReportTable {
        name: name.into(),
        path: root.join(name),
        spec: None,
    });
    let batches = run_sql(
        &context(2),
        &tables,
        &[],
        "SELECT ldp_estimate(report_2, {attribute:users:2}) FROM users",
    )
    .await
    .unwrap();
    assert_eq!(estimate_row(&batches[0], 0, 0), expected.estimate[2]);
    let batches = run_sql(
        &context(2),
        &tables,
        &[],
        "SELECT ldp_estimate(report, {spec:reports}) FROM reports",
    )
    .await
    .unwrap();
    assert_eq!(estimate_row(&batches[0], 0, 0), single_expected.estimate);
    let err = run_sql(
        &context(2),
        &tables[..1],
        &[],
        "SELECT ldp_estimate(report_0, {attribute:3}) FROM users",
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("attributes 0..3"), "{err}");
}
