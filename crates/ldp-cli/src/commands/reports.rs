//! Reading line-oriented input: items and JSON reports, with line numbers in every error.

use std::io::BufRead;

use anyhow::{Context, Result, anyhow};
use ldp_core::{DomainSize, Mechanism, Spec};
use rand::Rng;

use super::ProtocolArgs;
use crate::protocol::{budget, domain, parse_protocol, resolve};

/// The protocol instance named by the common options.
pub(crate) fn spec_of(a: &ProtocolArgs) -> Result<Spec> {
    let p = parse_protocol(&a.protocol)?;
    resolve(
        p,
        domain(a.k)?,
        budget(a.eps)?,
        a.param,
        &a.tuning.options(None)?,
    )
}

/// The randomness of a client-side command: a seeded ChaCha stream for reproducible
/// runs, otherwise ChaCha20 seeded by the operating system.
pub(crate) fn rng(seed: Option<u64>) -> Box<dyn Rng> {
    match seed {
        Some(s) => Box::new(ldp_core::simulation::stream_rng(
            s,
            0,
            ldp_core::simulation::Role::Genuine,
            0,
        )),
        None => Box::new(rand::make_rng::<rand_chacha::ChaCha20Rng>()),
    }
}

/// Calls `f(line_number, line)` for every line of `input`; errors name the line.
pub(crate) fn for_each_line(
    input: impl BufRead,
    mut f: impl FnMut(usize, &str) -> Result<()>,
) -> Result<usize> {
    let mut n = 0;
    for (i, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("line {}: reading input", i + 1))?;
        f(i + 1, &line).with_context(|| format!("line {}", i + 1))?;
        n += 1;
    }
    Ok(n)
}

/// An item in `0..k`, from one line.
pub(crate) fn parse_item(line: &str, k: DomainSize) -> Result<u32> {
    let text = line.trim();
    let item: u64 = text
        .parse()
        .map_err(|_| anyhow!("`{text}` is not an item (expected a whole number in 0..{k})"))?;
    let item =
        u32::try_from(item).map_err(|_| anyhow!("item {item} is outside the domain 0..{k}"))?;
    k.check_item(item)?;
    Ok(item)
}

/// A report of `m`'s family from one JSON line, validated against `m`.
pub(crate) fn parse_report<M: Mechanism>(m: &M, line: &str) -> Result<M::Report> {
    let mut de = serde_json::Deserializer::from_str(line.trim());
    let report: M::Report = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let message = without_position(e.inner());
        if path == "." {
            anyhow!("malformed report: {message}")
        } else {
            anyhow!("malformed report: field `{path}`: {message}")
        }
    })?;
    de.end()
        .map_err(|e| anyhow!("malformed report: {}", without_position(&e)))?;
    m.validate(&report)?;
    Ok(report)
}

/// serde_json's message without its " at line 1 column N": the stream's line number is
/// what matters.
fn without_position(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    message.strip_suffix(&suffix).unwrap_or(&message).to_owned()
}
