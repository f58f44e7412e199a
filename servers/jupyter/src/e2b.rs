//! A client for E2B's HTTP protocol: the control plane (create, kill, set timeout), the code
//! interpreter (`/execute` streaming JSON lines, `/contexts`) and the envd subset (`/files`,
//! `process.Process/Start` as Connect JSON streaming, `process.Process/{List,SendSignal}`).
//!
//! The same client reaches the local sandbox service, a remote `mcpgym sandbox`, or E2B's
//! cloud; only [`E2bConfig`] differs:
//!
//! - **one URL** ([`E2bConfig::single_url`]): control plane and data plane on one base URL; the
//!   data plane names the sandbox and port in the `E2b-Sandbox-Id` and `E2b-Sandbox-Port`
//!   headers (what the SDKs do with `E2B_SANDBOX_URL`).
//! - **E2B's cloud** ([`E2bConfig::cloud`]): control plane at `https://api.e2b.app` with
//!   `X-API-Key`, data plane at `https://<port>-<sandboxID>.<domain>`.
//!
//! Requests use HTTP/1.1 only (hyper's pooled client), so a request dropped on a client-side
//! timeout closes its connection and the server notices (and interrupts the cell). `https`
//! URLs use rustls with the `ring` provider and the system's CA certificates (what
//! `rustls-native-certs` finds: `/etc/ssl/certs`, or `SSL_CERT_FILE` / `SSL_CERT_DIR`); they
//! are loaded only when a URL is `https`, so an `http://` service needs none. The TLS client
//! lives here rather than in reqwest so that no other HTTP client in the process needs a
//! process-wide rustls provider (reqwest's `rustls-no-provider` panics without one).

use std::time::Duration;

use base64::Engine;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cap::{CellCapture, HeadTail};
use crate::notebook::CellOutput;

/// The code interpreter's port inside a sandbox.
pub const INTERPRETER_PORT: u16 = 49999;
/// envd's port inside a sandbox.
pub const ENVD_PORT: u16 = 49983;
/// E2B's cloud control plane.
pub const E2B_CLOUD_API: &str = "https://api.e2b.app";
/// E2B's cloud sandbox domain, when a create response names none.
pub const E2B_CLOUD_DOMAIN: &str = "e2b.app";

/// Why a sandbox operation failed.
#[derive(Debug, thiserror::Error)]
pub enum E2bError {
    /// The URL is not an `http://` or `https://` URL.
    #[error("invalid sandbox URL {0:?}: give it as http://HOST:PORT or https://HOST")]
    InvalidUrl(String),
    /// TLS could not be set up (no CA certificates found).
    #[error("cannot set up TLS for {url}: {message}")]
    TlsSetup {
        /// The `https` URL that needs TLS.
        url: String,
        /// Why.
        message: String,
    },
    /// The TLS handshake failed (a server not speaking TLS, an untrusted or mismatched
    /// certificate).
    #[error("TLS handshake with {url} failed: {message}")]
    Tls {
        /// The request's URL.
        url: String,
        /// rustls' reason.
        message: String,
    },
    /// The request could not be sent or its response read.
    #[error("sandbox request to {url} failed: {message}")]
    Http {
        /// The request's URL.
        url: String,
        /// The error and its causes.
        message: String,
    },
    /// The service answered with an error status.
    #[error("the sandbox service answered {status}: {message}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The service's message (or body).
        message: String,
    },
    /// The response was not what the protocol says.
    #[error("unexpected response from the sandbox service: {0}")]
    Protocol(String),
    /// The operation did not finish in time.
    #[error("the sandbox did not answer within {0:?}")]
    Timeout(Duration),
}

/// Where the sandbox service is, and how to authenticate.
#[derive(Debug, Clone)]
pub struct E2bConfig {
    /// The control plane's base URL.
    pub api_url: String,
    /// One base URL serving every sandbox's data plane (routed by headers); `None` for the
    /// per-port host form `https://<port>-<sandboxID>.<domain>`.
    pub sandbox_url: Option<String>,
    /// Sent as `X-API-Key` on the control plane (E2B's key, or a remote service's token).
    pub api_key: Option<String>,
    /// The template to create sandboxes from.
    pub template: String,
}

impl E2bConfig {
    /// A service serving control and data plane on one URL (the local service, or a remote
    /// `mcpgym sandbox`).
    pub fn single_url(url: impl Into<String>, api_key: Option<String>) -> Self {
        let url = url.into().trim_end_matches('/').to_owned();
        Self {
            api_url: url.clone(),
            sandbox_url: Some(url),
            api_key,
            template: "code-interpreter-v1".into(),
        }
    }

    /// E2B's cloud with an API key.
    pub fn cloud(api_key: impl Into<String>) -> Self {
        Self {
            api_url: E2B_CLOUD_API.into(),
            sandbox_url: None,
            api_key: Some(api_key.into()),
            template: "code-interpreter-v1".into(),
        }
    }
}

/// The HTTP/1.1 client (plain or TLS by the URL's scheme).
type HttpClient = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

/// A client for one sandbox service; cheap to clone.
#[derive(Clone)]
pub struct E2bClient {
    http: HttpClient,
    config: E2bConfig,
}

impl std::fmt::Debug for E2bClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("E2bClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Whether `url` is `https` (`Ok(true)`), `http` (`Ok(false)`), or unusable.
fn check_url(url: &str) -> Result<bool, E2bError> {
    let invalid = || E2bError::InvalidUrl(url.to_owned());
    let uri: http::Uri = url.parse().map_err(|_| invalid())?;
    match (uri.scheme_str(), uri.host()) {
        (Some("https"), Some(host)) if !host.is_empty() => Ok(true),
        (Some("http"), Some(host)) if !host.is_empty() => Ok(false),
        _ => Err(invalid()),
    }
}

/// The rustls configuration: `ring`, safe default protocol versions, and the system's CA
/// certificates when some URL (`tls_url`, named in errors) is `https`; else no roots at all,
/// as no request will need them.
fn tls_config(tls_url: Option<&str>) -> Result<rustls::ClientConfig, E2bError> {
    use hyper_rustls::ConfigBuilderExt;
    let setup = |message: String| E2bError::TlsSetup {
        url: tls_url.unwrap_or_default().to_owned(),
        message,
    };
    let builder = rustls::ClientConfig::builder_with_provider(
        rustls::crypto::ring::default_provider().into(),
    )
    .with_safe_default_protocol_versions()
    .map_err(|e| setup(e.to_string()))?;
    Ok(match tls_url {
        Some(_) => builder
            .with_native_roots()
            .map_err(|e| {
                setup(format!(
                    "{e} (install the ca-certificates package, or point SSL_CERT_FILE at a PEM bundle)"
                ))
            })?
            .with_no_client_auth(),
        None => builder
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
    })
}

/// `error` and its causes, joined with `: `, without repeats.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

/// Whether the TLS layer (rustls) caused `error`: a `rustls::Error` among its causes, where
/// an `io::Error`'s cause is the error it wraps (tokio-rustls and hyper-rustls wrap rustls'
/// errors in `io::Error`s, whose `source` skips the wrapped error itself).
fn is_tls(error: &(dyn std::error::Error + 'static)) -> bool {
    if error.is::<rustls::Error>() {
        return true;
    }
    let next = match error.downcast_ref::<std::io::Error>() {
        Some(io) => io
            .get_ref()
            .map(|inner| inner as &(dyn std::error::Error + 'static)),
        None => error.source(),
    };
    next.is_some_and(is_tls)
}

/// One request being built (the subset of a request builder this client needs).
struct Request {
    http: HttpClient,
    method: http::Method,
    url: String,
    headers: http::HeaderMap,
    body: Bytes,
    timeout: Option<Duration>,
    /// A header value that cannot be sent (from a service's odd sandbox id or token).
    error: Option<E2bError>,
}

impl Request {
    /// Sets a header; `name` is lowercase.
    fn header(mut self, name: &'static str, value: impl AsRef<str>) -> Self {
        match http::HeaderValue::from_str(value.as_ref()) {
            Ok(value) => {
                self.headers
                    .insert(http::HeaderName::from_static(name), value);
            }
            Err(_) => {
                self.error.get_or_insert_with(|| {
                    E2bError::Protocol(format!(
                        "the {name} value {:?} cannot be sent in an HTTP header",
                        value.as_ref()
                    ))
                });
            }
        }
        self
    }

    fn json(mut self, value: &Value) -> Self {
        self.headers
            .entry(http::header::CONTENT_TYPE)
            .or_insert(http::HeaderValue::from_static("application/json"));
        self.body = Bytes::from(value.to_string());
        self
    }

    fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// A deadline for the whole exchange: sending, and reading the response body.
    fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    async fn send(self) -> Result<Response, E2bError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let mut request = http::Request::builder()
            .method(self.method)
            .uri(&self.url)
            .body(Full::new(self.body))
            .map_err(|e| E2bError::InvalidUrl(format!("{}: {e}", self.url)))?;
        *request.headers_mut() = self.headers;
        let deadline = self.timeout.map(|t| (tokio::time::Instant::now() + t, t));
        let sent = self.http.request(request);
        let response = match deadline {
            Some((at, timeout)) => tokio::time::timeout_at(at, sent)
                .await
                .map_err(|_| E2bError::Timeout(timeout))?,
            None => sent.await,
        };
        let response = response.map_err(|e| {
            let message = chain(&e);
            if is_tls(&e) {
                E2bError::Tls {
                    url: self.url.clone(),
                    message,
                }
            } else {
                E2bError::Http {
                    url: self.url.clone(),
                    message,
                }
            }
        })?;
        Ok(Response {
            status: response.status(),
            body: response.into_body(),
            url: self.url,
            deadline,
        })
    }
}

/// A response whose body is read as it arrives.
struct Response {
    status: http::StatusCode,
    body: hyper::body::Incoming,
    url: String,
    deadline: Option<(tokio::time::Instant, Duration)>,
}

impl Response {
    fn status(&self) -> http::StatusCode {
        self.status
    }

    /// The next piece of the body; `None` at its end.
    async fn chunk(&mut self) -> Result<Option<Bytes>, E2bError> {
        loop {
            let frame = self.body.frame();
            let frame = match self.deadline {
                Some((at, timeout)) => tokio::time::timeout_at(at, frame)
                    .await
                    .map_err(|_| E2bError::Timeout(timeout))?,
                None => frame.await,
            };
            match frame {
                None => return Ok(None),
                Some(Err(e)) => {
                    return Err(E2bError::Http {
                        url: self.url.clone(),
                        message: chain(&e),
                    });
                }
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }

    /// The whole body.
    async fn bytes(mut self) -> Result<Vec<u8>, E2bError> {
        let mut all = Vec::new();
        while let Some(chunk) = self.chunk().await? {
            all.extend_from_slice(&chunk);
        }
        Ok(all)
    }

    async fn text(self) -> Result<String, E2bError> {
        Ok(String::from_utf8_lossy(&self.bytes().await?).into_owned())
    }

    async fn json<T: serde::de::DeserializeOwned>(self) -> Result<T, E2bError> {
        let url = self.url.clone();
        let bytes = self.bytes().await?;
        serde_json::from_slice(&bytes)
            .map_err(|e| E2bError::Protocol(format!("bad JSON from {url}: {e}")))
    }
}

impl E2bClient {
    /// A client for `config`. Fails for malformed URLs, and when a URL is `https` and no CA
    /// certificates can be found.
    pub fn new(config: E2bConfig) -> Result<Self, E2bError> {
        // The first https URL, if any: TLS (and the CA certificates) are set up only then.
        let mut tls_url = check_url(&config.api_url)?.then(|| config.api_url.clone());
        match &config.sandbox_url {
            Some(url) => {
                if check_url(url)? && tls_url.is_none() {
                    tls_url = Some(url.clone());
                }
            }
            // The data plane is https://<port>-<id>.<domain>.
            None => {
                tls_url.get_or_insert_with(|| format!("https://*.{E2B_CLOUD_DOMAIN}"));
            }
        }
        let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
        connector.enforce_http(false);
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(10)));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls_config(tls_url.as_deref())?)
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector);
        // Idle pooled connections are dropped after 90 s, as reqwest does.
        let http =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .pool_timer(hyper_util::rt::TokioTimer::new())
                // Below the servers' keep-alive timeout (60 s by default), so a pooled
                // connection is never reused just as the server closes it.
                .pool_idle_timeout(Duration::from_secs(50))
                .build(connector);
        Ok(Self { http, config })
    }

    /// The configuration.
    pub fn config(&self) -> &E2bConfig {
        &self.config
    }

    fn request(&self, method: http::Method, url: String) -> Request {
        Request {
            http: self.http.clone(),
            method,
            url,
            headers: http::HeaderMap::new(),
            body: Bytes::new(),
            timeout: None,
            error: None,
        }
    }

    fn control(&self, method: http::Method, path: &str) -> Request {
        let mut request = self.request(method, format!("{}{path}", self.config.api_url));
        if let Some(key) = &self.config.api_key {
            request = request.header("x-api-key", key);
        }
        request
    }

    /// Creates a sandbox that lives `lifetime` unless refreshed ([`Sandbox::set_timeout`]).
    pub async fn create(&self, lifetime: Duration) -> Result<Sandbox, E2bError> {
        let response = self
            .control(http::Method::POST, "/sandboxes")
            .json(&json!({
                "templateID": self.config.template,
                "timeout": lifetime.as_secs().max(1),
            }))
            .timeout(Duration::from_secs(60))
            .send()
            .await?;
        let created: Created = success(response).await?.json().await?;
        Ok(Sandbox {
            client: self.clone(),
            id: created.sandbox_id,
            access_token: created.envd_access_token,
            domain: created.domain,
        })
    }
}

#[derive(Debug, Deserialize)]
struct Created {
    #[serde(rename = "sandboxID")]
    sandbox_id: String,
    #[serde(rename = "envdAccessToken")]
    envd_access_token: Option<String>,
    domain: Option<String>,
}

/// The response if its status is a success, else its error message.
async fn success(response: Response) -> Result<Response, E2bError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let body = response.text().await.unwrap_or_default();
    let message = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or(body);
    Err(E2bError::Status {
        status: status.as_u16(),
        message,
    })
}

/// One cell's execution, as the code interpreter reported it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Execution {
    /// The kernel's execution count, when reported.
    pub execution_count: Option<u32>,
    /// The outputs in order (stdout and stderr pieces, results, the error).
    pub outputs: Vec<CellOutput>,
    /// Whether the cell raised (an error output).
    pub raised: bool,
    /// Whether the cell ran past its deadline (the service stopped it, or the client stopped
    /// waiting and dropped the request, which makes the service interrupt it).
    pub timed_out: bool,
}

/// A command's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
    /// The exit code; `None` when the command did not exit normally (killed, deadline).
    pub exit_code: Option<i32>,
    /// The reason the command did not exit normally, if it did not.
    pub error: Option<String>,
}

/// A kernel context.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ContextInfo {
    /// The context's id.
    pub id: String,
    /// Its language.
    #[serde(default)]
    pub language: String,
    /// Its working directory.
    #[serde(default)]
    pub cwd: String,
}

/// One live sandbox. Not killed on drop: call [`Sandbox::kill`].
#[derive(Debug, Clone)]
pub struct Sandbox {
    client: E2bClient,
    id: String,
    access_token: Option<String>,
    domain: Option<String>,
}

/// Percent-encodes a query value.
fn encode_query(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// One Connect envelope: flag, big-endian length, JSON.
fn connect_frame(message: &Value) -> Vec<u8> {
    let json = message.to_string().into_bytes();
    let mut out = Vec::with_capacity(5 + json.len());
    out.push(0);
    out.extend_from_slice(&(json.len() as u32).to_be_bytes());
    out.extend_from_slice(&json);
    out
}

impl Sandbox {
    /// The sandbox's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn data(&self, method: http::Method, port: u16, path: &str) -> Request {
        let config = &self.client.config;
        let url = match &config.sandbox_url {
            Some(base) => format!("{base}{path}"),
            None => format!(
                "https://{port}-{}.{}{path}",
                self.id,
                self.domain.as_deref().unwrap_or(E2B_CLOUD_DOMAIN)
            ),
        };
        let mut request = self
            .client
            .request(method, url)
            .header("e2b-sandbox-id", &self.id)
            .header("e2b-sandbox-port", port.to_string());
        if let Some(token) = &self.access_token {
            request = request.header("x-access-token", token);
        }
        request
    }

    /// Kills the sandbox (a sandbox already gone counts as killed).
    pub async fn kill(&self) -> Result<(), E2bError> {
        let response = self
            .client
            .control(http::Method::DELETE, &format!("/sandboxes/{}", self.id))
            .timeout(Duration::from_secs(30))
            .send()
            .await?;
        if response.status() == http::StatusCode::NOT_FOUND {
            return Ok(());
        }
        success(response).await.map(drop)
    }

    /// Sets the sandbox to live `lifetime` from now.
    pub async fn set_timeout(&self, lifetime: Duration) -> Result<(), E2bError> {
        let response = self
            .client
            .control(
                http::Method::POST,
                &format!("/sandboxes/{}/timeout", self.id),
            )
            .json(&json!({"timeout": lifetime.as_secs().max(1)}))
            .timeout(Duration::from_secs(30))
            .send()
            .await?;
        success(response).await.map(drop)
    }

    /// Runs `code` in the default Python context (or `context_id`), with `timeout` as its
    /// deadline. The service interrupts the cell at the deadline (and restarts the kernel if
    /// it ignores the interrupt) and says which in a closing `TimeoutError`; the client waits
    /// [`TIMEOUT_SLACK`] longer for that line, then drops the request itself and says it
    /// cannot tell.
    ///
    /// Output is capped while it arrives (see [`crate::cap`]): the client keeps at most a few
    /// tens of KiB of text and [`MAX_RICH_BYTES`](crate::cap::MAX_RICH_BYTES) of rich results
    /// per cell, however much the cell prints.
    pub async fn execute(
        &self,
        code: &str,
        context_id: Option<&str>,
        timeout: Duration,
    ) -> Result<Execution, E2bError> {
        let mut body = json!({ "code": code, "timeout": timeout.as_secs_f64() });
        if let Some(id) = context_id {
            body["context_id"] = id.into();
        }
        let mut state = LineState::default();
        let run = async {
            let response = self
                .data(http::Method::POST, INTERPRETER_PORT, "/execute")
                .json(&body)
                .send()
                .await?;
            let mut response = success(response).await?;
            let mut lines = LineReader::default();
            let mut ended = false;
            while let Some(chunk) = response.chunk().await? {
                for line in lines.push(&chunk) {
                    match line {
                        Line::Whole(line) => ended |= apply_line(&line, &mut state)?,
                        Line::Dropped(bytes) => state.capture.stream(
                            crate::notebook::StreamName::Stdout,
                            &format!("\n{}\n", crate::cap::cut_marker(bytes as u64)),
                        ),
                    }
                }
            }
            if let Some(Line::Whole(rest)) = lines.finish()
                && apply_line(&rest, &mut state)?
            {
                ended = true;
            }
            if ended {
                Ok(())
            } else {
                Err(E2bError::Protocol(
                    "the execution stream ended without end_of_execution".into(),
                ))
            }
        };
        let result = tokio::time::timeout(timeout + TIMEOUT_SLACK, run).await;
        let mut execution = Execution {
            execution_count: state.execution_count,
            raised: state.raised,
            timed_out: state.timed_out,
            outputs: Vec::new(),
        };
        match result {
            Ok(Ok(())) => {
                execution.outputs = state.capture.finish();
                Ok(execution)
            }
            Ok(Err(error)) => Err(error),
            Err(_) => {
                // What arrived before the deadline stays; the dropped request interrupts it.
                execution.timed_out = true;
                execution.raised = true;
                state.capture.error(
                    "TimeoutError",
                    &format!(
                        "the cell ran longer than {} s and the sandbox did not stop it in time, so the request was dropped: the cell is interrupted, and if it ignores the interrupt the kernel is restarted and its variables are lost",
                        timeout.as_secs()
                    ),
                    "",
                );
                execution.outputs = state.capture.finish();
                Ok(execution)
            }
        }
    }

    /// The kernel contexts.
    pub async fn contexts(&self) -> Result<Vec<ContextInfo>, E2bError> {
        let response = self
            .data(http::Method::GET, INTERPRETER_PORT, "/contexts")
            .timeout(Duration::from_secs(30))
            .send()
            .await?;
        success(response).await?.json().await
    }

    /// Deletes a context, shutting its kernel down.
    pub async fn delete_context(&self, id: &str) -> Result<(), E2bError> {
        let response = self
            .data(
                http::Method::DELETE,
                INTERPRETER_PORT,
                &format!("/contexts/{}", encode_query(id)),
            )
            .timeout(Duration::from_secs(30))
            .send()
            .await?;
        success(response).await.map(drop)
    }

    /// Runs `cmd` with `args` as its own process (envd `process.Process/Start`) in `cwd`,
    /// collecting its output until it exits. The client waits at most `timeout`, then drops
    /// the stream (which ends the process) and reports it in [`CommandOutput::error`].
    pub async fn run(
        &self,
        cmd: &str,
        args: &[&str],
        cwd: &str,
        timeout: Duration,
    ) -> Result<CommandOutput, E2bError> {
        let body = connect_frame(&json!({
            "process": {"cmd": cmd, "args": args, "envs": {}, "cwd": cwd}
        }));
        let mut output = CommandOutput::default();
        let mut stdout = HeadTail::default();
        let mut stderr = HeadTail::default();
        let run = async {
            let response = self
                .data(http::Method::POST, ENVD_PORT, "/process.Process/Start")
                .header("content-type", "application/connect+json")
                .header("connect-protocol-version", "1")
                .body(body)
                .send()
                .await?;
            let mut response = success(response).await?;
            let mut frames = FrameReader::default();
            while let Some(chunk) = response.chunk().await? {
                for (flag, message) in frames.push(&chunk)? {
                    if flag & 0x02 != 0 {
                        if let Some(error) = message.get("error") {
                            let text = error
                                .get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("the command failed")
                                .to_owned();
                            output.error = Some(text);
                        }
                        return Ok(());
                    }
                    apply_event(&message, &mut stdout, &mut stderr, &mut output);
                }
            }
            Err(E2bError::Protocol(
                "the process stream ended without an end-of-stream frame".into(),
            ))
        };
        let result = tokio::time::timeout(timeout, run).await;
        output.stdout = stdout.text();
        output.stderr = stderr.text();
        match result {
            Ok(Ok(())) => Ok(output),
            Ok(Err(error)) => Err(error),
            Err(_) => {
                output.exit_code = None;
                output.error = Some(format!(
                    "the command ran longer than {} s and was killed",
                    timeout.as_secs()
                ));
                Ok(output)
            }
        }
    }

    /// The pids of the processes started with [`Sandbox::run`] that still run.
    pub async fn processes(&self) -> Result<Vec<u32>, E2bError> {
        let response = self
            .data(http::Method::POST, ENVD_PORT, "/process.Process/List")
            .header("content-type", "application/json")
            .body("{}")
            .timeout(Duration::from_secs(30))
            .send()
            .await?;
        let listed: Value = success(response).await?.json().await?;
        Ok(listed["processes"]
            .as_array()
            .map(|all| {
                all.iter()
                    .filter_map(|p| p["pid"].as_u64())
                    .filter_map(|pid| u32::try_from(pid).ok())
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Kills a process started with [`Sandbox::run`].
    pub async fn kill_process(&self, pid: u32) -> Result<(), E2bError> {
        let response = self
            .data(http::Method::POST, ENVD_PORT, "/process.Process/SendSignal")
            .header("content-type", "application/json")
            .json(&json!({"process": {"pid": pid}, "signal": "SIGNAL_SIGKILL"}))
            .timeout(Duration::from_secs(30))
            .send()
            .await?;
        if response.status() == http::StatusCode::NOT_FOUND {
            return Ok(());
        }
        success(response).await.map(drop)
    }

    /// Writes a file (parent folders are created).
    pub async fn write_file(&self, path: &str, bytes: Vec<u8>) -> Result<(), E2bError> {
        let response = self
            .data(
                http::Method::POST,
                ENVD_PORT,
                &format!("/files?path={}", encode_query(path)),
            )
            .header("content-type", "application/octet-stream")
            .body(bytes)
            .timeout(Duration::from_secs(60))
            .send()
            .await?;
        success(response).await.map(drop)
    }

    /// Reads a file.
    pub async fn read_file(&self, path: &str) -> Result<Vec<u8>, E2bError> {
        let response = self
            .data(
                http::Method::GET,
                ENVD_PORT,
                &format!("/files?path={}", encode_query(path)),
            )
            .timeout(Duration::from_secs(60))
            .send()
            .await?;
        success(response).await?.bytes().await
    }
}

/// How long past a cell's deadline the client waits for the service to say how the cell
/// ended (the interrupt's grace period, and a kernel restart when it ignored the interrupt).
pub const TIMEOUT_SLACK: Duration = Duration::from_secs(45);
/// The longest line or Connect frame read from a sandbox service; a longer one is skipped
/// unread (and said so) rather than buffered.
const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// What the lines of one execution said so far.
#[derive(Debug, Default)]
struct LineState {
    execution_count: Option<u32>,
    raised: bool,
    timed_out: bool,
    capture: CellCapture,
}

/// One line of a JSON-lines body.
enum Line {
    /// A whole line (without its newline).
    Whole(Vec<u8>),
    /// A line longer than [`MAX_MESSAGE_BYTES`], skipped: its length.
    Dropped(usize),
}

/// Splits a body into lines as it arrives, never holding more than [`MAX_MESSAGE_BYTES`].
#[derive(Default)]
struct LineReader {
    buffer: Vec<u8>,
    /// Bytes of an overlong line skipped so far (`Some` while skipping).
    skipping: Option<usize>,
}

impl LineReader {
    fn push(&mut self, mut chunk: &[u8]) -> Vec<Line> {
        let mut lines = Vec::new();
        while !chunk.is_empty() {
            match chunk.iter().position(|b| *b == b'\n') {
                Some(newline) => {
                    let (part, rest) = (&chunk[..newline], &chunk[newline + 1..]);
                    match self.skipping.take() {
                        Some(skipped) => lines.push(Line::Dropped(skipped + part.len())),
                        None => {
                            self.buffer.extend_from_slice(part);
                            lines.push(Line::Whole(std::mem::take(&mut self.buffer)));
                        }
                    }
                    chunk = rest;
                }
                None => {
                    match &mut self.skipping {
                        Some(skipped) => *skipped += chunk.len(),
                        None if self.buffer.len() + chunk.len() > MAX_MESSAGE_BYTES => {
                            self.skipping = Some(self.buffer.len() + chunk.len());
                            self.buffer = Vec::new();
                        }
                        None => self.buffer.extend_from_slice(chunk),
                    }
                    chunk = &[];
                }
            }
        }
        lines
    }

    /// The last line, if the body did not end with a newline.
    fn finish(self) -> Option<Line> {
        match self.skipping {
            Some(skipped) => Some(Line::Dropped(skipped)),
            None => (!self.buffer.is_empty()).then_some(Line::Whole(self.buffer)),
        }
    }
}

/// Splits a Connect stream into frames as it arrives; a frame longer than
/// [`MAX_MESSAGE_BYTES`] is skipped unread.
#[derive(Default)]
struct FrameReader {
    buffer: Vec<u8>,
    /// Bytes of an overlong frame still to skip.
    skip: usize,
}

impl FrameReader {
    fn push(&mut self, mut chunk: &[u8]) -> Result<Vec<(u8, Value)>, E2bError> {
        let mut frames = Vec::new();
        loop {
            if self.skip > 0 {
                let skipped = self.skip.min(chunk.len());
                self.skip -= skipped;
                chunk = &chunk[skipped..];
                if self.skip > 0 {
                    return Ok(frames);
                }
            }
            self.buffer.extend_from_slice(chunk);
            chunk = &[];
            if self.buffer.len() < 5 {
                return Ok(frames);
            }
            let length = u32::from_be_bytes([
                self.buffer[1],
                self.buffer[2],
                self.buffer[3],
                self.buffer[4],
            ]) as usize;
            if length > MAX_MESSAGE_BYTES {
                tracing::warn!(length, "skipping an overlong Connect frame");
                let held = self.buffer.len() - 5;
                if held >= length {
                    self.buffer.drain(..5 + length);
                } else {
                    self.skip = length - held;
                    self.buffer.clear();
                }
                continue;
            }
            if self.buffer.len() < 5 + length {
                return Ok(frames);
            }
            let flag = self.buffer[0];
            let message: Value = serde_json::from_slice(&self.buffer[5..5 + length])
                .map_err(|e| E2bError::Protocol(format!("bad Connect frame: {e}")))?;
            self.buffer.drain(..5 + length);
            frames.push((flag, message));
        }
    }
}

/// Applies one JSON line of `/execute`; `true` at `end_of_execution`.
fn apply_line(line: &[u8], state: &mut LineState) -> Result<bool, E2bError> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return Ok(false);
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let start: String = text.chars().take(200).collect();
        E2bError::Protocol(format!("bad execution line ({e}): {start}"))
    })?;
    let field = |name: &str| value.get(name).and_then(Value::as_str).unwrap_or("");
    match field("type") {
        "end_of_execution" => return Ok(true),
        "number_of_executions" => {
            state.execution_count = value
                .get("execution_count")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok());
        }
        "stdout" => state
            .capture
            .stream(crate::notebook::StreamName::Stdout, field("text")),
        "stderr" => state
            .capture
            .stream(crate::notebook::StreamName::Stderr, field("text")),
        "error" => {
            state.raised = true;
            state.timed_out |= field("name") == "TimeoutError";
            state
                .capture
                .error(field("name"), field("value"), field("traceback"));
        }
        "result" => {
            let CellOutput::Result { is_main, data } = result_output(&value) else {
                unreachable!("result_output makes results")
            };
            state.capture.result(is_main, data);
        }
        _ => {} // keepalive, and kinds newer than this client
    }
    Ok(false)
}

/// A `result` line as a MIME bundle.
fn result_output(value: &Value) -> CellOutput {
    const FIELDS: &[(&str, &str)] = &[
        ("text", "text/plain"),
        ("html", "text/html"),
        ("markdown", "text/markdown"),
        ("svg", "image/svg+xml"),
        ("png", "image/png"),
        ("jpeg", "image/jpeg"),
        ("pdf", "application/pdf"),
        ("latex", "text/latex"),
        ("json", "application/json"),
        ("javascript", "application/javascript"),
    ];
    let mut data = std::collections::BTreeMap::new();
    for (field, mime) in FIELDS {
        if let Some(item) = value.get(*field).filter(|v| !v.is_null()) {
            data.insert((*mime).to_owned(), item.clone());
        }
    }
    if let Some(extra) = value.get("extra").and_then(Value::as_object) {
        for (mime, item) in extra {
            data.insert(mime.clone(), item.clone());
        }
    }
    CellOutput::Result {
        is_main: value
            .get("is_main_result")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        data,
    }
}

/// Applies one process event.
fn apply_event(
    message: &Value,
    stdout: &mut HeadTail,
    stderr: &mut HeadTail,
    output: &mut CommandOutput,
) {
    let Some(event) = message.get("event").and_then(Value::as_object) else {
        return;
    };
    let b64 = base64::engine::general_purpose::STANDARD;
    if let Some(data) = event.get("data").and_then(Value::as_object) {
        let decode = |key: &str, into: &mut HeadTail| {
            if let Some(bytes) = data
                .get(key)
                .and_then(Value::as_str)
                .and_then(|s| b64.decode(s).ok())
            {
                into.push(&bytes);
            }
        };
        decode("stdout", stdout);
        decode("stderr", stderr);
    }
    if let Some(end) = event.get("end").and_then(Value::as_object) {
        output.exit_code = end
            .get("exitCode")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            // Connect JSON omits zero values.
            .or(Some(0));
        let exited = end.get("exited").and_then(Value::as_bool).unwrap_or(true);
        if !exited {
            output.exit_code = None;
        }
        if let Some(status) = end.get("status").and_then(Value::as_str)
            && status.starts_with("signal")
        {
            output.exit_code = None;
            output.error = Some(format!("the command was stopped ({status})"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_clients_build_and_bad_urls_are_refused() {
        // E2B's cloud (https control plane, https per-port data plane) and any https service.
        E2bClient::new(E2bConfig::cloud("e2b_x")).unwrap();
        E2bClient::new(E2bConfig::single_url("https://sandbox.example.com/", None)).unwrap();
        E2bClient::new(E2bConfig::single_url("http://127.0.0.1:1/", None)).unwrap();
        for bad in [
            "ftp://x",
            "http://",
            "https://",
            "127.0.0.1:8080",
            "http:// x",
        ] {
            let error = E2bClient::new(E2bConfig::single_url(bad, None)).unwrap_err();
            assert!(matches!(error, E2bError::InvalidUrl(_)), "{bad}: {error}");
            assert!(error.to_string().contains("invalid sandbox URL"), "{error}");
        }
    }

    /// A TLS handshake with a server that answers in plain HTTP fails with a TLS error that
    /// says so (rather than hanging, or passing for an HTTP error).
    #[tokio::test]
    async fn https_to_a_plain_http_server_is_a_clear_tls_error() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buffer = [0u8; 1024];
                    let _ = socket.read(&mut buffer).await;
                    let _ = socket
                        .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                        .await;
                });
            }
        });
        let url = format!("https://127.0.0.1:{port}");
        let client = E2bClient::new(E2bConfig::single_url(&url, None)).unwrap();
        let error = client.create(Duration::from_secs(60)).await.unwrap_err();
        assert!(matches!(error, E2bError::Tls { .. }), "{error:?}");
        let text = error.to_string();
        assert!(
            text.starts_with(&format!("TLS handshake with {url}/sandboxes failed: ")),
            "{text}"
        );
        // The same service over http answers (with its error status).
        let client = E2bClient::new(E2bConfig::single_url(
            format!("http://127.0.0.1:{port}"),
            None,
        ))
        .unwrap();
        let error = client.create(Duration::from_secs(60)).await.unwrap_err();
        assert!(
            matches!(error, E2bError::Status { status: 400, .. }),
            "{error:?}"
        );
    }

    /// Nothing listening: a connect error naming the URL, not a TLS error.
    #[tokio::test]
    async fn a_refused_connection_is_an_http_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let client = E2bClient::new(E2bConfig::single_url(
            format!("https://127.0.0.1:{port}"),
            None,
        ))
        .unwrap();
        let error = client.create(Duration::from_secs(60)).await.unwrap_err();
        assert!(matches!(error, E2bError::Http { .. }), "{error:?}");
        assert!(
            error.to_string().starts_with(&format!(
                "sandbox request to https://127.0.0.1:{port}/sandboxes failed: "
            )),
            "{error}"
        );
    }

    #[test]
    fn execution_lines_become_outputs() {
        let mut state = LineState::default();
        for line in [
            r#"{"type":"number_of_executions","execution_count":3}"#,
            r#"{"type":"stdout","text":"hi\n","timestamp":"x"}"#,
            r#"{"type":"result","text":"2","png":"AAAA","is_main_result":true}"#,
            r#"{"type":"keepalive"}"#,
            r#"{"type":"error","name":"ValueError","value":"bad","traceback":"a\nb"}"#,
        ] {
            assert!(!apply_line(line.as_bytes(), &mut state).unwrap());
        }
        assert!(apply_line(br#"{"type":"end_of_execution"}"#, &mut state).unwrap());
        assert_eq!(state.execution_count, Some(3));
        assert!(state.raised);
        let outputs = state.capture.finish();
        assert_eq!(outputs.len(), 3);
        let CellOutput::Result { data, is_main } = &outputs[1] else {
            panic!()
        };
        assert!(is_main);
        assert_eq!(data["image/png"], "AAAA");
    }

    #[test]
    fn overlong_lines_and_frames_are_skipped_unbuffered() {
        let mut lines = LineReader::default();
        let mut got = lines.push(b"{\"a\":1}\n{\"b\"");
        let big = vec![b'x'; MAX_MESSAGE_BYTES];
        for _ in 0..3 {
            got.extend(lines.push(&big));
            assert!(lines.buffer.len() <= MAX_MESSAGE_BYTES);
        }
        got.extend(lines.push(b"}\nlast"));
        assert!(matches!(&got[0], Line::Whole(l) if l == br#"{"a":1}"#));
        assert!(matches!(got[1], Line::Dropped(n) if n == 3 * MAX_MESSAGE_BYTES + 5));
        assert!(matches!(lines.finish(), Some(Line::Whole(l)) if l == b"last"));

        let mut frames = FrameReader::default();
        let mut huge = vec![0u8];
        huge.extend_from_slice(&((MAX_MESSAGE_BYTES as u32) + 10).to_be_bytes());
        let mut got = frames.push(&huge).unwrap();
        for _ in 0..2 {
            got.extend(frames.push(&vec![b' '; MAX_MESSAGE_BYTES / 2 + 5]).unwrap());
        }
        got.extend(frames.push(&connect_frame(&json!({"ok": true}))).unwrap());
        assert_eq!(got, vec![(0, json!({"ok": true}))]);
        assert!(frames.buffer.is_empty());
    }

    #[test]
    fn connect_frames_round_trip() {
        let frame = connect_frame(&json!({"a": 1}));
        assert_eq!(frame[0], 0);
        assert_eq!(
            u32::from_be_bytes([frame[1], frame[2], frame[3], frame[4]]),
            7
        );
        let mut output = CommandOutput::default();
        let (mut out, mut err) = (HeadTail::default(), HeadTail::default());
        apply_event(
            &json!({"event": {"data": {"stdout": "aGk="}}}),
            &mut out,
            &mut err,
            &mut output,
        );
        apply_event(
            &json!({"event": {"end": {"exitCode": 3, "exited": true, "status": "exit status 3"}}}),
            &mut out,
            &mut err,
            &mut output,
        );
        assert_eq!(out.text(), "hi");
        assert_eq!(output.exit_code, Some(3));
        assert_eq!(encode_query("/home/user/a b"), "/home/user/a%20b");
    }
}
