//! Sessions that know the functions and the report files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ballista_core::registry::BallistaFunctionRegistry;
use datafusion::arrow::datatypes::DataType;
use datafusion::error::DataFusionError;
use datafusion::execution::FunctionRegistry;
use datafusion::execution::session_state::{SessionState, SessionStateBuilder};
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use ldp_arrow::multidim::{ParquetMultidimReports, read_multidim_spec};
use ldp_arrow::{ArrowLdpError, ParquetReports, parquet_files, read_spec};
use ldp_core::Spec;
use ldp_core::multidim::MultidimSpec;

use crate::udaf::functions;

/// What went wrong setting up a query over report files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataFusionLdpError {
    /// A file could not be listed or its spec read.
    #[error(transparent)]
    Reports(#[from] ArrowLdpError),
    /// Two files of one table record different mechanisms.
    #[error(
        "{path} holds reports of {found}, but {first_path} holds reports of {first}: one table, one mechanism"
    )]
    MixedSpecs {
        /// The first file.
        first_path: String,
        /// Its spec (JSON).
        first: String,
        /// A file that differs.
        path: String,
        /// Its spec (JSON).
        found: String,
    },
    /// A file records no spec, and none was named for it.
    #[error(
        "{path} has no `ldp.spec` metadata, so it does not say which mechanism made its reports: name it (ldp-query --spec NAME=JSON, or register_reports_as)"
    )]
    NoSpec {
        /// The file.
        path: String,
    },
    /// A file records no spec of several attributes (`ldp.multidim`).
    #[error(
        "{path} has no `ldp.multidim` metadata, so it does not say which collection of several attributes made its reports"
    )]
    NoMultidimSpec {
        /// The file.
        path: String,
    },
    /// A `{spec}` placeholder of the SQL cannot be filled.
    #[error("SQL placeholder {0}")]
    Placeholder(String),
    /// DataFusion refused the table or the query.
    #[error(transparent)]
    DataFusion(#[from] DataFusionError),
}

/// Registers `ldp_estimate` and `ldp_counts` in `ctx`.
pub fn register_functions(ctx: &SessionContext) {
    for f in functions() {
        ctx.register_udaf((*f).clone());
    }
}

/// A session state with DataFusion's defaults and the two functions: Ballista's
/// scheduler builds every session with it.
pub fn session_state(config: SessionConfig) -> datafusion::error::Result<SessionState> {
    let mut state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    for f in functions() {
        state.register_udaf(f)?;
    }
    Ok(state)
}

/// A client context for the Ballista scheduler at `url` (`df://HOST:PORT`) whose SQL
/// knows the functions. (Ballista's client session replaces the aggregate functions of the
/// state it is given by its own list, so they are registered again on the context.)
pub async fn remote_context(
    url: &str,
    config: SessionConfig,
) -> datafusion::error::Result<SessionContext> {
    use ballista::prelude::{SessionConfigExt, SessionContextExt};
    let config = config.upgrade_for_ballista();
    let ctx = SessionContext::remote_with_state(url, session_state(config)?).await?;
    register_functions(&ctx);
    Ok(ctx)
}

/// A Ballista scheduler and executor in this process (for tests and notebooks), with
/// the functions registered everywhere.
pub async fn standalone_context(
    config: SessionConfig,
) -> datafusion::error::Result<SessionContext> {
    use ballista::prelude::{SessionConfigExt, SessionContextExt};
    let config = config.upgrade_for_ballista();
    let ctx = SessionContext::standalone_with_state(session_state(config)?).await?;
    register_functions(&ctx);
    Ok(ctx)
}

/// The function registry of a Ballista executor: the built-in functions and ours.
pub fn function_registry() -> Arc<BallistaFunctionRegistry> {
    let mut registry = BallistaFunctionRegistry::default();
    for f in functions() {
        registry.aggregate_functions.insert(f.name().to_owned(), f);
    }
    Arc::new(registry)
}

/// Registers the Parquet report files at `path` (a file, or every `.parquet` file under a
/// directory) as table `name`, with Hive-style partition columns (`day=...` directories)
/// read as strings, and returns the spec the files record. Every file must record the
/// same spec.
pub async fn register_reports(
    ctx: &SessionContext,
    name: &str,
    path: &Path,
    partition_columns: &[&str],
) -> Result<Spec, DataFusionLdpError> {
    let files = parquet_files(path)?;
    let spec_of = |file: &Path| {
        read_spec(file).map_err(|e| match e {
            ArrowLdpError::NoSpec => DataFusionLdpError::NoSpec {
                path: file.display().to_string(),
            },
            other => in_file(file, other).into(),
        })
    };
    let first = spec_of(&files[0])?;
    for file in &files[1..] {
        let found = spec_of(file)?;
        if found != first {
            return Err(DataFusionLdpError::MixedSpecs {
                first_path: files[0].display().to_string(),
                first: json(&first),
                path: file.display().to_string(),
                found: json(&found),
            });
        }
    }
    register_parquet(ctx, name, path, partition_columns).await?;
    Ok(first)
}

/// Registers the Parquet files of reports of several attributes per user at `path` (as
/// `ldp_arrow::multidim` writes them: one row per user, nullable columns `report_0 ..
/// report_{d-1}`) as table `name`, with Hive-style partition columns read as strings, and
/// returns the collection's spec that the files record under `ldp.multidim`. Every file
/// must record the same spec and hold its `d` columns; a file of one attribute's reports
/// (`ldp.spec`) is refused. Estimate attribute `j` with `ldp_estimate(report_j,
/// attribute_literal(&spec, j))` ([`attribute_literal`]).
pub async fn register_multidim_reports(
    ctx: &SessionContext,
    name: &str,
    path: &Path,
    partition_columns: &[&str],
) -> Result<MultidimSpec, DataFusionLdpError> {
    let files = parquet_files(path)?;
    let spec_of = |file: &Path| {
        read_multidim_spec(file).map_err(|e| match e {
            ArrowLdpError::NoSpec => DataFusionLdpError::NoMultidimSpec {
                path: file.display().to_string(),
            },
            other => in_file(file, other).into(),
        })
    };
    let first = spec_of(&files[0])?;
    for file in &files[1..] {
        let found = spec_of(file)?;
        if found != first {
            return Err(DataFusionLdpError::MixedSpecs {
                first_path: files[0].display().to_string(),
                first: multidim_json(&first),
                path: file.display().to_string(),
                found: multidim_json(&found),
            });
        }
    }
    // Each file's columns `report_0 .. report_{d-1}` (and its spec, again).
    ParquetMultidimReports::open(path, &first)?;
    register_parquet(ctx, name, path, partition_columns).await?;
    Ok(first)
}

/// `error` with the file it concerns.
fn in_file(path: &Path, error: ArrowLdpError) -> ArrowLdpError {
    match error {
        ArrowLdpError::Io { .. } | ArrowLdpError::InFile { .. } => error,
        other => ArrowLdpError::InFile {
            path: path.display().to_string(),
            error: Box::new(other),
        },
    }
}

/// [`register_reports`] for files that may not record their spec (written by a tool that
/// dropped the Parquet metadata): every file is checked to hold reports of `expected`, a
/// file that records no spec is read as `expected`'s, and a file that records another is
/// refused. Returns the files that record none, for the caller to say so.
pub async fn register_reports_as(
    ctx: &SessionContext,
    name: &str,
    path: &Path,
    partition_columns: &[&str],
    expected: &Spec,
) -> Result<Vec<PathBuf>, DataFusionLdpError> {
    let unrecorded = ParquetReports::open(path, expected)?.unrecorded().to_vec();
    register_parquet(ctx, name, path, partition_columns).await?;
    Ok(unrecorded)
}

async fn register_parquet(
    ctx: &SessionContext,
    name: &str,
    path: &Path,
    partition_columns: &[&str],
) -> Result<(), DataFusionLdpError> {
    let options = ParquetReadOptions::default().table_partition_cols(
        partition_columns
            .iter()
            .map(|c| ((*c).to_owned(), DataType::Utf8))
            .collect(),
    );
    let mut location = path.display().to_string();
    if path.is_dir() && !location.ends_with('/') {
        location.push('/');
    }
    ctx.register_parquet(name, &location, options).await?;
    Ok(())
}

fn json(spec: &Spec) -> String {
    serde_json::to_string(spec).expect("a spec serializes")
}

fn multidim_json(spec: &MultidimSpec) -> String {
    serde_json::to_string(spec).expect("a multidim spec serializes")
}

/// Attribute `attribute` of the collection `spec` as a SQL string literal, for the second
/// argument of the functions over column `report_{attribute}`:
/// `'{"multidim": <spec>, "attribute": <attribute>}'`.
///
/// ```
/// use ldp_core::multidim::{MultidimSpec, Solution};
/// use ldp_core::{DomainSize, Epsilon, Protocol};
/// let domains = [DomainSize::new(4)?, DomainSize::new(3)?];
/// let spec = MultidimSpec::classic(Solution::Smp, Protocol::Grr, Epsilon::new(1.0)?, &domains, None)?;
/// let literal = ldp_datafusion::attribute_literal(&spec, 1);
/// assert!(literal.starts_with(r#"'{"multidim":{"solution":"smp""#));
/// assert!(literal.ends_with(r#""attribute":1}'"#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn attribute_literal(spec: &MultidimSpec, attribute: usize) -> String {
    let json = format!(
        r#"{{"multidim":{},"attribute":{attribute}}}"#,
        multidim_json(spec)
    );
    format!("'{}'", json.replace('\'', "''"))
}

/// `spec` as a SQL string literal, for the second argument of the functions.
///
/// ```
/// use ldp_core::{DomainSize, Epsilon, Protocol, Spec};
/// let spec = Spec::classic(Protocol::Grr, DomainSize::new(4)?, Epsilon::new(1.0)?)?;
/// assert_eq!(ldp_datafusion::spec_literal(&spec), r#"'{"k":4,"eps":1.0,"family":"grr"}'"#);
/// # Ok::<(), ldp_core::Error>(())
/// ```
pub fn spec_literal(spec: &Spec) -> String {
    format!("'{}'", json(spec).replace('\'', "''"))
}
