//! A Ballista scheduler whose sessions know `ldp_estimate` and `ldp_counts`.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use clap::Parser;

/// A Ballista scheduler for LDP report queries (log level: RUST_LOG, e.g. `info`).
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind_host: String,
    /// Host name executors and clients reach this scheduler by.
    #[arg(long, default_value = "localhost")]
    external_host: String,
    /// gRPC port.
    #[arg(long, default_value_t = 50050)]
    port: u16,
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ldp-scheduler: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn run() -> Result<()> {
    env_logger::init();
    let args = Args::parse();
    let config = SchedulerConfig {
        bind_host: args.bind_host.clone(),
        external_host: args.external_host,
        bind_port: args.port,
        // Every session the scheduler plans knows the functions by name.
        override_session_builder: Some(Arc::new(ldp_datafusion::session_state)),
        ..Default::default()
    };
    let addr: SocketAddr = format!("{}:{}", args.bind_host, args.port)
        .parse()
        .with_context(|| format!("--bind-host {} --port {}", args.bind_host, args.port))?;
    let cluster = BallistaCluster::new_from_config(&config).await?;
    start_server(cluster, addr, Arc::new(config)).await?;
    Ok(())
}
