//! Running configurations and writing `data.csv`, `figure.svg` and `manifest.ron`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::config::{Experiment, Kind};
use crate::error::ExperimentError;
use crate::figures::{self, Output};
use crate::plot::{render_pdf, render_png, render_svg};

/// A configuration file and what it holds.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its text (hashed into the manifest).
    pub text: String,
    /// The parsed experiment.
    pub experiment: Experiment,
}

/// Reads every `*.ron` file of `dir`, sorted by name.
pub fn load_configs(dir: &Path) -> Result<Vec<ConfigFile>, ExperimentError> {
    let io = |source| ExperimentError::Io {
        path: dir.display().to_string(),
        source,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).map_err(|source| ExperimentError::Io {
                path: path.display().to_string(),
                source,
            })?;
            // The file's name in front of the reason, said once.
            let experiment = Experiment::from_ron(&text).map_err(|e| {
                let reason = match e {
                    ExperimentError::Config(reason) => reason,
                    other => other.to_string(),
                };
                ExperimentError::Config(format!("{}: {reason}", path.display()))
            })?;
            Ok(ConfigFile {
                path,
                text,
                experiment,
            })
        })
        .collect()
}

/// Where and how a run happened, recorded in its manifest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Manifest {
    /// The figure's label.
    pub figure: String,
    /// Full run, or the reduced `quick` one.
    pub mode: String,
    /// The configuration file.
    pub config_file: String,
    /// XXH64 of the configuration file's text.
    pub config_hash: String,
    /// The master seed of simulations, if any.
    pub seed: Option<u64>,
    /// Git commit of the code (with `-dirty` when the tree had changes).
    pub git_commit: String,
    /// Whether the working tree had uncommitted changes when the figure was made.
    pub tree_dirty: bool,
    /// Versions of the crates that computed the result.
    pub crate_versions: BTreeMap<String, String>,
    /// Rayon worker threads (results do not depend on it).
    pub threads: usize,
    /// Wall time of the computation, in seconds.
    pub wall_time_s: f64,
    /// Rows of data.csv.
    pub rows: usize,
    /// Notable facts about the result.
    pub findings: Vec<String>,
    /// Where the configuration departs from or interprets the paper.
    pub notes: Vec<String>,
}

/// Runs one configuration (full or quick).
pub fn run(
    config: &ConfigFile,
    quick: bool,
    git_commit: &str,
) -> Result<(Output, Manifest), ExperimentError> {
    let exp = if quick {
        config.experiment.quick()
    } else {
        config.experiment.clone()
    };
    let start = Instant::now();
    let output = figures::run(&exp)?;
    let wall_time_s = start.elapsed().as_secs_f64();
    let version = env!("CARGO_PKG_VERSION").to_owned();
    let crate_versions = [
        "ldp-core",
        "ldp-analytic",
        "ldp-optimize",
        "ldp-attack",
        "ldp-experiments",
    ]
    .into_iter()
    .map(|c| (c.to_owned(), version.clone()))
    .collect();
    let seed = match &exp.kind {
        Kind::Empirical { seed, .. }
        | Kind::FrontierVsN { seed, .. }
        | Kind::Repeated { seed, .. }
        | Kind::ChangeDetection { seed, .. }
        | Kind::LargeDomain { seed, .. }
        | Kind::Estimators { seed, .. }
        | Kind::AuditGrid { seed, .. }
        | Kind::PoolInference { seed, .. } => Some(*seed),
        _ => None,
    };
    let manifest = Manifest {
        figure: exp.figure.clone(),
        mode: if quick { "quick" } else { "full" }.into(),
        config_file: config
            .path
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
        config_hash: format!(
            "{:016x}",
            xxhash_rust::xxh64::xxh64(config.text.as_bytes(), 0)
        ),
        seed,
        git_commit: git_commit.to_owned(),
        tree_dirty: git_commit.ends_with("-dirty"),
        crate_versions,
        threads: rayon::current_num_threads(),
        wall_time_s,
        rows: output.table.rows.len(),
        findings: output.findings.clone(),
        notes: exp.notes.clone(),
    };
    Ok((output, manifest))
}

/// Writes `data.csv`, `figure.svg`, `figure.png` (200 dpi at the printed width),
/// `figure.pdf` and `manifest.ron` into `dir/<figure>/`.
pub fn write(dir: &Path, output: &Output, manifest: &Manifest) -> Result<PathBuf, ExperimentError> {
    let folder = dir.join(&manifest.figure);
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| ExperimentError::Io { path, source }
    };
    std::fs::create_dir_all(&folder).map_err(io(&folder))?;
    let csv = folder.join("data.csv");
    std::fs::write(&csv, output.table.to_csv(None)).map_err(io(&csv))?;
    let svg_text = render_svg(&output.figure)?;
    let svg = folder.join("figure.svg");
    std::fs::write(&svg, &svg_text).map_err(io(&svg))?;
    let png = folder.join("figure.png");
    std::fs::write(&png, render_png(&svg_text, 200.0)?).map_err(io(&png))?;
    let pdf = folder.join("figure.pdf");
    std::fs::write(&pdf, render_pdf(&svg_text)?).map_err(io(&pdf))?;
    let ron_path = folder.join("manifest.ron");
    let text = ron::ser::to_string_pretty(manifest, ron::ser::PrettyConfig::default())
        .map_err(|e| ExperimentError::Config(e.to_string()))?;
    std::fs::write(&ron_path, text + "\n").map_err(io(&ron_path))?;
    Ok(folder)
}
