//! The E2B-compatible HTTP service: control plane and data plane on one port.
//!
//! | route | what |
//! |---|---|
//! | `POST /sandboxes`, `GET /sandboxes`, `GET /v2/sandboxes` | create (201), list |
//! | `GET`/`DELETE /sandboxes/{id}` | detail; kill (204, 404) |
//! | `POST /sandboxes/{id}/timeout`, `POST /sandboxes/{id}/connect` | TTL from now; reconnect |
//! | `POST /sandboxes/{id}/refreshes` | keep alive for `duration` more seconds |
//!
//! The newer SDKs' `POST /v2/sandboxes` and `POST /v2/sandboxes/{id}/connect` are the same.
//! | `GET /health` | health |
//!
//! A request that names a sandbox, by the headers `E2b-Sandbox-Id` and `E2b-Sandbox-Port` or
//! by a Host of the form `<port>-<sandboxID>.<domain>`, goes to that sandbox instead: port
//! 49999 is the code interpreter (`/execute`, `/contexts`, `/health`), 49983 envd (`/files`,
//! `process.Process/{Start,List,SendSignal}`, `filesystem.Filesystem/{ListDir,Stat,MakeDir,
//! Move,Remove}`, `/health`). Both are served on the one port; only `/health` differs by port.
//!
//! Not served: pause/resume, snapshots, metrics and logs, process stdin and PTYs, file
//! watching, and `/tmp` over `/files` (each process of a sandbox has its own private `/tmp`).
//!
//! Every error is JSON: `{"code": <status>, "message": "..."}` (Connect's shape on the
//! Connect-RPC routes).

pub(crate) mod api_error;
mod control;
mod envd;
mod interpreter;
mod pool;
mod registry;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use mcpgym_serve::{Connections, Guard, Origins, Refusal, ServeConfig, constant_time_eq};
use tower::ServiceExt;

use api_error::ApiError;
use registry::{Registry, Sandbox};

pub use mcpgym_e2b::{ENVD_PORT, INTERPRETER_PORT};
use mcpgym_e2b::{headers as e2b_headers, paths, routing};

/// How the service runs. [`ServiceConfig::default`] gives working values.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Host directory holding one folder per sandbox (created; removed at shutdown).
    pub root_dir: PathBuf,
    /// Jailed kernels kept started ahead of demand, at least.
    pub pool_size: usize,
    /// Most kernels kept started ahead of demand: after a burst of creates the pool grows to
    /// the burst's size for the next ten minutes, up to this.
    pub pool_max: usize,
    /// Longest a kernel may take to start, and a create may wait for one when the pool is
    /// empty; then the create fails with 503 and a sentence saying why.
    pub start_timeout: Duration,
    /// Longest a cell or command may run before the server interrupts it (then kills and
    /// restarts the kernel if it does not stop).
    pub execution_timeout: Duration,
    /// Most sandboxes alive at once; further creates get 429.
    pub max_sandboxes: usize,
    /// Longest lifetime a create or set-timeout may ask for.
    pub max_timeout: Duration,
    /// Largest JSON request body (code cells, control plane).
    pub max_request_bytes: usize,
    /// Largest file upload.
    pub max_file_bytes: usize,
    /// When set, every request but `GET /health` must carry it (as `X-API-Key` or a bearer
    /// token), or, on the data plane, the sandbox's own `X-Access-Token`.
    pub token: Option<String>,
    /// Connection timeouts, the connection limit and the shutdown deadline.
    pub http: ServeConfig,
    /// Resource limits and quotas of every sandbox's jails.
    pub limits: crate::jail::Limits,
    /// The Python every sandbox's kernels and commands run on.
    pub runtime: crate::Runtime,
}

impl Default for ServiceConfig {
    /// A pool of 2 (up to 128 after bursts), 60 s to start, 300 s per execution, 100 sandboxes, 24 h lifetimes, 4 MiB requests,
    /// 100 MiB files, under `$TMPDIR/mcpgym-sandbox-<pid>`, on Debian's Python; connections
    /// as [`ServeConfig::default`] says.
    fn default() -> Self {
        ServiceConfig {
            root_dir: std::env::temp_dir().join(format!("mcpgym-sandbox-{}", std::process::id())),
            pool_size: 2,
            pool_max: 128,
            start_timeout: Duration::from_secs(60),
            execution_timeout: Duration::from_secs(300),
            max_sandboxes: 100,
            max_timeout: Duration::from_secs(24 * 3600),
            max_request_bytes: 4 << 20,
            max_file_bytes: 100 << 20,
            token: None,
            http: ServeConfig::default(),
            limits: crate::jail::Limits::default(),
            runtime: crate::Runtime::system(),
        }
    }
}

/// Why the service would not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address without a token would hand sandboxes to anyone.
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
    /// The sandbox directory could not be created.
    #[error("cannot create the sandbox directory {path}: {source}")]
    RootDir {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The server failed while running.
    #[error("HTTP server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Which port of a sandbox a data-plane request is for.
#[derive(Debug, Clone, Copy)]
struct DataPort(u16);

struct App {
    registry: Arc<Registry>,
    control: Router,
    data: Router,
    guard: Guard,
}

/// Serves on `addr` until `shutdown` resolves, then kills every sandbox. Prints
/// `mcpgym: listening on http://ADDR` to stderr once accepting.
pub async fn serve(
    addr: SocketAddr,
    config: ServiceConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let bound = Listening::bind(addr, config).await?;
    // The line tests and tools wait for; stdout stays free.
    eprintln!("mcpgym: listening on http://{}", bound.local_addr());
    bound.serve(shutdown).await
}

/// A bound service that is not serving yet: how a process embeds the service on a port of
/// its own choosing (`127.0.0.1:0`) and learns the address before handing it to clients.
pub struct Listening {
    listener: tokio::net::TcpListener,
    local: SocketAddr,
    registry: Arc<Registry>,
    loopback_only: bool,
}

impl Listening {
    /// Checks the configuration, creates the sandbox directory and binds `addr`. The warm
    /// pool starts filling at once.
    pub async fn bind(addr: SocketAddr, config: ServiceConfig) -> Result<Listening, ServeError> {
        if !addr.ip().is_loopback() && config.token.is_none() {
            return Err(ServeError::TokenRequired(addr));
        }
        tokio::fs::create_dir_all(&config.root_dir)
            .await
            .map_err(|source| ServeError::RootDir {
                path: config.root_dir.clone(),
                source,
            })?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let local = listener.local_addr()?;
        let loopback_only = addr.ip().is_loopback() && config.token.is_none();
        let registry = Registry::new(Arc::new(config));
        registry.start_background();
        Ok(Listening {
            listener,
            local,
            registry,
            loopback_only,
        })
    }

    /// The address clients reach (the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Serves until `shutdown` resolves; then kills every sandbox and warm kernel and removes
    /// the sandbox directory.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let Listening {
            listener,
            registry,
            loopback_only,
            ..
        } = self;
        let root = registry.config().root_dir.clone();
        let connections = Connections::new(registry.config().http.clone());
        let app = router(registry.clone(), loopback_only);
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let signal = async move {
            shutdown.await;
            let _ = stop.send(true);
        };
        let mut accepting = stopped.clone();
        let until = async move {
            let _ = accepting.wait_for(|stop| *stop).await;
        };
        // Killing the sandboxes as shutdown begins ends their streamed responses, so the
        // requests in flight finish within the grace period instead of running to their
        // deadline; the connections' own deadline covers clients that never finish a request.
        let mut closing_stopped = stopped;
        let closing = async {
            let _ = closing_stopped.wait_for(|stop| *stop).await;
            registry.close_all().await;
        };
        let (served, (), ()) =
            tokio::join!(connections.serve(listener, app, until), closing, signal);
        registry.close_all().await;
        registry::remove_root(root).await;
        served.map_err(ServeError::from)
    }
}

/// The whole application: control plane, and the data plane of every sandbox.
/// `loopback_only`: accept only loopback Host names and Origins (DNS-rebinding protection for
/// a service without a token).
fn router(registry: Arc<Registry>, loopback_only: bool) -> Router {
    let config = registry.config().clone();
    let control = Router::new()
        .route("/health", get(control::health))
        .route(paths::SANDBOXES, post(control::create).get(control::list))
        .route("/v2/sandboxes", post(control::create).get(control::list))
        .route("/sandboxes/{id}", get(control::get).delete(control::kill))
        .route("/sandboxes/{id}/timeout", post(control::set_timeout))
        .route("/sandboxes/{id}/connect", post(control::connect))
        .route("/v2/sandboxes/{id}/connect", post(control::connect))
        .route("/sandboxes/{id}/refreshes", post(control::refresh))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(64 * 1024))
        .with_state(registry.clone());
    let files = Router::new()
        .route(
            paths::FILES,
            get(envd::files::read).post(envd::files::write),
        )
        .layer(DefaultBodyLimit::max(config.max_file_bytes));
    let data = Router::new()
        .route("/health", get(data_health))
        .route(paths::EXECUTE, post(interpreter::execute))
        .route(
            paths::CONTEXTS,
            post(interpreter::create_context).get(interpreter::list_contexts),
        )
        .route(
            "/contexts/{id}",
            axum::routing::delete(interpreter::delete_context),
        )
        .route("/contexts/{id}/restart", post(interpreter::restart_context))
        .route(paths::PROCESS_START, post(envd::process::start))
        .route(paths::PROCESS_LIST, post(envd::process::list))
        .route(paths::PROCESS_SEND_SIGNAL, post(envd::process::send_signal))
        .route(
            "/filesystem.Filesystem/ListDir",
            post(envd::filesystem::list_dir),
        )
        .route("/filesystem.Filesystem/Stat", post(envd::filesystem::stat))
        .route(
            "/filesystem.Filesystem/MakeDir",
            post(envd::filesystem::make_dir),
        )
        .route(
            "/filesystem.Filesystem/Move",
            post(envd::filesystem::move_entry),
        )
        .route(
            "/filesystem.Filesystem/Remove",
            post(envd::filesystem::remove),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(config.max_request_bytes))
        .merge(files);
    let app = Arc::new(App {
        guard: request_guard(config.token.clone(), loopback_only),
        registry,
        control,
        data,
    });
    Router::new().fallback(dispatch).with_state(app)
}

/// The Host, Origin and token checks: without a token, a service bound to loopback answers
/// loopback names and pages only (a token keeps foreign pages out instead); `GET /health` of
/// the control plane needs no token.
fn request_guard(token: Option<String>, loopback_only: bool) -> Guard {
    Guard::new(token)
        .loopback_hosts_only(loopback_only)
        .origins(if loopback_only {
            Origins::loopback()
        } else {
            Origins::Any
        })
        .open_route(Some(Method::GET), "/health")
}

/// Sends a request to the control plane or to the sandbox it names.
async fn dispatch(State(app): State<Arc<App>>, mut request: Request) -> Response {
    if let Err(refusal) = app.guard.check_host_and_origin(request.headers()) {
        return refused(&refusal, refusal.to_string());
    }
    let Some((id, port)) = data_plane_target(request.headers()) else {
        if let Err(refusal) =
            app.guard
                .check_token(request.method(), request.uri().path(), request.headers())
        {
            return refused(&refusal, refusal.to_string());
        }
        return app.control.clone().oneshot(request).await.into_response();
    };
    // Without any credential, refuse before the lookup: a 404 would tell who may not know
    // whether a sandbox id exists.
    if app.guard.has_token()
        && !app.guard.carries_token(request.headers())
        && !request.headers().contains_key(e2b_headers::ACCESS_TOKEN)
    {
        return data_plane_unauthorized();
    }
    // E2B's proxy answers 502 for a sandbox that is gone, and its SDK reads exactly that as
    // "not running" (for instance to say a sandbox was killed during a request).
    let sandbox = match app.registry.get(&id) {
        Ok(sandbox) => sandbox,
        Err(error) => {
            return ApiError::new(StatusCode::BAD_GATEWAY, error.message).into_response();
        }
    };
    if app.guard.has_token()
        && !app.guard.carries_token(request.headers())
        && !carries_access_token(request.headers(), &sandbox)
    {
        return data_plane_unauthorized();
    }
    if port != INTERPRETER_PORT && port != ENVD_PORT {
        return ApiError::new(
            StatusCode::BAD_GATEWAY,
            format!(
                "nothing listens on port {port} of sandbox {id}: this service serves the code interpreter ({INTERPRETER_PORT}) and envd ({ENVD_PORT})"
            ),
        )
        .into_response();
    }
    request.extensions_mut().insert(sandbox);
    request.extensions_mut().insert(DataPort(port));
    app.data.clone().oneshot(request).await.into_response()
}

/// `(sandbox id, port)` from the E2B headers or a `<port>-<id>.<domain>` Host.
fn data_plane_target(headers: &HeaderMap) -> Option<(String, u16)> {
    let value = |name: &str| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .next_back()
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    if let Some(id) = value(e2b_headers::SANDBOX_ID) {
        let port = value(e2b_headers::SANDBOX_PORT)
            .and_then(|p| p.parse().ok())
            .unwrap_or(INTERPRETER_PORT);
        return Some((id.to_owned(), port));
    }
    let host = headers.get(header::HOST)?.to_str().ok()?;
    routing::parse_sandbox_host(host).map(|(id, port)| (id.to_owned(), port))
}

fn carries_access_token(headers: &HeaderMap, sandbox: &Sandbox) -> bool {
    headers
        .get(e2b_headers::ACCESS_TOKEN)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|given| constant_time_eq(given, &sandbox.access_token))
}

/// A refusal of the guard's, as an E2B error (with its `WWW-Authenticate` challenge).
fn refused(refusal: &Refusal, message: String) -> Response {
    let mut response = ApiError::new(refusal.status(), message).into_response();
    if let Some(challenge) = refusal.challenge() {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// The data plane also takes the sandbox's own access token.
fn data_plane_unauthorized() -> Response {
    let refusal = Refusal::Token;
    refused(
        &refusal,
        format!("{refusal}, or the sandbox's envdAccessToken as X-Access-Token"),
    )
}

/// `GET /health` of a sandbox: the code interpreter says "OK", envd answers 204.
async fn data_health(Extension(DataPort(port)): Extension<DataPort>) -> Response {
    if port == ENVD_PORT {
        envd::health().await
    } else {
        interpreter::health().await
    }
}

async fn not_found(request: Request) -> Response {
    ApiError::not_found(format!(
        "no route {} {}: see the E2B API (control plane: /sandboxes; code interpreter: /execute, /contexts; envd: /files, /process.Process/Start)",
        request.method(),
        request.uri().path()
    ))
    .into_response()
}

async fn method_not_allowed(request: Request) -> Response {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} is not allowed on {}",
            request.method(),
            request.uri().path()
        ),
    )
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn routes_by_headers_then_host() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:3000"));
        assert_eq!(data_plane_target(&headers), None);
        headers.insert(
            header::HOST,
            HeaderValue::from_static("49983-iabc.localhost:3000"),
        );
        assert_eq!(data_plane_target(&headers), Some(("iabc".into(), 49983)));
        headers.insert("e2b-sandbox-id", HeaderValue::from_static("ixyz"));
        headers.insert("e2b-sandbox-port", HeaderValue::from_static("49999"));
        assert_eq!(data_plane_target(&headers), Some(("ixyz".into(), 49999)));
    }
}
