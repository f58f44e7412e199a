//! `mcpgym bench jupyter`: sandbox ready from the warm pool, `1+1` through MCP, executions per
//! second with several episodes, and memory per idle sandbox.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hyper::body::Bytes;
use hyper::{Method, StatusCode};
use mcpgym_shared::client::{ControlClient, NewEpisode};
use serde_json::json;

use super::harness::{Server, ToolCall, tree_rss_kib};
use super::report::percentile;

/// Jupyter benchmark settings.
#[derive(Debug, clap::Args)]
pub struct JupyterBench {
    /// Sandboxes created from a full warm pool (the pool is this large).
    #[arg(long, default_value_t = 8)]
    pub creates: usize,
    /// `1+1` cells run one after another through MCP.
    #[arg(long, default_value_t = 50)]
    pub cells: usize,
    /// Episodes running cells at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Seconds of concurrent execution.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
}

/// Runs the Jupyter benchmark phases.
pub fn run(bench: JupyterBench) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        sandbox_phase(bench.creates).await?;
        jupyter_phase(
            bench.cells,
            bench.concurrency,
            Duration::from_secs(bench.seconds),
        )
        .await
    })
}

/// Sandbox creation from a full warm pool, and memory per idle sandbox.
async fn sandbox_phase(creates: usize) -> anyhow::Result<()> {
    let pool = creates.to_string();
    let server = Server::start("sandbox", &["--pool", &pool, "--max-sandboxes", "1000"])?;
    // The sandbox service is no control plane, but its requests travel the same connections.
    let client = ControlClient::new(&server.base, None)?;
    // Wait until the pool is full, so every create below is served from it.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, body) = client
            .send(Method::GET, "/health", &[], Bytes::new())
            .await?;
        let health: serde_json::Value = serde_json::from_slice(&body)?;
        if health["warmKernels"].as_u64().unwrap_or(0) as usize >= creates {
            break;
        }
        if Instant::now() > deadline {
            bail!("the warm pool did not fill in two minutes: {health}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let pid = server.pid().context("no server process")?;
    let before = tree_rss_kib(pid);
    let mut latencies = Vec::with_capacity(creates);
    for _ in 0..creates {
        let started = Instant::now();
        let (status, body) = client
            .send(
                Method::POST,
                "/sandboxes",
                &[],
                Bytes::from_static(br#"{"templateID": "code-interpreter-v1", "timeout": 300}"#),
            )
            .await?;
        if status != StatusCode::CREATED {
            bail!(
                "create failed with HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        latencies.push(started.elapsed().as_micros() as u32);
    }
    let after = tree_rss_kib(pid);
    latencies.sort_unstable();
    println!("jupyter sandboxes: {creates} created from a full warm pool:");
    println!(
        "  ready p50 {:.2} ms   p99 {:.2} ms",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99)
    );
    println!(
        "  memory of the service and its jails: {:.0} MiB with {creates} warm kernels, {:.0} MiB with {creates} sandboxes ({:.0} MiB per sandbox, kernel included)",
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        after as f64 / 1024.0 / creates.max(1) as f64
    );
    Ok(())
}

/// `1+1` through MCP one call at a time, then cells from several episodes at once.
async fn jupyter_phase(cells: usize, concurrency: usize, duration: Duration) -> anyhow::Result<()> {
    let pool = concurrency.max(2).to_string();
    let server = Server::start(
        "jupyter",
        &["--sandbox-pool", &pool, "--max-turns", "1000000"],
    )?;
    let base: Arc<str> = server.base.clone().into();
    let one_plus_one = ToolCall::new("add_and_execute_code_cell", json!({"code": "1+1"}))?;
    let client = ControlClient::new(&base, None)?;
    let episode = client.create_episode(&NewEpisode::default()).await?;
    let mut latencies = Vec::with_capacity(cells);
    for _ in 0..cells {
        let started = Instant::now();
        let (status, reply) = one_plus_one.send(&client, &episode.mcp_url).await?;
        if status != StatusCode::OK || !String::from_utf8_lossy(&reply).contains('2') {
            bail!(
                "unexpected reply ({status}): {}",
                String::from_utf8_lossy(&reply)
            );
        }
        latencies.push(started.elapsed().as_micros() as u32);
    }
    latencies.sort_unstable();
    println!("jupyter through MCP (HTTP), one episode, {cells} cells `1+1` one after another:");
    println!(
        "  cell p50 {:.2} ms   p99 {:.2} ms",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99)
    );

    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (base, call) = (base.clone(), one_plus_one.clone());
            tokio::spawn(async move {
                let client = ControlClient::new(&base, None)?;
                let episode = client.create_episode(&NewEpisode::default()).await?;
                let mut done = 0u64;
                while Instant::now() < deadline {
                    let (status, _) = call.send(&client, &episode.mcp_url).await?;
                    if status != StatusCode::OK {
                        bail!("cell failed with HTTP {status}");
                    }
                    done += 1;
                }
                anyhow::Ok(done)
            })
        })
        .collect();
    let mut total = 0;
    for worker in workers {
        total += worker.await??;
    }
    println!(
        "jupyter, {concurrency} episodes running cells at once: {:.0} executions/s",
        total as f64 / started.elapsed().as_secs_f64()
    );
    Ok(())
}
