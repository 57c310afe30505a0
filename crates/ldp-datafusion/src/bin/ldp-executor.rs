//! A Ballista executor that resolves `ldp_estimate` and `ldp_counts` in the plans it runs.

use std::sync::Arc;

use anyhow::Result;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use clap::Parser;

/// A Ballista executor for LDP report queries (log level: RUST_LOG, e.g. `info`).
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind_host: String,
    /// Arrow Flight port (results and shuffle data are fetched from it).
    #[arg(long, default_value_t = 50051)]
    port: u16,
    /// gRPC port (the scheduler pushes tasks to it).
    #[arg(long, default_value_t = 50052)]
    grpc_port: u16,
    /// The scheduler's host.
    #[arg(long, default_value = "localhost")]
    scheduler_host: String,
    /// The scheduler's port.
    #[arg(long, default_value_t = 50050)]
    scheduler_port: u16,
    /// Tasks run at once (default: the number of cores).
    #[arg(long)]
    concurrent_tasks: Option<usize>,
    /// Directory for shuffle files (default: a temporary directory).
    #[arg(long)]
    work_dir: Option<String>,
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ldp-executor: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn run() -> Result<()> {
    env_logger::init();
    let args = Args::parse();
    let defaults = ExecutorProcessConfig::default();
    let config = ExecutorProcessConfig {
        bind_host: args.bind_host,
        port: args.port,
        grpc_port: args.grpc_port,
        scheduler_host: args.scheduler_host,
        scheduler_port: args.scheduler_port,
        vcores: args.concurrent_tasks.unwrap_or(defaults.vcores),
        work_dir: args.work_dir,
        // Plans arrive by name: the registry must hold the functions.
        override_function_registry: Some(ldp_datafusion::function_registry()),
        ..defaults
    };
    start_executor_process(Arc::new(config)).await?;
    Ok(())
}
