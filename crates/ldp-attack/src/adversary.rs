//! The adversary's side of each mechanism family: the paper's reconstruction attack, and
//! the fake reports of the poisoning attacks of Cao et al. (2021).

use ldp_core::{
    Aggregator, ClipBound, Grr, GrrReport, LhReport, LocalHashing, Mechanism, OnesReport,
    SheReport, SheSums, SubsetReport, SubsetSelection, SummationHistogram, SupportCounts,
    ThresholdHistogram, UnaryEncoding,
};
use rand::{Rng, RngExt};

use crate::lh_search::max_gain_seed;
use crate::poison::Targets;

/// The maximal gain attack, prepared once per attack; each fake user then draws its
/// report with [`Adversary::max_gain_report`].
#[derive(Debug, Clone, PartialEq)]
pub struct MaxGain<R> {
    /// The report every fake user sends, where the best report is one fixed report (UE,
    /// THE, LH, SHE); `None` where each fake user draws its own (GRR, SS).
    fixed: Option<R>,
    /// Targets each fake report supports. The closed form (ldp-analytic's EPG) assumes
    /// all r for UE, THE and LH, one for GRR and min(r, omega) for SS; an LH attacker whose
    /// seed search fell short supports fewer.
    pub supported: u32,
}

impl<R> MaxGain<R> {
    fn fixed(report: R, supported: usize) -> Self {
        Self {
            fixed: Some(report),
            supported: supported as u32,
        }
    }
}

/// What an attacker can do against a mechanism.
pub trait Adversary: Mechanism {
    /// The server's aggregator. An SHE server given a bound clips every coordinate to
    /// `[-bound, bound]`; the other families ignore it.
    fn server(&self, she_clip: Option<ClipBound>) -> Self::Aggregator {
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

    /// One genuine user end to end: perturbs `item`, adds the report to `server` and
    /// returns the attack's guess. SHE streams the report instead of materializing it
    /// (same draws, same sums, same guess).
    #[inline]
    fn genuine_user<R1: Rng + ?Sized, R2: Rng + ?Sized>(
        &self,
        item: u32,
        server: &mut Self::Aggregator,
        rng: &mut R1,
        attacker: &mut R2,
        scratch: &mut Vec<u32>,
    ) -> u32 {
        let report = self
            .perturb(item, rng)
            .expect("population items are in the domain");
        self.observe_and_guess(server, &report, scratch, attacker)
    }

    /// Prepares the maximal gain attack on `targets` (all in `0..k`). `she_bound` is the
    /// SHE server's clipping bound (ignored by the other families).
    fn plan_max_gain(&self, targets: &Targets, she_bound: ClipBound) -> MaxGain<Self::Report>;

    /// One fake report of a prepared maximal gain attack.
    fn max_gain_report<R: Rng + ?Sized>(
        &self,
        plan: &MaxGain<Self::Report>,
        targets: &Targets,
        rng: &mut R,
    ) -> Self::Report {
        let _ = (targets, rng);
        plan.fixed
            .clone()
            .expect("families that draw per fake user override max_gain_report")
    }

    /// A fake report of the random output attack: uniform over the output space (SHE:
    /// uniform in `[-she_bound, she_bound]^k`).
    fn random_output<R: Rng + ?Sized>(&self, she_bound: ClipBound, rng: &mut R) -> Self::Report;
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
                .expect("genuine reports are valid and fewer than 2^64");
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

    /// GRR's report supports one item: each fake user reports a uniformly chosen target.
    fn plan_max_gain(&self, _: &Targets, _: ClipBound) -> MaxGain<GrrReport> {
        MaxGain {
            fixed: None,
            supported: 1,
        }
    }

    fn max_gain_report<R: Rng + ?Sized>(
        &self,
        _: &MaxGain<GrrReport>,
        targets: &Targets,
        rng: &mut R,
    ) -> GrrReport {
        let t = targets.items();
        GrrReport {
            y: t[rng.random_range(0..t.len())],
        }
    }

    fn random_output<R: Rng + ?Sized>(&self, _: ClipBound, rng: &mut R) -> GrrReport {
        GrrReport {
            y: rng.random_range(0..self.domain_size().get()),
        }
    }
}

impl Adversary for SubsetSelection {
    support_based!();

    /// Each fake user reports a subset holding `min(r, omega)` targets (a uniform choice
    /// of them when r > omega), padded with uniformly drawn non-targets.
    fn plan_max_gain(&self, targets: &Targets, _: ClipBound) -> MaxGain<SubsetReport> {
        MaxGain {
            fixed: None,
            supported: (targets.len() as u32).min(self.subset_size()),
        }
    }

    fn max_gain_report<R: Rng + ?Sized>(
        &self,
        _: &MaxGain<SubsetReport>,
        targets: &Targets,
        rng: &mut R,
    ) -> SubsetReport {
        let targets = targets.items();
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

    fn random_output<R: Rng + ?Sized>(&self, _: ClipBound, rng: &mut R) -> SubsetReport {
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

fn ones_targets(targets: &Targets) -> MaxGain<OnesReport> {
    let ones = targets.items().to_vec();
    MaxGain::fixed(OnesReport { ones }, targets.len())
}

fn ones_uniform<R: Rng + ?Sized>(k: u32, rng: &mut R) -> OnesReport {
    OnesReport {
        ones: (0..k).filter(|_| rng.random_bool(0.5)).collect(),
    }
}

impl Adversary for UnaryEncoding {
    support_based!();

    /// Exactly the target bits set.
    fn plan_max_gain(&self, targets: &Targets, _: ClipBound) -> MaxGain<OnesReport> {
        ones_targets(targets)
    }

    fn random_output<R: Rng + ?Sized>(&self, _: ClipBound, rng: &mut R) -> OnesReport {
        ones_uniform(self.domain_size().get(), rng)
    }
}

impl Adversary for ThresholdHistogram {
    support_based!();

    /// Exactly the target bits set.
    fn plan_max_gain(&self, targets: &Targets, _: ClipBound) -> MaxGain<OnesReport> {
        ones_targets(targets)
    }

    fn random_output<R: Rng + ?Sized>(&self, _: ClipBound, rng: &mut R) -> OnesReport {
        ones_uniform(self.domain_size().get(), rng)
    }
}

impl Adversary for LocalHashing {
    support_based!();

    /// One seed and value that hash as many targets together as the bounded search of
    /// [`crate::lh_search`] finds (all of them when g^(r-1) is small); every fake user
    /// sends it.
    fn plan_max_gain(&self, targets: &Targets, _: ClipBound) -> MaxGain<LhReport> {
        let (report, supported) = max_gain_seed(self.hash_range(), targets.items());
        MaxGain::fixed(report, supported as usize)
    }

    fn random_output<R: Rng + ?Sized>(&self, _: ClipBound, rng: &mut R) -> LhReport {
        LhReport {
            seed: rng.next_u32(),
            y: rng.random_range(0..self.hash_range()),
        }
    }
}

impl Adversary for SummationHistogram {
    fn server(&self, she_clip: Option<ClipBound>) -> SheSums {
        match she_clip {
            Some(bound) => self.clipped_aggregator(bound),
            None => self.unclipped_aggregator(),
        }
    }

    fn genuine_user<R1: Rng + ?Sized, R2: Rng + ?Sized>(
        &self,
        item: u32,
        server: &mut SheSums,
        rng: &mut R1,
        _: &mut R2,
        _: &mut Vec<u32>,
    ) -> u32 {
        // The largest coordinate, the first on ties, as `guess` picks it.
        let mut best = (f64::NEG_INFINITY, 0usize);
        server
            .add_perturbed(item, rng, |i, v| {
                if v > best.0 {
                    best = (v, i);
                }
            })
            .expect("population items are in the domain, and fewer than 2^64");
        best.1 as u32
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
        server
            .add(report)
            .expect("genuine reports are valid and fewer than 2^64");
        self.guess(report, rng)
    }

    /// The clipping bound on every target, zero elsewhere.
    fn plan_max_gain(&self, targets: &Targets, she_bound: ClipBound) -> MaxGain<SheReport> {
        let mut y = vec![0.0; self.domain_size().as_usize()];
        targets
            .items()
            .iter()
            .for_each(|&t| y[t as usize] = she_bound.get());
        MaxGain::fixed(SheReport { y }, targets.len())
    }

    fn random_output<R: Rng + ?Sized>(&self, she_bound: ClipBound, rng: &mut R) -> SheReport {
        let c = she_bound.get();
        let y = (0..self.domain_size().get())
            .map(|_| rng.random_range(-c..=c))
            .collect();
        SheReport { y }
    }
}
