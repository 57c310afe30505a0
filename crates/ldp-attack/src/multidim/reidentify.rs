//! Re-identification across surveys (Arcolezi, Gambs, Couchot and Palamidessi, PVLDB
//! 16(5), 2023): the same users answer several SMP surveys, each report one attribute
//! named; the attacker reconstructs each reported value, joins a user's reports into a
//! profile, and matches the profile against background knowledge.
//!
//! Survey `s` covers some attributes; each user samples one of them uniformly, among
//! those not yet reported ([`Repetition::Without`]) or among all of them
//! ([`Repetition::With`], where a repeated attribute replays the memoized report and
//! adds nothing). After each survey the attacker ranks every record by how many profile
//! values it shares and scores RID-ACC@k: the probability that the true record is among
//! the first k, ties broken uniformly ([`MatchIndex`]); the baseline is `k / n`.

use ldp_core::multidim::{Multidim, Solution};
use ldp_core::simulation::{Role, USERS_PER_STREAM, stream_rng};
use ldp_core::{AttackSurface, parallel};

use rand::{Rng, RngExt};

use super::matching::{MatchError, MatchIndex};

/// How a user chooses among a survey's attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repetition {
    /// Uniformly among the survey's attributes not yet reported (uniformly among all of
    /// them once every one has been).
    Without,
    /// Uniformly among all of the survey's attributes; a repeated one replays its memoized
    /// report.
    With,
}

/// The attributes of each survey.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurveyPlan {
    d: usize,
    surveys: Vec<Vec<usize>>,
    repetition: Repetition,
}

/// What is wrong with a re-identification run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReidentifyError {
    /// A survey without attributes, or one naming an attribute that does not exist.
    #[error("survey {survey}: {reason}")]
    Survey {
        /// The survey.
        survey: usize,
        /// Why.
        reason: String,
    },
    /// A plan for another number of attributes than the client's.
    #[error("the survey plan is for {plan} attributes, the client has {client}")]
    PlanWidth {
        /// The plan's.
        plan: usize,
        /// The client's.
        client: usize,
    },
    /// Re-identification joins SMP reports (which name their attribute).
    #[error("re-identification joins SMP reports; the client is {0}")]
    NotSmp(&'static str),
    /// The background's attributes are not the client's.
    #[error("the background's domain sizes {found:?} are not the client's {expected:?}")]
    Width {
        /// The client's domain sizes.
        expected: Vec<u32>,
        /// The background's.
        found: Vec<u32>,
    },
    /// The background table was refused.
    #[error(transparent)]
    Match(#[from] MatchError),
}

impl SurveyPlan {
    /// `surveys[s]` lists the attributes (indices below `d`) survey `s` collects.
    pub fn new(
        d: usize,
        surveys: Vec<Vec<usize>>,
        repetition: Repetition,
    ) -> Result<Self, ReidentifyError> {
        for (s, attributes) in surveys.iter().enumerate() {
            let bad = |reason: String| ReidentifyError::Survey { survey: s, reason };
            if attributes.is_empty() {
                return Err(bad("it collects no attribute".into()));
            }
            if let Some(&j) = attributes.iter().find(|&&j| j >= d) {
                return Err(bad(format!("attribute {j} does not exist (d = {d})")));
            }
            let mut sorted = attributes.clone();
            sorted.sort_unstable();
            if sorted.windows(2).any(|w| w[0] == w[1]) {
                return Err(bad("it names an attribute twice".into()));
            }
        }
        Ok(Self {
            d,
            surveys,
            repetition,
        })
    }

    /// `count` surveys as the anchors draw them: each collects between `round(d / 2)` and
    /// `d - 1` attributes (uniformly many, at least one), chosen uniformly.
    pub fn random<R: Rng + ?Sized>(
        d: usize,
        count: usize,
        repetition: Repetition,
        rng: &mut R,
    ) -> Result<Self, ReidentifyError> {
        let lo = ((d as f64) / 2.0).round().max(1.0) as usize;
        let hi = d.saturating_sub(1).max(lo);
        let surveys = (0..count)
            .map(|_| {
                let size = rng.random_range(lo..=hi);
                let mut all: Vec<usize> = (0..d).collect();
                // A partial Fisher–Yates shuffle: the first `size` are a uniform subset.
                for i in 0..size {
                    let j = rng.random_range(i..d);
                    all.swap(i, j);
                }
                all.truncate(size);
                all.sort_unstable();
                all
            })
            .collect();
        Self::new(d, surveys, repetition)
    }

    /// The attributes of each survey.
    pub fn surveys(&self) -> &[Vec<usize>] {
        &self.surveys
    }
}

/// After which surveys the attacker matches the profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scoring {
    /// After every survey.
    EverySurvey,
    /// After the last only (a profile of m values costs up to `2^m` lookups: the last
    /// survey alone costs about half of all of them).
    LastSurvey,
}

/// RID-ACC after the surveys scored.
#[derive(Debug, Clone, PartialEq)]
pub struct Reidentification {
    /// The numbers of surveys after which the profiles were matched, increasing.
    pub after: Vec<usize>,
    /// `accuracy[i][k - 1]`: the mean over users of RID-ACC@k after `after[i]` surveys,
    /// for k = 1..=`top`.
    pub accuracy: Vec<Vec<f64>>,
    /// `profiled[i]`: the fraction of users every value of whose profile is right after
    /// `after[i]` surveys (`ldp_analytic::multidim::Collection::profile`'s `all_correct`).
    pub profiled: Vec<f64>,
    /// The users (and records).
    pub users: usize,
}

impl Reidentification {
    /// RID-ACC@k of a uniform guess of k distinct records: `k / n`.
    pub fn baseline(&self, k: usize) -> f64 {
        k as f64 / self.users as f64
    }
}

/// Runs the surveys of `plan` on every record of `index` (each record is a user, and the
/// background holds them all), reporting with the SMP client `smp`'s per-attribute
/// mechanisms at its full budget, and scores RID-ACC@1..=`top` after the surveys
/// `scoring` names. Seeded: the same `seed` gives the same result on any number of
/// threads, and for either scoring.
pub fn reidentify<M: AttackSurface>(
    smp: &Multidim<M>,
    plan: &SurveyPlan,
    index: &MatchIndex<'_>,
    top: usize,
    scoring: Scoring,
    seed: u64,
) -> Result<Reidentification, ReidentifyError> {
    if smp.solution() != Solution::Smp {
        return Err(ReidentifyError::NotSmp(smp.solution().label()));
    }
    let d = smp.dimensions();
    if plan.d != d {
        return Err(ReidentifyError::PlanWidth {
            plan: plan.d,
            client: d,
        });
    }
    let n = index.len();
    if index.domains() != smp.domains() {
        return Err(ReidentifyError::Width {
            expected: smp.domains().iter().map(|k| k.get()).collect(),
            found: index.domains().iter().map(|k| k.get()).collect(),
        });
    }
    let surveys = plan.surveys.len();
    let after: Vec<usize> = match scoring {
        Scoring::EverySurvey => (1..=surveys).collect(),
        Scoring::LastSurvey => vec![surveys],
    };
    let sums = parallel::map(n.div_ceil(USERS_PER_STREAM), |batch| {
        let mut rng = stream_rng(seed, 0, Role::Genuine, batch as u64);
        let mut sums = vec![vec![0.0; top]; after.len()];
        let mut profiled = vec![0u64; after.len()];
        let mut matcher = index.matcher();
        let mut fresh: Vec<usize> = Vec::new();
        let users = batch * USERS_PER_STREAM..((batch + 1) * USERS_PER_STREAM).min(n);
        for user in users {
            let items = index.row(user);
            let mut profile: Vec<Option<u32>> = vec![None; d];
            for (s, attributes) in plan.surveys.iter().enumerate() {
                fresh.clear();
                fresh.extend(attributes.iter().copied().filter(|&j| profile[j].is_none()));
                let pool = match plan.repetition {
                    Repetition::Without if !fresh.is_empty() => &fresh,
                    _ => attributes,
                };
                let j = pool[rng.random_range(0..pool.len())];
                // A repeated attribute replays its memoized report: nothing new.
                if profile[j].is_none() {
                    let m = &smp.attributes()[j];
                    let report = m
                        .perturb(items[j], &mut rng)
                        .expect("the index checked every code against its domain, the client's");
                    profile[j] = Some(m.guess(&report, &mut rng));
                }
                // The scored surveys are increasing: a search finds this one's row.
                if let Ok(row) = after.binary_search(&(s + 1)) {
                    let right = profile
                        .iter()
                        .zip(items)
                        .all(|(guess, x)| guess.is_none_or(|v| v == *x));
                    profiled[row] += u64::from(right);
                    // Beyond `top` records above it, every RID-ACC@k scored is zero.
                    if let Some(rank) = matcher.rank_within(&profile, user, top as u64)? {
                        for (k, sum) in sums[row].iter_mut().enumerate() {
                            *sum += rank.top(k as u64 + 1);
                        }
                    }
                }
            }
        }
        Ok((sums, profiled))
    })
    .into_iter()
    .collect::<Result<Vec<_>, ReidentifyError>>()?;
    let mut accuracy = vec![vec![0.0; top]; after.len()];
    let mut profiled = vec![0u64; after.len()];
    for (batch, right) in sums {
        for (total, part) in profiled.iter_mut().zip(right) {
            *total += part;
        }
        for (total, part) in accuracy.iter_mut().zip(batch) {
            for (t, p) in total.iter_mut().zip(part) {
                *t += p;
            }
        }
    }
    for row in &mut accuracy {
        for v in row.iter_mut() {
            *v /= n.max(1) as f64;
        }
    }
    Ok(Reidentification {
        after,
        accuracy,
        profiled: profiled
            .into_iter()
            .map(|c| c as f64 / n.max(1) as f64)
            .collect(),
        users: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::{DomainSize, Epsilon, Grr};

    fn table(n: usize, ks: &[u32], seed: u64) -> Vec<u32> {
        let mut rng = stream_rng(seed, 0, Role::Genuine, 0);
        (0..n * ks.len())
            .map(|i| {
                let k = ks[i % ks.len()];
                // Skewed: item 0 half the time, as real attributes are.
                if rng.random_bool(0.5) {
                    0
                } else {
                    rng.random_range(0..k)
                }
            })
            .collect()
    }

    /// Truthful reports (GRR at eps = 60) of every attribute: the profile is the record,
    /// and RID-ACC@1 is the mean of 1 / (records identical to one's own).
    #[test]
    fn truthful_full_profiles_match_the_direct_count() {
        let ks = [3u32, 4, 2, 5];
        let domains: Vec<DomainSize> = ks.iter().map(|&k| DomainSize::new(k).unwrap()).collect();
        let rows = table(500, &ks, 1);
        let index = MatchIndex::new(&rows, &domains, vec![true; 4]).unwrap();
        let smp = Multidim::new(
            Solution::Smp,
            Epsilon::new(60.0).unwrap(),
            &domains,
            Grr::new,
        )
        .unwrap();
        let plan = SurveyPlan::new(4, vec![vec![0, 1, 2, 3]; 4], Repetition::Without).unwrap();
        let rid = reidentify(&smp, &plan, &index, 3, Scoring::EverySurvey, 7).unwrap();
        let expected: f64 = (0..500)
            .map(|i| {
                let same = (0..500).filter(|&u| index.row(u) == index.row(i)).count();
                1.0 / same as f64
            })
            .sum::<f64>()
            / 500.0;
        assert!(
            (rid.accuracy[3][0] - expected).abs() < 1e-12,
            "{:?} vs {expected}",
            rid.accuracy[3]
        );
        // Truthful reports: every profile is right.
        assert!(rid.profiled.iter().all(|&p| p == 1.0));
        // Each survey adds an attribute: accuracy grows, and top-3 beats top-1.
        for s in 1..4 {
            assert!(rid.accuracy[s][0] >= rid.accuracy[s - 1][0]);
            assert!(rid.accuracy[s][2] >= rid.accuracy[s][0]);
        }
        // With repetition a user may ask the same attribute again, learning less.
        let again = SurveyPlan::new(4, vec![vec![0, 1, 2, 3]; 4], Repetition::With).unwrap();
        let rid_again = reidentify(&smp, &again, &index, 1, Scoring::LastSurvey, 7).unwrap();
        assert!(rid_again.accuracy[0][0] < rid.accuracy[3][0]);
    }

    /// The same seed gives the same result on one thread and on several.
    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let ks = [6u32, 4, 5];
        let domains: Vec<DomainSize> = ks.iter().map(|&k| DomainSize::new(k).unwrap()).collect();
        let rows = table(3000, &ks, 2);
        let index = MatchIndex::new(&rows, &domains, vec![true, false, true]).unwrap();
        let smp = Multidim::new(
            Solution::Smp,
            Epsilon::new(2.0).unwrap(),
            &domains,
            Grr::new,
        )
        .unwrap();
        let mut rng = stream_rng(3, 0, Role::Genuine, 0);
        let plan = SurveyPlan::random(3, 3, Repetition::Without, &mut rng).unwrap();
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| reidentify(&smp, &plan, &index, 10, Scoring::EverySurvey, 5).unwrap())
        };
        let one = run(1);
        assert_eq!(one, run(2));
        // Scoring the last survey only draws the same reports.
        let last = reidentify(&smp, &plan, &index, 10, Scoring::LastSurvey, 5).unwrap();
        assert_eq!(last.accuracy[0], one.accuracy[2]);
        assert!(one.accuracy[2][9] > one.baseline(10), "{:?}", one.accuracy);
    }

    #[test]
    fn bad_plans_and_clients_are_refused() {
        assert!(SurveyPlan::new(3, vec![vec![]], Repetition::With).is_err());
        assert!(SurveyPlan::new(3, vec![vec![0, 3]], Repetition::With).is_err());
        assert!(SurveyPlan::new(3, vec![vec![1, 1]], Repetition::With).is_err());
        let domains = [DomainSize::new(2).unwrap(), DomainSize::new(3).unwrap()];
        let rows = [0u32, 1, 1, 2];
        let index = MatchIndex::new(&rows, &domains, vec![true; 2]).unwrap();
        let plan = SurveyPlan::new(2, vec![vec![0, 1]], Repetition::With).unwrap();
        let spl = Multidim::new(
            Solution::Spl,
            Epsilon::new(1.0).unwrap(),
            &domains,
            Grr::new,
        )
        .unwrap();
        assert!(matches!(
            reidentify(&spl, &plan, &index, 1, Scoring::LastSurvey, 0),
            Err(ReidentifyError::NotSmp(_))
        ));
        let other = [DomainSize::new(2).unwrap(), DomainSize::new(4).unwrap()];
        let smp =
            Multidim::new(Solution::Smp, Epsilon::new(1.0).unwrap(), &other, Grr::new).unwrap();
        assert!(matches!(
            reidentify(&smp, &plan, &index, 1, Scoring::LastSurvey, 0),
            Err(ReidentifyError::Width { .. })
        ));
        let wide = SurveyPlan::new(3, vec![vec![2]], Repetition::With).unwrap();
        let same = Multidim::new(
            Solution::Smp,
            Epsilon::new(1.0).unwrap(),
            &domains,
            Grr::new,
        )
        .unwrap();
        assert!(matches!(
            reidentify(&same, &wide, &index, 1, Scoring::LastSurvey, 0),
            Err(ReidentifyError::PlanWidth { plan: 3, client: 2 })
        ));
    }
}
