//! `mcpgym bench jupyter`: sandbox ready from the warm pool, `1+1` through MCP, executions per
//! second with several episodes, memory per idle sandbox (PSS, with the data-science runtime
//! imported), and bursts of episodes created at once, as a GRPO group starts them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hyper::body::Bytes;
use hyper::{Method, StatusCode};
use mcpgym_shared::client::{ControlClient, NewEpisode};
use serde_json::json;

use super::harness::{Memory, Server, ToolCall, tree_kib};
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
    /// Sandboxes whose memory is measured with the whole runtime imported.
    #[arg(long, default_value_t = 8)]
    pub idle: usize,
    /// Bursts: episodes created at the same moment, each running `1+1` (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [64, 256])]
    pub bursts: Vec<usize>,
    /// The task every episode of a burst plays (a GRPO group shares one task).
    #[arg(long, default_value = "group-revenue/1")]
    pub burst_task: String,
    /// Warm kernels the server keeps for the bursts (`--sandbox-pool`); 0 measures cold starts.
    #[arg(long, default_value_t = 256)]
    pub burst_pool: usize,
}

/// What the idle-memory phase imports in every sandbox: the runtime's data stack.
const IMPORT_RUNTIME: &str = "import numpy, pandas, matplotlib.pyplot, seaborn, scipy.stats, \
sklearn.linear_model, statsmodels.api, sympy, networkx, openpyxl, xlrd, pyarrow, polars, \
requests, bs4, lxml, PIL, plotly, tabulate\nprint('imported')";

/// Runs the Jupyter benchmark phases.
pub fn run(bench: JupyterBench) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        sandbox_phase(bench.creates).await?;
        idle_memory_phase(bench.idle).await?;
        jupyter_phase(
            bench.cells,
            bench.concurrency,
            Duration::from_secs(bench.seconds),
        )
        .await?;
        burst_phase(&bench.bursts, &bench.burst_task, bench.burst_pool).await
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
    let before = tree_kib(pid, Memory::Rss);
    let mut latencies = Vec::with_capacity(creates);
    for _ in 0..creates {
        let started = Instant::now();
        create_sandbox(&client).await?;
        latencies.push(started.elapsed().as_micros() as u32);
    }
    let after = tree_kib(pid, Memory::Rss);
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

/// `POST /sandboxes` for a code-interpreter sandbox that lives ten minutes: the created
/// sandbox's JSON, or why not.
async fn create_sandbox(client: &ControlClient) -> anyhow::Result<Bytes> {
    let (status, body) = client
        .send(
            Method::POST,
            "/sandboxes",
            &[],
            Bytes::from_static(br#"{"templateID": "code-interpreter-v1", "timeout": 600}"#),
        )
        .await?;
    if status != StatusCode::CREATED {
        bail!(
            "create failed with HTTP {status}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    Ok(body)
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

/// Proportional set size per idle sandbox once its kernel has imported the whole runtime: the
/// service's process tree before and after, divided among the sandboxes.
async fn idle_memory_phase(sandboxes: usize) -> anyhow::Result<()> {
    let limit = (sandboxes + 8).to_string();
    let server = Server::start("sandbox", &["--pool", "0", "--max-sandboxes", &limit])?;
    let client = ControlClient::new(&server.base, None)?;
    let pid = server.pid().context("no server process")?;
    let before = tree_kib(pid, Memory::Pss);
    let body = serde_json::to_vec(&json!({ "code": IMPORT_RUNTIME }))?;
    for _ in 0..sandboxes {
        let created: serde_json::Value = serde_json::from_slice(&create_sandbox(&client).await?)?;
        let id = created["sandboxID"]
            .as_str()
            .context("no sandboxID")?
            .to_owned();
        let headers = [
            (
                hyper::header::HeaderName::from_static("e2b-sandbox-id"),
                hyper::header::HeaderValue::from_str(&id)?,
            ),
            (
                hyper::header::HeaderName::from_static("e2b-sandbox-port"),
                hyper::header::HeaderValue::from_static("49999"),
            ),
        ];
        let (status, lines) = client
            .send(
                Method::POST,
                "/execute",
                &headers,
                Bytes::from(body.clone()),
            )
            .await?;
        if status != StatusCode::OK || !String::from_utf8_lossy(&lines).contains("imported") {
            bail!(
                "the runtime import failed ({status}): {}",
                String::from_utf8_lossy(&lines)
            );
        }
    }
    let after = tree_kib(pid, Memory::Pss);
    println!("jupyter sandboxes with the whole runtime imported ({sandboxes} idle):");
    println!(
        "  PSS per sandbox {:.0} MiB (service and jails: {:.0} MiB before, {:.0} MiB after)",
        after.saturating_sub(before) as f64 / 1024.0 / sandboxes.max(1) as f64,
        before as f64 / 1024.0,
        after as f64 / 1024.0
    );
    Ok(())
}

/// Bursts: `size` episodes created at the same moment (as a GRPO group starts its rollouts),
/// each running `1+1` as soon as it exists; the time until the last one has.
async fn burst_phase(sizes: &[usize], task: &str, pool: usize) -> anyhow::Result<()> {
    if sizes.is_empty() {
        return Ok(());
    }
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let (pool, limit) = (pool.to_string(), (largest * 2 + 8).to_string());
    let server = Server::start(
        "jupyter",
        &["--sandbox-pool", &pool, "--max-episodes", &limit],
    )?;
    let base: Arc<str> = server.base.clone().into();
    let one_plus_one = ToolCall::new("add_and_execute_code_cell", json!({"code": "1+1"}))?;
    let client = ControlClient::new(&base, None)?;
    let pid = server.pid().context("no server process")?;
    let warm: usize = pool.parse().unwrap_or(0);
    wait_for_pool(pid, warm).await;
    for &size in sizes {
        let started = Instant::now();
        let runs: Vec<_> = (0..size)
            .map(|_| {
                let (client, call, task) = (client.clone(), one_plus_one.clone(), task.to_owned());
                tokio::spawn(async move {
                    let episode = client
                        .create_episode(&NewEpisode::default().task(task))
                        .await?;
                    let (status, reply) = call.send(&client, &episode.mcp_url).await?;
                    if status != StatusCode::OK || !String::from_utf8_lossy(&reply).contains('2') {
                        bail!(
                            "`1+1` failed ({status}): {}",
                            String::from_utf8_lossy(&reply)
                        );
                    }
                    let ran = started.elapsed();
                    client.close(&episode.id).await?;
                    anyhow::Ok(ran)
                })
            })
            .collect();
        let mut times = Vec::with_capacity(size);
        let mut failures = Vec::new();
        for run in runs {
            match run.await? {
                Ok(ran) => times.push(ran.as_micros() as u32),
                Err(error) => failures.push(error.to_string()),
            }
        }
        times.sort_unstable();
        println!("jupyter burst: {size} episodes of {task} created at once:");
        println!(
            "  all ran `1+1` after {:.2} s   (each: p50 {:.2} s, p99 {:.2} s){}",
            started.elapsed().as_secs_f64(),
            percentile(&times, 0.50) / 1000.0,
            percentile(&times, 0.99) / 1000.0,
            if failures.is_empty() {
                String::new()
            } else {
                format!("; {} failed, e.g. {}", failures.len(), failures[0])
            }
        );
        wait_for_pool(pid, warm).await;
    }
    Ok(())
}

/// Waits (up to five minutes) until the server runs `kernels` kernels (with no episode open,
/// the warm pool), so each burst starts from a refilled pool.
async fn wait_for_pool(server: u32, kernels: usize) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while Instant::now() < deadline && kernel_count(server) < kernels {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// How many IPython kernels run under the process `root`.
fn kernel_count(root: u32) -> usize {
    let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    let mut kernels = std::collections::HashSet::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The parent is the fourth field, after the command name in parentheses.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        if let Some(parent) = parent {
            children.entry(parent).or_default().push(pid);
        }
        // The interpreter itself, not the jail's processes whose command lines name it too.
        let interpreter = stat
            .split_once('(')
            .is_some_and(|(_, rest)| rest.starts_with("python"));
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if interpreter && String::from_utf8_lossy(&cmdline).contains("ipykernel_launcher") {
            kernels.insert(pid);
        }
    }
    let mut count = 0;
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        count += usize::from(kernels.contains(&pid));
        stack.extend(children.get(&pid).into_iter().flatten());
    }
    count
}
