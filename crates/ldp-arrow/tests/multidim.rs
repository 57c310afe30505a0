//! Reports of several attributes through Arrow and Parquet: every solution's reports
//! round trip and aggregate as the reports themselves do, and each bad file (another
//! collection, another number of attributes, a file of one attribute, an SMP row with two
//! reports, an RS+ row with a null, a value outside its domain) gets an error naming it,
//! refused or skipped and counted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use ldp_arrow::multidim::{
    MultidimWriter, ParquetMultidimReports, column_name, multidim_schema,
    multidim_writer_properties, read_multidim_spec, reports_from_columns, to_columns,
};
use ldp_arrow::{ArrowLdpError, ArrowReports, ParquetReports, ReportWriter, SetEncoding};
use ldp_core::multidim::{Multidim, MultidimReport, MultidimSpec, Priors, Solution};
use ldp_core::simulation::{Role, stream_rng};
use ldp_core::{
    DomainSize, Epsilon, Estimator, Grr, GrrReport, Mechanism, Protocol, Reason, Rejections,
    dispatch_multidim,
};
use parquet::arrow::ArrowWriter;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ldp-arrow-multidim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const DOMAINS: [u32; 3] = [5, 3, 12];

fn domains() -> Vec<DomainSize> {
    DOMAINS.map(|k| DomainSize::new(k).unwrap()).to_vec()
}

fn eps(e: f64) -> Epsilon {
    Epsilon::new(e).unwrap()
}

fn priors() -> Priors {
    Priors::new(
        DOMAINS
            .iter()
            .map(|&k| {
                let total: u32 = (1..=k).sum();
                (1..=k).map(|i| f64::from(i) / f64::from(total)).collect()
            })
            .collect(),
    )
    .unwrap()
}

/// The client of `solution` over [`DOMAINS`] with `protocol`, or `None` where the family
/// cannot run the solution (RS+FD-z needs a report of no item).
fn client(solution: Solution, protocol: Protocol, e: f64) -> Option<MultidimSpec> {
    let priors = (solution == Solution::RsRfd).then(priors);
    let spec = MultidimSpec::classic(solution, protocol, eps(e), &domains(), priors).unwrap();
    dispatch_multidim!(&spec, m => m.dimensions()).ok()?;
    Some(spec)
}

/// 3,000 users' reports, seeded.
fn reports<M: Mechanism>(m: &Multidim<M>) -> Vec<MultidimReport<M::Report>> {
    let mut rng = stream_rng(11, 0, Role::Genuine, 0);
    (0..3000u32)
        .map(|u| {
            let items: Vec<u32> = DOMAINS.iter().map(|k| (u * 7 + u / 3) % k).collect();
            m.perturb(&items, &mut rng).unwrap()
        })
        .collect()
}

fn round_trip<M>(m: &Multidim<M>, encoding: SetEncoding, name: &str)
where
    M: ArrowReports,
    M::Aggregator: PartialEq,
{
    let reports = reports(m);
    // Arrow, both ways: one nullable column per attribute, of the attribute's type.
    let columns = to_columns(m, &reports, encoding).unwrap();
    assert_eq!(columns.len(), DOMAINS.len(), "{name}");
    for (j, c) in columns.iter().enumerate() {
        assert_eq!(c.data_type(), &m.attributes()[j].report_type(encoding));
        let nulls = c.null_count();
        if m.solution() == Solution::Smp {
            assert!(nulls > 0 && nulls < reports.len(), "{name}: {nulls}");
        } else {
            assert_eq!(nulls, 0, "{name}");
        }
    }
    let views: Vec<&dyn arrow_array::Array> = columns.iter().map(|c| c.as_ref()).collect();
    assert_eq!(reports_from_columns(m, &views).unwrap(), reports, "{name}");
    // A file in two batches: the same reports, the same aggregate, the same estimate.
    let path = temp(&format!("{name}.parquet"));
    let mut w = MultidimWriter::create(&path, m.clone(), Some(encoding)).unwrap();
    w.write(&reports[..1234]).unwrap();
    w.write(&reports[1234..]).unwrap();
    w.finish().unwrap();
    assert_eq!(read_multidim_spec(&path).unwrap(), m.spec(), "{name}");
    let files = ParquetMultidimReports::open(&path, &m.spec()).unwrap();
    assert!(files.unrecorded().is_empty());
    let mut read = Vec::new();
    for part in files.parts().unwrap() {
        files
            .for_each_batch_of(&part, |columns, _| {
                read.extend(reports_from_columns(m, columns)?);
                Ok(())
            })
            .unwrap();
    }
    assert_eq!(read, reports, "{name}");
    let mut direct = m.aggregator();
    for r in &reports {
        direct.add(r).unwrap();
    }
    let mut from_file = m.aggregator();
    files.aggregate(&mut from_file).unwrap();
    assert_eq!(from_file, direct, "{name}");
    assert_eq!(
        from_file.estimate(Estimator::Unbiased).unwrap(),
        direct.estimate(Estimator::Unbiased).unwrap(),
        "{name}"
    );
    let mut skipped = Rejections::default();
    let mut skipping = m.aggregator();
    files
        .aggregate_skipping(&mut skipping, &mut skipped)
        .unwrap();
    assert_eq!((skipping, skipped.total()), (direct, 0), "{name}");
}

#[test]
fn every_solution_round_trips_and_aggregates_as_its_reports() {
    let mut ran = 0;
    for solution in Solution::ALL {
        for protocol in [Protocol::Grr, Protocol::Oue, Protocol::Olh, Protocol::She] {
            let Some(spec) = client(solution, protocol, 2.0) else {
                assert_eq!(
                    (solution, protocol == Protocol::Oue),
                    (Solution::RsFdNull, false),
                    "only RS+FD-z refuses a family (one without a report of no item)"
                );
                continue;
            };
            for encoding in [SetEncoding::List, SetEncoding::Bitmap] {
                let name = format!(
                    "{}-{}-{}",
                    solution.name(),
                    protocol.name(),
                    encoding.name()
                );
                dispatch_multidim!(&spec, m => round_trip(&m, encoding, &name)).unwrap();
                ran += 1;
            }
        }
    }
    // 5 solutions x 4 protocols x 2 encodings, but RS+FD-z with OUE only.
    assert_eq!(ran, 2 * (4 * 4 + 1));
}

/// The spec's JSON, as the file records it, reads back as the same spec.
#[test]
fn the_recorded_spec_reads_back() {
    let spec = client(Solution::RsRfd, Protocol::Oue, 1.0).unwrap();
    let text = serde_json::to_string(&spec).unwrap();
    assert!(text.contains(r#""solution":"rsrfd""#), "{text}");
    assert_eq!(serde_json::from_str::<MultidimSpec>(&text).unwrap(), spec);
    // A stored spec at another budget than the solution's is refused.
    let other = client(Solution::Spl, Protocol::Oue, 1.0).unwrap();
    let forged = serde_json::to_string(&other)
        .unwrap()
        .replace(r#""solution":"spl""#, r#""solution":"smp""#);
    assert!(serde_json::from_str::<MultidimSpec>(&forged).is_err());
}

fn grr(solution: Solution) -> Multidim<Grr> {
    Multidim::new(solution, eps(1.0), &domains(), Grr::new).unwrap()
}

/// A file of GRR reports of several attributes whose columns are given row by row
/// (`None` a null), its metadata recording `m`.
fn crafted(name: &str, m: &Multidim<Grr>, columns: &[Vec<Option<u32>>]) -> PathBuf {
    let path = temp(name);
    let schema = Arc::new(multidim_schema(m, SetEncoding::List).unwrap());
    let arrays: Vec<ArrayRef> = columns
        .iter()
        .map(|c| Arc::new(UInt32Array::from(c.clone())) as ArrayRef)
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), arrays).unwrap();
    let props = multidim_writer_properties(m, SetEncoding::List).unwrap();
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    path
}

/// Refused with an error holding every needle (the first naming the row); skipped, the
/// other rows aggregate and the bad one is counted under `reason` at `row`.
fn refused_then_skipped(
    path: &Path,
    m: &Multidim<Grr>,
    needles: &[&str],
    reason: Reason,
    row: u64,
) {
    let files = ParquetMultidimReports::open(path, &m.spec()).unwrap();
    let mut server = m.aggregator();
    let err = files.aggregate(&mut server).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
    let mut server = m.aggregator();
    let mut skipped = Rejections::default();
    files.aggregate_skipping(&mut server, &mut skipped).unwrap();
    assert_eq!((server.count(), skipped.total()), (3, 1), "{skipped}");
    let (r, rejected) = skipped.iter().next().unwrap();
    assert_eq!(r, reason);
    assert_eq!(rejected.first_at, format!("{} row {row}", path.display()));
    // The place names the row, the error says what is wrong with it.
    assert!(!rejected.first_error.starts_with("row "), "{rejected:?}");
    for n in &needles[1..] {
        assert!(
            rejected.first_error.contains(n),
            "{n:?} not in {rejected:?}"
        );
    }
}

#[test]
fn an_smp_row_with_two_reports_or_none_is_invalid() {
    let smp = grr(Solution::Smp);
    let path = crafted(
        "smp-two.parquet",
        &smp,
        &[
            vec![Some(1), None, Some(4), None],
            vec![None, Some(2), Some(0), None],
            vec![None, None, None, Some(11)],
        ],
    );
    refused_then_skipped(
        &path,
        &smp,
        &["row 2", "exactly one attribute", "2 of its 3 columns"],
        Reason::Length,
        2,
    );
    let path = crafted(
        "smp-none.parquet",
        &smp,
        &[
            vec![Some(1), None, None, None],
            vec![None, Some(2), None, None],
            vec![None, None, None, Some(11)],
        ],
    );
    refused_then_skipped(
        &path,
        &smp,
        &["row 2", "0 of its 3 columns"],
        Reason::Length,
        2,
    );
}

#[test]
fn an_rs_row_with_a_null_is_invalid() {
    let rsfd = grr(Solution::RsFd);
    let path = crafted(
        "rsfd-null.parquet",
        &rsfd,
        &[
            vec![Some(1), Some(0), Some(4), Some(3)],
            vec![Some(0), Some(2), None, Some(1)],
            vec![Some(5), Some(6), Some(7), Some(11)],
        ],
    );
    refused_then_skipped(
        &path,
        &rsfd,
        &[
            "row 2",
            "attribute 1: the report is null",
            "RS+FD reports every attribute",
        ],
        Reason::Null,
        2,
    );
}

#[test]
fn a_value_outside_its_domain_is_invalid() {
    let spl = grr(Solution::Spl);
    let path = crafted(
        "spl-range.parquet",
        &spl,
        &[
            vec![Some(1), Some(0), Some(4), Some(3)],
            vec![Some(0), Some(3), Some(2), Some(1)],
            vec![Some(5), Some(6), Some(7), Some(11)],
        ],
    );
    refused_then_skipped(
        &path,
        &spl,
        &["row 1", "attribute 1: field `y`: value 3 is outside 0..3"],
        Reason::OutOfRange,
        1,
    );
}

#[test]
fn a_file_of_another_collection_is_refused_by_name() {
    let rsfd = grr(Solution::RsFd);
    let path = temp("rsfd-grr.parquet");
    let mut w = MultidimWriter::create(&path, rsfd.clone(), None).unwrap();
    w.write(&reports(&rsfd)).unwrap();
    w.finish().unwrap();
    let open = |spec: &MultidimSpec| {
        ParquetMultidimReports::open(&path, spec)
            .err()
            .unwrap()
            .to_string()
    };
    // Another solution, another budget.
    let err = open(&grr(Solution::Smp).spec());
    assert!(
        err.contains("holds reports of") && err.contains(r#""solution":"rsfd""#),
        "{err}"
    );
    let other_eps = Multidim::new(Solution::RsFd, eps(2.0), &domains(), Grr::new).unwrap();
    assert!(open(&other_eps.spec()).contains("holds reports of"));
    // Another number of attributes.
    let two = Multidim::new(Solution::RsFd, eps(1.0), &domains()[..2], Grr::new).unwrap();
    let err = open(&two.spec());
    assert!(
        err.contains("holds reports of") && err.contains(r#""k":12"#),
        "{err}"
    );
    // The one-attribute reader says the file holds several.
    let one = Grr::new(domains()[0], eps(1.0)).unwrap();
    let err = ParquetReports::open(&path, &one.spec())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("holds reports of several attributes"), "{err}");
    // And the reader of several says a file of one attribute holds one.
    let single = temp("one-attribute.parquet");
    let mut w = ReportWriter::create(&single, one, None).unwrap();
    w.write(&[GrrReport { y: 1 }]).unwrap();
    w.finish().unwrap();
    let err = ParquetMultidimReports::open(&single, &rsfd.spec())
        .err()
        .unwrap();
    assert!(
        matches!(&err, ArrowLdpError::InFile { error, .. } if matches!(**error, ArrowLdpError::OneAttribute { .. })),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("holds reports of one attribute ({\"k\":5"),
        "{err}"
    );
}

/// A file that records no spec is read as the expected collection's, but must have its
/// columns, and no more.
#[test]
fn a_file_without_a_spec_needs_the_columns_of_the_attributes() {
    let rsfd = grr(Solution::RsFd);
    let write = |name: &str, d: usize| {
        let path = temp(name);
        let fields: Vec<arrow_schema::Field> = (0..d)
            .map(|j| arrow_schema::Field::new(column_name(j), arrow_schema::DataType::UInt32, true))
            .collect();
        let schema = Arc::new(arrow_schema::Schema::new(fields));
        let arrays: Vec<ArrayRef> = (0..d)
            .map(|_| Arc::new(UInt32Array::from(vec![0, 1])) as ArrayRef)
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), arrays).unwrap();
        let mut w =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        path
    };
    let fitting = write("bare-3.parquet", 3);
    let files = ParquetMultidimReports::open(&fitting, &rsfd.spec()).unwrap();
    assert_eq!(files.unrecorded(), std::slice::from_ref(&fitting));
    let mut server = rsfd.aggregator();
    files.aggregate(&mut server).unwrap();
    assert_eq!(server.count(), 2);
    let err = ParquetMultidimReports::open(&write("bare-2.parquet", 2), &rsfd.spec())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("no `report_2` column"), "{err}");
    let err = ParquetMultidimReports::open(&write("bare-4.parquet", 4), &rsfd.spec())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("column `report_3`") && err.contains("more than the 3"),
        "{err}"
    );
}

/// The writer refuses a report of another solution's shape, naming it.
#[test]
fn the_writer_writes_valid_reports_only() {
    let smp = grr(Solution::Smp);
    let path = temp("writer-refuses.parquet");
    let mut w = MultidimWriter::create(&path, smp, None).unwrap();
    let err = w
        .write(&[
            MultidimReport::Sampled {
                attribute: 0,
                report: GrrReport { y: 1 },
            },
            MultidimReport::Every(vec![GrrReport { y: 1 }; 3]),
        ])
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("row 1: "), "{err}");
}
