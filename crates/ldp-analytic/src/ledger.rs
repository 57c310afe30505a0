//! The budget over time: a per-user ledger of the surveys a user answered, composed by
//! basic and advanced composition, with memoized surveys charged their own longitudinal
//! bound, and the users and days over a stated limit.
//!
//! - **Basic composition**: a user's reports at eps_1, ..., eps_t are (sum eps_i)-LDP.
//! - **Advanced composition** (Kairouz, Oh and Viswanath, "The Composition Theorem for
//!   Differential Privacy", ICML 2015, Theorem 3.5 for heterogeneous budgets): for any
//!   delta in (0, 1), (sum eps_i tanh(eps_i / 2) + sqrt(2 ln(1/delta) sum eps_i^2),
//!   delta)-LDP; never reported above the basic sum, which holds with delta = 0.
//! - **Memoized surveys** (`eps_perm` given: RAPPOR's memo, dBitFlipPM, the L-protocols):
//!   however many reports a user sends while the value stays the same, they reveal no more
//!   than the memo, eps_perm; the ledger charges a memoized survey eps_perm once per user
//!   (a value that changed m times costs (m + 1) eps_perm, which the ledger cannot see).
//!
//! ```
//! use ldp_analytic::ledger::{Ledger, Survey};
//! let mut ledger = Ledger::new(vec![
//!     Survey::fresh("daily-app", 0.1, 1, 365)?,
//!     Survey::memoized("daily-health", 0.5, 2.0, 1, 365)?,
//! ])?;
//! for day in 1..=365 {
//!     ledger.record("alice", "daily-app", day)?;
//!     ledger.record("alice", "daily-health", day)?;
//! }
//! let alice = &ledger.users(Some(1e-6))?[0];
//! assert_eq!(alice.basic, 38.5); // 365 fresh reports at 0.1 and one memo at 2
//! let advanced = alice.advanced.unwrap();
//! assert!(advanced > 17.0 && advanced < 18.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

/// A survey: its budget per report, the days it runs, and the memo's budget if it
/// memoizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Survey {
    id: String,
    eps: f64,
    eps_perm: Option<f64>,
    first_day: u32,
    last_day: u32,
}

impl Survey {
    /// A survey of fresh reports at `eps` each, on days `first_day..=last_day`.
    ///
    /// # Errors
    /// [`LedgerError::Budget`], [`LedgerError::Days`].
    pub fn fresh(id: &str, eps: f64, first_day: u32, last_day: u32) -> Result<Self, LedgerError> {
        Self::new(id, eps, None, first_day, last_day)
    }

    /// A memoized survey: reports at `eps` each, all from one memo of budget `eps_perm`
    /// (at least `eps`) while the value stays the same.
    ///
    /// # Errors
    /// [`LedgerError::Budget`], [`LedgerError::Days`].
    pub fn memoized(
        id: &str,
        eps: f64,
        eps_perm: f64,
        first_day: u32,
        last_day: u32,
    ) -> Result<Self, LedgerError> {
        Self::new(id, eps, Some(eps_perm), first_day, last_day)
    }

    fn new(
        id: &str,
        eps: f64,
        eps_perm: Option<f64>,
        first_day: u32,
        last_day: u32,
    ) -> Result<Self, LedgerError> {
        let named = |what: &str, value: f64| LedgerError::Budget {
            survey: id.to_owned(),
            what: what.to_owned(),
            value,
        };
        if !(eps > 0.0 && eps.is_finite()) {
            return Err(named("eps", eps));
        }
        if let Some(perm) = eps_perm
            && !(perm >= eps && perm.is_finite())
        {
            return Err(named("eps_perm (at least its eps)", perm));
        }
        if first_day > last_day {
            return Err(LedgerError::Days {
                survey: id.to_owned(),
                first_day,
                last_day,
            });
        }
        Ok(Self {
            id: id.to_owned(),
            eps,
            eps_perm,
            first_day,
            last_day,
        })
    }

    /// Its name.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// Why a ledger refused a survey or a record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// A budget that is not positive and finite (or a memo below its report's budget).
    #[error("survey {survey}: {what} must be positive and finite, got {value}")]
    Budget {
        /// The survey.
        survey: String,
        /// Which budget.
        what: String,
        /// Its value.
        value: f64,
    },
    /// A survey whose last day precedes its first.
    #[error("survey {survey}: its days {first_day}..={last_day} are empty")]
    Days {
        /// The survey.
        survey: String,
        /// Its first day.
        first_day: u32,
        /// Its last day.
        last_day: u32,
    },
    /// Two surveys of one name.
    #[error("survey {0} is defined twice")]
    DuplicateSurvey(String),
    /// A record of a survey the ledger does not hold.
    #[error("survey {survey} is unknown (the surveys are {known})")]
    UnknownSurvey {
        /// The survey named.
        survey: String,
        /// The surveys the ledger holds.
        known: String,
    },
    /// A tagged report without all three tags ([`Ledger::record_tags`]).
    #[error(
        "the report lacks the tag{} {} (`ldp perturb --user ID --survey ID --day D` writes them)",
        if .0.len() > 1 { "s" } else { "" },
        .0.join(", ")
    )]
    MissingTags(Vec<&'static str>),
    /// A record of a user outside the roster.
    #[error("user {0} is not on the roster")]
    UnknownUser(String),
    /// A record outside its survey's days.
    #[error("survey {survey} runs on days {first_day}..={last_day}, not on day {day}")]
    DayOutside {
        /// The survey.
        survey: String,
        /// The day recorded.
        day: u32,
        /// Its first day.
        first_day: u32,
        /// Its last day.
        last_day: u32,
    },
    /// One user's report to one survey recorded twice on one day.
    #[error("user {user} already reported to survey {survey} on day {day}")]
    SameDay {
        /// The user.
        user: String,
        /// The survey.
        survey: String,
        /// The day.
        day: u32,
    },
    /// A delta for advanced composition outside (0, 1).
    #[error("delta must lie strictly between 0 and 1, got {0}")]
    Delta(f64),
}

/// What one user spent.
#[derive(Debug, Clone, PartialEq)]
pub struct UserSpend {
    /// The user.
    pub user: String,
    /// Reports recorded.
    pub reports: u64,
    /// Distinct days with a report.
    pub days: u64,
    /// The most spent on one day (basic composition within the day; a memoized survey's
    /// memo is charged on its first day).
    pub max_day: f64,
    /// The day of `max_day` (the first, if several).
    pub max_day_at: u32,
    /// Basic composition over everything recorded.
    pub basic: f64,
    /// Advanced composition at the delta asked for, at most `basic`; `None` without one.
    pub advanced: Option<f64>,
}

impl UserSpend {
    /// The budget this user is held to: the advanced composition where asked for, else
    /// the basic one.
    #[must_use]
    pub fn spent(&self) -> f64 {
        self.advanced.unwrap_or(self.basic)
    }
}

/// Surveys, an optional roster, and what each user reported to them.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    surveys: BTreeMap<String, Survey>,
    roster: Option<std::collections::BTreeSet<String>>,
    /// user -> survey -> days.
    records: BTreeMap<String, BTreeMap<String, std::collections::BTreeSet<u32>>>,
}

impl Ledger {
    /// A ledger of `surveys`.
    ///
    /// # Errors
    /// [`LedgerError::DuplicateSurvey`].
    pub fn new(surveys: Vec<Survey>) -> Result<Self, LedgerError> {
        let mut by_id = BTreeMap::new();
        for s in surveys {
            if by_id.contains_key(&s.id) {
                return Err(LedgerError::DuplicateSurvey(s.id));
            }
            by_id.insert(s.id.clone(), s);
        }
        Ok(Self {
            surveys: by_id,
            ..Self::default()
        })
    }

    /// Only these users may be recorded; anyone else is [`LedgerError::UnknownUser`].
    #[must_use]
    pub fn with_roster(mut self, users: impl IntoIterator<Item = String>) -> Self {
        self.roster = Some(users.into_iter().collect());
        self
    }

    /// Records that `user` reported to `survey` on `day`.
    ///
    /// # Errors
    /// [`LedgerError::UnknownSurvey`], [`LedgerError::UnknownUser`],
    /// [`LedgerError::DayOutside`], [`LedgerError::SameDay`].
    pub fn record(&mut self, user: &str, survey: &str, day: u32) -> Result<(), LedgerError> {
        let s = self
            .surveys
            .get(survey)
            .ok_or_else(|| LedgerError::UnknownSurvey {
                survey: survey.to_owned(),
                known: self.surveys.keys().cloned().collect::<Vec<_>>().join(", "),
            })?;
        if let Some(roster) = &self.roster
            && !roster.contains(user)
        {
            return Err(LedgerError::UnknownUser(user.to_owned()));
        }
        if !(s.first_day..=s.last_day).contains(&day) {
            return Err(LedgerError::DayOutside {
                survey: survey.to_owned(),
                day,
                first_day: s.first_day,
                last_day: s.last_day,
            });
        }
        let days = self
            .records
            .entry(user.to_owned())
            .or_default()
            .entry(survey.to_owned())
            .or_default();
        if !days.insert(day) {
            return Err(LedgerError::SameDay {
                user: user.to_owned(),
                survey: survey.to_owned(),
                day,
            });
        }
        Ok(())
    }

    /// Records a report by its tags (`user`, `survey`, `day`: see
    /// [`ldp_core::ReportTags`]), as [`Ledger::record`] does.
    ///
    /// # Errors
    /// [`LedgerError::MissingTags`] naming each tag missing, then [`Ledger::record`]'s.
    pub fn record_tags(&mut self, tags: &ldp_core::ReportTags) -> Result<(), LedgerError> {
        match tags {
            ldp_core::ReportTags {
                user: Some(user),
                survey: Some(survey),
                day: Some(day),
            } => self.record(user, survey, *day),
            _ => Err(LedgerError::MissingTags(
                [
                    ("user", tags.user.is_none()),
                    ("survey", tags.survey.is_none()),
                    ("day", tags.day.is_none()),
                ]
                .into_iter()
                .filter_map(|(name, missing)| missing.then_some(name))
                .collect(),
            )),
        }
    }

    /// What each user spent, in the order of their names; with `delta`, also by
    /// advanced composition.
    ///
    /// # Errors
    /// [`LedgerError::Delta`].
    pub fn users(&self, delta: Option<f64>) -> Result<Vec<UserSpend>, LedgerError> {
        if let Some(d) = delta
            && !(d > 0.0 && d < 1.0)
        {
            return Err(LedgerError::Delta(d));
        }
        Ok(self
            .records
            .iter()
            .map(|(user, surveys)| self.spend(user, surveys, delta))
            .collect())
    }

    fn spend(
        &self,
        user: &str,
        surveys: &BTreeMap<String, std::collections::BTreeSet<u32>>,
        delta: Option<f64>,
    ) -> UserSpend {
        // The charges, by survey (a budget and how many times it is spent, so that 90
        // reports at 0.2 sum to 18, not 17.999999999999996): each fresh report its eps on
        // its day, each memo its eps_perm on its first day.
        let mut charges: Vec<(f64, usize)> = Vec::new();
        let mut per_day: BTreeMap<u32, f64> = BTreeMap::new();
        let mut reports = 0u64;
        for (id, days) in surveys {
            let s = &self.surveys[id];
            reports += days.len() as u64;
            match (s.eps_perm, days.first()) {
                (Some(perm), Some(&first)) => {
                    charges.push((perm, 1));
                    *per_day.entry(first).or_default() += perm;
                    // Its later days are days with a report, at no further cost.
                    for &d in days {
                        per_day.entry(d).or_default();
                    }
                }
                _ => {
                    charges.push((s.eps, days.len()));
                    for &d in days {
                        *per_day.entry(d).or_default() += s.eps;
                    }
                }
            }
        }
        let (max_day_at, max_day) =
            per_day.iter().fold(
                (0, 0.0),
                |best, (&d, &e)| if e > best.1 { (d, e) } else { best },
            );
        let basic = charges.iter().map(|&(e, n)| e * n as f64).sum();
        UserSpend {
            user: user.to_owned(),
            reports,
            days: per_day.len() as u64,
            max_day,
            max_day_at,
            basic,
            advanced: delta.map(|d| advanced_grouped(&charges, d).min(basic)),
        }
    }
}

/// Kairouz, Oh and Viswanath's advanced composition of pure eps_i-LDP reports at `delta`
/// (their Theorem 3.5): sum eps_i tanh(eps_i / 2) + sqrt(2 ln(1/delta) sum eps_i^2).
#[must_use]
pub fn advanced(budgets: &[f64], delta: f64) -> f64 {
    let each: Vec<(f64, usize)> = budgets.iter().map(|&e| (e, 1)).collect();
    advanced_grouped(&each, delta)
}

/// [`advanced`] of budgets each spent a number of times.
fn advanced_grouped(charges: &[(f64, usize)], delta: f64) -> f64 {
    let drift: f64 = charges
        .iter()
        .map(|&(e, n)| n as f64 * e * (e / 2.0).tanh())
        .sum();
    let squares: f64 = charges.iter().map(|&(e, n)| n as f64 * e * e).sum();
    drift + (2.0 * (1.0 / delta).ln() * squares).sqrt()
}
