//! What the attacks of `ldp-attack` need from a family, declared by each family beside its
//! mechanism: how one report reads to a reconstruction attacker, the reports a poisoning
//! attacker forges, and the outputs a privacy auditor checks. `ldp-attack` runs the attacks
//! generically over this trait, and `ldp-audit` its exact audit.
//!
//! Most families' reports support a set of items ([`Support`]); for them the helpers at
//! the end of this module are the whole implementation.

use std::cell::RefCell;
use std::fmt::Debug;

use rand::{Rng, RngExt};

use crate::aggregate::SupportCounts;
use crate::exact_outputs::{ExactOutputs, TooManyOutputs};
use crate::mechanism::{Mechanism, PureProtocol, Support};
use crate::server::Clip;

/// A prepared maximal gain attack: what every fake report holds, found once.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxGain<R> {
    /// The report every fake user sends, where the best report is one fixed report (UE,
    /// THE, LH, SHE); `None` where each fake user draws its own (GRR, SS).
    pub fixed: Option<R>,
    /// Targets each fake report supports. The closed forms of `ldp-analytic` assume the
    /// family's maximum (one for GRR, min(r, omega) for SS, all r for the others); an LH
    /// attacker whose seed search fell short supports fewer.
    pub supported: u32,
}

/// Which fake reports a poisoning attacker sends (Cao, Jia and Gong 2021): `ldp-attack`
/// runs each, `ldp-analytic` has the closed form of the first.
///
/// ```
/// use ldp_core::PoisonKind;
/// assert_eq!("RIA".parse::<PoisonKind>()?, PoisonKind::Ria);
/// assert_eq!(PoisonKind::Mga.to_string(), "mga");
/// # Ok::<(), ldp_core::UnknownName>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum PoisonKind {
    /// Maximal gain attack: the report that supports as many targets as possible.
    Mga,
    /// Random item attack: a uniformly chosen target, perturbed honestly.
    Ria,
    /// Random output attack: a uniformly random report.
    Roa,
}

impl PoisonKind {
    /// The three attacks.
    pub const ALL: [PoisonKind; 3] = [PoisonKind::Mga, PoisonKind::Ria, PoisonKind::Roa];

    /// Short name: mga, ria, roa.
    pub fn name(self) -> &'static str {
        match self {
            PoisonKind::Mga => "mga",
            PoisonKind::Ria => "ria",
            PoisonKind::Roa => "roa",
        }
    }
}

crate::named_knob!(PoisonKind, "poisoning attack");

/// A family's reports as attackers see and forge them.
pub trait AttackSurface: Mechanism {
    /// The paper's reconstruction attack on one report: a uniform guess among the
    /// supported items (uniform over the domain when none is); SHE: the largest coordinate.
    fn guess<R: Rng + ?Sized>(&self, report: &Self::Report, rng: &mut R) -> u32;

    /// Adds a genuine report to `server` and returns the attack's guess, finding the
    /// report's support only once (for LH that is k hashes). `scratch` is reusable memory.
    fn observe_and_guess<R: Rng + ?Sized>(
        &self,
        server: &mut Self::Aggregator,
        report: &Self::Report,
        scratch: &mut Vec<u32>,
        rng: &mut R,
    ) -> u32;

    /// One genuine user end to end: perturbs `item` into `report` (a slot the caller
    /// keeps from user to user, so that the report's memory is reused;
    /// [`Mechanism::perturb_reusing`]), adds it to `server` and returns the attack's guess.
    /// `scratch` is reusable memory.
    #[inline]
    fn genuine_user<R1: Rng + ?Sized, R2: Rng + ?Sized>(
        &self,
        item: u32,
        server: &mut Self::Aggregator,
        rng: &mut R1,
        attacker: &mut R2,
        report: &mut Option<Self::Report>,
        scratch: &mut Vec<u32>,
    ) -> u32 {
        let report = self
            .perturb_reusing(item, rng, report)
            .expect("population items are in the domain");
        self.observe_and_guess(server, report, scratch, attacker)
    }

    /// The most powerful single-report test the report's shape allows between the inputs
    /// `v1` and `v2` without knowing the mechanism's parameters: true when the report
    /// supports `v1` and not `v2` (SHE: coordinate `v1` at least 1 and coordinate `v2` at
    /// most 0). For the pure families the likelihood ratio P[event | v1] / P[event | v2]
    /// is the mechanism's worst one, so a privacy audit counting this event meets its
    /// budget (`ldp-audit`).
    fn separates(&self, report: &Self::Report, v1: u32, v2: u32) -> bool;

    /// How one report moves an attacker's per-item scores when it links t reports of one
    /// value: +1 on each supported item (the joint likelihood of the pure families is
    /// increasing in these counts), the log-likelihood for SHE.
    fn add_evidence(&self, report: &Self::Report, scores: &mut [f64], scratch: &mut Vec<f64>);

    /// Prepares the maximal gain attack on `targets` (distinct, sorted, in `0..k`) against
    /// a server clipping as `clip` says (only SHE's reports depend on it).
    fn plan_max_gain(&self, targets: &[u32], clip: Clip) -> MaxGain<Self::Report>;

    /// One fake report of a prepared maximal gain attack.
    fn max_gain_report<R: Rng + ?Sized>(
        &self,
        plan: &MaxGain<Self::Report>,
        targets: &[u32],
        rng: &mut R,
    ) -> Self::Report {
        let _ = (targets, rng);
        plan.fixed
            .clone()
            .expect("families that draw per fake user override max_gain_report")
    }

    /// A fake report of the random output attack: uniform over the output space (SHE:
    /// uniform in `[-c, c]^k` for the server's clipping bound c).
    fn random_output<R: Rng + ?Sized>(&self, clip: Clip, rng: &mut R) -> Self::Report;

    /// The outputs at which an exact privacy audit evaluates the likelihood ratio over
    /// every input pair, and why their worst ratio is the mechanism's ([`Coverage`]): every
    /// output where the budget allows, otherwise the ones a symmetry, a witness or the hash
    /// seeds' structure shows to be enough. [`TooManyOutputs`] when evaluating them takes
    /// more than `limit` likelihoods (outputs times k); a family whose outputs are a
    /// handful at any k (symmetry patterns, a witness) is never refused. `ldp-audit`'s
    /// exact audit calls this for every family of the registry.
    ///
    /// [`Coverage`]: crate::exact_outputs::Coverage
    fn exact_outputs(
        &self,
        limit: u64,
    ) -> Result<ExactOutputs<impl Iterator<Item = Self::Report>>, TooManyOutputs>;
}

/// The index of the largest score, ties broken uniformly at random (reservoir sampling:
/// one draw per tie met). `-inf` scores never win; 0 when every score is `-inf`. The
/// guess of the attacks that score every item (MAP, linked reports) and of the audits
/// that replay them.
///
/// ```
/// use ldp_core::attack_surface::argmax_uniform;
/// use ldp_core::simulation::{Role, stream_rng};
/// let mut rng = stream_rng(1, 0, Role::Attacker, 0);
/// assert_eq!(argmax_uniform([0.1, 0.7, f64::NEG_INFINITY, 0.2], &mut rng), 1);
/// let tie = argmax_uniform([1.0, 0.0, 1.0], &mut rng);
/// assert!(tie == 0 || tie == 2);
/// ```
pub fn argmax_uniform<R: Rng + ?Sized>(scores: impl IntoIterator<Item = f64>, rng: &mut R) -> u32 {
    let mut best = f64::NEG_INFINITY;
    let mut chosen = 0u32;
    let mut ties = 0u32;
    for (x, score) in scores.into_iter().enumerate() {
        if score == f64::NEG_INFINITY {
            continue;
        }
        if score > best {
            (best, chosen, ties) = (score, x as u32, 1);
        } else if score == best {
            ties += 1;
            if rng.random_range(0..ties) == 0 {
                chosen = x as u32;
            }
        }
    }
    chosen
}

/// Uniform choice in `items`, or over `0..k` when it is empty.
#[inline]
pub(crate) fn uniform_pick<R: Rng + ?Sized>(items: &[u32], k: u32, rng: &mut R) -> u32 {
    if items.is_empty() {
        rng.random_range(0..k)
    } else {
        items[rng.random_range(0..items.len())]
    }
}

/// Below this mean support a guess by rejection costs more tests than the scan it saves
/// (a test is one hash, several times a scanned item's cost). A report supporting far
/// fewer items than the mean (a forged one, say) costs at most k/4 tests more than the
/// scan.
const REJECTION_MIN_SUPPORT: f64 = 16.0;

/// The paper's attack on a family whose reports support items: uniform over the support
/// (over `0..k` when it is empty).
///
/// Families that list their support by scanning `0..k` ([`Support::scanned_support_mean`]
/// at least [`REJECTION_MIN_SUPPORT`]) are guessed by rejection first: items drawn
/// uniformly from `0..k` until one is supported, at most `k / 4` of them (about `k / 16`
/// are needed on average), then the scan. A draw that succeeds is uniform over the
/// support, and so is the scan's pick after failures, whatever failed: the guess has the
/// same law either way, only the draws from `rng` differ.
pub(crate) fn support_guess<M: Support, R: Rng + ?Sized>(
    m: &M,
    report: &M::Report,
    rng: &mut R,
) -> u32 {
    let k = m.domain_size().get();
    if m.scanned_support_mean()
        .is_some_and(|s| s >= REJECTION_MIN_SUPPORT)
    {
        for _ in 0..k / 4 {
            let v = rng.random_range(0..k);
            if m.supports(report, v) {
                return v;
            }
        }
    }
    listed_support_guess(m, report, rng)
}

/// Uniform over the listed support (over `0..k` when it is empty).
fn listed_support_guess<M: Support, R: Rng + ?Sized>(
    m: &M,
    report: &M::Report,
    rng: &mut R,
) -> u32 {
    thread_local! {
        // The report's supported items, in memory reused from guess to guess: attack and
        // audit loops guess once per report, and a fresh, growing Vec each time made
        // threads queue on the allocator (glibc's realloc takes its arena's lock), so
        // that a two-thread audit ran slower than one thread. Borrowed only while a
        // report's support is listed, which must not itself guess (nor block on rayon,
        // which could run another guess on this thread).
        static SUPPORT: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    }
    SUPPORT.with_borrow_mut(|items| {
        items.clear();
        m.for_each_supported(report, |i| items.push(i));
        uniform_pick(items, m.domain_size().get(), rng)
    })
}

/// Adds the report and guesses from its support, computed once.
pub(crate) fn support_observe_and_guess<M, R>(
    m: &M,
    server: &mut SupportCounts<M>,
    report: &M::Report,
    scratch: &mut Vec<u32>,
    rng: &mut R,
) -> u32
where
    M: PureProtocol<Aggregator = SupportCounts<M>>,
    R: Rng + ?Sized,
{
    scratch.clear();
    server
        .add_with(report, |i| scratch.push(i))
        .expect("genuine reports are valid and fewer than 2^64");
    uniform_pick(scratch, m.domain_size().get(), rng)
}

/// +1 on every supported item.
pub(crate) fn count_support<M: Support>(m: &M, report: &M::Report, scores: &mut [f64]) {
    m.for_each_supported(report, |i| scores[i as usize] += 1.0);
}

/// `m` distinct items drawn uniformly from `0..n` without those in `exclude`, unsorted.
pub(crate) fn distinct_outside<R: Rng + ?Sized>(
    n: u32,
    m: usize,
    exclude: &[u32],
    rng: &mut R,
) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(m);
    while out.len() < m {
        let v = rng.random_range(0..n);
        if !exclude.contains(&v) && !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The search for a fake report of a seeded family (local hashing, and any family whose
/// report is a public seed and a value): the seed under which the most targets share one
/// value, found once per attack. Every fake user then sends the same report, which changes
/// nothing in expectation (each fake report's effect on the estimate is fixed by the
/// targets it supports).
///
/// Seeds `0, 1, 2, ...` below `seeds` are tried in order; the search stops at the first
/// seed giving all targets one value, and otherwise keeps the earliest of the seeds that
/// give the most targets one value, and the least such value. There are `targets` of
/// them; `hash(first, i, out)` writes the values (below `range`) of target i under the
/// seeds `first, first + 1, ...` into `out` (at most [`SEED_LANES`] of them), so that
/// callers prepare per-target work once and hash several seeds in lanes (local hashing:
/// [`crate::families::local_hash::TargetHasher`]). With the `parallel` feature it runs on
/// every core in fixed chunks; the result is the same for any thread count, and without
/// the feature. Returns `(seed, value, supported)`.
pub fn best_seed(
    seeds: u64,
    targets: usize,
    range: u32,
    hash: impl Fn(u64, usize, &mut [u32]) + Sync,
) -> (u64, u32, u32) {
    /// Seeds per chunk, and chunks per wave (between checks for a full collision).
    const CHUNK: u64 = 1 << 16;
    const WAVE: u64 = 64 * CHUNK;
    let r = targets as u32;
    if r == 0 {
        return (0, 0, 0);
    }
    // (supported, seed, value), the earliest seed winning ties.
    let mut best = (0u32, 0u64, 0u32);
    let mut start = 0u64;
    while start < seeds {
        let wave_end = seeds.min(start + WAVE);
        let chunks: Vec<u64> = (start..wave_end).step_by(CHUNK as usize).collect();
        let wave = crate::parallel::map(chunks.len(), |c| {
            let from = chunks[c];
            best_in(&hash, r, range, from, (from + CHUNK).min(wave_end))
        });
        for candidate in wave {
            if candidate.0 > best.0 {
                best = candidate;
            }
        }
        if best.0 == r {
            break;
        }
        start = wave_end;
    }
    let (supported, seed, value) = best;
    (seed, value, supported)
}

/// Ranges up to this are counted in an array (`O(r)` per seed); wider ones are sorted.
const COUNTED_RANGE: u32 = 1 << 20;

/// Seeds hashed together per target by [`best_seed`]'s callback.
pub const SEED_LANES: usize = 16;

/// The earliest best seed of `from..to` for `r` targets.
fn best_in(
    hash: &impl Fn(u64, usize, &mut [u32]),
    r: u32,
    range: u32,
    from: u64,
    to: u64,
) -> (u32, u64, u32) {
    let mut best = (0u32, 0u64, 0u32);
    let mut lanes = vec![[0u32; SEED_LANES]; r as usize];
    let mut values = vec![0u32; r as usize];
    let mut counts = if range <= COUNTED_RANGE {
        vec![0u32; range as usize]
    } else {
        Vec::new()
    };
    let mut first = from;
    while first < to {
        let width = (to - first).min(SEED_LANES as u64) as usize;
        for (i, lane) in lanes.iter_mut().enumerate() {
            hash(first, i, &mut lane[..width]);
        }
        for l in 0..width {
            for (v, lane) in values.iter_mut().zip(&lanes) {
                *v = lane[l];
            }
            let (count, value) = if counts.is_empty() {
                mode_by_sorting(&mut values)
            } else {
                mode_by_counting(&values, &mut counts)
            };
            if count > best.0 {
                best = (count, first + l as u64, value);
                if count == r {
                    return best;
                }
            }
        }
        first += width as u64;
    }
    best
}

/// The most frequent value and its count, the least value among ties; `counts` (one zero
/// per value in range) is left zeroed.
fn mode_by_counting(values: &[u32], counts: &mut [u32]) -> (u32, u32) {
    for &v in values {
        counts[v as usize] += 1;
    }
    // Count high, least value winning ties: one branch-free maximum.
    let key = |v: u32| (u64::from(counts[v as usize]) << 32) | u64::from(u32::MAX - v);
    let best = values.iter().map(|&v| key(v)).max().unwrap_or(0);
    for &v in values {
        counts[v as usize] = 0;
    }
    ((best >> 32) as u32, u32::MAX - best as u32)
}

/// [`mode_by_counting`] for any values: sorted, the first longest run.
fn mode_by_sorting(values: &mut [u32]) -> (u32, u32) {
    values.sort_unstable();
    let mut best = (0u32, values[0]);
    let mut run = 0u32;
    for i in 0..values.len() {
        run = if i > 0 && values[i] == values[i - 1] {
            run + 1
        } else {
            1
        };
        if run > best.0 {
            best = (run, values[i]);
        }
    }
    best
}

/// Implements the support-based methods of [`AttackSurface`] (`guess`,
/// `observe_and_guess`, `add_evidence`) for a family whose reports support items and
/// whose aggregator is [`SupportCounts`], or with `(output_counts)` one whose aggregator
/// counts outputs ([`crate::output_counts::OutputCounts`]: the server only counts the
/// report's cells, and the guess finds the support on its own, by rejection where
/// [`Support::scanned_support_mean`] allows).
macro_rules! support_attack_surface {
    (output_counts) => {
        $crate::attack_surface::support_attack_surface!(@guess_and_evidence);

        fn observe_and_guess<R: rand::Rng + ?Sized>(
            &self,
            server: &mut Self::Aggregator,
            report: &Self::Report,
            _: &mut Vec<u32>,
            rng: &mut R,
        ) -> u32 {
            $crate::Aggregator::add(server, report).expect("genuine reports are valid");
            $crate::attack_surface::support_guess(self, report, rng)
        }
    };
    () => {
        $crate::attack_surface::support_attack_surface!(@guess_and_evidence);

        fn observe_and_guess<R: rand::Rng + ?Sized>(
            &self,
            server: &mut Self::Aggregator,
            report: &Self::Report,
            scratch: &mut Vec<u32>,
            rng: &mut R,
        ) -> u32 {
            $crate::attack_surface::support_observe_and_guess(self, server, report, scratch, rng)
        }
    };
    (@guess_and_evidence) => {
        fn guess<R: rand::Rng + ?Sized>(&self, report: &Self::Report, rng: &mut R) -> u32 {
            $crate::attack_surface::support_guess(self, report, rng)
        }

        fn add_evidence(&self, report: &Self::Report, scores: &mut [f64], _: &mut Vec<f64>) {
            $crate::attack_surface::count_support(self, report, scores);
        }

        fn separates(&self, report: &Self::Report, v1: u32, v2: u32) -> bool {
            $crate::Support::supports(self, report, v1)
                && !$crate::Support::supports(self, report, v2)
        }
    };
}
pub(crate) use support_attack_surface;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::local_hash::{TargetHasher, hash_item};

    fn lh_search(g: u32, targets: &[u32]) -> (u32, u32, u32) {
        let (seed, y, supported) = TargetHasher::new(targets, g).best_seed(1 << 24);
        (seed as u32, y, supported)
    }

    #[test]
    fn a_full_collision_is_found_when_one_is_likely() {
        // g^(r-1) = 56^3 = 175,616 tries expected: far inside the budget.
        let targets = [20, 21, 22, 23];
        let (seed, y, supported) = lh_search(56, &targets);
        assert_eq!(supported, 4);
        assert!(targets.iter().all(|&t| hash_item(t, seed, 56) == y));
        // Deterministic: the earliest such seed.
        assert!((0..seed).all(|s| {
            let h = hash_item(20, s, 56);
            !targets.iter().all(|&t| hash_item(t, s, 56) == h)
        }));
    }

    #[test]
    fn beyond_the_budget_the_best_partial_collision_is_kept() {
        // g^9 = 1e18 tries would be needed for all ten targets at g = 100.
        let targets: Vec<u32> = (40..50).collect();
        let (seed, y, supported) = lh_search(100, &targets);
        assert!((2..10).contains(&supported), "{supported}");
        let hits = targets
            .iter()
            .filter(|&&t| hash_item(t, seed, 100) == y)
            .count();
        assert_eq!(hits as u32, supported);
    }

    /// The search in lanes and chunks equals the plainest scan: every seed in order, every
    /// target hashed by `hash_item`, the first strictly better seed kept, the least value
    /// among a seed's most shared ones.
    #[test]
    fn the_search_equals_a_plain_scan() {
        let plain = |g: u32, targets: &[u32], seeds: u32| {
            let mut best = (0u32, 0u32, 0u32);
            for seed in 0..seeds {
                let mut counts = std::collections::BTreeMap::new();
                for &t in targets {
                    *counts.entry(hash_item(t, seed, g)).or_insert(0u32) += 1;
                }
                // Ascending values: the first of the most shared is the least.
                for (&y, &n) in &counts {
                    if n > best.2 {
                        best = (seed, y, n);
                    }
                }
                if best.2 == targets.len() as u32 {
                    break;
                }
            }
            best
        };
        // Widths not a multiple of the lanes, items of 1 to 10 digits, g from 2 to wide.
        let targets: Vec<u32> = vec![5, 77, 123, 4096, 99_999, 1_234_567, 4_000_000_000, 8, 31];
        for (g, seeds) in [
            (2, 37),
            (3, 1000),
            (7, 20_001),
            (1000, 5000),
            (1 << 21, 300),
        ] {
            for r in [1, 2, 4, targets.len()] {
                let hasher = TargetHasher::new(&targets[..r], g);
                let (seed, y, n) = hasher.best_seed(u64::from(seeds));
                assert_eq!(
                    (seed as u32, y, n),
                    plain(g, &targets[..r], seeds),
                    "g {g} r {r}"
                );
            }
        }
    }

    #[test]
    fn counting_and_sorting_find_the_same_mode() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(24);
        let mut counts = vec![0u32; 16];
        for _ in 0..2000 {
            let len = rng.random_range(1..40);
            let mut values: Vec<u32> = (0..len).map(|_| rng.random_range(0..16)).collect();
            let counted = mode_by_counting(&values, &mut counts);
            assert!(counts.iter().all(|&c| c == 0));
            assert_eq!(counted, mode_by_sorting(&mut values));
        }
    }

    #[test]
    fn one_target_needs_no_search() {
        let (seed, y, supported) = lh_search(7, &[3]);
        assert_eq!((seed, supported), (0, 1));
        assert_eq!(y, hash_item(3, 0, 7));
    }
}
