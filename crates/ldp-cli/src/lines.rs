//! Line-oriented input: chunks of complete lines, with a cap on line length, a UTF-8
//! byte-order mark accepted at the start, and blank lines accepted at the end.
//!
//! A chunk is every complete line one read makes available (up to a maximum count), so a
//! file is read in large chunks that can be processed in parallel, while an interactive
//! stream yields each line as soon as it arrives. A line longer than the cap is rejected
//! as soon as the cap is passed, without reading the rest of it; a lenient reader (a
//! server skipping invalid reports) instead records it as skipped, discards it, and
//! ignores blank lines anywhere. Each byte is searched for a newline once.

use std::io::Read;

use anyhow::{Result, anyhow, bail};
use ldp_core::Reason;

/// Bytes asked of one read.
const READ: usize = 1 << 20;

/// An input stream cut into chunks of lines.
pub(crate) struct LineChunks<R> {
    input: R,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// Lines handed out so far.
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
    skipped: Vec<(u64, Reason)>,
}

/// Where a line lies in the buffer: from, to (exclusive, without its newline).
type Span = (usize, usize);

/// One line: its 1-based number and its bytes (without the newline or a trailing `\r`).
pub(crate) type Line<'a> = (u64, &'a [u8]);

impl<R: Read> LineChunks<R> {
    /// Lines of at most `cap` bytes from `input`.
    pub(crate) fn new(input: R, cap: usize) -> Self {
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
        }
    }

    /// A lenient reader: an overlong line is skipped (see [`LineChunks::take_skipped`])
    /// instead of failing the input, and blank lines are ignored wherever they are.
    pub(crate) fn lenient(mut self) -> Self {
        self.lenient = true;
        self
    }

    /// The lines skipped since the last call, with why.
    pub(crate) fn take_skipped(&mut self) -> Vec<(u64, Reason)> {
        std::mem::take(&mut self.skipped)
    }

    /// The next non-empty run of complete lines (at most `max_lines`), or `None` at the
    /// end of the input. Blank lines are left out; a blank line followed by a non-blank
    /// one is an error (blank lines are accepted only at the end of the input).
    pub(crate) fn next_chunk(&mut self, max_lines: usize) -> Result<Option<Vec<Line<'_>>>> {
        let (first, spans) = loop {
            let Some((first, spans)) = self.split(max_lines)? else {
                return Ok(None);
            };
            let mut any = false;
            for (number, &(from, to)) in (first..).zip(&spans) {
                if is_blank(&self.buf[from..to]) {
                    if !self.lenient {
                        self.blank_since.get_or_insert(number);
                    }
                } else if let Some(blank) = self.blank_since {
                    bail!(
                        "line {blank}: blank line before line {number} (blank lines are accepted only at the end of the input)"
                    );
                } else {
                    any = true;
                }
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
    fn split(&mut self, max_lines: usize) -> Result<Option<(u64, Vec<Span>)>> {
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
                    let number = self.lines + 1 + spans.len() as u64;
                    if !self.lenient {
                        bail!(self.too_long(number));
                    }
                    if spans.is_empty() {
                        // Skip it whole; the lines after it come in the next round.
                        self.skipped.push((number, Reason::TooLong));
                        self.lines += 1;
                        from = to + 1;
                        self.start = from;
                        continue;
                    }
                    break; // hand out the lines before it first
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
                if !self.lenient {
                    bail!(self.too_long(self.lines + 1));
                }
                self.lines += 1;
                self.skipped.push((self.lines, Reason::TooLong));
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
    fn fill(&mut self) -> Result<()> {
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
                Err(e) => {
                    return Err(anyhow::Error::new(e)
                        .context(format!("line {}: reading the input", self.lines + 1)));
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

    fn too_long(&self, line: u64) -> String {
        format!(
            "line {line}: longer than {} bytes, more than any valid line can take here",
            self.cap
        )
    }
}

/// Lines copied out of a [`LineChunks`] buffer, so that they can cross threads.
struct OwnedChunk {
    bytes: Vec<u8>,
    /// Line number and the line's span in `bytes`.
    lines: Vec<(u64, Span)>,
    /// Lines a lenient reader skipped before these (numbers and reasons).
    skipped: Vec<(u64, Reason)>,
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
pub(crate) struct Batch(Vec<OwnedChunk>);

impl Batch {
    /// Every line of the batch, in order.
    pub(crate) fn lines(&self) -> Vec<Line<'_>> {
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
    pub(crate) fn skipped(&self) -> Vec<(u64, Reason)> {
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
pub(crate) struct ReadAhead {
    chunks: std::sync::mpsc::Receiver<Result<OwnedChunk>>,
    /// A reading error met while filling a batch, for the next call (the lines before
    /// it are processed first, so errors come out in line order).
    pending: Option<anyhow::Error>,
}

impl ReadAhead {
    /// Starts reading `input` in chunks of at most `max_lines` lines of at most `cap`
    /// bytes, leniently if `lenient` ([`LineChunks::lenient`]). The reader thread stops
    /// at the end of the input, at an error, or when this is dropped (at its next chunk).
    pub(crate) fn spawn<R: Read + Send + 'static>(
        input: R,
        cap: usize,
        max_lines: usize,
        lenient: bool,
    ) -> Self {
        let in_flight = (READ_AHEAD_BYTES / cap.max(READ)).clamp(1, 32);
        let (tx, chunks) = std::sync::mpsc::sync_channel(in_flight);
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
    pub(crate) fn next_batch(
        &mut self,
        max_bytes: usize,
        max_lines: usize,
    ) -> Result<Option<Batch>> {
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

/// At most 40 characters of `line`, for error messages.
pub(crate) fn quote(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("`{}...`", &text[..cut]),
        None => format!("`{text}`"),
    }
}

/// An item in `0..k`, from one line.
pub(crate) fn parse_item(line: &[u8], k: u32) -> Result<u32> {
    let text = line.trim_ascii();
    let item = std::str::from_utf8(text)
        .ok()
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse::<u64>().ok())
        .ok_or_else(|| {
            anyhow!(
                "{} is not an item (expected a whole number in 0..{k})",
                quote(text)
            )
        })?;
    if item >= u64::from(k) {
        bail!("item {item} is outside the domain 0..{k}");
    }
    Ok(item as u32)
}

/// Items are short: a line of more than this many bytes is not one.
pub(crate) const ITEM_LINE_CAP: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(input: &[u8], cap: usize, max: usize) -> Result<Vec<Vec<(u64, String)>>> {
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
    }

    #[test]
    fn long_lines_are_rejected_without_reading_them_whole() {
        let err = chunks(b"12\n123456789012\n", 5, 100)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("line 2: longer than 5 bytes"), "{err}");
        // An endless line without a newline: the reader stops after the cap.
        let endless = std::io::repeat(b'x');
        let mut reader = LineChunks::new(endless, 3 << 20);
        assert!(reader.next_chunk(10).is_err());
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
        let long: Vec<u64> = reader.take_skipped().into_iter().map(|(n, _)| n).collect();
        assert_eq!(long, [1, 5, 8]);
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
    }

    #[test]
    fn items_are_parsed_strictly_and_quoted_briefly() {
        assert_eq!(parse_item(b" 7 ", 10).unwrap(), 7);
        assert!(parse_item(b"10", 10).is_err());
        assert!(parse_item(b"-1", 10).is_err());
        let msg = parse_item(&[b'x'; 1000], 10).unwrap_err().to_string();
        assert!(msg.len() < 120, "{msg}");
    }
}
