//! Tables printed as CSV, JSON or aligned text.

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

/// A cell: text, a number (printed in shortest round-trip form), or empty.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Text(String),
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
    fn text(&self) -> String {
        match self {
            Value::Text(s) => s.clone(),
            Value::Num(v) => format!("{v}"),
            Value::Empty => String::new(),
        }
    }

    fn json(&self) -> serde_json::Value {
        match self {
            Value::Text(s) => serde_json::Value::String(s.clone()),
            Value::Num(v) => serde_json::Number::from_f64(*v)
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
            Value::Empty => serde_json::Value::Null,
        }
    }
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
            writeln!(out, "{}", columns.join(","))?;
            for r in rows {
                writeln!(
                    out,
                    "{}",
                    r.iter().map(Value::text).collect::<Vec<_>>().join(",")
                )?;
            }
        }
        Format::Json => {
            let objects: Vec<serde_json::Value> = rows
                .iter()
                .map(|r| {
                    columns
                        .iter()
                        .zip(r)
                        .map(|(c, v)| ((*c).to_owned(), v.json()))
                        .collect::<serde_json::Map<_, _>>()
                        .into()
                })
                .collect();
            writeln!(out, "{}", serde_json::to_string_pretty(&objects)?)?;
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
    Ok(())
}
