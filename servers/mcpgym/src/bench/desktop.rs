//! `mcpgym bench desktop`: episode start to first screenshot, the screenshot tool, a click
//! with its screenshot, and how many desktops two cores hold at one action per second each;
//! then, per application set (a bare terminal, Chromium on a local page, LibreOffice Calc,
//! Writer, Impress), start to first screenshot, memory (PSS) per desktop (in all and by part:
//! X server, window manager, panel, worker, applications) and how many fit in 24 GiB, and
//! desktops held at one action per second.
//!
//! The application sets are tasks of a task file the benchmark writes and serves with
//! `--tasks`, so they do not depend on any family's instances.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hyper::StatusCode;
use mcpgym_shared::client::{ControlClient, NewEpisode};
use serde_json::json;

use super::harness::{Processes, Server, ToolCall, pss_kib};
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
    /// Application sets measured one by one (start, memory): bare, chromium, calc, writer,
    /// impress.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "bare,chromium,calc,writer,impress"
    )]
    pub apps: Vec<String>,
    /// Desktops of each application set held at once to measure memory per desktop.
    #[arg(long, default_value_t = 4)]
    pub memory_desktops: usize,
    /// Application sets measured at one action per second (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "chromium,calc")]
    pub capacity_apps: Vec<String>,
    /// Desktop counts of those sets to try at one action per second each.
    #[arg(long, value_delimiter = ',', default_value = "4,8,12")]
    pub app_desktops: Vec<usize>,
}

/// The task the first phases play: one xterm.
const TASK: &str = "bare";

/// The application sets, as a task file: one task per set, each with a check that cannot pass
/// (the benchmark never grades).
const APP_SETS: &[(&str, &str)] = &[
    ("bare", r#"["terminal"]"#),
    ("chromium", r#"[["chromium"]]"#),
    ("calc", r#"[["libreoffice", "--calc"]]"#),
    ("writer", r#"[["libreoffice", "--writer"]]"#),
    ("impress", r#"[["libreoffice", "--impress"]]"#),
];

/// A page for the Chromium set: some text, a form and a table, as task pages look.
const PAGE: &str = "<!doctype html><title>Orders</title><h1>Orders</h1><form method=post action=/submit><label>Name <input name=name></label> <button>Send</button></form><table border=1><tr><th>Id<th>City<th>Total</tr><tr><td>1<td>Lisbon<td>12.50</tr><tr><td>2<td>Oslo<td>7.25</tr></table>";

/// Writes the application sets' task file; its path.
fn write_app_sets() -> anyhow::Result<std::path::PathBuf> {
    let path =
        std::env::temp_dir().join(format!("mcpgym-bench-desktop-{}.jsonl", std::process::id()));
    let mut lines = String::new();
    for (id, apps) in APP_SETS {
        let apps: serde_json::Value = serde_json::from_str(apps)?;
        let mut task = json!({
            "id": id,
            "prompt": "A benchmark desktop: nothing to do.",
            "apps": apps,
            "checks": [{"kind": "file_exists", "path": "never-made"}],
        });
        if *id == "chromium" {
            task["pages"] = json!([{"path": "index.html", "body": PAGE}]);
        }
        lines.push_str(&task.to_string());
        lines.push('\n');
    }
    std::fs::write(&path, lines).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Runs the desktop benchmark phases against a server of this binary.
pub fn run(bench: DesktopBench) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    for set in bench.apps.iter().chain(&bench.capacity_apps) {
        if !APP_SETS.iter().any(|(id, _)| id == set) {
            bail!("unknown application set {set:?}: use bare, chromium, calc, writer or impress");
        }
    }
    let tasks = write_app_sets()?;
    let tasks_arg = tasks.to_string_lossy().into_owned();
    // Settle 0: the figures are the cost of the work, not of the configurable pause.
    let server = Server::start(
        "desktop",
        &[
            "--settle-ms",
            "0",
            "--max-turns",
            "1000000",
            "--tasks",
            &tasks_arg,
        ],
    );
    let _ = std::fs::remove_file(&tasks);
    let server = server?;
    let base: Arc<str> = server.base.clone().into();
    let pid = server.pid().context("no server process")?;
    let seconds = Duration::from_secs(bench.seconds);
    runtime.block_on(async {
        start_phase(&base, TASK, bench.starts).await?;
        calls_phase(&base, bench.calls).await?;
        capacity_phase(&base, TASK, &bench.desktops, seconds).await?;
        for set in &bench.apps {
            start_phase(&base, set, bench.starts.min(5)).await?;
            memory_phase(&base, pid, set, bench.memory_desktops).await?;
        }
        for set in &bench.capacity_apps {
            capacity_phase(&base, set, &bench.app_desktops, seconds).await?;
        }
        anyhow::Ok(())
    })
}

/// Starts an episode of `task`: its id and the path of its MCP endpoint.
async fn create(client: &ControlClient, task: &str) -> anyhow::Result<(String, String)> {
    let episode = client
        .create_episode(&NewEpisode::default().task(task))
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

/// Episodes of `task` started one after another, each timed from create to its first
/// screenshot (the environment answers create once the task's windows are up).
async fn start_phase(base: &str, task: &str, starts: usize) -> anyhow::Result<()> {
    let client = ControlClient::new(base, None)?;
    let screenshot = ToolCall::new("screenshot", json!({}))?;
    let mut latencies = Vec::with_capacity(starts);
    for _ in 0..starts {
        let started = Instant::now();
        let (id, path) = create(&client, task).await?;
        call_with_image(&client, &path, "screenshot", &screenshot).await?;
        latencies.push(started.elapsed().as_micros() as u32);
        client.close(&id).await?;
    }
    println!(
        "desktop {task}, {starts} episodes started one after another (Xvfb, openbox, panel, worker, applications):"
    );
    print_latency("start to first screenshot", latencies);
    Ok(())
}

/// Proportional set size per desktop of `task`: the server's process tree (X servers, window
/// managers, panels, workers, jailed applications) with `count` desktops open and settled,
/// less the tree before, divided among them; in all, then part by part.
async fn memory_phase(base: &str, pid: u32, task: &str, count: usize) -> anyhow::Result<()> {
    let client = ControlClient::new(base, None)?;
    let screenshot = ToolCall::new("screenshot", json!({}))?;
    let before = pss_by_part(pid);
    let mut open = Vec::with_capacity(count);
    for _ in 0..count {
        let (id, path) = create(&client, task).await?;
        call_with_image(&client, &path, "screenshot", &screenshot).await?;
        open.push(id);
    }
    // Applications keep allocating for a moment after their first paint.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = pss_by_part(pid);
    for id in open {
        client.close(&id).await?;
    }
    let total = |parts: &BTreeMap<Part, PartPss>| parts.values().map(|p| p.kib).sum::<u64>();
    let (before_kib, after_kib) = (total(&before), total(&after));
    let desktops = count.max(1) as f64;
    let per_desktop = after_kib.saturating_sub(before_kib) as f64 / 1024.0 / desktops;
    println!(
        "  PSS per {task} desktop {per_desktop:.0} MiB ({count} open: {:.0} MiB before, {:.0} MiB after); {:.0} fit in 24 GiB",
        before_kib as f64 / 1024.0,
        after_kib as f64 / 1024.0,
        24.0 * 1024.0 / per_desktop.max(1.0)
    );
    let parts: BTreeSet<Part> = before.keys().chain(after.keys()).copied().collect();
    for part in parts {
        let (was, is) = (before.get(&part), after.get(&part));
        let kib = |p: Option<&PartPss>| p.map_or(0, |p| p.kib) as f64;
        // Signed: a part may shrink (a process left over from an earlier phase exits).
        let mib = (kib(is) - kib(was)) / 1024.0 / desktops;
        let names: BTreeSet<&str> = [was, is]
            .into_iter()
            .flatten()
            .flat_map(|p| p.names.iter().map(String::as_str))
            .collect();
        let names = names.into_iter().collect::<Vec<_>>().join(", ");
        println!("    {:<20}{mib:>6.0} MiB  {names}", part.label());
    }
    Ok(())
}

/// A part of the desktops whose memory the memory phase reports on its own; printed in this
/// order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    XServer,
    WindowManager,
    PanelAndWallpaper,
    Worker,
    Applications,
    /// The server process itself: what it holds for its episodes.
    Server,
    Other,
}

impl Part {
    fn label(self) -> &'static str {
        match self {
            Part::XServer => "X server",
            Part::WindowManager => "window manager",
            Part::PanelAndWallpaper => "panel and wallpaper",
            Part::Worker => "worker",
            Part::Applications => "applications",
            Part::Server => "server",
            Part::Other => "other",
        }
    }

    /// The part a process is by its name (`comm`, at most 15 bytes) and its arguments; `None`
    /// for one not named here (a shell in a terminal, a helper), which belongs to the part of
    /// the process that started it.
    fn of(name: &str, args: &[u8]) -> Option<Part> {
        let application = ["chrom", "soffice", "oosplash"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
            || ["xterm", "mousepad", "gnumeric", "galculator", "pcmanfm"].contains(&name);
        match name {
            "Xvfb" => Some(Part::XServer),
            "openbox" => Some(Part::WindowManager),
            "tint2" | "hsetroot" => Some(Part::PanelAndWallpaper),
            // Workers are this binary, as the server is: told apart by their subcommand.
            _ if args.split(|&b| b == 0).nth(1) == Some(b"desktop-worker") => Some(Part::Worker),
            _ if application => Some(Part::Applications),
            _ => None,
        }
    }
}

/// The PSS of one part of the server's process tree and the names of its processes.
#[derive(Debug, Default)]
struct PartPss {
    kib: u64,
    names: BTreeSet<String>,
}

/// The PSS (KiB) of the process tree of `root` (the server), by part. Unreadable figures (a
/// process that has just exited) count as 0.
fn pss_by_part(root: u32) -> BTreeMap<Part, PartPss> {
    let processes = Processes::now();
    let name_of = |pid: u32| {
        processes
            .status
            .get(&pid)
            .and_then(|status| status.lines().find_map(|l| l.strip_prefix("Name:")))
            .unwrap_or_default()
            .trim()
    };
    let mut parts: BTreeMap<Part, PartPss> = BTreeMap::new();
    // Only the tree's own processes are read further: smaps_rollup walks a process's pages.
    let mut stack = vec![(root, Part::Server)];
    while let Some((pid, inherited)) = stack.pop() {
        let name = name_of(pid);
        let part = if pid == root {
            Part::Server
        } else {
            let args = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            Part::of(name, &args).unwrap_or(inherited)
        };
        let entry = parts.entry(part).or_default();
        entry.kib += pss_kib(pid);
        entry.names.insert(name.to_owned());
        // What the server starts itself (a jail's bwrap, say) is no part of the server.
        let passed_on = if part == Part::Server {
            Part::Other
        } else {
            part
        };
        stack.extend(processes.children_of(pid).map(|c| (c, passed_on)));
    }
    parts
}

async fn calls_phase(base: &str, calls: usize) -> anyhow::Result<()> {
    let client = ControlClient::new(base, None)?;
    let (id, path) = create(&client, TASK).await?;
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

async fn capacity_phase(
    base: &str,
    task: &str,
    counts: &[usize],
    duration: Duration,
) -> anyhow::Result<()> {
    println!(
        "desktop {task}, N desktops each doing one left_click + screenshot per second for {} s:",
        duration.as_secs()
    );
    for &count in counts {
        // One client (so one connection) per desktop, as separate agents would hold.
        let mut desktops = Vec::with_capacity(count);
        for _ in 0..count {
            let client = ControlClient::new(base, None)?;
            let (id, path) = create(&client, task).await?;
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
