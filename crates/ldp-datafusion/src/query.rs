//! The client side: tables of reports and SQL with the spec filled in.

use std::path::PathBuf;

use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;
use ldp_core::Spec;

use crate::session::{DataFusionLdpError, register_reports, register_reports_as, spec_literal};

/// A table of report files.
#[derive(Debug, Clone)]
pub struct ReportTable {
    /// Its name in SQL.
    pub name: String,
    /// A Parquet file or a directory of them.
    pub path: PathBuf,
    /// The mechanism of files that record no spec (see
    /// [`register_reports_as`](crate::register_reports_as)); `None` requires every file to
    /// record one.
    pub spec: Option<Spec>,
}

/// Registers `tables` in `ctx` (with Hive-style `partition_columns`), fills in the spec
/// placeholders of `sql` and runs it: `{spec}` is the spec of the only table, and
/// `{spec:NAME}` the spec of table NAME, each as a SQL string literal.
///
/// ```no_run
/// # async fn run(ctx: datafusion::prelude::SessionContext) -> Result<(), Box<dyn std::error::Error>> {
/// use ldp_datafusion::{ReportTable, run_sql};
/// let tables = [ReportTable { name: "reports".into(), path: "reports/".into(), spec: None }];
/// let batches = run_sql(&ctx, &tables, &["day"],
///     "SELECT day, ldp_estimate(report, {spec}) FROM reports GROUP BY day ORDER BY day").await?;
/// # Ok(()) }
/// ```
pub async fn run_sql(
    ctx: &SessionContext,
    tables: &[ReportTable],
    partition_columns: &[&str],
    sql: &str,
) -> Result<Vec<RecordBatch>, DataFusionLdpError> {
    let mut specs = Vec::new();
    for t in tables {
        let spec = match &t.spec {
            Some(spec) => {
                register_reports_as(ctx, &t.name, &t.path, partition_columns, spec).await?;
                *spec
            }
            None => register_reports(ctx, &t.name, &t.path, partition_columns).await?,
        };
        specs.push((t.name.clone(), spec));
    }
    let sql = fill_specs(sql, &specs)?;
    Ok(ctx.sql(&sql).await?.collect().await?)
}

/// `sql` with `{spec}` and `{spec:NAME}` replaced by the tables' specs.
pub fn fill_specs(sql: &str, specs: &[(String, Spec)]) -> Result<String, DataFusionLdpError> {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find("{spec") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail
            .find('}')
            .ok_or_else(|| placeholder(tail, "is not closed"))?;
        let spec = match &tail[..=end] {
            "{spec}" => match specs {
                [(_, spec)] => spec,
                _ => {
                    return Err(placeholder(
                        "{spec}",
                        "needs exactly one table; name it: {spec:NAME}",
                    ));
                }
            },
            named => {
                let name = named
                    .strip_prefix("{spec:")
                    .and_then(|n| n.strip_suffix('}'))
                    .ok_or_else(|| placeholder(named, "is neither {spec} nor {spec:NAME}"))?;
                &specs
                    .iter()
                    .find(|(n, _)| n == name)
                    .ok_or_else(|| placeholder(named, "names no table"))?
                    .1
            }
        };
        out.push_str(&spec_literal(spec));
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn placeholder(text: &str, what: &str) -> DataFusionLdpError {
    let shown: String = text.chars().take(40).collect();
    DataFusionLdpError::Placeholder(format!("{shown} {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ldp_core::{DomainSize, Epsilon, Protocol};

    #[test]
    fn placeholders_are_filled_and_bad_ones_named() {
        let spec =
            |p| Spec::classic(p, DomainSize::new(4).unwrap(), Epsilon::new(1.0).unwrap()).unwrap();
        let one = [("r".to_owned(), spec(Protocol::Grr))];
        assert_eq!(
            fill_specs("x {spec} y {spec:r}", &one).unwrap(),
            format!("x {0} y {0}", spec_literal(&spec(Protocol::Grr)))
        );
        let two = [one[0].clone(), ("s".to_owned(), spec(Protocol::Oue))];
        for (sql, needle) in [
            ("{spec}", "exactly one table"),
            ("{spec:t}", "names no table"),
            ("{spec", "not closed"),
            ("{specs}", "neither"),
        ] {
            let e = fill_specs(sql, &two).unwrap_err().to_string();
            assert!(e.contains(needle), "{sql}: {e}");
        }
    }
}
