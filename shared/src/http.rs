//! Streamable HTTP: MCP endpoints, the control plane, health and metrics, behind Host, Origin
//! and bearer-token checks, on connections held to header and idle timeouts, a connection
//! limit and a shutdown deadline ([`mcpgym_serve`], set by [`HttpOptions::connections`]).
//!
//! | route | what |
//! |---|---|
//! | `POST /mcp` (one environment) and `POST /<env>/mcp` | MCP for an environment |
//! | `POST /episodes/{id}/mcp` | MCP for exactly one episode |
//! | `POST /episodes` | start an episode |
//! | `GET /episodes/{id}` | its state; `answer` and the like once done |
//! | `POST /episodes/{id}/call` | call a tool: `{tool, arguments}` → the [`StepRecord`] |
//! | `GET /episodes/{id}/prompt` | what the agent is asked: instructions and the task |
//! | `GET /episodes/{id}/trajectory` | its trajectory as JSON Lines |
//! | `GET /episodes/{id}/{document}` | a document the episode exports (e.g. `notebook`) |
//! | `DELETE /episodes/{id}` | close it |
//! | `GET /tasks?env=&split=` | task ids |
//! | `GET /tools?env=` | the environment's tools, as MCP lists them |
//! | `GET /healthz`, `GET /metrics` | health, Prometheus metrics |
//! | OpenEnv at `/<env>/…`, ORS at `/…` | see [`crate::doors`] |
//!
//! [`StepRecord`]: crate::step::StepRecord

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use mcpgym_serve::{Connections, Guard, Origins, ServeConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use serde_json::{Value, json};
use tower::Layer as _;

use crate::binding::EpisodeRoute;
use crate::doors::ors::LISTED_TASKS;
use crate::env::StartError;
use crate::hub::{CreateEpisode, Hub, HubError, is_episode_id};
use crate::legacy::{LegacyDoor, SESSION_ID};
use crate::malformed::json_rpc_errors;
use crate::mcp::McpHandler;
use crate::replica::{EPISODE_HEADER, ReplicaName};
use crate::sessions::Endpoint;
use crate::task::Split;
use crate::viewer::AfterQuery;

/// Largest control-plane request body.
const CONTROL_BODY_LIMIT: usize = 64 * 1024;
/// Largest MCP request body (a notebook cell can be long).
pub(crate) const MCP_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// How the HTTP server is exposed.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// The bearer token every request but `/healthz` must carry.
    pub token: Option<String>,
    /// Browser origins allowed besides loopback ones (`http://localhost:5173`).
    pub allow_origins: Vec<String>,
    /// Whether only loopback `Host` names are accepted (DNS-rebinding protection). On when
    /// bound to loopback; a server bound beyond loopback requires a token instead.
    pub loopback_hosts_only: bool,
    /// Serve the only environment's MCP at `/mcp` too.
    pub mount_root_mcp: bool,
    /// Connection timeouts, the connection limit and the shutdown deadline.
    pub connections: ServeConfig,
    /// Serve legacy MCP sessions through rmcp alone, each with a worker of its own, instead of
    /// answering their plain requests directly ([`crate::legacy`]); for comparing the two.
    pub rmcp_sessions: bool,
}

/// Why the HTTP server would not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address without a token would expose the environments to anyone.
    #[error("refusing to listen on {0} without a token: pass --token TOKEN (or bind to 127.0.0.1)")]
    TokenRequired(SocketAddr),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// The server failed while running.
    #[error("HTTP server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// A JSON error response: `{"error": "sentence"}`.
fn json_error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

fn hub_error(error: HubError) -> Response {
    let status = match &error {
        HubError::UnknownEpisode(_)
        | HubError::NoEpisodeId
        | HubError::NoExport { .. }
        | HubError::NoImage { .. }
        | HubError::NoAnswer { .. } => StatusCode::NOT_FOUND,
        HubError::Misrouted { .. } => StatusCode::MISDIRECTED_REQUEST,
        HubError::Full(_)
        | HubError::EnvFull { .. }
        | HubError::Start(StartError::Unavailable(_)) => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::BAD_REQUEST,
    };
    json_error(status, error.to_string())
}

/// An MCP request's body, read whole for a direct path; past [`MCP_BODY_LIMIT`], the `413`
/// to answer instead.
pub(crate) async fn read_mcp_body(body: axum::body::Body) -> Result<Bytes, Response> {
    axum::body::to_bytes(body, MCP_BODY_LIMIT)
        .await
        .map_err(|_| {
            (
                StatusCode::PAYLOAD_TOO_LARGE,
                "Payload Too Large: the MCP request body is over the limit",
            )
                .into_response()
        })
}

/// One MCP endpoint: rmcp's service for `handler`'s scope, with its sessions kept in the hub's
/// table (endpoint `endpoint`), and the direct path for its legacy sessions unless `options`
/// asks for rmcp alone.
fn mcp_endpoint(
    hub: &Arc<Hub>,
    endpoint: Endpoint,
    handler: McpHandler,
    config: &StreamableHttpServerConfig,
    options: &HttpOptions,
) -> (
    StreamableHttpService<McpHandler, LocalSessionManager>,
    Option<Arc<LegacyDoor>>,
) {
    let manager = LocalSessionManager::default();
    let door = (!options.rmcp_sessions)
        .then(|| {
            LegacyDoor::new(
                hub.clone(),
                endpoint,
                handler.clone(),
                config,
                manager.session_config.sse_retry,
            )
        })
        .flatten()
        .map(Arc::new);
    let mut config = config.clone();
    if door.is_some() {
        config.session_store = Some(Arc::new(hub.sessions().for_endpoint(endpoint)));
    }
    let service = StreamableHttpService::new(move || Ok(handler.unbound()), manager.into(), config);
    (service, door)
}

/// The direct paths in front of the router: plain stateless tool calls and the plain requests
/// of legacy sessions, answered before routing and before rmcp's service is cloned for the
/// request. Everything else goes on through the router.
struct DirectPaths {
    hub: Arc<Hub>,
    /// The legacy direct path of each environment endpoint, by path (`/<env>/mcp`, `/mcp`).
    by_path: HashMap<String, Option<Arc<LegacyDoor>>>,
    /// The legacy direct path of `/episodes/{id}/mcp`.
    episodes: Option<Arc<LegacyDoor>>,
}

impl DirectPaths {
    /// The endpoint a path names, and the episode it names for `/episodes/{id}/mcp` (when
    /// that episode exists; otherwise the router answers).
    fn find(&self, path: &str) -> Option<(Option<&Arc<LegacyDoor>>, Option<EpisodeRoute>)> {
        if let Some(door) = self.by_path.get(path) {
            return Some((door.as_ref(), None));
        }
        let id = path.strip_prefix("/episodes/")?.strip_suffix("/mcp")?;
        self.hub.episode(id).ok()?;
        Some((self.episodes.as_ref(), Some(EpisodeRoute(id.into()))))
    }
}

async fn direct_paths(
    State(paths): State<Arc<DirectPaths>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some((door, mut route)) = paths.find(request.uri().path()) else {
        return next.run(request).await;
    };
    match header_route(&paths.hub, request.headers(), route.as_ref()) {
        Ok(None) => {}
        Ok(Some(named)) => {
            // rmcp's handler reads it from the request, as the URL's.
            request.extensions_mut().insert(named.clone());
            route = Some(named);
        }
        Err(refused) => return refused.into_response(),
    }
    // Sessions rmcp opens itself get its bare UUIDs: clients see them after the replica's
    // name, like those of the direct path, and rmcp sees them bare.
    let replica = paths.hub.settings().replica.as_ref();
    if let Some(name) = replica {
        unqualify_session(request.headers_mut(), name);
    }
    let mut response = if crate::stateless::is_candidate(&request) {
        crate::stateless::serve(&paths.hub, route.as_ref(), request, next).await
    } else {
        match door {
            Some(door) => door.serve(route.as_ref(), request, next).await,
            None => next.run(request).await,
        }
    };
    if let Some(name) = replica {
        qualify_session(response.headers_mut(), name);
    }
    response
}

/// `Mcp-Session-Id: NAME-<uuid>` of this replica as the bare UUID; another replica's is left
/// as it is (and is no session here).
fn unqualify_session(headers: &mut HeaderMap, replica: &ReplicaName) {
    let bare = headers
        .get(SESSION_ID)
        .and_then(|value| value.to_str().ok())
        .filter(|id| crate::replica::owner_of_session(id) == Some(replica.as_str()))
        .and_then(|id| HeaderValue::from_str(&id[replica.as_str().len() + 1..]).ok());
    if let Some(bare) = bare {
        headers.insert(SESSION_ID, bare);
    }
}

/// A bare `Mcp-Session-Id` UUID (of a session rmcp opened) after this replica's name.
fn qualify_session(headers: &mut HeaderMap, replica: &ReplicaName) {
    let named = headers
        .get(SESSION_ID)
        .and_then(|value| value.to_str().ok())
        .filter(|id| uuid::Uuid::try_parse(id).is_ok())
        .and_then(|id| HeaderValue::from_str(&format!("{replica}-{id}")).ok());
    if let Some(named) = named {
        headers.insert(SESSION_ID, named);
    }
}

/// The episode an MCP request names in its `Mcpgym-Episode` header (which a proxy routes on,
/// as it cannot read `_meta` in the body), when the URL names none; answered like the URL
/// `/episodes/{id}/mcp` when it is not held here. A URL naming another episode is refused.
fn header_route(
    hub: &Hub,
    headers: &HeaderMap,
    url: Option<&EpisodeRoute>,
) -> Result<Option<EpisodeRoute>, HeaderRefused> {
    let Some(value) = headers.get(EPISODE_HEADER) else {
        return Ok(None);
    };
    let id = match value.to_str() {
        Ok(id) if is_episode_id(id) => id,
        _ => return Err(HeaderRefused::NotAnId(format!("{value:?}"))),
    };
    if let Some(url) = url {
        return if *url.0 == *id {
            Ok(None)
        } else {
            Err(HeaderRefused::TwoEpisodes {
                url: url.0.to_string(),
                header: id.to_owned(),
            })
        };
    }
    match hub.episode(id) {
        Ok(_) => Ok(Some(EpisodeRoute(id.into()))),
        Err(error) => Err(HeaderRefused::Hub(error)),
    }
}

/// Why an `Mcpgym-Episode` header was refused.
#[derive(Debug, thiserror::Error)]
enum HeaderRefused {
    #[error(
        "the {EPISODE_HEADER} header must be an episode id (as POST /episodes answers it), not {0}"
    )]
    NotAnId(String),
    #[error(
        "the URL names episode {url:?} and the {EPISODE_HEADER} header {header:?}: name one episode"
    )]
    TwoEpisodes { url: String, header: String },
    #[error(transparent)]
    Hub(HubError),
}

impl IntoResponse for HeaderRefused {
    fn into_response(self) -> Response {
        match self {
            HeaderRefused::Hub(error) => hub_error(error),
            other => json_error(StatusCode::BAD_REQUEST, other.to_string()),
        }
    }
}

/// The whole HTTP application for a hub.
pub fn router(hub: Arc<Hub>, options: HttpOptions) -> Router {
    application(hub, options).0
}

/// The application, and what ends its MCP event streams (legacy sessions keep one open for
/// as long as the client lives; at shutdown they must end for connections to drain).
fn application(hub: Arc<Hub>, options: HttpOptions) -> (Router, impl Fn() + Send + 'static) {
    // Host and Origin are checked for every route by `guard`, so rmcp's own checks are off.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_json_response(true)
        .with_max_request_body_bytes(MCP_BODY_LIMIT);
    let streams = config.cancellation_token.clone();
    let end_streams = move || streams.cancel();
    let app = Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/episodes", axum::routing::post(create_episode))
        .route("/episodes/{id}", get(episode_status).delete(delete_episode))
        .route("/episodes/{id}/prompt", get(episode_prompt))
        .route("/episodes/{id}/trajectory", get(episode_trajectory))
        .route("/episodes/{id}/images/{name}", get(episode_image))
        .route("/episodes/{id}/calls/{key}", get(episode_answer))
        .route("/episodes/{id}/{document}", get(episode_export))
        .route("/tasks", get(tasks))
        .route("/tools", get(tools))
        .merge(crate::viewer::live_routes())
        .layer(DefaultBodyLimit::max(CONTROL_BODY_LIMIT))
        // A tool call carries what the model wrote (a long cell): MCP's limit.
        .merge(
            Router::new()
                .route("/episodes/{id}/call", axum::routing::post(episode_call))
                .layer(DefaultBodyLimit::max(MCP_BODY_LIMIT)),
        );

    let single_env = hub.envs().count() == 1;
    let mut mcp = Router::new();
    let mut by_path = HashMap::new();
    for (endpoint, env) in (0..).zip(hub.envs()) {
        let handler = McpHandler::for_env(hub.clone(), env.clone());
        let (service, door) = mcp_endpoint(&hub, endpoint, handler, &config, &options);
        let path = format!("/{}/mcp", env.name());
        mcp = mcp.nest_service(&path, service.clone());
        by_path.insert(path, door.clone());
        if options.mount_root_mcp && single_env {
            mcp = mcp.nest_service("/mcp", service);
            by_path.insert("/mcp".to_owned(), door);
        }
    }
    let episode_routes = McpHandler::for_episode_routes(hub.clone());
    let (service, episodes) = mcp_endpoint(&hub, Endpoint::MAX, episode_routes, &config, &options);
    let episode_mcp = Router::new()
        .route_service("/episodes/{id}/mcp", service)
        .layer(middleware::from_fn(json_rpc_errors))
        .layer(middleware::from_fn_with_state(
            hub.clone(),
            bind_episode_route,
        ));
    let mcp =
        mcp.layer(middleware::from_fn(json_rpc_errors))
            .layer(middleware::from_fn_with_state(
                hub.clone(),
                crate::doors::openenv::json_rpc,
            ));
    let direct = Arc::new(DirectPaths {
        hub: hub.clone(),
        by_path,
        episodes,
    });

    let routes = app
        .merge(crate::doors::routes(&hub))
        .merge(mcp)
        .merge(episode_mcp)
        .with_state(hub);
    // Around the router, not on its routes (which `Router::layer` does): a route's layers run
    // after routing, on a clone of the route's whole service made for each request, which the
    // direct paths exist to avoid.
    let direct = middleware::from_fn_with_state(direct, direct_paths).layer(routes);
    let guarded =
        middleware::from_fn_with_state(Arc::new(request_guard(&options)), guard).layer(direct);
    (Router::new().fallback_service(guarded), end_streams)
}

/// Binds to `addr`, prints the address, and serves until `shutdown` resolves; then closes
/// every episode.
///
/// Serves with one thread per core, each with its own single-threaded runtime and its own
/// listening socket on the same port (`SO_REUSEPORT`: the kernel spreads connections across
/// them). A small request then stays on one thread from accept to reply, with no cross-thread
/// wake-ups; the episodes themselves are shared by all threads. Call it from a current-thread
/// runtime: that thread is one of the serving threads.
///
/// Connections are held to [`HttpOptions::connections`] (timeouts, a limit shared by every
/// thread). At shutdown every thread stops accepting while the episodes close, which stops the
/// calls running on them; requests still running after
/// [`ServeConfig::shutdown_timeout`] lose their connections, so shutting down always ends.
pub async fn serve(
    hub: Arc<Hub>,
    addr: SocketAddr,
    mut options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let listener = bind(addr, &mut options)?;
    let local = listener.local_addr()?;
    // What a previous server left unfinished is taken up before the first request.
    let resumed = hub.resume().await?;
    if resumed != crate::hub::Resumed::default() {
        eprintln!(
            "mcpgym: took up the trajectory directory: {} episodes resumed, {} ended as aborted, {} finished ones readable",
            resumed.resumed, resumed.aborted, resumed.finished
        );
    }
    hub.spawn_reaper();
    let connections = Connections::new(options.connections.clone());
    let (app, end_streams) = application(hub.clone(), options);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut workers = Vec::new();
    for index in 1..threads {
        let (app, mut stopped, connections) = (app.clone(), stopped.clone(), connections.clone());
        let worker = std::thread::Builder::new()
            .name(format!("mcpgym-http-{index}"))
            .spawn(move || -> std::io::Result<()> {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                runtime.block_on(async move {
                    let listener = reuseport_listener(local)?;
                    let until_stopped = async move {
                        let _ = stopped.wait_for(|stop| *stop).await;
                    };
                    connections.serve(listener, app, until_stopped).await
                })
            })?;
        workers.push(worker);
    }
    // The line tests and tools wait for; stdout stays free.
    eprintln!("mcpgym: listening on http://{local}");
    let (mut main_stopped, mut closing_stopped) = (stopped.clone(), stopped);
    let stop_all = async move {
        tokio::select! {
            () = shutdown => {}
            _ = main_stopped.wait_for(|stop| *stop) => {}
        }
        let _ = stop.send(true);
    };
    // Closing the episodes as shutdown begins ends the calls running on them, so their
    // requests answer within the grace period instead of being cut off at its end.
    let closing = async {
        let _ = closing_stopped.wait_for(|stop| *stop).await;
        end_streams();
        hub.close_all().await;
    };
    let (served, ()) = tokio::join!(connections.serve(listener, app, stop_all), closing);
    for worker in workers {
        match tokio::task::spawn_blocking(move || worker.join()).await {
            Ok(Ok(Err(error))) => tracing::error!(%error, "an HTTP thread failed"),
            Ok(Err(_)) | Err(_) => tracing::error!("an HTTP thread panicked"),
            Ok(Ok(Ok(()))) => {}
        }
    }
    // Episodes started by requests that were still running when the first close began.
    hub.close_all().await;
    served.map_err(ServeError::from)
}

/// The listening socket for `addr`, refusing an address beyond loopback without a token, and
/// answering loopback Host names only when bound to loopback.
pub(crate) fn bind(
    addr: SocketAddr,
    options: &mut HttpOptions,
) -> Result<tokio::net::TcpListener, ServeError> {
    if !addr.ip().is_loopback() && options.token.is_none() {
        return Err(ServeError::TokenRequired(addr));
    }
    options.loopback_hosts_only = addr.ip().is_loopback();
    reuseport_listener(addr).map_err(|source| ServeError::Bind { addr, source })
}

/// A listening socket that other threads may also bind to the same port.
pub(crate) fn reuseport_listener(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    #[cfg(unix)]
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// Host, Origin and token checks, for every route. A viewer page opened with the token in its
/// URL is answered with the token cookie instead ([`crate::viewer::token_in_url`]).
pub(crate) async fn guard(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    if guard.check_host_and_origin(request.headers()).is_ok()
        && let Some(redirect) = crate::viewer::token_in_url(&guard, &request)
    {
        return redirect;
    }
    match guard.check(request.method(), request.uri().path(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => {
            let mut response = json_error(refusal.status(), refusal.to_string());
            if let Some(challenge) = refusal.challenge() {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, challenge);
            }
            response
        }
    }
}

/// The checks `options` ask for: Host names when bound to loopback, browser origins always,
/// the token on every route but `/healthz`.
pub(crate) fn guard_layer(options: &HttpOptions) -> Arc<Guard> {
    Arc::new(request_guard(options))
}

fn request_guard(options: &HttpOptions) -> Guard {
    Guard::new(options.token.clone())
        .loopback_hosts_only(options.loopback_hosts_only)
        .origins(Origins::Listed {
            also: options.allow_origins.clone(),
            option: Some("--allow-origin"),
        })
        .open_route(None, "/healthz")
}

/// For `/episodes/{id}/mcp`: 404 for an unknown episode, else tells the handler which one.
async fn bind_episode_route(
    State(hub): State<Arc<Hub>>,
    mut request: Request,
    next: Next,
) -> Response {
    let id = request
        .uri()
        .path()
        .strip_prefix("/episodes/")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or("")
        .to_owned();
    if let Err(error) = hub.episode(&id) {
        return hub_error(error);
    }
    request.extensions_mut().insert(EpisodeRoute(id.into()));
    next.run(request).await
}

async fn healthz(State(hub): State<Arc<Hub>>) -> Response {
    let mut health = json!({ "status": "ok", "episodes": hub.live_episodes() });
    // Which replica answered, when several serve behind one proxy.
    if let Some(name) = &hub.settings().replica {
        health["replica"] = json!(name.as_str());
    }
    Json(health).into_response()
}

async fn metrics(State(hub): State<Arc<Hub>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        hub.metrics().render(hub.held()),
    )
        .into_response()
}

async fn create_episode(
    State(hub): State<Arc<Hub>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            return json_error(
                rejection.status(),
                format!(
                    "cannot read the request body: {rejection}; send at most {CONTROL_BODY_LIMIT} bytes of JSON"
                ),
            );
        }
    };
    let request: CreateEpisode = if body.iter().all(u8::is_ascii_whitespace) {
        CreateEpisode::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(request) => request,
            Err(error) => {
                return json_error(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "the body is not a valid episode request ({error}); send JSON like {{\"env\": \"wordle\", \"seed\": 7}}"
                    ),
                );
            }
        }
    };
    match hub.create(request).await {
        Ok(created) => (StatusCode::CREATED, Json(created)).into_response(),
        Err(error) => hub_error(error),
    }
}

async fn episode_status(State(hub): State<Arc<Hub>>, Path(id): Path<String>) -> Response {
    match hub.status(&id).await {
        Ok(status) => Json(status).into_response(),
        Err(error) => hub_error(error),
    }
}

/// `POST /episodes/{id}/call` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallRequest {
    tool: String,
    #[serde(default)]
    arguments: Option<rmcp::model::JsonObject>,
}

/// The header a control-plane call carries its idempotency key in.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

async fn episode_call(
    State(hub): State<Arc<Hub>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let key = match headers.get(IDEMPOTENCY_KEY).map(HeaderValue::to_str) {
        None => None,
        Some(Ok(key)) => Some(key),
        Some(Err(_)) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                "the Idempotency-Key header is not visible ASCII; send 1 to 128 visible ASCII characters (a UUID is a good key)",
            );
        }
    };
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            return json_error(
                rejection.status(),
                format!(
                    "cannot read the request body: {rejection}; send at most {MCP_BODY_LIMIT} bytes of JSON"
                ),
            );
        }
    };
    let request: CallRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(error) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                format!(
                    "the body is not a valid tool call ({error}); send JSON like {{\"tool\": \"guess\", \"arguments\": {{\"word\": \"crane\"}}}}"
                ),
            );
        }
    };
    match hub
        .step_keyed(
            &id,
            &request.tool,
            request.arguments.unwrap_or_default(),
            key,
        )
        .await
    {
        Ok(step) => Json(step).into_response(),
        Err(error) => hub_error(error),
    }
}

/// What the call with this idempotency key answered (after a call still running ends).
async fn episode_answer(
    State(hub): State<Arc<Hub>>,
    Path((id, key)): Path<(String, String)>,
) -> Response {
    match hub.answer(&id, &key).await {
        Ok(step) => Json(step).into_response(),
        Err(error) => hub_error(error),
    }
}

async fn episode_prompt(State(hub): State<Arc<Hub>>, Path(id): Path<String>) -> Response {
    match hub.prompt(&id).await {
        Ok(prompt) => Json(json!({ "prompt": prompt })).into_response(),
        Err(error) => hub_error(error),
    }
}

async fn episode_trajectory(
    State(hub): State<Arc<Hub>>,
    Path(id): Path<String>,
    query: Result<Query<AfterQuery>, QueryRejection>,
) -> Response {
    let after = match AfterQuery::turn(query) {
        Ok(after) => after,
        Err(message) => return json_error(StatusCode::BAD_REQUEST, message),
    };
    match hub.trajectory(&id, after).await {
        Ok(lines) => ([(header::CONTENT_TYPE, "application/x-ndjson")], lines).into_response(),
        Err(error) => hub_error(error),
    }
}

async fn episode_export(
    State(hub): State<Arc<Hub>>,
    Path((id, document)): Path<(String, String)>,
) -> Response {
    match hub.export(&id, &document).await {
        Ok(export) => ([(header::CONTENT_TYPE, export.content_type)], export.body).into_response(),
        Err(error) => hub_error(error),
    }
}

async fn episode_image(
    State(hub): State<Arc<Hub>>,
    Path((id, name)): Path<(String, String)>,
) -> Response {
    match hub.image(&id, &name).await {
        Ok((mime_type, bytes)) => (
            [
                (header::CONTENT_TYPE, mime_type),
                (header::CACHE_CONTROL, "private, max-age=3600"),
            ],
            bytes,
        )
            .into_response(),
        Err(error) => hub_error(error),
    }
}

async fn delete_episode(State(hub): State<Arc<Hub>>, Path(id): Path<String>) -> Response {
    match hub.delete(&id).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(error) => hub_error(error),
    }
}

/// `GET /tasks` query: `offset` and `limit` page through splits of generated families.
#[derive(Debug, Deserialize)]
struct TasksQuery {
    env: Option<String>,
    split: Option<Split>,
    offset: Option<u64>,
    limit: Option<u64>,
}

async fn tasks(
    State(hub): State<Arc<Hub>>,
    query: Result<Query<TasksQuery>, QueryRejection>,
) -> Response {
    let Query(query) = match query {
        Ok(query) => query,
        Err(rejection) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                format!(
                    "{}; use ?split=train or ?split=test (and env=NAME when several environments are hosted, offset=N&limit=N to page)",
                    rejection.body_text()
                ),
            );
        }
    };
    let env = match hub.env(query.env.as_deref()) {
        Ok(env) => env,
        Err(error) => return hub_error(error),
    };
    let split = query.split.unwrap_or(Split::Train);
    let limit = query.limit.unwrap_or(LISTED_TASKS);
    if limit > LISTED_TASKS {
        return json_error(
            StatusCode::BAD_REQUEST,
            format!(
                "limit {limit} is too large: ask for at most {LISTED_TASKS} tasks at a time and page with offset"
            ),
        );
    }
    let tasks = env.tasks();
    let offset = query.offset.unwrap_or(0);
    let families: Vec<Value> = tasks
        .families()
        .iter()
        .map(|family| {
            let range = |split| {
                let range = family.range(split);
                json!([range.start, range.end])
            };
            // Instance n is of level n % 3 in a family with levels.
            let levels: Vec<&str> = if family.levelled {
                mcpgym_env::generate::Level::ALL
                    .iter()
                    .map(|l| l.name())
                    .collect()
            } else {
                Vec::new()
            };
            json!({
                "name": family.name,
                "train": range(Split::Train),
                "test": range(Split::Test),
                "levels": levels,
            })
        })
        .collect();
    Json(json!({
        "env": env.name(),
        "split": split,
        "total": tasks.len(split),
        "offset": offset,
        "tasks": tasks.slice(split, offset, offset.saturating_add(limit)),
        "families": families,
    }))
    .into_response()
}

/// `GET /tools` query.
#[derive(Debug, Deserialize)]
struct ToolsQuery {
    env: Option<String>,
}

async fn tools(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    query: Result<Query<ToolsQuery>, QueryRejection>,
) -> Response {
    // ORS clients call a bare `/tools` with a session id: they get ORS's shape.
    if headers.contains_key("x-session-id") {
        return crate::doors::ors::bare_tools(&hub, &headers);
    }
    let Query(query) = match query {
        Ok(query) => query,
        Err(rejection) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                format!("{}; use ?env=NAME", rejection.body_text()),
            );
        }
    };
    match hub.env(query.env.as_deref()) {
        Ok(env) => Json(json!({ "env": env.name(), "tools": env.tools() })).into_response(),
        Err(error) => hub_error(error),
    }
}

#[cfg(test)]
mod tests;
