//! Repository rules checked as tests: the crate layering of DESIGN §2, that
//! `cargo xtask` builds the units `cargo test --workspace` builds, and that nothing the
//! registry of families generates is written again by hand ([`sources`]).

pub(crate) mod sources;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Which workspace crates each crate may depend on (normal, dev and build dependencies).
/// `ldp-analytic` and `ldp-attack` never depend on each other; nothing depends upward.
pub(crate) const ALLOWED: &[(&str, &[&str])] = &[
    ("ldp-core", &[]),
    ("ldp-analytic", &["ldp-core"]),
    ("ldp-optimize", &["ldp-core", "ldp-analytic"]),
    ("ldp-attack", &["ldp-core"]),
    ("ldp-audit", &["ldp-core"]),
    ("ldp-jsonl", &["ldp-core"]),
    ("ldp-arrow", &["ldp-core"]),
    ("ldp-datafusion", &["ldp-core", "ldp-arrow"]),
    (
        "ldp-wasm",
        &[
            "ldp-core",
            "ldp-analytic",
            "ldp-optimize",
            "ldp-attack",
            "ldp-jsonl",
        ],
    ),
    (
        "ldp-py",
        &[
            "ldp-core",
            "ldp-analytic",
            "ldp-optimize",
            "ldp-attack",
            "ldp-audit",
            "ldp-jsonl",
            "ldp-arrow",
        ],
    ),
    (
        "ldp-experiments",
        &[
            "ldp-core",
            "ldp-analytic",
            "ldp-optimize",
            "ldp-attack",
            "ldp-audit",
        ],
    ),
    (
        "ldp-cli",
        &[
            "ldp-core",
            "ldp-analytic",
            "ldp-optimize",
            "ldp-attack",
            "ldp-audit",
            "ldp-experiments",
            "ldp-jsonl",
            "ldp-arrow",
        ],
    ),
    (
        "xtask",
        &[
            "ldp-core",
            "ldp-analytic",
            "ldp-optimize",
            "ldp-attack",
            "ldp-audit",
            "ldp-experiments",
        ],
    ),
];

/// The workspace crates each manifest under `root` depends on, by crate name.
pub(crate) fn workspace_edges(root: &Path) -> Result<BTreeMap<String, Vec<String>>> {
    let mut manifests = vec![root.join("xtask/Cargo.toml")];
    for entry in std::fs::read_dir(root.join("crates")).context("reading crates/")? {
        let path = entry?.path().join("Cargo.toml");
        if path.exists() {
            manifests.push(path);
        }
    }
    let mut edges = BTreeMap::new();
    for manifest in manifests {
        let text = std::fs::read_to_string(&manifest)
            .with_context(|| format!("reading {}", manifest.display()))?;
        edges.extend(manifest_edges(&text).with_context(|| manifest.display().to_string())?);
    }
    Ok(edges)
}

/// The crate named by one manifest and the `ldp-*` crates it depends on.
pub(crate) fn manifest_edges(text: &str) -> Result<BTreeMap<String, Vec<String>>> {
    let doc: toml::Table = text.parse()?;
    let name = doc
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .context("manifest without package.name")?
        .to_owned();
    let mut deps = Vec::new();
    for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(table) = doc.get(section).and_then(|t| t.as_table()) {
            // A crate's dev-dependency on itself only turns on its own features for its
            // tests (ldp-jsonl's `lines`): not an edge of the layering.
            deps.extend(
                table
                    .keys()
                    .filter(|d| d.starts_with("ldp-") && **d != name)
                    .cloned(),
            );
        }
    }
    deps.sort();
    deps.dedup();
    Ok(BTreeMap::from([(name, deps)]))
}

/// Fails with every violation of [`ALLOWED`] listed.
pub(crate) fn check_layering(edges: &BTreeMap<String, Vec<String>>) -> Result<()> {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut violations = Vec::new();
    for (krate, deps) in edges {
        let Some(ok) = allowed.get(krate.as_str()) else {
            violations.push(format!(
                "{krate}: not in the layering table of xtask/src/tidy.rs"
            ));
            continue;
        };
        for dep in deps {
            if !ok.contains(&dep.as_str()) {
                violations.push(format!("{krate} must not depend on {dep}"));
            }
        }
    }
    if violations.is_empty() {
        Ok(())
    } else {
        bail!(
            "layering violations (DESIGN §2):\n  {}",
            violations.join("\n  ")
        )
    }
}

/// Each package of `tree` with its features, one `name version [features]` per line.
fn feature_lines(root: &Path, selection: &[&str]) -> Result<BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--locked", "--prefix", "none", "-f", "{p} [{f}]"])
        .args(selection)
        .current_dir(root)
        .output()
        .context("running cargo tree")?;
    if !out.status.success() {
        bail!(
            "cargo tree {}: {}",
            selection.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8(out.stdout)?
        .lines()
        .map(|l| l.trim_end_matches(" (*)").to_owned())
        .filter(|l| !l.is_empty())
        .collect())
}

/// `cargo xtask` runs in the test profile so that the README's two commands share one
/// build; that holds when xtask's dependencies get the features `cargo test --workspace`
/// gives them (the members' defaults and their dev-dependencies' unify in). Fails naming
/// each dependency whose features differ: add it to xtask/Cargo.toml's list.
pub(crate) fn check_shared_build(root: &Path) -> Result<()> {
    let tests = feature_lines(root, &["--workspace", "-e", "all"])?;
    let xtask = feature_lines(root, &["-p", "xtask", "-e", "normal,build"])?;
    let differ: Vec<&String> = xtask.difference(&tests).collect();
    if differ.is_empty() {
        return Ok(());
    }
    let name = |line: &str| line.split(' ').take(2).collect::<Vec<_>>().join(" ");
    let lines: Vec<String> = differ
        .iter()
        .map(|line| {
            let theirs: Vec<&String> = tests.iter().filter(|t| name(t) == name(line)).collect();
            format!("{line} (the tests build {theirs:?})")
        })
        .collect();
    bail!(
        "cargo xtask would rebuild what cargo test --workspace built: these dependencies get \
         other features (name them with the tests' features in xtask/Cargo.toml):\n  {}",
        lines.join("\n  ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_respects_the_layering() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let edges = workspace_edges(root).unwrap();
        assert!(edges.contains_key("ldp-core"));
        check_layering(&edges).unwrap();
    }

    #[test]
    fn xtask_builds_what_the_tests_build() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        check_shared_build(root).unwrap();
    }

    #[test]
    fn a_forbidden_edge_is_reported() {
        let manifest = r#"
            [package]
            name = "ldp-attack"
            [dependencies]
            ldp-core = { path = "../ldp-core" }
            [dev-dependencies]
            ldp-analytic = { path = "../ldp-analytic" }
        "#;
        let edges = manifest_edges(manifest).unwrap();
        let err = check_layering(&edges).unwrap_err().to_string();
        assert!(
            err.contains("ldp-attack must not depend on ldp-analytic"),
            "{err}"
        );
        let core_up =
            manifest_edges("[package]\nname = \"ldp-core\"\n[dependencies]\nldp-cli = \"*\"\n")
                .unwrap();
        assert!(check_layering(&core_up).is_err());
    }
}
