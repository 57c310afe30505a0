//! Lines of items and weights, the CLI's own inputs (`perturb`, `simulate`, `attack
//! --prior`): what a line must hold, and how an error quotes it. Reading the lines (the
//! cap on their length, a byte-order mark, blank lines, skip mode) is `ldp_jsonl::lines`,
//! shared with the Python package.

use anyhow::{Result, anyhow, bail};

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

    #[test]
    fn items_are_parsed_strictly_and_quoted_briefly() {
        assert_eq!(parse_item(b" 7 ", 10).unwrap(), 7);
        assert!(parse_item(b"10", 10).is_err());
        assert!(parse_item(b"-1", 10).is_err());
        let msg = parse_item(&[b'x'; 1000], 10).unwrap_err().to_string();
        assert!(msg.len() < 120, "{msg}");
    }
}
