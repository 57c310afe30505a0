//! Every bits formula against real encodings of 1e5 seeded reports: each report is
//! written with the encoding, its length measured, and (for the codes that need it) read
//! back.

use ldp_analytic::cost::{Encoding, encodings};
use ldp_core::simulation::{Role, perturb_all};
use ldp_core::{
    DomainSize, Epsilon, FamilyParams, GrrReport, LhReport, OnesReport, Spec, SubsetReport,
    dispatch,
};

const REPORTS: usize = 100_000;

/// Bits to write a number in `0..n`.
fn width(n: u128) -> u32 {
    128 - (n - 1).leading_zeros()
}

/// A bit writer that only counts, with the index and rank codes of the module docs.
struct Writer {
    bits: u64,
}

impl Writer {
    fn put(&mut self, value: u128, range: u128) {
        assert!(value < range);
        self.bits += u64::from(width(range));
    }
}

/// `C(n, r)` exactly (n <= 60 keeps it in u128).
fn choose(n: u128, r: u128) -> u128 {
    (0..r).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

/// The rank of a sorted subset in the combinatorial number system, and back.
fn subset_rank(subset: &[u32]) -> u128 {
    subset
        .iter()
        .enumerate()
        .map(|(i, &c)| choose(u128::from(c), i as u128 + 1))
        .sum()
}

fn subset_unrank(mut rank: u128, omega: usize) -> Vec<u32> {
    let mut out = vec![0u32; omega];
    for i in (0..omega).rev() {
        let mut c = i as u32;
        while choose(u128::from(c) + 1, i as u128 + 1) <= rank {
            c += 1;
        }
        rank -= choose(u128::from(c), i as u128 + 1);
        out[i] = c;
    }
    out
}

/// Mean measured size of each of the spec's encodings over seeded reports.
fn measured(spec: &Spec) -> Vec<(Encoding, f64)> {
    let any = spec.build().unwrap();
    let k = spec.k().get();
    let items: Vec<u32> = (0..REPORTS as u32).map(|i| i % k).collect();
    dispatch!(&any, m => {
        let reports = perturb_all(m, &items, 77, 0, Role::Genuine).unwrap();
        encodings(spec)
            .into_iter()
            .map(|(encoding, _)| {
                let mut w = Writer { bits: 0 };
                for (i, r) in reports.iter().enumerate() {
                    // Decoding is checked on the first 1000 reports (it is quadratic).
                    encode(&mut w, encoding, spec, r as &dyn std::any::Any, i < 1000);
                }
                (encoding, w.bits as f64 / REPORTS as f64)
            })
            .collect()
    })
}

fn encode(
    w: &mut Writer,
    encoding: Encoding,
    spec: &Spec,
    report: &dyn std::any::Any,
    decode: bool,
) {
    let k = u128::from(spec.k().get());
    let limits = spec.report_limits();
    match encoding {
        Encoding::Index => w.put(
            u128::from(report.downcast_ref::<GrrReport>().unwrap().y),
            u128::from(limits.values),
        ),
        Encoding::SubsetRank => {
            let subset = &report.downcast_ref::<SubsetReport>().unwrap().subset;
            let rank = subset_rank(subset);
            if decode {
                assert_eq!(&subset_unrank(rank, subset.len()), subset);
            }
            w.put(rank, choose(k, subset.len() as u128));
        }
        Encoding::SubsetIndices => {
            for &i in &report.downcast_ref::<SubsetReport>().unwrap().subset {
                w.put(u128::from(i), k);
            }
        }
        Encoding::Dense => w.bits += k as u64,
        Encoding::Sparse => {
            let ones = &report.downcast_ref::<OnesReport>().unwrap().ones;
            w.put(ones.len() as u128, k + 1);
            for &i in ones {
                w.put(u128::from(i), k);
            }
        }
        Encoding::SeedAndValue => {
            let r = report.downcast_ref::<LhReport>().unwrap();
            let FamilyParams::LocalHashing { g } = spec.params() else {
                unreachable!()
            };
            w.put(u128::from(r.seed), 1 << 32);
            w.put(u128::from(r.y), u128::from(g));
        }
        Encoding::IndexAndBits => {
            let FamilyParams::CountMeanSketch { hashes, width } = spec.params() else {
                unreachable!()
            };
            let ones = &report.downcast_ref::<OnesReport>().unwrap().ones;
            let row = ones.last().unwrap() - hashes * width;
            w.put(u128::from(row), u128::from(hashes));
            w.bits += u64::from(width);
        }
        Encoding::SubsetRankAndBits => {
            // Cells 2 j + bit: the buckets' rank, then their bits.
            let cells = &report.downcast_ref::<SubsetReport>().unwrap().subset;
            let buckets: Vec<u32> = cells.iter().map(|c| c / 2).collect();
            let rank = subset_rank(&buckets);
            if decode {
                assert_eq!(subset_unrank(rank, buckets.len()), buckets);
            }
            w.put(rank, choose(k, buckets.len() as u128));
            w.bits += cells.len() as u64;
        }
        Encoding::IndexAndValue => {
            let r = report.downcast_ref::<LhReport>().unwrap();
            w.put(u128::from(r.seed), u128::from(limits.seeds));
            w.put(u128::from(r.y), u128::from(limits.values));
        }
        Encoding::Float64 => w.bits += 64 * k as u64,
        Encoding::Float32 => w.bits += 32 * k as u64,
    }
}

#[test]
fn every_bits_formula_matches_the_measured_encodings() {
    let (k, eps) = (DomainSize::new(60).unwrap(), Epsilon::new(1.5).unwrap());
    let specs = [
        FamilyParams::Grr,
        FamilyParams::SubsetSelection { omega: 1 },
        FamilyParams::SubsetSelection { omega: 11 },
        FamilyParams::SubsetSelection { omega: 30 },
        FamilyParams::UnaryEncoding { p: 0.5 },
        FamilyParams::UnaryEncoding { p: 0.95 },
        FamilyParams::ThresholdHistogram { theta: 0.9 },
        FamilyParams::ThresholdHistogram { theta: 1.0 },
        FamilyParams::LocalHashing { g: 2 },
        FamilyParams::LocalHashing { g: 13 },
        FamilyParams::SummationHistogram,
        FamilyParams::HadamardResponse { blocks: 1 },
        FamilyParams::HadamardResponse { blocks: 8 },
        FamilyParams::HadamardMechanism,
        FamilyParams::FastLocalHashing { g: 5, seeds: 100 },
        FamilyParams::CountMeanSketch {
            hashes: 16,
            width: 20,
        },
        FamilyParams::HadamardCountMeanSketch {
            hashes: 16,
            width: 32,
        },
        FamilyParams::DBitFlip { bits: 1 },
        FamilyParams::DBitFlip { bits: 7 },
        FamilyParams::DBitFlip { bits: 60 },
    ];
    for family in specs {
        let spec = Spec::new(k, eps, family).unwrap();
        let formula = encodings(&spec);
        for ((encoding, want), (_, got)) in formula.iter().zip(measured(&spec)) {
            // Fixed-length codes match exactly; the sparse code's mean is within 6 SE of
            // its expectation (the count of one-bits has variance below its mean).
            let tolerance = if *encoding == Encoding::Sparse {
                let ones = (want - 6.0) / 6.0;
                6.0 * 6.0 * (ones / REPORTS as f64).sqrt()
            } else {
                1e-9
            };
            assert!(
                (got - want).abs() <= tolerance,
                "{family:?} {encoding:?}: measured {got} vs formula {want}"
            );
        }
    }
}

/// `bits` is the first entry of `encodings` (SHE: the 64-bit floats it sends).
#[test]
fn bits_is_the_smallest_encoding() {
    for kv in [2, 3, 60, 1000, 100_000] {
        for e in [0.1, 1.0, 5.0] {
            let (k, eps) = (DomainSize::new(kv).unwrap(), Epsilon::new(e).unwrap());
            for family in [
                FamilyParams::Grr,
                FamilyParams::SubsetSelection { omega: 1 },
                FamilyParams::SubsetSelection { omega: kv / 2 + 1 },
                FamilyParams::UnaryEncoding { p: 0.5 },
                FamilyParams::ThresholdHistogram { theta: 0.8 },
                FamilyParams::LocalHashing { g: 57 },
                FamilyParams::SummationHistogram,
                FamilyParams::DBitFlip { bits: kv / 2 + 1 },
            ] {
                let Ok(spec) = Spec::new(k, eps, family) else {
                    continue;
                };
                assert_eq!(
                    ldp_analytic::cost::bits(&spec),
                    encodings(&spec)[0].1,
                    "{spec:?}"
                );
            }
        }
    }
}
