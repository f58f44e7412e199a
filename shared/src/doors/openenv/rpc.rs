//! OpenEnv's JSON-RPC: `POST /<env>/mcp` from clients that do not speak MCP's streamable
//! HTTP (OpenEnv's `MCPToolClient`), and `{"type": "mcp"}` messages on the WebSocket.
//!
//! Methods: `openenv/session/create` → `{session_id}`; `openenv/session/close
//! {session_id}`; `tools/list` → `{tools: [{name, description, inputSchema}]}`; `tools/call
//! {name, arguments, session_id}` → OpenEnv's `CallToolObservation` dump (`tool_name`,
//! `result`, `error`, `reward`, `done`, `metadata`), so the caller sees the step's reward.
//!
//! `POST /<env>/mcp` serves MCP's streamable HTTP too. MCP clients must accept
//! `text/event-stream`; OpenEnv's client sends a plain JSON POST. So a POST that does not
//! accept event streams is OpenEnv's, and everything else goes on to MCP untouched.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::session::{Closed, Session, sessions_of};
use super::wire::{Action, DoorError};
use crate::env::Environment;
use crate::http::MCP_BODY_LIMIT;
use crate::hub::{Hub, HubError};

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const SERVER_ERROR: i64 = -32000;

fn success(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

fn failure(id: &Value, code: i64, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

/// Where the request came from, for the hints in error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// `POST /<env>/mcp`.
    Http,
    /// A `{"type": "mcp"}` message on the WebSocket.
    WebSocket,
}

/// Answers one JSON-RPC request for `env`. `bound` is the WebSocket's own session.
pub async fn handle(
    hub: &Arc<Hub>,
    env: &Arc<dyn Environment>,
    request: Value,
    bound: Option<&Arc<Session>>,
    channel: Channel,
) -> Value {
    let Value::Object(mut request) = request else {
        return failure(
            &Value::Null,
            INVALID_REQUEST,
            "Invalid Request: send a JSON-RPC 2.0 object {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\", \"params\": {}}",
        );
    };
    let id = request.remove("id").unwrap_or(Value::Null);
    if !(id.is_null() || id.is_string() || id.is_i64() || id.is_u64()) {
        return failure(
            &Value::Null,
            INVALID_REQUEST,
            "Invalid Request: the id must be a string or an integer",
        );
    }
    if request.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return failure(
            &id,
            INVALID_REQUEST,
            "Invalid Request: \"jsonrpc\" must be \"2.0\"",
        );
    }
    let Some(method) = request
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return failure(
            &id,
            INVALID_REQUEST,
            "Invalid Request: \"method\" must be a string such as \"tools/list\"",
        );
    };
    let params = match request.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => return failure(&id, INVALID_PARAMS, "Params must be an object"),
    };
    if let Some(extra) = request
        .keys()
        .find(|key| !matches!(key.as_str(), "jsonrpc" | "method"))
    {
        return failure(
            &id,
            INVALID_REQUEST,
            format!(
                "Invalid Request: unexpected key {extra:?}; a request has jsonrpc, id, method and params"
            ),
        );
    }
    match method.as_str() {
        "openenv/session/create" => match bound {
            Some(session) => success(&id, json!({ "session_id": session.id() })),
            None => match sessions_of(hub).create(hub, env.clone()) {
                Ok(session) => success(&id, json!({ "session_id": session.id() })),
                Err(error) => failure(&id, SERVER_ERROR, error.to_string()),
            },
        },
        "openenv/session/close" => {
            let Some(target) = params.get("session_id").and_then(Value::as_str) else {
                return failure(
                    &id,
                    INVALID_PARAMS,
                    "Invalid params - 'session_id' is required",
                );
            };
            if bound.is_some_and(|session| session.id().as_ref() == target) {
                return failure(
                    &id,
                    INVALID_REQUEST,
                    "this WebSocket's own session closes with {\"type\": \"close\"}",
                );
            }
            match sessions_of(hub).close(hub, target).await {
                Some(Closed::Now) => success(&id, json!({ "session_id": target, "closed": true })),
                Some(Closed::Pending) => success(
                    &id,
                    json!({ "session_id": target, "closed": false, "closing": true }),
                ),
                None => failure(&id, INVALID_PARAMS, format!("Unknown session_id: {target}")),
            }
        }
        "tools/list" => {
            if let Err(message) = session_for(hub, env, &params, bound) {
                return failure(&id, INVALID_PARAMS, message);
            }
            let tools: Vec<Value> = env
                .tools()
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description.as_deref().unwrap_or_default(),
                        "inputSchema": Value::Object((*tool.input_schema).clone()),
                    })
                })
                .collect();
            success(&id, json!({ "tools": tools }))
        }
        "tools/call" => call(hub, env, &id, params, bound).await,
        other => {
            let hint = match channel {
                Channel::Http => {
                    " (this is OpenEnv's JSON-RPC, served because the request does not accept text/event-stream; MCP clients must send Accept: application/json, text/event-stream)"
                }
                Channel::WebSocket => "",
            };
            failure(
                &id,
                METHOD_NOT_FOUND,
                format!(
                    "Method not found: {other}; methods: tools/list, tools/call, openenv/session/create, openenv/session/close{hint}"
                ),
            )
        }
    }
}

/// The session a request names with `session_id` (or the WebSocket's own).
fn session_for(
    hub: &Arc<Hub>,
    env: &Arc<dyn Environment>,
    params: &Map<String, Value>,
    bound: Option<&Arc<Session>>,
) -> Result<Option<Arc<Session>>, String> {
    let named = match params.get("session_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name.as_str()),
        Some(_) => return Err("session_id must be a string".into()),
    };
    match (named, bound) {
        (None, bound) => Ok(bound.cloned()),
        (Some(name), Some(bound)) if bound.id().as_ref() == name => Ok(Some(bound.clone())),
        (Some(name), _) => match sessions_of(hub).get(name) {
            Some(session) if session.env().name() == env.name() => Ok(Some(session)),
            Some(session) => Err(format!(
                "session {name} is a {} session; call /{}/mcp",
                session.env().name(),
                session.env().name()
            )),
            None => Err(format!(
                "Unknown session_id: {name}; create one with openenv/session/create"
            )),
        },
    }
}

async fn call(
    hub: &Arc<Hub>,
    env: &Arc<dyn Environment>,
    id: &Value,
    params: Map<String, Value>,
    bound: Option<&Arc<Session>>,
) -> Value {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return failure(id, INVALID_PARAMS, "Missing 'name' in params");
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::Object(arguments)) => Some(arguments.clone()),
        Some(_) => return failure(id, INVALID_PARAMS, "'arguments' must be an object"),
    };
    let session = match session_for(hub, env, &params, bound) {
        Ok(Some(session)) => session,
        Ok(None) => {
            return failure(
                id,
                INVALID_PARAMS,
                format!(
                    "tools/call needs a session: create one with openenv/session/create, reset it over /{0}/ws?session_id=ID, then pass \"session_id\"; or step over /{0}/ws",
                    env.name()
                ),
            );
        }
        Err(message) => return failure(id, INVALID_PARAMS, message),
    };
    let action = Action::CallTool {
        tool_name: name.to_owned(),
        arguments,
        metadata: None,
    };
    let envelope = match session.step(hub, action).await {
        Ok(envelope) => envelope,
        Err(error) => {
            let code = match &error {
                DoorError::Invalid(_) => INVALID_PARAMS,
                DoorError::NoEpisode => INVALID_REQUEST,
                DoorError::Hub(
                    HubError::UnknownEpisode(_)
                    | HubError::Misrouted { .. }
                    | HubError::Closed { .. },
                ) => INVALID_REQUEST,
                DoorError::Hub(_) => SERVER_ERROR,
            };
            return failure(id, code, error.to_string());
        }
    };
    let Value::Object(mut envelope) = envelope else {
        return failure(id, SERVER_ERROR, "the step produced no observation");
    };
    let Some(Value::Object(mut observation)) = envelope.remove("observation") else {
        return failure(id, SERVER_ERROR, "the step produced no observation");
    };
    if let Some(message) = observation
        .get("error")
        .and_then(|error| error.get("message"))
        .and_then(Value::as_str)
    {
        return failure(id, INVALID_PARAMS, format!("Tool not found: {message}"));
    }
    // OpenEnv's tools/call answers the observation dumped whole: reward and done inside.
    observation.insert(
        "reward".into(),
        envelope.remove("reward").unwrap_or(Value::Null),
    );
    observation.insert(
        "done".into(),
        envelope.remove("done").unwrap_or(Value::Bool(false)),
    );
    success(id, Value::Object(observation))
}

/// Whether the request accepts an event stream (then it is MCP's, not OpenEnv's).
fn accepts_event_stream(request: &Request) -> bool {
    request
        .headers()
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains("text/event-stream"))
}

/// The environment a `POST …/mcp` path names (`/<env>/mcp`, or `/mcp` for the only one).
fn env_of(hub: &Hub, path: &str) -> Option<Arc<dyn Environment>> {
    let prefix = path.trim_end_matches('/').strip_suffix("/mcp")?;
    let name = prefix.strip_prefix('/').unwrap_or(prefix);
    let env = match name {
        "" => hub.env(None),
        name if !name.contains('/') => hub.env(Some(name)),
        _ => return None,
    };
    env.ok().cloned()
}

/// Serves OpenEnv's JSON-RPC on `POST /<env>/mcp` for requests that do not accept event
/// streams; passes every other request on to MCP.
pub async fn json_rpc(State(hub): State<Arc<Hub>>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST || accepts_event_stream(&request) {
        return next.run(request).await;
    }
    let Some(env) = env_of(&hub, request.uri().path()) else {
        return next.run(request).await;
    };
    let path = request.uri().path().to_owned();
    let body: Bytes = match axum::body::to_bytes(request.into_body(), MCP_BODY_LIMIT).await {
        Ok(body) => body,
        Err(_) => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                Json(failure(
                    &Value::Null,
                    INVALID_REQUEST,
                    format!("the request body is over {MCP_BODY_LIMIT} bytes"),
                )),
            )
                .into_response();
        }
    };
    let reply = match serde_json::from_slice::<Value>(&body) {
        Ok(request) => handle(&hub, &env, request, None, Channel::Http).await,
        Err(error) => failure(
            &Value::Null,
            PARSE_ERROR,
            format!("Parse error: the body is not JSON ({error})"),
        ),
    };
    let mut response = Json(reply).into_response();
    // OpenEnv's client names its session only in the JSON body, which a proxy cannot read;
    // it keeps cookies, though, so the replica holding the session names itself in one, for
    // this endpoint only (`manifests/nginx/routing.conf` routes on it).
    if let Some(name) = &hub.settings().replica
        && let Ok(cookie) = header::HeaderValue::from_str(&format!(
            "{REPLICA_COOKIE}={name}; Path={path}; HttpOnly; SameSite=Strict"
        ))
    {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// The cookie naming the replica that answered OpenEnv's JSON-RPC.
pub const REPLICA_COOKIE: &str = "mcpgym_replica";
