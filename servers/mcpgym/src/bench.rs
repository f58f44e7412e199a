//! `mcpgym bench`: load generators that run the real binary and print what they measure.
//!
//! Each phase starts its own server process (this same binary), so the figures include
//! everything a client pays: HTTP, JSON-RPC, the episode lock, the game, and the reply.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::json;

pub mod desktop;

/// What to benchmark.
#[derive(Debug, clap::Subcommand)]
pub enum BenchTarget {
    /// Wordle: guess calls over HTTP with many concurrent episodes, calls over stdio, and the
    /// memory of idle episodes.
    Wordle(WordleBench),
    /// Jupyter: sandbox ready from the warm pool, `1+1` through MCP, executions per second with
    /// several episodes, and memory per idle sandbox.
    Jupyter(JupyterBench),
    /// Desktop: episode start to first screenshot, the screenshot tool, a click with its
    /// screenshot, and desktops held at one action per second each.
    Desktop(desktop::DesktopBench),
}

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

/// Runs a benchmark.
pub fn run(target: BenchTarget) -> anyhow::Result<()> {
    match target {
        BenchTarget::Jupyter(bench) => run_jupyter(bench),
        BenchTarget::Desktop(bench) => desktop::run(bench),
        BenchTarget::Wordle(bench) => {
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
    }
}

/// Runs the Jupyter benchmark phases.
fn run_jupyter(bench: JupyterBench) -> anyhow::Result<()> {
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

/// Resident memory (KiB) of a process and all its descendants.
fn tree_rss_kib(root: u32) -> u64 {
    let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    let mut rss: std::collections::HashMap<u32, u64> = Default::default();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        };
        if let Some(parent) = field("PPid:") {
            children.entry(parent as u32).or_default().push(pid);
        }
        rss.insert(pid, field("VmRSS:").unwrap_or(0));
    }
    let mut total = 0;
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        total += rss.get(&pid).copied().unwrap_or(0);
        stack.extend(children.get(&pid).into_iter().flatten());
    }
    total
}

/// Sandbox creation from a full warm pool, and memory per idle sandbox.
async fn sandbox_phase(creates: usize) -> anyhow::Result<()> {
    let pool = creates.to_string();
    let server = Server::start("sandbox", &["--pool", &pool, "--max-sandboxes", "1000"])?;
    let mut connection = Connection::open(&server.base).await?;
    // Wait until the pool is full, so every create below is served from it.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, body) = connection
            .send(Method::GET, "/health", None, Bytes::new())
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
    let pid = server
        .child
        .as_ref()
        .map(Child::id)
        .context("no server process")?;
    let before = tree_rss_kib(pid);
    let mut latencies = Vec::with_capacity(creates);
    for _ in 0..creates {
        let started = Instant::now();
        let (status, body) = connection
            .send(
                Method::POST,
                "/sandboxes",
                None,
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
    let one_plus_one = tool_call_body("add_and_execute_code_cell", json!({"code": "1+1"}));
    let mut connection = Connection::open(&base).await?;
    let id = connection.create_episode().await?;
    let path = format!("/episodes/{id}/mcp");
    let mut latencies = Vec::with_capacity(cells);
    for _ in 0..cells {
        let started = Instant::now();
        let (status, reply) = connection
            .send(
                Method::POST,
                &path,
                Some("add_and_execute_code_cell"),
                one_plus_one.clone(),
            )
            .await?;
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
            let (base, body) = (base.clone(), one_plus_one.clone());
            tokio::spawn(async move {
                let mut connection = Connection::open(&base).await?;
                let id = connection.create_episode().await?;
                let path = format!("/episodes/{id}/mcp");
                let mut done = 0u64;
                while Instant::now() < deadline {
                    let (status, _) = connection
                        .send(
                            Method::POST,
                            &path,
                            Some("add_and_execute_code_cell"),
                            body.clone(),
                        )
                        .await?;
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

/// The server under load: a process of this binary (killed on drop), or one given by URL.
struct Server {
    child: Option<Child>,
    base: String,
}

impl Drop for Server {
    /// Stops the server with SIGTERM, so it kills its sandboxes and removes its folders;
    /// SIGKILL only if it has not exited within ten seconds.
    fn drop(&mut self) {
        let Some(child) = &mut self.child else { return };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Server {
    fn start_or_use(url: Option<&str>, extra: &[&str]) -> anyhow::Result<Self> {
        match url {
            Some(url) => Ok(Self {
                child: None,
                base: url.trim_end_matches('/').to_owned(),
            }),
            None => Self::start("wordle", extra),
        }
    }

    /// Starts `mcpgym <command> --http 127.0.0.1:0 <extra…>` and waits until it listens.
    fn start(command: &str, extra: &[&str]) -> anyhow::Result<Self> {
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .args([command, "--http", "127.0.0.1:0"])
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
        Ok(Self {
            child: Some(child),
            base,
        })
    }

    /// CPU seconds the server has used so far (user plus system), when it is ours.
    fn cpu_seconds(&self) -> Option<f64> {
        let child = self.child.as_ref()?;
        cpu_seconds(&format!("/proc/{}/stat", child.id())).ok()
    }

    fn rss_kib(&self) -> Option<u64> {
        let child = self.child.as_ref()?;
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

/// CPU seconds (user plus system) from a `/proc/<pid>/stat` file.
fn cpu_seconds(stat_path: &str) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(stat_path)?;
    // Fields after the command name, which is in parentheses and may contain spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .context("malformed stat")?
        .1
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>()? + fields[12].parse::<f64>()?;
    // Linux reports in USER_HZ, which is 100 on every supported architecture.
    Ok(ticks / 100.0)
}

/// One keep-alive HTTP/1.1 connection: the load generator's whole client, kept lean so that
/// the CPU it takes from the server it measures stays small.
struct Connection {
    sender: SendRequest<Full<Bytes>>,
    host: String,
}

impl Connection {
    async fn open(base: &str) -> anyhow::Result<Self> {
        let host = base
            .strip_prefix("http://")
            .context("the URL must start with http://")?
            .to_owned();
        let stream = tokio::net::TcpStream::connect(&host).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Self { sender, host })
    }

    async fn send(
        &mut self,
        method: Method,
        path: &str,
        mcp_tool: Option<&str>,
        body: Bytes,
    ) -> anyhow::Result<(StatusCode, Bytes)> {
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(tool) = mcp_tool {
            request = request
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", tool);
        }
        self.sender.ready().await?;
        let response = self
            .sender
            .send_request(request.body(Full::new(body))?)
            .await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }

    async fn create_episode(&mut self) -> anyhow::Result<String> {
        #[derive(Deserialize)]
        struct Created {
            id: String,
        }
        let (status, body) = self
            .send(Method::POST, "/episodes", None, Bytes::from_static(b"{}"))
            .await?;
        if status != StatusCode::CREATED {
            bail!(
                "create failed with HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        Ok(serde_json::from_slice::<Created>(&body)?.id)
    }
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

/// A 2026-07-28 (stateless) `tools/call` request body; the episode is named by the URL.
fn tool_call_body(tool: &str, arguments: serde_json::Value) -> Bytes {
    Bytes::from(
        serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {
                "name": tool, "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}
                }
            }
        }))
        .expect("static JSON"),
    )
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
    base: Arc<str>,
    bodies: Arc<Vec<Bytes>>,
    offset: usize,
    pace: Option<Duration>,
    deadline: Instant,
) -> anyhow::Result<WorkerResult> {
    let mut result = WorkerResult {
        latencies_us: Vec::with_capacity(1 << 16),
        requests: 0,
        episodes: 0,
    };
    let mut connection = Connection::open(&base).await?;
    let mut turn = offset;
    // Spread the workers' first calls over one pacing interval.
    let mut scheduled = pace.map(|p| Instant::now() + p.mul_f64(offset as f64 / 256.0 % 1.0));
    while Instant::now() < deadline {
        let id = connection.create_episode().await?;
        let path = format!("/episodes/{id}/mcp");
        result.requests += 1;
        loop {
            let body = bodies[turn % bodies.len()].clone();
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
            let (status, reply) = connection
                .send(Method::POST, &path, Some("guess"), body)
                .await?;
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
        connection
            .send(
                Method::DELETE,
                &format!("/episodes/{id}"),
                None,
                Bytes::new(),
            )
            .await?;
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
        &[
            "--max-episodes",
            &(concurrency * 2 + 16).to_string(),
            "--idle-ttl",
            "3600",
        ],
    )?;
    let base: Arc<str> = server.base.clone().into();
    let bodies = Arc::new(
        GUESSES
            .iter()
            .map(|w| tool_call_body("guess", json!({"word": w})))
            .collect::<Vec<_>>(),
    );
    let started = Instant::now();
    let (server_cpu, client_cpu) = (server.cpu_seconds(), cpu_seconds("/proc/self/stat")?);
    let deadline = started + duration;
    let workers: Vec<_> = (0..concurrency)
        .map(|i| tokio::spawn(http_worker(base.clone(), bodies.clone(), i, pace, deadline)))
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
                let mut connection = Connection::open(&base).await?;
                for _ in 0..n {
                    connection.create_episode().await?;
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
