//! Writers: the bytes `serde_json::to_writer` produces, without its per-token overhead.

use ldp_core::{GrrReport, LhReport, SheReport};

#[inline]
fn uint(v: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

pub(crate) fn grr(r: &GrrReport, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"y\":");
    uint(r.y, out);
    out.push(b'}');
}

/// `head` (the object's opening up to `[`), the comma-separated indices, `]}`.
pub(crate) fn index_list(head: &[u8], list: &[u32], digits: &Digits, out: &mut Vec<u8>) {
    out.extend_from_slice(head);
    // A table made for a smaller domain than the list's indices falls back to itoa.
    let table = digits
        .table
        .as_ref()
        .filter(|t| list.iter().all(|&v| (v as usize) < t.len()));
    match table {
        Some(table) => {
            // Fixed 16-byte copies into a block, moved out when full: no per-index length
            // branch or memcpy call.
            let mut block = [0u8; BLOCK];
            let mut pos = 0;
            for &v in list {
                let entry = &table[v as usize];
                block[pos..pos + 16].copy_from_slice(&entry.0);
                pos += usize::from(entry.1);
                if pos > BLOCK - 16 {
                    out.extend_from_slice(&block[..pos]);
                    pos = 0;
                }
            }
            out.extend_from_slice(&block[..pos]);
            if !list.is_empty() {
                out.pop(); // the last comma
            }
        }
        None => {
            let mut buf = itoa::Buffer::new();
            if let Some((first, rest)) = list.split_first() {
                out.extend_from_slice(buf.format(*first).as_bytes());
                for &v in rest {
                    out.push(b',');
                    out.extend_from_slice(buf.format(v).as_bytes());
                }
            }
        }
    }
    out.extend_from_slice(b"]}");
}

const BLOCK: usize = 1024;

/// Decimal forms of `0..k`, each followed by a comma, in 16-byte cells: writing an index
/// is one fixed-size copy. Built for domains up to 2^20 (16 MiB); larger ones format
/// each index with itoa.
#[derive(Debug, Clone, Default)]
pub struct Digits {
    table: Option<Box<[Cell]>>,
}

/// An index's digits and comma, and how many bytes of the 16 they take.
type Cell = ([u8; 16], u8);

impl Digits {
    /// The largest domain given a table.
    pub const MAX_TABLE: u32 = 1 << 20;

    /// The table for indices in `0..k` (none above [`Digits::MAX_TABLE`]).
    pub fn for_domain(k: u32) -> Self {
        if k > Self::MAX_TABLE {
            return Self::default();
        }
        let mut buf = itoa::Buffer::new();
        let table = (0..k)
            .map(|v| {
                let text = buf.format(v).as_bytes();
                let mut cell = [0u8; 16];
                cell[..text.len()].copy_from_slice(text);
                cell[text.len()] = b',';
                (cell, text.len() as u8 + 1)
            })
            .collect();
        Self { table: Some(table) }
    }
}

pub(crate) fn lh(r: &LhReport, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"seed\":");
    uint(r.seed, out);
    out.extend_from_slice(b",\"y\":");
    uint(r.y, out);
    out.push(b'}');
}

/// serde_json writes a finite f64 with zmij's `format_finite`, and `null` otherwise.
pub(crate) fn she(r: &SheReport, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"y\":[");
    let mut buf = zmij::Buffer::new();
    for (i, &v) in r.y.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if v.is_finite() {
            out.extend_from_slice(buf.format_finite(v).as_bytes());
        } else {
            out.extend_from_slice(b"null");
        }
    }
    out.extend_from_slice(b"]}");
}
