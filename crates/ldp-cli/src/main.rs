//! `ldp`: analyze, tune, perturb, aggregate, attack, simulate and audit LDP frequency oracles.
//!
//! Every error is one line on stderr, `ldp: error: ...`, with exit status 2; nothing
//! panics on user input. A closed stdout (`ldp perturb | head`) is a normal end.

/// `eprintln!` for notes and errors that ignores a broken stderr (`2>/dev/full`, a
/// closed pipe): a message that cannot be shown must not become a panic.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod commands;
mod lines;
mod memory;
mod output;
mod protocol;
mod streams;

use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

fn main() -> ExitCode {
    let cli = match commands::Cli::try_parse_from(negative_values_attached(std::env::args_os())) {
        Ok(cli) => cli,
        Err(e) => return parse_error(&e),
    };
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            note!("ldp: error: {}", one_line(&format_chain(&e)));
            ExitCode::from(2)
        }
    }
}

/// `--flag -1e-6` as `--flag=-1e-6`: clap takes a leading `-` for a flag unless the token
/// looks like a number to it, and a negative exponent does not (`-1e-6`, `-1e-6,2`).
/// Joined, the value reaches the flag's own check and its named error.
fn negative_values_attached(
    args: impl Iterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let numeric = |t: &str| t.starts_with('-') && t.split(',').all(|v| v.parse::<f64>().is_ok());
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    for arg in args {
        let joined = match (out.last().and_then(|f| f.to_str()), arg.to_str()) {
            (Some(flag), Some(value))
                if flag.len() > 2
                    && flag.starts_with("--")
                    && !flag.contains('=')
                    && numeric(value) =>
            {
                Some(format!("{flag}={value}"))
            }
            _ => None,
        };
        match joined {
            Some(j) => *out.last_mut().expect("a flag") = j.into(),
            None => out.push(arg),
        }
    }
    out
}

/// Help and version go to stdout with status 0; every other parser error becomes one
/// line (the message and clap's tip, without the usage block) with status 2.
fn parse_error(e: &clap::Error) -> ExitCode {
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        // A failed write (a full disk) is an error; a closed pipe (`| head`) is not.
        return match e.print() {
            Err(io) if io.kind() != std::io::ErrorKind::BrokenPipe => {
                note!("ldp: error: writing the help: {io}");
                ExitCode::from(2)
            }
            _ => ExitCode::SUCCESS,
        };
    }
    let rendered = e.render().to_string();
    let mut line = String::new();
    for part in rendered
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
    {
        if !line.is_empty() {
            // A list introduced by a colon continues on the same clause.
            line += if line.ends_with(':') { " " } else { "; " };
        }
        line += part;
    }
    note!("ldp: error: {}; see `ldp --help`", one_line(&line));
    ExitCode::from(2)
}

/// Whether the error is a write to a closed pipe, wherever it sits in the chain.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// `text` with its control characters (newlines, ANSI escapes from a quoted argument)
/// escaped, so that an error stays one line and cannot drive the terminal.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// "outer: inner: innermost", on one line; a cause whose message its parent already
/// ends with (a library quoting its source) is not repeated.
fn format_chain(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !parts.last().is_some_and(|last| last.ends_with(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}
