//! The Open Reward Standard's HTTP API, at the server's root, matching the servers of
//! `ors-sdk` 0.1.0 and `openreward` 0.1.167 and what their clients send.
//!
//! | route | what |
//! |---|---|
//! | `GET /health`, `GET /version` | `{"status": "ok"}`; `{version, build_sha}` |
//! | `GET /list_environments` | `["wordle", …]` |
//! | `GET /<env>/tools`, `/<env>/task_tools` | `{tools: [{name, description, input_schema}]}` |
//! | `GET /<env>/splits` | `[{name: "train", type: "train"}, {name: "test", type: "test"}]` |
//! | `POST /<env>/tasks`, `num_tasks`, `task`, `task_range` | tasks as `{"id": "<task id>"}` |
//! | `POST /create_session` | event stream: `task_id` (a new session id), then `end` |
//! | `POST /create` | `X-Session-ID`; `task_spec` or `split` + `index` → an episode |
//! | `POST /ping` | keeps the session (and its episode) alive |
//! | `GET /<env>/prompt`, `/<env>/messages` | the task as blocks; as one user message |
//! | `POST /<env>/call` | event stream: `task_id`, then `end` with the whole `RunToolOutput` |
//! | `POST /delete` | closes the session's episode; `POST /delete_session` is a no-op |
//!
//! Wire decisions:
//! - Every session is an ordinary hub episode: it is on the control plane
//!   (`GET /episodes/{id}`, whose id is `metadata.episode_id` of every tool output), paid the
//!   same rewards and recorded in the same trajectory.
//! - `/create` accepts both SDKs' bodies: ors-sdk's `secrets` and openreward's `toolset_name`
//!   and `X-Secrets` header are read and ignored (mcpgym's environments take no secrets).
//!   A task object is `{"id", "seed"?, "options"?}`.
//! - A `/create` that names no environment (ors-sdk's `session(split=, index=)` with several
//!   hosted) binds its episode on the session's first `/<env>/…` request.
//! - The bare paths openreward calls for a base URL (`/prompt`, `/call`, `/task_tools`,
//!   `/splits`, `/tasks`, …) are served, not redirected: a session's requests go to its own
//!   environment, others to the one named by `X-Deployment` (openreward's
//!   `environments.get(name)`) or the only one hosted. The SDK servers' 308 to the first
//!   environment would send a second environment's session to the wrong one.
//! - `/call` answers the whole JSON in one `end` event (both clients strip the space after
//!   `data:` and would damage a chunk boundary); results are kept 60 s for a client resuming
//!   with `task_id`. An illegal move is `ok: true` with the refusal as text, so the model sees
//!   it; `ok: false` with `reason` is kept for a tool that was not run: `not_found`,
//!   `input_validation` (checked against the tool's schema) and `episode_finished`.
//! - Errors are `{"detail": "sentence"}`, where both clients read their message.

mod check;
mod sessions;
mod wire;

use std::convert::Infallible;
use std::sync::{Arc, Weak};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use axum::{Json, Router};
use futures::{Stream, StreamExt};
use rmcp::model::JsonObject;
use serde_json::{Value, json};

use self::check::check_input;
use self::sessions::{Call, CallResult, Session, Sessions, TaskSource};
use self::wire::{
    CallBody, CreateBody, OrsError, Refusal, SplitBody, TaskBody, TaskRangeBody, TaskSpec,
    parse_body, parse_split, python_index, python_range, refusal, task_object, text_block,
    tool_list, tool_output,
};
use crate::env::Environment;
use crate::http::MCP_BODY_LIMIT;
use crate::hub::{Hub, HubError};
use crate::task::Split;
use crate::trajectory::SessionRecord;

/// Largest body of a request other than a tool call.
const BODY_LIMIT: usize = 64 * 1024;
/// Longest session id accepted.
const MAX_SESSION_ID: usize = 256;
/// Comment lines on a running call's stream (both clients give up after 30 s of silence).
const SSE_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// The door's state: the hub and the ORS sessions.
struct Door {
    hub: Arc<Hub>,
    sessions: Sessions,
}

/// Which environment a path names: `/<env>/…`, or a bare path.
#[derive(Debug, Clone, Copy)]
enum Scope {
    Env(&'static str),
    Bare,
}

/// The ORS routes.
pub fn routes(hub: &Arc<Hub>) -> Router<Arc<Hub>> {
    let settings = hub.settings();
    let door = Arc::new(Door {
        hub: hub.clone(),
        sessions: Sessions::new(settings.max_episodes, settings.idle_ttl),
    });
    // The sessions a previous server held, given back bound to their episodes.
    for restored in hub.take_restored_sessions(|s| matches!(s, SessionRecord::Ors { .. })) {
        door.sessions
            .restore(restored.session.id(), restored.env, &restored.episode);
    }
    spawn_sweeper(&door);
    let mut router = Router::new()
        .route("/health", get(|| async { Json(json!({ "status": "ok" })) }))
        .route("/version", get(version))
        .route("/list_environments", get(list_environments))
        .route("/create_session", post(create_session))
        .route("/create", post(create))
        .route("/ping", post(ping))
        .route("/delete", post(delete))
        .route("/delete_session", post(delete_session))
        .merge(scoped("", Scope::Bare));
    for env in hub.envs() {
        router = router.merge(scoped(&format!("/{}", env.name()), Scope::Env(env.name())));
    }
    let calls = Router::new()
        .route("/call", scoped_post(Scope::Bare, call))
        .layer(DefaultBodyLimit::max(MCP_BODY_LIMIT));
    let calls = hub.envs().fold(calls, |calls, env| {
        calls.merge(
            Router::new()
                .route(
                    &format!("/{}/call", env.name()),
                    scoped_post(Scope::Env(env.name()), call),
                )
                .layer(DefaultBodyLimit::max(MCP_BODY_LIMIT)),
        )
    });
    router
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .merge(calls)
        .with_state(door)
}

/// For the control plane's `GET /tools` when an ORS client calls it as its bare `/tools`
/// (it carries `X-Session-ID`): the ORS tool list of the environment the request means.
pub fn bare_tools(hub: &Arc<Hub>, headers: &HeaderMap) -> Response {
    match default_env(hub, headers) {
        Ok(env) => Json(tool_list(env.tools())).into_response(),
        Err(error) => error.into_response(),
    }
}

/// Drops sessions unused past the TTL, with their episodes. Runs while the door lives, when
/// routes are built inside a runtime (as the server does).
fn spawn_sweeper(door: &Arc<Door>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let period = door.sessions.sweep_period();
    let door: Weak<Door> = Arc::downgrade(door);
    runtime.spawn(async move {
        let mut ticker = tokio::time::interval(period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let Some(door) = door.upgrade() else { break };
            let stale = door.sessions.take_stale();
            if !stale.is_empty() {
                tracing::info!(count = stale.len(), "dropping idle ORS sessions");
                Sessions::retire(&door.hub, stale).await;
            }
        }
    });
}

type Body = Result<Bytes, BytesRejection>;

/// A handler of `(door, scope, headers, body)` as a POST route for one scope.
fn scoped_post<F, Fut>(scope: Scope, handler: F) -> MethodRouter<Arc<Door>>
where
    F: Fn(Arc<Door>, Scope, HeaderMap, Body) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    post(
        move |State(door): State<Arc<Door>>, headers: HeaderMap, body: Body| {
            handler(door, scope, headers, body)
        },
    )
}

/// A handler of `(door, scope, headers)` as a GET route for one scope.
fn scoped_get<F, Fut>(scope: Scope, handler: F) -> MethodRouter<Arc<Door>>
where
    F: Fn(Arc<Door>, Scope, HeaderMap) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    get(move |State(door): State<Arc<Door>>, headers: HeaderMap| handler(door, scope, headers))
}

/// The routes under one environment's prefix, or the bare ones (`prefix` empty). The bare
/// `GET /tools` belongs to the control plane, which hands ORS clients to [`bare_tools`].
fn scoped(prefix: &str, scope: Scope) -> Router<Arc<Door>> {
    let mut router = Router::new();
    if matches!(scope, Scope::Env(_)) {
        router = router.route(&format!("{prefix}/tools"), scoped_get(scope, tools));
    }
    router
        .route(
            &format!("{prefix}/task_tools"),
            scoped_get(scope, task_tools),
        )
        .route(&format!("{prefix}/splits"), scoped_get(scope, splits))
        .route(&format!("{prefix}/tasks"), scoped_post(scope, tasks))
        .route(
            &format!("{prefix}/num_tasks"),
            scoped_post(scope, num_tasks),
        )
        .route(&format!("{prefix}/task"), scoped_post(scope, task))
        .route(
            &format!("{prefix}/task_range"),
            scoped_post(scope, task_range),
        )
        .route(&format!("{prefix}/prompt"), scoped_get(scope, prompt))
        .route(&format!("{prefix}/messages"), scoped_get(scope, messages))
}

fn respond(result: Result<Value, OrsError>) -> Response {
    match result {
        Ok(value) => Json(value).into_response(),
        Err(error) => error.into_response(),
    }
}

fn read_body(body: Body) -> Result<Bytes, OrsError> {
    body.map_err(|rejection| {
        OrsError::new(
            rejection.status(),
            format!("cannot read the request body: {rejection}"),
        )
    })
}

/// The `X-Session-ID` header.
fn session_id(headers: &HeaderMap) -> Result<String, OrsError> {
    let id = headers
        .get("x-session-id")
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .unwrap_or_default();
    if id.is_empty() || id.len() > MAX_SESSION_ID {
        return Err(OrsError::bad_request(
            "X-Session-ID header is required: get a session id from POST /create_session, start the session with POST /create, then send the id with every session request",
        ));
    }
    Ok(id.to_owned())
}

/// The environment named by `X-Deployment` (openreward sends `[owner/]name`), if hosted.
fn deployment<'h>(hub: &'h Hub, headers: &HeaderMap) -> Option<&'h Arc<dyn Environment>> {
    let name = headers.get("x-deployment")?.to_str().ok()?;
    let name = name.rsplit('/').next()?.trim().to_ascii_lowercase();
    hub.env(Some(&name)).ok()
}

/// The environment a bare path means: `X-Deployment`'s, else the only one.
fn default_env(hub: &Hub, headers: &HeaderMap) -> Result<Arc<dyn Environment>, OrsError> {
    if let Some(env) = deployment(hub, headers) {
        return Ok(env.clone());
    }
    hub.env(None).cloned().map_err(|_| {
        let names: Vec<&str> = hub.envs().map(|e| e.name()).collect();
        OrsError::bad_request(format!(
            "this server hosts several environments ({}): send the request to /<env>/… (e.g. /{}/tools), or name the environment in the X-Deployment header",
            names.join(", "),
            names.first().copied().unwrap_or("wordle"),
        ))
    })
}

impl Door {
    fn env(&self, scope: Scope, headers: &HeaderMap) -> Result<Arc<dyn Environment>, OrsError> {
        match scope {
            Scope::Env(name) => Ok(self.hub.env(Some(name))?.clone()),
            Scope::Bare => default_env(&self.hub, headers),
        }
    }

    fn session(&self, id: &str) -> Result<Arc<Session>, OrsError> {
        self.sessions.get(id).ok_or_else(|| {
            OrsError::new(
                StatusCode::NOT_FOUND,
                format!(
                    "Active environment not found: no session {id:?} (never created, deleted, or dropped after being idle); POST /create with this X-Session-ID first"
                ),
            )
        })
    }

    /// The session a request names, its environment and its episode (started now if the
    /// session was waiting for its environment).
    async fn session_episode(
        &self,
        scope: Scope,
        headers: &HeaderMap,
    ) -> Result<(String, Arc<Session>, Arc<dyn Environment>, String), OrsError> {
        let id = session_id(headers)?;
        let session = self.session(&id)?;
        let env = match (scope, session.bound_env().await) {
            (Scope::Env(name), _) | (Scope::Bare, Some(name)) => self.hub.env(Some(name))?.clone(),
            (Scope::Bare, None) => default_env(&self.hub, headers)?,
        };
        let episode = session.episode_for(&self.hub, &env, &id).await?;
        Ok((id, session, env, episode))
    }

    /// Forgets a session whose episode is gone (deleted on the control plane, or reaped).
    fn forget_if_gone(&self, id: &str, error: &HubError) {
        if matches!(error, HubError::UnknownEpisode(_) | HubError::Closed { .. }) {
            self.sessions.remove(id);
        }
    }
}

async fn version() -> Json<Value> {
    Json(json!({ "version": env!("CARGO_PKG_VERSION"), "build_sha": null }))
}

async fn list_environments(State(door): State<Arc<Door>>) -> Json<Value> {
    Json(json!(door.hub.envs().map(|e| e.name()).collect::<Vec<_>>()))
}

async fn tools(door: Arc<Door>, scope: Scope, headers: HeaderMap) -> Response {
    respond(door.env(scope, &headers).map(|env| tool_list(env.tools())))
}

/// The session's tools: the environment's (mcpgym has no task-specific tools). Binds a
/// waiting session, as every session request does.
async fn task_tools(door: Arc<Door>, scope: Scope, headers: HeaderMap) -> Response {
    respond(
        door.session_episode(scope, &headers)
            .await
            .map(|(_, _, env, _)| tool_list(env.tools())),
    )
}

async fn splits(door: Arc<Door>, scope: Scope, headers: HeaderMap) -> Response {
    respond(door.env(scope, &headers).map(|_| {
        json!([
            { "name": "train", "type": "train" },
            { "name": "test", "type": "test" },
        ])
    }))
}

/// The environment and the split a tasks request names.
fn env_split(
    door: &Door,
    scope: Scope,
    headers: &HeaderMap,
    split: &str,
) -> Result<(Arc<dyn Environment>, Split), OrsError> {
    Ok((door.env(scope, headers)?, parse_split(split)?))
}

/// The most tasks one list or range reply holds.
pub(crate) const LISTED_TASKS: u64 = 10_000;

const SPLIT_EXAMPLE: &str = "{\"split\": \"train\"}";

async fn tasks(door: Arc<Door>, scope: Scope, headers: HeaderMap, body: Body) -> Response {
    respond((|| {
        let body: SplitBody = parse_body(&read_body(body)?, "task list request", SPLIT_EXAMPLE)?;
        let (env, split) = env_split(&door, scope, &headers, &body.split)?;
        // A split of generated families may hold millions: the first LISTED_TASKS, and
        // get_task_range for the rest (num_tasks says how many there are).
        let tasks: Vec<Value> = env
            .tasks()
            .slice(split, 0, LISTED_TASKS)
            .iter()
            .map(|id| task_object(id))
            .collect();
        Ok(json!({ "tasks": tasks, "env_name": env.name() }))
    })())
}

async fn num_tasks(door: Arc<Door>, scope: Scope, headers: HeaderMap, body: Body) -> Response {
    respond((|| {
        let body: SplitBody = parse_body(&read_body(body)?, "task count request", SPLIT_EXAMPLE)?;
        let (env, split) = env_split(&door, scope, &headers, &body.split)?;
        Ok(json!({ "num_tasks": env.tasks().len(split) }))
    })())
}

async fn task(door: Arc<Door>, scope: Scope, headers: HeaderMap, body: Body) -> Response {
    respond((|| {
        let body: TaskBody = parse_body(
            &read_body(body)?,
            "task request",
            "{\"split\": \"train\", \"index\": 0}",
        )?;
        let (env, split) = env_split(&door, scope, &headers, &body.split)?;
        let tasks = env.tasks();
        let id = python_index(body.index, tasks.len(split))
            .and_then(|index| tasks.get(split, index))
            .ok_or_else(|| {
                OrsError::bad_request(format!(
                    "Invalid index {}: the {split} split of {} has {} tasks",
                    body.index,
                    env.name(),
                    tasks.len(split)
                ))
            })?;
        Ok(json!({ "task": task_object(&id), "env_name": env.name() }))
    })())
}

async fn task_range(door: Arc<Door>, scope: Scope, headers: HeaderMap, body: Body) -> Response {
    respond((|| {
        let body: TaskRangeBody = parse_body(
            &read_body(body)?,
            "task range request",
            "{\"split\": \"train\", \"start\": 0, \"stop\": 10}",
        )?;
        let (env, split) = env_split(&door, scope, &headers, &body.split)?;
        let (start, stop) = python_range(body.start, body.stop, env.tasks().len(split));
        let stop = stop.min(start.saturating_add(LISTED_TASKS));
        let tasks: Vec<Value> = env
            .tasks()
            .slice(split, start, stop)
            .iter()
            .map(|id| task_object(id))
            .collect();
        Ok(json!({ "tasks": tasks, "env_name": env.name() }))
    })())
}

/// An event stream of these events, kept alive by comment lines while they are pending.
fn event_stream(events: impl Stream<Item = Event> + Send + 'static) -> Response {
    let stream = events.map(Ok::<_, Infallible>);
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(SSE_KEEP_ALIVE))
        .into_response();
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// A new session id, sent as ORS sends it: a `task_id` event, then an empty `end`.
async fn create_session(State(door): State<Arc<Door>>) -> Response {
    // After the replica's name, so that a proxy in front of several sends the session's
    // requests here (nothing is kept until `/create`).
    let id = crate::replica::qualify(
        door.hub.settings().replica.as_ref(),
        &uuid::Uuid::new_v4().to_string(),
    );
    event_stream(futures::stream::iter([
        Event::default().event("task_id").data(id),
        Event::default().event("end").data(""),
    ]))
}

async fn create(State(door): State<Arc<Door>>, headers: HeaderMap, body: Body) -> Response {
    match create_inner(&door, &headers, body).await {
        Ok(id) => Json(json!({ "sid": id })).into_response(),
        Err(error) => error.into_response(),
    }
}

const CREATE_EXAMPLE: &str = "{\"env_name\": \"wordle\", \"split\": \"train\", \"index\": 0} or {\"env_name\": \"wordle\", \"task_spec\": {\"id\": \"train-0000\"}}";

async fn create_inner(door: &Door, headers: &HeaderMap, body: Body) -> Result<String, OrsError> {
    let id = session_id(headers)?;
    let body: CreateBody = parse_body(&read_body(body)?, "session request", CREATE_EXAMPLE)?;
    let source = match (body.task_spec, body.split, body.index) {
        (Some(spec), None, None) => TaskSource::Spec(
            serde_json::from_value::<TaskSpec>(spec).map_err(|error| {
                OrsError::bad_request(format!(
                    "task_spec is not a task ({error}); send a task as /<env>/tasks lists it, e.g. {{\"id\": \"train-0000\"}}, optionally with \"seed\" and \"options\""
                ))
            })?,
        ),
        (None, Some(split), Some(index)) => TaskSource::Index {
            split: parse_split(&split)?,
            index,
        },
        _ => {
            return Err(OrsError::bad_request(format!(
                "provide either task_spec or both split and index, not both or neither; e.g. {CREATE_EXAMPLE}"
            )));
        }
    };
    // The environment, when it can be told now; otherwise the session's first /<env>/…
    // request tells it.
    let env = match body.env_name {
        Some(name) => Some(door.hub.env(Some(&name.to_ascii_lowercase()))?.clone()),
        None => deployment(&door.hub, headers)
            .cloned()
            .or_else(|| door.hub.env(None).ok().cloned()),
    };
    // Checked now, so a bad request fails here rather than on the first call.
    if let Some(env) = &env {
        source.request(env.as_ref())?;
    }
    let (session, stale) = door.sessions.insert(&id, source);
    if !stale.is_empty() {
        Sessions::retire(&door.hub, stale).await;
    }
    let session = session?;
    if let Some(env) = env
        && let Err(error) = session.episode_for(&door.hub, &env, &id).await
    {
        door.sessions.remove(&id);
        return Err(error);
    }
    Ok(id)
}

async fn ping(State(door): State<Arc<Door>>, headers: HeaderMap) -> Response {
    let result = session_id(&headers).and_then(|id| Ok((door.session(&id)?, id)));
    let (session, id) = match result {
        Ok(found) => found,
        Err(error) => return error.into_response(),
    };
    // Keeps the episode from the hub's idle reaper too (looking it up marks it used).
    if let Some(episode) = session.episode().await
        && let Err(error) = door.hub.episode(&episode)
    {
        door.forget_if_gone(&id, &error);
        return OrsError::from(error).into_response();
    }
    Json(json!({ "status": "ok" })).into_response()
}

async fn delete(State(door): State<Arc<Door>>, headers: HeaderMap) -> Response {
    let id = match session_id(&headers) {
        Ok(id) => id,
        Err(error) => return error.into_response(),
    };
    if let Some(session) = door.sessions.remove(&id) {
        Sessions::retire(&door.hub, vec![session]).await;
    }
    Json(json!({ "sid": id })).into_response()
}

async fn delete_session(headers: HeaderMap) -> Response {
    respond(session_id(&headers).map(|id| json!({ "sid": id })))
}

async fn prompt(door: Arc<Door>, scope: Scope, headers: HeaderMap) -> Response {
    respond(
        prompt_text(&door, scope, &headers)
            .await
            .map(|text| json!([text_block(&text)])),
    )
}

/// The prompt as a conversation of one user message (what openreward's client builds from
/// `/prompt` itself when `/messages` is missing).
async fn messages(door: Arc<Door>, scope: Scope, headers: HeaderMap) -> Response {
    respond(
        prompt_text(&door, scope, &headers)
            .await
            .map(|text| json!([{ "role": "user", "blocks": [text_block(&text)] }])),
    )
}

async fn prompt_text(door: &Door, scope: Scope, headers: &HeaderMap) -> Result<String, OrsError> {
    let (id, _, _, episode) = door.session_episode(scope, headers).await?;
    door.hub.prompt(&episode).await.map_err(|error| {
        door.forget_if_gone(&id, &error);
        error.into()
    })
}

async fn call(door: Arc<Door>, scope: Scope, headers: HeaderMap, body: Body) -> Response {
    let body = match read_body(body).and_then(|body| {
        parse_body::<CallBody>(
            &body,
            "tool call",
            "{\"name\": \"guess\", \"input\": {\"word\": \"crane\"}}",
        )
    }) {
        Ok(body) => body,
        Err(error) => return error.into_response(),
    };
    if let Some(task_id) = body.task_id {
        // A client resuming a call whose stream broke.
        let call = session_id(&headers)
            .and_then(|id| door.session(&id))
            .map(|s| s.call(&task_id));
        return match call {
            Ok(Some(call)) => call_stream(task_id, call),
            Ok(None) => event_stream(futures::stream::iter([Event::default()
                .event("error")
                .data(format!(
                    "unknown task_id {task_id:?}: its result is kept for 60 s after the call ends; call the tool again"
                ))])),
            Err(error) => error.into_response(),
        };
    }
    let (id, session, env, episode) = match door.session_episode(scope, &headers).await {
        Ok(found) => found,
        Err(error) => return error.into_response(),
    };
    let key = match headers
        .get(crate::http::IDEMPOTENCY_KEY)
        .map(|v| v.to_str())
    {
        None => None,
        Some(Ok(key)) => Some(key.to_owned()),
        Some(Err(_)) => {
            return OrsError::bad_request(
                "the Idempotency-Key header is not visible ASCII; send 1 to 128 visible ASCII characters (a UUID is a good key)",
            )
            .into_response();
        }
    };
    let (task_id, call) = session.start_call();
    let running = call.clone();
    // Runs apart from the request, so a broken stream does not stop the call; the client
    // resumes with its task_id.
    tokio::spawn(async move {
        let called = Called {
            name: body.name,
            input: body.input,
            key,
        };
        let result = run_call(&door, &id, &env, &episode, called).await;
        session.touch();
        running.finish(result);
    });
    call_stream(task_id, call)
}

/// `task_id`, then the call's `end` (or `error`) once it is done.
fn call_stream(task_id: String, call: Arc<Call>) -> Response {
    let first = futures::stream::iter([Event::default().event("task_id").data(task_id)]);
    let last = futures::stream::once(async move {
        match &*call.outcome().await {
            Ok(json) => Event::default().event("end").data(json),
            // Carriage returns would break the event's lines.
            Err(message) => Event::default()
                .event("error")
                .data(message.replace('\r', "")),
        }
    });
    event_stream(first.chain(last))
}

fn refused(reason: Refusal, error: &str) -> CallResult {
    Ok(refusal(reason, error).to_string())
}

/// A tool call as the request made it.
struct Called {
    name: String,
    input: Option<Value>,
    /// Its `Idempotency-Key`.
    key: Option<String>,
}

/// Runs one tool call: refused when the tool is unknown, its input does not fit its schema or
/// the episode is over; otherwise stepped through the hub.
async fn run_call(
    door: &Door,
    session_id: &str,
    env: &Arc<dyn Environment>,
    episode: &str,
    Called { name, input, key }: Called,
) -> CallResult {
    let input: JsonObject = match input {
        None | Some(Value::Null) => JsonObject::new(),
        Some(Value::Object(input)) => input,
        Some(_) => {
            return refused(
                Refusal::InputValidation,
                &format!(
                    "Tool input validation error: the input of {name:?} must be a JSON object of its arguments"
                ),
            );
        }
    };
    let Some(tool) = env.tools().iter().find(|tool| tool.name == name) else {
        let offered: Vec<&str> = env.tools().iter().map(|t| t.name.as_ref()).collect();
        return refused(
            Refusal::NotFound,
            &format!(
                "{name:?} is not a valid tool; {} offers: {}",
                env.name(),
                offered.join(", ")
            ),
        );
    };
    if let Err(problem) = check_input(&tool.input_schema, &input) {
        return refused(
            Refusal::InputValidation,
            &format!(
                "Tool input validation error: {problem}. {name} takes arguments matching its input_schema (GET /{}/tools)",
                env.name()
            ),
        );
    }
    let hub = &door.hub;
    // A retried call whose first try was answered (even the one that ended the episode)
    // gets that answer again.
    if let Some(key) = &key
        && let Ok(step) = hub.answer(episode, key).await
    {
        return Ok(tool_output(&step).to_string());
    }
    let outcome = match hub.status(episode).await {
        Ok(status) if status.done => {
            return refused(
                Refusal::EpisodeFinished,
                &format!(
                    "{name:?} was not run: the episode has finished (a tool returned finished=True), so no further tool calls are accepted; start a new session for a new episode"
                ),
            );
        }
        Ok(_) => hub.step_keyed(episode, &name, input, key.as_deref()).await,
        Err(error) => Err(error),
    };
    match outcome {
        Ok(step) => Ok(tool_output(&step).to_string()),
        Err(error @ HubError::UnknownTool { .. }) => refused(Refusal::NotFound, &error.to_string()),
        Err(error) => {
            door.forget_if_gone(session_id, &error);
            Err(error.to_string())
        }
    }
}
