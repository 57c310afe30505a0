//! The client side: tables of reports and SQL with the spec filled in.

use std::path::{Path, PathBuf};

use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;
use ldp_arrow::multidim::read_multidim_spec;
use ldp_arrow::parquet_files;
use ldp_core::Spec;
use ldp_core::multidim::MultidimSpec;

use crate::session::{
    DataFusionLdpError, attribute_literal, register_multidim_reports, register_reports,
    register_reports_as, spec_literal,
};

/// A table of report files.
#[derive(Debug, Clone)]
pub struct ReportTable {
    /// Its name in SQL.
    pub name: String,
    /// A Parquet file or a directory of them.
    pub path: PathBuf,
    /// The mechanism of files that record no spec (see
    /// [`register_reports_as`](crate::register_reports_as)); `None` requires every file to
    /// record one (`ldp.spec`, or `ldp.multidim` for reports of several attributes).
    pub spec: Option<Spec>,
}

/// Registers `tables` in `ctx` (with Hive-style `partition_columns`), fills in the spec
/// placeholders of `sql` and runs it: `{spec}` is the spec of the only table, and
/// `{spec:NAME}` the spec of table NAME, each as a SQL string literal. A table whose files
/// record reports of several attributes (`ldp.multidim`, and no `spec` given) is
/// registered by [`register_multidim_reports`]; `{attribute:J}` is then attribute J of the
/// only such table and `{attribute:NAME:J}` attribute J of table NAME, as
/// [`attribute_literal`] writes them: `ldp_estimate(report_1, {attribute:1})`.
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
    let mut collections = Vec::new();
    for t in tables {
        let spec = match &t.spec {
            Some(spec) => {
                register_reports_as(ctx, &t.name, &t.path, partition_columns, spec).await?;
                *spec
            }
            None if records_several_attributes(&t.path)? => {
                let collection =
                    register_multidim_reports(ctx, &t.name, &t.path, partition_columns).await?;
                collections.push((t.name.clone(), collection));
                continue;
            }
            None => register_reports(ctx, &t.name, &t.path, partition_columns).await?,
        };
        specs.push((t.name.clone(), spec));
    }
    let sql = fill_specs(sql, &specs)?;
    let sql = fill_attributes(&sql, &collections)?;
    Ok(ctx.sql(&sql).await?.collect().await?)
}

/// Whether the first file at `path` records reports of several attributes.
fn records_several_attributes(path: &Path) -> Result<bool, DataFusionLdpError> {
    let files = parquet_files(path)?;
    Ok(files
        .first()
        .is_some_and(|first| read_multidim_spec(first).is_ok()))
}

/// `sql` with `{attribute:J}` and `{attribute:NAME:J}` replaced by attribute J of the
/// tables' collections ([`attribute_literal`]).
fn fill_attributes(
    sql: &str,
    collections: &[(String, MultidimSpec)],
) -> Result<String, DataFusionLdpError> {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find("{attribute") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail
            .find('}')
            .ok_or_else(|| placeholder(tail, "is not closed"))?;
        let named = &tail[..=end];
        let inner = named
            .strip_prefix("{attribute:")
            .and_then(|n| n.strip_suffix('}'))
            .ok_or_else(|| placeholder(named, "is neither {attribute:J} nor {attribute:NAME:J}"))?;
        let (collection, index) = match inner.rsplit_once(':') {
            None => match collections {
                [(_, collection)] => (collection, inner),
                _ => {
                    return Err(placeholder(
                        named,
                        "needs exactly one table of several attributes; name it: {attribute:NAME:J}",
                    ));
                }
            },
            Some((name, index)) => (
                &collections
                    .iter()
                    .find(|(n, _)| n == name)
                    .ok_or_else(|| placeholder(named, "names no table of several attributes"))?
                    .1,
                index,
            ),
        };
        let attribute = index
            .parse::<usize>()
            .ok()
            .filter(|&j| j < collection.specs().len())
            .ok_or_else(|| {
                placeholder(
                    named,
                    &format!(
                        "names no attribute: the table has attributes 0..{}",
                        collection.specs().len()
                    ),
                )
            })?;
        out.push_str(&attribute_literal(collection, attribute));
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
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

    #[test]
    fn attribute_placeholders_are_filled_and_bad_ones_named() {
        use ldp_core::multidim::Solution;
        let domains = [DomainSize::new(4).unwrap(), DomainSize::new(3).unwrap()];
        let collection = |eps| {
            MultidimSpec::classic(
                Solution::Smp,
                Protocol::Grr,
                Epsilon::new(eps).unwrap(),
                &domains,
                None,
            )
            .unwrap()
        };
        let one = [("u".to_owned(), collection(1.0))];
        assert_eq!(
            fill_attributes("x {attribute:1} y {attribute:u:0}", &one).unwrap(),
            format!(
                "x {} y {}",
                attribute_literal(&one[0].1, 1),
                attribute_literal(&one[0].1, 0)
            )
        );
        let two = [one[0].clone(), ("v".to_owned(), collection(2.0))];
        for (sql, needle) in [
            ("{attribute:0}", "exactly one table"),
            ("{attribute:w:0}", "names no table"),
            ("{attribute:v:2}", "attributes 0..2"),
            ("{attribute:v:x}", "attributes 0..2"),
            ("{attribute", "not closed"),
            ("{attributes}", "neither"),
        ] {
            let e = fill_attributes(sql, &two).unwrap_err().to_string();
            assert!(e.contains(needle), "{sql}: {e}");
        }
    }
}
