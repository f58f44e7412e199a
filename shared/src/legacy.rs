//! A direct path for legacy MCP sessions (the revisions before 2026-07-28: `initialize`, then an
//! `Mcp-Session-Id` on every request), the path most deployed clients take.
//!
//! rmcp serves a legacy session with a worker task, channels and buffers of its own (about
//! 100 KiB per session) and routes every request through them. A session that lists and calls
//! tools needs none of that: its requests are single JSON-RPC requests whose reply is an event
//! stream of one message. This path answers them itself, from the session table in
//! [`crate::sessions`], with the bytes rmcp would send (the same headers, framing and event
//! ids):
//!
//! - `initialize` without a session: opens one in the table;
//! - `tools/call`, `tools/list`, `ping`, notifications, and the resource and prompt listings
//!   and `logging/setLevel` (refused, as rmcp refuses them for a server of tools), on a session
//!   of the table that rmcp does not hold;
//! - `GET` with a session and no `Last-Event-ID`: the standalone event stream, on which this
//!   server never sends anything but rmcp's keep-alive comments.
//!
//! Everything else goes on to rmcp untouched, which restores the session from the table when
//! it first needs it: other methods, a call that wants progress from an environment that
//! reports it (its reply carries notifications before the result), replies to server requests,
//! every request of a session rmcp holds (it numbers their event ids), resumption, `DELETE`,
//! and any request whose headers or body are not plainly one of the above (rmcp words those
//! errors).

use std::convert::Infallible;
use std::future::Future as _;
use std::io::Write as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use hyper::body::Frame;
use rmcp::ServerHandler;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, GetMeta, InitializeRequestParams, JsonObject,
    JsonRpcVersion2_0, ListPromptsRequestMethod, ListResourceTemplatesRequestMethod,
    ListResourcesRequestMethod, ListToolsResult, RequestId, ServerJsonRpcMessage, ServerResult,
    SetLevelRequestMethod,
};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use serde::Deserialize;
use serde_json::Value;

use crate::binding::EpisodeRoute;
use crate::hub::Hub;
use crate::malformed::says_json;
use crate::mcp::{McpHandler, Scope, ToolCall, call_tool, list_tools};
use crate::sessions::{Endpoint, LegacySession};
use crate::{META_EPISODE, META_IDEMPOTENCY_KEY};

// Parsed once: looking a header up by a `&str` name parses the name on every request.
pub(crate) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");

/// The revisions with sessions that rmcp knows; a request naming another goes to rmcp.
const SESSION_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The `_meta` key prefix of the 2026-07-28 per-request negotiation, which rmcp checks.
const STANDARD_META_PREFIX: &str = "io.modelcontextprotocol/";

/// One MCP endpoint's direct path: its sessions, its tools and the event-stream settings rmcp
/// uses on it.
pub(crate) struct LegacyDoor {
    hub: Arc<Hub>,
    endpoint: Endpoint,
    handler: McpHandler,
    /// The retry hint of the priming event that opens each request's stream (rmcp's session
    /// layer setting).
    request_retry_ms: u64,
    /// The retry hint of the `initialize` reply and the standalone stream, their keep-alive
    /// interval, and the token that ends streams at shutdown (rmcp's transport settings).
    config: StreamableHttpServerConfig,
}

impl LegacyDoor {
    /// The direct path of the endpoint `handler` serves, framed as rmcp frames replies with
    /// `config` and a session layer whose retry hint is `request_retry`; `None` when rmcp is
    /// set to send no retry hints, which this path does not reproduce.
    pub(crate) fn new(
        hub: Arc<Hub>,
        endpoint: Endpoint,
        handler: McpHandler,
        config: &StreamableHttpServerConfig,
        request_retry: Option<Duration>,
    ) -> Option<Self> {
        config.sse_retry?;
        Some(Self {
            hub,
            endpoint,
            handler,
            request_retry_ms: request_retry?.as_millis() as u64,
            config: config.clone(),
        })
    }

    fn retry_ms(&self) -> u64 {
        self.config
            .sse_retry
            .map_or(0, |retry| retry.as_millis() as u64)
    }
}

impl LegacyDoor {
    /// Answers the plain requests of legacy sessions on this endpoint; passes everything else
    /// on to rmcp. `route` is the episode the URL names, if any.
    pub(crate) async fn serve(
        &self,
        route: Option<&EpisodeRoute>,
        request: Request,
        next: Next,
    ) -> Response {
        match *request.method() {
            Method::POST if plain_post_headers(request.headers()) => {}
            Method::GET => {
                return match self.standalone_stream(request.headers()) {
                    Some(response) => response,
                    None => next.run(request).await,
                };
            }
            _ => return next.run(request).await,
        }
        let session = match request.headers().get(SESSION_ID) {
            None => None,
            Some(id) => {
                let id = id.to_str().unwrap_or("");
                match self.hub.sessions().get(id, Some(self.endpoint)) {
                    Some(session) => Some(session),
                    // Unknown here: rmcp answers 404 (or finds a session it opened itself).
                    None => return next.run(request).await,
                }
            }
        };
        let declared_length = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
        if declared_length.is_some_and(|length| length > crate::http::MCP_BODY_LIMIT) {
            return next.run(request).await;
        }
        let (parts, body) = request.into_parts();
        let bytes = match crate::http::read_mcp_body(body).await {
            Ok(bytes) => bytes,
            Err(too_large) => return too_large,
        };
        let answer = match &session {
            None => self.initialize(&parts.headers, &bytes),
            Some(session) => self.answer(session, route, &bytes).await,
        };
        match answer {
            Some(response) => response,
            None => {
                next.run(Request::from_parts(parts, Body::from(bytes)))
                    .await
            }
        }
    }
}

/// Whether a POST's headers are those of a legacy request rmcp would take as is: JSON in, both
/// reply types accepted, a session revision (or none, which rmcp reads as 2025-03-26), and none
/// of the 2026-07-28 standard headers.
fn plain_post_headers(headers: &HeaderMap) -> bool {
    says_json(headers)
        && accepts(headers, true)
        && session_version(headers)
        && !headers.contains_key(MCP_METHOD)
        && !headers.contains_key(MCP_NAME)
}

/// Whether `Accept` names `text/event-stream` (and `application/json` when `json` is set)
/// plainly. A media range with parameters (such as a `q` weight) goes to rmcp, which applies
/// their rules.
fn accepts(headers: &HeaderMap, json: bool) -> bool {
    let (mut json_named, mut events_named) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for range in value.split(',') {
            if range.contains(';') {
                return false;
            }
            let range = range.trim();
            json_named |= range.eq_ignore_ascii_case("application/json");
            events_named |= range.eq_ignore_ascii_case("text/event-stream");
        }
    }
    events_named && (json_named || !json)
}

/// Whether `MCP-Protocol-Version` is absent or names a revision with sessions.
fn session_version(headers: &HeaderMap) -> bool {
    headers.get(PROTOCOL_VERSION).is_none_or(|version| {
        version
            .to_str()
            .is_ok_and(|version| SESSION_VERSIONS.contains(&version))
    })
}

/// An `initialize` request, as rmcp reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InitializeMessage {
    #[allow(dead_code, reason = "parsed to refuse another version")]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    method: String,
    params: InitializeRequestParams,
}

/// A `tools/call`, as this path reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsCall<'a> {
    #[allow(dead_code, reason = "parsed to refuse another version")]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    params: JsonObject,
}

impl LegacyDoor {
    /// Opens a session for a plain `initialize` and answers it.
    fn initialize(&self, headers: &HeaderMap, body: &[u8]) -> Option<Response> {
        let message: InitializeMessage = serde_json::from_slice(body).ok()?;
        if message.method != "initialize" || message.params.meta.is_some() {
            return None;
        }
        // A header that disagrees with the body is refused by rmcp.
        if let Some(version) = headers.get(PROTOCOL_VERSION)
            && version.as_bytes() != message.params.protocol_version.as_str().as_bytes()
        {
            return None;
        }
        let result = self.handler.negotiate_initialize(&message.params).ok()?;
        let stored = serde_json::to_string(&message.params).ok()?;
        let (id, _) = match self.hub.sessions().open(self.endpoint, stored.into()) {
            Ok(opened) => opened,
            Err(full) => {
                return Some((StatusCode::SERVICE_UNAVAILABLE, full.to_string()).into_response());
            }
        };
        let reply =
            ServerJsonRpcMessage::response(ServerResult::InitializeResult(result), message.id);
        let mut events = Vec::with_capacity(1024);
        let _ = write!(
            events,
            "data: \nid: 0\nretry: {}\n\ndata: ",
            self.retry_ms()
        );
        serde_json::to_writer(&mut events, &reply).ok()?;
        events.extend_from_slice(b"\n\n");
        let mut response = event_stream(Body::new(Events(Some(events.into()))));
        let id_text = self.hub.sessions().id_text(id);
        response.headers_mut().insert(
            SESSION_ID,
            HeaderValue::from_str(&id_text).expect("a replica name and a UUID make a header value"),
        );
        tracing::trace!(session = %id_text, "legacy session opened directly");
        Some(response)
    }

    /// Answers a plain request or notification on a session of the table.
    async fn answer(
        &self,
        session: &Arc<LegacySession>,
        route: Option<&EpisodeRoute>,
        body: &[u8],
    ) -> Option<Response> {
        // rmcp numbers the event ids of the sessions it holds: all their requests go to it.
        if session.in_rmcp() {
            return None;
        }
        // The request of a rollout, read by this path's own parser: one pass, with no tree
        // built of the whole message.
        if let Ok(call) = serde_json::from_slice::<ToolsCall>(body)
            && call.method == "tools/call"
            && let Some(result) = self.call(session, route, call.params).await
        {
            return self.reply(session, call.id, result);
        }
        // The rest (a few per session) are read by rmcp's own types, so that what they accept
        // and how they read it is rmcp's by construction.
        let request = match serde_json::from_slice::<ClientJsonRpcMessage>(body).ok()? {
            ClientJsonRpcMessage::Notification(_) => {
                return Some(StatusCode::ACCEPTED.into_response());
            }
            ClientJsonRpcMessage::Request(request) => request,
            _ => return None,
        };
        let result = self.other(request.request, route)?;
        self.reply(session, request.id, result)
    }

    /// The result of a request other than a plain tool call, when it is one this path
    /// answers: the tool listing and `ping`, and the methods rmcp's handler refuses for a
    /// server of tools (those clients try at start).
    fn other(
        &self,
        request: ClientRequest,
        route: Option<&EpisodeRoute>,
    ) -> Option<Result<ServerResult, rmcp::ErrorData>> {
        let meta = request.get_meta();
        if meta.keys().any(|key| key.starts_with(STANDARD_META_PREFIX)) {
            return None;
        }
        let capabilities = || self.handler.get_info().capabilities;
        Some(match request {
            // One page holds every tool: a cursor changes nothing, as in rmcp's handler.
            ClientRequest::ListToolsRequest(_) => {
                list_tools(&self.hub, self.handler.scope(), route).map(|tools| {
                    ServerResult::ListToolsResult(ListToolsResult::with_all_items(tools))
                })
            }
            ClientRequest::PingRequest(_) => Ok(ServerResult::empty(())),
            ClientRequest::ListPromptsRequest(_) if capabilities().prompts.is_none() => {
                Err(rmcp::ErrorData::method_not_found::<ListPromptsRequestMethod>())
            }
            ClientRequest::ListResourcesRequest(_) if capabilities().resources.is_none() => {
                Err(rmcp::ErrorData::method_not_found::<
                    ListResourcesRequestMethod,
                >())
            }
            ClientRequest::ListResourceTemplatesRequest(_)
                if capabilities().resources.is_none() =>
            {
                Err(rmcp::ErrorData::method_not_found::<
                    ListResourceTemplatesRequestMethod,
                >())
            }
            ClientRequest::SetLevelRequest(_) => {
                Err(rmcp::ErrorData::method_not_found::<SetLevelRequestMethod>())
            }
            // A method of no known shape, which is also what a known method with params rmcp
            // cannot read becomes: its handler's default refuses it by name.
            ClientRequest::CustomRequest(custom) => Err(rmcp::ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                custom.method,
                None,
            )),
            _ => return None,
        })
    }

    /// The reply to a request on a session: its result (or error) as rmcp frames it.
    fn reply(
        &self,
        session: &LegacySession,
        id: RequestId,
        result: Result<ServerResult, rmcp::ErrorData>,
    ) -> Option<Response> {
        let reply = match result {
            Ok(mut result) => {
                // What rmcp's handler does for a peer on a revision with sessions.
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
                ServerJsonRpcMessage::response(result, id)
            }
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        let request = session.next_request();
        let mut events = Vec::with_capacity(512);
        let _ = write!(
            events,
            "data: \nid: 0/{request}\nretry: {}\n\ndata: ",
            self.request_retry_ms
        );
        serde_json::to_writer(&mut events, &reply).ok()?;
        let _ = write!(events, "\nid: 1/{request}\n\n");
        Some(event_stream(Body::new(Events(Some(events.into())))))
    }

    /// A `tools/call`'s result, or `None` when rmcp must answer it.
    async fn call(
        &self,
        session: &Arc<LegacySession>,
        route: Option<&EpisodeRoute>,
        mut params: JsonObject,
    ) -> Option<Result<ServerResult, rmcp::ErrorData>> {
        let Some(Value::String(name)) = params.remove("name") else {
            return None;
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => JsonObject::new(),
            Some(Value::Object(arguments)) => arguments,
            Some(_) => return None,
        };
        let meta = params.remove("_meta");
        if !params.is_empty() || !plain_meta(meta.as_ref()) {
            return None;
        }
        let meta_episode = meta.as_ref().and_then(|meta| meta.get(META_EPISODE));
        let wants_progress = meta
            .as_ref()
            .is_some_and(|meta| meta.get("progressToken").is_some());
        if wants_progress && self.may_report_progress(meta_episode, route) {
            return None;
        }
        tracing::trace!(tool = %name, "legacy session tool call answered directly");
        let (hub, scope, session) = (
            self.hub.clone(),
            self.handler.scope().clone(),
            session.clone(),
        );
        let route = route.cloned();
        let mut step = Box::pin(async move {
            let call = ToolCall {
                hub: &hub,
                scope: &scope,
                binding: &session.binding,
                meta_episode: meta.as_ref().and_then(|meta| meta.get(META_EPISODE)),
                route: route.as_ref(),
                meta_key: meta
                    .as_ref()
                    .and_then(|meta| meta.get(META_IDEMPOTENCY_KEY)),
            };
            call_tool(call, &name, arguments).await
        });
        // Most steps (a game's move) finish in their first poll. One that waits on something
        // (a kernel, a display) finishes in a task of its own, as rmcp runs a session's calls:
        // a client that leaves mid-call then does not cut it short, so its turn is recorded and
        // the episode's state stays consistent.
        let first = std::future::poll_fn(|cx| Poll::Ready(step.as_mut().poll(cx))).await;
        Some(match first {
            Poll::Ready(result) => result.map(ServerResult::CallToolResult),
            Poll::Pending => match tokio::spawn(step).await {
                Ok(result) => result.map(ServerResult::CallToolResult),
                Err(error) => {
                    tracing::error!(%error, "a tool call's task failed");
                    Err(rmcp::ErrorData::internal_error(
                        "the tool call failed inside the server; see its log",
                        None,
                    ))
                }
            },
        })
    }

    /// Whether the call's episode may send progress notifications (then its reply must be
    /// able to carry them, which rmcp's streams do). A call naming an episode of its own in
    /// `_meta` may reach any environment, so it counts as one that may.
    fn may_report_progress(
        &self,
        meta_episode: Option<&Value>,
        route: Option<&EpisodeRoute>,
    ) -> bool {
        if meta_episode.is_some() {
            return true;
        }
        // The episode the URL or the Mcpgym-Episode header names may be of any environment.
        match (self.handler.scope(), route) {
            (_, Some(route)) => self
                .hub
                .episode(&route.0)
                .map_or(true, |slot| slot.env.reports_progress()),
            (Scope::Env(env), None) => env.reports_progress(),
            (Scope::EpisodeRoute, None) => true,
        }
    }

    /// The standalone event stream of a session of the table: a priming event, then rmcp's
    /// keep-alive comments until the session ends, the server shuts down or the client leaves.
    fn standalone_stream(&self, headers: &HeaderMap) -> Option<Response> {
        if !accepts(headers, false)
            || !session_version(headers)
            || headers.contains_key(LAST_EVENT_ID)
        {
            return None;
        }
        let id = headers.get(SESSION_ID)?.to_str().ok()?;
        self.hub.sessions().get(id, Some(self.endpoint))?;
        let priming = Bytes::from(format!("data: \nid: 0\nretry: {}\n\n", self.retry_ms()));
        let keep_alive = self.config.sse_keep_alive?;
        let shutdown = self.config.cancellation_token.clone();
        let sessions = self.hub.sessions().clone();
        let id = id.to_owned();
        let comments = futures::stream::unfold((), move |()| {
            let (shutdown, sessions, id) = (shutdown.clone(), sessions.clone(), id.clone());
            async move {
                tokio::select! {
                    () = shutdown.cancelled() => None,
                    () = tokio::time::sleep(keep_alive) => sessions
                        .contains(&id)
                        .then(|| (Bytes::from_static(b":\n\n"), ())),
                }
            }
        });
        let stream = futures::stream::once(std::future::ready(priming))
            .chain(comments)
            .map(Ok::<_, Infallible>);
        Some(event_stream(Body::from_stream(stream)))
    }
}

/// Whether a request's `_meta` is absent, or an object without the 2026-07-28 negotiation
/// keys (which rmcp checks against the headers).
fn plain_meta(meta: Option<&Value>) -> bool {
    match meta {
        None => true,
        Some(Value::Object(meta)) => !meta.keys().any(|k| k.starts_with(STANDARD_META_PREFIX)),
        Some(_) => false,
    }
}

/// An event-stream response with rmcp's headers.
fn event_stream(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    response
}

/// A whole event stream in one buffer, of no declared length: sent chunked, as rmcp's streams
/// are.
struct Events(Option<Bytes>);

impl HttpBody for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().0.take().map(|bytes| Ok(Frame::data(bytes))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_none()
    }
}
