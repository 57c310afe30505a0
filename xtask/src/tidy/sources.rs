//! Rules on the Rust sources, in the spirit of rust-analyzer's tidy: what the registry of
//! families (`crates/ldp-core/src/families/`) generates is never written again by hand.
//!
//! - [`Rule::HandMatch`]: a `match` arm names a variant of [`FAMILY_ENUMS`] outside
//!   [`FAMILIES_DIR`]. Such a match lists families by hand, so that a new family compiles
//!   and then falls into a wildcard arm or an `unreachable!`: run a per-family trait
//!   through `dispatch!`, `dispatch_aggregator!` or `dispatch_family!` instead.
//!   (`if let`, `let ... else` and `matches!` on one variant stay allowed: they test for
//!   one family, and say what every other does.)
//! - [`Rule::ProtocolList`]: a comment or string literal (string literals separated only
//!   by commas read as one) writes out every protocol of a set the registry defines
//!   ([`registry_sets`]). Such a list goes stale when a protocol is added: generate it
//!   (`Protocol::names()`, the sets themselves) or point to the registry.
//!
//! Every `.rs` file under `crates/` and `xtask/` is read, the separate workspaces
//! (`ldp-py`, `ldp-wasm`, `ldp-datafusion`) included; only build outputs (directories
//! named `target`) and hidden directories are not. The first rule reads code, not the
//! examples in doc comments; the second reads prose, not arrays of identifiers in code
//! (`[Protocol::Grr, ...]`), which neither rule checks. A file a rule does not apply to is
//! named in [`EXEMPT`] with the reason, and an exemption that no longer matches a
//! violation fails the check, so that the list only shrinks.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};
use ldp_core::Protocol;

/// Where `match` arms may name families: the registry and the family modules.
pub(crate) const FAMILIES_DIR: &str = "crates/ldp-core/src/families/";

/// The enums the registry generates with one variant per family.
pub(crate) const FAMILY_ENUMS: [&str; 3] = ["AnyMechanism", "AnyAggregator", "FamilyParams"];

/// A rule of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Rule {
    /// A `match` arm on a family variant outside the families.
    HandMatch,
    /// A hand-written list of a registry set of protocols.
    ProtocolList,
}

/// Files a rule does not apply to, with the reason for each. Each must still match a
/// violation: an exemption left over after its file is fixed fails the check.
pub(crate) const EXEMPT: &[(Rule, &str, &str)] = &[];

/// One breach of a rule.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Violation {
    /// The file, relative to the workspace root, with `/` separators.
    pub(crate) path: String,
    /// The line, from 1.
    pub(crate) line: usize,
    /// The rule broken.
    pub(crate) rule: Rule,
    /// What was found.
    pub(crate) what: String,
}

/// Fails listing every violation of the rules in the `.rs` files under `root`, and every
/// exemption of [`EXEMPT`] that no longer matches one.
pub(crate) fn check(root: &Path) -> Result<()> {
    let mut files = Vec::new();
    for dir in ["crates", "xtask"] {
        rust_files(&root.join(dir), &mut files)?;
    }
    if files.is_empty() {
        bail!("no .rs files under {}", root.display());
    }
    let mut violations = Vec::new();
    for file in &files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let path = file
            .strip_prefix(root)
            .unwrap_or(file)
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        violations.extend(check_source(&path, &text));
    }
    report(violations, EXEMPT)
}

/// The violations that no exemption of `exempt` covers, and the exemptions that cover
/// none, as an error; `Ok` when there are neither.
pub(crate) fn report(violations: Vec<Violation>, exempt: &[(Rule, &str, &str)]) -> Result<()> {
    let mut used = BTreeSet::new();
    let mut left: Vec<Violation> = Vec::new();
    for v in violations {
        match exempt
            .iter()
            .position(|&(rule, path, _)| rule == v.rule && path == v.path)
        {
            Some(i) => {
                used.insert(i);
            }
            None => left.push(v),
        }
    }
    left.sort();
    let mut lines: Vec<String> = left
        .iter()
        .map(|v| format!("{}:{}: {:?}: {}", v.path, v.line, v.rule, v.what))
        .collect();
    for (i, (rule, path, _)) in exempt.iter().enumerate() {
        if !used.contains(&i) {
            lines.push(format!(
                "{path}: exempt from {rule:?} but breaks it no more: remove the exemption \
                 from xtask/src/tidy/sources.rs"
            ));
        }
    }
    if lines.is_empty() {
        Ok(())
    } else {
        bail!(
            "the registry's lists written by hand (xtask/src/tidy/sources.rs):\n  {}",
            lines.join("\n  ")
        )
    }
}

/// Every `.rs` file under `dir`, build outputs and hidden directories aside.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .collect::<std::io::Result<_>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out)?;
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The violations of both rules in one file (`path` relative to the workspace root).
pub(crate) fn check_source(path: &str, text: &str) -> Vec<Violation> {
    let lexed = lex(text);
    let lines = LineIndex::new(text);
    let mut out = Vec::new();
    if !path.starts_with(FAMILIES_DIR) {
        for (at, what) in hand_matches(&lexed.tokens) {
            out.push(Violation {
                path: path.to_owned(),
                line: lines.line(at),
                rule: Rule::HandMatch,
                what,
            });
        }
    }
    let sets = registry_sets();
    for prose in &lexed.prose {
        for (at, what) in protocol_lists(&prose.text, &sets) {
            out.push(Violation {
                path: path.to_owned(),
                line: lines.line(prose.offset_of(at)),
                rule: Rule::ProtocolList,
                what,
            });
        }
    }
    out
}

/// The sets of protocols the registry defines, largest first, each with its name: a
/// comment or string that writes one out restates the registry.
pub(crate) fn registry_sets() -> Vec<(&'static str, BTreeSet<&'static str>)> {
    let names = |list: &[Protocol]| list.iter().map(|p| p.name()).collect::<BTreeSet<_>>();
    let paper = names(&Protocol::PAPER);
    let later: Vec<Protocol> = Protocol::ALL
        .into_iter()
        .filter(|p| !Protocol::PAPER.contains(p))
        .collect();
    let mut sets = vec![
        ("every protocol (Protocol::ALL)", names(&Protocol::ALL)),
        (
            "the classic protocols (Protocol::CLASSIC)",
            names(&Protocol::CLASSIC),
        ),
        ("the paper's protocols (Protocol::PAPER)", paper),
        (
            "the adaptive protocols (Protocol::ADAPTIVE)",
            names(&Protocol::ADAPTIVE),
        ),
        ("the protocols added since the paper", names(&later)),
    ];
    sets.retain(|(_, set)| set.len() > 1);
    sets.sort_by_key(|(_, set)| std::cmp::Reverse(set.len()));
    sets
}

/// Byte offsets to line numbers.
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex(starts)
    }

    /// The line (from 1) of the byte at `offset`.
    fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&start| start <= offset)
    }
}

/// A code token: comments and the insides of literals are not code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    /// An identifier or keyword.
    Ident(&'a str),
    /// Punctuation: one character, or `::` and `=>`.
    Punct(&'a str),
    /// A string, character or number literal.
    Literal,
    /// A lifetime or loop label.
    Lifetime,
}

/// A token and the byte offset where it starts.
#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    tok: Tok<'a>,
    at: usize,
}

/// Text of a comment or string literal, and where each of its pieces starts in the file.
#[derive(Debug, Default)]
struct Prose {
    text: String,
    /// (offset in `text`, offset in the file) of each piece.
    pieces: Vec<(usize, usize)>,
}

impl Prose {
    fn push(&mut self, text: &str, file_offset: usize) {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.pieces.push((self.text.len(), file_offset));
        self.text.push_str(text);
    }

    /// The file offset of the piece holding `text_offset`.
    fn offset_of(&self, text_offset: usize) -> usize {
        let i = self.pieces.partition_point(|&(t, _)| t <= text_offset);
        self.pieces[i.saturating_sub(1)].1
    }
}

/// A file split into code tokens and prose.
#[derive(Debug, Default)]
struct Lexed<'a> {
    tokens: Vec<Token<'a>>,
    prose: Vec<Prose>,
}

/// Splits Rust source into tokens and prose: line comments on consecutive lines read as
/// one prose, and so do string literals separated only by a comma.
fn lex(src: &str) -> Lexed<'_> {
    let bytes = src.as_bytes();
    let mut out = Lexed::default();
    // Where the last line comment ended, when it is the last prose.
    let mut comment_end: Option<usize> = None;
    // The token index after the last string literal, when it is the last prose.
    let mut string_end: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if src[i..].starts_with("//") {
            let end = src[i..].find('\n').map_or(src.len(), |n| i + n);
            let body = src[i + 2..end].trim_start_matches(['/', '!']);
            let joins = comment_end.is_some_and(|e| {
                let gap = &src[e..i];
                gap.trim().is_empty() && gap.matches('\n').count() == 1
            });
            if !joins {
                out.prose.push(Prose::default());
            }
            out.prose.last_mut().expect("pushed").push(body, i + 2);
            comment_end = Some(end);
            string_end = None;
            i = end;
        } else if src[i..].starts_with("/*") {
            let end = block_comment_end(src, i);
            let inner_end = if src[..end].ends_with("*/") && end >= i + 4 {
                end - 2
            } else {
                end
            };
            let body = src[i + 2..inner_end].trim_start_matches(['*', '!']);
            let mut prose = Prose::default();
            prose.push(body, i + 2);
            out.prose.push(prose);
            comment_end = None;
            string_end = None;
            i = end;
        } else if c == b'"' {
            let (end, text) = string_literal(src, i, false);
            push_string(&mut out, &mut string_end, text, i + 1);
            out.tokens.push(Token {
                tok: Tok::Literal,
                at: i,
            });
            string_end = Some(out.tokens.len());
            comment_end = None;
            i = end;
        } else if c == b'\'' {
            i = char_or_lifetime(src, i, &mut out.tokens);
            comment_end = None;
        } else if (c == b'_' || c.is_ascii_alphabetic() || c >= 0x80) && ident_end(src, i) > i {
            let end = ident_end(src, i);
            let word = &src[i..end];
            let next = bytes.get(end).copied();
            if matches!(word, "b" | "c" | "r" | "br" | "cr") && raw_or_string_start(src, end) {
                let raw = word.ends_with('r');
                let (lit_end, text) = string_literal(src, end, raw);
                push_string(&mut out, &mut string_end, text, end);
                out.tokens.push(Token {
                    tok: Tok::Literal,
                    at: i,
                });
                string_end = Some(out.tokens.len());
                i = lit_end;
            } else if word == "b" && next == Some(b'\'') {
                i = char_or_lifetime(src, end, &mut out.tokens);
            } else if word == "r" && next == Some(b'#') {
                let end = ident_end(src, end + 1);
                out.tokens.push(Token {
                    tok: Tok::Ident(&src[i..end]),
                    at: i,
                });
                i = end;
            } else {
                out.tokens.push(Token {
                    tok: Tok::Ident(word),
                    at: i,
                });
                i = end;
            }
            comment_end = None;
        } else if c.is_ascii_digit() {
            let mut end = i;
            while end < bytes.len()
                && (bytes[end].is_ascii_alphanumeric()
                    || bytes[end] == b'_'
                    || (bytes[end] == b'.' && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)))
            {
                end += 1;
            }
            out.tokens.push(Token {
                tok: Tok::Literal,
                at: i,
            });
            comment_end = None;
            i = end;
        } else {
            let len = if src[i..].starts_with("::") || src[i..].starts_with("=>") {
                2
            } else {
                src[i..].chars().next().map_or(1, char::len_utf8)
            };
            out.tokens.push(Token {
                tok: Tok::Punct(&src[i..i + len]),
                at: i,
            });
            comment_end = None;
            i += len;
        }
    }
    out
}

/// Adds a string literal's text as prose, to the last prose when only a comma separates
/// it from the string literal that prose came from.
fn push_string(out: &mut Lexed<'_>, string_end: &mut Option<usize>, text: String, at: usize) {
    let after_comma = string_end
        .is_some_and(|t| out.tokens.len() == t + 1 && out.tokens[t].tok == Tok::Punct(","));
    if !after_comma {
        out.prose.push(Prose::default());
    }
    let prose = out.prose.last_mut().expect("pushed");
    if after_comma {
        // Read as `a, b`: the newline `push` puts between pieces is a separator too.
        prose.text.push(',');
    }
    prose.push(&text, at);
}

/// The end of the identifier (or keyword) starting at `i`.
fn ident_end(src: &str, i: usize) -> usize {
    src[i..]
        .char_indices()
        .find(|&(_, ch)| !(ch == '_' || ch.is_alphanumeric()))
        .map_or(src.len(), |(n, _)| i + n)
}

/// Whether a string literal (`"`, or raw `#..#"`) starts at `i`, after a prefix.
fn raw_or_string_start(src: &str, i: usize) -> bool {
    let rest = &src[i..];
    rest.starts_with('"') || rest.trim_start_matches('#').starts_with('"') && rest.starts_with('#')
}

/// The end of the block comment starting at `i` (nested comments included).
fn block_comment_end(src: &str, i: usize) -> usize {
    let mut depth = 0;
    let mut j = i;
    while j < src.len() {
        if src[j..].starts_with("/*") {
            depth += 1;
            j += 2;
        } else if src[j..].starts_with("*/") {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return j;
            }
        } else {
            j += src[j..].chars().next().map_or(1, char::len_utf8);
        }
    }
    src.len()
}

/// The string literal whose opening quote (or, raw, first `#` or quote) is at `i`: its
/// end and its text, escapes resolved.
fn string_literal(src: &str, i: usize, raw: bool) -> (usize, String) {
    if raw {
        let hashes = src[i..].bytes().take_while(|&b| b == b'#').count();
        let open = i + hashes + 1;
        let close = format!("\"{}", "#".repeat(hashes));
        let end = src[open..].find(&close).map_or(src.len(), |n| open + n);
        return (
            (end + close.len()).min(src.len()),
            src[open..end].to_owned(),
        );
    }
    let mut text = String::new();
    let mut chars = src[i + 1..].char_indices();
    while let Some((n, ch)) = chars.next() {
        match ch {
            '"' => return (i + 1 + n + 1, text),
            '\\' => match chars.next() {
                Some((_, 'n')) => text.push('\n'),
                Some((_, 't')) => text.push('\t'),
                Some((_, '\n')) => {
                    // A line continuation: the next line's leading whitespace is skipped.
                    text.push(' ');
                    let rest = chars.as_str();
                    let skip = rest.len() - rest.trim_start().len();
                    for _ in 0..rest[..skip].chars().count() {
                        chars.next();
                    }
                }
                Some((_, other)) => text.push(other),
                None => break,
            },
            other => text.push(other),
        }
    }
    (src.len(), text)
}

/// Lexes a character literal or a lifetime starting at the quote at `i`; returns its end.
fn char_or_lifetime<'a>(src: &'a str, i: usize, tokens: &mut Vec<Token<'a>>) -> usize {
    let rest = &src[i + 1..];
    let mut chars = rest.chars();
    let first = chars.next();
    let is_char = match first {
        Some('\\') => true,
        Some(_) => chars.next() == Some('\''),
        None => false,
    };
    if is_char {
        let body_end = if first == Some('\\') {
            // Skip the escaped character, then up to the closing quote.
            let after = i + 2 + rest[1..].chars().next().map_or(0, char::len_utf8);
            src[after..].find('\'').map_or(src.len(), |n| after + n)
        } else {
            i + 1 + first.map_or(0, char::len_utf8)
        };
        tokens.push(Token {
            tok: Tok::Literal,
            at: i,
        });
        (body_end + 1).min(src.len())
    } else {
        tokens.push(Token {
            tok: Tok::Lifetime,
            at: i,
        });
        ident_end(src, i + 1)
    }
}

/// The index of the bracket closing the one at `open`, or the end.
fn closing(tokens: &[Token<'_>], open: usize) -> usize {
    let mut depth = 0i32;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Punct("(" | "[" | "{") => depth += 1,
            Tok::Punct(")" | "]" | "}") => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// Each `match` arm whose pattern names a variant of [`FAMILY_ENUMS`]: the offset of the
/// enum's name and the path written (`FamilyParams::Grr`).
fn hand_matches(tokens: &[Token<'_>]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.tok != Tok::Ident("match") {
            continue;
        }
        // The body: the first brace at the scrutinee's depth.
        let mut depth = 0i32;
        let mut body = None;
        for (j, t) in tokens.iter().enumerate().skip(i + 1) {
            match t.tok {
                Tok::Punct("{") if depth == 0 => {
                    body = Some(j);
                    break;
                }
                Tok::Punct("(" | "[" | "{") => depth += 1,
                Tok::Punct(")" | "]" | "}") => {
                    depth -= 1;
                    if depth < 0 {
                        break;
                    }
                }
                Tok::Punct(";") if depth == 0 => break,
                _ => {}
            }
        }
        let Some(open) = body else { continue };
        let close = closing(tokens, open);
        let mut k = open + 1;
        while k < close {
            // The pattern: up to `=>` at the arm's depth.
            let mut depth = 0i32;
            let mut arrow = None;
            for (j, t) in tokens.iter().enumerate().take(close).skip(k) {
                match t.tok {
                    Tok::Punct("=>") if depth == 0 => {
                        arrow = Some(j);
                        break;
                    }
                    Tok::Punct("(" | "[" | "{") => depth += 1,
                    Tok::Punct(")" | "]" | "}") => depth -= 1,
                    _ => {}
                }
            }
            let Some(arrow) = arrow else { break };
            for w in tokens[k..arrow].windows(3) {
                let (Tok::Ident(e), Tok::Punct("::"), Tok::Ident(v)) =
                    (w[0].tok, w[1].tok, w[2].tok)
                else {
                    continue;
                };
                if FAMILY_ENUMS.contains(&e) && v.starts_with(|c: char| c.is_ascii_uppercase()) {
                    out.push((w[0].at, format!("a match arm on {e}::{v}")));
                }
            }
            // The arm's expression: a block, or up to a comma at the arm's depth.
            k = arrow + 1;
            if tokens.get(k).is_some_and(|t| t.tok == Tok::Punct("{")) {
                k = closing(tokens, k) + 1;
                if tokens.get(k).is_some_and(|t| t.tok == Tok::Punct(",")) {
                    k += 1;
                }
            } else {
                let mut depth = 0i32;
                while k < close {
                    match tokens[k].tok {
                        Tok::Punct(",") if depth == 0 => break,
                        Tok::Punct("(" | "[" | "{") => depth += 1,
                        Tok::Punct(")" | "]" | "}") => depth -= 1,
                        _ => {}
                    }
                    k += 1;
                }
                k += 1;
            }
        }
    }
    out.sort();
    out
}

/// Characters that may stand between two items of a written list.
fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | '/' | '|' | '`' | '"' | '\'' | '\\')
}

/// Each run of protocol names in `text` (names or labels, any case, separated by
/// [`is_separator`] characters and the words `and` and `or`) that holds every protocol of
/// one of `sets`: the offset of the run in `text` and what it restates.
fn protocol_lists(
    text: &str,
    sets: &[(&'static str, BTreeSet<&'static str>)],
) -> Vec<(usize, String)> {
    let names: BTreeSet<String> = Protocol::ALL.iter().map(|p| p.name().to_owned()).collect();
    let mut out = Vec::new();
    // The current run: where it starts, and its names as written.
    let mut run: Option<(usize, Vec<String>)> = None;
    let mut gap_ok = true;
    let mut flush = |run: &mut Option<(usize, Vec<String>)>| {
        if let Some((start, words)) = run.take() {
            let found: BTreeSet<&str> = words.iter().map(String::as_str).collect();
            if let Some((name, _)) = sets
                .iter()
                .find(|(_, set)| set.iter().all(|p| found.contains(p)))
            {
                out.push((start, format!("writes out {name}: {}", words.join(", "))));
            }
        }
    };
    let mut i = 0;
    while i < text.len() {
        let ch = text[i..].chars().next().expect("in bounds");
        if ch.is_alphanumeric() || ch == '_' || ch == '-' {
            let end = text[i..]
                .char_indices()
                .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '-'))
                .map_or(text.len(), |(n, _)| i + n);
            let word = text[i..end].to_lowercase();
            if names.contains(&word) {
                match &mut run {
                    Some((_, words)) if gap_ok => words.push(word),
                    _ => {
                        flush(&mut run);
                        run = Some((i, vec![word]));
                    }
                }
                gap_ok = true;
            } else if !(run.is_some() && gap_ok && (word == "and" || word == "or")) {
                flush(&mut run);
                gap_ok = true;
            }
            i = end;
        } else {
            if !is_separator(ch) {
                gap_ok = false;
            }
            i += ch.len_utf8();
        }
    }
    flush(&mut run);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `names` joined as a sentence writes them: `a, b, c and d`.
    fn sentence(names: &[&str]) -> String {
        match names {
            [rest @ .., last] if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }

    fn names(list: &[Protocol]) -> Vec<&'static str> {
        list.iter().map(|p| p.name()).collect()
    }

    #[test]
    fn the_sources_follow_the_family_rules() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        check(root).unwrap();
    }

    #[test]
    fn a_match_on_families_outside_their_modules_is_refused() {
        let code = "fn f(m: &AnyMechanism, p: FamilyParams) -> u32 {\n\
                    \x20   let n = match p {\n\
                    \x20       ldp_core::FamilyParams::LocalHashing { g } => g,\n\
                    \x20       _ => 0,\n\
                    \x20   };\n\
                    \x20   match (m, n) {\n\
                    \x20       (AnyMechanism::Grr(_), 0) | (AnyMechanism::Hr(_), _) => {\n\
                    \x20           1\n\
                    \x20       }\n\
                    \x20       (other, _) => unreachable!(\"{other:?}\"),\n\
                    \x20   }\n\
                    }\n";
        let found = check_source("crates/ldp-audit/src/exact.rs", code);
        let lines: Vec<(usize, &str)> = found.iter().map(|v| (v.line, v.what.as_str())).collect();
        assert_eq!(
            lines,
            [
                (3, "a match arm on FamilyParams::LocalHashing"),
                (7, "a match arm on AnyMechanism::Grr"),
                (7, "a match arm on AnyMechanism::Hr"),
            ]
        );
        assert!(found.iter().all(|v| v.rule == Rule::HandMatch));
        // The same file among the families is the registry's business.
        assert!(check_source("crates/ldp-core/src/families/grr.rs", code).is_empty());
        // A match arm inside a nested match, and one after an arm with a block.
        let nested = "fn f() { match a { X => match b { AnyAggregator::Grr(g) => g, _ => 0 }, \
                      _ => { 1 } FamilyParams::Grr => 2 } }";
        let found = check_source("xtask/src/x.rs", nested);
        let what: Vec<&str> = found.iter().map(|v| v.what.as_str()).collect();
        assert_eq!(
            what,
            [
                "a match arm on AnyAggregator::Grr",
                "a match arm on FamilyParams::Grr"
            ]
        );
    }

    #[test]
    fn what_is_not_a_match_arm_passes() {
        let code = "fn f(any: AnyMechanism) {\n\
                    \x20   let spec = Spec::new(k, eps, FamilyParams::LocalHashing { g: 2 });\n\
                    \x20   let AnyMechanism::Grr(grr) = any else { return };\n\
                    \x20   if let FamilyParams::Grr = spec.family() {}\n\
                    \x20   assert!(matches!(any, AnyMechanism::Grr(_)));\n\
                    \x20   let s = \"match x { AnyMechanism::Grr(m) => 1 }\";\n\
                    \x20   // match x { AnyMechanism::Grr(m) => 1 }\n\
                    \x20   match spec.family().family() { Family::Grr => 1, _ => 0 };\n\
                    \x20   let c = '{'; let l: &'static str = r#\"}\"#; match c { 'a' => 1, _ => 2 };\n\
                    }\n";
        assert_eq!(check_source("crates/ldp-cli/src/x.rs", code), []);
    }

    #[test]
    fn a_written_out_protocol_list_is_refused() {
        let adaptive = names(&Protocol::ADAPTIVE);
        let all = names(&Protocol::ALL);
        let paper = names(&Protocol::PAPER);
        // A doc comment over two lines, a string, an error message, string literals in a
        // row, and labels in upper case.
        let upper: Vec<String> = adaptive.iter().map(|n| n.to_uppercase()).collect();
        let upper: Vec<&str> = upper.iter().map(String::as_str).collect();
        let (head, tail) = all.split_at(all.len() / 2);
        let code = format!(
            "/// Protocol: {},\n/// {}.\nfn f() {{\n    let s = \"({})\";\n    \
             #[error(\"adaptive protocols are {}\")]\n    let v = [\"{}\"];\n}}\n",
            head.join(", "),
            tail.join(", "),
            adaptive.join("/"),
            sentence(&upper),
            paper.join("\", \""),
        );
        let found = check_source("crates/ldp-py/src/mechanism.rs", &code);
        let got: Vec<(usize, Rule, &str)> = found
            .iter()
            .map(|v| (v.line, v.rule, v.what.split(": ").next().unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    1,
                    Rule::ProtocolList,
                    "writes out every protocol (Protocol::ALL)"
                ),
                (
                    4,
                    Rule::ProtocolList,
                    "writes out the adaptive protocols (Protocol::ADAPTIVE)"
                ),
                (
                    5,
                    Rule::ProtocolList,
                    "writes out the adaptive protocols (Protocol::ADAPTIVE)"
                ),
                (
                    6,
                    Rule::ProtocolList,
                    "writes out the paper's protocols (Protocol::PAPER)"
                ),
            ],
            "{code}"
        );
    }

    #[test]
    fn a_few_protocols_and_other_words_pass() {
        let adaptive = names(&Protocol::ADAPTIVE);
        let (last, some) = adaptive.split_last().unwrap();
        let code = format!(
            "/// The adaptive protocols: {} (and {last} for thresholds).\n\
             /// The {} of the paper; the {} and the {}.\n\
             fn f() {{ let x = \"l-{}\"; }}\n",
            some.join(", "),
            sentence(&adaptive[..2]),
            adaptive[0],
            adaptive[1],
            adaptive.join(", l-"),
        );
        assert_eq!(check_source("crates/ldp-cli/src/x.rs", &code), [], "{code}");
    }

    #[test]
    fn exemptions_are_named_and_must_still_be_needed() {
        // Today none is needed; the mechanism is tested on a list of its own.
        assert!(EXEMPT.iter().all(|(_, _, reason)| !reason.is_empty()));
        let exempt: &[(Rule, &str, &str)] = &[
            (Rule::HandMatch, "crates/a.rs", "a reason"),
            (Rule::ProtocolList, "crates/b.rs", "another"),
        ];
        let violation = |rule, path: &str| Violation {
            path: path.to_owned(),
            line: 1,
            rule,
            what: String::new(),
        };
        // Every exemption matched: nothing to report.
        let all: Vec<Violation> = exempt.iter().map(|&(r, p, _)| violation(r, p)).collect();
        report(all.clone(), exempt).unwrap();
        // One exemption matched nothing: reported by name.
        let err = report(all[1..].to_vec(), exempt).unwrap_err().to_string();
        assert!(
            err.contains("crates/a.rs") && err.contains("breaks it no more"),
            "{err}"
        );
        // The same file breaking the other rule is not exempt.
        let mut more = all;
        more.push(violation(Rule::ProtocolList, "crates/a.rs"));
        assert!(report(more, exempt).is_err());
    }
}
