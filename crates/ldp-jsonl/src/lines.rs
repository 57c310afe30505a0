//! Reading a stream of lines by the rules every front end shares (the `ldp` tool, the
//! Python package): chunks of complete lines, with a cap on line length, a UTF-8
//! byte-order mark accepted at the start, and blank lines accepted at the end.
//!
//! A chunk is every complete line one read makes available (up to a maximum count), so a
//! file is read in large chunks that can be processed in parallel, while an interactive
//! stream yields each line as soon as it arrives. A line longer than the cap is rejected
//! as soon as the cap is passed, without reading the rest of it; a lenient reader (a
//! server skipping invalid reports) instead records it as skipped ([`LongLine`], which
//! [`LongLine::record`] counts in a [`Rejections`]), discards it, and ignores blank lines
//! anywhere. The lines before a bad one are handed out before the error, so a caller that
//! checks lines in order names the first bad line of the input. Each byte is searched for
//! a newline once.
//!
//! ```
//! use ldp_core::Rejections;
//! use ldp_jsonl::lines::{LineChunks, LineError};
//!
//! // A byte-order mark, CRLF endings and blank lines at the end are accepted.
//! let mut strict = LineChunks::new(&b"\xEF\xBB\xBF{\"y\":1}\r\n{\"y\":2}\n\n"[..], 64);
//! let chunk = strict.next_chunk(100)?.expect("two lines");
//! assert_eq!(chunk, [(1, &br#"{"y":1}"#[..]), (2, &br#"{"y":2}"#[..])]);
//! assert!(strict.next_chunk(100)?.is_none());
//!
//! // A blank line before a line is an error, after the lines above it.
//! let mut strict = LineChunks::new(&b"1\n\n2\n"[..], 64);
//! assert_eq!(strict.next_chunk(100)?.expect("line 1"), [(1, &b"1"[..])]);
//! let err = strict.next_chunk(100).unwrap_err();
//! assert!(matches!(err, LineError::BlankLine { blank: 2, line: 3 }));
//!
//! // Skip mode: a line over the cap is left out and counted, blank lines are ignored.
//! let mut lenient = LineChunks::new(&b"1\n123456789\n\n2\n"[..], 4).lenient();
//! let mut kept = Vec::new();
//! while let Some(chunk) = lenient.next_chunk(100)? {
//!     kept.extend(chunk.into_iter().map(|(number, _)| number));
//! }
//! assert_eq!(kept, [1, 4]);
//! let mut skipped = Rejections::default();
//! for long in lenient.take_skipped() {
//!     long.record(&mut skipped);
//! }
//! assert_eq!(skipped.total(), 1);
//! assert_eq!(
//!     skipped.to_string(),
//!     "1 too-long (first at line 2: longer than 4 bytes, more than any valid line can take here)"
//! );
//! # Ok::<(), LineError>(())
//! ```

use std::fmt;
use std::io::Read;
use std::sync::mpsc;

use ldp_core::{Reason, Rejections};

/// Bytes asked of one read.
const READ: usize = 1 << 20;

/// One line: its 1-based number and its bytes (without the newline or a trailing `\r`).
pub type Line<'a> = (u64, &'a [u8]);

/// Where a line lies in a buffer: from, to (exclusive, without its newline).
type Span = (usize, usize);

/// Why a stream of lines was refused.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// A line longer than the cap (a strict reader; a lenient one skips it).
    #[error("line {line}: {long}", line = .0.line, long = .0)]
    TooLong(LongLine),
    /// A blank line, then a non-blank one: blank lines are accepted only at the end.
    #[error(
        "line {blank}: blank line before line {line} (blank lines are accepted only at the end of the input)"
    )]
    BlankLine {
        /// The first blank line of the run.
        blank: u64,
        /// The non-blank line after it.
        line: u64,
    },
    /// The input could not be read.
    #[error("line {line}: reading the input")]
    Io {
        /// The line being read.
        line: u64,
        /// What the input said.
        #[source]
        source: std::io::Error,
    },
}

/// A line longer than the cap: what a strict reader refuses ([`LineError::TooLong`]) and
/// a lenient one skips ([`LineChunks::take_skipped`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongLine {
    /// Its 1-based number.
    pub line: u64,
    /// The cap it exceeds, in bytes.
    pub cap: usize,
}

impl LongLine {
    /// Counts the line in `rejections`: [`Reason::TooLong`], at `line N`, with this
    /// line's message.
    pub fn record(&self, rejections: &mut Rejections) {
        let line = self.line;
        rejections.record(Reason::TooLong, line, || format!("line {line}"), self);
    }
}

impl fmt::Display for LongLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "longer than {} bytes, more than any valid line can take here",
            self.cap
        )
    }
}

/// An input stream cut into chunks of lines.
#[derive(Debug)]
pub struct LineChunks<R> {
    input: R,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// Lines handed out (or skipped) so far.
    lines: u64,
    cap: usize,
    eof: bool,
    /// The first blank line of a run of blank lines not yet followed by a non-blank one.
    blank_since: Option<u64>,
    /// Bytes from `start` already searched for a newline, without finding one.
    scanned: usize,
    /// Skip overlong lines and ignore blank lines instead of failing.
    lenient: bool,
    /// In lenient mode: inside an overlong line, discarding up to its newline.
    discarding: bool,
    /// In lenient mode: the overlong lines skipped since the last call to `take_skipped`.
    skipped: Vec<LongLine>,
    /// An error found after lines that were handed out first: the next call returns it.
    pending: Option<LineError>,
    /// An error was returned: the reader hands out nothing more.
    failed: bool,
}

impl<R: Read> LineChunks<R> {
    /// Lines of at most `cap` bytes (a trailing `\r` included) from `input`, a strict
    /// reader: an overlong line, or a blank line before a non-blank one, is an error.
    pub fn new(input: R, cap: usize) -> Self {
        Self {
            input,
            buf: Vec::new(),
            start: 0,
            end: 0,
            lines: 0,
            cap,
            eof: false,
            blank_since: None,
            scanned: 0,
            lenient: false,
            discarding: false,
            skipped: Vec::new(),
            pending: None,
            failed: false,
        }
    }

    /// A lenient reader: an overlong line is skipped (see [`LineChunks::take_skipped`])
    /// instead of failing the input, and blank lines are ignored wherever they are.
    pub fn lenient(mut self) -> Self {
        self.lenient = true;
        self
    }

    /// The lines skipped since the last call, in order.
    pub fn take_skipped(&mut self) -> Vec<LongLine> {
        std::mem::take(&mut self.skipped)
    }

    /// The next non-empty run of complete lines (at most `max_lines`, at least one), or
    /// `None` at the end of the input. Blank lines are left out; a blank line followed by
    /// a non-blank one is an error (blank lines are accepted only at the end of the
    /// input). The lines before an error come first; the call after them returns the
    /// error, and every call after an error returns `None`.
    pub fn next_chunk(&mut self, max_lines: usize) -> Result<Option<Vec<Line<'_>>>, LineError> {
        if let Some(e) = self.pending.take() {
            self.failed = true;
            return Err(e);
        }
        if self.failed {
            return Ok(None);
        }
        let (first, spans) = loop {
            let split = self.split(max_lines.max(1));
            let Some((first, mut spans)) = split.inspect_err(|_| self.failed = true)? else {
                return Ok(None);
            };
            let mut any = false;
            let mut cut = None;
            for (i, (number, &(from, to))) in (first..).zip(&spans).enumerate() {
                if is_blank(&self.buf[from..to]) {
                    if !self.lenient {
                        self.blank_since.get_or_insert(number);
                    }
                } else if let Some(blank) = self.blank_since {
                    let error = LineError::BlankLine {
                        blank,
                        line: number,
                    };
                    if !any {
                        self.failed = true;
                        return Err(error);
                    }
                    // Hand out the lines before the blank ones first.
                    self.pending = Some(error);
                    cut = Some(i);
                    break;
                } else {
                    any = true;
                }
            }
            if let Some(i) = cut {
                spans.truncate(i);
            }
            if any {
                break (first, spans);
            }
        };
        let buf = &self.buf;
        Ok(Some(
            (first..)
                .zip(spans)
                .filter(|&(_, (from, to))| !is_blank(&buf[from..to]))
                .map(|(number, (from, to))| {
                    let line = &buf[from..to];
                    (number, line.strip_suffix(b"\r").unwrap_or(line))
                })
                .collect(),
        ))
    }

    /// The number of the next line and the spans of the next complete lines (without
    /// their newlines), reading more input as needed; `None` at the end of the input.
    fn split(&mut self, max_lines: usize) -> Result<Option<(u64, Vec<Span>)>, LineError> {
        loop {
            if self.discarding {
                // The rest of an overlong line, up to and including its newline.
                let pending = &self.buf[self.start..self.end];
                match memchr::memchr(b'\n', pending) {
                    Some(pos) => {
                        self.start += pos + 1;
                        self.discarding = false;
                    }
                    None => {
                        self.start = self.end;
                        if self.eof {
                            return Ok(None);
                        }
                        self.fill()?;
                        continue;
                    }
                }
            }
            let base = self.start;
            let mut spans = Vec::new();
            let mut from = base;
            let searched = base + self.scanned;
            for pos in memchr::memchr_iter(b'\n', &self.buf[searched..self.end]) {
                let to = searched + pos;
                if to - from > self.cap {
                    if !spans.is_empty() {
                        break; // hand out the lines before it first
                    }
                    let long = LongLine {
                        line: self.lines + 1,
                        cap: self.cap,
                    };
                    if !self.lenient {
                        return Err(LineError::TooLong(long));
                    }
                    // Skip it whole; the lines after it come in the next round.
                    self.skipped.push(long);
                    self.lines += 1;
                    from = to + 1;
                    self.start = from;
                    continue;
                }
                spans.push((from, to));
                from = to + 1;
                if spans.len() == max_lines {
                    break;
                }
            }
            if !spans.is_empty() {
                let first = self.lines + 1;
                self.lines += spans.len() as u64;
                self.start = from;
                self.scanned = 0;
                return Ok(Some((first, spans)));
            }
            // No complete line: the pending bytes hold no newline.
            self.scanned = self.end - self.start;
            if self.end - self.start > self.cap {
                let long = LongLine {
                    line: self.lines + 1,
                    cap: self.cap,
                };
                if !self.lenient {
                    return Err(LineError::TooLong(long));
                }
                self.lines += 1;
                self.skipped.push(long);
                self.start = self.end;
                self.scanned = 0;
                self.discarding = true;
                continue;
            }
            if self.eof {
                if self.start < self.end {
                    // A last line without a newline.
                    let first = self.lines + 1;
                    let span = (self.start, self.end);
                    self.lines += 1;
                    self.start = self.end;
                    self.scanned = 0;
                    return Ok(Some((first, vec![span])));
                }
                return Ok(None);
            }
            self.fill()?;
        }
    }

    /// Reads once, after moving the unconsumed bytes to the front.
    fn fill(&mut self) -> Result<(), LineError> {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.buf.len() < self.end + READ {
            self.buf.resize(self.end + READ, 0);
        }
        let n = loop {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(LineError::Io {
                        line: self.lines + 1,
                        source,
                    });
                }
            }
        };
        // A UTF-8 byte-order mark at the very start is not part of the first line.
        let at_start = self.lines == 0 && self.end == 0;
        if at_start && n >= 3 && self.buf[..3] == [0xEF, 0xBB, 0xBF] {
            self.buf.copy_within(3..n, 0);
            self.end = n - 3;
            return Ok(());
        }
        self.end += n;
        if n == 0 {
            self.eof = true;
        }
        Ok(())
    }
}

/// Lines copied out of a [`LineChunks`] buffer, so that they can cross threads.
#[derive(Debug)]
struct OwnedChunk {
    bytes: Vec<u8>,
    /// Line number and the line's span in `bytes`.
    lines: Vec<(u64, Span)>,
    /// Lines a lenient reader skipped before these.
    skipped: Vec<LongLine>,
}

impl OwnedChunk {
    fn copy(lines: &[Line<'_>]) -> Self {
        let mut bytes = Vec::with_capacity(lines.iter().map(|(_, l)| l.len()).sum());
        let lines = lines
            .iter()
            .map(|&(number, line)| {
                let from = bytes.len();
                bytes.extend_from_slice(line);
                (number, (from, bytes.len()))
            })
            .collect();
        OwnedChunk {
            bytes,
            lines,
            skipped: Vec::new(),
        }
    }
}

/// The chunks one [`ReadAhead::next_batch`] hands out.
#[derive(Debug)]
pub struct Batch(Vec<OwnedChunk>);

impl Batch {
    /// Every line of the batch, in order.
    pub fn lines(&self) -> Vec<Line<'_>> {
        self.0
            .iter()
            .flat_map(|c| {
                c.lines
                    .iter()
                    .map(|&(number, (from, to))| (number, &c.bytes[from..to]))
            })
            .collect()
    }

    /// The lines a lenient reader skipped, in order.
    pub fn skipped(&self) -> Vec<LongLine> {
        self.0
            .iter()
            .flat_map(|c| c.skipped.iter().copied())
            .collect()
    }
}

/// Bytes the chunks in flight between the reader thread and the consumer may hold
/// (about; a chunk is one read of [`READ`] bytes or one line of at most the cap).
const READ_AHEAD_BYTES: usize = 32 << 20;

/// [`LineChunks`] read on a thread of their own: while the caller processes one batch,
/// the next chunks are read and split. A batch is every chunk read by then (so a file or
/// a fast pipe arrives in large batches that keep every core busy, while an interactive
/// stream still yields each line as soon as it arrives).
///
/// ```
/// use ldp_jsonl::lines::ReadAhead;
/// let mut input = ReadAhead::spawn(&b"a\nb\n\nc\n"[..], 16, 1, false);
/// let batch = input.next_batch(1 << 20, 100)?.expect("a batch");
/// assert_eq!(batch.lines().first(), Some(&(1, &b"a"[..])));
/// let mut numbers: Vec<u64> = batch.lines().iter().map(|&(n, _)| n).collect();
/// let error = loop {
///     match input.next_batch(1 << 20, 100) {
///         Ok(Some(batch)) => numbers.extend(batch.lines().iter().map(|&(n, _)| n)),
///         Ok(None) => unreachable!("the blank line is an error"),
///         Err(e) => break e,
///     }
/// };
/// assert_eq!(numbers, [1, 2]);
/// assert!(error.to_string().starts_with("line 3: blank line before line 4"));
/// # Ok::<(), ldp_jsonl::lines::LineError>(())
/// ```
#[derive(Debug)]
pub struct ReadAhead {
    chunks: mpsc::Receiver<Result<OwnedChunk, LineError>>,
    /// A reading error met while filling a batch, for the next call (the lines before
    /// it are processed first, so errors come out in line order).
    pending: Option<LineError>,
}

impl ReadAhead {
    /// Starts reading `input` in chunks of at most `max_lines` lines of at most `cap`
    /// bytes, leniently if `lenient` ([`LineChunks::lenient`]). The reader thread stops
    /// at the end of the input, at an error, or when this is dropped (at its next chunk).
    pub fn spawn<R: Read + Send + 'static>(
        input: R,
        cap: usize,
        max_lines: usize,
        lenient: bool,
    ) -> Self {
        let in_flight = (READ_AHEAD_BYTES / cap.max(READ)).clamp(1, 32);
        let (tx, chunks) = mpsc::sync_channel(in_flight);
        std::thread::spawn(move || {
            let mut input = LineChunks::new(input, cap);
            if lenient {
                input = input.lenient();
            }
            loop {
                let next = input
                    .next_chunk(max_lines)
                    .map(|chunk| chunk.map(|lines| OwnedChunk::copy(&lines)));
                let skipped = input.take_skipped();
                // Lines skipped at the very end travel in a chunk of their own.
                let next = match next {
                    Ok(None) if !skipped.is_empty() => Ok(Some(OwnedChunk {
                        bytes: Vec::new(),
                        lines: Vec::new(),
                        skipped: Vec::new(),
                    })),
                    other => other,
                };
                let next = next.map(|chunk| {
                    chunk.map(|mut c| {
                        c.skipped = skipped;
                        c
                    })
                });
                let more = matches!(next, Ok(Some(_)));
                let Some(sent) = next.transpose() else {
                    return; // the end of the input
                };
                if tx.send(sent).is_err() || !more {
                    return;
                }
            }
        });
        ReadAhead {
            chunks,
            pending: None,
        }
    }

    /// Waits for the next chunk, then takes every chunk already read, up to about
    /// `max_bytes` or `max_lines`; `None` at the end of the input.
    pub fn next_batch(
        &mut self,
        max_bytes: usize,
        max_lines: usize,
    ) -> Result<Option<Batch>, LineError> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        let Ok(first) = self.chunks.recv() else {
            return Ok(None);
        };
        let first = first?;
        let (mut bytes, mut lines) = (first.bytes.len(), first.lines.len());
        let mut batch = vec![first];
        while bytes < max_bytes && lines < max_lines {
            match self.chunks.try_recv() {
                Ok(Ok(chunk)) => {
                    bytes += chunk.bytes.len();
                    lines += chunk.lines.len();
                    batch.push(chunk);
                }
                Ok(Err(e)) => {
                    self.pending = Some(e);
                    break;
                }
                Err(_) => break,
            }
        }
        Ok(Some(Batch(batch)))
    }
}

/// Whether a line holds only white space (a `\r` of a CRLF ending included).
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(input: &[u8], cap: usize, max: usize) -> Result<Vec<Vec<(u64, String)>>, LineError> {
        let mut reader = LineChunks::new(input, cap);
        let mut out = Vec::new();
        while let Some(chunk) = reader.next_chunk(max)? {
            out.push(
                chunk
                    .into_iter()
                    .map(|(n, l)| (n, String::from_utf8_lossy(l).into_owned()))
                    .collect(),
            );
        }
        Ok(out)
    }

    /// Every line a strict reader hands out before its error, and the error.
    fn until_error(input: &[u8], cap: usize, max: usize) -> (Vec<u64>, Option<String>) {
        let mut reader = LineChunks::new(input, cap);
        let mut numbers = Vec::new();
        loop {
            match reader.next_chunk(max) {
                Ok(Some(chunk)) => numbers.extend(chunk.into_iter().map(|(n, _)| n)),
                Ok(None) => return (numbers, None),
                Err(e) => {
                    // Nothing more after an error.
                    assert!(matches!(reader.next_chunk(max), Ok(None)));
                    return (numbers, Some(e.to_string()));
                }
            }
        }
    }

    #[test]
    fn lines_come_in_chunks_with_their_numbers() {
        let got = chunks(b"a\r\nb\nc", 10, 2).unwrap();
        assert_eq!(
            got,
            vec![
                vec![(1, "a".into()), (2, "b".into())],
                vec![(3, "c".into())]
            ]
        );
    }

    #[test]
    fn a_bom_and_trailing_blank_lines_are_accepted() {
        let got = chunks(b"\xEF\xBB\xBF1\n2\n\n  \n", 10, 100).unwrap();
        assert_eq!(got, vec![vec![(1, "1".into()), (2, "2".into())]]);
        let err = chunks(b"1\n\n2\n", 10, 100).unwrap_err().to_string();
        assert!(err.starts_with("line 2: blank line before line 3"), "{err}");
        // Only at the very start: a byte-order mark further on is part of its line.
        let got = chunks(b"1\n\xEF\xBB\xBF2\n", 10, 100).unwrap();
        assert_eq!(got[0][1], (2, "\u{feff}2".into()));
    }

    #[test]
    fn long_lines_are_rejected_without_reading_them_whole() {
        let err = chunks(b"12\n123456789012\n", 5, 100)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "line 2: longer than 5 bytes, more than any valid line can take here"
        );
        // An endless line without a newline: the reader stops after the cap.
        let endless = std::io::repeat(b'x');
        let mut reader = LineChunks::new(endless, 3 << 20);
        assert!(matches!(
            reader.next_chunk(10),
            Err(LineError::TooLong(LongLine { line: 1, .. }))
        ));
        // The cap counts a `\r` before the newline, and holds for a last line too.
        assert!(chunks(b"12345\r\n", 5, 100).is_err());
        assert!(chunks(b"12345\n", 5, 100).is_ok());
        assert!(chunks(b"1\n123456", 5, 100).is_err());
    }

    #[test]
    fn the_lines_before_a_bad_one_come_before_its_error() {
        // A blank line inside, and an overlong line, after good lines of the same read.
        let (lines, error) = until_error(b"a\nb\n\nc\nd\n", 10, 100);
        assert_eq!(lines, [1, 2]);
        assert_eq!(
            error.as_deref(),
            Some(
                "line 3: blank line before line 4 (blank lines are accepted only at the end of the input)"
            )
        );
        let (lines, error) = until_error(b"a\nb\n123456789012\nc\n", 10, 100);
        assert_eq!(lines, [1, 2]);
        assert!(error.unwrap().starts_with("line 3: longer than 10 bytes"));
        // The same over the end of a read.
        let (lines, error) = until_error(b"a\nb\n12345678901234", 10, 100);
        assert_eq!(lines, [1, 2]);
        assert!(error.unwrap().starts_with("line 3: longer than 10 bytes"));
        // The blank lines of a chunk that hands out lines are not lines.
        let (lines, error) = until_error(b"a\n\n \n", 10, 1);
        assert_eq!((lines, error), (vec![1], None));
    }

    #[test]
    fn a_lenient_reader_skips_long_lines_and_blank_ones_and_keeps_the_numbers() {
        // Long lines first, in the middle (complete or cut by the read), and last without
        // a newline; blank lines anywhere.
        let mut input = b"123456789\na\n\nb\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 << 20));
        input.extend(b"\nc\n\n123456");
        let mut reader = LineChunks::new(input.as_slice(), 5).lenient();
        let mut lines = Vec::new();
        while let Some(chunk) = reader.next_chunk(100).unwrap() {
            lines.extend(chunk.into_iter().map(|(n, l)| (n, l.to_vec())));
        }
        let expected: Vec<(u64, Vec<u8>)> =
            vec![(2, b"a".to_vec()), (4, b"b".to_vec()), (6, b"c".to_vec())];
        assert_eq!(lines, expected);
        let long: Vec<u64> = reader.take_skipped().into_iter().map(|s| s.line).collect();
        assert_eq!(long, [1, 5, 8]);
        assert!(reader.take_skipped().is_empty());
    }

    #[test]
    fn skipped_lines_are_counted_as_too_long() {
        let mut rejections = Rejections::default();
        LongLine { line: 9, cap: 7 }.record(&mut rejections);
        LongLine { line: 4, cap: 7 }.record(&mut rejections);
        let (reason, r) = rejections.iter().next().unwrap();
        assert_eq!((reason, r.count), (Reason::TooLong, 2));
        assert_eq!(r.first_at, "line 4");
        assert_eq!(
            r.first_error,
            "longer than 7 bytes, more than any valid line can take here"
        );
    }

    #[test]
    fn a_reading_error_names_the_line_being_read() {
        /// Two good lines, then a failing read.
        struct Failing(u8);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.0 += 1;
                match self.0 {
                    1 => {
                        buf[..4].copy_from_slice(b"a\nb\n");
                        Ok(4)
                    }
                    2 => Err(std::io::Error::new(
                        std::io::ErrorKind::Interrupted,
                        "again",
                    )),
                    _ => Err(std::io::Error::other("the disk is gone")),
                }
            }
        }
        let mut reader = LineChunks::new(Failing(0), 10);
        assert_eq!(reader.next_chunk(100).unwrap().unwrap().len(), 2);
        let err = reader.next_chunk(100).unwrap_err();
        assert_eq!(err.to_string(), "line 3: reading the input");
        let source = std::error::Error::source(&err).unwrap();
        assert_eq!(source.to_string(), "the disk is gone");
    }

    /// Every line `ReadAhead` hands out, and the error that ended it.
    fn read_ahead(input: &'static [u8], max: usize) -> (Vec<(u64, String)>, Option<String>) {
        let mut reader = ReadAhead::spawn(input, 10, max, false);
        let mut out = Vec::new();
        loop {
            match reader.next_batch(1 << 20, 100) {
                Ok(Some(batch)) => out.extend(
                    batch
                        .lines()
                        .into_iter()
                        .map(|(n, l)| (n, String::from_utf8_lossy(l).into_owned())),
                ),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }

    #[test]
    fn reading_ahead_gives_every_line_then_the_error_in_line_order() {
        let (lines, error) = read_ahead(b"a\r\nb\nc", 1);
        assert_eq!(
            lines,
            vec![(1, "a".into()), (2, "b".into()), (3, "c".into())]
        );
        assert_eq!(error, None);
        // The lines before a reading error are handed out before it.
        let (lines, error) = read_ahead(b"a\nb\n\nc\n", 1);
        assert_eq!(lines, vec![(1, "a".into()), (2, "b".into())]);
        assert!(
            error
                .unwrap()
                .starts_with("line 3: blank line before line 4")
        );
        let (lines, error) = read_ahead(b"a\n12345678901\n", 1);
        assert_eq!(lines, vec![(1, "a".into())]);
        assert!(error.unwrap().starts_with("line 2: longer than 10 bytes"));
        // In chunks of many lines too.
        let (lines, error) = read_ahead(b"a\nb\n\nc\n", 100);
        assert_eq!(lines, vec![(1, "a".into()), (2, "b".into())]);
        assert!(error.unwrap().starts_with("line 3: blank line"));
    }

    #[test]
    fn reading_ahead_leniently_passes_the_skipped_lines_on() {
        let mut reader =
            ReadAhead::spawn(&b"a\n123456789012\n\nb\n1234567890123"[..], 10, 100, true);
        let (mut lines, mut skipped) = (Vec::new(), Vec::new());
        while let Some(batch) = reader.next_batch(1 << 20, 100).unwrap() {
            lines.extend(batch.lines().into_iter().map(|(n, _)| n));
            skipped.extend(batch.skipped().into_iter().map(|s| s.line));
        }
        assert_eq!(lines, [1, 4]);
        assert_eq!(skipped, [2, 5]);
    }
}
