//! Errors of the experiment runner.

/// Why an experiment could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExperimentError {
    /// The configuration is malformed or inconsistent.
    #[error("configuration: {0}")]
    Config(String),
    /// A protocol parameter is invalid.
    #[error(transparent)]
    Param(#[from] ldp_core::ParamError),
    /// Tuning failed.
    #[error(transparent)]
    Optimize(#[from] ldp_optimize::OptimizeError),
    /// The analytic poisoning setting is invalid.
    #[error(transparent)]
    Poisoning(#[from] ldp_analytic::PoisoningError),
    /// The simulation could not run.
    #[error(transparent)]
    Measure(#[from] ldp_attack::MeasureError),
    /// A population could not be built.
    #[error(transparent)]
    Data(#[from] ldp_attack::DataError),
    /// A multidimensional client, attack or table was refused.
    #[error(transparent)]
    Multidim(#[from] ldp_core::multidim::MultidimError),
    /// Re-identification could not run.
    #[error(transparent)]
    Reidentify(#[from] ldp_attack::multidim::ReidentifyError),
    /// Attribute inference could not run.
    #[error(transparent)]
    Inference(#[from] ldp_attack::multidim::InferenceError),
    /// The shuffle accountant refused a setting.
    #[error(transparent)]
    Shuffle(#[from] ldp_analytic::shuffle::ShuffleError),
    /// A shipped table could not be used.
    #[error(transparent)]
    Table(#[from] ldp_attack::TableError),
    /// Drawing the figure failed.
    #[error("plotting: {0}")]
    Plot(String),
    /// Writing an output failed.
    #[error("writing {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}
