//! The session-and-reward layer beneath every mcpgym environment.
//!
//! An environment author implements [`Environment`] (how an episode starts from a task and
//! which tools it offers) and [`EpisodeState`] (what each tool does to the state and what it
//! pays). Everything else is written once, here:
//!
//! - [`episode`]: turn counting, `max_turns` truncation, freezing after `done`, the reward
//!   ledger with named components and a once-only terminal reward, the trajectory, and the
//!   public status kept up to date step by step;
//! - [`store`]: live episodes with a capacity, an idle TTL and a reaper;
//! - [`hub`]: the environments, the store and the settings behind every transport;
//! - [`binding`]: which episode a tool call names, for every transport; [`mcp`]: the MCP
//!   server handler (and the session's episode when a call names none); [`sessions`]: legacy
//!   MCP sessions at a few hundred bytes each; [`stateless`] and [`legacy`]: the direct paths
//!   that answer plain tool calls without rmcp's per-request or per-session machinery;
//! - [`http`]: streamable HTTP MCP, the control plane, health and metrics, on connections held
//!   to timeouts and a limit ([`mcpgym_serve`]); [`malformed`]: JSON-RPC errors for bodies
//!   that are not JSON-RPC;
//! - [`step`]: the step record (observation, reward, components, done, truncated) every
//!   door turns into its own wire shape; [`doors`]: OpenEnv and the Open Reward Standard over
//!   the same episodes;
//! - [`trajectory`]: trajectory records and files (header, steps, end, images beside them);
//!   [`viewer`]: the web pages that show episodes live or from a folder of recordings;
//! - [`clip`]: head-and-tail clipping that keeps trajectory records within their budget;
//! - [`replica`]: the replica name in every id, which a proxy in front of several routes on;
//! - [`cli`]: the flags every environment shares; [`client`]: a typed client of the control
//!   plane (bench, examples, tests);
//! - re-exported from `mcpgym-env`, the environment API: [`env`](mod@env), [`tools`], [`choice`],
//!   [`reward`], [`task`], [`schema`], [`rng`], [`progress`].

pub use mcpgym_env::{
    choice, clip, env, generate, oracle, progress, rescore, reward, rng, schema, task, tools,
};

pub mod binding;
pub mod cli;
pub mod client;
pub mod doors;
pub mod episode;
pub mod http;
pub mod hub;
pub mod legacy;
pub mod malformed;
pub mod mcp;
pub mod metrics;
pub mod replica;
pub mod sessions;
pub mod stateless;
pub mod stdio;
pub mod step;
pub mod store;
pub mod trajectory;
pub mod viewer;

pub use env::{BoxFuture, Environment, EpisodeSpec, EpisodeState, Export, StartError, StepOutcome};
pub use hub::{Hub, HubError, HubSettings};
pub use reward::Reward;
pub use task::{Split, TaskFamily, TaskSet};

/// The `_meta` key a request uses to name its episode.
pub const META_EPISODE: &str = "mcpgym/episode";

/// The `_meta` key of a tool call's idempotency key: a retried call with the same key on the
/// same episode gets the first answer again and plays no second step.
pub const META_IDEMPOTENCY_KEY: &str = "mcpgym/idempotency-key";
/// The `_meta` key under which every tool result carries its step information.
pub const META_STEP: &str = "mcpgym/step";
