//! `mcpgym bench`: load generators that run the real binary and print what they measure.
//!
//! Each phase starts its own server process (this same binary), so the figures include
//! everything a client pays: HTTP, JSON-RPC, the episode lock, the game, and the reply.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};

/// What to benchmark.
#[derive(Debug, clap::Subcommand)]
pub enum BenchTarget {
    /// Wordle: guess calls over HTTP with many concurrent episodes, calls over stdio, and the
    /// memory of idle episodes.
    Wordle(WordleBench),
}

/// Wordle benchmark settings.
#[derive(Debug, clap::Args)]
pub struct WordleBench {
    /// Episodes played at once over HTTP.
    #[arg(long, default_value_t = 256)]
    pub concurrency: usize,
    /// Seconds of HTTP load.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Tool calls made one after another over stdio.
    #[arg(long, default_value_t = 20_000)]
    pub stdio_calls: usize,
    /// Idle episodes to hold for the memory figure.
    #[arg(long, default_value_t = 100_000)]
    pub idle: usize,
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

/// Runs a benchmark.
pub fn run(target: BenchTarget) -> anyhow::Result<()> {
    match target {
        BenchTarget::Wordle(bench) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            let all = bench.only.is_empty();
            if all || bench.only.contains(&Phase::Http) {
                runtime.block_on(http_phase(1, Duration::from_secs(2)))?;
                runtime.block_on(http_phase(
                    bench.concurrency,
                    Duration::from_secs(bench.seconds),
                ))?;
            }
            if all || bench.only.contains(&Phase::Stdio) {
                stdio_phase(bench.stdio_calls)?;
            }
            if all || bench.only.contains(&Phase::Idle) {
                runtime.block_on(idle_phase(bench.idle))?;
            }
            Ok(())
        }
    }
}

/// A server process of this binary, killed on drop.
struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(extra: &[&str]) -> anyhow::Result<Self> {
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .args(["wordle", "--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot start the server")?;
        let stderr = child.stderr.take().context("no stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let base = loop {
            let line = lines
                .next()
                .context("the server exited before listening")??;
            if let Some(url) = line.strip_prefix("mcpgym: listening on ") {
                break url.to_owned();
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Ok(Self { child, base })
    }

    fn rss_kib(&self) -> anyhow::Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .context("no VmRSS in /proc status")
    }
}

fn http_client(pool: usize) -> anyhow::Result<reqwest::Client> {
    let mut headers = HeaderMap::new();
    headers.insert(
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(reqwest::Client::builder()
        .default_headers(headers)
        .pool_max_idle_per_host(pool)
        .tcp_nodelay(true)
        .build()?)
}

/// Words the load generator guesses, in a rotating order per worker.
const GUESSES: [&str; 12] = [
    "crane", "slate", "pious", "dumpy", "wight", "fjord", "vexed", "abbot", "lymph", "knock",
    "zesty", "gawky",
];

fn guess_body(word: &str) -> Vec<u8> {
    // A 2026-07-28 (stateless) request: the episode is named by the URL.
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "guess", "arguments": {"word": word},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    }))
    .expect("static JSON")
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[index]) / 1000.0
}

struct WorkerResult {
    latencies_us: Vec<u32>,
    requests: u64,
    episodes: u64,
}

async fn http_worker(
    client: reqwest::Client,
    base: Arc<str>,
    bodies: Arc<Vec<Vec<u8>>>,
    offset: usize,
    deadline: Instant,
) -> anyhow::Result<WorkerResult> {
    let mut result = WorkerResult {
        latencies_us: Vec::with_capacity(1 << 16),
        requests: 0,
        episodes: 0,
    };
    let mut turn = offset;
    while Instant::now() < deadline {
        let created: Value = client
            .post(format!("{base}/episodes"))
            .body("{}")
            .send()
            .await?
            .json()
            .await?;
        let id = created["id"].as_str().context("no episode id")?.to_owned();
        let url = format!("{base}/episodes/{id}/mcp");
        result.requests += 1;
        loop {
            let body = bodies[turn % bodies.len()].clone();
            turn += 1;
            let started = Instant::now();
            let response = client
                .post(&url)
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "guess")
                .body(body)
                .send()
                .await?;
            if !response.status().is_success() {
                bail!("guess failed with HTTP {}", response.status());
            }
            let reply: Value = response.json().await?;
            result.latencies_us.push(started.elapsed().as_micros() as u32);
            result.requests += 1;
            let step = &reply["result"]["_meta"]["mcpgym/step"];
            if step.is_null() {
                bail!("unexpected reply: {reply}");
            }
            if step["done"] == true || Instant::now() >= deadline {
                break;
            }
        }
        client.delete(format!("{base}/episodes/{id}")).send().await?;
        result.requests += 1;
        result.episodes += 1;
    }
    Ok(result)
}

async fn http_phase(concurrency: usize, duration: Duration) -> anyhow::Result<()> {
    let server = Server::start(&[
        "--max-episodes",
        &(concurrency * 2 + 16).to_string(),
        "--idle-ttl",
        "3600",
    ])?;
    let client = http_client(concurrency)?;
    let base: Arc<str> = server.base.clone().into();
    let bodies = Arc::new(GUESSES.iter().map(|w| guess_body(w)).collect::<Vec<_>>());
    let started = Instant::now();
    let deadline = started + duration;
    let workers: Vec<_> = (0..concurrency)
        .map(|i| {
            tokio::spawn(http_worker(
                client.clone(),
                base.clone(),
                bodies.clone(),
                i,
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
    latencies.sort_unstable();
    println!(
        "wordle over HTTP, {concurrency} concurrent episode(s), {:.1} s:",
        elapsed
    );
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

async fn idle_phase(count: usize) -> anyhow::Result<()> {
    let server = Server::start(&[
        "--max-episodes",
        &(count + 16).to_string(),
        "--idle-ttl",
        "3600",
    ])?;
    let client = http_client(64)?;
    let before = server.rss_kib()?;
    let base: Arc<str> = server.base.clone().into();
    let started = Instant::now();
    let per_worker = count.div_ceil(64);
    let workers: Vec<_> = (0..64)
        .map(|w| {
            let (client, base) = (client.clone(), base.clone());
            let n = per_worker.min(count.saturating_sub(w * per_worker));
            tokio::spawn(async move {
                for _ in 0..n {
                    let response = client.post(format!("{base}/episodes")).body("{}").send().await?;
                    if response.status() != reqwest::StatusCode::CREATED {
                        bail!("create failed with HTTP {}", response.status());
                    }
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for worker in workers {
        worker.await??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let after = server.rss_kib()?;
    println!("wordle idle episodes: {count} created in {elapsed:.1} s ({:.0}/s)", count as f64 / elapsed);
    println!(
        "  server RSS {:.1} MiB before, {:.1} MiB after ({:.0} bytes per episode)",
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        (after.saturating_sub(before) * 1024) as f64 / count.max(1) as f64
    );
    Ok(())
}
