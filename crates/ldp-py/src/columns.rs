//! Reports as columns: what a `Reports` object holds, per report shape, and the typed
//! conversions both ways. A family whose report is one of ldp-core's report types needs
//! nothing here.

use ldp_core::report::ReportLimits;
use ldp_core::{
    AggregateError, Aggregator, AttackSurface, FamilyMechanism, GrrReport, LhReport, OnesReport,
    SheReport, SubsetReport,
};
use ldp_jsonl::JsonReport;
use pyo3::PyResult;
use rayon::prelude::*;

/// The reports of one mechanism, one column per field, by report shape (not family).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Data {
    /// One value per report (GRR's item).
    Values { y: Vec<u32> },
    /// A seed and a value per report (LH's hash seed and hashed value).
    SeedValues { seed: Vec<u32>, y: Vec<u32> },
    /// A set of indices per report (SS, UE, THE): report i is
    /// `indices[offsets[i]..offsets[i + 1]]` (CSR).
    Sets {
        offsets: Vec<i64>,
        indices: Vec<u32>,
    },
    /// k numbers per report (SHE): report i is `values[i * k..(i + 1) * k]`.
    Vectors { k: usize, values: Vec<f64> },
}

impl Data {
    pub(crate) fn len(&self) -> usize {
        match self {
            Data::Values { y } | Data::SeedValues { y, .. } => y.len(),
            Data::Sets { offsets, .. } => offsets.len() - 1,
            Data::Vectors { k, values } => values.len() / k,
        }
    }

    /// Bytes the columns take.
    pub(crate) fn bytes(&self) -> u64 {
        let n = self.len() as u64;
        match self {
            Data::Values { .. } => 4 * n,
            Data::SeedValues { .. } => 8 * n,
            Data::Sets { indices, .. } => 8 * (n + 1) + 4 * indices.len() as u64,
            Data::Vectors { values, .. } => 8 * values.len() as u64,
        }
    }

    /// The most bytes one report takes in the columns (0 without reports).
    pub(crate) fn max_report_bytes(&self) -> u64 {
        match self {
            Data::Sets { offsets, .. } => offsets
                .windows(2)
                .map(|w| 8 + 4 * (w[1] - w[0]) as u64)
                .max()
                .unwrap_or(0),
            _ if self.len() == 0 => 0,
            _ => self.bytes() / self.len() as u64,
        }
    }

    /// The most bytes any report of these columns can take, with at most `entries` in a
    /// report's list (`ReportLimits::entries`).
    pub(crate) fn largest_report_bytes(&self, entries: u32) -> u64 {
        match self {
            Data::Values { .. } => 4,
            Data::SeedValues { .. } => 8,
            Data::Sets { .. } => 8 + 4 * u64::from(entries),
            Data::Vectors { .. } => 8 * u64::from(entries),
        }
    }

    /// Reports `start..stop`.
    pub(crate) fn slice(&self, start: usize, stop: usize) -> Data {
        match self {
            Data::Values { y } => Data::Values {
                y: y[start..stop].to_vec(),
            },
            Data::SeedValues { seed, y } => Data::SeedValues {
                seed: seed[start..stop].to_vec(),
                y: y[start..stop].to_vec(),
            },
            Data::Sets { offsets, indices } => {
                let base = offsets[start];
                Data::Sets {
                    offsets: offsets[start..=stop].iter().map(|o| o - base).collect(),
                    indices: indices[base as usize..offsets[stop] as usize].to_vec(),
                }
            }
            Data::Vectors { k, values } => Data::Vectors {
                k: *k,
                values: values[start * k..stop * k].to_vec(),
            },
        }
    }

    /// The parts one after another, copied in parallel into buffers of the exact size.
    pub(crate) fn concat(empty: Data, parts: &[Data]) -> Data {
        match empty {
            Data::Values { .. } => Data::Values {
                y: join(parts, |p| match p {
                    Data::Values { y } => y,
                    _ => unreachable!(),
                }),
            },
            Data::SeedValues { .. } => Data::SeedValues {
                seed: join(parts, |p| match p {
                    Data::SeedValues { seed, .. } => seed,
                    _ => unreachable!(),
                }),
                y: join(parts, |p| match p {
                    Data::SeedValues { y, .. } => y,
                    _ => unreachable!(),
                }),
            },
            Data::Sets { .. } => {
                fn sets(p: &Data) -> (&Vec<i64>, &Vec<u32>) {
                    match p {
                        Data::Sets { offsets, indices } => (offsets, indices),
                        _ => unreachable!(),
                    }
                }
                let indices = join(parts, |p| sets(p).1);
                // Each part's offsets (without its leading 0) shifted by the indices before it.
                let mut base = 0i64;
                let shifted: Vec<(i64, &[i64])> = parts
                    .iter()
                    .map(|p| {
                        let (o, i) = sets(p);
                        let at = base;
                        base += i.len() as i64;
                        (at, &o[1..])
                    })
                    .collect();
                let n: usize = shifted.iter().map(|(_, o)| o.len()).sum();
                let mut offsets = vec![0i64; n + 1];
                let mut rest = &mut offsets[1..];
                let mut pieces = Vec::with_capacity(shifted.len());
                for (at, o) in &shifted {
                    let (head, tail) = rest.split_at_mut(o.len());
                    pieces.push((head, *at, *o));
                    rest = tail;
                }
                crate::threads::install(|| {
                    pieces.into_par_iter().for_each(|(dst, at, src)| {
                        dst.iter_mut().zip(src).for_each(|(d, s)| *d = s + at);
                    })
                });
                Data::Sets { offsets, indices }
            }
            Data::Vectors { k, .. } => Data::Vectors {
                k,
                values: join(parts, |p| match p {
                    Data::Vectors { values, .. } => values,
                    _ => unreachable!(),
                }),
            },
        }
    }

    /// Appends `other`, of the same family.
    pub(crate) fn extend(&mut self, other: &Data) {
        match (self, other) {
            (Data::Values { y }, Data::Values { y: more }) => y.extend_from_slice(more),
            (Data::SeedValues { seed, y }, Data::SeedValues { seed: s, y: more }) => {
                seed.extend_from_slice(s);
                y.extend_from_slice(more);
            }
            (
                Data::Sets { offsets, indices },
                Data::Sets {
                    offsets: o,
                    indices: i,
                },
            ) => {
                let base = *offsets.last().expect("offsets start at 0");
                offsets.extend(o[1..].iter().map(|x| x + base));
                indices.extend_from_slice(i);
            }
            (Data::Vectors { values, .. }, Data::Vectors { values: v, .. }) => {
                values.extend_from_slice(v)
            }
            _ => unreachable!("reports of one mechanism share a family"),
        }
    }
}

/// Reports perturbed to see what a report takes, before perturbing many.
const SAMPLE: usize = 8;

/// `MemoryError` unless the reports of `items` fit in the memory available: a few of
/// them, spread over the input and perturbed with a throwaway stream, show what a report
/// takes (after checking that the largest the family allows fit, for the sample itself).
/// The per-batch parts and their concatenation coexist, hence twice their largest.
pub(crate) fn room_to_perturb<M: Columns>(m: &M, items: &[u32], what: &str) -> PyResult<()> {
    let n = items.len();
    let sample = SAMPLE.min(n);
    if sample == 0 {
        return Ok(());
    }
    let empty = m.empty();
    let largest = empty.largest_report_bytes(m.spec().report_limits().entries);
    crate::errors::fits(what, sample as u64, largest)?;
    let mut rng = ldp_core::simulation::stream_rng(0, 0, ldp_core::simulation::Role::Other(0), 0);
    let mut data = empty;
    for i in 0..sample {
        let r = m
            .perturb(items[i * n / sample], &mut rng)
            .expect("items are checked against k");
        m.push(&mut data, &r);
    }
    crate::errors::fits(what, n as u64, 2 * data.max_report_bytes())
}

/// Reports read part by part (a batch of rows, a chunk of lines) and joined at the end.
/// The first reports kept show what a report takes: before they are, the reports the
/// whole input holds must fit in the memory available, twice (the parts and their
/// concatenation coexist). JSON lines and Arrow ask for a small first part
/// ([`Gathered::next_size`]: `SAMPLE` reports), so that the check comes before anything
/// large is read; Parquet's first part is its first decoded batch (at most 16 MiB),
/// whose reports are then set against the row count of the files' footers.
pub(crate) struct Gathered {
    what: String,
    parts: Vec<Data>,
    checked: bool,
}

impl Gathered {
    /// Reports to read, `what` naming them in a `MemoryError`.
    pub(crate) fn new(what: String) -> Self {
        Self {
            what,
            parts: Vec::new(),
            checked: false,
        }
    }

    /// How many reports the next part should hold at most, given a reader's usual size.
    pub(crate) fn next_size(&self, usual: usize) -> usize {
        if self.checked { usual } else { SAMPLE }
    }

    /// Keeps `part`, once the input's reports fit: `total(part)` of them, each as large
    /// as the largest of the part's first few.
    pub(crate) fn push(&mut self, part: Data, total: impl FnOnce(&Data) -> u64) -> PyResult<()> {
        if !self.checked && part.len() > 0 {
            let sample = part.slice(0, part.len().min(SAMPLE));
            crate::errors::fits(&self.what, total(&part), 2 * sample.max_report_bytes())?;
            self.checked = true;
        }
        self.parts.push(part);
        Ok(())
    }

    /// The reports of every part, in order (`empty`: no reports).
    pub(crate) fn finish(mut self, empty: Data) -> Data {
        match self.parts.len() {
            1 => self.parts.pop().expect("one part"),
            _ => Data::concat(empty, &self.parts),
        }
    }
}

/// The columns `column(part)` of every part, one after another, copied in parallel.
fn join<T: Copy + Default + Send + Sync>(
    parts: &[Data],
    column: impl Fn(&Data) -> &Vec<T>,
) -> Vec<T> {
    let total = parts.iter().map(|p| column(p).len()).sum();
    // Zeroed memory comes from the allocator untouched; each page is written once.
    let mut out = vec![T::default(); total];
    let mut rest = &mut out[..];
    let mut pieces = Vec::with_capacity(parts.len());
    for p in parts {
        let src = column(p);
        let (head, tail) = rest.split_at_mut(src.len());
        pieces.push((head, src));
        rest = tail;
    }
    crate::threads::install(|| {
        pieces
            .into_par_iter()
            .for_each(|(dst, src)| dst.copy_from_slice(src))
    });
    out
}

/// A report type as columns: one implementation per report type of ldp-core.
pub(crate) trait Columnar: Sized + Send + Sync {
    /// No reports, for a mechanism whose reports lie within `limits`.
    fn empty(limits: &ReportLimits) -> Data;
    /// Appends the report.
    fn push(&self, data: &mut Data);
    /// An empty report, to be filled by [`Columnar::read`].
    fn blank() -> Self;
    /// Overwrites `self` with report `i` (reusing its buffers).
    fn read(&mut self, data: &Data, i: usize);
}

impl Columnar for GrrReport {
    fn empty(_: &ReportLimits) -> Data {
        Data::Values { y: Vec::new() }
    }
    fn push(&self, data: &mut Data) {
        let Data::Values { y } = data else {
            unreachable!("a column of values")
        };
        y.push(self.y);
    }
    fn blank() -> Self {
        GrrReport { y: 0 }
    }
    fn read(&mut self, data: &Data, i: usize) {
        let Data::Values { y } = data else {
            unreachable!("a column of values")
        };
        self.y = y[i];
    }
}

impl Columnar for LhReport {
    fn empty(_: &ReportLimits) -> Data {
        Data::SeedValues {
            seed: Vec::new(),
            y: Vec::new(),
        }
    }
    fn push(&self, data: &mut Data) {
        let Data::SeedValues { seed, y } = data else {
            unreachable!("columns of seeds and values")
        };
        seed.push(self.seed);
        y.push(self.y);
    }
    fn blank() -> Self {
        LhReport { seed: 0, y: 0 }
    }
    fn read(&mut self, data: &Data, i: usize) {
        let Data::SeedValues { seed, y } = data else {
            unreachable!("columns of seeds and values")
        };
        (self.seed, self.y) = (seed[i], y[i]);
    }
}

/// The columns of a report that is a sorted set of indices in its field `$field`.
macro_rules! set_columns {
    ($report:ident, $field:ident) => {
        impl Columnar for $report {
            fn empty(_: &ReportLimits) -> Data {
                Data::Sets {
                    offsets: vec![0],
                    indices: Vec::new(),
                }
            }
            fn push(&self, data: &mut Data) {
                let Data::Sets { offsets, indices } = data else {
                    unreachable!("columns of sets")
                };
                indices.extend_from_slice(&self.$field);
                offsets.push(indices.len() as i64);
            }
            fn blank() -> Self {
                $report { $field: Vec::new() }
            }
            fn read(&mut self, data: &Data, i: usize) {
                let Data::Sets { offsets, indices } = data else {
                    unreachable!("columns of sets")
                };
                self.$field.clear();
                self.$field
                    .extend_from_slice(&indices[offsets[i] as usize..offsets[i + 1] as usize]);
            }
        }
    };
}
set_columns!(SubsetReport, subset);
set_columns!(OnesReport, ones);

impl Columnar for SheReport {
    fn empty(limits: &ReportLimits) -> Data {
        Data::Vectors {
            k: limits.entries as usize,
            values: Vec::new(),
        }
    }
    fn push(&self, data: &mut Data) {
        let Data::Vectors { values, .. } = data else {
            unreachable!("a column of vectors")
        };
        values.extend_from_slice(&self.y);
    }
    fn blank() -> Self {
        SheReport { y: Vec::new() }
    }
    fn read(&mut self, data: &Data, i: usize) {
        let Data::Vectors { k, values } = data else {
            unreachable!("a column of vectors")
        };
        self.y.clear();
        self.y.extend_from_slice(&values[i * k..(i + 1) * k]);
    }
}

/// A mechanism whose reports live in [`Data`]: every family whose report type is
/// [`Columnar`].
pub(crate) trait Columns:
    FamilyMechanism<Report: Columnar + JsonReport> + AttackSurface + Sync
{
    /// No reports.
    fn empty(&self) -> Data {
        Self::Report::empty(&self.spec().report_limits())
    }
    /// Appends one report.
    fn push(&self, data: &mut Data, report: &Self::Report) {
        report.push(data);
    }
    /// No reports, with room for `reports` of them (sets: their expected size).
    fn with_capacity(&self, reports: usize) -> Data {
        let mut data = self.empty();
        match &mut data {
            Data::Values { y } => y.reserve(reports),
            Data::SeedValues { seed, y } => {
                seed.reserve(reports);
                y.reserve(reports);
            }
            Data::Sets { offsets, indices } => {
                offsets.reserve(reports);
                // p + (k - 1) q supported items on average, a little more for the spread.
                if let Some((p, q)) = self.spec().pure_probabilities() {
                    let per = (p + (self.domain_size().as_f64() - 1.0) * q) * 1.05 + 4.0;
                    indices.reserve((per * reports as f64) as usize);
                }
            }
            Data::Vectors { k, values } => values.reserve(reports * *k),
        }
        data
    }
    /// Report `i`.
    fn report(&self, data: &Data, i: usize) -> Self::Report {
        let mut report = Self::Report::blank();
        report.read(data, i);
        report
    }
    /// Adds reports `rows` to `server`, validated; the first rejected one stops it and is
    /// named by its index.
    fn add_rows(
        &self,
        server: &mut Self::Aggregator,
        data: &Data,
        rows: std::ops::Range<usize>,
    ) -> Result<(), (usize, AggregateError)> {
        let mut report = Self::Report::blank();
        for i in rows {
            report.read(data, i);
            server.add(&report).map_err(|e| (i, e))?;
        }
        Ok(())
    }
}

impl<M> Columns for M
where
    M: FamilyMechanism + AttackSurface + Sync,
    M::Report: Columnar + JsonReport,
{
}
