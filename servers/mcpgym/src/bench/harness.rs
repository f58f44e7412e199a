//! The server under load and the requests sent to it: a process of this binary (or one given
//! by URL), its CPU and memory as `/proc` reports them, a control-plane client on its address,
//! and MCP tool calls built once and sent many times.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, StatusCode};
use mcpgym_shared::client::ControlClient;
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
    /// The server at `url` when given, else a new `mcpgym <command> … <extra…>`.
    pub(super) fn start_or_use(
        url: Option<&str>,
        command: &str,
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        match url {
            Some(url) => Ok(Self {
                child: None,
                base: url.trim_end_matches('/').to_owned(),
            }),
            None => Self::start(command, extra),
        }
    }

    /// Starts `mcpgym <command> --http 127.0.0.1:0 <extra…>` and waits until it listens.
    pub(super) fn start(command: &str, extra: &[&str]) -> anyhow::Result<Self> {
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

/// `memory` (KiB) of a process and all its descendants.
pub(super) fn tree_kib(root: u32, memory: Memory) -> u64 {
    let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    let mut sizes: std::collections::HashMap<u32, u64> = Default::default();
    let field = |text: &str, name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
    };
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        if let Some(parent) = field(&status, "PPid:") {
            children.entry(parent as u32).or_default().push(pid);
        }
        let size = match memory {
            Memory::Rss => field(&status, "VmRSS:"),
            Memory::Pss => std::fs::read_to_string(entry.path().join("smaps_rollup"))
                .ok()
                .and_then(|rollup| field(&rollup, "Pss:")),
        };
        sizes.insert(pid, size.unwrap_or(0));
    }
    let mut total = 0;
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        total += sizes.get(&pid).copied().unwrap_or(0);
        stack.extend(children.get(&pid).into_iter().flatten());
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
