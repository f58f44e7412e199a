//! The server under load and the requests sent to it: a process of this binary (or one given
//! by URL, or one run under callgrind), its CPU and memory as `/proc` reports them, a
//! control-plane client on its address, MCP tool calls built once and sent many times, and
//! legacy MCP sessions.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use hyper::body::Bytes;
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use hyper::{Method, StatusCode};
use mcpgym_shared::client::ControlClient;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

/// The server under load: a process of this binary (killed on drop), or one given by URL.
pub(super) struct Server {
    pub(super) child: Option<Child>,
    pub(super) base: String,
}

impl Drop for Server {
    /// Stops the server with SIGTERM, so it kills its sandboxes and removes its folders;
    /// SIGKILL only if it has not exited within ten seconds.
    fn drop(&mut self) {
        if self.terminate(Duration::from_secs(10)).is_none()
            && let Some(child) = &mut self.child
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Server {
    /// The server at `url` when given, else a new `mcpgym <command> … <extra…>`, pinned to
    /// `cpus` (a `taskset -c` list) when given.
    pub(super) fn start_or_use(
        url: Option<&str>,
        cpus: Option<&str>,
        command: &str,
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        match (url, cpus) {
            (Some(url), _) => Ok(Self {
                child: None,
                base: url.trim_end_matches('/').to_owned(),
            }),
            (None, Some(cpus)) => {
                Self::start_wrapped(&["taskset", "-c", cpus], None, command, extra)
            }
            (None, None) => Self::start(command, extra),
        }
    }

    /// Starts `mcpgym <command> --http 127.0.0.1:0 <extra…>` and waits until it listens.
    pub(super) fn start(command: &str, extra: &[&str]) -> anyhow::Result<Self> {
        Self::start_wrapped(&[], None, command, extra)
    }

    /// Starts `<prefix…> mcpgym <command> --http 127.0.0.1:0 <extra…>` (the prefix a tool that
    /// runs the server in its own process, such as valgrind) and waits until it listens, at
    /// most `startup` when given.
    pub(super) fn start_wrapped(
        prefix: &[&str],
        startup: Option<Duration>,
        command: &str,
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        let exe = std::env::current_exe()?;
        let mut launch = match prefix.split_first() {
            Some((program, args)) => {
                let mut launch = Command::new(program);
                launch.args(args).arg(exe);
                launch
            }
            None => Command::new(exe),
        };
        let mut child = launch
            .args([command, "--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start the server ({})", prefix.join(" ")))?;
        let stderr = child.stderr.take().context("no stderr")?;
        // From here on, dropping the server stops the child, whatever goes wrong.
        let mut server = Self {
            child: Some(child),
            base: String::new(),
        };
        let (listening, address) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut stderr = BufReader::new(stderr);
            let mut line = Vec::new();
            // What the server (or its wrapper) said before listening: why, if it never does.
            let mut said = String::new();
            let mut listening = Some(listening);
            // Keep draining after the address so the server never blocks on a full pipe.
            while stderr.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                let text = String::from_utf8_lossy(&line);
                if let Some(tell) = &listening {
                    if let Some(url) = text.trim_end().strip_prefix("mcpgym: listening on ") {
                        let _ = tell.send(Ok(url.to_owned()));
                        listening = None;
                    } else if said.len() < 4096 {
                        said.push_str(&text);
                    }
                }
                line.clear();
            }
            if let Some(tell) = listening {
                let _ = tell.send(Err(said));
            }
        });
        let address = match startup {
            Some(limit) => address.recv_timeout(limit).map_err(|error| match error {
                RecvTimeoutError::Timeout => {
                    anyhow!("the server did not listen within {} s", limit.as_secs())
                }
                RecvTimeoutError::Disconnected => anyhow!("the server's stderr reader stopped"),
            })?,
            None => address
                .recv()
                .context("the server's stderr reader stopped")?,
        };
        let address = address
            .map_err(|said| anyhow!("the server exited before listening:\n{}", said.trim_end()))?;
        server.base = address;
        Ok(server)
    }

    /// Sends the server SIGTERM, as an operator stops it, and waits up to `bound` for it to
    /// exit: its exit status if it did (at once when it is not ours or has already exited).
    pub(super) fn terminate(&mut self, bound: Duration) -> Option<std::process::ExitStatus> {
        let child = self.child.as_mut()?;
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + bound;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// The server's process id, when it is ours.
    pub(super) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// CPU seconds the server has used so far (user plus system), when it is ours.
    pub(super) fn cpu_seconds(&self) -> Option<f64> {
        cpu_seconds(&format!("/proc/{}/stat", self.pid()?)).ok()
    }

    /// The server's resident memory in KiB, when it is ours.
    pub(super) fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

/// CPU seconds (user plus system) from a `/proc/<pid>/stat` file.
pub(super) fn cpu_seconds(stat_path: &str) -> anyhow::Result<f64> {
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

/// A memory figure of a process, in KiB.
#[derive(Debug, Clone, Copy)]
pub(super) enum Memory {
    /// Resident set size: shared pages counted in full by every process that maps them.
    Rss,
    /// Proportional set size: each shared page divided among the processes that map it, so
    /// the figures of a tree add up to what it really costs.
    Pss,
}

/// The number after `name` on its line of a `/proc` file (`VmRSS:`, `PPid:`, `Pss:`).
pub(super) fn proc_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
}

/// Every running process's `/proc/PID/status`, and each pid's children.
pub(super) struct Processes {
    pub(super) status: std::collections::HashMap<u32, String>,
    pub(super) children: std::collections::HashMap<u32, Vec<u32>>,
}

impl Processes {
    /// A snapshot of `/proc`; processes that exit meanwhile are left out.
    pub(super) fn now() -> Self {
        let (mut status, mut children) = (
            std::collections::HashMap::new(),
            std::collections::HashMap::<u32, Vec<u32>>::new(),
        );
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(entry.path().join("status")) else {
                continue;
            };
            if let Some(parent) = proc_field(&text, "PPid:") {
                children.entry(parent as u32).or_default().push(pid);
            }
            status.insert(pid, text);
        }
        Self { status, children }
    }

    /// The children of `pid`.
    pub(super) fn children_of(&self, pid: u32) -> impl Iterator<Item = u32> + '_ {
        self.children.get(&pid).into_iter().flatten().copied()
    }
}

/// The PSS (KiB) of one process; 0 when it cannot be read (it has just exited).
pub(super) fn pss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|rollup| proc_field(&rollup, "Pss:"))
        .unwrap_or(0)
}

/// `memory` (KiB) of a process and all its descendants. Only the tree's own processes are
/// read further than their status: `smaps_rollup` walks a process's pages.
pub(super) fn tree_kib(root: u32, memory: Memory) -> u64 {
    let processes = Processes::now();
    let mut total = 0;
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        total += match memory {
            Memory::Rss => processes
                .status
                .get(&pid)
                .and_then(|status| proc_field(status, "VmRSS:"))
                .unwrap_or(0),
            Memory::Pss => pss_kib(pid),
        };
        stack.extend(processes.children_of(pid));
    }
    total
}

/// A 2026-07-28 (stateless) MCP `tools/call`, built once and sent many times: the load
/// generator's hot path, so that the CPU it takes from the server it measures stays small.
#[derive(Clone)]
pub(super) struct ToolCall {
    /// The request body; the episode is named by the URL.
    body: Bytes,
    /// The headers that name the call (`Mcp-Method`, `Mcp-Name`) and the protocol version.
    headers: [(HeaderName, HeaderValue); 3],
}

impl ToolCall {
    /// A call of `tool` with `arguments`.
    pub(super) fn new(tool: &str, arguments: serde_json::Value) -> anyhow::Result<Self> {
        let body = serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {
                "name": tool, "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}
                }
            }
        }))?;
        Ok(Self {
            body: Bytes::from(body),
            headers: [
                (
                    HeaderName::from_static("mcp-protocol-version"),
                    HeaderValue::from_static("2026-07-28"),
                ),
                (
                    HeaderName::from_static("mcp-method"),
                    HeaderValue::from_static("tools/call"),
                ),
                (
                    HeaderName::from_static("mcp-name"),
                    HeaderValue::from_str(tool)?,
                ),
            ],
        })
    }

    /// Sends the call to the MCP endpoint at `path`: the reply's status and body.
    pub(super) async fn send(
        &self,
        client: &ControlClient,
        path: &str,
    ) -> anyhow::Result<(StatusCode, Bytes)> {
        Ok(client
            .send(Method::POST, path, &self.headers, self.body.clone())
            .await?)
    }
}

/// The protocol version legacy sessions speak.
const LEGACY_VERSION: &str = "2025-06-18";

/// The request that opens a legacy session.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;

/// A legacy (2025-06-18) MCP session: opened with `initialize`, then named by its
/// `Mcp-Session-Id` in every request.
pub(super) struct LegacySession {
    /// The MCP endpoint, relative to the server's base URL.
    path: String,
    /// `Mcp-Session-Id` and `MCP-Protocol-Version`.
    headers: [(HeaderName, HeaderValue); 2],
}

impl LegacySession {
    /// The client [`LegacySession::open`] sends `initialize` with: reqwest, because the session
    /// id comes in a reply header, which [`ControlClient::send`] does not return. It keeps one
    /// connection alive for the sessions it opens one after another.
    pub(super) fn initializer() -> anyhow::Result<reqwest::Client> {
        reqwest::Client::builder()
            .no_proxy()
            .tcp_nodelay(true)
            .build()
            .context("cannot build an HTTP client")
    }

    /// Opens a session at the MCP endpoint `path`: `initialize` over `initializer`, then
    /// `notifications/initialized` over `client`, which carries the session's later requests.
    pub(super) async fn open(
        initializer: &reqwest::Client,
        client: &ControlClient,
        path: &str,
    ) -> anyhow::Result<Self> {
        let reply = initializer
            .post(client.url(path))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(INITIALIZE)
            .send()
            .await
            .with_context(|| format!("initialize at {}", client.url(path)))?;
        let (status, id) = (
            reply.status(),
            reply.headers().get("mcp-session-id").cloned(),
        );
        let body = reply.bytes().await.context("initialize")?;
        json_rpc_result::<serde::de::IgnoredAny>("initialize", status, &body)?;
        let id = id.with_context(|| {
            format!(
                "initialize answered without an Mcp-Session-Id header: {}",
                clipped(&body)
            )
        })?;
        let session = Self {
            path: path.to_owned(),
            headers: [
                (HeaderName::from_static("mcp-session-id"), id),
                (
                    HeaderName::from_static("mcp-protocol-version"),
                    HeaderValue::from_static(LEGACY_VERSION),
                ),
            ],
        };
        let initialized =
            Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let (status, body) = session.send(client, initialized).await?;
        if status != StatusCode::ACCEPTED {
            bail!(
                "notifications/initialized answered HTTP {status}, not 202: {}",
                clipped(&body)
            );
        }
        Ok(session)
    }

    /// Sends a JSON-RPC message (such as a [`session_call`]) in the session: the reply's status
    /// and body.
    pub(super) async fn send(
        &self,
        client: &ControlClient,
        body: Bytes,
    ) -> anyhow::Result<(StatusCode, Bytes)> {
        Ok(client
            .send(Method::POST, &self.path, &self.headers, body)
            .await?)
    }

    /// Ends the session (`DELETE`), so that a server given by URL does not keep it.
    pub(super) async fn close(&self, client: &ControlClient) -> anyhow::Result<()> {
        let (status, body) = client
            .send(Method::DELETE, &self.path, &self.headers, Bytes::new())
            .await?;
        if !status.is_success() {
            bail!(
                "closing the session answered HTTP {status}: {}",
                clipped(&body)
            );
        }
        Ok(())
    }
}

/// A legacy-session `tools/call` of `tool` with `arguments`, built once and sent many times
/// with [`LegacySession::send`].
pub(super) fn session_call(tool: &str, arguments: serde_json::Value) -> anyhow::Result<Bytes> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}
    });
    Ok(Bytes::from(serde_json::to_vec(&body)?))
}

/// The `result` of a JSON-RPC reply to `what`, which must have come with HTTP 200. The reply is
/// JSON, or an event stream (legacy sessions) whose first non-empty `data:` holds the JSON.
pub(super) fn json_rpc_result<T: DeserializeOwned>(
    what: &str,
    status: StatusCode,
    body: &[u8],
) -> anyhow::Result<T> {
    #[derive(Deserialize)]
    struct Reply<T> {
        result: Option<T>,
    }
    if status != StatusCode::OK {
        bail!("{what} answered HTTP {status}: {}", clipped(body));
    }
    let json = if body.first() == Some(&b'{') {
        body
    } else {
        body.split(|&b| b == b'\n')
            .filter_map(|line| line.strip_prefix(b"data:"))
            .map(<[u8]>::trim_ascii)
            .find(|data| !data.is_empty())
            .unwrap_or(body)
    };
    let reply: Reply<T> = serde_json::from_slice(json)
        .with_context(|| format!("unexpected reply to {what}: {}", clipped(body)))?;
    reply
        .result
        .with_context(|| format!("{what} answered without a result: {}", clipped(body)))
}

/// The start of a reply, for an error message.
fn clipped(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    match text.char_indices().nth(500) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.into_owned(),
    }
}

/// A server run under callgrind, which counts the instructions it runs only between
/// [`Callgrind::count`]`(true)` and [`Callgrind::count`]`(false)`.
pub(super) struct Callgrind {
    pub(super) server: Server,
    pid: u32,
    /// Where callgrind writes its dumps.
    dir: PathBuf,
}

impl Callgrind {
    /// Starts `mcpgym <command> … <extra…>` under `valgrind --tool=callgrind`, counting
    /// nothing yet, and waits until it listens: up to a minute, as valgrind translates the
    /// whole start-up.
    pub(super) fn start(command: &str, extra: &[&str]) -> anyhow::Result<Self> {
        for tool in ["valgrind", "callgrind_control"] {
            match Command::new(tool).arg("--version").output() {
                Ok(_) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => bail!(
                    "--callgrind runs the server under valgrind, and `{tool}` is not \
                     installed: install valgrind (apt-get install valgrind)"
                ),
                Err(error) => return Err(error).with_context(|| format!("cannot run {tool}")),
            }
        }
        let dir = dump_dir();
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let out_file = format!("--callgrind-out-file={}/callgrind.out.%p", dir.display());
        let server = Server::start_wrapped(
            &[
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                &out_file,
            ],
            Some(Duration::from_secs(60)),
            command,
            extra,
        )?;
        // valgrind runs the program in its own process, so the child is the server.
        let pid = server.pid().context("the server has no process id")?;
        Ok(Self { server, pid, dir })
    }

    /// Turns counting on or off.
    pub(super) fn count(&self, on: bool) -> anyhow::Result<()> {
        self.control(&["-i", if on { "on" } else { "off" }])
    }

    /// Writes out what has been counted: the instructions (`Ir`), and the dump's path (for
    /// `callgrind_annotate`).
    pub(super) fn dump(&self) -> anyhow::Result<(u64, PathBuf)> {
        self.control(&["-d"])?;
        // Dumps on request are numbered callgrind.out.<pid>.<n>; the highest is the latest.
        let prefix = format!("callgrind.out.{}.", self.pid);
        let path = std::fs::read_dir(&self.dir)
            .with_context(|| format!("cannot list {}", self.dir.display()))?
            .flatten()
            .filter_map(|entry| {
                let n: u32 = entry
                    .file_name()
                    .to_str()?
                    .strip_prefix(&prefix)?
                    .parse()
                    .ok()?;
                Some((n, entry.path()))
            })
            .max()
            .map(|(_, path)| path)
            .with_context(|| format!("callgrind wrote no dump in {}", self.dir.display()))?;
        let dump = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let instructions = dump
            .lines()
            .find_map(|line| line.strip_prefix("totals:"))
            .or_else(|| dump.lines().find_map(|line| line.strip_prefix("summary:")))
            .and_then(|counts| counts.split_whitespace().next()?.parse().ok())
            .with_context(|| format!("no totals: line in {}", path.display()))?;
        Ok((instructions, path))
    }

    /// Runs `callgrind_control <args…> <pid>`.
    fn control(&self, args: &[&str]) -> anyhow::Result<()> {
        let output = Command::new("callgrind_control")
            .args(args)
            .arg(self.pid.to_string())
            .output()
            .context("cannot run callgrind_control")?;
        let said = String::from_utf8_lossy(&output.stdout);
        // It reports an unknown process on stdout, with a zero status.
        if !output.status.success() || !said.contains("OK") {
            bail!(
                "callgrind_control {} {} failed: {said}{}",
                args.join(" "),
                self.pid,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(())
    }
}

/// Where callgrind writes its dumps: `target/bench` when this binary was built into cargo's
/// `target/<profile>/`, else the temporary directory.
fn dump_dir() -> PathBuf {
    let exe = std::env::current_exe().ok();
    match exe.as_deref().and_then(Path::parent).and_then(Path::parent) {
        Some(target) if target.file_name() == Some("target".as_ref()) => target.join("bench"),
        _ => std::env::temp_dir().join("mcpgym-bench"),
    }
}
