//! `cargo xtask`: repository automation (see DESIGN §2 and §7).
//!
//! - `cargo xtask tidy`: check repository rules (crate layering).

mod tidy;

use anyhow::{Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("tidy") => {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap();
            tidy::check_layering(&tidy::workspace_edges(root)?)?;
            println!("tidy: layering ok");
            Ok(())
        }
        _ => bail!("usage: cargo xtask tidy"),
    }
}
