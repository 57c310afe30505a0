//! Reports as columns: what a `Reports` object holds, per family, and the typed
//! conversions both ways.

use ldp_core::{
    AttackSurface, FamilyMechanism,
    AggregateError, Aggregator, Grr, GrrReport, LhReport, LocalHashing, Mechanism, OnesReport,
    SheReport, SheSums, SubsetReport, SubsetSelection, SummationHistogram, SupportCounts,
    ThresholdHistogram, UnaryEncoding,
};
use ldp_jsonl::JsonReport;
use rayon::prelude::*;

/// The reports of one mechanism, one column per field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Data {
    /// GRR: the reported item.
    Grr { y: Vec<u32> },
    /// LH: the hash seed and the hashed value.
    Lh { seed: Vec<u32>, y: Vec<u32> },
    /// SS, UE, THE: report i is `indices[offsets[i]..offsets[i + 1]]` (CSR).
    Sets {
        offsets: Vec<i64>,
        indices: Vec<u32>,
    },
    /// SHE: report i is `values[i * k..(i + 1) * k]`.
    She { k: usize, values: Vec<f64> },
}

impl Data {
    pub(crate) fn len(&self) -> usize {
        match self {
            Data::Grr { y } | Data::Lh { y, .. } => y.len(),
            Data::Sets { offsets, .. } => offsets.len() - 1,
            Data::She { k, values } => values.len() / k,
        }
    }

    /// Reports `start..stop`.
    pub(crate) fn slice(&self, start: usize, stop: usize) -> Data {
        match self {
            Data::Grr { y } => Data::Grr {
                y: y[start..stop].to_vec(),
            },
            Data::Lh { seed, y } => Data::Lh {
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
            Data::She { k, values } => Data::She {
                k: *k,
                values: values[start * k..stop * k].to_vec(),
            },
        }
    }

    /// The parts one after another, copied in parallel into buffers of the exact size.
    pub(crate) fn concat(empty: Data, parts: &[Data]) -> Data {
        match empty {
            Data::Grr { .. } => Data::Grr {
                y: join(parts, |p| match p {
                    Data::Grr { y } => y,
                    _ => unreachable!(),
                }),
            },
            Data::Lh { .. } => Data::Lh {
                seed: join(parts, |p| match p {
                    Data::Lh { seed, .. } => seed,
                    _ => unreachable!(),
                }),
                y: join(parts, |p| match p {
                    Data::Lh { y, .. } => y,
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
                pieces.into_par_iter().for_each(|(dst, at, src)| {
                    dst.iter_mut().zip(src).for_each(|(d, s)| *d = s + at);
                });
                Data::Sets { offsets, indices }
            }
            Data::She { k, .. } => Data::She {
                k,
                values: join(parts, |p| match p {
                    Data::She { values, .. } => values,
                    _ => unreachable!(),
                }),
            },
        }
    }

    /// Appends `other`, of the same family.
    pub(crate) fn extend(&mut self, other: &Data) {
        match (self, other) {
            (Data::Grr { y }, Data::Grr { y: more }) => y.extend_from_slice(more),
            (Data::Lh { seed, y }, Data::Lh { seed: s, y: more }) => {
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
            (Data::She { values, .. }, Data::She { values: v, .. }) => values.extend_from_slice(v),
            _ => unreachable!("reports of one mechanism share a family"),
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
    pieces
        .into_par_iter()
        .for_each(|(dst, src)| dst.copy_from_slice(src));
    out
}

/// A mechanism whose reports live in [`Data`].
pub(crate) trait Columns:
    FamilyMechanism<Report: JsonReport + Send + Sync> + AttackSurface + Sync
{
    /// No reports.
    fn empty(&self) -> Data;
    /// Appends one report.
    fn push(&self, data: &mut Data, report: &Self::Report);
    /// No reports, with room for `reports` of them (sets: their expected size).
    fn with_capacity(&self, reports: usize) -> Data {
        let mut data = self.empty();
        match &mut data {
            Data::Grr { y } => y.reserve(reports),
            Data::Lh { seed, y } => {
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
            Data::She { k, values } => values.reserve(reports * *k),
        }
        data
    }
    /// Report `i`.
    fn report(&self, data: &Data, i: usize) -> Self::Report;
    /// Adds report `i` to `server`, validated.
    fn add_one(
        &self,
        server: &mut Self::Aggregator,
        data: &Data,
        i: usize,
    ) -> Result<(), AggregateError>;
}

macro_rules! sets {
    ($ty:ty, $report:ident, $field:ident) => {
        impl Columns for $ty {
            fn empty(&self) -> Data {
                Data::Sets {
                    offsets: vec![0],
                    indices: Vec::new(),
                }
            }
            fn push(&self, data: &mut Data, report: &$report) {
                let Data::Sets { offsets, indices } = data else {
                    unreachable!()
                };
                indices.extend_from_slice(&report.$field);
                offsets.push(indices.len() as i64);
            }
            fn report(&self, data: &Data, i: usize) -> $report {
                let Data::Sets { offsets, indices } = data else {
                    unreachable!()
                };
                $report {
                    $field: indices[offsets[i] as usize..offsets[i + 1] as usize].to_vec(),
                }
            }
            fn add_one(
                &self,
                server: &mut SupportCounts<$ty>,
                data: &Data,
                i: usize,
            ) -> Result<(), AggregateError> {
                let Data::Sets { offsets, indices } = data else {
                    unreachable!()
                };
                server.add_support(&indices[offsets[i] as usize..offsets[i + 1] as usize])
            }
        }
    };
}
sets!(SubsetSelection, SubsetReport, subset);
sets!(UnaryEncoding, OnesReport, ones);
sets!(ThresholdHistogram, OnesReport, ones);

impl Columns for Grr {
    fn empty(&self) -> Data {
        Data::Grr { y: Vec::new() }
    }
    fn push(&self, data: &mut Data, report: &GrrReport) {
        let Data::Grr { y } = data else {
            unreachable!()
        };
        y.push(report.y);
    }
    fn report(&self, data: &Data, i: usize) -> GrrReport {
        let Data::Grr { y } = data else {
            unreachable!()
        };
        GrrReport { y: y[i] }
    }
    fn add_one(
        &self,
        server: &mut SupportCounts<Grr>,
        data: &Data,
        i: usize,
    ) -> Result<(), AggregateError> {
        let Data::Grr { y } = data else {
            unreachable!()
        };
        server.add_support(&[y[i]])
    }
}

impl Columns for LocalHashing {
    fn empty(&self) -> Data {
        Data::Lh {
            seed: Vec::new(),
            y: Vec::new(),
        }
    }
    fn push(&self, data: &mut Data, report: &LhReport) {
        let Data::Lh { seed, y } = data else {
            unreachable!()
        };
        seed.push(report.seed);
        y.push(report.y);
    }
    fn report(&self, data: &Data, i: usize) -> LhReport {
        let Data::Lh { seed, y } = data else {
            unreachable!()
        };
        LhReport {
            seed: seed[i],
            y: y[i],
        }
    }
    fn add_one(
        &self,
        server: &mut SupportCounts<LocalHashing>,
        data: &Data,
        i: usize,
    ) -> Result<(), AggregateError> {
        server.add(&self.report(data, i))
    }
}

impl Columns for SummationHistogram {
    fn empty(&self) -> Data {
        Data::She {
            k: self.domain_size().as_usize(),
            values: Vec::new(),
        }
    }
    fn push(&self, data: &mut Data, report: &SheReport) {
        let Data::She { values, .. } = data else {
            unreachable!()
        };
        values.extend_from_slice(&report.y);
    }
    fn report(&self, data: &Data, i: usize) -> SheReport {
        let Data::She { k, values } = data else {
            unreachable!()
        };
        SheReport {
            y: values[i * k..(i + 1) * k].to_vec(),
        }
    }
    fn add_one(&self, server: &mut SheSums, data: &Data, i: usize) -> Result<(), AggregateError> {
        let Data::She { k, values } = data else {
            unreachable!()
        };
        server.add_values(&values[i * k..(i + 1) * k])
    }
}
