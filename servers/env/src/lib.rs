//! What an mcpgym environment author implements and uses, and nothing of the server.
//!
//! An environment implements [`Environment`] (its name, tasks and tools, and how an episode
//! starts from a task) and [`EpisodeState`] (what each tool does to one episode and what it
//! pays). The server (`mcpgym-shared`) holds everything else: episodes, turn limits, the
//! reward ledger, sessions, trajectories, MCP, HTTP and the trainer doors.
//!
//! - [`env`](mod@env): the two traits, [`StepOutcome`], [`parse_arguments`](env::parse_arguments);
//! - [`reward`]: named reward components;
//! - [`task`]: task ids by [`Split`];
//! - [`tools`]: the tool table — each tool declared once, with its schema and handler;
//! - [`choice`]: named choices (reward modes) for flags and options, with [`choices!`];
//! - [`schema`]: tool input and output schemas from Rust types;
//! - [`rng`]: the episode's seeded generator;
//! - [`generate`]: seeded generation of task instances ([`generate::Gen`]) and word lists;
//! - [`oracle`]: reference solutions, played through the tools by `mcpgym eval`;
//! - [`rescore`]: grading a finished episode again from its record;
//! - [`progress`]: progress notifications from inside a long tool call;
//! - [`clip`]: head-and-tail clipping of long text within a budget;
//! - [`machine`]: the machine's cores and memory, for default limits.

pub mod answer;
pub mod choice;
pub mod clip;
pub mod env;
pub mod generate;
pub mod machine;
pub mod oracle;
pub mod progress;
pub mod rescore;
pub mod reward;
pub mod rng;
pub mod schema;
pub mod task;
pub mod tools;

/// What [`choices!`] expands to refers to these; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
}

pub use choice::{Choice, UnknownChoice};
pub use env::{BoxFuture, Environment, EpisodeSpec, EpisodeState, Export, StartError, StepOutcome};
pub use oracle::{Answered, Oracle, OracleMove};
pub use rescore::{EpisodeRecord, RecordedCall, RescoreError, Rescored};
pub use reward::Reward;
pub use task::{Split, TaskFamily, TaskFileError, TaskSet, parse_family_id};
pub use tools::{Effect, NoArguments, ToolTable};
