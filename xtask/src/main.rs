//! `cargo xtask`: repository automation (DESIGN §2 and §7).
//!
//! - `cargo xtask reproduce [--figure NAME] [--list] [--quick]`: regenerate the paper's
//!   figures from `configs/paper/` into `results/paper/` (quick: `results/scratch/`).
//! - `cargo xtask tidy`: check repository rules (crate layering, one build shared with
//!   `cargo test --workspace`, no hand-written match on families or list of protocols).
//! - `cargo xtask bench`: run every criterion benchmark.
//! - `cargo xtask bench-engine`: Parquet aggregation by `ldp`, DataFusion and Ballista.
//! - `cargo xtask web [--test]`: the protocol chooser page and its browser client, into
//!   `target/web/`; `--test` runs their tests under Node and in Chromium.

mod engine_bench;
mod reproduce;
mod tidy;
mod web;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Repository automation for the ldp workspace"
)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Regenerate the data and figures of every figure of the paper.
    Reproduce {
        /// Run only this figure (its paper label, e.g. asr_analysis).
        #[arg(long)]
        figure: Option<String>,
        /// List the figures and exit.
        #[arg(long)]
        list: bool,
        /// Reduced runs (fewer points and runs), written to results/scratch/.
        #[arg(long)]
        quick: bool,
    },
    /// Check repository rules (crate layering of DESIGN §2; xtask builds what the tests
    /// build; families matched and protocols listed only through the registry).
    Tidy,
    /// Run the criterion benchmarks of every crate.
    Bench,
    /// Aggregate Parquet reports with `ldp aggregate`, DataFusion and a two-executor
    /// Ballista cluster (builds the engine adapter in release mode: about 20 minutes
    /// from clean).
    BenchEngine {
        /// OLH reports at k = 100.
        #[arg(long, default_value_t = 100_000_000)]
        olh_reports: u64,
        /// OUE reports at k = 1000.
        #[arg(long, default_value_t = 10_000_000)]
        oue_reports: u64,
    },
    /// Build the protocol chooser page (web/) and its WebAssembly client
    /// (crates/ldp-wasm) into target/web/.
    Web {
        /// Also run the module's tests under Node and the page's tests in headless
        /// Chromium (needs Node, npm and Debian's chromium).
        #[arg(long)]
        test: bool,
    },
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn main() -> Result<()> {
    match Cli::parse().task {
        Task::Reproduce {
            figure,
            list,
            quick,
        } => reproduce::run(
            &root(),
            &reproduce::Options {
                figure,
                list,
                quick,
            },
        ),
        Task::Tidy => {
            tidy::check_layering(&tidy::workspace_edges(&root())?)?;
            tidy::check_shared_build(&root())?;
            tidy::sources::check(&root())?;
            println!(
                "tidy: layering ok; cargo xtask shares the tests' build; families are matched \
                 and protocols listed through the registry"
            );
            Ok(())
        }
        Task::BenchEngine {
            olh_reports,
            oue_reports,
        } => engine_bench::run(
            &root(),
            &engine_bench::Options {
                olh_reports,
                oue_reports,
            },
        ),
        Task::Web { test } => web::run(&root(), &web::Options { test }),
        Task::Bench => {
            let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["bench", "--workspace"])
                .current_dir(root())
                .status()?;
            if !status.success() {
                bail!("cargo bench failed");
            }
            Ok(())
        }
    }
}
