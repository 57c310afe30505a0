//! The maximal gain poisoning attack (Cao, Jia and Gong 2021) on several attributes: fake
//! users, a fraction `beta` of all users, each send one crafted multidimensional report to
//! raise the estimated frequency of target items `T_j` of each attribute j (none, for some
//! attributes). The gain of attribute j is the sum over its targets of the estimate with
//! the fakes less the estimate without, and its expectation goes through the
//! one-attribute closed form of [`crate::epg`] at the budget of each report: no family is
//! treated apart.
//!
//! With `G_j` the expected estimate one fake report of attribute j adds to its targets
//! (the family's `(s - r q*) / (p* - q*)` at the report's budget, [`crate::epg`]) and
//! `f_T` the targets' true mass:
//!
//! ```text
//! SPL:  beta (G_j(eps/d) - f_T)
//! SMP:  beta_j (G_j(eps) - f_T),   beta_j = beta w_j / (beta w_j + (1 - beta) / d)
//! RS+:  d beta (G_j(eps') - g_T) = beta (d G_j(eps') - f_T - (d - 1) phi_T),
//!       g_T = f_T / d + (d - 1) / d phi_T
//! ```
//!
//! **SPL** reports every attribute at `eps / d`: a fake crafts each, and each attribute's
//! estimate sees the fraction `beta` of fake reports.
//!
//! **SMP**: a fake names the attribute it attacks, a share `w_j` of them attribute j
//! ([`SmpNaming`]), while the genuine users spread over the d attributes, `n / d` each.
//! The fraction of attribute j's reports that are fake is `beta_j` ([`smp_fake_share`]):
//! all fakes naming j make it `beta d / (beta d + 1 - beta)`, nearly d times `beta` when
//! beta is small; fakes spread uniformly, as genuine users are, leave it `beta`. The
//! closed form takes the genuine users who sample j to be their mean `n / d`; the
//! expectation over their binomial number exceeds it by a relative
//! `Var[n_j] / (n / d + m_j)^2 <= (d - 1) / n` (Jensen), negligible at any n measured.
//! Which naming is best depends on what the attacker wants: `beta_j` increases with
//! `w_j`, so an attacker whose targets lie in one attribute names it with every fake. Over
//! several attributes the total `sum_j beta_j u_j` (`u_j` the gain per fake) is concave in
//! the shares, but only slightly when beta is small (`beta_j` is nearly
//! `beta d w_j / (1 - beta)`, linear): the best naming ([`smp_best_shares`]) gives every
//! fake to the attribute of the largest `u_j`, and a second attribute a share only when
//! `u_2 / u_1 > ((1 - beta) / (1 - beta + d beta))^2` (0.75 at d = 3, beta = 0.05);
//! equal gains share uniformly. Spreading the fakes as genuine users are is the
//! attacker's best only when the gains are equal.
//!
//! **RS+FD, RS+FD-z, RS+RFD**: a fake crafts all d reports, at `eps'`: none of them is a
//! fake in the protocol's sense, since the attacker controls every one. The server
//! estimates `f = d g - (d - 1) phi` from the family's estimate of `g`, the law of
//! attribute j's report inputs (a genuine user's is `g = f / d + (d - 1) / d phi`, its
//! item w.p. `1/d`, a fake's otherwise, [`Collection::fake_law`]). The fakes shift the
//! estimate of `g_T` by the family's EPG, `beta (G_j - g_T)`, and the server multiplies
//! that shift by d: the RS+ solutions amplify the attacker's gain d-fold, where SPL and
//! SMP (uniform naming) leave the one-attribute gain at the report's budget.

use ldp_core::multidim::Solution;
use ldp_core::{FakeFraction, Spec, dispatch_family};

use super::{Collection, MultidimInputError, Result, check_truth};
use crate::epg::{self, Gain, Poisoning};
use crate::family::ClosedForms;

/// Which attributes an SMP attacker's fake users name (the other solutions ignore it:
/// their reports carry every attribute).
#[derive(Debug, Clone, PartialEq)]
pub enum SmpNaming {
    /// Every fake names this attribute.
    All(usize),
    /// The fakes spread evenly over the d attributes, as genuine users do.
    Uniform,
    /// Attribute j is named by a share `w_j` of the fakes (d numbers in `[0, 1]` summing
    /// to one, within [`super::FREQUENCY_SUM_TOLERANCE`]).
    Shares(Vec<f64>),
}

impl SmpNaming {
    /// The share of the fakes naming each of `d` attributes.
    ///
    /// ```
    /// use ldp_analytic::multidim::SmpNaming;
    /// assert_eq!(SmpNaming::All(1).shares(3)?, vec![0.0, 1.0, 0.0]);
    /// assert_eq!(SmpNaming::Uniform.shares(4)?, vec![0.25; 4]);
    /// assert!(SmpNaming::Shares(vec![0.5, 0.6]).shares(2).is_err());
    /// # Ok::<(), ldp_analytic::multidim::MultidimInputError>(())
    /// ```
    pub fn shares(&self, d: usize) -> Result<Vec<f64>> {
        if d == 0 {
            return Err(MultidimInputError::NoAttributes);
        }
        match self {
            SmpNaming::All(j) if *j < d => {
                let mut w = vec![0.0; d];
                w[*j] = 1.0;
                Ok(w)
            }
            SmpNaming::All(j) => Err(MultidimInputError::Attribute { attribute: *j, d }),
            SmpNaming::Uniform => Ok(vec![1.0 / d as f64; d]),
            SmpNaming::Shares(w) => {
                let sum: f64 = w.iter().sum();
                let valid = w.len() == d
                    && w.iter().all(|x| (0.0..=1.0).contains(x))
                    && (sum - 1.0).abs() <= super::FREQUENCY_SUM_TOLERANCE;
                if valid {
                    Ok(w.clone())
                } else {
                    Err(MultidimInputError::Shares {
                        d,
                        shares: w.clone(),
                    })
                }
            }
        }
    }
}

fn check_beta(beta: f64) -> Result<f64> {
    FakeFraction::new(beta)
        .map(FakeFraction::get)
        .map_err(MultidimInputError::Beta)
}

/// The fraction of an SMP attribute's reports that are fake when fake users, a fraction
/// `beta` of all users, name it in a share `share` of them, and the genuine users sample
/// each of the `d` attributes uniformly.
///
/// # Formula
///
/// With n genuine and m fake users (`beta = m / (n + m)`), the attribute receives about
/// `n / d` genuine reports and `share m` fake ones:
///
/// ```text
/// beta_j = share m / (share m + n / d) = beta share / (beta share + (1 - beta) / d)
/// ```
///
/// ```
/// use ldp_analytic::multidim::smp_fake_share;
/// // 5 % of fake users, all naming one of 4 attributes, make 17.4 % of its reports.
/// let all = smp_fake_share(0.05, 4, 1.0)?;
/// assert!((all - 0.2 / (0.2 + 0.95)).abs() < 1e-15);
/// // Spread as the genuine users are, they make 5 % of every attribute's.
/// assert!((smp_fake_share(0.05, 4, 0.25)? - 0.05).abs() < 1e-15);
/// # Ok::<(), ldp_analytic::multidim::MultidimInputError>(())
/// ```
pub fn smp_fake_share(beta: f64, d: usize, share: f64) -> Result<f64> {
    let beta = check_beta(beta)?;
    let d = super::check_dimensions(d)?;
    super::check_unit("an SMP attribute's share of the fakes", share)?;
    let fakes = beta * share;
    if fakes == 0.0 {
        return Ok(0.0);
    }
    Ok(fakes / (fakes + (1.0 - beta) / d))
}

/// The shares of the fakes an SMP attacker should give the attributes to maximize the
/// total expected gain `sum_j beta_j(w_j) u_j`, where `u_j` is what one fake report adds
/// to attribute j's targets net of their true mass (`G_j - f_T`, the gain at a fake
/// share of one; [`Collection::epg_per_fake`]).
///
/// # Formula
///
/// With `c = (1 - beta) / d` and `x_j = beta w_j`, the objective `sum_j u_j x_j / (x_j + c)`
/// is concave; its maximum over `sum_j x_j = beta` (Lagrange, then the active set by
/// water-filling, the attributes by decreasing `u_j`) is
///
/// ```text
/// x_j = sqrt(u_j) (beta + a c) / S_a - c   for the a attributes of largest u_j,
/// S_a = sum of their sqrt(u_j),  a the largest count with every x_j > 0;  0 for the others
/// ```
///
/// The second attribute enters when `u_2 / u_1 > (c / (beta + c))^2`: for small beta
/// nearly every fake goes to the largest gain, the objective being nearly linear.
/// Equal gains give equal shares; one attribute with a positive gain, or `beta = 0`
/// (nothing to share), gives it every fake; so do gains that are all at most zero (the
/// attribute losing least: `beta_j` is subadditive, so splitting loses more).
///
/// ```
/// use ldp_analytic::multidim::smp_best_shares;
/// assert_eq!(smp_best_shares(0.05, &[10.0, 10.0, 10.0])?, vec![1.0 / 3.0; 3]);
/// assert_eq!(smp_best_shares(0.05, &[10.0, 0.0])?, vec![1.0, 0.0]);
/// // Near-equal gains share, the richer attribute getting more; a gain a quarter of the
/// // other's gets nothing (at d = 2, beta = 0.05 the threshold is 0.82).
/// let w = smp_best_shares(0.05, &[10.0, 9.0])?;
/// assert!(w[0] > 0.5 && w[1] > 0.0);
/// assert_eq!(smp_best_shares(0.05, &[40.0, 10.0])?, vec![1.0, 0.0]);
/// # Ok::<(), ldp_analytic::multidim::MultidimInputError>(())
/// ```
pub fn smp_best_shares(beta: f64, unit_gains: &[f64]) -> Result<Vec<f64>> {
    let beta = check_beta(beta)?;
    let d = super::check_dimensions(unit_gains.len())?;
    if let Some(&bad) = unit_gains.iter().find(|u| !u.is_finite()) {
        return Err(MultidimInputError::Frequency {
            what: "a finite gain per fake (an unbounded one takes every fake)",
            value: bad,
        });
    }
    let mut order: Vec<usize> = (0..unit_gains.len()).collect();
    order.sort_by(|&a, &b| unit_gains[b].total_cmp(&unit_gains[a]));
    let mut shares = vec![0.0; unit_gains.len()];
    let best = order[0];
    if beta == 0.0 || unit_gains[best] <= 0.0 {
        shares[best] = 1.0;
        return Ok(shares);
    }
    let c = (1.0 - beta) / d;
    let roots: Vec<f64> = order
        .iter()
        .map(|&j| unit_gains[j].max(0.0).sqrt())
        .collect();
    let (mut active, mut sum) = (1usize, roots[0]);
    while active < order.len() && roots[active] > 0.0 {
        let (a, s) = (active + 1, sum + roots[active]);
        if roots[active] * (beta + a as f64 * c) / s - c <= 0.0 {
            break;
        }
        (active, sum) = (a, s);
    }
    let level = (beta + active as f64 * c) / sum;
    for (&j, &root) in order.iter().zip(&roots).take(active) {
        shares[j] = (root * level - c) / beta;
    }
    // The shares sum to one up to rounding: make it exact.
    let total: f64 = shares.iter().sum();
    for w in &mut shares {
        *w /= total;
    }
    Ok(shares)
}

impl Collection {
    /// The fraction of `attribute`'s reports that are fake when fake users are a fraction
    /// `beta` of all users: `beta` for SPL and the RS+ solutions (every user reports every
    /// attribute), [`smp_fake_share`] at the attribute's share of `naming` for SMP.
    pub fn fake_share(&self, attribute: usize, beta: f64, naming: &SmpNaming) -> Result<f64> {
        self.spec(attribute)?;
        let beta = check_beta(beta)?;
        if self.solution != Solution::Smp {
            return Ok(beta);
        }
        let d = self.dimensions();
        smp_fake_share(beta, d, naming.shares(d)?[attribute])
    }

    /// The expected gain of the maximal gain attack on `targets` of `attribute` (distinct
    /// items of its domain; none gives zero), with fake users a fraction `beta` of all
    /// users and `truth` the genuine users' frequencies of the attribute's items; SMP's
    /// fakes name the attributes as `naming` says. Each fake report supports as many of
    /// the targets as the family's can ([`epg::expected`]).
    ///
    /// # Formula
    ///
    /// ```text
    /// SPL:  EPG(spec_j at eps/d, beta,   r, f_T)
    /// SMP:  EPG(spec_j at eps,   beta_j, r, f_T)          beta_j: [`Collection::fake_share`]
    /// RS+:  d EPG(spec_j at eps', beta,  r, g_T)          g_T = f_T / d + (d - 1) / d phi_T
    /// ```
    ///
    /// with `EPG(spec, beta, r, f_T) = beta (G - f_T)` the one-attribute gain
    /// ([`epg::expected`]) and `phi` the fakes' law ([`Collection::fake_law`]). SHE, whose
    /// multidimensional server does not clip, is [`Gain::Unbounded`] under every solution.
    ///
    /// ```
    /// use ldp_analytic::epg::{self, Poisoning};
    /// use ldp_analytic::multidim::{Collection, SmpNaming};
    /// use ldp_core::multidim::Solution;
    /// use ldp_core::{DomainSize, Epsilon, Protocol};
    /// let (domains, e) = ([DomainSize::new(10)?; 3], Epsilon::new(2.0)?);
    /// let truth = vec![0.1; 10];
    /// let gain = |solution, naming: &SmpNaming| -> Result<f64, Box<dyn std::error::Error>> {
    ///     let c = Collection::classic(solution, Protocol::Oue, e, &domains)?;
    ///     Ok(c.epg(0, 0.05, &[3], &truth, naming)?.finite().unwrap())
    /// };
    /// let uniform = gain(Solution::Smp, &SmpNaming::Uniform)?;
    /// // Spread as genuine users are, SMP's fakes gain what they would on one attribute,
    /// let oue = ldp_core::Spec::classic(Protocol::Oue, domains[0], e)?;
    /// let one = epg::expected(&oue, &Poisoning::new(0.05, 1, 0.1)?)?.finite().unwrap();
    /// assert!((uniform - one).abs() < 1e-12);
    /// // about d times more all on attribute 0; RS+FD's server multiplies its gain by d.
    /// assert!(gain(Solution::Smp, &SmpNaming::All(0))? > 2.5 * uniform);
    /// assert!(gain(Solution::RsFd, &SmpNaming::Uniform)? > 2.5 * uniform);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn epg(
        &self,
        attribute: usize,
        beta: f64,
        targets: &[u32],
        truth: &[f64],
        naming: &SmpNaming,
    ) -> Result<Gain> {
        self.epg_supporting(attribute, beta, targets, truth, naming, None)
    }

    /// [`Collection::epg`] when each fake report of `attribute` supports only `supported`
    /// of its targets ([`epg::expected_with_support`]), as an LH attacker whose seed search
    /// fell short achieves: what `ldp_core::AttackSurface::plan_max_gain` reports.
    pub fn epg_with_support(
        &self,
        attribute: usize,
        beta: f64,
        targets: &[u32],
        truth: &[f64],
        naming: &SmpNaming,
        supported: u32,
    ) -> Result<Gain> {
        self.epg_supporting(attribute, beta, targets, truth, naming, Some(supported))
    }

    /// What one fake user adds to the targets of `attribute` net of their true mass, when
    /// the fakes make all of the attribute's fake share: the gain per unit of
    /// [`Collection::fake_share`]. [`Collection::epg`] is `fake_share * epg_per_fake`.
    ///
    /// # Formula
    ///
    /// ```text
    /// SPL, SMP:  G_j - f_T               RS+:  d G_j - f_T - (d - 1) phi_T
    /// ```
    pub fn epg_per_fake(
        &self,
        attribute: usize,
        targets: &[u32],
        truth: &[f64],
        supported: Option<u32>,
    ) -> Result<Gain> {
        let spec = self.spec(attribute)?;
        let Some(target) = self.target_mass(attribute, targets, truth)? else {
            return Ok(Gain::Finite(0.0));
        };
        let r = targets.len() as u32;
        let s = supported.unwrap_or_else(|| epg::supportable_targets(spec, r));
        if s > r {
            return Err(MultidimInputError::Poisoning {
                attribute,
                source: epg::PoisoningError::Supported {
                    supported: s,
                    targets: r,
                },
            });
        }
        let per_report: Option<f64> = match supported {
            Some(s) => {
                dispatch_family!(spec.params(), F, param => F::fake_report_gain_supporting(spec.k(), spec.eps(), param, r, s))
            }
            None => {
                dispatch_family!(spec.params(), F, param => F::fake_report_gain(spec.k(), spec.eps(), param, r))
            }
        };
        let d = self.dimensions() as f64;
        Ok(match per_report {
            None => Gain::Unbounded,
            Some(g) if self.solution.fakes() => {
                Gain::Finite(d * g - target.truth - (d - 1.0) * target.fakes)
            }
            Some(g) => Gain::Finite(g - target.truth),
        })
    }

    /// The SMP attacker's best [`SmpNaming`] for `targets` (one list per attribute, empty
    /// where it has none) and `truths` (the genuine frequencies of every attribute): the
    /// shares of [`smp_best_shares`] at each attribute's [`Collection::epg_per_fake`], or
    /// every fake on the first attribute whose gain has no bound. Defined for SMP.
    pub fn smp_best_naming(
        &self,
        beta: f64,
        targets: &[Vec<u32>],
        truths: &[Vec<f64>],
    ) -> Result<SmpNaming> {
        if self.solution != Solution::Smp {
            return Err(MultidimInputError::Solution {
                what: "naming the attributes fakes attack",
                expected: "SMP",
                found: self.solution,
            });
        }
        let units = self.per_fake_all(targets, truths)?;
        let mut finite = Vec::with_capacity(units.len());
        for (j, unit) in units.iter().enumerate() {
            match unit {
                Gain::Unbounded => return Ok(SmpNaming::All(j)),
                Gain::Finite(u) => finite.push(*u),
            }
        }
        smp_best_shares(beta, &finite).map(SmpNaming::Shares)
    }

    /// The expected gain summed over the attributes: [`Collection::epg`] of each attribute
    /// at its targets (one list per attribute, empty where it has none) and its truth.
    pub fn epg_total(
        &self,
        beta: f64,
        targets: &[Vec<u32>],
        truths: &[Vec<f64>],
        naming: &SmpNaming,
    ) -> Result<Gain> {
        self.check_per_attribute(targets.len(), truths.len())?;
        let mut total = 0.0;
        for (j, (t, f)) in targets.iter().zip(truths).enumerate() {
            match self.epg(j, beta, t, f, naming)? {
                Gain::Unbounded => return Ok(Gain::Unbounded),
                Gain::Finite(g) => total += g,
            }
        }
        Ok(Gain::Finite(total))
    }

    fn per_fake_all(&self, targets: &[Vec<u32>], truths: &[Vec<f64>]) -> Result<Vec<Gain>> {
        self.check_per_attribute(targets.len(), truths.len())?;
        targets
            .iter()
            .zip(truths)
            .enumerate()
            .map(|(j, (t, f))| self.epg_per_fake(j, t, f, None))
            .collect()
    }

    fn check_per_attribute(&self, targets: usize, truths: usize) -> Result<()> {
        let d = self.dimensions();
        for (what, found) in [
            ("target lists, one per attribute", targets),
            ("true frequencies, one list per attribute", truths),
        ] {
            if found != d {
                return Err(MultidimInputError::Length {
                    what,
                    expected: d,
                    found,
                });
            }
        }
        Ok(())
    }

    fn epg_supporting(
        &self,
        attribute: usize,
        beta: f64,
        targets: &[u32],
        truth: &[f64],
        naming: &SmpNaming,
        supported: Option<u32>,
    ) -> Result<Gain> {
        let share = self.fake_share(attribute, beta, naming)?;
        let spec = self.spec(attribute)?;
        let Some(target) = self.target_mass(attribute, targets, truth)? else {
            return Ok(Gain::Finite(0.0));
        };
        let d = self.dimensions() as f64;
        // RS+: the family's gain on g, multiplied by d.
        let (mass, scale) = if self.solution.fakes() {
            (target.truth / d + (d - 1.0) / d * target.fakes, d)
        } else {
            (target.truth, 1.0)
        };
        let poisoned = |e| MultidimInputError::Poisoning {
            attribute,
            source: e,
        };
        let attack = Poisoning::new(share, targets.len() as u32, mass).map_err(poisoned)?;
        let gain = match supported {
            None => epg::expected(spec, &attack),
            Some(s) => epg::expected_with_support(spec, &attack, s),
        }
        .map_err(poisoned)?;
        Ok(match gain {
            Gain::Finite(g) => Gain::Finite(scale * g),
            Gain::Unbounded => Gain::Unbounded,
        })
    }

    /// The targets' true mass and their mass under the fakes' law, after checking them
    /// and the truth; `None` for no targets.
    fn target_mass(
        &self,
        attribute: usize,
        targets: &[u32],
        truth: &[f64],
    ) -> Result<Option<TargetMass>> {
        let spec: &Spec = self.spec(attribute)?;
        check_truth(attribute, spec.k(), truth)?;
        let k = spec.k().get();
        for (i, &t) in targets.iter().enumerate() {
            if t >= k {
                return Err(MultidimInputError::Item {
                    attribute,
                    item: t,
                    k,
                });
            }
            if targets[..i].contains(&t) {
                return Err(MultidimInputError::DuplicateTarget { attribute, item: t });
            }
        }
        if targets.is_empty() {
            return Ok(None);
        }
        let phi = self.fake_law(attribute)?;
        let mass = |law: &[f64]| targets.iter().map(|&t| law[t as usize]).sum::<f64>();
        Ok(Some(TargetMass {
            truth: mass(truth).min(1.0),
            fakes: mass(&phi).min(1.0),
        }))
    }
}

struct TargetMass {
    truth: f64,
    fakes: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::multidim::Priors;
    use ldp_core::{DomainSize, Epsilon, Family, Protocol};

    fn eps(e: f64) -> Epsilon {
        Epsilon::new(e).unwrap()
    }

    fn domains(ks: &[u32]) -> Vec<DomainSize> {
        ks.iter().map(|&k| DomainSize::new(k).unwrap()).collect()
    }

    fn truth(k: usize) -> Vec<f64> {
        let total = (k * (k + 1) / 2) as f64;
        (0..k).map(|v| (v + 1) as f64 / total).collect()
    }

    /// The expected targets' estimate read off the server's estimator of a pure family,
    /// item by item: a genuine report of attribute j supports target t w.p.
    /// `q + (p - q) x_t` (x_t its input law: f_t, or g_t under RS+), a fake one w.p. 1 when
    /// it supports t; the count over all N reports gives `(C_t / N - q) / (p - q)`, and the
    /// RS+ server `d g - (d - 1) phi`. The gain is the difference of the expectations with
    /// and without the fakes, whose share of the attribute's reports is counted from n
    /// and m users directly.
    fn by_the_estimator(
        c: &Collection,
        j: usize,
        n: f64,
        m_j: f64,
        targets: &[u32],
        supported: &[u32],
        truth: &[f64],
    ) -> f64 {
        let spec = &c.specs()[j];
        let (p, q) = spec.pure_probabilities().unwrap();
        let d = c.dimensions() as f64;
        let phi = c.fake_law(j).unwrap();
        let rs = c.solution().fakes();
        // Genuine reports of attribute j: all n users, or n / d under SMP.
        let genuine = if c.solution() == Solution::Smp {
            n / d
        } else {
            n
        };
        let mut gain = 0.0;
        for &t in targets {
            let x = if rs {
                truth[t as usize] / d + (d - 1.0) / d * phi[t as usize]
            } else {
                truth[t as usize]
            };
            let support = q + (p - q) * x;
            let fake = if supported.contains(&t) { 1.0 } else { 0.0 };
            let clean = (support - q) / (p - q);
            let with = ((genuine * support + m_j * fake) / (genuine + m_j) - q) / (p - q);
            let scale = if rs { d } else { 1.0 };
            gain += scale * (with - clean);
        }
        gain
    }

    #[test]
    fn every_solution_matches_the_estimator_itself() {
        let ks = [6u32, 9, 4];
        let (n, m) = (30_000.0, 1_500.0);
        let beta = m / (n + m);
        let truths: Vec<Vec<f64>> = ks.iter().map(|&k| truth(k as usize)).collect();
        let priors = Priors::new(
            truths
                .iter()
                .map(|f| f.iter().rev().copied().collect())
                .collect(),
        )
        .unwrap();
        for protocol in [Protocol::Grr, Protocol::Oue, Protocol::Olh, Protocol::Sue] {
            let build = |k, e| Spec::classic(protocol, k, e);
            let mut collections: Vec<Collection> = [Solution::Spl, Solution::Smp, Solution::RsFd]
                .into_iter()
                .map(|s| Collection::new(s, eps(1.5), &domains(&ks), build).unwrap())
                .collect();
            collections.push(Collection::with_priors(eps(1.5), priors.clone(), build).unwrap());
            if protocol != Protocol::Grr && protocol != Protocol::Olh {
                collections.push(
                    Collection::new(Solution::RsFdNull, eps(1.5), &domains(&ks), build).unwrap(),
                );
            }
            for c in &collections {
                for (j, targets) in [vec![0u32, 2], vec![5], vec![1, 2, 3]].iter().enumerate() {
                    // GRR's fake reports one target: its support is one of them, whichever.
                    let supported: Vec<u32> = if protocol == Protocol::Grr {
                        targets[..1].to_vec()
                    } else {
                        targets.clone()
                    };
                    for naming in [
                        SmpNaming::All(j),
                        SmpNaming::Uniform,
                        SmpNaming::Shares(vec![0.5, 0.3, 0.2]),
                    ] {
                        let w = naming.shares(3).unwrap()[j];
                        let m_j = if c.solution() == Solution::Smp {
                            m * w
                        } else {
                            m
                        };
                        let want = by_the_estimator(c, j, n, m_j, targets, &supported, &truths[j]);
                        let got = c
                            .epg(j, beta, targets, &truths[j], &naming)
                            .unwrap()
                            .finite()
                            .unwrap();
                        assert!(
                            (got - want).abs() <= 1e-9 * want.abs().max(1e-3),
                            "{protocol:?} {} attribute {j} {naming:?}: {got} vs {want}",
                            c.solution()
                        );
                        // The gain per fake, times the fakes' share.
                        let unit = c
                            .epg_per_fake(j, targets, &truths[j], None)
                            .unwrap()
                            .finite()
                            .unwrap();
                        let share = c.fake_share(j, beta, &naming).unwrap();
                        assert!((share * unit - got).abs() <= 1e-9 * got.abs().max(1e-3));
                    }
                }
            }
        }
    }

    #[test]
    fn spl_is_the_family_at_eps_over_d_and_rs_plus_is_d_times_it_on_g() {
        let ks = domains(&[8, 8, 8, 8]);
        let f = truth(8);
        let (beta, targets) = (0.02, [1u32, 6]);
        let f_t = f[1] + f[6];
        for protocol in [Protocol::Grr, Protocol::Oue, Protocol::Olh] {
            let spl = Collection::classic(Solution::Spl, protocol, eps(2.0), &ks).unwrap();
            let one =
                epg::expected(&spl.specs()[0], &Poisoning::new(beta, 2, f_t).unwrap()).unwrap();
            assert_eq!(
                spl.epg(0, beta, &targets, &f, &SmpNaming::Uniform).unwrap(),
                one
            );
            let rs = Collection::classic(Solution::RsFd, protocol, eps(2.0), &ks).unwrap();
            let g_t = f_t / 4.0 + 0.75 * 2.0 / 8.0;
            let on_g = epg::expected(&rs.specs()[0], &Poisoning::new(beta, 2, g_t).unwrap())
                .unwrap()
                .finite()
                .unwrap();
            let got = rs
                .epg(0, beta, &targets, &f, &SmpNaming::Uniform)
                .unwrap()
                .finite()
                .unwrap();
            assert!((got - 4.0 * on_g).abs() < 1e-12 * got);
        }
    }

    #[test]
    fn smp_concentration_and_the_best_split() {
        // All on one attribute: beta d / (beta d + 1 - beta), close to d beta for small beta.
        for d in [2usize, 5, 18] {
            let all = smp_fake_share(0.01, d, 1.0).unwrap();
            let df = d as f64;
            assert!((all - 0.01 * df / (0.01 * df + 0.99)).abs() < 1e-15);
            // d beta / (1 + (d - 1) beta): below d beta, the more so the more attributes.
            assert!((all * (1.0 + (df - 1.0) * 0.01) - df * 0.01).abs() < 1e-15);
            assert!(all < df * 0.01 && all > df * 0.01 / (1.0 + df * 0.01));
        }
        // The water-filling optimum beats every point of a fine grid, for two and three
        // attributes.
        let objective = |beta: f64, u: &[f64], w: &[f64]| -> f64 {
            let d = u.len();
            u.iter()
                .zip(w)
                .map(|(u, w)| u * smp_fake_share(beta, d, *w).unwrap())
                .sum()
        };
        for (beta, u) in [
            (0.05, vec![10.0, 3.0]),
            (0.3, vec![10.0, 3.0]),
            (0.05, vec![10.0, 0.1]),
            (0.1, vec![5.0, 5.0]),
            (0.05, vec![-1.0, 2.0]),
            (0.2, vec![8.0, 4.0, 1.0]),
            (0.02, vec![8.0, 7.5, 0.05]),
            (0.4, vec![-2.0, -1.0, -3.0]),
        ] {
            let w = smp_best_shares(beta, &u).unwrap();
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12 && w.iter().all(|&x| x >= 0.0));
            let best = objective(beta, &u, &w);
            let steps = 400;
            for a in 0..=steps {
                let rest = steps - a;
                for b in 0..=(if u.len() == 3 { rest } else { 0 }) {
                    let grid: Vec<f64> = if u.len() == 2 {
                        vec![a as f64 / steps as f64, rest as f64 / steps as f64]
                    } else {
                        vec![
                            a as f64 / steps as f64,
                            b as f64 / steps as f64,
                            (rest - b) as f64 / steps as f64,
                        ]
                    };
                    assert!(
                        objective(beta, &u, &grid) <= best + 1e-12,
                        "{beta} {u:?}: {grid:?} beats {w:?}"
                    );
                }
            }
        }
        // Equal gains: uniform; the total then beats all on one attribute.
        let w = smp_best_shares(0.05, &[3.0; 4]).unwrap();
        assert!(w.iter().all(|x| (x - 0.25).abs() < 1e-15));
        assert!(objective(0.05, &[3.0; 4], &w) > objective(0.05, &[3.0; 4], &[1.0, 0.0, 0.0, 0.0]));
    }

    #[test]
    fn the_best_naming_through_a_collection() {
        let ks = domains(&[10, 10, 10]);
        let c = Collection::classic(Solution::Smp, Protocol::Oue, eps(1.0), &ks).unwrap();
        let f = vec![0.1; 10];
        let truths = vec![f.clone(), f.clone(), f.clone()];
        // Targets in attribute 1 only: every fake names it.
        let one = vec![vec![], vec![2u32], vec![]];
        assert_eq!(
            c.smp_best_naming(0.05, &one, &truths).unwrap(),
            SmpNaming::Shares(vec![0.0, 1.0, 0.0])
        );
        // The same targets in every attribute: uniform, and its total beats concentration.
        let all = vec![vec![2u32], vec![2], vec![2]];
        let best = c.smp_best_naming(0.05, &all, &truths).unwrap();
        let total = |n: &SmpNaming| {
            c.epg_total(0.05, &all, &truths, n)
                .unwrap()
                .finite()
                .unwrap()
        };
        assert!((total(&best) - total(&SmpNaming::Uniform)).abs() < 1e-12);
        assert!(total(&best) > total(&SmpNaming::All(0)));
        // Not defined for the other solutions.
        let spl = Collection::classic(Solution::Spl, Protocol::Oue, eps(1.0), &ks).unwrap();
        assert!(matches!(
            spl.smp_best_naming(0.05, &all, &truths),
            Err(MultidimInputError::Solution { .. })
        ));
    }

    #[test]
    fn unbounded_empty_and_bad_input() {
        let ks = domains(&[5, 5]);
        let f = vec![0.2; 5];
        let she = Collection::classic(Solution::RsFd, Protocol::She, eps(1.0), &ks).unwrap();
        assert_eq!(
            she.epg(0, 0.1, &[1], &f, &SmpNaming::Uniform).unwrap(),
            Gain::Unbounded
        );
        let c = Collection::classic(Solution::Smp, Protocol::Grr, eps(1.0), &ks).unwrap();
        assert_eq!(
            c.epg(0, 0.1, &[], &f, &SmpNaming::Uniform).unwrap(),
            Gain::Finite(0.0)
        );
        assert_eq!(
            c.epg(0, 0.0, &[1], &f, &SmpNaming::Uniform).unwrap(),
            Gain::Finite(0.0)
        );
        assert!(matches!(
            c.epg(0, 1.0, &[1], &f, &SmpNaming::Uniform),
            Err(MultidimInputError::Beta(_))
        ));
        assert!(matches!(
            c.epg(0, 0.1, &[5], &f, &SmpNaming::Uniform),
            Err(MultidimInputError::Item { .. })
        ));
        assert!(matches!(
            c.epg(0, 0.1, &[1, 1], &f, &SmpNaming::Uniform),
            Err(MultidimInputError::DuplicateTarget { .. })
        ));
        assert!(matches!(
            c.epg(2, 0.1, &[1], &f, &SmpNaming::Uniform),
            Err(MultidimInputError::Attribute { .. })
        ));
        assert!(matches!(
            c.epg(0, 0.1, &[1], &f, &SmpNaming::All(2)),
            Err(MultidimInputError::Attribute { .. })
        ));
        assert!(matches!(
            c.epg(0, 0.1, &[1], &[0.5; 5], &SmpNaming::Uniform),
            Err(MultidimInputError::FrequencySum { .. })
        ));
        assert!(matches!(
            c.epg_with_support(0, 0.1, &[1], &f, &SmpNaming::Uniform, 2),
            Err(MultidimInputError::Poisoning { .. })
        ));
        assert!(matches!(
            c.epg_total(
                0.1,
                &[vec![1]],
                std::slice::from_ref(&f),
                &SmpNaming::Uniform
            ),
            Err(MultidimInputError::Length { .. })
        ));
        assert_eq!(Family::Grr, c.specs()[0].family());
    }
}
