//! Arrow and Parquet round trips of every family, the spec in the file, refusal of a
//! mismatched spec, row-naming errors, and the choice of set encoding.

use std::path::PathBuf;

use arrow_array::{Array, ArrayRef, FixedSizeBinaryArray, UInt32Array};
use ldp_arrow::{
    ArrowLdpError, ArrowReports, ParquetReports, ReportWriter, SetEncoding, read_spec,
};
use ldp_core::simulation::{Role, perturb_all};
use ldp_core::{
    Aggregator, AnyMechanism, DomainSize, Epsilon, Mechanism, Protocol, Spec, dispatch,
};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ldp-arrow-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn mechanisms(k: u32, eps: f64) -> Vec<(Protocol, AnyMechanism)> {
    let (k, eps) = (DomainSize::new(k).unwrap(), Epsilon::new(eps).unwrap());
    Protocol::CLASSIC
        .into_iter()
        .map(|p| (p, Spec::classic(p, k, eps).unwrap().build().unwrap()))
        .collect()
}

fn round_trip<M>(m: &M, encoding: SetEncoding, name: &str)
where
    M: ArrowReports,
    M::Aggregator: PartialEq,
{
    let k = m.domain_size().get();
    let items: Vec<u32> = (0..3000).map(|i| (i * 7) % k).collect();
    let reports = perturb_all(m, &items, 5, 0, Role::Genuine).unwrap();
    // Arrow, both ways.
    let array = m.to_array(&reports, encoding);
    assert_eq!(array.data_type(), &m.report_type(encoding));
    assert_eq!(m.reports_from_array(&array).unwrap(), reports, "{name}");
    // Aggregating the array equals aggregating the reports.
    let mut direct = m.aggregator();
    for r in &reports {
        direct.add(r).unwrap();
    }
    let mut via_array = m.aggregator();
    m.aggregate_array(&mut via_array, &array, 0).unwrap();
    assert_eq!(via_array, direct, "{name}");
    // A slice of the array (what query engines hand over) reads as the slice's reports.
    let slice = array.slice(500, 1200);
    assert_eq!(
        m.reports_from_array(&slice).unwrap(),
        &reports[500..1700],
        "{name}"
    );
    let mut direct_slice = m.aggregator();
    for r in &reports[500..1700] {
        direct_slice.add(r).unwrap();
    }
    let mut via_slice = m.aggregator();
    m.aggregate_array(&mut via_slice, &slice, 0).unwrap();
    assert_eq!(via_slice, direct_slice, "{name}");
    // Parquet, in two batches, with the spec in the metadata.
    let path = temp(&format!("{name}.parquet"));
    let mut w = ReportWriter::create(&path, m.clone(), Some(encoding)).unwrap();
    w.write(&reports[..1000]).unwrap();
    w.write(&reports[1000..]).unwrap();
    w.finish().unwrap();
    assert_eq!(read_spec(&path).unwrap(), m.spec());
    let files = ParquetReports::open(&path, &m.spec()).unwrap();
    let mut from_file = m.aggregator();
    files.aggregate(m, &mut from_file).unwrap();
    assert_eq!(from_file, direct, "{name}");
    let mut read = Vec::new();
    files
        .for_each_batch(|column, _| {
            read.extend(m.reports_from_array(column)?);
            Ok(())
        })
        .unwrap();
    assert_eq!(read, reports, "{name}");
}

#[test]
fn every_family_round_trips_through_arrow_and_parquet() {
    for (p, any) in mechanisms(37, 1.5) {
        for encoding in [SetEncoding::List, SetEncoding::Bitmap] {
            let name = format!("{}-{}", p.name(), encoding.name());
            dispatch!(&any, m => round_trip(m, encoding, &name));
        }
    }
}

#[test]
fn a_file_of_another_mechanism_is_refused() {
    let (k, eps) = (DomainSize::new(10).unwrap(), Epsilon::new(1.0).unwrap());
    let olh = Spec::classic(Protocol::Olh, k, eps).unwrap();
    let AnyMechanism::LocalHashing(m) = olh.build().unwrap() else {
        unreachable!()
    };
    let path = temp("olh-mismatch.parquet");
    let mut w = ReportWriter::create(&path, m.clone(), None).unwrap();
    w.write(&[ldp_core::LhReport { seed: 1, y: 0 }]).unwrap();
    w.finish().unwrap();
    let blh = Spec::classic(Protocol::Blh, k, eps).unwrap();
    let err = ParquetReports::open(&path, &blh).err().unwrap().to_string();
    assert!(err.contains("holds reports of"), "{err}");
    let other_eps = Spec::classic(Protocol::Olh, k, Epsilon::new(1.5).unwrap()).unwrap();
    assert!(ParquetReports::open(&path, &other_eps).is_err());
    assert!(ParquetReports::open(&path, &olh).is_ok());
}

#[test]
fn other_writers_field_names_and_nullability_are_accepted_and_null_entries_named() {
    use arrow_array::{FixedSizeListArray, Float64Array, ListArray, StructArray};
    use arrow_buffer::OffsetBuffer;
    use arrow_schema::{DataType, Field};
    use std::sync::Arc;
    let (k, eps) = (DomainSize::new(4).unwrap(), Epsilon::new(1.0).unwrap());
    // Parquet's own name for list items, nullable, with a null inside row 1.
    let oue = ldp_core::UnaryEncoding::optimized(k, eps).unwrap();
    let item = Arc::new(Field::new("element", DataType::UInt32, true));
    let sets = |values: Vec<Option<u32>>| -> ArrayRef {
        Arc::new(ListArray::new(
            item.clone(),
            OffsetBuffer::from_lengths([1, 2]),
            Arc::new(UInt32Array::from(values)),
            None,
        ))
    };
    let mut server = oue.aggregator();
    oue.aggregate_array(&mut server, &sets(vec![Some(0), Some(1), Some(3)]), 0)
        .unwrap();
    assert_eq!(server.counts(), &[1, 1, 0, 1]);
    let err = oue
        .aggregate_array(
            &mut oue.aggregator(),
            &sets(vec![Some(0), Some(1), None]),
            7,
        )
        .unwrap_err();
    assert!(matches!(err, ArrowLdpError::Null { row: 8 }), "{err}");
    // LH with nullable fields.
    let olh = ldp_core::LocalHashing::optimized(k, eps).unwrap();
    let lh: ArrayRef = Arc::new(StructArray::new(
        vec![
            Field::new("seed", DataType::UInt32, true),
            Field::new("y", DataType::UInt32, true),
        ]
        .into(),
        vec![
            Arc::new(UInt32Array::from(vec![5, 6])),
            Arc::new(UInt32Array::from(vec![Some(0), None])),
        ],
        None,
    ));
    let err = olh
        .aggregate_array(&mut olh.aggregator(), &lh, 0)
        .unwrap_err();
    assert!(matches!(err, ArrowLdpError::Null { row: 1 }), "{err}");
    // SHE with a null value in the third report.
    let she = ldp_core::SummationHistogram::new(k, eps).unwrap();
    let mut values: Vec<Option<f64>> = vec![Some(0.5); 12];
    values[9] = None;
    let y: ArrayRef = Arc::new(FixedSizeListArray::new(
        Arc::new(Field::new("element", DataType::Float64, true)),
        4,
        Arc::new(Float64Array::from(values)),
        None,
    ));
    let err = she
        .aggregate_array(&mut she.aggregator(), &y, 0)
        .unwrap_err();
    assert!(matches!(err, ArrowLdpError::Null { row: 2 }), "{err}");
}

#[test]
fn invalid_rows_are_named() {
    let (k, eps) = (DomainSize::new(10).unwrap(), Epsilon::new(1.0).unwrap());
    let grr = ldp_core::Grr::new(k, eps).unwrap();
    let array: ArrayRef = std::sync::Arc::new(UInt32Array::from(vec![1, 2, 3, 4, 5, 10, 1]));
    let mut server = grr.aggregator();
    let err = grr.aggregate_array(&mut server, &array, 100).unwrap_err();
    assert!(matches!(err, ArrowLdpError::Row { row: 105, .. }), "{err}");
    assert!(
        err.to_string().contains("value 10 is outside 0..10"),
        "{err}"
    );
    let nulls: ArrayRef = std::sync::Arc::new(UInt32Array::from(vec![Some(1), None]));
    assert!(matches!(
        grr.aggregate_array(&mut grr.aggregator(), &nulls, 0),
        Err(ArrowLdpError::Null { row: 1 })
    ));
    // A bitmap bit beyond k (bit 10 of a 2-byte map for k = 10).
    let oue = ldp_core::UnaryEncoding::optimized(k, eps).unwrap();
    let bad: ArrayRef = std::sync::Arc::new(
        FixedSizeBinaryArray::try_from_iter([[1u8, 0], [0, 4]].into_iter()).unwrap(),
    );
    let err = oue
        .aggregate_array(&mut oue.aggregator(), &bad, 0)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("row 1: field `ones`: value 10 is outside 0..10"),
        "{err}"
    );
    // The wrong type altogether.
    let err = oue.reports_from_array(&array).unwrap_err();
    assert!(matches!(err, ArrowLdpError::Type { .. }), "{err}");
}

/// Parquet bytes per report of each set encoding, and the rule that picks one.
fn file_bytes(spec: &Spec, encoding: SetEncoding, n: u32) -> f64 {
    let any = spec.build().unwrap();
    let k = spec.k().get();
    let items: Vec<u32> = (0..n).map(|i| (i * 7919) % k).collect();
    let path = temp(&format!("size-{}-{}-{}.parquet", k, encoding.name(), n));
    dispatch!(&any, m => {
        let reports = perturb_all(m, &items, 1, 0, Role::Genuine).unwrap();
        let mut w = ReportWriter::create(&path, m.clone(), Some(encoding)).unwrap();
        w.write(&reports).unwrap();
        w.finish().unwrap();
    });
    std::fs::metadata(&path).unwrap().len() as f64 / f64::from(n)
}

#[test]
fn the_chosen_set_encoding_is_the_smaller_file() {
    for k in [100, 1000, 10_000] {
        for (p, eps) in [
            (Protocol::Oue, 1.0),
            (Protocol::Oue, 6.0),
            (Protocol::Sue, 2.0),
            (Protocol::The, 4.0),
            (Protocol::Ss, 1.0),
            (Protocol::Ss, 6.0),
        ] {
            let spec =
                Spec::classic(p, DomainSize::new(k).unwrap(), Epsilon::new(eps).unwrap()).unwrap();
            // Enough reports that the footer (about 1 KB) is noise.
            let n = 4_000_000 / k;
            let list = file_bytes(&spec, SetEncoding::List, n);
            let bitmap = file_bytes(&spec, SetEncoding::Bitmap, n);
            let (chosen, other) = match SetEncoding::smaller_for(&spec) {
                SetEncoding::List => (list, bitmap),
                SetEncoding::Bitmap => (bitmap, list),
            };
            // The rule may miss by a little where the two are close.
            assert!(
                chosen <= other * 1.1,
                "{p} k = {k} eps = {eps}: list {list:.1} B, bitmap {bitmap:.1} B per report"
            );
        }
    }
}

#[test]
fn skipping_leaves_out_invalid_and_null_rows_and_counts_them() {
    use ldp_core::{Reason, Rejections};
    use std::sync::Arc;
    let (k, eps) = (DomainSize::new(10).unwrap(), Epsilon::new(1.0).unwrap());
    let grr = ldp_core::Grr::new(k, eps).unwrap();
    let at = |row: u64| format!("row {row}");
    // Rows 100..107: two out of range, one null.
    let array: ArrayRef = Arc::new(UInt32Array::from(vec![
        Some(1),
        Some(10),
        None,
        Some(3),
        Some(12),
        Some(3),
        Some(9),
    ]));
    let mut server = grr.aggregator();
    let mut skipped = Rejections::default();
    grr.aggregate_array_skipping(&mut server, &array, 100, 0, &mut skipped, &at)
        .unwrap();
    let valid: ArrayRef = Arc::new(UInt32Array::from(vec![1, 3, 3, 9]));
    let mut expected = grr.aggregator();
    grr.aggregate_array(&mut expected, &valid, 0).unwrap();
    assert_eq!(server, expected);
    assert_eq!(skipped.count(Reason::OutOfRange), 2);
    assert_eq!(skipped.count(Reason::Null), 1);
    let (_, first) = skipped
        .iter()
        .find(|(r, _)| *r == Reason::OutOfRange)
        .unwrap();
    assert_eq!(first.first_at, "row 101");
    // The same rows as reports.
    let mut again = Rejections::default();
    let reports = grr
        .reports_from_array_skipping(&array, 100, 0, &mut again, &at)
        .unwrap();
    assert_eq!(reports.len(), 4);
    assert_eq!(again, skipped);
    // A column of another type is not one client's report: still an error.
    let oue = ldp_core::UnaryEncoding::optimized(k, eps).unwrap();
    let err = oue
        .reports_from_array_skipping(&array, 0, 0, &mut Rejections::default(), &at)
        .unwrap_err();
    assert!(matches!(err, ArrowLdpError::Type { .. }), "{err}");
}

/// Issue 24, item 5: each file counts once, whatever links a directory holds, and what is
/// not a regular file is refused.
#[cfg(unix)]
#[test]
fn directory_links_are_not_followed_and_each_file_counts_once() {
    use std::os::unix::fs::symlink;
    let root = temp("links");
    let _ = std::fs::remove_dir_all(&root);
    let day2 = root.join("day2");
    std::fs::create_dir_all(&day2).unwrap();
    let (k, eps) = (DomainSize::new(4).unwrap(), Epsilon::new(1.0).unwrap());
    let grr = ldp_core::Grr::new(k, eps).unwrap();
    let mut w = ReportWriter::create(&day2.join("a.parquet"), grr.clone(), None).unwrap();
    w.write(&[ldp_core::GrrReport { y: 1 }]).unwrap();
    w.finish().unwrap();
    symlink(&day2, root.join("latest")).unwrap();
    symlink(&root, root.join("loop")).unwrap();
    symlink(day2.join("a.parquet"), root.join("also-a.parquet")).unwrap();
    let files = ldp_arrow::parquet_files(&root).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    let mut server = grr.aggregator();
    ParquetReports::open(&root, &grr.spec())
        .unwrap()
        .aggregate(&grr, &mut server)
        .unwrap();
    assert_eq!(server.count(), 1);
    // A FIFO named like a report file.
    let fifo = root.join("x.parquet");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let err = ldp_arrow::parquet_files(&root).unwrap_err();
        assert!(matches!(err, ArrowLdpError::NotAFile(_)), "{err}");
        let err = ldp_arrow::parquet_files(&fifo).unwrap_err();
        assert!(err.to_string().ends_with("not a regular file"), "{err}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Issue 24: a file whose writer dropped the spec (a pandas or Spark job that rewrote the
/// reports) is read as the mechanism the caller names, and listed so the caller can say
/// so; a file recording another spec is still refused.
#[test]
fn a_file_without_a_spec_is_read_as_the_expected_mechanism() {
    use std::sync::Arc;
    let (k, eps) = (DomainSize::new(5).unwrap(), Epsilon::new(1.0).unwrap());
    let grr = ldp_core::Grr::new(k, eps).unwrap();
    let path = temp("no-spec.parquet");
    let column: ArrayRef = Arc::new(UInt32Array::from(vec![1, 2, 2, 4]));
    let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "report",
        arrow_schema::DataType::UInt32,
        false,
    )]));
    let batch = arrow_array::RecordBatch::try_new(schema.clone(), vec![column]).unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    assert!(matches!(read_spec(&path), Err(ArrowLdpError::NoSpec)));
    let files = ParquetReports::open(&path, &grr.spec()).unwrap();
    assert_eq!(files.unrecorded(), std::slice::from_ref(&path));
    let mut server = grr.aggregator();
    files.aggregate(&grr, &mut server).unwrap();
    assert_eq!(server.counts(), &[0, 1, 2, 0, 1]);
    std::fs::remove_file(&path).unwrap();
}

/// Issue 43, item 9: a file with two columns named `report` was read from the first one,
/// silently; it is ambiguous, and refused as pyarrow refuses it.
#[test]
fn a_file_with_two_report_columns_is_refused() {
    use std::sync::Arc;

    use arrow_array::RecordBatch;
    use arrow_schema::{DataType, Field, Schema};

    let grr = ldp_core::Grr::new(DomainSize::new(5).unwrap(), Epsilon::new(1.0).unwrap()).unwrap();
    let spec = grr.spec();
    let schema = Arc::new(Schema::new(vec![
        Field::new("report", DataType::UInt32, false),
        Field::new("report", DataType::UInt32, false),
    ]));
    let path = temp("two-report-columns.parquet");
    let file = std::fs::File::create(&path).unwrap();
    let properties = ldp_arrow::writer_properties(&spec, SetEncoding::List);
    let mut w =
        parquet::arrow::ArrowWriter::try_new(file, schema.clone(), Some(properties)).unwrap();
    let first: ArrayRef = Arc::new(UInt32Array::from(vec![1u32, 2]));
    let second: ArrayRef = Arc::new(UInt32Array::from(vec![3u32, 4]));
    w.write(&RecordBatch::try_new(schema, vec![first, second]).unwrap())
        .unwrap();
    w.close().unwrap();
    let files = ParquetReports::open(&path, &spec).unwrap();
    let mut server = grr.aggregator();
    let err = files.aggregate(&grr, &mut server).unwrap_err();
    assert!(
        err.to_string().contains("2 columns named `report`"),
        "{err}"
    );
    assert_eq!(server.count(), 0);
}

/// Issue 43, item 14: files compressed as other writers do (pyarrow's `compression=`:
/// zstd, gzip, brotli, lz4) were refused ("Disabled feature at compile time").
#[test]
fn files_in_every_common_compression_are_read() {
    use std::sync::Arc;

    use arrow_array::RecordBatch;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
    use parquet::file::properties::WriterProperties;

    let k = DomainSize::new(50).unwrap();
    let m = Spec::classic(Protocol::Oue, k, Epsilon::new(1.0).unwrap())
        .unwrap()
        .build()
        .unwrap();
    dispatch!(m, m => {
        let items: Vec<u32> = (0..2000).map(|i| (i * 13) % 50).collect();
        let reports = perturb_all(&m, &items, 3, 0, Role::Genuine).unwrap();
        let mut direct = m.aggregator();
        for r in &reports {
            direct.add(r).unwrap();
        }
        let schema = Arc::new(ldp_arrow::report_schema(&m, SetEncoding::List));
        let column = m.to_array(&reports, SetEncoding::List);
        let batch = RecordBatch::try_new(schema.clone(), vec![column]).unwrap();
        for (name, codec) in [
            ("zstd", Compression::ZSTD(ZstdLevel::default())),
            ("gzip", Compression::GZIP(GzipLevel::default())),
            ("brotli", Compression::BROTLI(BrotliLevel::default())),
            ("lz4", Compression::LZ4_RAW),
            ("lz4-hadoop", Compression::LZ4),
            ("none", Compression::UNCOMPRESSED),
        ] {
            let path = temp(&format!("codec-{name}.parquet"));
            let file = std::fs::File::create(&path).unwrap();
            let props = WriterProperties::builder().set_compression(codec).build();
            let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            let files = ParquetReports::open(&path, &m.spec()).unwrap();
            let mut read = m.aggregator();
            files.aggregate(&m, &mut read).unwrap();
            assert!(read == direct, "{name}");
        }
    });
}

/// Issue 44, item 4: pandas writes integer columns as Int64. A GRR column or an LH struct
/// of any integer type is read as UInt32 where every value fits, and a value that does not
/// is refused naming its row and field; a float column is still the wrong type.
#[test]
fn integer_columns_of_any_type_are_cast_losslessly() {
    use arrow_array::{Float64Array, Int64Array, StructArray, UInt64Array};
    use arrow_schema::{DataType, Field};
    use std::sync::Arc;

    let (k, eps) = (DomainSize::new(16).unwrap(), Epsilon::new(1.0).unwrap());
    let grr = ldp_core::Grr::new(k, eps).unwrap();
    let wide: ArrayRef = Arc::new(Int64Array::from(vec![3, 0, 15]));
    let narrow: ArrayRef = Arc::new(UInt32Array::from(vec![3, 0, 15]));
    assert_eq!(
        grr.reports_from_array(&wide).unwrap(),
        grr.reports_from_array(&narrow).unwrap()
    );
    let negative: ArrayRef = Arc::new(Int64Array::from(vec![3, -1]));
    let err = grr.reports_from_array(&negative).unwrap_err();
    assert!(
        matches!(err, ArrowLdpError::OutOfRange { row: 1, .. }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "row 1: y = -1 does not fit in UInt32 (the column is Int64: its values from 0 to 4294967295 are taken as they are, others refused)"
    );
    assert!(matches!(
        err.offset_rows(100),
        ArrowLdpError::OutOfRange { row: 101, .. }
    ));
    let huge: ArrayRef = Arc::new(UInt64Array::from(vec![1u64 << 40]));
    assert!(matches!(
        grr.reports_from_array(&huge).unwrap_err(),
        ArrowLdpError::OutOfRange { row: 0, .. }
    ));
    // Skipping: the row that does not fit is left out and counted as out of range.
    let mut skipped = ldp_core::Rejections::default();
    let at = |row: u64| format!("row {row}");
    let kept = grr
        .reports_from_array_skipping(&negative, 10, 0, &mut skipped, &at)
        .unwrap();
    assert_eq!(kept, grr.reports_from_array(&narrow).unwrap()[..1].to_vec());
    assert_eq!(
        skipped.count(ldp_core::Reason::OutOfRange),
        1,
        "{skipped:?}"
    );
    let float: ArrayRef = Arc::new(Float64Array::from(vec![3.0]));
    assert!(matches!(
        grr.reports_from_array(&float).unwrap_err(),
        ArrowLdpError::Type { .. }
    ));

    // An LH struct as pyarrow infers it from pandas' dicts: Struct<seed: Int64, y: Int64>.
    let olh = Spec::classic(Protocol::Olh, k, eps)
        .unwrap()
        .build()
        .unwrap();
    let lh_struct = |seeds: Vec<i64>, ys: Vec<i64>| -> ArrayRef {
        Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("seed", DataType::Int64, true)),
                Arc::new(Int64Array::from(seeds)) as ArrayRef,
            ),
            (
                Arc::new(Field::new("y", DataType::Int64, true)),
                Arc::new(Int64Array::from(ys)) as ArrayRef,
            ),
        ]))
    };
    dispatch!(&olh, m => {
        let reports = m.reports_from_array(&lh_struct(vec![7, 4_000_000_000], vec![1, 0])).unwrap();
        assert_eq!(reports.len(), 2);
        let back = m.reports_from_array(&m.to_array(&reports, SetEncoding::List)).unwrap();
        assert_eq!(back, reports);
        let err = m.reports_from_array(&lh_struct(vec![7, 5_000_000_000], vec![1, 0])).unwrap_err();
        assert!(err.to_string().starts_with("row 1: seed = 5000000000 does not fit in UInt32"), "{err}");
    });
}

/// Tag columns (user, survey, day) beside the reports: the reports aggregate as without
/// them, the tags read back row by row in any column order, and a tag column of another
/// type is named.
#[test]
fn tagged_files_aggregate_as_untagged_and_give_their_tags_back() {
    use arrow_array::{RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use ldp_arrow::tags::for_each_tags;
    use ldp_core::ReportTags;
    use std::sync::Arc;
    for (protocol, m) in mechanisms(20, 1.0) {
        dispatch!(m, m => {
            let items: Vec<u32> = (0..500).map(|i| (i * 3) % 20).collect();
            let reports = perturb_all(&m, &items, 9, 0, Role::Genuine).unwrap();
            let tags = ReportTags { user: Some("u7".into()), survey: Some("daily".into()), day: Some(12) };
            let (plain, tagged) = (temp(&format!("plain-{protocol:?}.parquet")), temp(&format!("tagged-{protocol:?}.parquet")));
            let mut w = ReportWriter::create(&plain, m.clone(), None).unwrap();
            w.write(&reports).unwrap();
            w.finish().unwrap();
            let mut w = ReportWriter::create_tagged(&tagged, m.clone(), None, tags.clone()).unwrap();
            w.write(&reports[..200]).unwrap();
            w.write(&reports[200..]).unwrap();
            w.finish().unwrap();
            let aggregate = |path: &PathBuf| {
                let mut server = m.aggregator();
                ParquetReports::open(path, &m.spec()).unwrap().aggregate(&m, &mut server).unwrap();
                server
            };
            assert!(aggregate(&plain) == aggregate(&tagged), "{protocol:?}");
            let mut read = Vec::new();
            for_each_tags::<ArrowLdpError>(&tagged, |row, t| {
                read.push((row, t));
                Ok(())
            })
            .unwrap();
            assert_eq!(read.len(), 500);
            assert!(read.iter().enumerate().all(|(i, (row, t))| *row == i as u64 && *t == tags));
            // An untagged file: every row, no tags.
            let mut rows = 0;
            for_each_tags::<ArrowLdpError>(&plain, |_, t| {
                assert!(t.is_empty());
                rows += 1;
                Ok(())
            })
            .unwrap();
            assert_eq!(rows, 500);
        });
    }
    // Columns in another order, with a null, written by another writer.
    let schema = Arc::new(Schema::new(vec![
        Field::new("day", DataType::UInt32, true),
        Field::new("report", DataType::UInt32, false),
        Field::new("user", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(UInt32Array::from(vec![Some(3), None])) as ArrayRef,
            Arc::new(UInt32Array::from(vec![0, 1])),
            Arc::new(StringArray::from(vec!["a", "b"])),
        ],
    )
    .unwrap();
    let path = temp("reordered.parquet");
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let mut read = Vec::new();
    for_each_tags::<ArrowLdpError>(&path, |_, t| {
        read.push(t);
        Ok(())
    })
    .unwrap();
    let tag = |user: &str, day| ReportTags {
        user: Some(user.into()),
        survey: None,
        day,
    };
    assert_eq!(read, vec![tag("a", Some(3)), tag("b", None)]);
    // A day written as text.
    let schema = Arc::new(Schema::new(vec![Field::new("day", DataType::Utf8, false)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(StringArray::from(vec!["3"])) as ArrayRef],
    )
    .unwrap();
    let path = temp("text-day.parquet");
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let err = for_each_tags::<ArrowLdpError>(&path, |_, _| Ok(()))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("column `day` has type Utf8, but its tag is UInt32"),
        "{err}"
    );
}
