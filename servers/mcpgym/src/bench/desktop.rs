//! `mcpgym bench desktop`: episode start to first screenshot, the screenshot tool, a click
//! with its screenshot, and how many desktops two cores hold at one action per second each.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hyper::StatusCode;
use mcpgym_shared::client::{ControlClient, NewEpisode};
use serde_json::json;

use super::harness::{Server, ToolCall};
use super::report::percentile;

/// Desktop benchmark settings.
#[derive(Debug, clap::Args)]
pub struct DesktopBench {
    /// Episodes started (each timed to its first screenshot).
    #[arg(long, default_value_t = 10)]
    pub starts: usize,
    /// Screenshot calls, and click calls, one after another.
    #[arg(long, default_value_t = 100)]
    pub calls: usize,
    /// Desktop counts to try at one action per second each (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "4,8,16,24,32")]
    pub desktops: Vec<usize>,
    /// Seconds at each desktop count.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
}

/// The task every benchmark episode plays: one xterm.
const TASK: &str = "desktop-train-000";

/// Runs the desktop benchmark phases against a server of this binary.
pub fn run(bench: DesktopBench) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // Settle 0: the figures are the cost of the work, not of the configurable pause.
    let server = Server::start("desktop", &["--settle-ms", "0", "--max-turns", "1000000"])?;
    let base: Arc<str> = server.base.clone().into();
    runtime.block_on(async {
        start_phase(&base, bench.starts).await?;
        calls_phase(&base, bench.calls).await?;
        capacity_phase(&base, &bench.desktops, Duration::from_secs(bench.seconds)).await
    })
}

/// Starts an episode of [`TASK`]: its id and the path of its MCP endpoint.
async fn create(client: &ControlClient) -> anyhow::Result<(String, String)> {
    let episode = client
        .create_episode(&NewEpisode::default().task(TASK))
        .await?;
    Ok((episode.id, episode.mcp_url))
}

/// One tool call; fails unless it answered with an image.
async fn call_with_image(
    client: &ControlClient,
    path: &str,
    tool: &str,
    call: &ToolCall,
) -> anyhow::Result<usize> {
    let (status, reply) = call.send(client, path).await?;
    let text = std::str::from_utf8(&reply).context("a non-UTF-8 reply")?;
    if status != StatusCode::OK
        || !text.contains("\"image/png\"")
        || text.contains("\"isError\":true")
    {
        bail!("{tool} failed ({status}): {}", &text[..text.len().min(300)]);
    }
    Ok(reply.len())
}

fn print_latency(what: &str, mut micros: Vec<u32>) {
    micros.sort_unstable();
    println!(
        "  {what}: p50 {:.1} ms   p99 {:.1} ms",
        percentile(&micros, 0.50),
        percentile(&micros, 0.99)
    );
}

async fn start_phase(base: &str, starts: usize) -> anyhow::Result<()> {
    let client = ControlClient::new(base, None)?;
    let screenshot = ToolCall::new("screenshot", json!({}))?;
    let mut latencies = Vec::with_capacity(starts);
    for _ in 0..starts {
        let started = Instant::now();
        let (id, path) = create(&client).await?;
        call_with_image(&client, &path, "screenshot", &screenshot).await?;
        latencies.push(started.elapsed().as_micros() as u32);
        client.close(&id).await?;
    }
    println!(
        "desktop, {starts} episodes started one after another (Xvfb, openbox, worker, xterm):"
    );
    print_latency("start to first screenshot", latencies);
    Ok(())
}

async fn calls_phase(base: &str, calls: usize) -> anyhow::Result<()> {
    let client = ControlClient::new(base, None)?;
    let (id, path) = create(&client).await?;
    let screenshot = ToolCall::new("screenshot", json!({}))?;
    let mut latencies = Vec::with_capacity(calls);
    let mut bytes = 0;
    for _ in 0..calls {
        let started = Instant::now();
        bytes += call_with_image(&client, &path, "screenshot", &screenshot).await?;
        latencies.push(started.elapsed().as_micros() as u32);
    }
    println!("desktop, one episode at 1280x800, {calls} calls of each tool one after another:");
    print_latency("screenshot (capture, PNG, base64, MCP)", latencies);
    println!(
        "  reply size {:.0} KB on average",
        bytes as f64 / calls as f64 / 1000.0
    );
    let mut latencies = Vec::with_capacity(calls);
    for i in 0..calls {
        let (x, y) = (100 + (i % 10) * 100, 300 + (i % 5) * 50);
        let click = ToolCall::new("left_click", json!({ "coordinate": [x, y] }))?;
        let started = Instant::now();
        call_with_image(&client, &path, "left_click", &click).await?;
        latencies.push(started.elapsed().as_micros() as u32);
    }
    print_latency("left_click with its screenshot (settle 0)", latencies);
    client.close(&id).await?;
    Ok(())
}

async fn capacity_phase(base: &str, counts: &[usize], duration: Duration) -> anyhow::Result<()> {
    println!(
        "desktop, N desktops each doing one left_click + screenshot per second for {} s:",
        duration.as_secs()
    );
    for &count in counts {
        // One client (so one connection) per desktop, as separate agents would hold.
        let mut desktops = Vec::with_capacity(count);
        for _ in 0..count {
            let client = ControlClient::new(base, None)?;
            let (id, path) = create(&client).await?;
            desktops.push((client, id, path));
        }
        let started = Instant::now();
        let workers: Vec<_> = desktops
            .into_iter()
            .enumerate()
            .map(|(n, (client, id, path))| {
                tokio::spawn(async move {
                    let mut latencies = Vec::new();
                    // Spread the desktops' ticks over the second.
                    let offset = Duration::from_millis((n as u64 * 997) % 1000);
                    let mut tick = 0u32;
                    loop {
                        let due = started + offset + Duration::from_secs(u64::from(tick));
                        if due >= started + duration {
                            break;
                        }
                        tokio::time::sleep_until(due.into()).await;
                        let click = ToolCall::new(
                            "left_click",
                            json!({ "coordinate": [200 + tick % 8 * 100, 400] }),
                        )?;
                        call_with_image(&client, &path, "left_click", &click).await?;
                        // Latency from the scheduled time: a late start counts.
                        latencies.push(due.elapsed().as_micros() as u32);
                        tick += 1;
                    }
                    client.close(&id).await?;
                    anyhow::Ok(latencies)
                })
            })
            .collect();
        let mut latencies = Vec::new();
        for worker in workers {
            latencies.extend(worker.await??);
        }
        let rate = latencies.len() as f64 / duration.as_secs_f64();
        latencies.sort_unstable();
        println!(
            "  {count:>3} desktops: {rate:5.1} actions/s (offered {count}/s)   p50 {:.0} ms   p99 {:.0} ms",
            percentile(&latencies, 0.50),
            percentile(&latencies, 0.99)
        );
    }
    Ok(())
}
