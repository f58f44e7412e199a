//! `mcpgym`: every environment behind one binary.

mod bench;

// Every tool call allocates small JSON values on several threads; mimalloc serves that pattern
// with far less contention and fragmentation than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use mcpgym_shared::Environment;
use mcpgym_shared::cli::{CommonArgs, TransportArgs};
use mcpgym_shared::http::{HttpOptions, serve};
use mcpgym_shared::hub::Hub;
use mcpgym_shared::stdio::serve_stdio;
use mcpgym_wordle::{Wordle, WordleArgs, WordleConfig};

/// Reinforcement-learning environments for LLM agents, each an MCP server.
///
/// Over stdio, one process plays one episode described by the flags. Over HTTP (--http), any
/// number of isolated episodes run at once: start them with POST /episodes, play them at
/// /episodes/{id}/mcp (or /mcp with a session, or _meta["mcpgym/episode"]), and read their
/// state and trajectory from the control plane.
#[derive(Debug, Parser)]
#[command(name = "mcpgym", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Wordle: guess a hidden 5-letter word in 6 tries (tools: guess, history).
    Wordle {
        #[command(flatten)]
        transport: TransportArgs,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten, next_help_heading = "Wordle")]
        wordle: WordleArgs,
    },
    /// Host every environment behind one control plane: POST /episodes {"env": ...} picks one,
    /// /<env>/mcp serves each. Environments use their defaults; per-episode options adjust them.
    Serve {
        /// Address to listen on, e.g. 127.0.0.1:8000.
        #[arg(long, value_name = "ADDR")]
        http: std::net::SocketAddr,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Load generators that print throughput, latency and memory figures.
    Bench {
        #[command(subcommand)]
        target: bench::BenchTarget,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_tracing();
    match cli.command {
        Command::Wordle {
            transport,
            common,
            wordle,
        } => {
            let config = WordleConfig::from_args(&wordle)?;
            let env: Arc<dyn Environment> = Arc::new(Wordle::new(config));
            run_env(env, transport, common)
        }
        Command::Serve { http, common } => {
            let envs: Vec<Arc<dyn Environment>> =
                vec![Arc::new(Wordle::new(WordleConfig::default()))];
            let hub = Hub::new(envs, common.hub_settings()).context("cannot start")?;
            let options = HttpOptions {
                mount_root_mcp: false,
                ..common.http_options()
            };
            current_thread()?.block_on(async {
                serve(hub, http, options, shutdown_signal())
                    .await
                    .map_err(anyhow::Error::from)
            })
        }
        Command::Bench { target } => bench::run(target),
    }
}

/// Serves one environment over stdio, or over HTTP with `--http`.
fn run_env(
    env: Arc<dyn Environment>,
    transport: TransportArgs,
    common: CommonArgs,
) -> anyhow::Result<()> {
    let hub = Hub::new(vec![env.clone()], common.hub_settings())
        .context("cannot create the trajectory directory")?;
    match transport.http {
        Some(addr) => {
            hub.check_defaults(env.as_ref())?;
            current_thread()?.block_on(async {
                serve(hub, addr, common.http_options(), shutdown_signal())
                    .await
                    .map_err(anyhow::Error::from)
            })
        }
        // One client, one episode: a single thread avoids cross-thread wake-ups per message.
        None => current_thread()?
            .block_on(async { serve_stdio(hub, env).await.map_err(anyhow::Error::from) }),
    }
}

/// A runtime on this thread. HTTP serving adds one such thread per further core.
fn current_thread() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// Logs go to stderr (stdout belongs to MCP over stdio); RUST_LOG sets the level.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
