//! The MCP server handler shared by every environment, and the rules that bind a tool call to
//! its episode.
//!
//! rmcp makes one handler per stdio process, one per legacy-era HTTP session, and one per
//! request for stateless (2026-07-28) clients, so episodes live in the [`Hub`], not here. A
//! call finds its episode by the first of:
//!
//! 1. the request's `_meta["mcpgym/episode"]`;
//! 2. the URL `/episodes/{id}/mcp` (the HTTP layer inserts an [`EpisodeRoute`]);
//! 3. the episode already bound to this handler (the stdio process, or a legacy HTTP session);
//! 4. a new episode, bound to this handler; its id is in the result's `_meta`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::META_EPISODE;
use crate::binding::named_episode;
use crate::env::Environment;
use crate::hub::{CreateEpisode, Hub, HubError, check_tool};
use crate::progress::{ProgressSink, Reporter, with_reporter};
use crate::step::StepRecord;

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
enum Scope {
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
    /// The episode bound to this handler's session (rule 3).
    bound: Arc<tokio::sync::Mutex<Option<Arc<str>>>>,
    /// How many times this session has reset, so a fixed `--seed` gives a fixed sequence.
    resets: Arc<AtomicU64>,
}

impl std::fmt::Debug for McpHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHandler").finish_non_exhaustive()
    }
}

impl McpHandler {
    /// A handler for one environment, with no episode bound yet.
    pub fn for_env(hub: Arc<Hub>, env: Arc<dyn Environment>) -> Self {
        Self {
            hub,
            scope: Scope::Env(env),
            bound: Default::default(),
            resets: Default::default(),
        }
    }

    /// A handler for `/episodes/{id}/mcp`: lists and calls the tools of the episode the URL
    /// names.
    pub fn for_episode_routes(hub: Arc<Hub>) -> Self {
        Self {
            hub,
            scope: Scope::EpisodeRoute,
            bound: Default::default(),
            resets: Default::default(),
        }
    }

    /// A handler with an episode already bound (stdio: the episode the CLI flags describe).
    pub fn bound_to(hub: Arc<Hub>, env: Arc<dyn Environment>, episode: &str) -> Self {
        Self {
            hub,
            scope: Scope::Env(env),
            bound: Arc::new(tokio::sync::Mutex::new(Some(episode.into()))),
            resets: Default::default(),
        }
    }

    fn route(context: &RequestContext<RoleServer>) -> Option<&EpisodeRoute> {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<EpisodeRoute>())
            .or_else(|| context.extensions.get::<EpisodeRoute>())
    }

    /// Finds the episode a call belongs to, starting one if nothing names it.
    async fn bind(
        &self,
        params: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Arc<str>, McpError> {
        let meta = params
            .meta
            .as_ref()
            .and_then(|meta| meta.get(META_EPISODE))
            .or_else(|| context.meta.get(META_EPISODE));
        if let Some(id) = named_episode(meta, Self::route(context))
            .map_err(|error| McpError::invalid_params(error.to_string(), None))?
        {
            return Ok(id);
        }
        let mut bound = self.bound.lock().await;
        if let Some(id) = bound.as_ref() {
            return Ok(id.clone());
        }
        let Scope::Env(env) = &self.scope else {
            return Err(McpError::invalid_params(
                "this endpoint serves /episodes/{id}/mcp only; name an episode in the URL",
                None,
            ));
        };
        let created = self
            .hub
            .create(CreateEpisode {
                env: Some(env.name().to_owned()),
                ..CreateEpisode::default()
            })
            .await
            .map_err(to_mcp_error)?;
        let id: Arc<str> = created.id.into();
        *bound = Some(id.clone());
        Ok(id)
    }

    fn resettable(&self) -> bool {
        matches!(self.scope, Scope::Env(_)) && self.hub.settings().reset_tool
    }

    /// Closes the session's episode and starts the next one.
    async fn reset(
        &self,
        params: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let named = params
            .meta
            .as_ref()
            .is_some_and(|m| m.contains_key(META_EPISODE))
            || context.meta.contains_key(META_EPISODE)
            || Self::route(context).is_some();
        let Scope::Env(env) = &self.scope else {
            return Err(McpError::invalid_params("reset is not offered here", None));
        };
        if named {
            return Err(McpError::invalid_params(
                "reset starts a new episode for this session only; harnesses start episodes with POST /episodes",
                None,
            ));
        }
        let mut bound = self.bound.lock().await;
        if let Some(old) = bound.take() {
            // Already gone (reaped or deleted) is fine: a new one starts either way.
            let _ = self.hub.delete(&old).await;
        }
        let count = self.resets.fetch_add(1, Ordering::Relaxed) + 1;
        let created = self
            .hub
            .create(CreateEpisode {
                env: Some(env.name().to_owned()),
                seed: self
                    .hub
                    .settings()
                    .default_seed
                    .map(|s| s.wrapping_add(count)),
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

    fn tools_for(&self, context: &RequestContext<RoleServer>) -> Result<Vec<Tool>, McpError> {
        match &self.scope {
            Scope::Env(env) => {
                let mut tools = env.tools().to_vec();
                if self.resettable() {
                    tools.push(RESET.clone());
                }
                Ok(tools)
            }
            Scope::EpisodeRoute => {
                let id = Self::route(context)
                    .ok_or_else(|| McpError::invalid_params("name an episode in the URL", None))?;
                let slot = self.hub.episode(&id.0).map_err(to_mcp_error)?;
                Ok(slot.env.tools().to_vec())
            }
        }
    }
}

/// A hub error as a JSON-RPC error: these are faults of the harness (an unknown episode, a
/// full server), not moves the model made.
pub fn to_mcp_error(error: HubError) -> McpError {
    let code = match &error {
        HubError::Full(_) | HubError::Start(_) => ErrorCode::INTERNAL_ERROR,
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
        if name == RESET_TOOL && self.resettable() {
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
        Ok(ListToolsResult::with_all_items(self.tools_for(&context)?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name == RESET_TOOL && self.resettable() {
            return self.reset(&request, &context).await.map(Into::into);
        }
        // An unknown tool must not start an episode on its way to failing.
        if let Scope::Env(env) = &self.scope {
            check_tool(env.as_ref(), &request.name).map_err(to_mcp_error)?;
        }
        // Progress reported while binding (an episode may start here) or calling reaches the
        // client that asked for it.
        let reporter = context.meta.get_progress_token().map(|token| {
            Arc::new(McpProgress {
                peer: context.peer.clone(),
                token,
            }) as Reporter
        });
        with_reporter(reporter, async {
            let episode = self.bind(&request, &context).await?;
            let arguments = request.arguments.clone().unwrap_or_default();
            let step = self
                .hub
                .step(&episode, &request.name, arguments)
                .await
                .map_err(to_mcp_error)?;
            Ok(step.into_call_result().into())
        })
        .await
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
