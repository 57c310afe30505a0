//! PNG and PDF from the SVG, in pure Rust: usvg parses, resvg rasterizes, svg2pdf writes
//! vectors. Text uses the DejaVu Sans font shipped in this crate (`fonts/`, Bitstream Vera
//! licence), so the output is the same on every machine.

use std::sync::{Arc, OnceLock};

use crate::error::ExperimentError;

/// The font every figure is set in.
pub(super) const FONT: &[u8] = include_bytes!("../../fonts/DejaVuSans.ttf");

fn options() -> &'static resvg::usvg::Options<'static> {
    static OPTIONS: OnceLock<resvg::usvg::Options<'static>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_font_data(FONT.to_vec());
        resvg::usvg::Options {
            font_family: "DejaVu Sans".into(),
            fontdb: Arc::new(db),
            ..Default::default()
        }
    })
}

fn parse(svg: &str) -> Result<resvg::usvg::Tree, ExperimentError> {
    resvg::usvg::Tree::from_str(svg, options())
        .map_err(|e| ExperimentError::Plot(format!("SVG: {e}")))
}

/// The SVG rendered to PNG at `dpi` dots per inch of its printed size.
pub fn render_png(svg: &str, dpi: f64) -> Result<Vec<u8>, ExperimentError> {
    let tree = parse(svg)?;
    // usvg sizes documents in CSS pixels (96 per inch).
    let scale = (dpi / 96.0) as f32;
    let size = tree.size();
    let (w, h) = (
        (size.width() * scale).ceil() as u32,
        (size.height() * scale).ceil() as u32,
    );
    let mut pixmap = resvg::tiny_skia::Pixmap::new(w, h)
        .ok_or_else(|| ExperimentError::Plot(format!("a {w} x {h} image")))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| ExperimentError::Plot(format!("PNG: {e}")))
}

/// The SVG as a one-page PDF of its printed size, text embedded as a font subset.
pub fn render_pdf(svg: &str) -> Result<Vec<u8>, ExperimentError> {
    let tree = parse(svg)?;
    svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        // usvg's pixels are 1/96 in.
        svg2pdf::PageOptions { dpi: 96.0 },
    )
    .map_err(|e| ExperimentError::Plot(format!("PDF: {e}")))
}
