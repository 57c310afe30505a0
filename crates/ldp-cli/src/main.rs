//! `ldp`: tune, analyze, perturb, aggregate, attack and simulate LDP frequency oracles.
//!
//! Every error is one line on stderr and exit status 2; nothing panics on user input.

mod commands;
mod output;
mod protocol;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = commands::Cli::parse();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Broken pipes (e.g. `ldp perturb | head`) are not errors worth reporting.
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            eprintln!("ldp: error: {}", format_chain(&e));
            ExitCode::from(2)
        }
    }
}

/// "outer: inner: innermost", on one line.
fn format_chain(e: &anyhow::Error) -> String {
    e.chain()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}
