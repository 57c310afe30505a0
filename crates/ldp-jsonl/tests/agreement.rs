//! The codec against serde_json: the writer writes the same bytes, and the reader accepts
//! exactly what serde_json accepts (objects only) and returns the same value.

use ldp_core::{GrrReport, LhReport, OnesReport, SheReport, SubsetReport};
use ldp_jsonl::JsonReport;
use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

fn same_bytes<R: JsonReport + Serialize>(r: &R) {
    let mut ours = Vec::new();
    r.write_json(&mut ours);
    let theirs = serde_json::to_vec(r).unwrap();
    assert_eq!(ours, theirs);
    // With a digit table for a domain holding the indices, the same bytes.
    static DIGITS: std::sync::OnceLock<ldp_jsonl::Digits> = std::sync::OnceLock::new();
    let digits = DIGITS.get_or_init(|| ldp_jsonl::Digits::for_domain(1 << 20));
    let mut tabled = Vec::new();
    r.write_json_with(digits, &mut tabled);
    assert_eq!(tabled, theirs);
}

/// Our reading of `line` equals serde_json's (for objects; arrays are refused by us).
fn same_reading<R>(line: &[u8])
where
    R: JsonReport + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let ours = R::parse_json(line);
    let first = line
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    let theirs = serde_json::from_slice::<R>(line);
    match (ours, theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{:?}", String::from_utf8_lossy(line)),
        (Err(_), Err(_)) => {}
        (Err(e), Ok(_)) => assert_ne!(
            first,
            Some(&b'{'),
            "{:?}: refused ({e}) but serde reads it",
            String::from_utf8_lossy(line)
        ),
        (Ok(a), Err(e)) => panic!(
            "{:?}: read {a:?} but serde says {e}",
            String::from_utf8_lossy(line)
        ),
    }
}

/// Spellings serde_json accepts for the same JSON, and some it does not.
fn respell(line: &str, choice: u8) -> String {
    match choice % 8 {
        0 => line.to_owned(),
        1 => line.replace(',', " , ").replace(':', " :\t"),
        2 => format!("  {line}\r"),
        3 => line.replace("[", "[ ").replace("]", " ]"),
        4 => line.replace("\"y\"", "\"\\u0079\""),
        5 => line.replace(":1", ":01").replace(",1", ",01"),
        6 => line.replace('}', ",\"z\":1}"),
        _ => line.replace(':', ": -0,\"x\":"),
    }
}

fn check_all<R>(r: &R)
where
    R: JsonReport + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    same_bytes(r);
    let canonical = serde_json::to_string(r).unwrap();
    assert_eq!(&R::parse_json(canonical.as_bytes()).unwrap(), r);
    for choice in 0..8 {
        same_reading::<R>(respell(&canonical, choice).as_bytes());
    }
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
        -3.0f64..3.0,
        Just(0.0),
        Just(-0.0),
        Just(1e-300),
        Just(1e300),
        (-1_000_000i64..1_000_000).prop_map(|v| v as f64),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_family_agrees_with_serde(
        y in any::<u32>(), seed in any::<u32>(), list in prop::collection::vec(0u32..1 << 20, 0..600),
        floats in prop::collection::vec(float(), 0..12),
    ) {
        check_all(&GrrReport { y });
        check_all(&LhReport { seed, y });
        check_all(&SubsetReport { subset: list.clone() });
        check_all(&OnesReport { ones: list });
        check_all(&SheReport { y: floats });
    }

    #[test]
    fn arbitrary_lines_are_read_as_serde_reads_them(line in prop::collection::vec(any::<u8>(), 0..40)) {
        same_reading::<GrrReport>(&line);
        same_reading::<LhReport>(&line);
        same_reading::<OnesReport>(&line);
        same_reading::<SheReport>(&line);
    }

    #[test]
    fn json_shaped_lines_are_read_as_serde_reads_them(
        key in prop_oneof![Just("y"), Just("ones"), Just("subset"), Just("seed"), Just("z")],
        values in prop::collection::vec(prop_oneof![
            Just("0".to_owned()), Just("-0".to_owned()), Just("1.5".to_owned()), Just("1e999".to_owned()),
            Just("007".to_owned()), Just("4294967296".to_owned()), Just("1E2".to_owned()), Just("-1".to_owned()),
            Just("true".to_owned()), Just("\"3\"".to_owned()), any::<u32>().prop_map(|v| v.to_string()),
            Just("18446744073709551616".to_owned()), Just("-9223372036854775809".to_owned()),
        ], 0..5),
        array in any::<bool>(),
    ) {
        let body = values.join(",");
        let value = if array { format!("[{body}]") } else { values.first().cloned().unwrap_or_default() };
        let line = format!("{{\"{key}\":{value}}}");
        same_reading::<GrrReport>(line.as_bytes());
        same_reading::<OnesReport>(line.as_bytes());
        same_reading::<SubsetReport>(line.as_bytes());
        same_reading::<SheReport>(line.as_bytes());
        let lh = format!("{{\"seed\":{value},\"y\":3}}");
        same_reading::<LhReport>(lh.as_bytes());
    }
}

#[test]
fn errors_name_the_field_and_never_quote_the_line() {
    let msg = |r: Result<GrrReport, ldp_jsonl::JsonError>| r.unwrap_err().to_string();
    assert_eq!(
        msg(GrrReport::parse_json(br#"{"y":-1}"#)),
        "field `y`: invalid value: integer `-1`, expected u32"
    );
    assert!(msg(GrrReport::parse_json(b"[1]")).contains("JSON object"));
    assert!(msg(GrrReport::parse_json(br#"{"y":1,"z":2}"#)).contains("unknown field `z`"));
    let she = SheReport::parse_json(br#"{"y":[1,1e999]}"#)
        .unwrap_err()
        .to_string();
    assert!(she.starts_with("field `y"), "{she}");
    let seed = LhReport::parse_json(br#"{"seed":1.5,"y":1}"#)
        .unwrap_err()
        .to_string();
    assert!(
        seed.starts_with("field `seed`: 1.5 is not a valid seed"),
        "{seed}"
    );
    let long = format!("{{\"y\":\"{}\"}}", "x".repeat(10_000));
    assert!(msg(GrrReport::parse_json(long.as_bytes())).len() < 200);
}

/// The longest report of a shape within a mechanism's limits.
trait Longest: JsonReport {
    fn longest(limits: &ldp_core::report::ReportLimits) -> Self;
}

impl Longest for GrrReport {
    fn longest(l: &ldp_core::report::ReportLimits) -> Self {
        GrrReport { y: l.values - 1 }
    }
}

impl Longest for SubsetReport {
    fn longest(l: &ldp_core::report::ReportLimits) -> Self {
        SubsetReport {
            subset: (l.values - l.entries..l.values).collect(),
        }
    }
}

impl Longest for OnesReport {
    fn longest(l: &ldp_core::report::ReportLimits) -> Self {
        OnesReport {
            ones: (l.values - l.entries..l.values).collect(),
        }
    }
}

impl Longest for LhReport {
    fn longest(l: &ldp_core::report::ReportLimits) -> Self {
        LhReport {
            seed: (l.seeds - 1) as u32,
            y: l.values - 1,
        }
    }
}

impl Longest for SheReport {
    fn longest(l: &ldp_core::report::ReportLimits) -> Self {
        SheReport {
            y: vec![-1.2345678901234567e-308; l.entries as usize],
        }
    }
}

/// The line cap is four times the longest canonical line plus 256: for every protocol,
/// the longest report its limits allow, written out, fits in it with that room to spare.
#[test]
fn the_line_cap_covers_the_longest_canonical_report_of_every_family() {
    use ldp_core::{DomainSize, Epsilon, Mechanism, Protocol, Spec, dispatch};
    fn longest_line<M: Mechanism<Report: Longest>>(m: &M) -> Vec<u8> {
        let mut line = Vec::new();
        M::Report::longest(&m.spec().report_limits()).write_json(&mut line);
        line
    }
    let (k, eps) = (DomainSize::new(1000).unwrap(), Epsilon::new(2.0).unwrap());
    for protocol in Protocol::CLASSIC {
        let spec = Spec::classic(protocol, k, eps).unwrap();
        let line = dispatch!(spec.build().unwrap(), m => longest_line(&m));
        assert!(
            4 * line.len() + 256 <= ldp_jsonl::max_line_len(&spec),
            "{protocol}: {} bytes",
            line.len()
        );
    }
}

/// A digit table made for a smaller domain than a report's indices (CMS's cells lie beyond
/// k) writes the same bytes as serde.
#[test]
fn a_small_digit_table_writes_larger_indices_too() {
    let digits = ldp_jsonl::Digits::for_domain(10);
    let report = OnesReport {
        ones: vec![5, 70, 1_000_000],
    };
    let mut out = Vec::new();
    report.write_json_with(&digits, &mut out);
    assert_eq!(out, serde_json::to_vec(&report).unwrap());
}
