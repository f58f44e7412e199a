//! `mcpgym bench wordle`: guess calls over HTTP with many concurrent episodes, calls over
//! stdio, and the memory of idle episodes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hyper::StatusCode;
use mcpgym_shared::client::{ControlClient, NewEpisode};
use serde::Deserialize;
use serde_json::json;

use super::harness::{Server, ToolCall, cpu_seconds};
use super::report::percentile;

/// Wordle benchmark settings.
#[derive(Debug, clap::Args)]
pub struct WordleBench {
    /// Episodes played at once over HTTP.
    #[arg(long, default_value_t = 256)]
    pub concurrency: usize,
    /// Offer guess calls at this total rate (per second, spread over the episodes) instead of
    /// as fast as the server answers; latency is then measured from each call's scheduled
    /// time, so a slow server cannot hide its queue.
    #[arg(long, value_name = "CALLS_PER_SEC")]
    pub rate: Option<f64>,
    /// Seconds of HTTP load.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Tool calls made one after another over stdio.
    #[arg(long, default_value_t = 20_000)]
    pub stdio_calls: usize,
    /// Idle episodes to hold for the memory figure.
    #[arg(long, default_value_t = 100_000)]
    pub idle: usize,
    /// Drive an already running server at this base URL (e.g. http://127.0.0.1:8000) instead
    /// of starting one; its CPU use is then not reported.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Run only these phases (repeatable); all when not given.
    #[arg(long, value_enum)]
    pub only: Vec<Phase>,
}

/// A benchmark phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Phase {
    /// Concurrent episodes over streamable HTTP.
    Http,
    /// One client over stdio.
    Stdio,
    /// Memory of idle episodes.
    Idle,
}

/// Runs the Wordle benchmark phases.
pub fn run(bench: WordleBench) -> anyhow::Result<()> {
    // One thread: the load generator should leave the other core to the server.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let all = bench.only.is_empty();
    if all || bench.only.contains(&Phase::Http) {
        let url = bench.url.as_deref();
        runtime.block_on(http_phase(url, 1, None, Duration::from_secs(2)))?;
        runtime.block_on(http_phase(
            url,
            bench.concurrency,
            bench.rate,
            Duration::from_secs(bench.seconds),
        ))?;
    }
    if all || bench.only.contains(&Phase::Stdio) {
        stdio_phase(bench.stdio_calls)?;
    }
    if all || bench.only.contains(&Phase::Idle) {
        runtime.block_on(idle_phase(bench.url.as_deref(), bench.idle))?;
    }
    Ok(())
}

/// The part of a tool result the load generator reads.
#[derive(Deserialize)]
struct Reply {
    result: ReplyResult,
}

#[derive(Deserialize)]
struct ReplyResult {
    #[serde(rename = "_meta")]
    meta: ReplyMeta,
}

#[derive(Deserialize)]
struct ReplyMeta {
    #[serde(rename = "mcpgym/step")]
    step: ReplyStep,
}

#[derive(Deserialize)]
struct ReplyStep {
    done: bool,
}

/// Words the load generator guesses, in a rotating order per worker.
const GUESSES: [&str; 12] = [
    "crane", "slate", "pious", "dumpy", "wight", "fjord", "vexed", "abbot", "lymph", "knock",
    "zesty", "gawky",
];

struct WorkerResult {
    latencies_us: Vec<u32>,
    requests: u64,
    episodes: u64,
}

/// One client playing episodes one after another on one keep-alive connection: start an
/// episode on the control plane, guess through its MCP URL until it ends, close it.
async fn http_worker(
    base: Arc<str>,
    guesses: Arc<Vec<ToolCall>>,
    offset: usize,
    pace: Option<Duration>,
    deadline: Instant,
) -> anyhow::Result<WorkerResult> {
    let mut result = WorkerResult {
        latencies_us: Vec::with_capacity(1 << 16),
        requests: 0,
        episodes: 0,
    };
    let client = ControlClient::new(&base, None)?;
    let new_episode = NewEpisode::default();
    let mut turn = offset;
    // Spread the workers' first calls over one pacing interval.
    let mut scheduled = pace.map(|p| Instant::now() + p.mul_f64(offset as f64 / 256.0 % 1.0));
    while Instant::now() < deadline {
        let episode = client.create_episode(&new_episode).await?;
        result.requests += 1;
        loop {
            let guess = &guesses[turn % guesses.len()];
            turn += 1;
            let started = match (scheduled.as_mut(), pace) {
                (Some(at), Some(pace)) => {
                    let due = *at;
                    *at += pace;
                    if Instant::now() < due {
                        tokio::time::sleep_until(due.into()).await;
                        // On time: measure from the send, not from the timer's coarse wake-up.
                        Instant::now()
                    } else {
                        // Behind schedule because the server was slow: count the wait.
                        due
                    }
                }
                _ => Instant::now(),
            };
            let (status, reply) = guess.send(&client, &episode.mcp_url).await?;
            if status != StatusCode::OK {
                bail!("guess failed with HTTP {status}");
            }
            let reply: Reply = serde_json::from_slice(&reply).with_context(|| {
                format!("unexpected reply: {}", String::from_utf8_lossy(&reply))
            })?;
            result
                .latencies_us
                .push(started.elapsed().as_micros() as u32);
            result.requests += 1;
            if reply.result.meta.step.done || Instant::now() >= deadline {
                break;
            }
        }
        client.close(&episode.id).await?;
        result.requests += 1;
        result.episodes += 1;
    }
    Ok(result)
}

async fn http_phase(
    url: Option<&str>,
    concurrency: usize,
    rate: Option<f64>,
    duration: Duration,
) -> anyhow::Result<()> {
    let pace = rate
        .filter(|r| *r > 0.0)
        .map(|r| Duration::from_secs_f64(concurrency as f64 / r));
    let server = Server::start_or_use(
        url,
        "wordle",
        &[
            "--max-episodes",
            &(concurrency * 2 + 16).to_string(),
            "--idle-ttl",
            "3600",
        ],
    )?;
    let base: Arc<str> = server.base.clone().into();
    let guesses = Arc::new(
        GUESSES
            .iter()
            .map(|w| ToolCall::new("guess", json!({"word": w})))
            .collect::<anyhow::Result<Vec<_>>>()?,
    );
    let started = Instant::now();
    let (server_cpu, client_cpu) = (server.cpu_seconds(), cpu_seconds("/proc/self/stat")?);
    let deadline = started + duration;
    let workers: Vec<_> = (0..concurrency)
        .map(|i| {
            tokio::spawn(http_worker(
                base.clone(),
                guesses.clone(),
                i,
                pace,
                deadline,
            ))
        })
        .collect();
    let mut latencies = Vec::new();
    let (mut requests, mut episodes) = (0, 0);
    for worker in workers {
        let result = worker.await??;
        latencies.extend(result.latencies_us);
        requests += result.requests;
        episodes += result.episodes;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let server_cpu = server
        .cpu_seconds()
        .zip(server_cpu)
        .map(|(after, before)| after - before);
    let client_cpu = cpu_seconds("/proc/self/stat")? - client_cpu;
    latencies.sort_unstable();
    let offered = rate.map_or(String::from("as fast as answered"), |r| {
        format!("offered {r:.0} guess calls/s")
    });
    println!("wordle over HTTP, {concurrency} concurrent episode(s), {offered}, {elapsed:.1} s:");
    println!(
        "  guess calls/s {:>9.0}   (all requests/s incl. create and delete: {:.0}; episodes played: {episodes})",
        latencies.len() as f64 / elapsed,
        requests as f64 / elapsed
    );
    println!(
        "  guess latency p50 {:.3} ms   p99 {:.3} ms",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99)
    );
    if let Some(server_cpu) = server_cpu {
        println!(
            "  CPU: server {:.0}% ({:.1} µs per request), load generator {:.0}%",
            100.0 * server_cpu / elapsed,
            1e6 * server_cpu / requests.max(1) as f64,
            100.0 * client_cpu / elapsed
        );
    }
    Ok(())
}

/// A raw JSON-RPC peer over the server's stdin and stdout: the least client overhead, so the
/// figure is the server's.
struct StdioPeer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl StdioPeer {
    fn start() -> anyhow::Result<Self> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["wordle", "--seed", "1", "--max-turns", "4000000000"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        Ok(Self {
            child,
            stdin,
            stdout,
            line: String::new(),
        })
    }

    fn send(&mut self, message: &[u8]) -> anyhow::Result<()> {
        self.stdin.write_all(message)?;
        self.stdin.write_all(b"\n")?;
        self.stdin.flush()?;
        Ok(())
    }

    fn receive(&mut self) -> anyhow::Result<&str> {
        self.line.clear();
        if self.stdout.read_line(&mut self.line)? == 0 {
            bail!("the server closed stdout");
        }
        Ok(&self.line)
    }
}

impl Drop for StdioPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stdio_phase(calls: usize) -> anyhow::Result<()> {
    let mut peer = StdioPeer::start()?;
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "mcpgym-bench", "version": "1"}
        }
    });
    peer.send(initialize.to_string().as_bytes())?;
    peer.receive()?;
    peer.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
    let history =
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"history","arguments":{}}}"#;
    let mut latencies = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        peer.send(history)?;
        let reply = peer.receive()?;
        latencies.push(started.elapsed().as_micros() as u32);
        if !reply.contains("mcpgym/step") {
            bail!("unexpected reply: {reply}");
        }
    }
    latencies.sort_unstable();
    println!("wordle over stdio, one client, {calls} calls one after another:");
    println!(
        "  call latency p50 {:.3} ms   p99 {:.3} ms",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99)
    );
    Ok(())
}

async fn idle_phase(url: Option<&str>, count: usize) -> anyhow::Result<()> {
    let server = Server::start_or_use(
        url,
        "wordle",
        &[
            "--max-episodes",
            &(count + 16).to_string(),
            "--idle-ttl",
            "3600",
        ],
    )?;
    let before = server.rss_kib();
    let base: Arc<str> = server.base.clone().into();
    let started = Instant::now();
    let per_worker = count.div_ceil(64);
    let workers: Vec<_> = (0..64)
        .map(|w| {
            let base = base.clone();
            let n = per_worker.min(count.saturating_sub(w * per_worker));
            tokio::spawn(async move {
                let client = ControlClient::new(&base, None)?;
                let new_episode = NewEpisode::default();
                for _ in 0..n {
                    client.create_episode(&new_episode).await?;
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for worker in workers {
        worker.await??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let after = server.rss_kib();
    println!(
        "wordle idle episodes: {count} created in {elapsed:.1} s ({:.0}/s)",
        count as f64 / elapsed
    );
    if let (Some(before), Some(after)) = (before, after) {
        println!(
            "  server RSS {:.1} MiB before, {:.1} MiB after ({:.0} bytes per episode)",
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            (after.saturating_sub(before) * 1024) as f64 / count.max(1) as f64
        );
    }
    Ok(())
}
