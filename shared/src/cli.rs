//! The flags every environment shares, defined once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use mcpgym_serve::ServeConfig;

use crate::http::HttpOptions;
use crate::hub::HubSettings;
use crate::replica::ReplicaName;
use crate::task::Split;
use crate::trajectory::ImagePolicy;
use mcpgym_env::generate::Level;

/// `--max-episodes`: the total and the limits per environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpisodeLimits {
    /// Live episodes in all: the number given, else 10,000 or the sum of the
    /// per-environment limits, whichever is larger.
    pub total: usize,
    /// Live episodes per environment, by name.
    pub per_env: std::collections::BTreeMap<String, usize>,
}

impl std::str::FromStr for EpisodeLimits {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut total = None;
        let mut per_env = std::collections::BTreeMap::new();
        let count = |value: &str| {
            value.trim().parse::<usize>().map_err(|_| {
                format!("{value:?} is not a number of episodes: give a whole number, e.g. 400")
            })
        };
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.split_once('=') {
                Some((env, value)) => {
                    let env = env.trim();
                    if env.is_empty()
                        || !env
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                    {
                        return Err(format!(
                            "{env:?} is not an environment name (e.g. jupyter=400)"
                        ));
                    }
                    if per_env.insert(env.to_owned(), count(value)?).is_some() {
                        return Err(format!(
                            "{env} is limited twice; give each environment once"
                        ));
                    }
                }
                None if total.is_none() => total = Some(count(part)?),
                None => return Err("give the total once, e.g. 20000,jupyter=400".to_owned()),
            }
        }
        if total.is_none() && per_env.is_empty() {
            return Err(
                "give a number of episodes, ENV=N pairs, or both (e.g. 20000,jupyter=400)"
                    .to_owned(),
            );
        }
        let total = total.unwrap_or_else(|| per_env.values().sum::<usize>().max(10_000));
        Ok(EpisodeLimits { total, per_env })
    }
}

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
    #[arg(long, default_value_t = Split::Train, value_name = "train|test")]
    pub split: Split,

    /// Draw tasks only of these levels (comma-separated: easy, medium, hard), from the task
    /// families that have levels, when neither the request nor --task names a task.
    #[arg(long, value_name = "LEVEL,…", value_delimiter = ',')]
    pub levels: Vec<Level>,

    /// Tool calls allowed per episode; the call that reaches it ends the episode as truncated.
    /// Each environment has its own default.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,

    /// Write each episode's trajectory to DIR/EPISODE_ID.jsonl: a header (env, task, seed,
    /// options), one record per tool call, and the final status. Observation images go to
    /// DIR/EPISODE_ID/TURN-N.png. Watch them with `mcpgym view DIR`.
    #[arg(long, value_name = "DIR")]
    pub trajectory_dir: Option<PathBuf>,

    /// Which observation images (screenshots, plots) --trajectory-dir keeps: all, none, or N
    /// for one step in N.
    #[arg(long, value_name = "all|none|N", default_value = "all")]
    pub trajectory_images: ImagePolicy,

    /// Bearer token every HTTP request must carry (Authorization: Bearer TOKEN), except
    /// GET /healthz. Required to listen beyond loopback.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "MCPGYM_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// This replica's name when several serve behind one proxy (in Kubernetes, the pod's
    /// name): it goes in front of every episode and session id, and the proxy sends each
    /// request to the replica its id names (see manifests/nginx/). A DNS label, e.g. mcpgym-0.
    #[arg(long, value_name = "NAME", env = "MCPGYM_REPLICA")]
    pub replica: Option<ReplicaName>,

    /// Most live episodes held at once, in all and per environment: `N`, `ENV=N,...` or
    /// both (`20000,jupyter=40,desktop=24`); past a limit, new episodes are refused with 503
    /// and a sentence naming it. Jupyter and desktop have limits of their own sized from the
    /// machine's cores and memory unless named here, so one environment's churn never refuses
    /// another's. A finished episode holds no place: its kernel or display is released when
    /// it finishes.
    #[arg(long, value_name = "LIMITS", default_value = "10000")]
    pub max_episodes: EpisodeLimits,

    /// Most finished episodes kept readable (status, reward, trajectory, exports) after they
    /// end; the oldest to finish is forgotten first.
    #[arg(long, value_name = "N", default_value_t = crate::hub::DEFAULT_MAX_FINISHED)]
    pub max_finished: usize,

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

    /// HTTP connection timeouts, limit and shutdown deadline.
    #[command(flatten)]
    pub connections: ConnectionArgs,

    /// Serve legacy MCP sessions through rmcp alone (a worker per session) instead of the
    /// direct path; for comparing the two, so not listed in --help.
    #[arg(long, hide = true)]
    pub rmcp_sessions: bool,
}

/// The flags that hold HTTP connections to account, for any server built on
/// [`mcpgym_serve`].
#[derive(Debug, Clone, clap::Args)]
pub struct ConnectionArgs {
    /// Close an HTTP connection that has not sent a complete request head (request line and
    /// headers) this many seconds after it opened or after its request began, or whose request
    /// body stalls this long while the server waits for it.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_seconds, help_heading = "HTTP connections")]
    pub header_timeout: Duration,

    /// Close a keep-alive HTTP connection idle (no request) for this many seconds.
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = parse_seconds, help_heading = "HTTP connections")]
    pub keep_alive_timeout: Duration,

    /// Most HTTP connections served at once; further ones wait in the listen backlog. Keep it
    /// below the open-file limit (ulimit -n).
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..), help_heading = "HTTP connections")]
    pub max_connections: u32,

    /// At shutdown (SIGTERM, Ctrl-C), how many seconds requests in flight may run on before
    /// their connections are dropped and the episodes' cleanup finishes.
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = parse_seconds, help_heading = "HTTP connections")]
    pub shutdown_timeout: Duration,
}

impl ConnectionArgs {
    /// The connection settings these flags describe.
    pub fn config(&self) -> ServeConfig {
        ServeConfig {
            header_timeout: self.header_timeout,
            idle_timeout: self.keep_alive_timeout,
            max_connections: self.max_connections as usize,
            shutdown_timeout: self.shutdown_timeout,
        }
    }
}

/// Seconds, whole or decimal (`0.5`), as a duration; at most a day.
fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(0.001..=86_400.0).contains(&seconds) {
        return Err(format!(
            "{text} is out of range: give 0.001 to 86400 seconds"
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

impl CommonArgs {
    /// The hub settings these flags describe.
    pub fn hub_settings(&self) -> HubSettings {
        HubSettings {
            max_turns: self.max_turns,
            trajectory_dir: self.trajectory_dir.clone(),
            trajectory_images: self.trajectory_images,
            max_episodes: self.max_episodes.total,
            max_episodes_per_env: self.max_episodes.per_env.clone(),
            max_finished: self.max_finished,
            idle_ttl: Duration::from_secs(self.idle_ttl),
            default_task: self.task.clone(),
            default_seed: self.seed,
            default_split: self.split,
            default_levels: self.levels.clone(),
            reset_tool: self.reset_tool,
            replica: self.replica.clone(),
        }
    }

    /// The HTTP options these flags describe.
    pub fn http_options(&self) -> HttpOptions {
        HttpOptions {
            token: self.token.clone(),
            allow_origins: self.allow_origins.clone(),
            loopback_hosts_only: true,
            mount_root_mcp: true,
            connections: self.connections.config(),
            rmcp_sessions: self.rmcp_sessions,
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

#[cfg(test)]
mod limit_tests {
    use super::*;

    #[test]
    fn episode_limits_take_a_total_per_environment_limits_or_both() {
        let both: EpisodeLimits = "20000, jupyter=40,desktop=24".parse().unwrap();
        assert_eq!(both.total, 20_000);
        assert_eq!(both.per_env["jupyter"], 40);
        assert_eq!(both.per_env["desktop"], 24);
        let only_envs: EpisodeLimits = "wordle=100000,jupyter=400".parse().unwrap();
        assert_eq!(only_envs.total, 100_400);
        assert_eq!("7".parse::<EpisodeLimits>().unwrap().total, 7);
        for (bad, says) in [
            ("", "give a number"),
            ("x", "not a number"),
            ("jupyter=", "not a number"),
            ("=4", "not an environment name"),
            ("jupyter=1,jupyter=2", "limited twice"),
            ("1,2", "total once"),
        ] {
            let error = bad.parse::<EpisodeLimits>().unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
