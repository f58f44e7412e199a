//! Helpers shared by the end-to-end tests: start the real `mcpgym` binary and talk to it as
//! clients do (rmcp's client over stdio and streamable HTTP, the typed [`ControlClient`] for the
//! control plane, reqwest for requests the client would never send).
#![allow(dead_code)]

pub mod browser;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

// Each test uses its own part of the client.
#[allow(unused_imports)]
pub use mcpgym_shared::client::{ClientError, ControlClient, Episode, NewEpisode, Status};
#[allow(unused_imports)]
pub use mcpgym_shared::task::Split;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, MetaObject, ProtocolVersion,
    RequestMetaObject,
};
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_mcpgym");

/// The test secret this process and the servers it starts share, so that a test instance
/// generated here (to play its demo, say) is the one the server poses: a fixed secret, set in
/// this process on first use, and the path of its file to pass as `--test-secret`.
pub fn shared_test_secret() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        const BYTE: u8 = 0x5a;
        let path = std::env::temp_dir().join("mcpgym-tests-test-secret");
        // Written beside and renamed: test processes running at once write the same bytes.
        let partial = path.with_extension(std::process::id().to_string());
        std::fs::write(&partial, format!("{BYTE:02x}").repeat(32)).unwrap();
        std::fs::rename(&partial, &path).unwrap();
        assert!(
            mcpgym_shared::generate::set_test_secret([BYTE; 32]),
            "another test secret was set in this process"
        );
        path.to_str().unwrap().to_owned()
    })
}

/// `mcpgym replay FILE`: whether it exited 0, and what it printed.
pub fn replay(file: &std::path::Path) -> (bool, String) {
    let output = Command::new(BIN)
        .arg("replay")
        .arg(file)
        .output()
        .expect("run mcpgym replay");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), printed)
}

/// `mcpgym rescore PATHS`: whether it found no difference, and what it printed.
pub fn rescore(paths: &[&std::path::Path]) -> (bool, String) {
    let output = Command::new(BIN)
        .arg("rescore")
        .args(paths)
        .output()
        .expect("run mcpgym rescore");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), printed)
}

/// A file under `tests/data`.
pub fn data(name: &str) -> String {
    format!("{}/../../tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Whether the suite runs at full depth: `./.ci/test --full` sets `MCPGYM_TEST_TIER=full`.
/// The fast tier (the default) plays every family, task application, environment and door,
/// on fewer seeds; tests that only the full tier runs are `#[ignore]`d with the reason "full
/// tier" (`cargo nextest run --run-ignored all` runs them too).
pub fn full_tier() -> bool {
    std::env::var("MCPGYM_TEST_TIER").is_ok_and(|tier| tier == "full")
}

/// `fast` in the fast tier, `full` in the full one.
pub fn by_tier<T>(fast: T, full: T) -> T {
    if full_tier() { full } else { fast }
}

/// An MCP client session.
pub type Client = RunningService<RoleClient, ()>;

/// A server process listening on a loopback port; killed when dropped.
pub struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// Everything the server wrote to stderr after its listening line.
    pub log: Arc<Mutex<String>>,
}

impl HttpServer {
    /// Starts `mcpgym <args…> --http 127.0.0.1:0` and waits until it listens.
    pub fn start(args: &[&str]) -> Self {
        Self::start_with_log(args, "warn")
    }

    /// Like [`HttpServer::start`], with `RUST_LOG` set to `filter`.
    pub fn start_with_log(args: &[&str], filter: &str) -> Self {
        let mut command = Command::new(BIN);
        command.env("RUST_LOG", filter).args(args);
        Self::spawn(command)
    }

    /// Starts `command` (an `mcpgym` invocation, perhaps behind a wrapper such as `setpriv`)
    /// with `--http 127.0.0.1:0` appended, and waits until it listens.
    pub fn spawn(command: Command) -> Self {
        Self::spawn_at(command, "127.0.0.1:0")
    }

    /// Like [`HttpServer::spawn`], listening on `addr` (a server restarted where it was).
    pub fn spawn_at(mut command: Command, addr: &str) -> Self {
        let mut child = command
            .args(["--http", addr])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcpgym");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let base = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(url) = line.strip_prefix("mcpgym: listening on ") {
                        break url.to_owned();
                    }
                }
                _ => panic!("mcpgym exited before listening: {:?}", child.wait()),
            }
        };
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push_str(&line);
                sink.lock().unwrap().push('\n');
            }
        });
        Self { child, base, log }
    }

    /// Waits up to two seconds for the server's log to contain `text`.
    pub fn log_contains(&self, text: &str) -> bool {
        for _ in 0..200 {
            if self.log.lock().unwrap().contains(text) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }

    /// A URL on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// An MCP client speaking the legacy (2025-11-25) era, with a session.
    pub async fn legacy_client(&self, path: &str) -> Client {
        let transport = StreamableHttpClientTransport::from_uri(self.url(path));
        let client = ().serve(transport).await.expect("legacy MCP client connects");
        assert_eq!(
            client.peer_info().unwrap().protocol_version,
            ProtocolVersion::V_2025_11_25
        );
        client
    }

    /// An MCP client speaking the stateless 2026-07-28 era.
    pub async fn stateless_client(&self, path: &str) -> Client {
        let transport = StreamableHttpClientTransport::from_uri(self.url(path));
        let client = ()
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("2026-07-28 MCP client connects");
        assert_eq!(
            client.peer_info().unwrap().protocol_version,
            ProtocolVersion::V_2026_07_28
        );
        client
    }

    /// The control-plane client for this server.
    pub fn control(&self) -> ControlClient {
        ControlClient::new(&self.base, None).expect("the listening line is an http:// URL")
    }

    /// `POST /episodes`; returns the created episode.
    pub async fn create(&self, request: NewEpisode) -> Episode {
        self.control()
            .create_episode(&request)
            .await
            .unwrap_or_else(|e| panic!("create {request:?}: {e}"))
    }

    /// `GET /metrics`.
    pub async fn metrics(&self) -> String {
        self.control().metrics().await.expect("metrics")
    }

    /// `GET /episodes/{id}`.
    pub async fn status(&self, id: &str) -> Status {
        self.control()
            .status(id)
            .await
            .unwrap_or_else(|e| panic!("status of {id}: {e}"))
    }
}

impl Drop for HttpServer {
    /// Stops the server as an operator would (SIGTERM), so it kills its sandboxes and removes
    /// its folders; SIGKILL only if it has not exited within five seconds.
    fn drop(&mut self) {
        // One already reaped (killed, terminated) has no pid left to signal: another
        // process may hold it by now.
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..500 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw stateless (2026-07-28) `tools/call` POST, as a harness without an MCP SDK sends it.
pub async fn raw_stateless_call(
    url: &str,
    tool: &str,
    arguments: Value,
    extra_meta: Value,
) -> Value {
    let response = stateless_request(url, tool, arguments, extra_meta)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    response.json().await.unwrap()
}

/// The request [`raw_stateless_call`] sends, to add to before sending.
pub fn stateless_request(
    url: &str,
    tool: &str,
    arguments: Value,
    extra_meta: Value,
) -> reqwest::RequestBuilder {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    meta.as_object_mut()
        .unwrap()
        .extend(extra_meta.as_object().cloned().unwrap_or_default());
    http()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .json(&json!({
            "jsonrpc": "2.0", "id": 42, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": meta}
        }))
}

/// Runs `mcpgym <args…>` expecting it to refuse to start; returns what it said on stderr.
pub fn start_fails(args: &[&str]) -> String {
    let output = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success(), "{args:?} started");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A plain HTTP client, for requests the typed [`ControlClient`] would never send (malformed
/// bodies, missing tokens, foreign origins) and for the other doors.
pub fn http() -> reqwest::Client {
    reqwest::Client::new()
}

/// An MCP client over stdio to `mcpgym <args…>`.
pub async fn stdio_client(args: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(BIN);
    command.args(args).stderr(Stdio::null());
    let transport = TokioChildProcess::new(command).expect("spawn mcpgym");
    ().serve(transport)
        .await
        .expect("stdio MCP client connects")
}

/// Arguments for `guess`.
pub fn word(word: &str) -> JsonObject {
    json!({ "word": word }).as_object().unwrap().clone()
}

/// A `tools/call` request.
pub fn call(tool: &str, arguments: JsonObject) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)
}

/// A `tools/call` request that names its episode in `_meta`.
pub fn call_in(episode: &str, tool: &str, arguments: JsonObject) -> CallToolRequestParams {
    let mut params = call(tool, arguments);
    let mut meta = JsonObject::new();
    meta.insert("mcpgym/episode".into(), episode.into());
    params.meta = Some(RequestMetaObject(MetaObject(meta)));
    params
}

/// `guess(word)` on the client's episode.
pub async fn guess(client: &Client, w: &str) -> CallToolResult {
    client
        .call_tool(call("guess", word(w)))
        .await
        .expect("guess call")
}

/// The text content of a result.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The step information in a result's `_meta`.
pub fn step(result: &CallToolResult) -> Value {
    result
        .meta
        .as_ref()
        .and_then(|m| m.get("mcpgym/step"))
        .cloned()
        .expect("every tool result carries _meta[\"mcpgym/step\"]")
}

/// Whether a result is an error result.
pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// Six allowed words that share no letter with `answer` where possible: guesses that lose.
pub fn losing_guesses(answer: &str) -> Vec<&'static str> {
    const POOL: [&str; 14] = [
        "crane", "sloth", "dumpy", "wight", "fjord", "vexed", "abbot", "lymph", "knock", "zesty",
        "gawky", "pious", "brick", "mound",
    ];
    POOL.into_iter().filter(|w| *w != answer).take(6).collect()
}

impl HttpServer {
    /// The server process's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server at once (SIGKILL), as a crashed machine would stop it, and reaps it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A JSON object literal as tool arguments.
pub fn args(value: Value) -> JsonObject {
    value.as_object().expect("arguments are an object").clone()
}

/// Calls a tool with JSON arguments. A refused call is a result (see [`is_error`]); only a
/// failed exchange panics.
pub async fn act(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    client
        .call_tool(call(tool, args(arguments)))
        .await
        .unwrap_or_else(|e| panic!("{tool} call failed: {e}"))
}

impl HttpServer {
    /// The address the server listens on.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.base
            .strip_prefix("http://")
            .and_then(|a| a.parse().ok())
            .expect("the listening line names an address")
    }

    /// Sends SIGTERM and waits up to `bound` for the process to exit; its status if it did.
    pub fn terminate(&mut self, bound: std::time::Duration) -> Option<std::process::ExitStatus> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + bound;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        None
    }
}

/// A raw TCP connection to `addr` that has sent `bytes` (perhaps only part of a request).
pub async fn raw_connection(addr: std::net::SocketAddr, bytes: &[u8]) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to the server");
    stream.write_all(bytes).await.expect("send to the server");
    stream
}

/// Reads until the server closes the connection (end of stream or reset), for at most
/// `bound`; returns what was read, or `None` if the connection was still open.
pub async fn read_until_closed(
    stream: &mut tokio::net::TcpStream,
    bound: std::time::Duration,
) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut received = Vec::new();
    let reading = async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    };
    tokio::time::timeout(bound, reading).await.ok()?;
    Some(received)
}

/// Reads one HTTP response with a `Content-Length` from a raw connection, leaving it open.
pub async fn read_response(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&received).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
        let n = stream.read(&mut buffer).await.expect("read a response");
        assert!(
            n > 0,
            "the server closed the connection before answering: {text}"
        );
        received.extend_from_slice(&buffer[..n]);
    }
}

/// Sends `request` and reads its body as JSON, whatever its status.
pub async fn json_body(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// Sends `request`: its status and its body as JSON.
pub async fn status_and_json(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// The names in a `{"tools": [{"name": …}, …]}` listing, in order.
pub fn tool_names(listing: &Value) -> Vec<&str> {
    listing["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {listing}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

impl HttpServer {
    /// `GET <path>`'s body as JSON, whatever its status.
    pub async fn get_json(&self, path: &str) -> Value {
        json_body(http().get(self.url(path))).await
    }

    /// `GET /episodes/{id}/trajectory`: the episode's records as JSON Lines.
    pub async fn trajectory(&self, id: &str) -> String {
        self.control()
            .trajectory(id)
            .await
            .unwrap_or_else(|e| panic!("trajectory of {id}: {e}"))
    }

    /// `DELETE /episodes/{id}`.
    pub async fn close(&self, id: &str) {
        self.control()
            .close(id)
            .await
            .unwrap_or_else(|e| panic!("close {id}: {e}"));
    }

    /// `mcpgym_episodes_started_total{env=…}` from `/metrics`; 0 before the first episode.
    pub async fn started(&self, env: &str) -> u64 {
        let prefix = format!("mcpgym_episodes_started_total{{env=\"{env}\"}} ");
        self.metrics()
            .await
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .map_or(0, |v| v.trim().parse().unwrap())
    }
}

/// A WebSocket client connection (OpenEnv's `/<env>/ws`).
pub type WebSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Connects a WebSocket to `url` (`ws://…`).
pub async fn ws_connect(url: &str) -> WebSocket {
    tokio_tungstenite::connect_async(url)
        .await
        .unwrap_or_else(|error| panic!("cannot connect a WebSocket to {url}: {error}"))
        .0
}

/// Sends one JSON message on an OpenEnv WebSocket: its one reply.
pub async fn ws_ask(socket: &mut WebSocket, request: Value) -> Value {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    socket
        .send(Message::text(request.to_string()))
        .await
        .unwrap();
    loop {
        match socket.next().await.unwrap().unwrap() {
            Message::Text(text) => break serde_json::from_str(&text).unwrap(),
            _ => continue,
        }
    }
}
