//! `mcpgym bench wordle`: guess calls over HTTP with many concurrent games, stateless
//! (2026-07-28 episodes) or in legacy MCP sessions (2025-06-18); calls over stdio; the memory
//! of idle episodes and of idle sessions; and, with `--callgrind`, the instructions the server
//! runs per HTTP request.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hyper::body::Bytes;
use mcpgym_shared::client::{ControlClient, Episode, NewEpisode};
use serde::Deserialize;
use serde_json::json;

use super::harness::{
    Callgrind, LegacySession, Server, ToolCall, cpu_seconds, json_rpc_result, session_call,
};
use super::report::percentile;

/// Wordle benchmark settings.
#[derive(Debug, clap::Args)]
pub struct WordleBench {
    /// Games played at once over HTTP (episodes, or legacy sessions).
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
    /// Idle legacy MCP sessions (initialized, then left alone) to hold for the memory figure.
    #[arg(long, default_value_t = 100_000)]
    pub idle_sessions: usize,
    /// Instead of load-testing the http and legacy phases, count the instructions the server
    /// runs per request: it runs under valgrind's callgrind, and one client sends
    /// --callgrind-calls requests one after another (needs valgrind).
    #[arg(long)]
    pub callgrind: bool,
    /// Requests counted under --callgrind, after a warm-up of 200.
    #[arg(long, value_name = "N", default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub callgrind_calls: u64,
    /// Drive an already running server at this base URL (e.g. http://127.0.0.1:8000) instead
    /// of starting one; its CPU use is then not reported.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Run only these phases (repeatable); all when not given.
    #[arg(long, value_enum)]
    pub only: Vec<Phase>,
    /// Pin the servers this bench starts to these CPUs (a `taskset -c` list, e.g. 0), and run
    /// the bench itself on others (`taskset -c 1 mcpgym bench wordle --server-cpus 0`), so
    /// that the figures are those of a server with a core of its own.
    #[arg(long, value_name = "CPUS")]
    pub server_cpus: Option<String>,
    /// Pass ARG to the servers this bench starts (repeatable), e.g. `--server-arg=--rmcp-sessions`
    /// to serve legacy sessions through rmcp alone, as before the direct path.
    #[arg(long = "server-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub server_args: Vec<String>,
}

/// A benchmark phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Phase {
    /// Concurrent episodes over stateless (2026-07-28) streamable HTTP.
    Http,
    /// Concurrent legacy MCP sessions (2025-06-18: `initialize`, then `Mcp-Session-Id`), each
    /// starting its next game with the `reset` tool.
    Legacy,
    /// One client over stdio.
    Stdio,
    /// Memory of idle episodes.
    Idle,
    /// Memory of idle legacy MCP sessions.
    IdleLegacy,
}

/// Runs the Wordle benchmark phases.
pub fn run(bench: WordleBench) -> anyhow::Result<()> {
    // One thread: the load generator should leave the other core to the server.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let runs = |phase| bench.only.is_empty() || bench.only.contains(&phase);
    if bench.callgrind {
        if !runs(Phase::Http) && !runs(Phase::Legacy) {
            bail!(
                "--callgrind applies to the http and legacy phases: add --only http or --only legacy"
            );
        }
        if bench.url.is_some() {
            bail!("--callgrind starts its own server under valgrind: leave out --url");
        }
    }
    let url = bench.url.as_deref();
    let cpus = bench.server_cpus.as_deref();
    let extra = &bench.server_args;
    for protocol in [Protocol::Stateless, Protocol::Legacy] {
        if !runs(protocol.phase()) {
            continue;
        }
        if bench.callgrind {
            runtime.block_on(callgrind_phase(protocol, extra, bench.callgrind_calls))?;
        } else {
            // Serial calls first: the latency of one client alone.
            let serial = Duration::from_secs(2);
            runtime.block_on(load_phase(protocol, url, cpus, extra, 1, None, serial))?;
            runtime.block_on(load_phase(
                protocol,
                url,
                cpus,
                extra,
                bench.concurrency,
                bench.rate,
                Duration::from_secs(bench.seconds),
            ))?;
        }
    }
    if runs(Phase::Stdio) {
        stdio_phase(bench.stdio_calls)?;
    }
    if runs(Phase::Idle) {
        runtime.block_on(idle_phase(
            url,
            cpus,
            extra,
            Protocol::Stateless,
            bench.idle,
        ))?;
    }
    if runs(Phase::IdleLegacy) {
        runtime.block_on(idle_phase(
            url,
            cpus,
            extra,
            Protocol::Legacy,
            bench.idle_sessions,
        ))?;
    }
    Ok(())
}

/// The part of a tool result the load generator reads.
#[derive(Deserialize)]
struct StepResult {
    #[serde(rename = "_meta")]
    meta: StepMeta,
}

#[derive(Deserialize)]
struct StepMeta {
    #[serde(rename = "mcpgym/step")]
    step: Step,
}

#[derive(Deserialize)]
struct Step {
    done: bool,
}

/// Whether the tool call `what` ended the game; an error unless it was answered with HTTP 200
/// and a result.
pub(super) fn ends_game(
    what: &str,
    (status, reply): (hyper::StatusCode, Bytes),
) -> anyhow::Result<bool> {
    let result: StepResult = json_rpc_result(what, status, &reply)?;
    Ok(result.meta.step.done)
}

/// Words the load generator guesses, in a rotating order per worker.
const GUESSES: [&str; 12] = [
    "crane", "slate", "pious", "dumpy", "wight", "fjord", "vexed", "abbot", "lymph", "knock",
    "zesty", "gawky",
];

/// The legacy MCP endpoint of the Wordle environment; `/<env>/mcp` rather than `/mcp`, as a
/// server given by `--url` may host several environments.
const LEGACY_PATH: &str = "/wordle/mcp";

/// How the load generator speaks MCP to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    /// 2026-07-28: no session; each game an episode created and deleted on the control plane,
    /// its guesses sent to `/episodes/{id}/mcp`.
    Stateless,
    /// 2025-06-18: one session per client (`initialize`, then `Mcp-Session-Id`), its next game
    /// started by the `reset` tool.
    Legacy,
}

impl Protocol {
    fn phase(self) -> Phase {
        match self {
            Self::Stateless => Phase::Http,
            Self::Legacy => Phase::Legacy,
        }
    }

    /// The server's flags for `games` games (episodes) held at once.
    fn server_args(self, games: usize, extra: &[String]) -> Vec<String> {
        let mut args = vec![
            "--max-episodes".to_owned(),
            (games * 2 + 16).to_string(),
            "--idle-ttl".to_owned(),
            "3600".to_owned(),
        ];
        if self == Self::Legacy {
            args.push("--reset-tool".to_owned());
        }
        args.extend_from_slice(extra);
        args
    }

    /// The heading of a phase with `clients` clients.
    fn title(self, clients: usize) -> String {
        match self {
            Self::Stateless => format!("wordle over HTTP, {clients} concurrent episode(s)"),
            Self::Legacy => format!(
                "wordle over legacy MCP sessions (2025-06-18), {clients} concurrent session(s)"
            ),
        }
    }

    /// The requests other than guesses.
    fn other_requests(self) -> &'static str {
        match self {
            Self::Stateless => "create and delete",
            Self::Legacy => "initialize and reset",
        }
    }
}

/// The requests players send, built once: the load generator's hot path, so that the CPU it
/// takes from the server it measures stays small.
struct Requests {
    /// Stateless guess calls, one per word of [`GUESSES`].
    guesses: Vec<ToolCall>,
    /// Legacy-session guess calls, one per word of [`GUESSES`].
    session_guesses: Vec<Bytes>,
    /// The legacy-session `reset` call.
    session_reset: Bytes,
}

impl Requests {
    fn new() -> anyhow::Result<Self> {
        Ok(Self {
            guesses: GUESSES
                .iter()
                .map(|w| ToolCall::new("guess", json!({"word": w})))
                .collect::<anyhow::Result<_>>()?,
            session_guesses: GUESSES
                .iter()
                .map(|w| session_call("guess", json!({"word": w})))
                .collect::<anyhow::Result<_>>()?,
            session_reset: session_call("reset", json!({}))?,
        })
    }
}

/// What a player plays its games in.
enum Game {
    /// Stateless: the current episode, if one is open.
    Episode(Option<Episode>),
    /// Legacy: the session, which always has a game.
    Session(LegacySession),
}

/// One client playing games one after another on one keep-alive connection, one request per
/// [`Player::step`]: guesses until the game ends, then what starts the next (stateless: delete
/// the episode and create one; legacy: the `reset` tool).
struct Player {
    client: ControlClient,
    requests: Arc<Requests>,
    game: Game,
    /// Position in the rotation of guesses.
    turn: usize,
    /// Whether the next request starts a game rather than guesses.
    between_games: bool,
    /// HTTP requests sent, of every kind.
    sent: u64,
    /// Games played to their end.
    games: u64,
}

impl Player {
    /// A player on the server at `base`, starting at `offset` in the rotation of guesses;
    /// opens its session when legacy.
    async fn new(
        protocol: Protocol,
        base: &str,
        requests: Arc<Requests>,
        offset: usize,
    ) -> anyhow::Result<Self> {
        let client = ControlClient::new(base, None)?;
        let (game, sent, between_games) = match protocol {
            // No episode yet: the first request creates one.
            Protocol::Stateless => (Game::Episode(None), 0, true),
            // The session plays a game from the start; opening it took two requests.
            Protocol::Legacy => {
                let initializer = LegacySession::initializer()?;
                let session = LegacySession::open(&initializer, &client, LEGACY_PATH).await?;
                (Game::Session(session), 2, false)
            }
        };
        Ok(Self {
            client,
            requests,
            game,
            turn: offset,
            between_games,
            sent,
            games: 0,
        })
    }

    /// Whether the next request is a guess.
    fn guesses_next(&self) -> bool {
        !self.between_games
    }

    /// Sends the next request; whether it was a guess.
    async fn step(&mut self) -> anyhow::Result<bool> {
        self.sent += 1;
        let (client, requests) = (&self.client, &*self.requests);
        if self.between_games {
            match &mut self.game {
                Game::Episode(Some(episode)) => {
                    client.close(&episode.id).await?;
                    self.game = Game::Episode(None);
                }
                Game::Episode(None) => {
                    let episode = client.create_episode(&NewEpisode::default()).await?;
                    self.game = Game::Episode(Some(episode));
                    self.between_games = false;
                }
                Game::Session(session) => {
                    let reply = session.send(client, requests.session_reset.clone()).await?;
                    ends_game("reset", reply)?;
                    self.between_games = false;
                }
            }
            return Ok(false);
        }
        let turn = self.turn % GUESSES.len();
        self.turn += 1;
        let reply = match &self.game {
            Game::Episode(episode) => {
                let episode = episode.as_ref().context("a guess with no episode open")?;
                requests.guesses[turn]
                    .send(client, &episode.mcp_url)
                    .await?
            }
            Game::Session(session) => {
                let guess = requests.session_guesses[turn].clone();
                session.send(client, guess).await?
            }
        };
        if ends_game("guess", reply)? {
            self.between_games = true;
            self.games += 1;
        }
        Ok(true)
    }

    /// Closes what the player holds (its episode, or its session), so that a server given by
    /// URL does not keep it.
    async fn finish(&mut self) -> anyhow::Result<()> {
        match &mut self.game {
            Game::Episode(episode) => {
                if let Some(episode) = episode.take() {
                    self.sent += 1;
                    self.client.close(&episode.id).await?;
                }
            }
            Game::Session(session) => {
                self.sent += 1;
                session.close(&self.client).await?;
            }
        }
        Ok(())
    }
}

struct WorkerResult {
    latencies_us: Vec<u32>,
    requests: u64,
    games: u64,
}

/// One player until `deadline`, its guesses paced when `pace` is given.
async fn load_worker(
    protocol: Protocol,
    base: Arc<str>,
    requests: Arc<Requests>,
    offset: usize,
    pace: Option<Duration>,
    deadline: Instant,
) -> anyhow::Result<WorkerResult> {
    let mut latencies_us = Vec::with_capacity(1 << 16);
    let mut player = Player::new(protocol, &base, requests, offset).await?;
    // Spread the workers' first calls over one pacing interval.
    let mut scheduled = pace.map(|p| Instant::now() + p.mul_f64(offset as f64 / 256.0 % 1.0));
    while Instant::now() < deadline {
        let started = match (scheduled.as_mut(), pace) {
            (Some(at), Some(pace)) if player.guesses_next() => {
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
        if player.step().await? {
            latencies_us.push(started.elapsed().as_micros() as u32);
        }
    }
    player.finish().await?;
    Ok(WorkerResult {
        latencies_us,
        requests: player.sent,
        games: player.games,
    })
}

/// `concurrency` players for `duration`, as fast as answered or at `rate` guesses per second.
async fn load_phase(
    protocol: Protocol,
    url: Option<&str>,
    cpus: Option<&str>,
    extra: &[String],
    concurrency: usize,
    rate: Option<f64>,
    duration: Duration,
) -> anyhow::Result<()> {
    let pace = rate
        .filter(|r| *r > 0.0)
        .map(|r| Duration::from_secs_f64(concurrency as f64 / r));
    let args = protocol.server_args(concurrency, extra);
    let server = Server::start_or_use(url, cpus, "wordle", &strs(&args))?;
    let base: Arc<str> = server.base.clone().into();
    let requests = Arc::new(Requests::new()?);
    let started = Instant::now();
    let (server_cpu, client_cpu) = (server.cpu_seconds(), cpu_seconds("/proc/self/stat")?);
    let deadline = started + duration;
    let workers: Vec<_> = (0..concurrency)
        .map(|i| {
            tokio::spawn(load_worker(
                protocol,
                base.clone(),
                requests.clone(),
                i,
                pace,
                deadline,
            ))
        })
        .collect();
    let mut latencies = Vec::new();
    let (mut requests, mut games) = (0, 0);
    for worker in workers {
        let result = worker.await??;
        latencies.extend(result.latencies_us);
        requests += result.requests;
        games += result.games;
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
    println!(
        "{}, {offered}, {elapsed:.1} s:",
        protocol.title(concurrency)
    );
    println!(
        "  guess calls/s {:>9.0}   (all requests/s incl. {}: {:.0}; episodes played: {games})",
        latencies.len() as f64 / elapsed,
        protocol.other_requests(),
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

/// Requests sent before callgrind counts, so that start-up work (the first connection, lazily
/// built state, allocator growth) stays out of the figure.
const CALLGRIND_WARM_UP: u64 = 200;

/// One player's requests one after another, their instructions counted by callgrind.
async fn callgrind_phase(protocol: Protocol, extra: &[String], calls: u64) -> anyhow::Result<()> {
    let callgrind = Callgrind::start("wordle", &strs(&protocol.server_args(1, extra)))?;
    let requests = Arc::new(Requests::new()?);
    let mut player = Player::new(protocol, &callgrind.server.base, requests, 0).await?;
    while player.sent < CALLGRIND_WARM_UP {
        player.step().await?;
    }
    callgrind.count(true)?;
    let first = player.sent;
    while player.sent - first < calls {
        player.step().await?;
    }
    callgrind.count(false)?;
    let (instructions, dump) = callgrind.dump()?;
    player.finish().await?;
    println!(
        "{}, {calls} requests one after another under callgrind:",
        protocol.title(1)
    );
    println!(
        "  instructions per request: {} ({instructions} Ir over {calls} requests, callgrind; {})",
        instructions / calls,
        dump.display()
    );
    Ok(())
}

/// Borrows owned arguments for a command line.
fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
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

/// `count` episodes (stateless) or initialized sessions (legacy) opened by 64 workers and left
/// idle: what each costs the server in memory.
async fn idle_phase(
    url: Option<&str>,
    cpus: Option<&str>,
    extra: &[String],
    protocol: Protocol,
    count: usize,
) -> anyhow::Result<()> {
    let max_episodes = (count + 16).to_string();
    let mut args = vec!["--max-episodes", &max_episodes, "--idle-ttl", "3600"];
    args.extend(extra.iter().map(String::as_str));
    let server = Server::start_or_use(url, cpus, "wordle", &args)?;
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
                match protocol {
                    Protocol::Stateless => {
                        let new_episode = NewEpisode::default();
                        for _ in 0..n {
                            client.create_episode(&new_episode).await?;
                        }
                    }
                    Protocol::Legacy => {
                        let initializer = LegacySession::initializer()?;
                        for _ in 0..n {
                            LegacySession::open(&initializer, &client, LEGACY_PATH).await?;
                        }
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
    let after = server.rss_kib();
    let (what, opened, each) = match protocol {
        Protocol::Stateless => ("episodes", "created", "episode"),
        Protocol::Legacy => ("legacy sessions", "opened", "session"),
    };
    println!(
        "wordle idle {what}: {count} {opened} in {elapsed:.1} s ({:.0}/s)",
        count as f64 / elapsed
    );
    if let (Some(before), Some(after)) = (before, after) {
        println!(
            "  server RSS {:.1} MiB before, {:.1} MiB after ({:.0} bytes per {each})",
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            (after.saturating_sub(before) * 1024) as f64 / count.max(1) as f64
        );
    }
    Ok(())
}
