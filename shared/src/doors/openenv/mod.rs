//! OpenEnv's HTTP and WebSocket API (wire format of `openenv` 0.10.0), one base URL per
//! hosted environment: `http://HOST/<env>`, as OpenEnv clients take it
//! (`GenericEnvClient(base_url="http://127.0.0.1:8000/wordle")`).
//!
//! | route | what |
//! |---|---|
//! | `GET /<env>/health` | `{"status": "healthy"}` |
//! | `GET /<env>/metadata` | name, description (the instructions), version, documentation URL |
//! | `GET /<env>/schema` | JSON Schemas of the actions, observations and state |
//! | `GET /<env>/ws` | the WebSocket: `reset`, `step`, `state`, `mcp`, `close` ([`ws`]) |
//! | `POST /<env>/reset` | starts an episode; its id is in the metadata as `episode_id` |
//! | `POST /<env>/step` | `{action, episode_id}`: steps that episode |
//! | `GET /<env>/state?episode_id=` | the episode's state |
//! | `POST /<env>/mcp` (no event streams accepted) | OpenEnv's JSON-RPC ([`rpc`]) |
//!
//! Actions are MCP's: `{"type": "list_tools"}` and `{"type": "call_tool", "tool_name",
//! "arguments"}`. Observations use OpenEnv's envelope, reward and done at the top level
//! ([`wire`]). Every episode is an ordinary hub episode: on the control plane, paid the same,
//! recorded the same.
//!
//! OpenEnv's HTTP `/reset` and `/step` are stateless (a new environment per request). Here
//! `/reset` starts an episode that lives on (until deleted or idle) and `/step` names it with
//! an `episode_id` field; the WebSocket is the session-per-connection way.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::ws::{WebSocketUpgrade, rejection::WebSocketUpgradeRejection};
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Map, Value, json};

use crate::env::Environment;
use crate::http::MCP_BODY_LIMIT;
use crate::hub::Hub;
use crate::trajectory::SessionRecord;

pub mod rpc;
pub mod schema;
pub mod session;
pub mod wire;
pub mod ws;

pub use rpc::json_rpc;

use session::{Sessions, sessions_of};
use wire::{Action, DoorError, ResetParams};

/// The OpenEnv routes of every hosted environment.
pub fn routes(hub: &Arc<Hub>) -> Router<Arc<Hub>> {
    let sessions = sessions_of(hub);
    // The named sessions a previous server held, given back running their episodes.
    for restored in hub.take_restored_sessions(|s| matches!(s, SessionRecord::OpenEnv { .. })) {
        if let Ok(env) = hub.env(Some(restored.env)) {
            sessions.restore(restored.session.id(), env.clone(), &restored.episode);
        }
    }
    let mut router = Router::new();
    for env in hub.envs() {
        let name = env.name();
        let (e1, e2, e3, e4, e5, e6) = (
            env.clone(),
            env.clone(),
            env.clone(),
            env.clone(),
            env.clone(),
            env.clone(),
        );
        let sessions = sessions.clone();
        router = router
            .route(
                &format!("/{name}/health"),
                get(|| async { Json(json!({ "status": "healthy" })) }),
            )
            .route(
                &format!("/{name}/metadata"),
                get(move || async move { Json(schema::metadata(e1.as_ref())) }),
            )
            .route(
                &format!("/{name}/schema"),
                get(move || async move { Json(schema::schemas(e2.as_ref())) }),
            )
            .route(
                &format!("/{name}/reset"),
                post(move |State(hub): State<Arc<Hub>>, body| reset(hub, e3, body)),
            )
            .route(
                &format!("/{name}/step"),
                post(move |State(hub): State<Arc<Hub>>, body| step(hub, e4, body)),
            )
            .route(
                &format!("/{name}/state"),
                get(move |State(hub): State<Arc<Hub>>, query| state(hub, e5, query)),
            )
            .route(
                &format!("/{name}/ws"),
                get(move |State(hub): State<Arc<Hub>>, query, upgrade| {
                    websocket(hub, e6, sessions, query, upgrade)
                }),
            );
    }
    router.layer(DefaultBodyLimit::max(MCP_BODY_LIMIT))
}

/// An error as FastAPI words one: `{"detail": "sentence"}`.
fn detail(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "detail": message.into() }))).into_response()
}

fn door_error(error: DoorError) -> Response {
    detail(error.status(), error.to_string())
}

/// Reads a JSON object body; an empty body is `None`. The error is a status and a sentence.
fn object_body(
    body: Result<Bytes, BytesRejection>,
    what: &str,
    example: &str,
) -> Result<Option<Map<String, Value>>, (StatusCode, String)> {
    let body = body.map_err(|rejection| {
        (
            rejection.status(),
            format!(
                "cannot read the request body: {rejection}; send at most {MCP_BODY_LIMIT} bytes of JSON"
            ),
        )
    })?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(Value::Null) => Ok(None),
        Ok(_) => Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the {what} body must be a JSON object, e.g. {example}"),
        )),
        Err(error) => Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the {what} body is not valid JSON ({error}); send e.g. {example}"),
        )),
    }
}

async fn reset(
    hub: Arc<Hub>,
    env: Arc<dyn Environment>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match object_body(body, "reset", "{\"seed\": 7}") {
        Ok(body) => body,
        Err((status, message)) => return detail(status, message),
    };
    let params = match ResetParams::parse(body.map_or(Value::Null, Value::Object)) {
        Ok(params) => params,
        Err(error) => return door_error(error),
    };
    match session::start(&hub, &env, params, None).await {
        Ok((envelope, _)) => Json(envelope).into_response(),
        Err(error) => door_error(error),
    }
}

async fn step(
    hub: Arc<Hub>,
    env: Arc<dyn Environment>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let example = format!(
        "{{\"episode_id\": \"…\", \"action\": {{\"type\": \"call_tool\", \"tool_name\": \"{}\", \"arguments\": {{…}}}}}}",
        env.tools().first().map_or("guess", |t| t.name.as_ref())
    );
    let mut body = match object_body(body, "step", &example) {
        Ok(Some(body)) => body,
        Ok(None) => {
            return detail(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("the step body is missing; send {example}"),
            );
        }
        Err((status, message)) => return detail(status, message),
    };
    let action = match body.remove("action") {
        Some(action @ Value::Object(_)) => action,
        _ => {
            return detail(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("the step body needs an \"action\" object; send {example}"),
            );
        }
    };
    let episode = match body.remove("episode_id") {
        Some(Value::String(id)) => id,
        None | Some(Value::Null) => {
            return detail(
                StatusCode::BAD_REQUEST,
                format!(
                    "OpenEnv's HTTP /step is stateless: name the episode with \"episode_id\" (reset answers it in its metadata), or hold a session over the WebSocket /{}/ws",
                    env.name()
                ),
            );
        }
        Some(_) => {
            return detail(
                StatusCode::UNPROCESSABLE_ENTITY,
                "episode_id must be a string (the id reset answered)",
            );
        }
    };
    // OpenEnv's other StepRequest fields; mcpgym's calls are bounded by the environments.
    for (key, value) in &body {
        let fits = match key.as_str() {
            "timeout_s" => value.is_null() || value.as_f64().is_some_and(|t| t > 0.0),
            "request_id" => {
                value.is_null() || value.as_str().is_some_and(|s| s.chars().count() <= 255)
            }
            _ => {
                return detail(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!(
                        "unexpected key {key:?} in the step body; it takes action, episode_id, timeout_s and request_id"
                    ),
                );
            }
        };
        if !fits {
            return detail(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "{key} must be {}",
                    if key == "timeout_s" {
                        "a number above 0"
                    } else {
                        "a string of at most 255 characters"
                    }
                ),
            );
        }
    }
    let action = match Action::parse(action, env.as_ref()) {
        Ok(action) => action,
        Err(error) => return door_error(error),
    };
    match session::step(&hub, &env, Some(&episode), action).await {
        Ok(envelope) => Json(envelope).into_response(),
        Err(error) => door_error(error),
    }
}

async fn state(
    hub: Arc<Hub>,
    env: Arc<dyn Environment>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let Query(query) = match query {
        Ok(query) => query,
        Err(rejection) => {
            return detail(
                StatusCode::BAD_REQUEST,
                format!("{}; use ?episode_id=ID", rejection.body_text()),
            );
        }
    };
    match session::state(
        &hub,
        env.as_ref(),
        query.get("episode_id").map(String::as_str),
    ) {
        Ok(state) => Json(state).into_response(),
        Err(error) => door_error(error),
    }
}

async fn websocket(
    hub: Arc<Hub>,
    env: Arc<dyn Environment>,
    sessions: Arc<Sessions>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => {
            return detail(
                rejection.status(),
                format!(
                    "{}: /{}/ws is OpenEnv's WebSocket; connect with a WebSocket client, e.g. openenv's GenericEnvClient(base_url=\"http://HOST/{}\")",
                    rejection.body_text(),
                    env.name(),
                    env.name()
                ),
            );
        }
    };
    let session_id = query
        .ok()
        .and_then(|Query(mut query)| query.remove("session_id"))
        .filter(|id| !id.is_empty());
    // An upgraded connection leaves the server's connection limit; this bound keeps sockets
    // from piling up (a full hub still answers each reset with CAPACITY_REACHED, as OpenEnv
    // clients expect).
    let limit = hub.settings().max_episodes.saturating_mul(2).max(64);
    let Some(slot) = sessions.open_socket(limit) else {
        return detail(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "{limit} WebSockets are open, the most this server keeps (twice --max-episodes); close one and retry"
            ),
        );
    };
    upgrade
        .max_message_size(ws::FRAME_LIMIT)
        .max_frame_size(ws::FRAME_LIMIT)
        .on_upgrade(move |socket| async move {
            let _slot = slot;
            ws::serve(socket, hub, env, sessions, session_id).await;
        })
}
