//! dBitFlip (Ding, Kulkarni and Yekhanin, "Collecting Telemetry Data Privately",
//! NeurIPS 2017), the one-shot protocol under Microsoft's dBitFlipPM.
//!
//! The domain is the `k` buckets (values already bucketed; multi-freq-ldpy's `b`). A client
//! draws `d` distinct buckets uniformly and reports, for each, one bit of symmetric unary
//! encoding at budget eps: 1 with probability `p = e^(eps/2) / (e^(eps/2) + 1)` for its
//! own bucket and `q = 1 - p` for any other. Under permanent memoization
//! ([`crate::longitudinal::ClassMemo`]) the buckets are drawn once per user and one
//! report is kept per class of values, which is dBitFlipPM.
//!
//! **The report** is the `d` (bucket, bit) pairs as the sorted cells `2 j + bit`, a
//! [`SubsetReport`] of exactly `d` cells (`{"subset": [6, 41]}` is bucket 3 with bit 0 and
//! bucket 20 with bit 1). It supports the buckets whose bit is 1.
//!
//! **The server** counts the 2k cells ([`OutputCounts`]) and estimates as Ding et al. do,
//! from the users who sampled each bucket:
//!
//! ```text
//! f^(v) = k / (n d) * sum over reports that sampled v of (bit - q) / (p - q)
//! ```
//!
//! which is unbiased and has variance `(k/d) e^(eps/2) / (e^(eps/2) - 1)^2 / n +
//! f(v) (k - d) / (d n)` (`ldp_analytic::bit_flip`). The mechanism is also pure, with `p* =
//! d p / k` and `q* = d q / k`, which the likelihood estimators and the attacks use.
//!
//! Privacy: a report's probability given x is a constant (the bucket draw and the bits of
//! the other buckets) times `p/q = e^(eps/2)` when x's bucket is sampled with bit 1,
//! `q/p` when sampled with bit 0, and 1 when not sampled: two values' ratio is at most
//! `(p/q)^2 = e^eps`.

use rand::{Rng, RngExt};
use rand_distr::{Bernoulli, Distribution};

use crate::attack_surface::{AttackSurface, MaxGain, distinct_outside, support_guess};
use crate::error::{AggregateError, ItemOutOfRange, ParamError, ReportError};
use crate::exact_outputs::{Coverage, ExactOutputs, TooManyOutputs};
use crate::families::subset::ln_binomial;
use crate::families::{FamilyMechanism, FamilyParams};
use crate::mechanism::{Mechanism, PureProtocol, Support, check_runnable, eq_by_spec};
use crate::output_counts::{CountedOutputs, OutputCounts};
use crate::report::{ReportLimits, SubsetReport, check_sorted_distinct};
use crate::sampling::floyd_sorted;
use crate::server::Clip;
use crate::spec::Spec;
use crate::vocab::{DomainSize, Epsilon};

/// The preset's number of bits, d = 1: the family's cheapest report.
/// `ldp_optimize::choose_protocol` (`ldp tune --protocol all`) also compares d = 2, 4, ...
/// up to k ([`FamilyMechanism::alternatives`]); d = k has SUE's variance.
pub const ONE_BIT: u32 = 1;

/// `p = e^(eps/2) / (e^(eps/2) + 1)`, the probability that a sampled bucket's bit is 1 when
/// it is the user's (and `1 - p` when it is not).
pub fn keep_probability(eps: Epsilon) -> f64 {
    1.0 / (1.0 + (-eps.get() / 2.0).exp())
}

/// `(p*, q*) = (d p / k, d (1 - p) / k)`: a report supports the user's bucket when it
/// samples it (probability d/k) with bit 1, and another bucket likewise with bit 1.
pub fn probabilities(k: DomainSize, eps: Epsilon, bits: u32) -> (f64, f64) {
    let p = keep_probability(eps);
    // 1 - p without cancellation at large eps.
    let q = 1.0 / (1.0 + (eps.get() / 2.0).exp());
    let share = f64::from(bits) / k.as_f64();
    (share * p, share * q)
}

/// The number of bits must lie in `[1, k]`.
pub(crate) fn check_bits(k: DomainSize, bits: u32) -> Result<(), ParamError> {
    if bits == 0 || bits > k.get() {
        Err(ParamError::Parameter {
            name: "bits",
            description: "dBitFlip's number of sampled buckets d",
            requirement: format!("lie in [1, {}] (k)", k.get()),
            value: f64::from(bits),
        })
    } else {
        Ok(())
    }
}

/// dBitFlip with `d` bits (module docs).
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Mechanism, Support};
/// use ldp_core::families::bit_flip::DBitFlip;
/// use ldp_core::simulation::{stream_rng, Role};
/// let dbf = DBitFlip::new(DomainSize::new(100)?, Epsilon::new(2.0)?, 4)?;
/// let report = dbf.perturb(42, &mut stream_rng(1, 0, Role::Genuine, 0))?;
/// assert_eq!(report.subset.len(), 4);             // four (bucket, bit) cells
/// assert!(report.subset.iter().all(|&c| c < 200)); // cell 2 j + bit
/// assert!(DBitFlip::new(DomainSize::new(100)?, Epsilon::new(2.0)?, 101).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct DBitFlip {
    k: DomainSize,
    eps: Epsilon,
    bits: u32,
    own_one: Bernoulli,
    other_one: Bernoulli,
    /// `ln P[buckets]` = `-ln C(k, d)`, and `ln p`, `ln q`.
    ln_draw: f64,
    ln_p: f64,
    ln_q: f64,
}

impl DBitFlip {
    /// dBitFlip with `bits` sampled buckets in `[1, k]`.
    pub fn new(k: DomainSize, eps: Epsilon, bits: u32) -> Result<Self, ParamError> {
        check_bits(k, bits)?;
        check_runnable(k, eps)?;
        let p = keep_probability(eps);
        let q = 1.0 / (1.0 + (eps.get() / 2.0).exp());
        // ln p = -ln(1 + e^(-eps/2)) and ln q = ln p - eps/2: finite at any budget (q
        // underflows to 0 from eps near 1419).
        let ln_p = -(-eps.get() / 2.0).exp().ln_1p();
        Ok(Self {
            k,
            eps,
            bits,
            own_one: Bernoulli::new(p).expect("a probability"),
            other_one: Bernoulli::new(q).expect("a probability"),
            ln_draw: -ln_binomial(u64::from(k.get()), u64::from(bits)),
            ln_p,
            ln_q: ln_p - eps.get() / 2.0,
        })
    }

    /// The preset, one bit ([`ONE_BIT`]).
    pub fn one_bit(k: DomainSize, eps: Epsilon) -> Result<Self, ParamError> {
        Self::new(k, eps, ONE_BIT)
    }

    /// d, the buckets a report samples (its bits).
    pub fn sampled(&self) -> u32 {
        self.bits
    }

    /// `p`, the probability that the user's own bucket, when sampled, reports 1.
    pub fn keep_probability(&self) -> f64 {
        self.own_one.p()
    }

    /// The cells of a report of `item` whose sampled buckets are `buckets` (sorted,
    /// distinct, each below k, as [`DBitFlip::draw_buckets`] gives them): the bits drawn
    /// for that draw. dBitFlipPM's memo keeps `buckets` for a user and draws the bits once
    /// per class of values.
    pub(crate) fn perturb_buckets<R: Rng + ?Sized>(
        &self,
        item: u32,
        buckets: &[u32],
        rng: &mut R,
    ) -> Result<SubsetReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        let subset = buckets
            .iter()
            .map(|&j| {
                let one = if j == item {
                    self.own_one.sample(rng)
                } else {
                    self.other_one.sample(rng)
                };
                2 * j + u32::from(one)
            })
            .collect();
        Ok(SubsetReport { subset })
    }

    /// d distinct buckets drawn uniformly, sorted (Floyd's algorithm, O(d)).
    pub fn draw_buckets<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<u32> {
        let mut buckets = Vec::new();
        floyd_sorted(self.k.get(), self.bits, rng, &mut buckets);
        buckets
    }

    /// The d buckets a user's public randomness names: a uniform draw for a uniform
    /// `public` (a ChaCha stream seeded with it).
    fn public_buckets(&self, public: u64) -> Vec<u32> {
        use rand::SeedableRng;
        self.draw_buckets(&mut rand_chacha::ChaCha8Rng::seed_from_u64(public))
    }

    /// Whether the report sampled `bucket`, and its bit.
    fn bit_of(report: &SubsetReport, bucket: u32) -> Option<bool> {
        let cell = 2 * bucket;
        match report.subset.binary_search(&cell) {
            Ok(_) => Some(false),
            Err(i) => (report.subset.get(i) == Some(&(cell + 1))).then_some(true),
        }
    }
}

eq_by_spec!(DBitFlip);

impl Mechanism for DBitFlip {
    type Report = SubsetReport;
    type Aggregator = OutputCounts<DBitFlip>;

    fn spec(&self) -> Spec {
        Spec::from_parts(self.k, self.eps, FamilyParams::DBitFlip { bits: self.bits })
    }

    fn perturb<R: Rng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
    ) -> Result<SubsetReport, ItemOutOfRange> {
        self.k.check_item(item)?;
        let buckets = self.draw_buckets(rng);
        self.perturb_buckets(item, &buckets, rng)
    }

    fn validate(&self, report: &SubsetReport) -> Result<(), ReportError> {
        let field = "subset";
        if report.subset.len() != self.bits as usize {
            return Err(ReportError::Length {
                field,
                expected: self.bits as usize,
                found: report.subset.len(),
            });
        }
        check_sorted_distinct(field, &report.subset, 2 * self.k.get())?;
        // Sorted and distinct: a bucket named twice is two neighbouring cells.
        match report.subset.windows(2).find(|w| w[0] / 2 == w[1] / 2) {
            Some(w) => Err(ReportError::SameBucket {
                field,
                bucket: w[0] / 2,
            }),
            None => Ok(()),
        }
    }

    /// `ln P[report | x]`: the bucket draw, `q` or `p` for each other bucket's bit 1 or 0,
    /// and `p` or `q` for x's own bucket when it is sampled.
    fn log_likelihood(&self, report: &SubsetReport, item: u32) -> f64 {
        let ones = report.subset.iter().filter(|&&c| c & 1 == 1).count() as f64;
        let zeros = report.subset.len() as f64 - ones;
        let base = self.ln_draw + ones * self.ln_q + zeros * self.ln_p;
        match Self::bit_of(report, item) {
            Some(true) => base + self.ln_p - self.ln_q,
            Some(false) => base + self.ln_q - self.ln_p,
            None => base,
        }
    }

    fn aggregator(&self) -> OutputCounts<DBitFlip> {
        OutputCounts::new(self.clone())
    }
}

impl Support for DBitFlip {
    /// The sampled buckets whose bit is 1.
    #[inline]
    fn for_each_supported(&self, report: &SubsetReport, mut visit: impl FnMut(u32)) {
        for &cell in &report.subset {
            if cell & 1 == 1 {
                visit(cell / 2);
            }
        }
    }

    #[inline]
    fn supports(&self, report: &SubsetReport, item: u32) -> bool {
        report.subset.binary_search(&(2 * item + 1)).is_ok()
    }
}

impl PureProtocol for DBitFlip {
    fn p_star(&self) -> f64 {
        probabilities(self.k, self.eps, self.bits).0
    }
    fn q_star(&self) -> f64 {
        probabilities(self.k, self.eps, self.bits).1
    }
}

impl CountedOutputs for DBitFlip {
    /// One cell per (bucket, bit).
    fn cells(&self) -> usize {
        2 * self.k.as_usize()
    }

    fn cells_per_report(&self) -> (u32, u32) {
        (self.bits, self.bits)
    }

    #[inline]
    fn for_each_cell(&self, report: &SubsetReport, visit: impl FnMut(usize)) {
        report.subset.iter().map(|&c| c as usize).for_each(visit);
    }

    /// A bucket is supported by the reports that sampled it with bit 1.
    fn support_counts(&self, cells: &[u64], _: u64) -> Vec<u64> {
        cells.chunks_exact(2).map(|c| c[1]).collect()
    }

    /// Ding et al.'s estimator (module docs): each bucket from the reports that sampled it.
    fn estimate_from_cells(&self, cells: &[u64], n: u64) -> Result<Vec<f64>, AggregateError> {
        let q = self.other_one.p();
        // p - q = tanh(eps/4), without the cancellation of the difference at small eps.
        let gap = (self.eps.get() / 4.0).tanh();
        if gap == 0.0 {
            let (p, q) = probabilities(self.k, self.eps, self.bits);
            return Err(AggregateError::Uninformative { p, q });
        }
        let scale = self.k.as_f64() / (n as f64 * f64::from(self.bits) * gap);
        Ok(cells
            .chunks_exact(2)
            .map(|c| {
                let (zeros, ones) = (c[0] as f64, c[1] as f64);
                scale * (ones - q * (zeros + ones))
            })
            .collect())
    }
}

impl FamilyMechanism for DBitFlip {
    const RELABELLING_INVARIANT: bool = true;

    const PUBLIC_DRAW: bool = true;

    /// The d buckets are the public part, drawn from `public`; a value's class is the
    /// position of its bucket among them, or d when none holds it (those values' reports
    /// share one law).
    fn memo_class(&self, item: u32, public: u64) -> u32 {
        let buckets = self.public_buckets(public);
        buckets.binary_search(&item).unwrap_or(buckets.len()) as u32
    }

    fn perturb_public<R: Rng + ?Sized>(
        &self,
        item: u32,
        public: u64,
        rng: &mut R,
    ) -> Result<SubsetReport, ItemOutOfRange> {
        self.perturb_buckets(item, &self.public_buckets(public), rng)
    }

    fn check(k: DomainSize, _: Epsilon, bits: u32) -> Result<(), ParamError> {
        check_bits(k, bits)
    }

    fn build(k: DomainSize, eps: Epsilon, bits: u32) -> Result<Self, ParamError> {
        Self::new(k, eps, bits)
    }

    fn probabilities(k: DomainSize, eps: Epsilon, bits: u32) -> Option<(f64, f64)> {
        Some(probabilities(k, eps, bits))
    }

    /// None (every sampled bit 0) to d.
    fn support_size_range(_: DomainSize, bits: u32) -> Option<(u32, u32)> {
        Some((0, bits))
    }

    /// d cells in `0..2k`.
    fn report_limits(k: DomainSize, bits: u32) -> ReportLimits {
        ReportLimits {
            values: k.get().saturating_mul(2),
            entries: bits,
            seeds: 0,
        }
    }

    /// d = 2, 4, 8, ... below k, and k itself (SUE's variance with every bit sent).
    fn alternatives(k: DomainSize, _: Epsilon) -> Vec<u32> {
        let mut out: Vec<u32> = (1..32)
            .map(|i| 1u32 << i)
            .take_while(|&d| d < k.get())
            .collect();
        out.push(k.get());
        out.retain(|&d| d != ONE_BIT);
        out
    }
}

impl AttackSurface for DBitFlip {
    fn guess<R: Rng + ?Sized>(&self, report: &SubsetReport, rng: &mut R) -> u32 {
        support_guess(self, report, rng)
    }

    fn observe_and_guess<R: Rng + ?Sized>(
        &self,
        server: &mut OutputCounts<DBitFlip>,
        report: &SubsetReport,
        _: &mut Vec<u32>,
        rng: &mut R,
    ) -> u32 {
        crate::Aggregator::add(server, report).expect("genuine reports are valid");
        support_guess(self, report, rng)
    }

    /// +1 on a bucket sampled with bit 1, -1 on one sampled with bit 0: the log-likelihood
    /// is `eps/2` times this plus a constant (module docs), so linked fresh reports add up.
    fn add_evidence(&self, report: &SubsetReport, scores: &mut [f64], _: &mut Vec<f64>) {
        for &cell in &report.subset {
            scores[(cell / 2) as usize] += if cell & 1 == 1 { 1.0 } else { -1.0 };
        }
    }

    /// `v1` sampled with bit 1 and `v2` with bit 0, whose ratio is e^eps; with one bit,
    /// where no report samples both, `v1` sampled with bit 1 (ratio e^(eps/2)).
    fn separates(&self, report: &SubsetReport, v1: u32, v2: u32) -> bool {
        let one = Self::bit_of(report, v1) == Some(true);
        if self.bits >= 2 {
            one && Self::bit_of(report, v2) == Some(false)
        } else {
            one
        }
    }

    /// Each fake user samples `min(r, d)` targets with bit 1 (a uniform choice of them
    /// when r > d), and pads with non-target buckets at bit 0.
    fn plan_max_gain(&self, targets: &[u32], _: Clip) -> MaxGain<SubsetReport> {
        MaxGain {
            fixed: None,
            supported: (targets.len() as u32).min(self.bits),
        }
    }

    fn max_gain_report<R: Rng + ?Sized>(
        &self,
        _: &MaxGain<SubsetReport>,
        targets: &[u32],
        rng: &mut R,
    ) -> SubsetReport {
        let d = self.bits as usize;
        let chosen: Vec<u32> = if targets.len() <= d {
            targets.to_vec()
        } else {
            let idx = distinct_outside(targets.len() as u32, d, &[], rng);
            idx.into_iter().map(|i| targets[i as usize]).collect()
        };
        let pad = distinct_outside(self.k.get(), d - chosen.len(), targets, rng);
        let mut subset: Vec<u32> = chosen.into_iter().map(|j| 2 * j + 1).collect();
        subset.extend(pad.into_iter().map(|j| 2 * j));
        subset.sort_unstable();
        SubsetReport { subset }
    }

    fn random_output<R: Rng + ?Sized>(&self, _: Clip, rng: &mut R) -> SubsetReport {
        let buckets = self.draw_buckets(rng);
        SubsetReport {
            subset: buckets
                .into_iter()
                .map(|j| 2 * j + rng.random_range(0..2))
                .collect(),
        }
    }

    /// Every output when the `C(k, d) 2^d` reports fit the audit's budget and
    /// [`EVERY_OUTPUT_CAP`]; beyond it,
    /// buckets 0 and 1 each unsampled, sampled with bit 0 or with bit 1, the other sampled
    /// buckets `2, 3, ...` at bit 0: a report's ratio between two values depends only on
    /// how it treats their buckets, and buckets are treated alike (at most nine outputs).
    fn exact_outputs(
        &self,
        limit: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = SubsetReport>>, TooManyOutputs> {
        let (k, d) = (self.k.get(), self.bits);
        let every = (ln_binomial(u64::from(k), u64::from(d))
            + f64::from(d) * std::f64::consts::LN_2)
            .exp()
            .round();
        // Every output when few (they are held in memory); the nine patterns otherwise.
        if every * f64::from(k) <= limit as f64 && every <= EVERY_OUTPUT_CAP {
            let mut outputs = Vec::new();
            for set in combinations(k, d) {
                for bits in 0u64..1 << d {
                    let subset = set
                        .iter()
                        .enumerate()
                        .map(|(i, &j)| 2 * j + (bits >> i & 1) as u32)
                        .collect();
                    outputs.push(SubsetReport { subset });
                }
            }
            return Ok(ExactOutputs {
                outputs: outputs.into_iter(),
                coverage: Coverage::Every,
            });
        }
        let states = [None, Some(0u32), Some(1u32)];
        let mut outputs = Vec::new();
        for s0 in states {
            for s1 in states {
                let own: Vec<u32> = [(0u32, s0), (1, s1)]
                    .into_iter()
                    .filter_map(|(j, s)| s.map(|bit| 2 * j + bit))
                    .collect();
                match d.checked_sub(own.len() as u32) {
                    Some(rest) if rest <= k - 2 => {
                        let mut subset = own;
                        subset.extend((2..2 + rest).map(|j| 2 * j));
                        outputs.push(SubsetReport { subset });
                    }
                    _ => {}
                }
            }
        }
        Ok(ExactOutputs {
            outputs: outputs.into_iter(),
            coverage: Coverage::Symmetry,
        })
    }
}

/// The most outputs [`AttackSurface::exact_outputs`] lists one by one (they are held in
/// memory, about 100 bytes each).
pub const EVERY_OUTPUT_CAP: f64 = 65_536.0;

/// The sets of `d` buckets of `0..k`, each sorted, in lexicographic order (`C(k, d)` of
/// them: callers bound the count first).
fn combinations(k: u32, d: u32) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let mut set: Vec<u32> = (0..d).collect();
    loop {
        out.push(set.clone());
        // The rightmost entry that can still move right, then reset the ones after it.
        let Some(i) = (0..d as usize).rev().find(|&i| set[i] < k - d + i as u32) else {
            return out;
        };
        set[i] += 1;
        for j in i + 1..d as usize {
            set[j] = set[j - 1] + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulation::{Role, stream_rng};

    fn dbf(k: u32, eps: f64, d: u32) -> DBitFlip {
        DBitFlip::new(DomainSize::new(k).unwrap(), Epsilon::new(eps).unwrap(), d).unwrap()
    }

    #[test]
    fn reports_hold_d_distinct_buckets_and_validate() {
        let m = dbf(20, 1.0, 5);
        let mut rng = stream_rng(3, 0, Role::Genuine, 0);
        for x in 0..20 {
            let r = m.perturb(x, &mut rng).unwrap();
            assert_eq!(r.subset.len(), 5);
            assert_eq!(m.validate(&r), Ok(()));
        }
        let both = SubsetReport {
            subset: vec![0, 4, 5, 8, 10],
        };
        assert_eq!(
            m.validate(&both),
            Err(ReportError::SameBucket {
                field: "subset",
                bucket: 2
            })
        );
        assert!(matches!(
            m.validate(&SubsetReport {
                subset: vec![0, 2, 4, 6, 40]
            }),
            Err(ReportError::OutOfRange { .. })
        ));
        assert!(matches!(
            m.validate(&SubsetReport { subset: vec![0] }),
            Err(ReportError::Length { .. })
        ));
    }

    #[test]
    fn likelihood_ratios_are_e_to_the_half_budget_per_bucket_state() {
        let m = dbf(6, 2.0, 3);
        let r = SubsetReport {
            subset: vec![1, 4, 9], // bucket 0 bit 1, bucket 2 bit 0, bucket 4 bit 1
        };
        let unsampled = m.log_likelihood(&r, 1);
        assert!((m.log_likelihood(&r, 0) - unsampled - 1.0).abs() < 1e-12);
        assert!((m.log_likelihood(&r, 2) - unsampled + 1.0).abs() < 1e-12);
        assert_eq!(m.log_likelihood(&r, 3), unsampled);
        // The probabilities over every report of one value add up to 1 (k = 4, d = 2:
        // C(4, 2) bucket pairs times 4 bit patterns).
        let m = dbf(4, 1.3, 2);
        for x in 0..4 {
            let mut total = 0.0;
            for a in 0..4u32 {
                for b in a + 1..4 {
                    for bits in 0..4u32 {
                        let r = SubsetReport {
                            subset: vec![2 * a + (bits & 1), 2 * b + (bits >> 1)],
                        };
                        total += m.log_likelihood(&r, x).exp();
                    }
                }
            }
            assert!((total - 1.0).abs() < 1e-12, "x = {x}: {total}");
        }
    }

    #[test]
    fn combinations_are_every_sorted_set_once() {
        assert_eq!(combinations(4, 2).len(), 6);
        assert_eq!(combinations(5, 5), vec![vec![0, 1, 2, 3, 4]]);
        assert_eq!(combinations(3, 1), vec![vec![0], vec![1], vec![2]]);
        let all = combinations(7, 3);
        assert_eq!(all.len(), 35);
        assert!(
            all.iter()
                .all(|s| s.windows(2).all(|w| w[0] < w[1]) && s[2] < 7)
        );
    }

    #[test]
    fn alternatives_are_powers_of_two_then_k() {
        let k = DomainSize::new(20).unwrap();
        let eps = Epsilon::new(1.0).unwrap();
        assert_eq!(DBitFlip::alternatives(k, eps), vec![2, 4, 8, 16, 20]);
        for d in DBitFlip::alternatives(k, eps) {
            assert_eq!(DBitFlip::check(k, eps, d), Ok(()));
        }
    }
}
