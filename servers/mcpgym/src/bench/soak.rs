//! `mcpgym bench soak`: one `mcpgym serve` under a mixed load for a set time (Wordle games in
//! legacy MCP sessions, Jupyter and desktop episodes created, used and deleted), its whole
//! process tree sampled as it goes (memory, open files, threads, processes, scratch folders),
//! then stopped with SIGTERM and looked after; a verdict says whether anything grew or stayed.
//!
//! How the figures are compared: the load runs in two legs, the warm-up and the rest. After
//! each leg the load pauses until what it held has been released (the drain), and the tree is
//! measured idle: once after the warm-up (caches filled, the finished-episode list and the
//! abandoned sessions at their steady size), once at the end. Comparing idle with idle keeps
//! the live episodes (a kernel or an X server each, tens of MiB) out of the memory figures, so
//! that 10% more means growth, not which episodes happened to be open at a sample.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use hyper::StatusCode;
use hyper::body::Bytes;
use mcpgym_shared::client::{ControlClient, NewEpisode};
use serde_json::json;

use super::harness::{LegacySession, Processes, Server, ToolCall, proc_field, session_call};
use super::wordle::ends_game;

/// Soak settings.
#[derive(Debug, clap::Args)]
pub struct SoakBench {
    /// Minutes of load, warm-up included (fractions allowed: 0.5 is 30 seconds).
    #[arg(long, default_value_t = 30.0)]
    pub minutes: f64,
    /// Minutes of warm-up, after which the figures the end is compared with are taken
    /// (default: a quarter of --minutes).
    #[arg(long, value_name = "MINUTES")]
    pub warmup_minutes: Option<f64>,
    /// Seconds between two samples, each printed on a line of its own.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub sample_seconds: f64,
    /// Wordle players, each playing games one after another, one legacy MCP session per game.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub wordle_clients: usize,
    /// Milliseconds each Wordle player waits between two requests, so that Wordle leaves the
    /// cores to the other environments' episodes.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    pub wordle_pause_ms: u64,
    /// Workers each running Jupyter episodes one after another.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub jupyter_workers: usize,
    /// Workers each running desktop episodes one after another.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub desktop_workers: usize,
    /// No Jupyter episodes (a machine without bubblewrap or the kernel's Python).
    #[arg(long)]
    pub no_jupyter: bool,
    /// No desktop episodes (a machine without Xvfb).
    #[arg(long)]
    pub no_desktop: bool,
    /// The task every desktop episode plays (the default is an xterm).
    #[arg(long, value_name = "ID", default_value = "desktop-train-000")]
    pub desktop_task: String,
    /// The server's --idle-ttl: abandoned sessions are closed after this many seconds. Short by
    /// default, so that their number is steady before the warm-up ends and the reaper runs many
    /// times; at most the warm-up.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub idle_ttl: u64,
    /// Most seconds to wait after each leg of load for open files, processes and scratch
    /// folders to come back to their baseline.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub drain_seconds: u64,
    /// Pass ARG to the server (repeatable).
    #[arg(long = "server-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub server_args: Vec<String>,
}

/// How much more RSS than after the warm-up counts as growth.
const RSS_GROWTH: f64 = 0.10;

/// Open files allowed above the baseline when Jupyter runs: two idle keep-alive connections
/// from the Jupyter environment to the sandbox service inside the server (both ends are the
/// server's, so 2 fds each), which that service closes after 60 s idle. They are the client's
/// pool, not a leak; leaked connections would grow past them.
const JUPYTER_FD_TOLERANCE: u64 = 4;

/// A round (one game, or one episode from create to delete) taking longer than this is a
/// failure: the soak must end by itself even when the server hangs.
const ROUND_LIMIT: Duration = Duration::from_secs(120);

/// How long the server may take to exit after SIGTERM: its shutdown deadline for requests (5 s)
/// and the closing of every kernel and desktop, with room for a loaded machine.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(30);

/// Runs the soak; an error when the verdict is FAIL.
pub fn run(bench: SoakBench) -> anyhow::Result<()> {
    let plan = Arc::new(Plan::new(&bench)?);
    let mut args = vec!["--idle-ttl".to_owned(), bench.idle_ttl.to_string()];
    args.extend(bench.server_args.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut server = Server::start("serve", &args)?;
    let pid = server.pid().context("no server process")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let counters = Arc::new(Counters::default());
    let temp = std::env::temp_dir();
    println!(
        "soak: mcpgym serve (pid {pid}) at {}, {:.1} min of load ({:.1} min warm-up), a sample every {} s; load: {} Wordle player(s), {} Jupyter and {} desktop worker(s)",
        server.base,
        plan.minutes,
        plan.warmup.as_secs_f64() / 60.0,
        bench.sample_seconds,
        plan.workers(Kind::Wordle),
        plan.workers(Kind::Jupyter),
        plan.workers(Kind::Desktop),
    );
    let driven = runtime.block_on(drive(&plan, &server.base, pid, &temp, &counters))?;

    let stopping = Instant::now();
    let exit = server.terminate(SHUTDOWN_LIMIT);
    let took = stopping.elapsed();
    let left = look_after(exit, &driven.members, &temp, pid);
    let outcome = Outcome {
        baseline: driven.baseline,
        warm: driven.warm,
        end: driven.end,
        fd_tolerance: plan.fd_tolerance,
        rounds: counters.rounds(),
        failed: counters.failed.load(Ordering::Relaxed),
        first_failure: counters.first_failure.lock().unwrap().clone(),
        left,
    };
    print_report(&outcome, &counters, took);
    let failures = verdict(&outcome);
    if failures.is_empty() {
        println!("verdict: PASS");
        Ok(())
    } else {
        println!("verdict: FAIL");
        for failure in &failures {
            println!("  - {failure}");
        }
        bail!("the soak failed: {}", failures.join("; "))
    }
}

/// What the soak does, from its flags.
struct Plan {
    minutes: f64,
    warmup: Duration,
    load: Duration,
    sample: Duration,
    drain: Duration,
    wordle_clients: usize,
    jupyter_workers: usize,
    desktop_workers: usize,
    wordle_pause: Duration,
    desktop_task: String,
    /// Open files the end may have above the baseline.
    fd_tolerance: u64,
    /// Legacy-session guesses, in the order every game tries them.
    guesses: Vec<Bytes>,
    /// Two cells, the second using what the first defined, and what each must print.
    cells: Vec<(ToolCall, &'static str)>,
    screenshot: ToolCall,
    click: ToolCall,
}

impl Plan {
    fn new(bench: &SoakBench) -> anyhow::Result<Self> {
        if !(bench.minutes > 0.0 && bench.minutes.is_finite()) {
            bail!("--minutes must be more than 0");
        }
        let warmup_minutes = bench.warmup_minutes.unwrap_or(bench.minutes / 4.0);
        if !(warmup_minutes > 0.0 && warmup_minutes < bench.minutes) {
            bail!("--warmup-minutes must be more than 0 and less than --minutes");
        }
        if !(bench.sample_seconds > 0.0 && bench.sample_seconds.is_finite()) {
            bail!("--sample-seconds must be more than 0");
        }
        let warmup = Duration::from_secs_f64(warmup_minutes * 60.0);
        if Duration::from_secs(bench.idle_ttl) > warmup {
            bail!(
                "--idle-ttl {} is longer than the warm-up ({:.0} s): abandoned sessions would still pile up after it, which is no leak; give a shorter --idle-ttl or a longer --warmup-minutes",
                bench.idle_ttl,
                warmup.as_secs_f64()
            );
        }
        let (jupyter_workers, desktop_workers) = (
            if bench.no_jupyter {
                0
            } else {
                bench.jupyter_workers
            },
            if bench.no_desktop {
                0
            } else {
                bench.desktop_workers
            },
        );
        if bench.wordle_clients + jupyter_workers + desktop_workers == 0 {
            bail!("no load: give at least one Wordle player, Jupyter or desktop worker");
        }
        const WORDS: [&str; 12] = [
            "crane", "slate", "pious", "dumpy", "wight", "fjord", "vexed", "abbot", "lymph",
            "knock", "zesty", "gawky",
        ];
        Ok(Self {
            minutes: bench.minutes,
            warmup,
            load: Duration::from_secs_f64(bench.minutes * 60.0),
            sample: Duration::from_secs_f64(bench.sample_seconds),
            drain: Duration::from_secs(bench.drain_seconds),
            wordle_clients: bench.wordle_clients,
            jupyter_workers,
            desktop_workers,
            wordle_pause: Duration::from_millis(bench.wordle_pause_ms),
            desktop_task: bench.desktop_task.clone(),
            fd_tolerance: if jupyter_workers > 0 {
                JUPYTER_FD_TOLERANCE
            } else {
                0
            },
            guesses: WORDS
                .iter()
                .map(|w| session_call("guess", json!({ "word": w })))
                .collect::<anyhow::Result<_>>()?,
            cells: vec![
                (
                    ToolCall::new("add_and_execute_code_cell", json!({"code": "x = 6 * 7\nx"}))?,
                    "42",
                ),
                (
                    ToolCall::new("add_and_execute_code_cell", json!({"code": "print(x + 1)"}))?,
                    "43",
                ),
            ],
            screenshot: ToolCall::new("screenshot", json!({}))?,
            click: ToolCall::new("left_click", json!({"coordinate": [640, 400]}))?,
        })
    }

    fn workers(&self, kind: Kind) -> usize {
        match kind {
            Kind::Wordle => self.wordle_clients,
            Kind::Jupyter => self.jupyter_workers,
            Kind::Desktop => self.desktop_workers,
        }
    }
}

/// A kind of round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A Wordle game in a legacy MCP session of its own, played to its end; the session then
    /// ended with `DELETE` (even rounds) or abandoned to the reaper (odd ones).
    Wordle,
    /// A Jupyter episode: created on the control plane, two cells through its MCP endpoint,
    /// deleted.
    Jupyter,
    /// A desktop episode: created, a screenshot and a click through its MCP endpoint, deleted.
    Desktop,
}

const KINDS: [Kind; 3] = [Kind::Wordle, Kind::Jupyter, Kind::Desktop];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Wordle => "wordle",
            Kind::Jupyter => "jupyter",
            Kind::Desktop => "desktop",
        }
    }
}

/// Rounds played and failed, shared by the workers and read by the sampler.
#[derive(Default)]
struct Counters {
    /// Rounds finished, by [`Kind`] in the order of [`KINDS`].
    done: [AtomicU64; 3],
    /// Wordle sessions left to the reaper.
    abandoned: AtomicU64,
    failed: AtomicU64,
    first_failure: Mutex<Option<String>>,
}

impl Counters {
    fn rounds(&self) -> [u64; 3] {
        [0, 1, 2].map(|i| self.done[i].load(Ordering::Relaxed))
    }

    fn fail(&self, kind: Kind, error: &anyhow::Error) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first_failure.lock().unwrap();
        if first.is_none() {
            *first = Some(format!("{}: {error:#}", kind.name()));
        }
    }
}

/// One worker's connections: the control-plane client (one keep-alive connection) and, for
/// Wordle, the client that sends `initialize`.
struct Player {
    client: ControlClient,
    initializer: reqwest::Client,
}

impl Player {
    fn new(base: &str) -> anyhow::Result<Self> {
        Ok(Self {
            client: ControlClient::new(base, None)?,
            initializer: LegacySession::initializer()?,
        })
    }

    /// Plays round number `round` of `kind`.
    async fn play(
        &self,
        plan: &Plan,
        kind: Kind,
        round: u64,
        counters: &Counters,
    ) -> anyhow::Result<()> {
        match kind {
            Kind::Wordle => self.wordle(plan, round, counters).await,
            Kind::Jupyter => self.jupyter(plan).await,
            Kind::Desktop => self.desktop(plan).await,
        }
    }

    async fn wordle(&self, plan: &Plan, round: u64, counters: &Counters) -> anyhow::Result<()> {
        let session = LegacySession::open(&self.initializer, &self.client, "/wordle/mcp").await?;
        let mut turn = 0;
        loop {
            tokio::time::sleep(plan.wordle_pause).await;
            let guess = plan.guesses[(round as usize + turn) % plan.guesses.len()].clone();
            turn += 1;
            if ends_game("guess", session.send(&self.client, guess).await?)? {
                break;
            }
            if turn > plan.guesses.len() {
                bail!("the game did not end after {turn} guesses");
            }
        }
        if round.is_multiple_of(2) {
            session.close(&self.client).await
        } else {
            // Dropped without a word, as a client that crashed or lost interest: the reaper's.
            counters.abandoned.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }

    async fn jupyter(&self, plan: &Plan) -> anyhow::Result<()> {
        let episode = self
            .client
            .create_episode(&NewEpisode::default().env("jupyter"))
            .await?;
        let mut used = Ok(());
        for (cell, prints) in &plan.cells {
            used = answered(cell.send(&self.client, &episode.mcp_url).await?, prints)
                .context("add_and_execute_code_cell");
            if used.is_err() {
                break;
            }
        }
        // Deleted whatever happened, so that a failed cell does not look like a leak too.
        let closed = self.client.close(&episode.id).await;
        used?;
        Ok(closed?)
    }

    async fn desktop(&self, plan: &Plan) -> anyhow::Result<()> {
        let episode = self
            .client
            .create_episode(
                &NewEpisode::default()
                    .env("desktop")
                    .task(plan.desktop_task.clone()),
            )
            .await?;
        let mut used = Ok(());
        for (call, tool) in [
            (&plan.screenshot, "screenshot"),
            (&plan.click, "left_click"),
        ] {
            used = answered(
                call.send(&self.client, &episode.mcp_url).await?,
                "\"image/png\"",
            )
            .context(tool);
            if used.is_err() {
                break;
            }
        }
        let closed = self.client.close(&episode.id).await;
        used?;
        Ok(closed?)
    }
}

/// Checks a tool call's reply: HTTP 200, no error result, and `expected` in it.
fn answered((status, reply): (StatusCode, Bytes), expected: &str) -> anyhow::Result<()> {
    let text = String::from_utf8_lossy(&reply);
    if status != StatusCode::OK || text.contains("\"isError\":true") || !text.contains(expected) {
        let end = text.char_indices().nth(300).map_or(text.len(), |(i, _)| i);
        bail!("answered HTTP {status}: {}", &text[..end]);
    }
    Ok(())
}

/// Round after round of `kind` until `deadline` (the round under way is finished).
async fn worker(
    kind: Kind,
    first_round: u64,
    base: Arc<str>,
    plan: Arc<Plan>,
    counters: Arc<Counters>,
    deadline: Instant,
) {
    let player = match Player::new(&base) {
        Ok(player) => player,
        Err(error) => return counters.fail(kind, &error),
    };
    let mut round = first_round;
    while Instant::now() < deadline {
        let played = tokio::time::timeout(ROUND_LIMIT, player.play(&plan, kind, round, &counters))
            .await
            .unwrap_or_else(|_| {
                Err(anyhow!(
                    "a round took more than {} s",
                    ROUND_LIMIT.as_secs()
                ))
            });
        match played {
            Ok(()) => {
                let index = KINDS.iter().position(|k| *k == kind).unwrap_or(0);
                counters.done[index].fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => {
                counters.fail(kind, &error);
                // A failing server is not hammered.
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        round += 1;
    }
}

/// One leg of load: every worker until `deadline`. Rounds are numbered on from `first_round`, so
/// that the second leg's games differ from the first's.
async fn leg(
    plan: &Arc<Plan>,
    base: &Arc<str>,
    counters: &Arc<Counters>,
    first_round: u64,
    deadline: Instant,
) {
    let mut workers = Vec::new();
    for kind in KINDS {
        for n in 0..plan.workers(kind) {
            workers.push(tokio::spawn(worker(
                kind,
                first_round + n as u64 * 1_000_000,
                base.clone(),
                plan.clone(),
                counters.clone(),
                deadline,
            )));
        }
    }
    for worker in workers {
        let _ = worker.await;
    }
}

/// What [`drive`] measured.
struct Driven {
    baseline: Figures,
    warm: Figures,
    end: Figures,
    /// The tree's processes (pid, start time) just before the shutdown.
    members: Vec<(u32, u64)>,
}

/// Primes the server, takes the baseline, runs both legs of load with the sampler printing,
/// and drains after each.
async fn drive(
    plan: &Arc<Plan>,
    base: &str,
    pid: u32,
    temp: &Path,
    counters: &Arc<Counters>,
) -> anyhow::Result<Driven> {
    // One round of each kind first: what starts on first use (the sandbox pool's kernels, the
    // first jail) is then in the baseline, and a machine that cannot run an environment says
    // so at once.
    let player = Player::new(base)?;
    for kind in KINDS.into_iter().filter(|k| plan.workers(*k) > 0) {
        let hint = match kind {
            Kind::Wordle => "",
            Kind::Jupyter => {
                " (give --no-jupyter where bubblewrap or Python's ipykernel is missing)"
            }
            Kind::Desktop => " (give --no-desktop where Xvfb is missing)",
        };
        player
            .play(plan, kind, 0, &Counters::default())
            .await
            .with_context(|| format!("the first {} round failed{hint}", kind.name()))?;
    }
    drop(player);
    let baseline = settle(pid, temp, None, Duration::from_secs(60)).await;
    let started = Instant::now();
    let sampler = Arc::new(Sampler {
        phase: Mutex::new("load"),
        started,
    });
    let sampling = tokio::spawn(sampler.clone().run(
        pid,
        temp.to_owned(),
        plan.sample,
        counters.clone(),
    ));

    let base: Arc<str> = base.into();
    leg(plan, &base, counters, 1, started + plan.warmup).await;
    sampler.set_phase("drain");
    let warm = settle(pid, temp, Some((&baseline, plan.fd_tolerance)), plan.drain).await;
    sampler.set_phase("load");
    leg(
        plan,
        &base,
        counters,
        1 << 40,
        Instant::now() + plan.load.saturating_sub(plan.warmup),
    )
    .await;
    sampler.set_phase("drain");
    let end = settle(pid, temp, Some((&baseline, plan.fd_tolerance)), plan.drain).await;
    sampling.abort();
    let members = measure(pid, temp).members;
    Ok(Driven {
        baseline,
        warm,
        end,
        members,
    })
}

/// Prints a sample every interval, labelled with what the soak is doing.
struct Sampler {
    phase: Mutex<&'static str>,
    started: Instant,
}

impl Sampler {
    fn set_phase(&self, phase: &'static str) {
        *self.phase.lock().unwrap() = phase;
    }

    async fn run(
        self: Arc<Self>,
        pid: u32,
        temp: PathBuf,
        every: Duration,
        counters: Arc<Counters>,
    ) {
        let mut ticker = tokio::time::interval(every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let figures = measure(pid, &temp).figures;
            let [wordle, jupyter, desktop] = counters.rounds();
            println!(
                "sample {:>7.1} s {:<5}  {}  done: wordle {wordle} jupyter {jupyter} desktop {desktop}  failed {}",
                self.started.elapsed().as_secs_f64(),
                *self.phase.lock().unwrap(),
                figures.line(),
                counters.failed.load(Ordering::Relaxed),
            );
        }
    }
}

/// What one sample of the server's process tree (the server and all its descendants) found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Figures {
    /// Resident memory of the whole tree, KiB (shared pages counted in each process).
    pub(super) rss_kib: u64,
    /// Resident memory of the server process alone, KiB.
    pub(super) server_rss_kib: u64,
    /// Open file descriptors of the tree.
    pub(super) fds: u64,
    pub(super) threads: u64,
    pub(super) processes: u64,
    /// Folders and files in the server's scratch folders (`$TMPDIR/mcpgym-*-PID`): one per
    /// sandbox or desktop, warm ones included.
    pub(super) scratch: u64,
    /// Cgroups of the server's jails (`mcpgym-PID-*`), its own included.
    pub(super) cgroups: u64,
}

impl Figures {
    /// The figures as a sample line shows them.
    fn line(&self) -> String {
        format!(
            "rss {:>7.1} MiB (server {:>6.1})  fds {:>4}  threads {:>4}  procs {:>3}  scratch {:>3}  cgroups {:>3}",
            mib(self.rss_kib),
            mib(self.server_rss_kib),
            self.fds,
            self.threads,
            self.processes,
            self.scratch,
            self.cgroups
        )
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// A sample and the tree's members (pid, start time), which tell a process that outlived the
/// server from a new one given a reused pid.
struct Tree {
    figures: Figures,
    members: Vec<(u32, u64)>,
}

/// Samples the tree of `root` from `/proc`, and its scratch folders and cgroups. Processes that
/// exit meanwhile count with what could still be read of them.
fn measure(root: u32, temp: &Path) -> Tree {
    let processes = Processes::now();
    let mut figures = Figures::default();
    let mut members = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        stack.extend(processes.children_of(pid));
        let Some(status) = processes.status.get(&pid) else {
            continue;
        };
        // Zombies and kernel threads have no VmRSS line.
        let rss = proc_field(status, "VmRSS:").unwrap_or(0);
        figures.rss_kib += rss;
        if pid == root {
            figures.server_rss_kib = rss;
        }
        figures.threads += proc_field(status, "Threads:").unwrap_or(0);
        figures.fds +=
            std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |fds| fds.count() as u64);
        figures.processes += 1;
        members.push((pid, start_time(pid).unwrap_or(0)));
    }
    figures.scratch = scratch_roots(temp, root)
        .iter()
        .map(|root| std::fs::read_dir(root).map_or(0, |entries| entries.count() as u64))
        .sum();
    figures.cgroups = cgroups(root).len() as u64;
    Tree { figures, members }
}

/// A process's start time (clock ticks after boot), the 22nd field of `/proc/PID/stat`.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (in parentheses, which may hold spaces) start at the 3rd.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(22 - 3)?
        .parse()
        .ok()
}

/// The server's scratch folders: `mcpgym-<what>-PID` in the temporary directory, as the
/// sandbox service (`mcpgym-sandbox-PID`) and the desktops (`mcpgym-desktop-PID`) name theirs,
/// and as the clean-up at start-up recognises them.
fn scratch_roots(temp: &Path, pid: u32) -> Vec<PathBuf> {
    let suffix = format!("-{pid}");
    std::fs::read_dir(temp)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with("mcpgym-") && name.ends_with(&suffix))
                && entry.file_type().is_ok_and(|t| t.is_dir())
        })
        .map(|entry| entry.path())
        .collect()
}

/// The server's cgroups: `mcpgym-PID-*` where its jails' cgroups are made.
fn cgroups(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("mcpgym-{pid}-");
    mcpgym_sandbox::jail::cgroup_parents()
        .into_iter()
        .flat_map(|parent| std::fs::read_dir(parent).into_iter().flatten().flatten())
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with(&prefix))
        })
        .map(|entry| entry.path())
        .collect()
}

/// Whether two samples a second apart show a tree at rest: the same open files, threads,
/// processes and scratch folders, and memory within 2% (a kernel still importing its
/// libraries, or a desktop still painting, moves more than that).
fn at_rest(before: &Figures, now: &Figures) -> bool {
    (before.fds, before.threads, before.processes, before.scratch)
        == (now.fds, now.threads, now.processes, now.scratch)
        && now.rss_kib.abs_diff(before.rss_kib) as f64 <= before.rss_kib as f64 * 0.02
}

/// Waits, at most `bound`, for the idle tree to be at rest over three samples a second apart
/// and, when a `baseline` is given, back to it: as many processes and scratch folders (the
/// sandbox pool refilled, every episode's jail gone) and no more open files than it had, give
/// or take the tolerance given with it. The last sample.
async fn settle(
    pid: u32,
    temp: &Path,
    baseline: Option<(&Figures, u64)>,
    bound: Duration,
) -> Figures {
    let deadline = Instant::now() + bound;
    let mut last = measure(pid, temp).figures;
    let mut resting = 0;
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = measure(pid, temp).figures;
        let back = baseline.is_none_or(|(b, fd_tolerance)| {
            now.processes == b.processes
                && now.scratch == b.scratch
                && now.fds <= b.fds + fd_tolerance
        });
        resting = if at_rest(&last, &now) && back {
            resting + 1
        } else {
            0
        };
        last = now;
        if resting >= 2 || Instant::now() >= deadline {
            return last;
        }
    }
}

/// What the server left once it was asked to stop.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Leftovers {
    /// Why the shutdown was not clean (no exit within the limit, a failing exit status).
    pub(super) shutdown: Option<String>,
    /// Scratch folders still there.
    pub(super) folders: Vec<String>,
    /// Processes of the tree still running (pid and name).
    pub(super) processes: Vec<String>,
    /// Cgroups still there.
    pub(super) cgroups: Vec<String>,
}

/// Looks for what the server (asked to stop, and exited with `exit` if it did) left of its tree
/// `members`, its scratch folders and its cgroups.
fn look_after(
    exit: Option<std::process::ExitStatus>,
    members: &[(u32, u64)],
    temp: &Path,
    pid: u32,
) -> Leftovers {
    let shutdown = match exit {
        None => Some(format!(
            "the server did not exit within {} s of SIGTERM",
            SHUTDOWN_LIMIT.as_secs()
        )),
        Some(status) if !status.success() => {
            Some(format!("the server exited with {status} after SIGTERM"))
        }
        Some(_) => None,
    };
    // A descendant killed as the server exits may be reaped by init a moment later.
    let deadline = Instant::now() + Duration::from_secs(2);
    let survivors = loop {
        let survivors: Vec<String> = members
            .iter()
            .filter(|(member, _)| *member != pid)
            .filter(|(member, started)| start_time(*member) == Some(*started))
            .map(|(member, _)| {
                let name =
                    std::fs::read_to_string(format!("/proc/{member}/comm")).unwrap_or_default();
                format!("{member} ({})", name.trim())
            })
            .collect();
        if survivors.is_empty() || Instant::now() >= deadline {
            break survivors;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let display = |paths: Vec<PathBuf>| paths.iter().map(|p| p.display().to_string()).collect();
    Leftovers {
        shutdown,
        folders: display(scratch_roots(temp, pid)),
        processes: survivors,
        cgroups: display(cgroups(pid)),
    }
}

/// Everything the verdict is judged on.
#[derive(Debug, Clone, Default)]
pub(super) struct Outcome {
    /// The idle tree before the load (after one round of each kind).
    pub(super) baseline: Figures,
    /// The idle tree after the warm-up and its drain.
    pub(super) warm: Figures,
    /// The idle tree after the rest of the load and its drain.
    pub(super) end: Figures,
    /// Open files the end may have above the baseline ([`JUPYTER_FD_TOLERANCE`] with Jupyter).
    pub(super) fd_tolerance: u64,
    /// Rounds finished, by kind.
    pub(super) rounds: [u64; 3],
    pub(super) failed: u64,
    pub(super) first_failure: Option<String>,
    pub(super) left: Leftovers,
}

/// The criteria `outcome` fails, each as a sentence; none is a PASS.
///
/// Memory may not grow by more than [`RSS_GROWTH`] from its idle level after the warm-up (the
/// whole tree's, and the server's own, where a leak of the server shows before it is 10% of a
/// tree of kernels and X servers). Processes must be back to their baseline exactly, and open
/// files too but for the stated tolerance: the drain has waited for them, and any excess is
/// something held after its episode ended. Scratch folders likewise, and none may be left after the shutdown, nor a process or
/// a cgroup of the tree. Every round must have succeeded.
pub(super) fn verdict(outcome: &Outcome) -> Vec<String> {
    let (baseline, warm, end) = (&outcome.baseline, &outcome.warm, &outcome.end);
    let mut failures = Vec::new();
    for (what, after_warmup, at_end) in [
        ("the tree's RSS", warm.rss_kib, end.rss_kib),
        ("the server's RSS", warm.server_rss_kib, end.server_rss_kib),
    ] {
        if at_end as f64 > after_warmup as f64 * (1.0 + RSS_GROWTH) {
            failures.push(format!(
                "{what} grew {:.1}% after the warm-up ({:.1} MiB idle after it, {:.1} MiB idle at the end; at most {:.0}%)",
                100.0 * (at_end as f64 / after_warmup.max(1) as f64 - 1.0),
                mib(after_warmup),
                mib(at_end),
                100.0 * RSS_GROWTH
            ));
        }
    }
    for (what, at_start, at_end, tolerance) in [
        ("open files", baseline.fds, end.fds, outcome.fd_tolerance),
        ("processes", baseline.processes, end.processes, 0),
        ("scratch folders", baseline.scratch, end.scratch, 0),
    ] {
        if at_end > at_start + tolerance {
            let allowed = match tolerance {
                0 => String::new(),
                n => format!(" ({n} more allowed)"),
            };
            failures.push(format!(
                "{what} not back to the baseline: {at_start} before the load, {at_end} after it drained{allowed}"
            ));
        }
    }
    if outcome.failed > 0 {
        failures.push(format!(
            "{} round(s) failed, the first: {}",
            outcome.failed,
            outcome.first_failure.as_deref().unwrap_or("?")
        ));
    }
    if outcome.rounds.iter().sum::<u64>() == 0 {
        failures.push("no round was played".to_owned());
    }
    let left = &outcome.left;
    failures.extend(left.shutdown.clone());
    for (what, items) in [
        ("scratch folders", &left.folders),
        ("processes", &left.processes),
        ("cgroups", &left.cgroups),
    ] {
        if !items.is_empty() {
            failures.push(format!(
                "{what} left after the shutdown: {}",
                items.join(", ")
            ));
        }
    }
    failures
}

/// Prints the idle figures side by side, the rounds, and what the shutdown left.
fn print_report(outcome: &Outcome, counters: &Counters, took: Duration) {
    let (b, w, e) = (&outcome.baseline, &outcome.warm, &outcome.end);
    println!("idle figures          baseline   after warm-up   end");
    let row = |what: &str, values: [String; 3]| {
        println!(
            "  {what:<18}{:>10}{:>16}{:>8}",
            values[0], values[1], values[2]
        );
    };
    let mib3 = |f: fn(&Figures) -> u64| [b, w, e].map(|x| format!("{:.1}", mib(f(x))));
    let count3 = |f: fn(&Figures) -> u64| [b, w, e].map(|x| f(x).to_string());
    row("rss (MiB)", mib3(|f| f.rss_kib));
    row("server rss (MiB)", mib3(|f| f.server_rss_kib));
    row("open files", count3(|f| f.fds));
    row("threads", count3(|f| f.threads));
    row("processes", count3(|f| f.processes));
    row("scratch folders", count3(|f| f.scratch));
    row("cgroups", count3(|f| f.cgroups));
    let [wordle, jupyter, desktop] = outcome.rounds;
    println!(
        "rounds: wordle {wordle} games ({} sessions abandoned), jupyter {jupyter} episodes, desktop {desktop} episodes; {} failed",
        counters.abandoned.load(Ordering::Relaxed),
        outcome.failed
    );
    let left = &outcome.left;
    println!(
        "shutdown (SIGTERM): {} in {:.1} s; left: {} scratch folder(s), {} process(es), {} cgroup(s)",
        left.shutdown.as_deref().unwrap_or("exited cleanly"),
        took.as_secs_f64(),
        left.folders.len(),
        left.processes.len(),
        left.cgroups.len()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle(rss_mib: u64, fds: u64, processes: u64) -> Figures {
        Figures {
            rss_kib: rss_mib * 1024,
            server_rss_kib: 30 * 1024,
            fds,
            threads: 40,
            processes,
            scratch: 2,
            cgroups: 0,
        }
    }

    /// A soak whose end looks like its baseline and its warm-up.
    fn flat() -> Outcome {
        Outcome {
            baseline: idle(300, 120, 9),
            warm: idle(320, 120, 9),
            end: idle(325, 120, 9),
            rounds: [1000, 40, 30],
            ..Outcome::default()
        }
    }

    #[test]
    fn a_flat_soak_passes() {
        assert_eq!(verdict(&flat()), Vec::<String>::new());
    }

    #[test]
    fn fewer_files_and_less_memory_at_the_end_pass() {
        let mut outcome = flat();
        outcome.end = idle(250, 110, 8);
        assert!(verdict(&outcome).is_empty());
    }

    #[test]
    fn memory_growing_past_a_tenth_after_the_warm_up_fails() {
        let mut outcome = flat();
        // Growth during the warm-up is no leak: the baseline is not what memory is held to.
        outcome.warm = idle(400, 120, 9);
        outcome.end = idle(439, 120, 9);
        assert!(verdict(&outcome).is_empty());
        outcome.end = idle(441, 120, 9);
        let failures = verdict(&outcome);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(
            failures[0].starts_with("the tree's RSS grew 10.3% after the warm-up"),
            "{failures:?}"
        );
    }

    #[test]
    fn the_server_growing_alone_fails() {
        let mut outcome = flat();
        outcome.end.server_rss_kib = 40 * 1024;
        let failures = verdict(&outcome);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(
            failures[0].starts_with("the server's RSS grew 33.3%"),
            "{failures:?}"
        );
    }

    #[test]
    fn files_processes_or_scratch_above_the_baseline_fail() {
        let mut outcome = flat();
        outcome.end = idle(320, 121, 10);
        outcome.end.scratch = 3;
        let failures = verdict(&outcome);
        assert_eq!(
            failures,
            [
                "open files not back to the baseline: 120 before the load, 121 after it drained",
                "processes not back to the baseline: 9 before the load, 10 after it drained",
                "scratch folders not back to the baseline: 2 before the load, 3 after it drained",
            ]
        );
    }

    #[test]
    fn open_files_within_the_stated_tolerance_pass() {
        let mut outcome = flat();
        outcome.fd_tolerance = 4;
        outcome.end.fds = 124;
        assert!(verdict(&outcome).is_empty());
        outcome.end.fds = 125;
        assert_eq!(
            verdict(&outcome),
            [
                "open files not back to the baseline: 120 before the load, 125 after it drained (4 more allowed)"
            ]
        );
    }

    #[test]
    fn anything_left_after_the_shutdown_fails() {
        let mut outcome = flat();
        outcome.left = Leftovers {
            shutdown: Some("the server did not exit within 30 s of SIGTERM".into()),
            folders: vec!["/tmp/mcpgym-desktop-42".into()],
            processes: vec!["43 (Xvfb)".into()],
            cgroups: vec![],
        };
        let failures = verdict(&outcome);
        assert_eq!(
            failures,
            [
                "the server did not exit within 30 s of SIGTERM",
                "scratch folders left after the shutdown: /tmp/mcpgym-desktop-42",
                "processes left after the shutdown: 43 (Xvfb)",
            ]
        );
    }

    #[test]
    fn failed_rounds_or_none_played_fail() {
        let mut outcome = flat();
        outcome.failed = 2;
        outcome.first_failure = Some("desktop: screenshot: answered HTTP 500".into());
        assert_eq!(
            verdict(&outcome),
            ["2 round(s) failed, the first: desktop: screenshot: answered HTTP 500"]
        );
        let mut outcome = flat();
        outcome.rounds = [0, 0, 0];
        assert_eq!(verdict(&outcome), ["no round was played"]);
    }

    #[test]
    fn the_start_time_is_read_past_a_name_with_spaces() {
        assert!(start_time(std::process::id()).is_some_and(|t| t > 0));
    }
}
