//! Tables printed as CSV, JSON or aligned text.
//!
//! Numbers are written in their shortest round-trip form, in exponent form when very
//! large or small (`1e308`, `2.5e-7`), and whole quantities (k, omega, g, counts) as
//! integers. JSON objects keep the columns in the CSV's order.

use std::io::Write;

use anyhow::Result;
use clap::ValueEnum;

/// Output formats of the tabular subcommands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Comma-separated values with a header line.
    Csv,
    /// A JSON array of objects.
    Json,
    /// Aligned columns for people.
    Table,
}

/// A cell: text, a whole number, a real number, or empty.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Text(String),
    Int(u64),
    Num(f64),
    Empty,
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_owned())
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Num(v)
    }
}
impl From<Option<f64>> for Value {
    fn from(v: Option<f64>) -> Self {
        v.map_or(Value::Empty, Value::Num)
    }
}

impl Value {
    /// The `param` cell of an instance: its family's parameter, empty for a family
    /// without one, `name=value` pairs joined by `;` for a family with several.
    pub(crate) fn params(params: &ldp_core::FamilyParams) -> Self {
        match params.named_values().as_slice() {
            [] => Value::Empty,
            [(_, v)] => Value::number(*v),
            named => Value::Text(
                named
                    .iter()
                    .map(|(n, v)| format!("{n}={}", number(*v)))
                    .collect::<Vec<_>>()
                    .join(";"),
            ),
        }
    }

    /// A whole number as an integer cell, anything else as a real one.
    pub(crate) fn number(v: f64) -> Self {
        if v.fract() == 0.0 && (0.0..9.007_199_254_740_992e15).contains(&v) {
            Value::Int(v as u64)
        } else {
            Value::Num(v)
        }
    }

    /// The cell as a number, for sorting (text and empty cells sort last).
    pub(crate) fn sort_key(&self) -> f64 {
        match self {
            Value::Int(v) => *v as f64,
            Value::Num(v) if !v.is_nan() => *v,
            _ => f64::INFINITY,
        }
    }

    fn text(&self) -> String {
        match self {
            Value::Text(s) => s.clone(),
            Value::Int(v) => v.to_string(),
            Value::Num(v) => number(*v),
            Value::Empty => String::new(),
        }
    }

    fn json(&self) -> String {
        match self {
            Value::Text(s) => serde_json::to_string(s).expect("a string serializes"),
            Value::Int(v) => v.to_string(),
            Value::Num(v) if v.is_finite() => number(*v),
            Value::Num(_) | Value::Empty => "null".into(),
        }
    }
}

/// Shortest round-trip form; exponent form below 1e-5 and from 1e16 in magnitude.
pub(crate) fn number(v: f64) -> String {
    ldp_optimize::Short(v).to_string()
}

/// Writes `rows` under `columns` in `format`.
pub(crate) fn print(
    out: &mut impl Write,
    format: Format,
    columns: &[&str],
    rows: &[Vec<Value>],
) -> Result<()> {
    match format {
        Format::Csv => {
            // The csv crate quotes a field only when it needs it (a comma, a quote: the
            // domain sizes of several attributes, an external client's command line).
            let mut w = csv::Writer::from_writer(&mut *out);
            w.write_record(columns)?;
            for r in rows {
                w.write_record(r.iter().map(Value::text))?;
            }
            w.flush()?;
        }
        Format::Json => {
            writeln!(out, "[")?;
            for (i, r) in rows.iter().enumerate() {
                let fields: Vec<String> = columns
                    .iter()
                    .zip(r)
                    .map(|(c, v)| format!("\"{c}\": {}", v.json()))
                    .collect();
                let comma = if i + 1 < rows.len() { "," } else { "" };
                writeln!(out, "  {{{}}}{comma}", fields.join(", "))?;
            }
            writeln!(out, "]")?;
        }
        Format::Table => {
            let cells: Vec<Vec<String>> = rows
                .iter()
                .map(|r| r.iter().map(Value::text).collect())
                .collect();
            let widths: Vec<usize> = columns
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    cells
                        .iter()
                        .map(|r| r[i].len())
                        .chain([c.len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let line = |items: Vec<String>| {
                items
                    .iter()
                    .zip(&widths)
                    .map(|(s, w)| format!("{s:>w$}"))
                    .collect::<Vec<_>>()
                    .join("  ")
            };
            writeln!(
                out,
                "{}",
                line(columns.iter().map(|c| (*c).to_owned()).collect())
            )?;
            for r in cells {
                writeln!(out, "{}", line(r))?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_exact() {
        assert_eq!(number(1e308), "1e308");
        assert_eq!(number(2.5e-7), "2.5e-7");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(123456.5), "123456.5");
        for v in [1e308, 2.5e-7, 0.1 + 0.2, 1.0 / 3.0] {
            assert_eq!(number(v).parse::<f64>().unwrap(), v);
        }
    }

    #[test]
    fn json_keeps_the_column_order_and_integers() {
        let mut out = Vec::new();
        let rows = vec![vec![
            Value::from("olh"),
            Value::Int(500),
            Value::Num(0.5),
            Value::Empty,
        ]];
        print(
            &mut out,
            Format::Json,
            &["protocol", "k", "eps", "epg"],
            &rows,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "[\n  {\"protocol\": \"olh\", \"k\": 500, \"eps\": 0.5, \"epg\": null}\n]\n"
        );
        serde_json::from_str::<serde_json::Value>(&text).unwrap();
    }
}
