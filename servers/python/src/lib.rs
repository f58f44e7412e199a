//! Environments written in Python, served like any other mcpgym environment.
//!
//! The environment is a class deriving `mcpgym.env.Environment` (in the Python package): its
//! tasks, a `reset(task, seed)`, and tools marked `@tool`. [`PythonEnvironment::load`] asks the
//! class for its description once (`python -m mcpgym._worker SPEC --describe`); episodes then
//! run in a fixed set of worker processes ([`pool`]), one instance per episode, spoken to over
//! JSON lines ([`worker`]). A step that raises, runs past the step timeout or makes its worker
//! exit ends that episode as aborted; the other episodes of a stopped worker are rebuilt on a
//! new one by replaying their calls ([`episode`]).

mod episode;
mod pool;
pub mod worker;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcpgym_env::{BoxFuture, Environment, EpisodeSpec, EpisodeState, StartError, TaskSet};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;

use crate::episode::PythonEpisode;
use crate::pool::Pool;
pub use crate::worker::Launch;

/// Why a Python environment could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The interpreter could not be run.
    #[error(
        "cannot run {python} ({error}); give --python-interpreter a Python that has the mcpgym package"
    )]
    Run {
        /// The interpreter.
        python: String,
        /// Why.
        error: std::io::Error,
    },
    /// The worker refused the class; its sentence says why.
    #[error("{spec}: {message}")]
    Refused {
        /// The class.
        spec: String,
        /// What the worker printed.
        message: String,
    },
    /// The description was not what this server reads.
    #[error("{spec}: the worker's description is unreadable ({0}); are the mcpgym binary and Python package the same version?", spec = .1)]
    Description(serde_json::Error, String),
}

/// What the class says of itself (`--describe`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Description {
    name: String,
    instructions: String,
    tasks: Tasks,
    tools: Vec<ToolDescription>,
    max_turns: u32,
    deterministic: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tasks {
    train: Vec<String>,
    test: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ToolDescription {
    name: String,
    description: String,
    input_schema: JsonObject,
}

/// A Python environment class, served from worker processes.
pub struct PythonEnvironment {
    name: &'static str,
    instructions: String,
    tasks: TaskSet,
    tools: Vec<Tool>,
    max_turns: u32,
    deterministic: bool,
    pool: Arc<Pool>,
    next_key: AtomicU64,
}

impl PythonEnvironment {
    /// Reads the class's description and prepares `workers` worker slots (default: one per
    /// core; each worker starts with its first episode). Blocking: it runs the interpreter
    /// once.
    pub fn load(launch: Launch, workers: Option<usize>) -> Result<Self, LoadError> {
        let workers = workers.unwrap_or_else(mcpgym_env::machine::cores);
        let output = launch
            .command(&["--describe"])
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|error| LoadError::Run {
                python: launch.python.display().to_string(),
                error,
            })?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            let message = stderr
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty())
                .unwrap_or("the worker exited without saying why")
                .trim_start_matches("mcpgym: ")
                .to_owned();
            let message = if message.contains("No module named 'mcpgym'") {
                format!(
                    "{} has no mcpgym package: pip install mcpgym into it, or give \
                     --python-interpreter the Python that has it",
                    launch.python.display()
                )
            } else {
                message
            };
            return Err(LoadError::Refused {
                spec: launch.spec.clone(),
                message,
            });
        }
        let description: Description = serde_json::from_slice(&output.stdout)
            .map_err(|error| LoadError::Description(error, launch.spec.clone()))?;
        Ok(Self::from_description(description, launch, workers))
    }

    fn from_description(description: Description, launch: Launch, workers: usize) -> Self {
        let tools = description
            .tools
            .into_iter()
            .map(|tool| {
                let annotations = ToolAnnotations::with_title(tool.name.clone()).open_world(false);
                Tool::new_with_raw(
                    tool.name,
                    Some(tool.description.into()),
                    Arc::new(tool.input_schema),
                )
                .with_annotations(annotations)
            })
            .collect();
        Self {
            // Names live as long as the server; one leak per environment loaded.
            name: Box::leak(description.name.into_boxed_str()),
            instructions: description.instructions,
            tasks: TaskSet::new(description.tasks.train, description.tasks.test),
            tools,
            max_turns: description.max_turns,
            deterministic: description.deterministic,
            pool: Arc::new(Pool::new(launch, workers)),
            next_key: AtomicU64::new(1),
        }
    }

    /// The class this environment serves (`module:Class`).
    pub fn spec(&self) -> &str {
        &self.pool.launch().spec
    }
}

impl Environment for PythonEnvironment {
    fn name(&self) -> &'static str {
        self.name
    }

    fn instructions(&self) -> &str {
        &self.instructions
    }

    fn tasks(&self) -> &TaskSet {
        &self.tasks
    }

    fn tools(&self) -> &[Tool] {
        &self.tools
    }

    fn default_max_turns(&self) -> u32 {
        self.max_turns
    }

    /// A class that says it is deterministic is rebuilt from its calls after a restart.
    fn resumable(&self) -> bool {
        self.deterministic
    }

    fn start<'a>(
        &'a self,
        spec: &'a EpisodeSpec,
    ) -> BoxFuture<'a, Result<Box<dyn EpisodeState>, StartError>> {
        Box::pin(async move {
            let key = self.next_key.fetch_add(1, Ordering::Relaxed);
            let episode = PythonEpisode::start(self.pool.clone(), key, spec, self.name).await?;
            Ok(Box::new(episode) as Box<dyn EpisodeState>)
        })
    }
}
