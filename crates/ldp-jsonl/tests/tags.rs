//! Tags (user, survey, day) in report lines: written before the report's fields, read in
//! any position and spelling serde_json reads, and lines without them read as before.

use ldp_core::{GrrReport, LhReport, OnesReport, ReportTags, SheReport};
use ldp_jsonl::{Digits, JsonReport, write_tagged};
use proptest::prelude::*;
use serde::Serialize;

/// What serde_json makes of the tagged line: the object with the tags and the report's
/// fields merged (the tags first).
fn merged<R: Serialize>(tags: &ReportTags, report: &R) -> serde_json::Value {
    let mut object = serde_json::to_value(tags).unwrap();
    let fields = serde_json::to_value(report).unwrap();
    let map = object.as_object_mut().unwrap();
    map.extend(fields.as_object().unwrap().clone());
    object
}

fn tags(user: Option<&str>, survey: Option<&str>, day: Option<u32>) -> ReportTags {
    ReportTags {
        user: user.map(str::to_owned),
        survey: survey.map(str::to_owned),
        day,
    }
}

proptest! {
    #[test]
    fn tagged_lines_round_trip(
        user in proptest::option::of("\\PC{0,12}"),
        survey in proptest::option::of("[a-z\"\\\\é\\n]{0,8}"),
        day in proptest::option::of(any::<u32>()),
        seed in any::<u32>(),
        y in 0u32..1000,
        ones in proptest::collection::btree_set(0u32..500, 0..6),
    ) {
        let tags = tags(user.as_deref(), survey.as_deref(), day);
        let lh = LhReport { seed, y };
        let mut line = Vec::new();
        write_tagged(&tags, &lh, &Digits::default(), &mut line);
        // Valid JSON, the same object serde_json would write.
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        prop_assert_eq!(value, merged(&tags, &lh));
        prop_assert_eq!(LhReport::parse_tagged(&line).unwrap(), (tags.clone(), lh));
        let ue = OnesReport { ones: ones.into_iter().collect() };
        line.clear();
        write_tagged(&tags, &ue, &Digits::default(), &mut line);
        prop_assert_eq!(OnesReport::parse_tagged(&line).unwrap(), (tags, ue));
    }
}

#[test]
fn untagged_lines_read_as_before() {
    for line in [&br#"{"y":4}"#[..], br#" { "y" : 4 } "#, br#"{"\u0079":4}"#] {
        assert_eq!(
            GrrReport::parse_tagged(line).unwrap(),
            (ReportTags::default(), GrrReport::parse_json(line).unwrap())
        );
    }
    // The same errors, word for word.
    for line in [
        &br#"{"y":-1}"#[..],
        br#"{"y":1,"z":2}"#,
        b"[1]",
        b"",
        br#"{"y":[1,2]}"#,
        br#"{"y":1,"y":7}"#,
        br#"{"y":1,}"#,
    ] {
        assert_eq!(
            GrrReport::parse_tagged(line).unwrap_err(),
            GrrReport::parse_json(line).unwrap_err(),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
}

#[test]
fn tags_anywhere_and_in_any_spelling_are_read() {
    let want = tags(Some("u\"1"), Some("daily"), Some(30));
    for line in [
        &br#"{"y":[0.5,-1e-3],"day":30,"survey":"daily","user":"u\"1"}"#[..],
        br#"{"day":30,"y":[0.5,-1e-3],"user":"u\"1","survey":"daily"}"#,
        br#"{ "user" : "u\"1" , "survey" : "\u0064aily" , "day" : 30 , "y" : [0.5,-1e-3] }"#,
    ] {
        let (tags, report) = SheReport::parse_tagged(line).unwrap();
        assert_eq!(tags, want, "{}", String::from_utf8_lossy(line));
        assert_eq!(
            report,
            SheReport {
                y: vec![0.5, -1e-3]
            }
        );
    }
}

#[test]
fn bad_tags_are_named() {
    let err = |line: &[u8]| GrrReport::parse_tagged(line).unwrap_err().to_string();
    assert_eq!(
        err(br#"{"user":"a","user":"b","y":1}"#),
        "field `user`: given twice"
    );
    assert!(err(br#"{"user":"a"}"#).contains("tags but no report"));
    assert!(err(br#"{"user":17,"y":1}"#).contains("field `user`: expected a string, got a number"));
    assert!(
        err(br#"{"y":1,"survey":null}"#).contains("field `survey`: expected a string, got null")
    );
    for day in ["-1", "1.5", "4294967296", "\"3\""] {
        let line = format!(r#"{{"day":{day},"y":1}}"#);
        assert!(
            err(line.as_bytes()).starts_with("field `day`: expected an integer in 0..=4294967295"),
            "{day}: {}",
            err(line.as_bytes())
        );
    }
    // A key given twice anywhere, a tag or the report's own, once tags are about.
    assert_eq!(err(br#"{"y":1,"y":7,"day":3}"#), "field `y`: given twice");
    assert_eq!(
        err(br#"{"y":4,"user":"a","user":"b","day":1}"#),
        "field `user`: given twice"
    );
    assert_eq!(
        err(br#"{"user":"a","survey":"s","day":1,"y":4,"user":"b"}"#),
        "field `user`: given twice"
    );
    // A broken line that names a tag says what breaks it.
    assert!(err(br#"{"seed":7,"y":1,"day":12,}"#).starts_with("trailing comma"));
    // The report's own errors still come through behind valid tags.
    assert_eq!(
        err(br#"{"day":3,"y":1,"z":2}"#),
        "field `z`: unknown field `z`, expected `y`"
    );
}

#[test]
fn read_tags_checks_the_whole_line() {
    use ldp_jsonl::read_tags;
    let tags = read_tags(br#"{"user":"u","survey":"s","day":1,"ones":[2]}"#).unwrap();
    assert_eq!(tags, self::tags(Some("u"), Some("s"), Some(1)));
    // Truncated after valid tags, a key twice, not an object.
    assert!(read_tags(br#"{"user":"u","survey":"s","day":1,"y":"#).is_err());
    assert_eq!(
        read_tags(br#"{"user":"a","survey":"s","day":1,"y":4,"user":"b"}"#)
            .unwrap_err()
            .to_string(),
        "field `user`: given twice"
    );
    assert!(
        read_tags(b"[1]")
            .unwrap_err()
            .to_string()
            .contains("JSON object")
    );
}
