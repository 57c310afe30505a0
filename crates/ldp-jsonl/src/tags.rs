//! A report's tags ([`ReportTags`]: user, survey, day) in its JSON line, before the
//! report's own fields: `{"user":"u17","survey":"daily","day":3,"y":4}`.
//!
//! [`write_tagged`] writes them in that order; [`JsonReport::parse_tagged`] reads them in
//! any order and position, and lines without them as before. The report's own parse
//! still refuses every other unknown field.

use std::borrow::Cow;

use ldp_core::ReportTags;
use serde_json::{Map, Value};

use crate::{Digits, JsonError, JsonReport};

/// The keys of the tags, in their canonical order.
pub const TAG_KEYS: [&str; 3] = ["user", "survey", "day"];

/// Appends `report`'s line with `tags` before its own fields (the report's own canonical
/// line when no tag is set).
///
/// ```
/// use ldp_core::{GrrReport, ReportTags};
/// use ldp_jsonl::{Digits, JsonReport, write_tagged};
/// let tags = ReportTags { user: Some("u17".into()), survey: Some("daily".into()), day: Some(3) };
/// let mut line = Vec::new();
/// write_tagged(&tags, &GrrReport { y: 4 }, &Digits::default(), &mut line);
/// assert_eq!(line, br#"{"user":"u17","survey":"daily","day":3,"y":4}"#);
/// assert_eq!(GrrReport::parse_tagged(&line)?, (tags, GrrReport { y: 4 }));
/// # Ok::<(), ldp_jsonl::JsonError>(())
/// ```
pub fn write_tagged<R: JsonReport>(
    tags: &ReportTags,
    report: &R,
    digits: &Digits,
    out: &mut Vec<u8>,
) {
    let start = out.len();
    report.write_json_with(digits, out);
    if tags.is_empty() {
        return;
    }
    let mut prefix = Vec::with_capacity(64);
    for (key, text) in [("user", &tags.user), ("survey", &tags.survey)] {
        if let Some(text) = text {
            prefix.extend_from_slice(b"\"");
            prefix.extend_from_slice(key.as_bytes());
            prefix.extend_from_slice(b"\":");
            serde_json::to_writer(&mut prefix, text).expect("a string serializes");
            prefix.push(b',');
        }
    }
    if let Some(day) = tags.day {
        prefix.extend_from_slice(b"\"day\":");
        prefix.extend_from_slice(itoa::Buffer::new().format(day).as_bytes());
        prefix.push(b',');
    }
    // After the report's opening brace.
    out.splice(start + 1..start + 1, prefix);
}

/// The tags of a report line, whatever the report (its fields are not read): the leading
/// tags when all three lead, as [`write_tagged`] writes them, else the line read as a JSON
/// object.
///
/// ```
/// let tags = ldp_jsonl::read_tags(br#"{"user":"u1","survey":"s","day":2,"ones":[1,5]}"#)?;
/// assert_eq!((tags.user.as_deref(), tags.day), (Some("u1"), Some(2)));
/// assert!(ldp_jsonl::read_tags(b"[1]").is_err());
/// # Ok::<(), ldp_jsonl::JsonError>(())
/// ```
///
/// # Errors
/// A line that is not a JSON object, or a tag of the wrong type.
pub fn read_tags(line: &[u8]) -> Result<ReportTags, JsonError> {
    // The whole line is read once as JSON, every key once, whatever the report is.
    match serde_json::from_slice::<Entries>(line) {
        Ok(Entries(Ok(mut object))) => take_tags(&mut object),
        Ok(Entries(Err(key))) => Err(JsonError(format!("field `{key}`: given twice"))),
        Err(e) if e.is_syntax() || e.is_eof() => Err(JsonError(crate::parse::without_position(&e))),
        Err(_) => Err(JsonError(
            "a report is a JSON object (`{...}`); this line is not one".into(),
        )),
    }
}

/// Splits `line` into its leading tags and the report's own object. Lines whose first key
/// is not a tag come back whole; tags written otherwise (escaped, or after the report's
/// fields) are left to [`split_anywhere`].
pub(crate) fn split_leading(line: &[u8]) -> Result<(ReportTags, Cow<'_, [u8]>), JsonError> {
    let mut c = Scan { s: line, i: 0 };
    c.ws();
    if c.peek() != Some(b'{') {
        return Ok((ReportTags::default(), Cow::Borrowed(line)));
    }
    c.i += 1;
    let mut tags = ReportTags::default();
    loop {
        let at = c.i;
        let Some(key) = c.tag_key() else {
            c.i = at;
            break;
        };
        let fresh = match key {
            "user" => c.text().map(|t| tags.user.replace(t).is_none()),
            "survey" => c.text().map(|t| tags.survey.replace(t).is_none()),
            _ => c.day().map(|d| tags.day.replace(d).is_none()),
        };
        match fresh {
            Some(true) => {}
            Some(false) => return Err(JsonError(format!("field `{key}`: given twice"))),
            // Escapes, odd numbers: serde_json reads them.
            None => return split_anywhere(line).map(|(t, b)| (t, Cow::Owned(b))),
        }
        c.ws();
        match c.peek() {
            Some(b',') => c.i += 1,
            Some(b'}') => {
                return Err(JsonError(
                    "this line has tags but no report: the report's own fields follow its tags"
                        .into(),
                ));
            }
            _ => return split_anywhere(line).map(|(t, b)| (t, Cow::Owned(b))),
        }
    }
    if tags.is_empty() {
        return Ok((tags, Cow::Borrowed(line)));
    }
    let mut body = Vec::with_capacity(line.len() - c.i + 1);
    body.push(b'{');
    body.extend_from_slice(&line[c.i..]);
    Ok((tags, Cow::Owned(body)))
}

/// Reads `line` as a JSON object and takes the tags out wherever they are; the rest is
/// written back as the report's object. A line that is not an object comes back whole,
/// for the report's own parse to say what is wrong, unless it names a tag: then its JSON
/// error is the one to tell. A key given twice is refused (serde_json's map would keep
/// the last silently).
pub(crate) fn split_anywhere(line: &[u8]) -> Result<(ReportTags, Vec<u8>), JsonError> {
    let mut object = match serde_json::from_slice::<Entries>(line) {
        Ok(Entries(Ok(object))) => object,
        Ok(Entries(Err(key))) => return Err(JsonError(format!("field `{key}`: given twice"))),
        Err(e) if names_a_tag(line) => {
            return Err(JsonError(crate::parse::without_position(&e)));
        }
        Err(_) => return Ok((ReportTags::default(), line.to_vec())),
    };
    let tags = take_tags(&mut object)?;
    if tags.is_empty() {
        return Ok((tags, line.to_vec()));
    }
    let body = serde_json::to_vec(&object).expect("a JSON object serializes");
    Ok((tags, body))
}

/// Takes the tags out of a report's object, checking their types.
fn take_tags(object: &mut Map<String, Value>) -> Result<ReportTags, JsonError> {
    let text = |object: &mut Map<String, Value>, key: &str| match object.remove(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(JsonError(format!(
            "field `{key}`: expected a string, got {}",
            kind(&other)
        ))),
    };
    let user = text(object, "user")?;
    let survey = text(object, "survey")?;
    let day = match object.remove("day") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|d| u32::try_from(d).ok())
                .ok_or_else(|| {
                    JsonError(format!(
                        "field `day`: expected an integer in 0..=4294967295, got {v}"
                    ))
                })?,
        ),
    };
    Ok(ReportTags { user, survey, day })
}

/// Whether the line holds a tag's key (quoted), by a plain search.
pub(crate) fn names_a_tag(line: &[u8]) -> bool {
    TAG_KEYS.iter().any(|k| {
        let quoted = format!("\"{k}\"");
        line.windows(quoted.len()).any(|w| w == quoted.as_bytes())
    })
}

/// A JSON object's entries, or the first key given twice.
struct Entries(Result<Map<String, Value>, String>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Entries, A::Error> {
                let mut object = Map::new();
                let mut twice = None;
                while let Some((key, value)) = map.next_entry::<String, Value>()? {
                    if object.contains_key(&key) {
                        twice.get_or_insert(key);
                    } else {
                        object.insert(key, value);
                    }
                }
                Ok(Entries(twice.map_or(Ok(object), Err)))
            }
        }
        d.deserialize_map(Visit)
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The fast path's scanner: plain keys, strings without escapes, plain day numbers.
struct Scan<'a> {
    s: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// A tag's key and its colon, or `None` (position unspecified).
    fn tag_key(&mut self) -> Option<&'static str> {
        self.ws();
        let rest = &self.s[self.i..];
        let key = TAG_KEYS.into_iter().find(|k| {
            rest.len() > k.len() + 1
                && rest[0] == b'"'
                && &rest[1..=k.len()] == k.as_bytes()
                && rest[k.len() + 1] == b'"'
        })?;
        self.i += key.len() + 2;
        self.ws();
        (self.peek() == Some(b':')).then(|| self.i += 1)?;
        Some(key)
    }

    /// A string without escapes or control characters, valid UTF-8.
    fn text(&mut self) -> Option<String> {
        self.ws();
        (self.peek() == Some(b'"')).then_some(())?;
        let start = self.i + 1;
        let len = self.s[start..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if self.s[start + len] != b'"' {
            return None;
        }
        let text = std::str::from_utf8(&self.s[start..start + len]).ok()?;
        self.i = start + len + 1;
        Some(text.to_owned())
    }

    /// A day: plain digits within u32.
    fn day(&mut self) -> Option<u32> {
        self.ws();
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
            return None;
        }
        let next = self.peek();
        if matches!(next, Some(b'.' | b'e' | b'E')) {
            return None;
        }
        digits.parse().ok()
    }
}
