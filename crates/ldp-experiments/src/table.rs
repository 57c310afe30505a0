//! Tidy tables: one row per point, written as CSV.

/// A cell: text or a number.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text (protocol names, regimes, strategies).
    Text(String),
    /// A number, written with full precision (shortest round-trip form); empty when NaN.
    Num(f64),
}

impl From<&str> for Cell {
    fn from(s: &str) -> Self {
        Cell::Text(s.to_owned())
    }
}
impl From<String> for Cell {
    fn from(s: String) -> Self {
        Cell::Text(s)
    }
}
impl From<f64> for Cell {
    fn from(v: f64) -> Self {
        Cell::Num(v)
    }
}
impl From<u32> for Cell {
    fn from(v: u32) -> Self {
        Cell::Num(f64::from(v))
    }
}
impl From<Option<f64>> for Cell {
    fn from(v: Option<f64>) -> Self {
        Cell::Num(v.unwrap_or(f64::NAN))
    }
}

/// Named columns and rows of cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names.
    pub columns: Vec<&'static str>,
    /// Rows, each with one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(columns: &[&'static str]) -> Self {
        Self {
            columns: columns.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; it must have one cell per column.
    pub fn push(&mut self, row: Vec<Cell>) {
        assert_eq!(row.len(), self.columns.len(), "row width");
        self.rows.push(row);
    }

    /// The rows whose text column `name` equals `value`, in order.
    pub fn rows_where<'a>(
        &'a self,
        name: &'a str,
        value: &'a str,
    ) -> impl Iterator<Item = &'a Vec<Cell>> + 'a {
        self.rows
            .iter()
            .filter(move |r| self.text(r, name) == value)
    }

    /// The value of column `name` in `row`, if it is a number.
    pub fn num(&self, row: &[Cell], name: &str) -> f64 {
        let i = self
            .columns
            .iter()
            .position(|c| *c == name)
            .expect("known column");
        match &row[i] {
            Cell::Num(v) => *v,
            Cell::Text(_) => f64::NAN,
        }
    }

    /// The text of column `name` in `row`.
    pub fn text<'a>(&self, row: &'a [Cell], name: &str) -> &'a str {
        let i = self
            .columns
            .iter()
            .position(|c| *c == name)
            .expect("known column");
        match &row[i] {
            Cell::Text(s) => s,
            Cell::Num(_) => "",
        }
    }

    /// CSV with a header line; numbers in shortest round-trip form, or rounded to
    /// `digits` significant digits (for stable snapshots). Text with a comma or a quote is
    /// quoted (RFC 4180, by the `csv` crate).
    pub fn to_csv(&self, digits: Option<usize>) -> String {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        let header: Vec<String> = self.columns.iter().map(|c| (*c).to_owned()).collect();
        let written: csv::Result<()> = std::iter::once(header)
            .chain(self.rows.iter().map(|row| {
                row.iter()
                    .map(|c| match c {
                        Cell::Text(s) => s.clone(),
                        Cell::Num(v) if v.is_nan() => String::new(),
                        Cell::Num(v) => match digits {
                            None => format!("{v}"),
                            Some(d) => format!("{:.*e}", d - 1, v),
                        },
                    })
                    .collect()
            }))
            .try_for_each(|record: Vec<String>| w.write_record(&record));
        written.expect("writing to memory cannot fail");
        let bytes = w.into_inner().expect("writing to memory cannot fail");
        String::from_utf8(bytes).expect("the cells are strings")
    }
}
