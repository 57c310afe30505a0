//! The maximal gain poisoning attack (Cao, Jia and Gong 2021) on several attributes,
//! measured on real multidimensional reports: fake users, a fraction beta of all users,
//! each send one crafted [`MultidimReport`] that promotes target items of each attribute.
//!
//! A fake report carries, for each attribute with targets, the family's maximal gain
//! report ([`AttackSurface::plan_max_gain`], prepared once per attribute), and for an
//! attribute without targets the report a protocol's fake would be ([`Multidim::fake`]:
//! a uniform item's, no item's, or a prior item's). SPL and the RS+ solutions send one such
//! report per attribute, all crafted; an SMP fake names one attribute, as [`SmpFakes`]
//! allots them. The server is [`ldp_core::multidim::MultidimAggregator`] with the unbiased estimator, so RS+
//! estimates `f = d g - (d - 1) phi`. The gain of attribute j is the sum over its targets
//! of the estimate with the fakes less the estimate without, on the same genuine reports
//! (common random numbers). Its closed form is `ldp_analytic::multidim::Collection::epg`.

use ldp_core::multidim::{Multidim, MultidimError, MultidimReport};
use ldp_core::simulation::{Estimate, Role, Streams, for_each_batch};
use ldp_core::{AttackSurface, Clip, Estimator, FakeFraction, MaxGain, parallel};

use crate::poison::{PoisonError, Targets};

/// How an SMP attacker's fake users name attributes (the other solutions' fake reports
/// carry every attribute).
#[derive(Debug, Clone, PartialEq)]
pub enum SmpFakes {
    /// Every fake names this attribute.
    All(usize),
    /// The fakes spread evenly over the attributes.
    Uniform,
    /// A share of the fakes per attribute (non-negative, summing to one); each
    /// attribute's count is rounded by largest remainder.
    Shares(Vec<f64>),
}

impl SmpFakes {
    /// How many of `fakes` fake users name each of `d` attributes: `fakes w_j` rounded
    /// down, the rest one each to the largest remainders (the earlier attribute on ties).
    ///
    /// ```
    /// use ldp_attack::multidim::SmpFakes;
    /// assert_eq!(SmpFakes::Uniform.counts(3, 10), Some(vec![4, 3, 3]));
    /// assert_eq!(SmpFakes::All(1).counts(2, 7), Some(vec![0, 7]));
    /// assert_eq!(SmpFakes::Shares(vec![0.25, 0.75]).counts(2, 6), Some(vec![2, 4]));
    /// assert_eq!(SmpFakes::Shares(vec![0.5, 0.6]).counts(2, 6), None);
    /// ```
    pub fn counts(&self, d: usize, fakes: usize) -> Option<Vec<usize>> {
        let shares = match self {
            SmpFakes::All(j) if *j < d => {
                let mut c = vec![0; d];
                c[*j] = fakes;
                return Some(c);
            }
            SmpFakes::All(_) => return None,
            SmpFakes::Uniform => vec![1.0 / d as f64; d],
            SmpFakes::Shares(w) => {
                let sum: f64 = w.iter().sum();
                let valid = w.len() == d
                    && w.iter().all(|x| (0.0..=1.0).contains(x))
                    && (sum - 1.0).abs() <= 1e-6;
                if !valid {
                    return None;
                }
                w.iter().map(|x| x / sum).collect()
            }
        };
        let exact: Vec<f64> = shares.iter().map(|w| w * fakes as f64).collect();
        let mut counts: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
        let mut order: Vec<usize> = (0..d).collect();
        order.sort_by(|&a, &b| {
            (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor()))
        });
        let left = fakes.saturating_sub(counts.iter().sum());
        for &j in order.iter().take(left) {
            counts[j] += 1;
        }
        Some(counts)
    }
}

/// A poisoning attack on a multidimensional collection, validated at construction.
#[derive(Debug, Clone, PartialEq)]
pub struct MultidimPoisoning {
    beta: FakeFraction,
    targets: Vec<Option<Targets>>,
    smp: SmpFakes,
}

impl MultidimPoisoning {
    /// Fake users a fraction `beta` of all users, promoting `targets[j]` of each attribute
    /// j (distinct items; empty for an attribute not attacked); SMP fakes name the
    /// attributes as `smp` says.
    pub fn new(beta: f64, targets: Vec<Vec<u32>>, smp: SmpFakes) -> Result<Self, PoisonError> {
        Ok(Self {
            beta: FakeFraction::new(beta)?,
            targets: targets
                .into_iter()
                .map(|t| (!t.is_empty()).then(|| Targets::new(t)).transpose())
                .collect::<Result<_, _>>()?,
            smp,
        })
    }

    /// The fraction of fake users among all users.
    pub fn beta(&self) -> FakeFraction {
        self.beta
    }

    /// Each attribute's targets, `None` where it has none.
    pub fn targets(&self) -> &[Option<Targets>] {
        &self.targets
    }

    /// How SMP fakes name attributes.
    pub fn smp(&self) -> &SmpFakes {
        &self.smp
    }
}

/// A multidimensional poisoning measurement that cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PoisonMeasureError {
    /// The client refused a user's items, or the server a report.
    #[error(transparent)]
    Multidim(#[from] MultidimError),
    /// One target list per attribute is needed.
    #[error("{found} target lists for {expected} attributes")]
    Attributes {
        /// The number of attributes.
        expected: usize,
        /// The number of target lists.
        found: usize,
    },
    /// A target outside its attribute's domain.
    #[error("target {target} of attribute {attribute} is outside its domain 0..{k}")]
    TargetOutsideDomain {
        /// The attribute.
        attribute: usize,
        /// The target.
        target: u32,
        /// Its domain size.
        k: u32,
    },
    /// The SMP naming is not a distribution over the attributes.
    #[error("the SMP fakes' naming {0:?} does not fit the attributes")]
    Naming(SmpFakes),
    /// The rows are not whole users.
    #[error("{values} values are not whole rows of {d} attributes")]
    Rows {
        /// Values given.
        values: usize,
        /// Attributes.
        d: usize,
    },
    /// At least one run and one user are needed.
    #[error("at least one run and one user are needed")]
    Empty,
    /// More runs than this platform can count.
    #[error("{runs} runs are more than this platform can count")]
    TooManyRuns {
        /// Runs asked for.
        runs: u64,
    },
}

/// What [`measure_poisoning`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PoisoningMeasurement {
    /// Runs.
    pub runs: u64,
    /// Genuine users per run.
    pub users: usize,
    /// Fake users per run: `round(beta n / (1 - beta))`.
    pub fake_users: usize,
    /// Fake reports of each attribute per run: every fake's for SPL and the RS+
    /// solutions, those naming it for SMP.
    pub fakes_per_attribute: Vec<usize>,
    /// Each attribute's gain, the sum over its targets of the estimate with the fakes
    /// less the estimate without; mean over runs and its standard error (exactly zero for
    /// an attribute without targets).
    pub gain: Vec<Estimate>,
    /// Targets each fake report of an attribute supports (`MaxGain::supported`); `None`
    /// where there are no targets.
    pub supported: Vec<Option<u32>>,
}

/// Runs the maximal gain attack `attack` against `mechanism` over `runs` seeded runs,
/// the genuine users being `rows` (row-major, one item per attribute). Each run perturbs
/// every genuine user afresh (the `Genuine` streams of (seed, run)), and the fakes draw
/// from the `Fake` streams.
///
/// ```
/// use ldp_attack::multidim::{measure_poisoning, MultidimPoisoning, SmpFakes};
/// use ldp_core::multidim::{Multidim, Solution};
/// use ldp_core::{DomainSize, Epsilon, UnaryEncoding};
/// let domains = [DomainSize::new(6)?, DomainSize::new(4)?];
/// let rsfd = Multidim::new(Solution::RsFd, Epsilon::new(1.0)?, &domains, UnaryEncoding::optimized)?;
/// let rows: Vec<u32> = (0..4000u32).flat_map(|i| [i % 6, i % 4]).collect();
/// let attack = MultidimPoisoning::new(0.05, vec![vec![5], vec![]], SmpFakes::Uniform)?;
/// let m = measure_poisoning(&rsfd, &rows, &attack, 4, 1)?;
/// // 2 beta ((1 - q) / (p - q) - g_T) at eps' = ln(2 (e - 1) + 1), g_T = 1/6: 0.24.
/// assert!((m.gain[0].mean - 0.24).abs() < 0.02 && m.gain[1].mean == 0.0);
/// assert_eq!(m.fake_users, 211);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn measure_poisoning<M: AttackSurface>(
    mechanism: &Multidim<M>,
    rows: &[u32],
    attack: &MultidimPoisoning,
    runs: u64,
    seed: u64,
) -> Result<PoisoningMeasurement, PoisonMeasureError> {
    let d = mechanism.dimensions();
    if rows.len() % d != 0 {
        return Err(PoisonMeasureError::Rows {
            values: rows.len(),
            d,
        });
    }
    let users = rows.len() / d;
    if runs == 0 || users == 0 {
        return Err(PoisonMeasureError::Empty);
    }
    let count = usize::try_from(runs).map_err(|_| PoisonMeasureError::TooManyRuns { runs })?;
    if attack.targets.len() != d {
        return Err(PoisonMeasureError::Attributes {
            expected: d,
            found: attack.targets.len(),
        });
    }
    for (attribute, (targets, m)) in attack
        .targets
        .iter()
        .zip(mechanism.attributes())
        .enumerate()
    {
        let k = m.domain_size().get();
        if let Some(target) = targets.as_ref().map(Targets::max).filter(|&t| t >= k) {
            return Err(PoisonMeasureError::TargetOutsideDomain {
                attribute,
                target,
                k,
            });
        }
    }
    let fakes = attack.beta.fake_users(users as u64) as usize;
    let named = if mechanism.solution().names_its_attribute() {
        attack
            .smp
            .counts(d, fakes)
            .ok_or_else(|| PoisonMeasureError::Naming(attack.smp.clone()))?
    } else {
        vec![fakes; d]
    };
    // Prepared once: for LH the seed search.
    let plans: Vec<Option<MaxGain<M::Report>>> = attack
        .targets
        .iter()
        .zip(mechanism.attributes())
        .map(|(t, m)| t.as_ref().map(|t| m.plan_max_gain(t.items(), Clip::Off)))
        .collect();
    let plan = Plan {
        mechanism,
        targets: &attack.targets,
        plans: &plans,
        named: &named,
        fakes,
    };
    let gains = parallel::map(count, |run| plan.run(rows, seed, run as u64))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    Ok(PoisoningMeasurement {
        runs,
        users,
        fake_users: fakes,
        fakes_per_attribute: named.clone(),
        gain: (0..d)
            .map(|j| Estimate::from_runs(gains.iter().map(|g| g[j])))
            .collect(),
        supported: plans
            .iter()
            .map(|p| p.as_ref().map(|p| p.supported))
            .collect(),
    })
}

struct Plan<'a, M: AttackSurface> {
    mechanism: &'a Multidim<M>,
    targets: &'a [Option<Targets>],
    plans: &'a [Option<MaxGain<M::Report>>],
    named: &'a [usize],
    fakes: usize,
}

impl<M: AttackSurface> Plan<'_, M> {
    /// One run: each attribute's gain.
    fn run(&self, rows: &[u32], seed: u64, run: u64) -> Result<Vec<f64>, MultidimError> {
        let m = self.mechanism;
        let d = m.dimensions();
        let genuine = Streams::new(seed, run, Role::Genuine);
        let mut clean = m.aggregator();
        for_each_batch(
            rows.len() / d,
            |b, users| {
                let mut rng = genuine.batch(b);
                let mut partial = m.aggregator();
                for user in users {
                    partial.add(&m.perturb(&rows[user * d..(user + 1) * d], &mut rng)?)?;
                }
                Ok(partial)
            },
            |partial| clean.merge(&partial),
        )?;
        let mut poisoned = clean.clone();
        let fake = Streams::new(seed, run, Role::Fake);
        for_each_batch(
            self.fakes,
            |b, users| {
                let mut rng = fake.batch(b);
                let mut partial = m.aggregator();
                for user in users {
                    partial.add(&self.fake_report(user, &mut rng)?)?;
                }
                Ok(partial)
            },
            |partial| poisoned.merge(&partial),
        )?;
        let before = clean.estimate(Estimator::Unbiased)?;
        let after = poisoned.estimate(Estimator::Unbiased)?;
        Ok((0..d)
            .map(|j| {
                self.targets[j].as_ref().map_or(0.0, |t| {
                    t.items()
                        .iter()
                        .map(|&v| after[j][v as usize] - before[j][v as usize])
                        .sum()
                })
            })
            .collect())
    }

    /// Attribute j's crafted report: the maximal gain report where it has targets, a
    /// protocol's fake otherwise.
    fn crafted<R: rand::Rng + ?Sized>(
        &self,
        j: usize,
        rng: &mut R,
    ) -> Result<M::Report, MultidimError> {
        let m = &self.mechanism.attributes()[j];
        match (&self.plans[j], &self.targets[j]) {
            (Some(plan), Some(t)) => Ok(m.max_gain_report(plan, t.items(), rng)),
            _ => self.mechanism.fake(j, rng),
        }
    }

    /// Fake user `user`'s report: SMP fakes name attributes in blocks of
    /// [`PoisoningMeasurement::fakes_per_attribute`], in attribute order.
    fn fake_report<R: rand::Rng + ?Sized>(
        &self,
        user: usize,
        rng: &mut R,
    ) -> Result<MultidimReport<M::Report>, MultidimError> {
        let d = self.mechanism.dimensions();
        if !self.mechanism.solution().names_its_attribute() {
            return (0..d)
                .map(|j| self.crafted(j, rng))
                .collect::<Result<_, _>>()
                .map(MultidimReport::Every);
        }
        let mut before = 0;
        let j = self
            .named
            .iter()
            .position(|&c| {
                before += c;
                user < before
            })
            .expect("the named counts add up to the fakes");
        Ok(MultidimReport::Sampled {
            attribute: j as u32,
            report: self.crafted(j, rng)?,
        })
    }
}
