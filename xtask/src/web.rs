//! `cargo xtask web [--test]`: the protocol chooser page (`web/`) with the browser client
//! (`crates/ldp-wasm`) built into `target/web/`, ready for any static file server.
//!
//! Prerequisites: the wasm32 target (`rustup target add wasm32-unknown-unknown`) and
//! `wasm-bindgen-cli` at the version of `crates/ldp-wasm/Cargo.lock`. `--test` also needs
//! Node and npm, and Debian's `chromium` (no browser is downloaded).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// The page's budget for the compressed module (issue 29).
const MAX_GZIP_BYTES: usize = 400 * 1024;

/// The page's own files, copied beside the generated module.
const PAGE_FILES: [&str; 8] = [
    "index.html",
    "app.js",
    "plot.js",
    "table.js",
    "table-worker.js",
    "measure.js",
    "measure-worker.js",
    "style.css",
];

pub(crate) struct Options {
    /// Also run the module's tests under Node and the page's tests in Chromium.
    pub(crate) test: bool,
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn run_ok(cmd: &mut Command, what: &str) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("{what}: could not start {:?}", cmd.get_program()))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// The version of `name` in a Cargo.lock.
fn locked_version(lock: &Path, name: &str) -> Result<String> {
    let text = fs::read_to_string(lock).with_context(|| lock.display().to_string())?;
    let needle = format!("name = \"{name}\"\nversion = \"");
    let at = text
        .find(&needle)
        .with_context(|| format!("{name} is not in {}", lock.display()))?;
    let rest = &text[at + needle.len()..];
    Ok(rest[..rest.find('"').expect("a quoted version")].to_owned())
}

/// Refuses a missing or mismatched wasm-bindgen CLI: its glue must match the crate.
fn check_wasm_bindgen(root: &Path) -> Result<String> {
    let want = locked_version(&root.join("crates/ldp-wasm/Cargo.lock"), "wasm-bindgen")?;
    let install = format!("cargo install wasm-bindgen-cli --version {want}");
    let out = Command::new("wasm-bindgen")
        .arg("--version")
        .output()
        .with_context(|| format!("wasm-bindgen is not installed; install it with `{install}`"))?;
    let got = String::from_utf8_lossy(&out.stdout);
    let got = got.split_whitespace().nth(1).unwrap_or("?").to_owned();
    if got != want {
        bail!(
            "wasm-bindgen {got} is installed, but crates/ldp-wasm locks wasm-bindgen {want}; install the matching CLI with `{install}`"
        );
    }
    Ok(want)
}

/// Cargo's target folder for the workspace at `root`: `CARGO_TARGET_DIR` where set.
fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

fn gzip_len(bytes: &[u8]) -> Result<usize> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes)?;
    Ok(encoder.finish()?.len())
}

/// The measuring workers' module: the page's and the measurement of `ldp simulate`
/// (ldp-wasm's `measure` feature). Only the workers load it, after the page answers.
const MAX_MEASURE_GZIP_BYTES: usize = 600 * 1024;

/// How a module is compiled.
struct Module<'a> {
    /// ldp-wasm's features.
    features: &'a [&'a str],
    /// The Cargo profile (of crates/ldp-wasm/Cargo.toml).
    profile: &'a str,
    /// WebAssembly features beyond the MVP (`-C target-feature`), empty for none.
    target_features: &'a str,
    /// The bound names: `pkg/NAME.js` and `pkg/NAME_bg.wasm`.
    name: &'a str,
    /// The most gzipped bytes it may take.
    budget: usize,
}

impl Module<'_> {
    /// Its `RUSTFLAGS`.
    fn rustflags(&self) -> String {
        format!("-C target-feature={}", self.target_features)
    }
}

/// The page's module: small (opt-level "s"), and only the WebAssembly every browser of
/// the last years runs.
const PAGE_MODULE: Module<'static> = Module {
    features: &[],
    profile: "release",
    target_features: "",
    name: "ldp_wasm",
    budget: MAX_GZIP_BYTES,
};

/// The measuring workers' module: fast, at opt-level 3 and with 128-bit SIMD (Chrome 91,
/// Firefox 89, Safari 16.4). Measuring every protocol on Adult's education column (eps
/// = 1, 20 runs, in Node) took 18.4 s built as the page is and 11.0 s so, for 68 KB more
/// gzipped (421 against 489 KB, before `measureLinked`); in a later build, 13.7 s at
/// opt-level 3 without the SIMD against 11.3 with it. Neither changes a number: LLVM
/// reorders no floating-point arithmetic.
const MEASURE_MODULE: Module<'static> = Module {
    features: &["measure"],
    profile: "measure",
    target_features: "+simd128",
    name: "ldp_measure",
    budget: MAX_MEASURE_GZIP_BYTES,
};

/// Builds ldp-wasm as `module` says and binds it under `out`; refuses a module over its
/// budget.
fn build_module(crate_dir: &Path, out: &Path, module: &Module<'_>) -> Result<String> {
    let Module {
        features,
        profile,
        target_features,
        name,
        budget,
    } = *module;
    let mut build = cargo();
    build
        .args(["build", "--profile", profile, "--locked"])
        .args(["--target", "wasm32-unknown-unknown"])
        .args(features.iter().flat_map(|f| ["--features", f]))
        .current_dir(crate_dir);
    if !target_features.is_empty() {
        // With --target, the flags reach the module's crates, not build scripts.
        build.env("RUSTFLAGS", module.rustflags());
    }
    run_ok(&mut build, "building crates/ldp-wasm for wasm32")?;
    let wasm_file =
        target_dir(crate_dir).join(format!("wasm32-unknown-unknown/{profile}/ldp_wasm.wasm"));
    run_ok(
        Command::new("wasm-bindgen")
            .args(["--target", "web", "--out-name", name, "--out-dir"])
            .arg(out.join("pkg"))
            .arg(&wasm_file),
        "wasm-bindgen",
    )?;
    let wasm = fs::read(out.join(format!("pkg/{name}_bg.wasm")))?;
    let gz = gzip_len(&wasm)?;
    if gz > budget {
        bail!(
            "{name}_bg.wasm is {} KB gzipped, over its budget of {} KB",
            gz / 1024,
            budget / 1024
        );
    }
    Ok(format!(
        "{name}_bg.wasm is {} KB, {} KB gzipped (budget {} KB)",
        wasm.len() / 1024,
        gz / 1024,
        budget / 1024
    ))
}

/// Builds the page into `target/web/`, returning its folder: the page's module, and the
/// measuring workers' module beside it.
fn build(root: &Path) -> Result<PathBuf> {
    let version = check_wasm_bindgen(root)?;
    let crate_dir = root.join("crates/ldp-wasm");
    let started = Instant::now();
    let out = root.join("target/web");
    if out.exists() {
        fs::remove_dir_all(&out).with_context(|| out.display().to_string())?;
    }
    let page = build_module(&crate_dir, &out, &PAGE_MODULE)?;
    let workers = build_module(&crate_dir, &out, &MEASURE_MODULE)?;
    for file in PAGE_FILES {
        fs::copy(root.join("web").join(file), out.join(file))
            .with_context(|| format!("copying web/{file}"))?;
    }
    println!(
        "web: built target/web/ in {:.1} s (wasm-bindgen {version}); the page's {page}; the workers' {workers}",
        started.elapsed().as_secs_f64(),
    );
    Ok(out)
}

pub(crate) fn run(root: &Path, options: &Options) -> Result<()> {
    let out = build(root)?;
    if !options.test {
        println!(
            "web: serve it with `python3 -m http.server --directory {} 8000` and open http://localhost:8000/",
            out.strip_prefix(root).unwrap_or(&out).display()
        );
        return Ok(());
    }
    // In the crate's node-test profile (opt-level 1, no link-time optimisation): the
    // tests' dev-dependencies unify other features, so no module build serves them anyway,
    // and the release profile's whole-program optimisation only slowed their build (alone
    // on 2 cores: 251 CPU-s and 133 s, against 228 CPU-s and 119 s so). With the workers' SIMD flag, so that the tests run the
    // code the workers run (ldp-core's SIMD ChaCha among it); the page's tests run the
    // workers' module as built.
    run_ok(
        cargo()
            .args(["test", "--profile", "node-test", "--locked"])
            .args(
                MEASURE_MODULE
                    .features
                    .iter()
                    .flat_map(|f| ["--features", f]),
            )
            .env("RUSTFLAGS", MEASURE_MODULE.rustflags())
            .current_dir(root.join("crates/ldp-wasm")),
        "the module's tests under Node (wasm-bindgen-test-runner)",
    )?;
    // The page's tests compare with the CLI's answers: the `ldp` that `cargo test
    // --workspace` builds (nothing to do after it; `-p ldp-cli` alone would resolve other
    // features and build the workspace's crates a second time).
    run_ok(
        cargo()
            .args(["test", "--workspace", "--locked", "--no-run"])
            .current_dir(root),
        "building ldp as the tests do",
    )?;
    let tests = root.join("web/tests");
    run_ok(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&tests),
        "npm ci in web/tests (playwright-core)",
    )?;
    let started = Instant::now();
    run_ok(
        Command::new("node")
            .args(["--test", "--test-reporter=spec"])
            .current_dir(&tests)
            .env("LDP_BIN", target_dir(root).join("debug/ldp"))
            .env("LDP_WEB_DIR", &out)
            .env("LDP_SCREENSHOT", out.join("chooser.png")),
        "the page's tests (node --test web/tests)",
    )?;
    println!(
        "web: the page's tests passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
