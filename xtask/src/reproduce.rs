//! `cargo xtask reproduce`: run every configuration of `configs/paper/` and write
//! `results/paper/<figure>/{data.csv, figure.svg, manifest.ron}`.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use ldp_experiments::runner::{self, ConfigFile};

pub(crate) struct Options {
    pub(crate) figure: Option<String>,
    pub(crate) list: bool,
    pub(crate) quick: bool,
}

pub(crate) fn run(root: &Path, o: &Options) -> Result<()> {
    let configs =
        runner::load_configs(&root.join("configs/paper")).context("reading configs/paper")?;
    if o.list {
        for c in &configs {
            let when = if c.experiment.on_demand {
                " (on demand: --figure)"
            } else {
                ""
            };
            println!("{:<45} {}{when}", c.experiment.figure, c.experiment.title);
        }
        return Ok(());
    }
    let selected: Vec<&ConfigFile> = configs
        .iter()
        .filter(|c| match &o.figure {
            Some(f) => &c.experiment.figure == f,
            // A long grid runs only when named.
            None => !c.experiment.on_demand,
        })
        .collect();
    if selected.is_empty() {
        let names: Vec<&str> = configs
            .iter()
            .map(|c| c.experiment.figure.as_str())
            .collect();
        bail!(
            "no figure named {:?}; known figures: {}",
            o.figure.as_deref().unwrap_or(""),
            names.join(", ")
        );
    }
    // Quick runs go to a scratch folder so they never overwrite the committed results.
    let out = if o.quick {
        root.join("results/scratch/paper")
    } else {
        root.join("results/paper")
    };
    let commit = git_commit(root);
    let bar = ProgressBar::new(selected.len() as u64).with_style(
        ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let start = Instant::now();
    for c in &selected {
        bar.set_message(c.experiment.figure.clone());
        let (output, manifest) =
            runner::run(c, o.quick, &commit).with_context(|| c.experiment.figure.clone())?;
        let folder = runner::write(&out, &output, &manifest)?;
        // suspend, not println: the lines must also appear when output is not a terminal.
        bar.suspend(|| {
            println!(
                "{:<45} {:>7.2}s  {:>6} rows  -> {}",
                manifest.figure,
                manifest.wall_time_s,
                manifest.rows,
                folder.strip_prefix(root).unwrap_or(&folder).display()
            );
            for f in &manifest.findings {
                println!("    {f}");
            }
        });

        bar.inc(1);
    }
    bar.finish_and_clear();
    println!(
        "{} figure(s) in {:.1}s on {} thread(s); results in {}",
        selected.len(),
        start.elapsed().as_secs_f64(),
        rayon::current_num_threads(),
        out.strip_prefix(root).unwrap_or(&out).display()
    );
    Ok(())
}

/// `git rev-parse HEAD`, with `-dirty` when tracked files outside results/ changed;
/// "unknown" without git.
fn git_commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "HEAD"]) {
        Some(head) => {
            let dirty = git(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":(exclude)results",
            ])
            .is_some_and(|s| !s.is_empty());
            if dirty { format!("{head}-dirty") } else { head }
        }
        None => "unknown".into(),
    }
}
