//! The adversary's side of each mechanism family: the paper's reconstruction attack, and
//! the fake reports of the poisoning attacks of Cao et al. (2021).

use ldp_core::families::local_hash::hash_item;
use ldp_core::{
    Aggregator, Grr, GrrReport, LhReport, LocalHashing, Mechanism, OnesReport, SheReport, SheSums,
    SubsetReport, SubsetSelection, SummationHistogram, SupportCounts, ThresholdHistogram,
    UnaryEncoding,
};
use rand::{Rng, RngExt};

/// What an attacker can do against a mechanism.
pub trait Adversary: Mechanism {
    /// The server's aggregator. SHE servers may clip coordinates to `[-clip, clip]`.
    fn server(&self, she_clip: Option<f64>) -> Self::Aggregator {
        let _ = she_clip;
        self.aggregator()
    }

    /// The paper's reconstruction attack on one report: a uniform guess among the
    /// supported items (uniform over the domain when none is); SHE: the largest coordinate.
    fn guess<R: Rng + ?Sized>(&self, report: &Self::Report, rng: &mut R) -> u32;

    /// Adds a genuine report to `server` and returns the attack's guess, finding the
    /// report's support only once. `scratch` is reusable working memory.
    fn observe_and_guess<R: Rng + ?Sized>(
        &self,
        server: &mut Self::Aggregator,
        report: &Self::Report,
        scratch: &mut Vec<u32>,
        rng: &mut R,
    ) -> u32;

    /// A fake report of the maximal gain attack for `targets` (non-empty, distinct, in
    /// `0..k`). `she_bound` is the SHE server's clipping bound (ignored by other families).
    fn max_gain_report<R: Rng + ?Sized>(
        &self,
        targets: &[u32],
        she_bound: f64,
        rng: &mut R,
    ) -> Self::Report;

    /// A fake report of the random output attack: uniform over the output space (SHE:
    /// uniform in `[-she_bound, she_bound]^k`).
    fn random_output<R: Rng + ?Sized>(&self, she_bound: f64, rng: &mut R) -> Self::Report;
}

/// Uniform choice in `scratch`, or over `0..k` when it is empty.
#[inline]
fn uniform_pick<R: Rng + ?Sized>(scratch: &[u32], k: u32, rng: &mut R) -> u32 {
    if scratch.is_empty() {
        rng.random_range(0..k)
    } else {
        scratch[rng.random_range(0..scratch.len())]
    }
}

/// The fused observe-and-guess of every support-based family.
macro_rules! support_based {
    () => {
        fn guess<R: Rng + ?Sized>(&self, report: &Self::Report, rng: &mut R) -> u32 {
            let support = ldp_core::Support::support(self, report);
            uniform_pick(&support, self.domain_size().get(), rng)
        }

        fn observe_and_guess<R: Rng + ?Sized>(
            &self,
            server: &mut SupportCounts<Self>,
            report: &Self::Report,
            scratch: &mut Vec<u32>,
            rng: &mut R,
        ) -> u32 {
            scratch.clear();
            server
                .add_with(report, |i| scratch.push(i))
                .expect("genuine reports are valid");
            uniform_pick(scratch, self.domain_size().get(), rng)
        }
    };
}

/// `m` distinct items drawn uniformly from `0..n` without those in `exclude`, sorted.
fn distinct_outside<R: Rng + ?Sized>(n: u32, m: usize, exclude: &[u32], rng: &mut R) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(m);
    while out.len() < m {
        let v = rng.random_range(0..n);
        if !exclude.contains(&v) && !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v
}

impl Adversary for Grr {
    support_based!();

    /// GRR's report supports one item: a uniformly chosen target.
    fn max_gain_report<R: Rng + ?Sized>(&self, targets: &[u32], _: f64, rng: &mut R) -> GrrReport {
        GrrReport {
            y: targets[rng.random_range(0..targets.len())],
        }
    }

    fn random_output<R: Rng + ?Sized>(&self, _: f64, rng: &mut R) -> GrrReport {
        GrrReport {
            y: rng.random_range(0..self.domain_size().get()),
        }
    }
}

impl Adversary for SubsetSelection {
    support_based!();

    /// A subset holding `min(r, omega)` targets (a uniform choice of them when r > omega),
    /// padded with uniformly drawn non-targets.
    fn max_gain_report<R: Rng + ?Sized>(
        &self,
        targets: &[u32],
        _: f64,
        rng: &mut R,
    ) -> SubsetReport {
        let omega = self.subset_size() as usize;
        let mut chosen: Vec<u32> = if targets.len() <= omega {
            targets.to_vec()
        } else {
            let idx = distinct_outside(targets.len() as u32, omega, &[], rng);
            idx.into_iter().map(|i| targets[i as usize]).collect()
        };
        let pad = distinct_outside(self.domain_size().get(), omega - chosen.len(), targets, rng);
        chosen.extend(pad);
        SubsetReport {
            subset: sorted(chosen),
        }
    }

    fn random_output<R: Rng + ?Sized>(&self, _: f64, rng: &mut R) -> SubsetReport {
        let subset = distinct_outside(
            self.domain_size().get(),
            self.subset_size() as usize,
            &[],
            rng,
        );
        SubsetReport {
            subset: sorted(subset),
        }
    }
}

fn ones_targets(targets: &[u32]) -> OnesReport {
    OnesReport {
        ones: sorted(targets.to_vec()),
    }
}

fn ones_uniform<R: Rng + ?Sized>(k: u32, rng: &mut R) -> OnesReport {
    OnesReport {
        ones: (0..k).filter(|_| rng.random_bool(0.5)).collect(),
    }
}

impl Adversary for UnaryEncoding {
    support_based!();

    /// Exactly the target bits set.
    fn max_gain_report<R: Rng + ?Sized>(&self, targets: &[u32], _: f64, _: &mut R) -> OnesReport {
        ones_targets(targets)
    }

    fn random_output<R: Rng + ?Sized>(&self, _: f64, rng: &mut R) -> OnesReport {
        ones_uniform(self.domain_size().get(), rng)
    }
}

impl Adversary for ThresholdHistogram {
    support_based!();

    /// Exactly the target bits set.
    fn max_gain_report<R: Rng + ?Sized>(&self, targets: &[u32], _: f64, _: &mut R) -> OnesReport {
        ones_targets(targets)
    }

    fn random_output<R: Rng + ?Sized>(&self, _: f64, rng: &mut R) -> OnesReport {
        ones_uniform(self.domain_size().get(), rng)
    }
}

/// Seeds tried before settling for the seed that puts the most targets in one bucket.
const SEED_SEARCH_LIMIT: u32 = 1 << 20;

impl Adversary for LocalHashing {
    support_based!();

    /// Searches random seeds until every target hashes to one value (expected g^(r-1)
    /// tries), and reports that value. After 2^20 tries it keeps the best seed found.
    fn max_gain_report<R: Rng + ?Sized>(&self, targets: &[u32], _: f64, rng: &mut R) -> LhReport {
        let g = self.hash_range();
        let mut best = (0usize, LhReport { seed: 0, y: 0 });
        for _ in 0..SEED_SEARCH_LIMIT {
            let seed = rng.next_u32();
            let y = hash_item(targets[0], seed, g);
            let hits = targets
                .iter()
                .filter(|&&t| hash_item(t, seed, g) == y)
                .count();
            if hits > best.0 {
                best = (hits, LhReport { seed, y });
                if hits == targets.len() {
                    break;
                }
            }
        }
        best.1
    }

    fn random_output<R: Rng + ?Sized>(&self, _: f64, rng: &mut R) -> LhReport {
        LhReport {
            seed: rng.next_u32(),
            y: rng.random_range(0..self.hash_range()),
        }
    }
}

impl Adversary for SummationHistogram {
    fn server(&self, she_clip: Option<f64>) -> SheSums {
        match she_clip {
            Some(bound) => {
                SheSums::clipped(self.clone(), bound).expect("bound validated by the caller")
            }
            None => self.aggregator(),
        }
    }

    /// The index of the largest coordinate (the first on ties, which have probability 0).
    fn guess<R: Rng + ?Sized>(&self, report: &SheReport, _: &mut R) -> u32 {
        let mut best = 0;
        for (i, &v) in report.y.iter().enumerate() {
            if v > report.y[best] {
                best = i;
            }
        }
        best as u32
    }

    fn observe_and_guess<R: Rng + ?Sized>(
        &self,
        server: &mut SheSums,
        report: &SheReport,
        _: &mut Vec<u32>,
        rng: &mut R,
    ) -> u32 {
        server.add(report).expect("genuine reports are valid");
        self.guess(report, rng)
    }

    /// The clipping bound on every target, zero elsewhere.
    fn max_gain_report<R: Rng + ?Sized>(
        &self,
        targets: &[u32],
        she_bound: f64,
        _: &mut R,
    ) -> SheReport {
        let mut y = vec![0.0; self.domain_size().as_usize()];
        targets.iter().for_each(|&t| y[t as usize] = she_bound);
        SheReport { y }
    }

    fn random_output<R: Rng + ?Sized>(&self, she_bound: f64, rng: &mut R) -> SheReport {
        let y = (0..self.domain_size().get())
            .map(|_| rng.random_range(-she_bound..=she_bound))
            .collect();
        SheReport { y }
    }
}
