//! The MCP server handler shared by every environment, and the rules that bind a tool call to
//! its episode.
//!
//! rmcp makes one handler per stdio process, one per legacy-era HTTP session, and one per
//! request for stateless (2026-07-28) clients, so episodes live in the [`Hub`], not here. A
//! call finds its episode by the first of:
//!
//! 1. the request's `_meta["mcpgym/episode"]`;
//! 2. the URL `/episodes/{id}/mcp`, or on another endpoint the `Mcpgym-Episode` header (the
//!    HTTP layer inserts an [`EpisodeRoute`]);
//! 3. the episode already bound to the session (the stdio process, or a legacy HTTP session,
//!    whose binding lives in [`crate::sessions`] so the direct path shares it);
//! 4. a new episode, bound to the session; its id is in the result's `_meta`.
//!
//! `call_tool` and `list_tools` hold these rules for both rmcp's handler and the direct
//! path of legacy sessions ([`crate::legacy`]), so the two answer alike.

use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::binding::named_episode;
use crate::env::Environment;
use crate::hub::{CreateEpisode, Hub, HubError, check_tool};
use crate::progress::{ProgressSink, Reporter, with_reporter};
use crate::sessions::{LegacySession, SessionBinding};
use crate::step::StepRecord;
use crate::{META_EPISODE, META_IDEMPOTENCY_KEY};

/// The name of the optional tool that starts a new episode for the session.
pub const RESET_TOOL: &str = "reset";

/// The `reset` tool, listed only with `--reset-tool`.
static RESET: LazyLock<Tool> = LazyLock::new(|| {
    Tool::new_with_raw(
        RESET_TOOL,
        Some("End the current episode and start a new one (a new game).".into()),
        crate::schema::no_arguments(),
    )
    .with_annotations(
        ToolAnnotations::with_title("New episode")
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(false),
    )
});

pub use crate::binding::EpisodeRoute;

/// Which tools a handler lists.
#[derive(Clone)]
pub(crate) enum Scope {
    /// One environment's (`/mcp`, `/<env>/mcp`, stdio).
    Env(Arc<dyn Environment>),
    /// The tools of the episode named in the URL (`/episodes/{id}/mcp`).
    EpisodeRoute,
}

/// The MCP server for one environment, or for the episode a URL names.
#[derive(Clone)]
pub struct McpHandler {
    hub: Arc<Hub>,
    scope: Scope,
    /// The episode bound to this handler (rule 3) when its requests carry no legacy session
    /// of the hub's table: stdio, and stateless requests (one handler each).
    binding: Arc<SessionBinding>,
}

impl std::fmt::Debug for McpHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHandler").finish_non_exhaustive()
    }
}

/// The legacy session id a request carries, if any.
fn session_id(context: &RequestContext<RoleServer>) -> Option<&str> {
    context
        .extensions
        .get::<http::request::Parts>()?
        .headers
        .get("mcp-session-id")?
        .to_str()
        .ok()
}

impl McpHandler {
    /// A handler for one environment, with no episode bound yet.
    pub fn for_env(hub: Arc<Hub>, env: Arc<dyn Environment>) -> Self {
        Self {
            hub,
            scope: Scope::Env(env),
            binding: Default::default(),
        }
    }

    /// A handler for `/episodes/{id}/mcp`: lists and calls the tools of the episode the URL
    /// names.
    pub fn for_episode_routes(hub: Arc<Hub>) -> Self {
        Self {
            hub,
            scope: Scope::EpisodeRoute,
            binding: Default::default(),
        }
    }

    /// A handler with an episode already bound (stdio: the episode the CLI flags describe).
    pub fn bound_to(hub: Arc<Hub>, env: Arc<dyn Environment>, episode: &str) -> Self {
        let binding = SessionBinding::default();
        *binding.episode.try_lock().expect("a new lock is free") = Some(episode.into());
        Self {
            hub,
            scope: Scope::Env(env),
            binding: Arc::new(binding),
        }
    }

    /// A handler for the same endpoint with no episode bound: rmcp makes one per session or
    /// stateless request.
    pub fn unbound(&self) -> Self {
        Self {
            hub: self.hub.clone(),
            scope: self.scope.clone(),
            binding: Default::default(),
        }
    }

    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    fn route(context: &RequestContext<RoleServer>) -> Option<&EpisodeRoute> {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<EpisodeRoute>())
            .or_else(|| context.extensions.get::<EpisodeRoute>())
    }

    /// The legacy session of the hub's table a request belongs to, if any.
    fn legacy_session(&self, context: &RequestContext<RoleServer>) -> Option<Arc<LegacySession>> {
        self.hub.sessions().get(session_id(context)?, None)
    }
}

/// A tool call on an MCP endpoint: what it is resolved against and what it names.
pub(crate) struct ToolCall<'a> {
    pub hub: &'a Hub,
    pub scope: &'a Scope,
    /// The session's episode (rule 3).
    pub binding: &'a SessionBinding,
    /// The value of the request's `_meta["mcpgym/episode"]`, if any.
    pub meta_episode: Option<&'a serde_json::Value>,
    /// The episode of the URL, if any.
    pub route: Option<&'a EpisodeRoute>,
    /// The value of the request's `_meta["mcpgym/idempotency-key"]`, if any.
    pub meta_key: Option<&'a serde_json::Value>,
}

impl ToolCall<'_> {
    fn resettable(&self) -> bool {
        matches!(self.scope, Scope::Env(_)) && self.hub.settings().reset_tool
    }

    /// Finds the episode the call belongs to, starting one if nothing names it.
    async fn bind(&self) -> Result<Arc<str>, McpError> {
        if let Some(id) = named_episode(self.meta_episode, self.route)
            .map_err(|error| McpError::invalid_params(error.to_string(), None))?
        {
            return Ok(id);
        }
        let mut bound = self.binding.episode.lock().await;
        if let Some(id) = bound.as_ref() {
            return Ok(id.clone());
        }
        let Scope::Env(env) = self.scope else {
            return Err(McpError::invalid_params(
                "this endpoint serves /episodes/{id}/mcp only; name an episode in the URL",
                None,
            ));
        };
        let created = self
            .hub
            .create(CreateEpisode {
                env: Some(env.name().to_owned()),
                session: self.binding.record.clone(),
                ..CreateEpisode::default()
            })
            .await
            .map_err(to_mcp_error)?;
        let id: Arc<str> = created.id.into();
        *bound = Some(id.clone());
        Ok(id)
    }

    /// Closes the session's episode and starts the next one.
    async fn reset(&self) -> Result<CallToolResult, McpError> {
        let Scope::Env(env) = self.scope else {
            return Err(McpError::invalid_params("reset is not offered here", None));
        };
        if self.meta_episode.is_some() || self.route.is_some() {
            return Err(McpError::invalid_params(
                "reset starts a new episode for this session only; harnesses start episodes with POST /episodes",
                None,
            ));
        }
        let mut bound = self.binding.episode.lock().await;
        if let Some(old) = bound.take() {
            // Already gone (reaped or deleted) is fine: a new one starts either way.
            let _ = self.hub.delete(&old).await;
        }
        let count = self.binding.resets.fetch_add(1, Ordering::Relaxed) + 1;
        let created = self
            .hub
            .create(CreateEpisode {
                env: Some(env.name().to_owned()),
                seed: self
                    .hub
                    .settings()
                    .default_seed
                    .map(|s| s.wrapping_add(count)),
                session: self.binding.record.clone(),
                ..CreateEpisode::default()
            })
            .await
            .map_err(to_mcp_error)?;
        *bound = Some(created.id.as_str().into());
        let started = StepRecord {
            episode: created.id,
            turn: 0,
            content: vec![ContentBlock::text(format!(
                "A new episode has started ({}).",
                created.task
            ))],
            structured: None,
            is_error: false,
            reward: 0.0,
            reward_components: Default::default(),
            return_: 0.0,
            done: false,
            truncated: false,
            aborted: false,
        };
        Ok(started.into_call_result())
    }
}

/// Runs a tool call: `reset`, or a step of the episode the call belongs to. Progress the step
/// reports goes to the reporter in scope ([`with_reporter`]), if any.
pub(crate) async fn call_tool(
    call: ToolCall<'_>,
    name: &str,
    arguments: JsonObject,
) -> Result<CallToolResult, McpError> {
    if name == RESET_TOOL && call.resettable() {
        return call.reset().await;
    }
    // An unknown tool must not start an episode on its way to failing.
    if let Scope::Env(env) = call.scope {
        check_tool(env.as_ref(), name).map_err(to_mcp_error)?;
    }
    let key = match call.meta_key {
        None => None,
        Some(serde_json::Value::String(key)) => Some(key.as_str()),
        Some(other) => {
            return Err(McpError::invalid_params(
                format!(
                    "_meta[\"{META_IDEMPOTENCY_KEY}\"] must be a string (a UUID is a good key), not {other}"
                ),
                None,
            ));
        }
    };
    let episode = call.bind().await?;
    let step = call
        .hub
        .step_keyed(&episode, name, arguments, key)
        .await
        .map_err(to_mcp_error)?;
    Ok(step.into_call_result())
}

/// The tools an endpoint lists.
pub(crate) fn list_tools(
    hub: &Hub,
    scope: &Scope,
    route: Option<&EpisodeRoute>,
) -> Result<Vec<Tool>, McpError> {
    match scope {
        Scope::Env(env) => {
            let mut tools = env.tools().to_vec();
            if hub.settings().reset_tool {
                tools.push(RESET.clone());
            }
            Ok(tools)
        }
        Scope::EpisodeRoute => {
            let id = route
                .ok_or_else(|| McpError::invalid_params("name an episode in the URL", None))?;
            let slot = hub.episode(&id.0).map_err(to_mcp_error)?;
            Ok(slot.env.tools().to_vec())
        }
    }
}

/// A hub error as a JSON-RPC error: these are faults of the harness (an unknown episode, a
/// full server), not moves the model made.
pub fn to_mcp_error(error: HubError) -> McpError {
    let code = match &error {
        HubError::Full(_) | HubError::EnvFull { .. } | HubError::Start(_) => {
            ErrorCode::INTERNAL_ERROR
        }
        _ => ErrorCode::INVALID_PARAMS,
    };
    McpError::new(code, error.to_string(), None)
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        let (name, instructions) = match &self.scope {
            Scope::Env(env) => (
                format!("mcpgym-{}", env.name()),
                env.instructions().to_owned(),
            ),
            Scope::EpisodeRoute => (
                "mcpgym".to_owned(),
                "One mcpgym episode: the tools of its environment.".to_owned(),
            ),
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(name, env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if name == RESET_TOOL
            && matches!(self.scope, Scope::Env(_))
            && self.hub.settings().reset_tool
        {
            return Some(RESET.clone());
        }
        match &self.scope {
            Scope::Env(env) => env.tools().iter().find(|t| t.name == name).cloned(),
            Scope::EpisodeRoute => None,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(list_tools(
            &self.hub,
            &self.scope,
            Self::route(&context),
        )?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let session = self.legacy_session(&context);
        let call = ToolCall {
            hub: &self.hub,
            scope: &self.scope,
            binding: session.as_ref().map_or(&self.binding, |s| &s.binding),
            meta_episode: request
                .meta
                .as_ref()
                .and_then(|meta| meta.get(META_EPISODE))
                .or_else(|| context.meta.get(META_EPISODE)),
            route: Self::route(&context),
            meta_key: request
                .meta
                .as_ref()
                .and_then(|meta| meta.get(META_IDEMPOTENCY_KEY))
                .or_else(|| context.meta.get(META_IDEMPOTENCY_KEY)),
        };
        // Progress reported while binding (an episode may start here) or calling reaches the
        // client that asked for it.
        let reporter = context.meta.get_progress_token().map(|token| {
            Arc::new(McpProgress {
                peer: context.peer.clone(),
                token,
            }) as Reporter
        });
        let arguments = request.arguments.clone().unwrap_or_default();
        with_reporter(reporter, call_tool(call, &request.name, arguments))
            .await
            .map(Into::into)
    }
}

/// Progress of one MCP call, sent to the client that asked for it with its token.
struct McpProgress {
    peer: rmcp::service::Peer<rmcp::RoleServer>,
    token: rmcp::model::ProgressToken,
}

impl ProgressSink for McpProgress {
    fn notify(
        &self,
        progress: f64,
        total: Option<f64>,
        message: String,
    ) -> crate::env::BoxFuture<'_, ()> {
        Box::pin(async move {
            let mut param =
                rmcp::model::ProgressNotificationParam::new(self.token.clone(), progress)
                    .with_message(message);
            if let Some(total) = total {
                param = param.with_total(total);
            }
            if let Err(error) = self.peer.notify_progress(param).await {
                tracing::debug!(%error, "cannot send a progress notification");
            }
        })
    }
}
