//! A direct path for the commonest request of a rollout: a stateless (2026-07-28) `tools/call`
//! that names its episode.
//!
//! rmcp serves a stateless request by building a whole service around it (a task, channels,
//! cancellation tokens): about 100 µs of CPU per call, most of a Wordle step. Such a request
//! needs none of that: it is one JSON-RPC request with one JSON response. This middleware
//! answers exactly that case and hands everything else to rmcp untouched:
//!
//! - `POST` with `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method: tools/call`, an `Mcp-Name`
//!   equal to the tool, JSON content and the `Accept` types the transport requires;
//! - a JSON-RPC 2.0 request whose params hold only `name`, `arguments` and `_meta`, with the
//!   required `_meta` keys;
//! - an episode named by `_meta["mcpgym/episode"]` or by the URL, whose environment sends no
//!   progress notifications (when it does and the request asks for progress, the reply must be
//!   an event stream, which rmcp provides).
//!
//! The response is what rmcp would send: `200 application/json` with the result or a
//! JSON-RPC error.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::JsonObject;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::binding::{EpisodeRoute, named_episode};
use crate::hub::Hub;
use crate::mcp::to_mcp_error;

const VERSION: &str = "2026-07-28";
// Parsed once: looking a header up by a `&str` name parses the name on every request.
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallRequest {
    jsonrpc: String,
    id: Value,
    method: String,
    params: CallParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta")]
    meta: CallMeta,
}

/// The `_meta` keys this path looks at; the others are skipped without being built.
#[derive(Deserialize)]
struct CallMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    version: Option<String>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    capabilities: Option<AnyObject>,
    #[serde(rename = "mcpgym/episode")]
    episode: Option<Value>,
    #[serde(rename = "mcpgym/idempotency-key")]
    key: Option<Value>,
    #[serde(rename = "progressToken")]
    progress_token: Option<IgnoredAny>,
}

/// Any JSON object, contents ignored (anything else fails to parse).
#[derive(Deserialize)]
struct AnyObject {}

/// A JSON-RPC response, serialized straight from the result (no intermediate JSON tree).
#[derive(Serialize)]
struct Reply<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a rmcp::model::CallToolResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a rmcp::ErrorData>,
}

fn header_is(headers: &HeaderMap, name: HeaderName, value: &str) -> bool {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == value)
}

/// Whether the headers are those of a stateless `tools/call` that the transport accepts.
pub(crate) fn is_candidate(request: &Request) -> bool {
    let headers = request.headers();
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    request.method() == Method::POST
        && header_is(headers, MCP_PROTOCOL_VERSION, VERSION)
        && header_is(headers, MCP_METHOD, "tools/call")
        && crate::malformed::says_json(headers)
        && accept.contains("application/json")
        && accept.contains("text/event-stream")
}

/// The parsed request, when it is one this path answers.
fn parse(
    headers: &HeaderMap,
    body: &[u8],
    route: Option<&EpisodeRoute>,
) -> Option<(CallRequest, Arc<str>)> {
    let call: CallRequest = serde_json::from_slice(body).ok()?;
    let meta = &call.params.meta;
    let plain = call.jsonrpc == "2.0"
        && call.method == "tools/call"
        && (call.id.is_string() || call.id.is_i64() || call.id.is_u64())
        && header_is(headers, MCP_NAME, &call.params.name)
        && meta.version.as_deref() == Some(VERSION)
        && meta.capabilities.is_some();
    if !plain {
        return None;
    }
    // A malformed `_meta` episode goes on to rmcp, whose handler words the error.
    let episode = named_episode(meta.episode.as_ref(), route).ok()??;
    Some((call, episode))
}

/// Answers a plain stateless tool call directly (the caller checked [`is_candidate`]);
/// passes anything else on. `route` is the episode the URL names, if any.
pub(crate) async fn serve(
    hub: &Hub,
    route: Option<&EpisodeRoute>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let bytes: Bytes = match crate::http::read_mcp_body(body).await {
        Ok(bytes) => bytes,
        Err(too_large) => return too_large,
    };
    let Some((call, episode)) = parse(&parts.headers, &bytes, route) else {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    };
    let slot = match hub.episode(&episode) {
        Ok(slot) => slot,
        // rmcp words the error when the request wants progress (its reply may be a stream).
        Err(_) if call.params.meta.progress_token.is_some() => {
            return next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
        }
        Err(error) => return reply(&call.id, None, Some(&to_mcp_error(error))),
    };
    // Progress wanted and possible: the reply must be able to become an event stream.
    if call.params.meta.progress_token.is_some() && slot.env.reports_progress() {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    // A key that is not a string goes on to rmcp, whose handler words the error.
    let key = match &call.params.meta.key {
        None => None,
        Some(Value::String(key)) => Some(key.clone()),
        Some(_) => {
            return next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
        }
    };
    tracing::trace!(%episode, tool = %call.params.name, "stateless tool call answered directly");
    let arguments = call.params.arguments.unwrap_or_default();
    match hub
        .step_on(&slot, &call.params.name, arguments, key.as_deref())
        .await
    {
        Ok(step) => reply(&call.id, Some(&step.into_call_result()), None),
        Err(error) => reply(&call.id, None, Some(&to_mcp_error(error))),
    }
}

/// The JSON-RPC response to a call, with its result or its error.
fn reply(
    id: &Value,
    result: Option<&rmcp::model::CallToolResult>,
    error: Option<&rmcp::ErrorData>,
) -> Response {
    let reply = Reply {
        jsonrpc: "2.0",
        id,
        result,
        error,
    };
    let body = match serde_json::to_vec(&reply) {
        Ok(body) => body,
        Err(error) => {
            tracing::error!(%error, "cannot serialize a tool result");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}
