//! Readers: a scanner for the canonical shapes, and serde_json for everything else.
//!
//! The scanner accepts a subset of what serde_json accepts (the report's fields in their
//! canonical order, plain ASCII keys, JSON numbers in their plain forms, any JSON white
//! space) and builds the value serde_json would. Whatever it does not accept goes to
//! serde_json, which either reads it or says what is wrong.

use serde::de::DeserializeOwned;

use ldp_core::{GrrReport, LhReport, SheReport};

use crate::JsonError;

/// A position in a line.
pub(crate) struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a [u8]) -> Self {
        Self { s, i: 0 }
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    fn eat(&mut self, b: u8) -> Option<()> {
        self.ws();
        (self.s.get(self.i) == Some(&b)).then(|| self.i += 1)
    }

    /// `"name"` and its colon.
    fn key(&mut self, name: &[u8]) -> Option<()> {
        self.eat(b'"')?;
        let end = self.i + name.len();
        (self.s.get(self.i..end) == Some(name)).then_some(())?;
        self.i = end;
        self.eat(b'"')?;
        self.eat(b':')
    }

    /// A JSON integer in `0..2^32` written plainly (no sign, fraction or exponent).
    #[inline]
    fn u32(&mut self) -> Option<u32> {
        self.ws();
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(&b) = self.s.get(self.i) {
            if !b.is_ascii_digit() {
                break;
            }
            v = v * 10 + u64::from(b - b'0');
            if v > u64::from(u32::MAX) {
                return None;
            }
            self.i += 1;
        }
        let len = self.i - start;
        // JSON forbids leading zeros; a fraction or exponent makes it a float.
        if len == 0 || (len > 1 && self.s[start] == b'0') {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = self.s.get(self.i) {
            return None;
        }
        Some(v as u32)
    }

    /// Digits from the current position; how many.
    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - start
    }

    /// A JSON number as serde_json reads it into an f64: integers through u64 or i64
    /// (so `-0` is `0.0`), others correctly rounded; `None` for anything unusual.
    fn f64(&mut self) -> Option<f64> {
        self.ws();
        let start = self.i;
        let negative = self.s.get(self.i) == Some(&b'-');
        if negative {
            self.i += 1;
        }
        let int_start = self.i;
        let int_len = self.digits();
        if int_len == 0 || (int_len > 1 && self.s[int_start] == b'0') {
            return None;
        }
        let mut integer = true;
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return None;
            }
            integer = false;
        }
        if let Some(b'e' | b'E') = self.s.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.s.get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
            integer = false;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        if integer {
            // serde_json: u64, else i64, else (overflow) the float; then `as f64`.
            return if negative {
                text.parse::<i64>().ok().map(|v| v as f64)
            } else {
                text.parse::<u64>().ok().map(|v| v as f64)
            };
        }
        text.parse::<f64>().ok().filter(|v| v.is_finite())
    }

    /// `[` values `]`, each read by `item`.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        self.eat(b'[')?;
        // Each value takes at least two bytes with its comma: one allocation suffices.
        let mut out = Vec::with_capacity((self.s.len() - self.i).div_ceil(2));
        if self.eat(b']').is_some() {
            return Some(out);
        }
        loop {
            out.push(item(self)?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }

    /// The closing brace and nothing after it but white space.
    fn close(&mut self) -> Option<()> {
        self.eat(b'}')?;
        self.ws();
        (self.i == self.s.len()).then_some(())
    }
}

/// The scanner's reading, or serde_json's.
pub(crate) fn with_fallback<T: DeserializeOwned>(
    line: &[u8],
    fast: impl FnOnce(&mut Cursor<'_>) -> Option<T>,
) -> Result<T, JsonError> {
    if let Some(report) = fast(&mut Cursor::new(line)) {
        return Ok(report);
    }
    let mut c = Cursor::new(line);
    c.ws();
    match c.s.get(c.i) {
        Some(b'{') => {}
        None => {
            return Err(JsonError(
                "empty line: expected a report (a JSON object)".into(),
            ));
        }
        Some(_) => {
            return Err(JsonError(
                "a report is a JSON object (`{...}`); this line is not one".into(),
            ));
        }
    }
    let mut de = serde_json::Deserializer::from_slice(line);
    let report: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let message = without_position(e.inner());
        JsonError(if path == "." {
            message
        } else {
            format!("field `{path}`: {message}")
        })
    })?;
    de.end().map_err(|e| JsonError(without_position(&e)))?;
    Ok(report)
}

/// serde_json's message without " at line 1 column N" (the stream's line number is what
/// matters), and at most [`MESSAGE_MAX`] characters: serde quotes offending strings whole.
pub(crate) fn without_position(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = message.strip_suffix(&suffix).unwrap_or(&message);
    match message.char_indices().nth(MESSAGE_MAX) {
        Some((cut, _)) => format!("{}...", &message[..cut]),
        None => message.to_owned(),
    }
}

/// The longest error message kept from serde_json, in characters.
const MESSAGE_MAX: usize = 120;

pub(crate) fn grr(c: &mut Cursor<'_>) -> Option<GrrReport> {
    c.eat(b'{')?;
    c.key(b"y")?;
    let y = c.u32()?;
    c.close()?;
    Some(GrrReport { y })
}

pub(crate) fn index_list(c: &mut Cursor<'_>, name: &[u8]) -> Option<Vec<u32>> {
    c.eat(b'{')?;
    c.key(name)?;
    let list = c.list(Cursor::u32)?;
    c.close()?;
    Some(list)
}

pub(crate) fn lh(c: &mut Cursor<'_>) -> Option<LhReport> {
    c.eat(b'{')?;
    c.key(b"seed")?;
    let seed = c.u32()?;
    c.eat(b',')?;
    c.key(b"y")?;
    let y = c.u32()?;
    c.close()?;
    Some(LhReport { seed, y })
}

pub(crate) fn she(c: &mut Cursor<'_>) -> Option<SheReport> {
    c.eat(b'{')?;
    c.key(b"y")?;
    let y = c.list(Cursor::f64)?;
    c.close()?;
    Some(SheReport { y })
}
