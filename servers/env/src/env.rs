//! What an environment author implements.

use std::future::Future;
use std::pin::Pin;

use rmcp::model::{ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::reward::Reward;
use crate::rng::EpisodeRng;
use crate::task::TaskSet;

/// A boxed, sendable future: what environments return from their async hooks.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How one episode starts: its task, its seed and any per-episode options.
#[derive(Debug, Clone)]
pub struct EpisodeSpec {
    /// The task id (always one of the environment's [`TaskSet`]).
    pub task: String,
    /// The episode's seed; the same task and seed give the same episode.
    pub seed: u64,
    /// Options given when the episode was created (`POST /episodes {"options": ...}`).
    pub options: JsonObject,
}

impl EpisodeSpec {
    /// The episode's own random generator, seeded from the spec.
    pub fn rng(&self) -> EpisodeRng {
        EpisodeRng::new(self.seed)
    }

    /// The episode's options as the environment's typed struct `T` (declare it with
    /// `#[serde(deny_unknown_fields)]` and every field optional). When they do not fit, the
    /// error names what was wrong and lists every option `T` allows with its values, read
    /// from `T`'s schema; `label` names the environment in that sentence.
    pub fn options<T: DeserializeOwned + JsonSchema>(&self, label: &str) -> Result<T, StartError> {
        serde_json::from_value(Value::Object(self.options.clone())).map_err(|error| {
            StartError::InvalidOptions(format!(
                "invalid {label} options ({error}); allowed: {}",
                crate::schema::describe_object::<T>()
            ))
        })
    }
}

/// Why an episode could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The options were not valid for this environment; the message says what to change.
    #[error("{0}")]
    InvalidOptions(String),
    /// A resource the episode needs (a kernel, a display) could not be had.
    #[error("{0}")]
    Unavailable(String),
}

/// One environment: its tasks, its tools, and how an episode starts.
pub trait Environment: Send + Sync + 'static {
    /// The environment's name, as used in `POST /episodes {"env": ...}` and `/<env>/mcp`.
    fn name(&self) -> &'static str;

    /// A sentence or two for clients (the MCP server's instructions).
    fn instructions(&self) -> &str;

    /// The task ids, by split.
    fn tasks(&self) -> &TaskSet;

    /// The tools the agent may call, with their schemas. Built once; called on every
    /// `tools/list`.
    fn tools(&self) -> &[Tool];

    /// The turn limit when `--max-turns` is not given.
    fn default_max_turns(&self) -> u32;

    /// The most live episodes of this environment a server holds when `--max-episodes`
    /// names no limit for it: sized from the machine for environments that hold a kernel or a
    /// display (see [`crate::machine`]), `None` (only the server's total) for light ones.
    fn default_max_episodes(&self) -> Option<usize> {
        None
    }

    /// The names of the documents its episodes export (see [`EpisodeState::export`]).
    fn exports(&self) -> &[&'static str] {
        &[]
    }

    /// Whether tool calls may send progress notifications (a sandbox starting, a long cell).
    /// When they may, a stateless call that asks for progress is answered as an event stream.
    fn reports_progress(&self) -> bool {
        false
    }

    /// Whether an episode is rebuilt exactly by starting it again from the same task, seed
    /// and options and making the same calls: then a server that restarts resumes it from its
    /// trajectory file. An environment whose episodes hold what calls alone do not decide (a
    /// kernel's clock, a display's timing) says no, and its episodes are marked aborted with
    /// [`Environment::lost_on_restart`].
    fn resumable(&self) -> bool {
        false
    }

    /// Why an unfinished episode ended when the server restarted, for one that is not
    /// [`resumable`](Environment::resumable).
    fn lost_on_restart(&self) -> &'static str {
        "the server restarted; this episode's state was lost"
    }

    /// The prompt an episode of `task` hands over ([`EpisodeState::prompt`]), known without
    /// starting one: what task exports and trajectory exports show the agent was asked.
    /// `None` when the instructions say everything. An environment whose episodes give a
    /// prompt overrides this; the prompt must not depend on the seed.
    fn task_prompt(&self, task: &str) -> Option<String> {
        let _ = task;
        None
    }

    /// The reference solution of `task`, for `mcpgym eval --policy oracle`: `None` when the
    /// environment has none for it (the evaluation then reports the task as having no oracle).
    fn oracle(&self, task: &str) -> Option<Box<dyn crate::oracle::Oracle>> {
        let _ = task;
        None
    }

    /// Grades a finished episode of this environment again from its record (`mcpgym
    /// rescore`): by replaying its calls (the default, right when calls alone decide the
    /// reward), or from what its grader read when it ended ([`EpisodeState::graded`]).
    fn rescore<'a>(
        &'a self,
        record: &'a crate::rescore::EpisodeRecord,
    ) -> BoxFuture<'a, Result<crate::rescore::Rescored, crate::rescore::RescoreError>> {
        let _ = record;
        Box::pin(async { Ok(crate::rescore::Rescored::ByReplay) })
    }

    /// Starts an episode. The spec's task is guaranteed to be one of [`Environment::tasks`].
    fn start<'a>(
        &'a self,
        spec: &'a EpisodeSpec,
    ) -> BoxFuture<'a, Result<Box<dyn EpisodeState>, StartError>>;
}

/// What the agent is asked in an episode: the environment's instructions, then the task's
/// prompt when it has one. One wording for every door that hands it over and every export.
pub fn full_prompt(instructions: &str, prompt: Option<&str>) -> String {
    match prompt {
        Some(prompt) => format!("{instructions}\n\nTask: {prompt}"),
        None => instructions.to_owned(),
    }
}

/// What a call on a finished episode is answered, unless its environment says otherwise
/// ([`EpisodeState::over_message`]).
pub const OVER_MESSAGE: &str = "The episode is over; start a new episode.";

/// The state of one running episode: what each tool does to it.
pub trait EpisodeState: Send + 'static {
    /// Runs one tool call. `tool` is always one of the environment's tools; the arguments are
    /// as the client sent them, so validate them (see [`parse_arguments`]).
    fn call<'a>(&'a mut self, tool: &'a str, arguments: JsonObject) -> BoxFuture<'a, StepOutcome>;

    /// What becomes public once the episode is done (e.g. `{"answer": "crane"}`). Never shown
    /// before.
    fn reveal(&self) -> JsonObject {
        JsonObject::new()
    }

    /// The task's prompt, for doors that hand it over before the first call (OpenEnv's reset
    /// observation, ORS's `/prompt`). Marks it shown, so the first observation need not repeat
    /// it. `None` when the environment's instructions say everything.
    fn prompt(&mut self) -> Option<String> {
        None
    }

    /// Called once when the turn limit ends the episode, after its last call: a sentence for
    /// the last observation (e.g. the answer) and terminal components to pay (an environment
    /// graded by its final state grades it here). Also the place to stop work in progress.
    fn finish_at_turn_limit(&mut self) -> BoxFuture<'_, (Option<String>, Vec<Reward>)> {
        Box::pin(async { (None, Vec::new()) })
    }

    /// A document the episode offers on the control plane at `GET /episodes/{id}/{name}`
    /// (e.g. `notebook`), or `None` when it has no such document.
    fn export(&self, name: &str) -> Option<Export> {
        let _ = name;
        None
    }

    /// What the grader read when the episode ended (files, window titles, an answer's
    /// context), kept in the trajectory's end record so that [`Environment::rescore`] can
    /// grade it again offline; at most [`GRADED_BUDGET`](crate::rescore::GRADED_BUDGET) bytes
    /// of content. Taken once, when the episode is done; `None` when nothing is kept.
    fn graded(&self) -> Option<Value> {
        None
    }

    /// The error every call gets once the episode is done.
    fn over_message(&self) -> &str {
        OVER_MESSAGE
    }

    /// Releases what the episode holds (a kernel, a display). Called exactly once: when the
    /// episode finishes (after [`EpisodeState::export`], [`EpisodeState::reveal`] and
    /// [`EpisodeState::prompt`] have been kept for its readers), or when it is closed or
    /// reaped before that.
    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

/// A document an episode exports (a notebook, a screenshot archive).
#[derive(Debug, Clone)]
pub struct Export {
    /// Its media type, e.g. `application/x-ipynb+json`.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: Vec<u8>,
}

/// What a tool call did: the observation, the rewards it earned, and whether it ended the
/// episode.
#[derive(Debug, Clone, Default)]
pub struct StepOutcome {
    /// The observation the model sees.
    pub content: Vec<ContentBlock>,
    /// The observation's structure, matching the tool's output schema.
    pub structured: Option<Value>,
    /// Whether the call was refused (a bad argument or an illegal move).
    pub is_error: bool,
    /// Components paid for this step.
    pub rewards: Vec<Reward>,
    /// `Some` when this call ended the episode; holds the terminal components (paid once).
    pub finished: Option<Vec<Reward>>,
    /// Whether the environment itself failed (a display or kernel died) so the episode cannot
    /// go on: it ends as `aborted`, paying nothing more, and trainers can tell it from an agent
    /// that failed.
    pub aborted: bool,
}

impl StepOutcome {
    /// A successful observation.
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            ..Self::default()
        }
    }

    /// A refused call: the sentence tells the model what was wrong and what to do.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            is_error: true,
            ..Self::default()
        }
    }

    /// The environment failed and the episode cannot go on; the sentence says what happened.
    /// The episode ends as `aborted` (no terminal reward is paid).
    pub fn abort(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            is_error: true,
            aborted: true,
            ..Self::default()
        }
    }

    /// Adds structured content.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// Adds a reward component for this step.
    pub fn with_reward(mut self, reward: Reward) -> Self {
        self.rewards.push(reward);
        self
    }

    /// The observation's text parts, joined by newlines (images and other parts left out).
    pub fn text(&self) -> String {
        text_of(&self.content)
    }

    /// Marks the episode finished, with its terminal reward components.
    pub fn finish(mut self, terminal: Vec<Reward>) -> Self {
        self.finished = Some(terminal);
        self
    }
}

/// The text parts of an observation, joined by newlines (images and other parts left out).
pub fn text_of(content: &[ContentBlock]) -> String {
    let parts: Vec<&str> = content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect();
    parts.join("\n")
}

/// Deserializes a tool's arguments, or explains to the model what was wrong with them.
///
/// `example` is a valid argument object shown in the message, e.g. `{"word": "crane"}`.
pub fn parse_arguments<T: DeserializeOwned>(
    tool: &str,
    arguments: JsonObject,
    example: &str,
) -> Result<T, StepOutcome> {
    serde_json::from_value(Value::Object(arguments)).map_err(|error| {
        StepOutcome::error(format!(
            "Invalid arguments for {tool}: {error}. Call it like this: {example}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        word: String,
    }

    #[test]
    fn bad_arguments_explain_themselves() {
        let mut args = JsonObject::new();
        args.insert("word".into(), 5.into());
        let err = parse_arguments::<Args>("guess", args, r#"{"word": "crane"}"#).unwrap_err();
        assert!(err.is_error);
        let text = format!("{:?}", err.content);
        assert!(text.contains("Invalid arguments for guess"), "{text}");
        assert!(text.contains("expected a string"), "{text}");
    }
}
