//! The flags every environment shares, defined once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::http::HttpOptions;
use crate::hub::HubSettings;
use crate::task::Split;

/// Episode, session and HTTP flags common to every environment.
#[derive(Debug, Clone, clap::Args)]
pub struct CommonArgs {
    /// Seed for the episodes this process starts itself (the stdio episode, new sessions, and
    /// POST /episodes without a seed). The same seed picks the same task on any machine.
    /// Random when not given.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Task id to play instead of drawing one from the split (list them with GET /tasks).
    #[arg(long, value_name = "ID")]
    pub task: Option<String>,

    /// Split to draw tasks from when no task is named.
    #[arg(long, value_enum, default_value_t = Split::Train)]
    pub split: Split,

    /// Tool calls allowed per episode; the call that reaches it ends the episode as truncated.
    /// Each environment has its own default.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,

    /// Write each episode's trajectory to DIR/EPISODE_ID.jsonl (one record per tool call).
    #[arg(long, value_name = "DIR")]
    pub trajectory_dir: Option<PathBuf>,

    /// Bearer token every HTTP request must carry (Authorization: Bearer TOKEN), except
    /// GET /healthz. Required to listen beyond loopback.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "MCPGYM_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// Most episodes held at once; past it, new episodes are refused with 503.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_episodes: usize,

    /// Close episodes idle for this many seconds, releasing what they hold.
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_ttl: u64,

    /// List a `reset` tool that closes the session's episode and starts a new one, for chat
    /// agents that want another game. Off by default: in training it would let a policy abandon
    /// a losing episode.
    #[arg(long)]
    pub reset_tool: bool,

    /// Allow browser requests from this Origin besides loopback ones (repeatable); give it as
    /// scheme://host:port, exactly as browsers send it.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
}

impl CommonArgs {
    /// The hub settings these flags describe.
    pub fn hub_settings(&self) -> HubSettings {
        HubSettings {
            max_turns: self.max_turns,
            trajectory_dir: self.trajectory_dir.clone(),
            max_episodes: self.max_episodes,
            idle_ttl: Duration::from_secs(self.idle_ttl),
            default_task: self.task.clone(),
            default_seed: self.seed,
            default_split: self.split,
            reset_tool: self.reset_tool,
        }
    }

    /// The HTTP options these flags describe.
    pub fn http_options(&self) -> HttpOptions {
        HttpOptions {
            token: self.token.clone(),
            allow_origins: self.allow_origins.clone(),
            loopback_hosts_only: true,
            mount_root_mcp: true,
        }
    }
}

/// Where an environment command serves: stdio unless `--http` is given.
#[derive(Debug, Clone, clap::Args)]
pub struct TransportArgs {
    /// Serve streamable HTTP MCP (at /mcp), the control plane, /healthz and /metrics on this
    /// address instead of MCP over stdio, e.g. 127.0.0.1:8000.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
}
