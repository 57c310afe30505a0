//! `ldp ledger`: what each user spent over surveys, by basic and advanced composition,
//! and the users and days over a limit.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use clap::Args;
use ldp_analytic::ledger::{Ledger, Survey};
use ldp_core::ReportTags;
use ldp_jsonl::lines::LineChunks;

use crate::output::{Format, Value, number, print};

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  ldp ledger --surveys surveys.csv --records records.csv --limit 10 --day-limit 4
  ldp ledger --surveys surveys.csv --records records.csv --delta 1e-6 --roster users.txt
  ldp ledger --surveys surveys.csv --reports day1.jsonl --reports day2.parquet

surveys.csv: survey,eps,first_day,last_day[,eps_perm] (eps_perm: a memoized survey, charged
once per user). records.csv: user,survey,day (one report each). --reports: reports tagged
with user, survey and day (`ldp perturb --user --survey --day`), JSON lines or .parquet.")]
pub(crate) struct LedgerArgs {
    /// The surveys: a CSV of survey,eps,first_day,last_day and optionally eps_perm (a
    /// memoized survey: its reports come from one memo of that budget, charged once per
    /// user while the value stays the same).
    #[arg(long, value_name = "FILE.csv")]
    surveys: PathBuf,
    /// The reports: a CSV of user,survey,day, one row per report.
    #[arg(long, value_name = "FILE.csv", required_unless_present = "reports")]
    records: Option<PathBuf>,
    /// Reports tagged with their user, survey and day (`ldp perturb --user ID --survey ID
    /// --day D`): JSON lines, or Parquet for a name ending in .parquet. Repeatable, and
    /// beside --records; every report must carry all three tags. The reports themselves
    /// are not read.
    #[arg(long, value_name = "FILE")]
    reports: Vec<PathBuf>,
    /// The users who may report, one per line: a record of anyone else is an error.
    #[arg(long, value_name = "FILE")]
    roster: Option<PathBuf>,
    /// Add `advanced_eps`: advanced composition at this delta (Kairouz, Oh and Viswanath
    /// 2015), at most the basic sum; the limits then apply to it.
    #[arg(long)]
    delta: Option<f64>,
    /// Flag the users who spent more than E over everything recorded.
    #[arg(long, value_name = "E")]
    limit: Option<f64>,
    /// Flag the users who spent more than E on one day (basic composition within the day).
    #[arg(long = "day-limit", value_name = "E")]
    day_limit: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Csv)]
    format: Format,
}

#[derive(serde::Deserialize)]
struct SurveyRow {
    survey: String,
    eps: f64,
    first_day: u32,
    last_day: u32,
    #[serde(default)]
    eps_perm: Option<f64>,
}

#[derive(serde::Deserialize)]
struct RecordRow {
    user: String,
    survey: String,
    day: u32,
}

/// The rows of a CSV file with a header, each with its line number, deserialized.
fn rows<T: serde::de::DeserializeOwned>(
    path: &Path,
    mut each: impl FnMut(u64, T) -> Result<()>,
) -> Result<()> {
    let flag = || format!("{}", path.display());
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_path(path)
        .with_context(flag)?;
    let headers = reader.headers().with_context(flag)?.clone();
    for record in reader.records() {
        let record = record.map_err(|e| anyhow!("{e}")).with_context(flag)?;
        let line = record.position().map_or(0, csv::Position::line);
        let row: T = record
            .deserialize(Some(&headers))
            .map_err(|e| match e.kind() {
                // "line 7: day: invalid digit found in string", naming the column.
                csv::ErrorKind::Deserialize { err, .. } => {
                    let column = err
                        .field()
                        .and_then(|i| headers.get(i as usize))
                        .map_or_else(String::new, |c| format!("{c}: "));
                    anyhow!("line {line}: {column}{}", err.kind())
                }
                _ => anyhow!("line {line}: {e}"),
            })
            .with_context(flag)?;
        each(line, row).with_context(flag)?;
    }
    Ok(())
}

/// Records the tags of every report in `path` (JSON lines, or Parquet by its name).
fn tagged_reports(path: &Path, ledger: &mut Ledger) -> Result<()> {
    let record = |ledger: &mut Ledger, tags: ReportTags| Ok(ledger.record_tags(&tags)?);
    if path.extension().is_some_and(|e| e == "parquet") {
        return ldp_arrow::tags::for_each_tags(path, |row, tags| {
            record(ledger, tags).with_context(|| format!("row {row}"))
        });
    }
    let file = std::fs::File::open(path)?;
    let mut lines = LineChunks::new(std::io::BufReader::new(file), TAGGED_LINE_CAP);
    while let Some(chunk) = lines.next_chunk(4096)? {
        for &(number, line) in &chunk {
            ldp_jsonl::read_tags(line)
                .map_err(|e| anyhow!("malformed tags: {e}"))
                .and_then(|tags| record(ledger, tags))
                .with_context(|| format!("line {number}"))?;
        }
    }
    Ok(())
}

/// The longest report line read for its tags: SHE's at k = 10^6, spaced out, fits.
const TAGGED_LINE_CAP: usize = 128 << 20;

pub(crate) fn run(a: &LedgerArgs) -> Result<()> {
    for (flag, value) in [("--limit", a.limit), ("--day-limit", a.day_limit)] {
        if let Some(v) = value
            && !(v >= 0.0 && v.is_finite())
        {
            anyhow::bail!(
                "{flag} {}: a budget limit must be finite and >= 0",
                number(v)
            );
        }
    }
    if let Some(d) = a.delta
        && !(d > 0.0 && d < 1.0)
    {
        anyhow::bail!(
            "--delta {}: delta must lie strictly between 0 and 1",
            number(d)
        );
    }
    let mut surveys = Vec::new();
    rows(&a.surveys, |line, s: SurveyRow| {
        let survey = match s.eps_perm {
            Some(perm) => Survey::memoized(&s.survey, s.eps, perm, s.first_day, s.last_day),
            None => Survey::fresh(&s.survey, s.eps, s.first_day, s.last_day),
        };
        surveys.push(survey.with_context(|| format!("line {line}"))?);
        Ok(())
    })?;
    let mut ledger = Ledger::new(surveys).with_context(|| a.surveys.display().to_string())?;
    if let Some(path) = &a.roster {
        let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
        let users = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned);
        ledger = ledger.with_roster(users);
    }
    if let Some(records) = &a.records {
        rows(records, |line, r: RecordRow| {
            ledger
                .record(&r.user, &r.survey, r.day)
                .with_context(|| format!("line {line}"))
        })?;
    }
    for path in &a.reports {
        tagged_reports(path, &mut ledger)
            .with_context(|| format!("--reports {}", path.display()))?;
    }
    let users = ledger.users(a.delta).context("--delta")?;

    let mut columns = vec!["user", "reports", "days", "basic_eps"];
    if a.delta.is_some() {
        columns.push("advanced_eps");
    }
    columns.extend(["max_day_eps", "max_day", "over"]);
    let (mut over_total, mut over_day) = (0, 0);
    let rows: Vec<Vec<Value>> = users
        .iter()
        .map(|u| {
            let mut over = Vec::new();
            if a.limit.is_some_and(|l| u.spent() > l) {
                over.push("total");
                over_total += 1;
            }
            if a.day_limit.is_some_and(|l| u.max_day > l) {
                over.push("day");
                over_day += 1;
            }
            let mut row = vec![
                Value::from(u.user.as_str()),
                Value::Int(u.reports),
                Value::Int(u.days),
                Value::number(u.basic),
            ];
            if let Some(adv) = u.advanced {
                row.push(Value::Num(adv));
            }
            row.extend([
                Value::number(u.max_day),
                Value::Int(u64::from(u.max_day_at)),
                Value::Text(over.join("+")),
            ]);
            row
        })
        .collect();
    print(&mut std::io::stdout().lock(), a.format, &columns, &rows)?;
    if let Some(l) = a.limit {
        note!(
            "ldp: {over_total} of {} users spent more than --limit {}{}",
            users.len(),
            number(l),
            if a.delta.is_some() {
                " (advanced composition)"
            } else {
                " (basic composition)"
            }
        );
    }
    if let Some(l) = a.day_limit {
        note!(
            "ldp: {over_day} of {} users spent more than --day-limit {} on one day",
            users.len(),
            number(l)
        );
    }
    Ok(())
}
