//! Live sandboxes: creation (from the warm pool when possible), lookup, TTLs and the reaper,
//! and the contexts (one kernel each) of every sandbox.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::http::StatusCode;
use serde_json::{Map, Value};
use tokio::sync::watch;

use crate::jail::{HostUser, JailConfig, UidLease};
use crate::kernel::{ExecutionStatus, Kernel, KernelConfig, Language, kernel_for};

use super::ServiceConfig;
use super::api_error::ApiError;
use super::pool::{Pool, Warm, start_kernel};

/// What a create request asks for, validated.
#[derive(Debug, Clone)]
pub(crate) struct CreateSpec {
    pub(crate) template_id: String,
    pub(crate) timeout: Duration,
    pub(crate) metadata: Map<String, Value>,
    pub(crate) allow_network: bool,
    /// Environment of every process of the sandbox (kernels and commands).
    pub(crate) env_vars: Vec<(String, String)>,
}

/// All sandboxes of the service.
pub(crate) struct Registry {
    sandboxes: Mutex<HashMap<String, Arc<Sandbox>>>,
    /// Creates under way: each holds one of the `max_sandboxes` places from the moment it is
    /// accepted, so concurrent creates cannot all pass the check before any is counted.
    /// Changed only under the `sandboxes` lock.
    starting: Arc<AtomicUsize>,
    pool: Arc<Pool>,
    config: Arc<ServiceConfig>,
}

impl Registry {
    pub(crate) fn new(config: Arc<ServiceConfig>) -> Arc<Registry> {
        let pool = Pool::new(config.clone());
        Arc::new(Registry {
            sandboxes: Mutex::new(HashMap::new()),
            starting: Arc::new(AtomicUsize::new(0)),
            pool,
            config,
        })
    }

    pub(crate) fn config(&self) -> &ServiceConfig {
        &self.config
    }

    /// Starts the pool's refiller and the TTL reaper.
    pub(crate) fn start_background(self: &Arc<Self>) {
        self.pool.spawn_refiller();
        let registry = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(500));
            loop {
                tick.tick().await;
                let Some(registry) = registry.upgrade() else {
                    return;
                };
                let now = SystemTime::now();
                let expired: Vec<String> = registry
                    .sandboxes
                    .lock()
                    .expect("registry lock")
                    .values()
                    .filter(|s| s.end_at() <= now)
                    .map(|s| s.id.clone())
                    .collect();
                for id in expired {
                    tracing::debug!(sandbox = %id, "timeout passed; killing");
                    registry.kill(&id).await;
                }
            }
        });
    }

    /// Creates a sandbox: a warm kernel when one is ready and no network is asked for,
    /// else a kernel started now.
    pub(crate) async fn create(&self, spec: CreateSpec) -> Result<Arc<Sandbox>, ApiError> {
        // Held until the sandbox is in the map (or the create failed).
        let (_place, demand) = self.reserve()?;
        // Warm kernels have no network: a sandbox that asks for it gets a kernel started now.
        let warm = if spec.allow_network {
            start_kernel(&self.config, spec.allow_network)
                .await
                .map_err(|error| {
                    ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!("cannot start a sandbox kernel: {error}"),
                    )
                })?
        } else {
            self.pool
                .take(self.config.start_timeout, demand)
                .await
                .map_err(|starved| starved_error(&starved))?
        };
        let sandbox = Arc::new(Sandbox::new(warm, spec, self.config.clone()));
        if !sandbox.env_vars.is_empty() {
            // The warm kernel started before anyone knew the variables: set them now.
            let default = sandbox.default_context()?;
            let prepared = match default.kernel.lock().await.as_mut() {
                Some(kernel) => prepare_kernel(kernel, crate::jail::HOME, &sandbox.env_vars).await,
                None => Ok(()),
            };
            if let Err(error) = prepared {
                sandbox.shutdown().await;
                return Err(error);
            }
        }
        self.sandboxes
            .lock()
            .expect("registry lock")
            .insert(sandbox.id.clone(), sandbox.clone());
        tracing::debug!(sandbox = %sandbox.id, root = %sandbox.root.display(), "sandbox created");
        Ok(sandbox)
    }

    /// Takes one of the `max_sandboxes` places, or says why not. Checking and counting happen
    /// under one lock, so N concurrent creates against a limit of M < N get exactly M places.
    /// With the place, the sandboxes running and being created, this one included: the demand
    /// the pool sizes itself for.
    fn reserve(&self) -> Result<(Place, usize), ApiError> {
        let max = self.config.max_sandboxes;
        let sandboxes = self.sandboxes.lock().expect("registry lock");
        let starting = self.starting.load(Ordering::SeqCst);
        if sandboxes.len() + starting >= max {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "at most {max} sandboxes may run at once on this service ({} running, {starting} starting); kill one (DELETE /sandboxes/ID) or start the service with a larger --max-sandboxes",
                    sandboxes.len()
                ),
            ));
        }
        self.starting.fetch_add(1, Ordering::SeqCst);
        Ok((Place(self.starting.clone()), sandboxes.len() + starting + 1))
    }

    pub(crate) fn get(&self, id: &str) -> Result<Arc<Sandbox>, ApiError> {
        self.sandboxes
            .lock()
            .expect("registry lock")
            .get(id)
            .cloned()
            .ok_or_else(|| ApiError::unknown_sandbox(id))
    }

    pub(crate) fn list(&self) -> Vec<Arc<Sandbox>> {
        let mut all: Vec<_> = self
            .sandboxes
            .lock()
            .expect("registry lock")
            .values()
            .cloned()
            .collect();
        all.sort_by_key(|s| s.started_at);
        all
    }

    /// Warm kernels ready to be handed out.
    pub(crate) fn warm_kernels(&self) -> usize {
        self.pool.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.sandboxes.lock().expect("registry lock").len()
    }

    /// Kills a sandbox and everything in it. `false` if there was none by that id.
    pub(crate) async fn kill(&self, id: &str) -> bool {
        let removed = self.sandboxes.lock().expect("registry lock").remove(id);
        match removed {
            Some(sandbox) => {
                sandbox.shutdown().await;
                true
            }
            None => false,
        }
    }

    /// Kills every sandbox and warm kernel (service shutdown).
    pub(crate) async fn close_all(&self) {
        let all: Vec<String> = self
            .sandboxes
            .lock()
            .expect("registry lock")
            .keys()
            .cloned()
            .collect();
        for id in all {
            self.kill(&id).await;
        }
        self.pool.drain().await;
    }
}

/// A place reserved by [`Registry::reserve`], given back when dropped.
struct Place(Arc<AtomicUsize>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One context: a kernel of its own, in the sandbox's home.
pub(crate) struct Context {
    pub(crate) id: String,
    pub(crate) language: Language,
    pub(crate) cwd: String,
    /// `None` before a lazily started context's first cell, and once the context was deleted
    /// or the sandbox killed ([`Context::deleted`] tells which). The lock also queues
    /// executions of this context in arrival order (tokio's mutex is fair).
    pub(crate) kernel: tokio::sync::Mutex<Option<Kernel>>,
    deleted: std::sync::atomic::AtomicBool,
}

impl Context {
    fn new(language: Language, cwd: String, kernel: Option<Kernel>) -> Arc<Context> {
        Arc::new(Context {
            id: uuid::Uuid::new_v4().to_string(),
            language,
            cwd,
            kernel: tokio::sync::Mutex::new(kernel),
            deleted: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Whether the context was deleted or its sandbox killed.
    pub(crate) fn deleted(&self) -> bool {
        self.deleted.load(Ordering::SeqCst)
    }

    /// Shuts its kernel down for good.
    async fn close(&self) {
        self.deleted.store(true, Ordering::SeqCst);
        if let Some(kernel) = self.kernel.lock().await.take() {
            kernel.shutdown().await;
        }
    }
}

/// A command started with `process.Process/Start` that has not ended yet.
pub(crate) struct RunningCommand {
    /// The `ProcessConfig` it was started with, as sent.
    pub(crate) config: Value,
    pub(crate) tag: Option<String>,
    /// Fires to kill it (`process.Process/SendSignal`).
    pub(crate) kill: Arc<tokio::sync::Notify>,
}

/// One sandbox.
pub(crate) struct Sandbox {
    pub(crate) id: String,
    pub(crate) template_id: String,
    pub(crate) access_token: String,
    pub(crate) metadata: Map<String, Value>,
    pub(crate) started_at: SystemTime,
    end_at: Mutex<SystemTime>,
    /// Host directory holding everything of the sandbox.
    pub(crate) root: PathBuf,
    /// Host directory bound at `/home/user` in all its jails.
    pub(crate) home: PathBuf,
    pub(crate) user: Option<HostUser>,
    pub(crate) allow_network: bool,
    pub(crate) env_vars: Vec<(String, String)>,
    contexts: Mutex<Vec<Arc<Context>>>,
    /// Running commands by pid: what started them, and how to kill them.
    pub(crate) commands: Mutex<HashMap<u32, RunningCommand>>,
    closed: watch::Sender<bool>,
    config: Arc<ServiceConfig>,
    _lease: Option<UidLease>,
}

impl Sandbox {
    fn new(warm: Warm, spec: CreateSpec, config: Arc<ServiceConfig>) -> Self {
        let now = SystemTime::now();
        let home = warm.kernel.home_dir();
        let user = warm.kernel.config().jail.run_as;
        let default = Context::new(
            Language::Python,
            crate::jail::HOME.to_owned(),
            Some(warm.kernel),
        );
        let mut contexts = vec![default];
        // E2B's sandboxes start with a JavaScript context beside the Python one. Here its
        // kernel starts with its first cell, so sandboxes that never run JavaScript pay nothing.
        let python = config.runtime.python().to_string_lossy();
        if kernel_for(Language::JavaScript, &python).is_ok() {
            contexts.push(Context::new(
                Language::JavaScript,
                crate::jail::HOME.to_owned(),
                None,
            ));
        }
        Sandbox {
            id: format!("i{}", &uuid::Uuid::new_v4().simple().to_string()[..19]),
            template_id: spec.template_id,
            access_token: uuid::Uuid::new_v4().simple().to_string(),
            metadata: spec.metadata,
            started_at: now,
            end_at: Mutex::new(now + spec.timeout),
            root: warm.root,
            home,
            user,
            allow_network: spec.allow_network,
            env_vars: spec.env_vars,
            contexts: Mutex::new(contexts),
            commands: Mutex::new(HashMap::new()),
            closed: watch::channel(false).0,
            config,
            _lease: warm.lease,
        }
    }

    pub(crate) fn end_at(&self) -> SystemTime {
        *self.end_at.lock().expect("sandbox lock")
    }

    /// The sandbox now ends `timeout` from now.
    pub(crate) fn set_timeout(&self, timeout: Duration) {
        *self.end_at.lock().expect("sandbox lock") = SystemTime::now() + timeout;
    }

    /// A receiver for [`killed`]: it fires once the sandbox is killed.
    pub(crate) fn closed(&self) -> watch::Receiver<bool> {
        self.closed.subscribe()
    }

    pub(crate) fn contexts(&self) -> Vec<Arc<Context>> {
        self.contexts.lock().expect("sandbox lock").clone()
    }

    pub(crate) fn context(&self, id: &str) -> Result<Arc<Context>, ApiError> {
        self.contexts()
            .into_iter()
            .find(|c| c.id == id)
            .ok_or_else(|| ApiError::not_found(format!("Context {id} not found")))
    }

    /// The context used when a request names none: the first Python one.
    pub(crate) fn default_context(&self) -> Result<Arc<Context>, ApiError> {
        self.contexts()
            .into_iter()
            .find(|c| c.language == Language::Python)
            .ok_or_else(|| {
                ApiError::not_found(
                    "this sandbox has no Python context left; create one with POST /contexts",
                )
            })
    }

    /// The context a request that names only a language runs in: the first of that language,
    /// or a new one (its kernel started with its first cell), as E2B's server does.
    pub(crate) fn language_context(&self, language: Language) -> Result<Arc<Context>, ApiError> {
        self.check_language(language)?;
        let mut contexts = self.contexts.lock().expect("sandbox lock");
        if let Some(context) = contexts.iter().find(|c| c.language == language) {
            return Ok(context.clone());
        }
        let context = Context::new(language, crate::jail::HOME.to_owned(), None);
        contexts.push(context.clone());
        Ok(context)
    }

    /// Refuses a language whose kernel this service cannot start, saying what to install.
    pub(crate) fn check_language(&self, language: Language) -> Result<(), ApiError> {
        kernel_for(language, &self.config.runtime.python().to_string_lossy())
            .map(|_| ())
            .map_err(|error| ApiError::bad_request(error.to_string()))
    }

    /// A jail configuration for another process of this sandbox (a context's kernel or a
    /// command): same home, same user, same network choice, its own root below ours.
    ///
    /// Names are short on purpose: the kernel's ZMQ sockets live in that root, and a Unix
    /// socket path may not exceed 107 bytes.
    pub(crate) fn jail_config(&self, kind: &str) -> JailConfig {
        let mut jail = JailConfig::new(self.root.join(kind).join(short_id()));
        jail.home = Some(self.home.clone());
        jail.tmp = Some(sandbox_tmp(&self.root));
        jail.run_as = self.user;
        jail.allow_network = self.allow_network;
        jail.limits = self.config.limits.clone();
        self.config.runtime.apply(&mut jail);
        for (key, value) in &self.env_vars {
            jail.env.retain(|(k, _)| k != key);
            jail.env.push((key.clone(), value.clone()));
        }
        jail
    }

    /// Starts a kernel of `language` for a context, in `cwd`.
    pub(crate) async fn start_context_kernel(
        &self,
        language: Language,
        cwd: &str,
    ) -> Result<Kernel, ApiError> {
        let mut config = KernelConfig::new(self.jail_config("c"));
        config.start_timeout = self.config.start_timeout;
        config.python = self.config.runtime.python().to_string_lossy().into_owned();
        config.language = language;
        config.uid_pool = None;
        let mut kernel = Kernel::start(config).await.map_err(|error| {
            ApiError::internal(format!("cannot start a {language} kernel: {error}"))
        })?;
        // The jail's environment already has the sandbox's variables.
        prepare_kernel(&mut kernel, cwd, &[]).await?;
        Ok(kernel)
    }

    /// The environment every process of the sandbox starts with (the service's defaults and
    /// the sandbox's variables): what a cell's own variables are put back to afterwards.
    pub(crate) fn base_env(&self) -> Vec<(String, String)> {
        self.jail_config("c").env
    }

    pub(crate) async fn add_context(
        &self,
        language: Language,
        cwd: String,
    ) -> Result<Arc<Context>, ApiError> {
        self.check_language(language)?;
        let kernel = self.start_context_kernel(language, &cwd).await?;
        let context = Context::new(language, cwd, Some(kernel));
        if *self.closed.borrow() {
            context.close().await;
            return Err(ApiError::unknown_sandbox(&self.id));
        }
        self.contexts
            .lock()
            .expect("sandbox lock")
            .push(context.clone());
        Ok(context)
    }

    pub(crate) async fn remove_context(&self, id: &str) -> Result<(), ApiError> {
        let context = {
            let mut contexts = self.contexts.lock().expect("sandbox lock");
            let index = contexts
                .iter()
                .position(|c| c.id == id)
                .ok_or_else(|| ApiError::not_found(format!("Context {id} not found")))?;
            contexts.remove(index)
        };
        context.close().await;
        Ok(())
    }

    pub(crate) fn execution_timeout(&self) -> Duration {
        self.config.execution_timeout
    }

    async fn shutdown(&self) {
        let _ = self.closed.send(true);
        let contexts = std::mem::take(&mut *self.contexts.lock().expect("sandbox lock"));
        for context in contexts {
            context.close().await;
        }
        remove_root(self.root.clone()).await;
    }
}

/// Makes `cwd` the kernel's working directory and sets `env` in its environment (after a
/// start or restart), without moving the user's execution count.
pub(crate) async fn prepare_kernel(
    kernel: &mut Kernel,
    cwd: &str,
    env: &[(String, String)],
) -> Result<(), ApiError> {
    let language = kernel.config().language;
    let mut code = language.set_env_code(env);
    if cwd != crate::jail::HOME {
        code.push_str(&language.chdir_code(cwd));
    }
    if code.is_empty() {
        return Ok(());
    }
    let run = kernel
        .execute_silently(&code, Duration::from_secs(10))
        .await
        .map_err(|error| ApiError::internal(format!("cannot reach the kernel: {error}")))?;
    if run.status != ExecutionStatus::Ok {
        return Err(ApiError::bad_request(format!(
            "cannot prepare the kernel (working directory {cwd:?}): {:?}; give a directory the sandbox's user may write, under /home/user, /root or /tmp",
            run.error()
        )));
    }
    Ok(())
}

/// Removes a sandbox root in the background of a blocking thread.
/// Host directory bound at `/tmp` in every jail of the sandbox rooted at `root`: its kernels
/// and its commands see the same `/tmp`, as processes on one machine do.
pub(crate) fn sandbox_tmp(root: &std::path::Path) -> PathBuf {
    root.join("tmp")
}

pub(crate) async fn remove_root(root: PathBuf) {
    let result = tokio::task::spawn_blocking(move || match crate::jail::remove_root(&root) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err((root, error)),
        _ => Ok(()),
    })
    .await;
    if let Ok(Err((root, error))) = result {
        tracing::warn!(root = %root.display(), %error, "cannot remove a sandbox directory");
    }
}

/// Resolves once the sandbox behind `closed` (from [`Sandbox::closed`]) is killed.
pub(crate) async fn killed(closed: &mut watch::Receiver<bool>) {
    // An error means the sandbox itself is gone: killed too.
    let _ = closed.wait_for(|c| *c).await.map(|_| ());
}

/// 12 random hex digits: unique enough for folder names within one sandbox or service.
pub(crate) fn short_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_owned()
}

/// Environment variables from a JSON object of strings, checked.
pub(crate) fn env_from_json(
    field: &str,
    vars: Option<Map<String, Value>>,
) -> Result<Vec<(String, String)>, ApiError> {
    let mut env = Vec::new();
    for (key, value) in vars.unwrap_or_default() {
        let Value::String(value) = value else {
            return Err(ApiError::bad_request(format!(
                "{field}.{key} must be a string; send {field} as {{\"NAME\": \"value\"}}"
            )));
        };
        if key.is_empty() || key.contains(['=', '\0']) || value.contains('\0') {
            return Err(ApiError::bad_request(format!(
                "{field} has an invalid variable {key:?}: names must be non-empty without '=' and neither may contain NUL"
            )));
        }
        env.push((key, value));
    }
    Ok(env)
}

/// The 503 of a create that got no kernel in time: what was going on, and what to change.
fn starved_error(starved: &super::pool::Starved) -> ApiError {
    let failing = match &starved.failure {
        Some(failure) => format!("; kernels are failing to start: {failure}"),
        None => String::new(),
    };
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "no sandbox kernel became ready within {:.0} s ({} starting, {} creates waiting{failing}): \
             keep more kernels ready ahead of bursts (--pool), allow longer starts (--start-timeout), \
             or create fewer sandboxes at once",
            starved.waited.as_secs_f64(),
            starved.starting,
            starved.waiting
        ),
    )
}
