//! A typed client for the control plane ([`crate::http`]): start an episode, call its tools,
//! read its status, prompt and trajectory, list tasks and tools, close it.
//!
//! The client keeps its HTTP/1.1 connections alive between requests (with `TCP_NODELAY`), so a
//! rollout loop or a load generator pays one handshake per connection, not per request. It is
//! cheap to clone; clones share the connections. Only `http://` URLs are served.
//!
//! ```no_run
//! # async fn rollout() -> Result<(), mcpgym_shared::client::ClientError> {
//! use mcpgym_shared::client::{ControlClient, NewEpisode};
//!
//! let control = ControlClient::new("http://127.0.0.1:8000", None)?;
//! let episode = control.create_episode(&NewEpisode::default().env("wordle").seed(7)).await?;
//! let step = control.call(&episode.id, "guess", serde_json::json!({"word": "crane"})).await?;
//! println!("{} (reward {})", step.text(), step.reward);
//! control.close(&episode.id).await?;
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderName, HeaderValue};
use http::{Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rmcp::model::{JsonObject, Tool};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::step::StepRecord;
use crate::task::Split;

/// Why a control-plane request failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The base URL cannot be used.
    #[error("{url:?} is not a usable server URL: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The token cannot be sent in a header.
    #[error("the token cannot be sent in an HTTP header (it holds control characters)")]
    BadToken,
    /// No connection could be made to the server.
    #[error("cannot connect to {host}: {source}")]
    Connect {
        /// The server's `host:port`.
        host: String,
        /// The error.
        source: std::io::Error,
    },
    /// The HTTP exchange failed (the connection broke, or the reply was not HTTP).
    #[error("the HTTP exchange with {host} failed: {source}")]
    Http {
        /// The server's `host:port`.
        host: String,
        /// The error.
        source: hyper::Error,
    },
    /// The server refused the request; `message` is the sentence it answered with.
    #[error("{message}")]
    Refused {
        /// The HTTP status.
        status: StatusCode,
        /// The server's error sentence (or, when the body held none, the status and body).
        message: String,
    },
    /// The server answered with a body that is not what the route documents.
    #[error("unexpected answer from {path} (HTTP {status}): {source}; the body was {body}")]
    Decode {
        /// The request path.
        path: String,
        /// The HTTP status.
        status: StatusCode,
        /// Why the body did not parse.
        source: serde_json::Error,
        /// The start of the body.
        body: String,
    },
}

impl ClientError {
    /// The HTTP status of a refusal, if the server refused.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            ClientError::Refused { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// A request to start an episode (`POST /episodes`). Every field may be left out; build one
/// with `NewEpisode::default().env("wordle").seed(7)`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewEpisode {
    /// The environment; may be left out when the server hosts only one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// A task id; otherwise one is drawn from `split` with `seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The seed; the same task and seed give the same episode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The split to draw a task from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
    /// Environment-specific options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<JsonObject>,
}

impl NewEpisode {
    /// Names the environment.
    pub fn env(mut self, env: impl Into<String>) -> Self {
        self.env = Some(env.into());
        self
    }

    /// Names the task.
    pub fn task(mut self, task: impl Into<String>) -> Self {
        self.task = Some(task.into());
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Sets the split a task is drawn from.
    pub fn split(mut self, split: Split) -> Self {
        self.split = Some(split);
        self
    }

    /// Sets the environment-specific options.
    pub fn options(mut self, options: JsonObject) -> Self {
        self.options = Some(options);
        self
    }
}

/// A started episode, as `POST /episodes` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// The episode id.
    pub id: String,
    /// Its environment.
    pub env: String,
    /// Its task.
    pub task: String,
    /// Its seed.
    pub seed: u64,
    /// The path that serves MCP for exactly this episode (join it with
    /// [`ControlClient::url`]).
    pub mcp_url: String,
}

/// An episode's state, as `GET /episodes/{id}` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The episode id.
    pub id: String,
    /// Its environment.
    pub env: String,
    /// Its task.
    pub task: String,
    /// The seed it started from.
    pub seed: u64,
    /// Tool calls made so far.
    pub turn: u32,
    /// The turn limit.
    pub max_turns: u32,
    /// The sum of every step's reward.
    #[serde(rename = "return")]
    pub return_: f64,
    /// The return by component.
    pub reward_components: BTreeMap<String, f64>,
    /// Whether the episode is over.
    pub done: bool,
    /// Whether it ended at the turn limit.
    pub truncated: bool,
    /// Whether it ended because the environment failed, not because of the agent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
    /// Why the harness aborted it (its session was ended, the server restarted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort_reason: Option<String>,
    /// The options the episode was created with.
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub options: JsonObject,
    /// What the environment reveals once done (e.g. `answer`); empty before.
    #[serde(flatten)]
    pub revealed: JsonObject,
}

/// An environment's task ids in one split, as `GET /tasks` answers: one page of them, and the
/// families whose instances make up the rest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskList {
    /// The environment.
    pub env: String,
    /// The split.
    pub split: Split,
    /// How many tasks the split has in all.
    pub total: u64,
    /// The index of the first id in `tasks`.
    pub offset: u64,
    /// The task ids, from `offset` on.
    pub tasks: Vec<String>,
    /// The families of generated tasks (`<family>/<n>`) and their instance ranges.
    pub families: Vec<FamilyRanges>,
}

/// A family of generated tasks in a [`TaskList`]: instance numbers `[start, end)` per split.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyRanges {
    /// The family's name.
    pub name: String,
    /// Train instance numbers, `[start, end)`.
    pub train: [u64; 2],
    /// Test instance numbers, `[start, end)`.
    pub test: [u64; 2],
}

/// `GET /tools`'s answer.
#[derive(Deserialize)]
struct ToolList {
    tools: Vec<Tool>,
}

/// `GET /episodes/{id}/prompt`'s answer.
#[derive(Deserialize)]
struct Prompt {
    prompt: String,
}

/// `POST /episodes/{id}/call`'s body.
#[derive(Serialize)]
struct CallBody<'a> {
    tool: &'a str,
    arguments: &'a Value,
}

/// A client for one server's control plane. Clones share its connections.
#[derive(Clone)]
pub struct ControlClient {
    inner: Arc<Inner>,
}

struct Inner {
    /// The base URL without a trailing slash.
    base: String,
    /// `host:port`, for connecting and for the `Host` header.
    host: String,
    host_header: HeaderValue,
    /// The path prefix the server is mounted under (often empty), without a trailing slash.
    prefix: String,
    authorization: Option<HeaderValue>,
    /// Connections waiting for their next request. A request takes one (or opens one) and
    /// puts it back once its answer has been read.
    idle: Mutex<Vec<Sender>>,
}

/// The sending half of one HTTP/1.1 connection.
type Sender = SendRequest<Full<Bytes>>;

impl std::fmt::Debug for ControlClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token stays out of logs.
        f.debug_struct("ControlClient")
            .field("base", &self.inner.base)
            .finish_non_exhaustive()
    }
}

impl ControlClient {
    /// A client for the server at `base_url` (`http://127.0.0.1:8000`, perhaps with a path
    /// prefix), sending `token` as a bearer token when given. Connects on the first request.
    pub fn new(base_url: &str, token: Option<&str>) -> Result<Self, ClientError> {
        let bad = |reason| ClientError::BadUrl {
            url: base_url.to_owned(),
            reason,
        };
        let base = base_url.trim_end_matches('/');
        let rest = base
            .strip_prefix("http://")
            .ok_or_else(|| bad("it must start with http://"))?;
        let (host, prefix) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if host.is_empty() || prefix.contains(['?', '#']) {
            return Err(bad("it must be http://HOST[:PORT][/PATH]"));
        }
        let host = if host.contains(':') && !host.ends_with(']') {
            host.to_owned()
        } else {
            format!("{host}:80")
        };
        let host_header = HeaderValue::from_str(rest.split('/').next().unwrap_or_default())
            .map_err(|_| bad("its host is not a valid Host header"))?;
        let authorization = token
            .map(|token| HeaderValue::from_str(&format!("Bearer {token}")))
            .transpose()
            .map_err(|_| ClientError::BadToken)?
            .map(|mut value| {
                value.set_sensitive(true);
                value
            });
        Ok(Self {
            inner: Arc::new(Inner {
                base: base.to_owned(),
                host,
                host_header,
                prefix: prefix.to_owned(),
                authorization,
                idle: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.inner.base
    }

    /// The absolute URL of a server path (such as [`Episode::mcp_url`]), for an MCP client.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.inner.base)
    }

    /// Starts an episode (`POST /episodes`).
    pub async fn create_episode(&self, request: &NewEpisode) -> Result<Episode, ClientError> {
        self.json(Method::POST, "/episodes".into(), Some(to_body(request)))
            .await
    }

    /// Calls a tool on an episode (`POST /episodes/{id}/call`). A refused call (a bad
    /// argument, an illegal move) is a step with `is_error` set, not an error.
    pub async fn call(
        &self,
        id: &str,
        tool: &str,
        arguments: Value,
    ) -> Result<StepRecord, ClientError> {
        let body = to_body(&CallBody {
            tool,
            arguments: &arguments,
        });
        self.json(Method::POST, episode_path(id, "/call"), Some(body))
            .await
    }

    /// An episode's state (`GET /episodes/{id}`).
    pub async fn status(&self, id: &str) -> Result<Status, ClientError> {
        self.json(Method::GET, episode_path(id, ""), None).await
    }

    /// What the agent is asked: instructions and the task (`GET /episodes/{id}/prompt`).
    pub async fn prompt(&self, id: &str) -> Result<String, ClientError> {
        let prompt: Prompt = self
            .json(Method::GET, episode_path(id, "/prompt"), None)
            .await?;
        Ok(prompt.prompt)
    }

    /// An episode's trajectory as JSON Lines, one record per tool call
    /// (`GET /episodes/{id}/trajectory`); served from disk after the episode closed when the
    /// server writes trajectories.
    pub async fn trajectory(&self, id: &str) -> Result<String, ClientError> {
        self.text(Method::GET, episode_path(id, "/trajectory"))
            .await
    }

    /// A document the episode exports, such as Jupyter's `notebook`
    /// (`GET /episodes/{id}/{name}`).
    pub async fn document(&self, id: &str, name: &str) -> Result<Bytes, ClientError> {
        let path = episode_path(id, &format!("/{}", encode(name)));
        let (status, body) = self.send(Method::GET, &path, &[], Bytes::new()).await?;
        ok(status, &body)?;
        Ok(body)
    }

    /// An environment's task ids in `split` (`GET /tasks`); `env` may be left out when the
    /// server hosts only one environment.
    pub async fn tasks(&self, env: Option<&str>, split: Split) -> Result<TaskList, ClientError> {
        let mut path = format!("/tasks?split={split}");
        if let Some(env) = env {
            path.push_str(&format!("&env={}", encode(env)));
        }
        self.json(Method::GET, path, None).await
    }

    /// An environment's tools, as MCP lists them (`GET /tools`).
    pub async fn tools(&self, env: Option<&str>) -> Result<Vec<Tool>, ClientError> {
        let path = match env {
            Some(env) => format!("/tools?env={}", encode(env)),
            None => "/tools".to_owned(),
        };
        let list: ToolList = self.json(Method::GET, path, None).await?;
        Ok(list.tools)
    }

    /// Closes an episode (`DELETE /episodes/{id}`).
    pub async fn close(&self, id: &str) -> Result<(), ClientError> {
        let (status, body) = self
            .send(Method::DELETE, &episode_path(id, ""), &[], Bytes::new())
            .await?;
        ok(status, &body)
    }

    /// The server's Prometheus metrics (`GET /metrics`).
    pub async fn metrics(&self) -> Result<String, ClientError> {
        self.text(Method::GET, "/metrics".into()).await
    }

    /// One request on the client's connections, answered with its status and body whatever
    /// the status: for callers that send bodies built ahead of time (such as MCP requests to
    /// an episode's `mcp_url`). `path` is relative to the base URL; `headers` are added to
    /// `Host`, the token, `Content-Type: application/json` and
    /// `Accept: application/json, text/event-stream`.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(HeaderName, HeaderValue)],
        body: Bytes,
    ) -> Result<(StatusCode, Bytes), ClientError> {
        let inner = &*self.inner;
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() =
            Uri::try_from(format!("{}{path}", inner.prefix)).map_err(|_| ClientError::BadUrl {
                url: format!("{}{path}", inner.base),
                reason: "the path is not a valid request target",
            })?;
        let fields = request.headers_mut();
        fields.insert(HOST, inner.host_header.clone());
        fields.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        fields.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        if let Some(authorization) = &inner.authorization {
            fields.insert(AUTHORIZATION, authorization.clone());
        }
        for (name, value) in headers {
            fields.insert(name.clone(), value.clone());
        }
        let (sender, response) = self.exchange(request).await?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|source| self.http_error(source))?
            .to_bytes();
        // The whole answer has been read, so the connection can carry the next request.
        if !sender.is_closed() {
            // A poisoned lock only means another request panicked; the list is still sound.
            let mut idle = inner.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.push(sender);
        }
        Ok((status, body))
    }

    /// Sends `request` on an idle connection, or on a new one when none is idle or the idle
    /// one was closed by the server before the request went out.
    async fn exchange(
        &self,
        mut request: Request<Full<Bytes>>,
    ) -> Result<(Sender, hyper::Response<hyper::body::Incoming>), ClientError> {
        loop {
            let pooled = self
                .inner
                .idle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pop();
            let (mut sender, fresh) = match pooled {
                Some(sender) => (sender, false),
                None => (self.connect().await?, true),
            };
            if let Err(error) = sender.ready().await {
                if fresh {
                    return Err(self.http_error(error));
                }
                continue;
            }
            match sender.try_send_request(request).await {
                Ok(response) => return Ok((sender, response)),
                Err(mut error) => match error.take_message() {
                    // An idle connection closed as the request left: it never reached the
                    // server, so it is safe to send again.
                    Some(unsent) if !fresh => request = unsent,
                    _ => return Err(self.http_error(error.into_error())),
                },
            }
        }
    }

    /// A new keep-alive connection, with Nagle's algorithm off so small requests leave at once.
    async fn connect(&self) -> Result<Sender, ClientError> {
        let host = &self.inner.host;
        let connect_error = |source| ClientError::Connect {
            host: host.clone(),
            source,
        };
        let stream = tokio::net::TcpStream::connect(host.as_str())
            .await
            .map_err(connect_error)?;
        stream.set_nodelay(true).map_err(connect_error)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|source| self.http_error(source))?;
        // The connection ends when the server closes it or the last handle is dropped.
        tokio::spawn(connection);
        Ok(sender)
    }

    fn http_error(&self, source: hyper::Error) -> ClientError {
        ClientError::Http {
            host: self.inner.host.clone(),
            source,
        }
    }

    /// A request whose successful answer is JSON of type `T`.
    async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: String,
        body: Option<Bytes>,
    ) -> Result<T, ClientError> {
        let (status, reply) = self
            .send(method, &path, &[], body.unwrap_or_default())
            .await?;
        ok(status, &reply)?;
        serde_json::from_slice(&reply).map_err(|source| ClientError::Decode {
            path,
            status,
            source,
            body: clipped(&reply),
        })
    }

    /// A request whose successful answer is text.
    async fn text(&self, method: Method, path: String) -> Result<String, ClientError> {
        let (status, reply) = self.send(method, &path, &[], Bytes::new()).await?;
        ok(status, &reply)?;
        Ok(String::from_utf8_lossy(&reply).into_owned())
    }
}

/// `Ok` for a success status; otherwise the server's error sentence.
fn ok(status: StatusCode, body: &[u8]) -> Result<(), ClientError> {
    if status.is_success() {
        return Ok(());
    }
    #[derive(Deserialize)]
    struct Refusal {
        error: String,
    }
    let message = match serde_json::from_slice::<Refusal>(body) {
        Ok(refusal) => refusal.error,
        Err(_) => format!("HTTP {status}: {}", clipped(body)),
    };
    Err(ClientError::Refused { status, message })
}

/// The start of a body, for an error message.
fn clipped(body: &[u8]) -> String {
    const LIMIT: usize = 300;
    let text = String::from_utf8_lossy(&body[..body.len().min(LIMIT)]).into_owned();
    if body.len() > LIMIT {
        format!("{text}…")
    } else {
        text
    }
}

fn to_body(value: &impl Serialize) -> Bytes {
    // These request types hold only strings, numbers and JSON values: they always serialize.
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

/// `/episodes/{id}{rest}`, with the id percent-encoded.
fn episode_path(id: &str, rest: &str) -> String {
    format!("/episodes/{}{rest}", encode(id))
}

/// Percent-encodes everything but RFC 3986's unreserved characters, for a path segment or a
/// query value.
fn encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn base_urls_split_into_host_and_prefix() {
        let client = ControlClient::new("http://127.0.0.1:8000/", None).unwrap();
        assert_eq!(client.inner.host, "127.0.0.1:8000");
        assert_eq!(client.inner.prefix, "");
        assert_eq!(
            client.url("/episodes/a/mcp"),
            "http://127.0.0.1:8000/episodes/a/mcp"
        );
        let prefixed = ControlClient::new("http://gym.localhost/api", Some("t")).unwrap();
        assert_eq!(prefixed.inner.host, "gym.localhost:80");
        assert_eq!(prefixed.inner.host_header, "gym.localhost");
        assert_eq!(prefixed.inner.prefix, "/api");
        assert!(format!("{prefixed:?}").contains("gym.localhost"));
        assert!(!format!("{prefixed:?}").contains("Bearer"));
        for bad in ["https://x", "127.0.0.1:8000", "http://", "http://h/p?q"] {
            assert!(ControlClient::new(bad, None).is_err(), "{bad}");
        }
        assert!(matches!(
            ControlClient::new("http://h", Some("a\nb")),
            Err(ClientError::BadToken)
        ));
    }

    #[test]
    fn ids_and_names_are_encoded() {
        assert_eq!(episode_path("ab-1", "/call"), "/episodes/ab-1/call");
        assert_eq!(episode_path("../x y", ""), "/episodes/..%2Fx%20y");
        assert_eq!(encode("wordle"), "wordle");
    }

    #[test]
    fn refusals_carry_the_server_sentence() {
        let refused = ok(
            StatusCode::NOT_FOUND,
            br#"{"error": "unknown episode \"x\""}"#,
        )
        .unwrap_err();
        assert_eq!(refused.to_string(), "unknown episode \"x\"");
        assert_eq!(refused.status(), Some(StatusCode::NOT_FOUND));
        let bare = ok(StatusCode::BAD_GATEWAY, b"upstream").unwrap_err();
        assert_eq!(bare.to_string(), "HTTP 502 Bad Gateway: upstream");
        assert!(ok(StatusCode::NO_CONTENT, b"").is_ok());
    }

    #[test]
    fn new_episodes_send_only_what_is_set() {
        let request = NewEpisode::default()
            .env("wordle")
            .seed(7)
            .split(Split::Test);
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({"env": "wordle", "seed": 7, "split": "test"})
        );
        assert_eq!(
            serde_json::from_value::<NewEpisode>(json!({"task": "t"})).unwrap(),
            NewEpisode::default().task("t")
        );
    }

    #[test]
    fn a_status_keeps_what_is_revealed() {
        let status: Status = serde_json::from_value(json!({
            "id": "e", "env": "wordle", "task": "test-0000", "seed": 1, "turn": 3,
            "max_turns": 6, "return": 1.3, "reward_components": {"win": 1.0},
            "done": true, "truncated": false, "answer": "serif"
        }))
        .unwrap();
        assert_eq!(status.revealed["answer"], "serif");
        assert!(!status.aborted);
        assert_eq!(status.reward_components["win"], 1.0);
    }
}
