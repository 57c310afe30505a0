//! Every console example of the README and of `docs/*.md`, run against the `ldp` binary.
//!
//! A page shows a command and its output in a fenced block opened by ` ```console `; this
//! test runs every such block and fails, listing every drift at once, when an output shown
//! is not what the tool prints. Blocks not meant to run (installing, `cargo xtask`, Python,
//! the DataFusion binaries) are ` ```sh ` blocks, which this test does not read.
//!
//! The rules of a console block:
//!
//! - A line starting with `$ ` starts a command; while a line ends with a backslash the
//!   command continues onto the next line. The lines after it, up to the next `$ ` line or
//!   the end of the block, are what the command prints. Blank lines at the end of an output
//!   only separate commands and are ignored. Nothing but blank lines may precede the
//!   block's first command.
//! - Each block runs in a fresh temporary directory, shared by its commands (one may write
//!   a file that a later one reads), that links `crates`, `results`, `configs` and `docs` to
//!   the repository's, so relative paths in examples work. Each command runs as
//!   `bash -c 'set -o pipefail; COMMAND'`, stdin empty, with the directory of the `ldp`
//!   binary under test first on `PATH`.
//! - Output lines starting with `ldp: ` are what the command prints on stderr (where they
//!   sit among the other lines is not checked: a terminal interleaves the two streams by
//!   timing); the command's stderr must be exactly those lines, and its stdout exactly the
//!   other lines.
//! - The exit status must be 0, unless a line shown starts with `ldp: error: `: then it
//!   must be 2, the tool's status for every error.
//! - Partial output: when the last line shown is exactly `...`, only the lines above it are
//!   checked, as the first lines of stdout (and of stderr). Pages use it only where the
//!   whole output is long, and say in their prose that it is cut.

// The examples are shell command lines, run by bash in a directory of symbolic links.
#![cfg(unix)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One command of a console block, with the output its page shows.
#[derive(Debug, PartialEq)]
struct Example {
    /// The page, relative to the repository root.
    page: String,
    /// The 1-based line of the page where the command starts.
    line: usize,
    /// The command as bash reads it (continuation lines included, without `$ `).
    command: String,
    /// The lines shown for stdout.
    stdout: Vec<String>,
    /// The lines shown for stderr (those starting with `ldp: `).
    stderr: Vec<String>,
    /// The page cuts the output (`...`): compare prefixes.
    partial: bool,
}

/// The console blocks of one page: each block's commands, in order.
fn parse_page(page: &str, text: &str) -> Result<Vec<Vec<Example>>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```console" {
            // A console block this test would not read must not pass as tested.
            if lines[i].trim_start().starts_with("```console") {
                return Err(format!(
                    "{page}:{}: a console block must open with ```console alone at the line's \
                     start (this one is indented or says more), or it is not tested",
                    i + 1
                ));
            }
            i += 1;
            continue;
        }
        let open = i + 1;
        i += 1;
        let start = i;
        while i < lines.len() && !lines[i].starts_with("```") {
            i += 1;
        }
        if i == lines.len() {
            return Err(format!("{page}:{open}: console block never closed"));
        }
        blocks.push(parse_block(page, &lines[start..i], start + 1)?);
        i += 1;
    }
    Ok(blocks)
}

/// The commands of one block whose first line is line `first` of the page (1-based).
fn parse_block(page: &str, lines: &[&str], first: usize) -> Result<Vec<Example>, String> {
    let mut examples: Vec<Example> = Vec::new();
    let mut outputs: Vec<Vec<String>> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(command) = line.strip_prefix("$ ") {
            let start = i;
            let mut command = command.to_owned();
            while command.ends_with('\\') {
                i += 1;
                let Some(next) = lines.get(i) else {
                    return Err(format!(
                        "{page}:{}: the command's last line ends with a backslash",
                        first + start
                    ));
                };
                command.push('\n');
                command.push_str(next);
            }
            examples.push(Example {
                page: page.to_owned(),
                line: first + start,
                command,
                stdout: Vec::new(),
                stderr: Vec::new(),
                partial: false,
            });
            outputs.push(Vec::new());
        } else if let Some(output) = outputs.last_mut() {
            output.push(line.to_owned());
        } else if !line.trim().is_empty() {
            return Err(format!(
                "{page}:{}: output before the block's first `$ ` command",
                first + i
            ));
        }
        i += 1;
    }
    if examples.is_empty() {
        return Err(format!(
            "{page}:{}: a console block without a command",
            first - 1
        ));
    }
    for (example, mut output) in examples.iter_mut().zip(outputs) {
        while output.last().is_some_and(|l| l.trim().is_empty()) {
            output.pop();
        }
        if output.last().is_some_and(|l| l == "...") {
            output.pop();
            example.partial = true;
        }
        for line in output {
            if line.starts_with("ldp: ") {
                example.stderr.push(line);
            } else {
                example.stdout.push(line);
            }
        }
    }
    Ok(examples)
}

/// A line diff of `expected` against `actual` (longest common subsequence): `-` lines the
/// page shows and the command did not print, `+` lines it printed that the page does not
/// show, at most `cap` lines.
fn diff(expected: &[String], actual: &[String], cap: usize) -> String {
    let (n, m) = (expected.len(), actual.len());
    // lcs[i][j]: the longest common subsequence of expected[i..] and actual[j..].
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if expected[i] == actual[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut lines = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && expected[i] == actual[j] {
            lines.push(format!("   {}", expected[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            lines.push(format!(" - {}", expected[i]));
            i += 1;
        } else {
            lines.push(format!(" + {}", actual[j]));
            j += 1;
        }
    }
    let total = lines.len();
    let mut out = String::new();
    for line in lines.into_iter().take(cap) {
        let _ = writeln!(out, "    {line}");
    }
    if total > cap {
        let _ = writeln!(out, "    ({} more lines)", total - cap);
    }
    out
}

/// Compares what a stream printed with what the page shows; a description of the drift.
fn compare(stream: &str, shown: &[String], printed: &str, partial: bool) -> Option<String> {
    let mut printed: Vec<String> = printed.lines().map(str::to_owned).collect();
    // A cut block checks the first lines of a stream it shows; one it shows nothing of
    // (stderr, usually) must stay empty.
    if partial && !shown.is_empty() && printed.len() > shown.len() {
        printed.truncate(shown.len());
    }
    if printed == shown {
        return None;
    }
    let what = if partial { "the first lines of " } else { "" };
    Some(format!(
        "  {what}{stream} differs (- page, + ldp):\n{}",
        diff(shown, &printed, 60)
    ))
}

/// A directory of our own under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(root: &Path, block: usize) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("ldp-docs-examples-{}-{block}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["crates", "results", "configs", "docs"] {
            std::os::unix::fs::symlink(root.join(name), dir.join(name)).unwrap();
        }
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Removes the links, not what they point to.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs one example in `dir`; a description of every way it drifted from its page.
fn run(example: &Example, dir: &Path, path: &std::ffi::OsStr) -> Option<String> {
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!("set -o pipefail\n{}", example.command))
        .current_dir(dir)
        .env("PATH", path)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let error_shown = example.stderr.iter().any(|l| l.starts_with("ldp: error: "));
    let want = if error_shown { 2 } else { 0 };
    let mut problems = String::new();
    if output.status.code() != Some(want) {
        let _ = writeln!(
            problems,
            "  exit status {} (expected {want})",
            output
                .status
                .code()
                .map_or("none (killed by a signal)".to_owned(), |c| c.to_string())
        );
    }
    for (name, shown, printed) in [
        ("stdout", &example.stdout, &stdout),
        ("stderr", &example.stderr, &stderr),
    ] {
        if let Some(drift) = compare(name, shown, printed, example.partial) {
            problems.push_str(&drift);
        }
    }
    (!problems.is_empty()).then(|| {
        format!(
            "{}:{}:\n  $ {}\n{problems}",
            example.page,
            example.line,
            example.command.replace('\n', "\n    ")
        )
    })
}

#[test]
fn every_console_example_prints_what_its_page_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap();
    let mut pages = vec!["README.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    pages.extend(docs);

    let ldp = Path::new(env!("CARGO_BIN_EXE_ldp"));
    let mut path = std::ffi::OsString::from(ldp.parent().unwrap());
    if let Some(old) = std::env::var_os("PATH") {
        path.push(":");
        path.push(old);
    }

    let mut failures = Vec::new();
    let mut commands = 0;
    let mut block_index = 0;
    for page in &pages {
        let text = std::fs::read_to_string(root.join(page)).unwrap();
        let blocks = match parse_page(page, &text) {
            Ok(blocks) => blocks,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        for block in blocks {
            block_index += 1;
            let dir = TempDir::new(&root, block_index);
            for example in &block {
                commands += 1;
                let started = Instant::now();
                if let Some(failure) = run(example, &dir.0, &path) {
                    failures.push(failure);
                }
                // Examples should stay fast; `--nocapture` shows the slow ones.
                let seconds = started.elapsed().as_secs_f64();
                if seconds > 1.0 {
                    eprintln!("{}:{}: {seconds:.1} s", example.page, example.line);
                }
            }
        }
    }
    // A parser that finds nothing would pass: the pages hold more examples than this.
    assert!(
        commands >= 10,
        "only {commands} console commands found in {pages:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {commands} console examples drifted from their pages:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn blocks_parse_into_commands_outputs_and_cuts() {
    let page = "text\n\
        ```console\n\
        $ printf 'a\\nb\\n' \\\n\
        \x20   | cat\n\
        a\n\
        ldp: note: x\n\
        b\n\
        \n\
        $ ldp frontier\n\
        param\n\
        ...\n\
        ```\n\
        ```sh\n\
        $ not a console block\n\
        ```\n";
    let blocks = parse_page("p.md", page).unwrap();
    assert_eq!(blocks.len(), 1);
    let [first, second] = &blocks[0][..] else {
        panic!("{blocks:?}")
    };
    assert_eq!(first.line, 3);
    assert_eq!(first.command, "printf 'a\\nb\\n' \\\n    | cat");
    assert_eq!(first.stdout, ["a", "b"]);
    assert_eq!(first.stderr, ["ldp: note: x"]);
    assert!(!first.partial);
    assert_eq!(second.line, 9);
    assert_eq!(second.stdout, ["param"]);
    assert!(second.partial);
    assert!(parse_page("p.md", "```console\noutput\n$ ls\n```\n").is_err());
    assert!(parse_page("p.md", "```console\n$ ls\n").is_err());
    // Fences it would skip are errors, not silently untested blocks.
    assert!(parse_page("p.md", "- item\n  ```console\n  $ ls\n  ```\n").is_err());
    assert!(parse_page("p.md", "```console title=x\n$ ls\n```\n").is_err());
    // A cut stream shown empty must be empty.
    assert!(compare("stderr", &[], "warning\n", true).is_some());
    assert!(compare("stdout", &["a".into()], "a\nb\n", true).is_none());
}

#[test]
fn the_diff_marks_missing_and_extra_lines() {
    let page: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let printed: Vec<String> = ["a", "x", "c", "d"].map(String::from).to_vec();
    assert_eq!(
        diff(&page, &printed, 10),
        "       a\n     - b\n     + x\n       c\n     + d\n"
    );
}
