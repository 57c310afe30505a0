//! Reports as columns: what a `Reports` object holds, per family, and the typed
//! conversions both ways.

use ldp_attack::Adversary;
use ldp_core::{
    AggregateError, Aggregator, Grr, GrrReport, LhReport, LocalHashing, Mechanism, OnesReport,
    SheReport, SheSums, SubsetReport, SubsetSelection, SummationHistogram, SupportCounts,
    ThresholdHistogram, UnaryEncoding,
};
use ldp_jsonl::JsonReport;

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

    /// The parts one after another, in one allocation of the exact size.
    pub(crate) fn concat(empty: Data, parts: &[Data]) -> Data {
        let n: usize = parts.iter().map(Data::len).sum();
        let mut all = match empty {
            Data::Grr { .. } => Data::Grr {
                y: Vec::with_capacity(n),
            },
            Data::Lh { .. } => Data::Lh {
                seed: Vec::with_capacity(n),
                y: Vec::with_capacity(n),
            },
            Data::Sets { .. } => {
                let total = parts
                    .iter()
                    .map(|p| match p {
                        Data::Sets { indices, .. } => indices.len(),
                        _ => 0,
                    })
                    .sum();
                let mut offsets = Vec::with_capacity(n + 1);
                offsets.push(0);
                Data::Sets {
                    offsets,
                    indices: Vec::with_capacity(total),
                }
            }
            Data::She { k, .. } => Data::She {
                k,
                values: Vec::with_capacity(n * k),
            },
        };
        for part in parts {
            all.extend(part);
        }
        all
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

/// A mechanism whose reports live in [`Data`].
pub(crate) trait Columns: Adversary<Report: JsonReport + Send + Sync> + Sync {
    /// No reports.
    fn empty(&self) -> Data;
    /// Appends one report.
    fn push(&self, data: &mut Data, report: &Self::Report);
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
