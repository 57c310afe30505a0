//! The legibility rules a program can check, on the SVG of every figure's quick run:
//! no text under 7 pt at the printed width, tick labels on every axis, no floating-point
//! noise in labels, a colour bar where markers are coloured by epsilon; and the PNG and
//! PDF renderings exist. Also: every committed manifest matches its config.

use std::path::Path;

use ldp_experiments::config::Kind;
use ldp_experiments::plot::{
    MIN_FONT_PT, SUBSCRIPT_SHIFT, render_pdf, render_png, render_svg, viridis,
};
use ldp_experiments::runner::{self, load_configs};

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The attribute `name` of an SVG tag.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&tag[at..at + tag[at..].find('"')?])
}

struct Text {
    size_pt: f64,
    content: String,
}

/// Every text element with its printed size: font-size times points per canvas unit.
fn texts(svg: &str) -> Vec<Text> {
    let head = &svg[..svg.find('>').unwrap()];
    let width_pt: f64 = attribute(head, "width")
        .unwrap()
        .trim_end_matches("pt")
        .parse()
        .unwrap();
    let view_width: f64 = attribute(head, "viewBox")
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(at) = rest.find("<text") {
        rest = &rest[at..];
        let tag_end = rest.find('>').unwrap();
        let close = rest.find("</text>").unwrap();
        let tag = &rest[..tag_end];
        let size: f64 = attribute(tag, "font-size").unwrap().parse().unwrap();
        // Subscripts are tspans inside; their text counts with the element's.
        let inner = &rest[tag_end + 1..close];
        let content = inner
            .replace(&format!("<tspan baseline-shift=\"{SUBSCRIPT_SHIFT}\">"), "")
            .replace("</tspan>", "")
            .trim()
            .to_owned();
        out.push(Text {
            size_pt: size * width_pt / view_width,
            content,
        });
        rest = &rest[close..];
    }
    out
}

fn is_number(s: &str) -> bool {
    s.trim().parse::<f64>().is_ok()
}

#[test]
fn every_figure_is_legible_at_its_printed_width() {
    let configs = load_configs(&root().join("configs/paper")).unwrap();
    assert!(configs.len() >= 15);
    for c in configs {
        let (output, _) = runner::run(&c, true, "test").unwrap();
        let figure = &output.figure;
        let name = &c.experiment.figure;
        let svg = render_svg(figure).unwrap();
        let texts = texts(&svg);
        let smallest = texts
            .iter()
            .map(|t| t.size_pt)
            .fold(f64::INFINITY, f64::min);
        assert!(
            smallest >= MIN_FONT_PT - 1e-9,
            "{name}: text of {smallest:.2} pt"
        );
        // Every panel: a title, and tick labels on both axes.
        let numbers: Vec<&Text> = texts.iter().filter(|t| is_number(&t.content)).collect();
        assert!(
            numbers.len() >= 4 * figure.panels.len(),
            "{name}: {} tick labels for {} panels",
            numbers.len(),
            figure.panels.len()
        );
        for t in &numbers {
            let v: f64 = t.content.trim().parse().unwrap();
            assert!(
                v == 0.0 || v.abs() >= 1e-12,
                "{name}: floating-point noise in the tick label {}",
                t.content
            );
            assert!(
                t.content.len() <= 6,
                "{name}: long tick label {}",
                t.content
            );
        }
        // Colour-coded figures carry a colour bar (its gradient starts at viridis(0)):
        // epsilon in the trade-off figures, the ASR in the cost figure.
        let coloured = matches!(
            c.experiment.kind,
            Kind::AsrVsMse { .. }
                | Kind::AsrMseEpg { .. }
                | Kind::Empirical { .. }
                | Kind::Costs { .. }
        );
        let bar_label = if matches!(c.experiment.kind, Kind::Costs { .. }) {
            "expected ASR"
        } else {
            "privacy budget ε"
        };
        let dark = viridis(0.0);
        let dark = format!("fill=\"#{:02X}{:02X}{:02X}\"", dark.0, dark.1, dark.2);
        assert_eq!(figure.color_bar.is_some(), coloured, "{name}: colour bar");
        if coloured {
            assert!(
                svg.contains("<rect") && svg.contains(&dark),
                "{name}: no gradient"
            );
            assert!(texts.iter().any(|t| t.content == bar_label), "{name}");
        }
        // Greek letters, not their names, in every label.
        for t in &texts {
            for word in ["epsilon", "omega", "theta"] {
                assert!(!t.content.contains(word), "{name}: `{}`", t.content);
            }
        }
        let png = render_png(&svg, 72.0).unwrap();
        assert_eq!(&png[1..4], b"PNG", "{name}");
        let pdf = render_pdf(&svg).unwrap();
        assert!(pdf.starts_with(b"%PDF"), "{name}");
    }
}

#[test]
fn every_committed_manifest_matches_its_config() {
    let configs = load_configs(&root().join("configs/paper")).unwrap();
    for c in configs {
        let name = &c.experiment.figure;
        let manifest = root().join("results/paper").join(name).join("manifest.ron");
        let text = std::fs::read_to_string(&manifest)
            .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
        let hash = format!("{:016x}", xxhash_rust::xxh64::xxh64(c.text.as_bytes(), 0));
        assert!(
            text.contains(&format!("config_hash: \"{hash}\"")),
            "{name}: results/paper is stale (its config changed): run cargo xtask reproduce --figure {name}"
        );
        // Committed results come from committed code: a manifest made from a dirty tree
        // names a commit that does not hold the code that made it.
        assert!(
            text.contains("tree_dirty: false") && !text.contains("-dirty\""),
            "{name}: results/paper was made from a dirty tree: commit the code, then run cargo xtask reproduce --figure {name}"
        );
        for file in ["figure.svg", "figure.png", "figure.pdf", "data.csv"] {
            assert!(
                manifest.with_file_name(file).exists(),
                "{name}: {file} is not committed"
            );
        }
    }
}
