//! OpenEnv's wire shapes: what `reset` and `step` take, the observation envelope they answer,
//! and the errors, each a sentence saying what to send instead.
//!
//! The envelope is OpenEnv's `serialize_observation`: `{"observation": {…, "metadata"},
//! "reward", "done", "metadata"}`, with reward and done at the top level only.

use axum::http::StatusCode;
use rmcp::model::JsonObject;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::env::{Environment, StartError};
use crate::episode::EpisodeStatus;
use crate::hub::{EpisodeCreated, HubError};
use crate::step::StepRecord;
use crate::task::Split;

/// The reset parameters OpenEnv's `ResetRequest` carries (`seed`, `episode_id`) and the
/// extras mcpgym reads from it: `task`, or `split` with `index` (OpenEnv's task API), and
/// `options`. Anything else is refused: a misspelt `task` must not silently start a random one.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResetParams {
    /// The seed.
    pub seed: Option<u64>,
    /// The caller's label for the episode; mcpgym names episodes itself and echoes this back
    /// in the metadata as `episode_label`.
    pub episode_id: Option<String>,
    /// A task id.
    pub task: Option<String>,
    /// The split to draw a task from (or to index into).
    pub split: Option<Split>,
    /// The task's position in the split's task list (`GET /tasks?env=&split=`).
    pub index: Option<usize>,
    /// Environment-specific options.
    pub options: Option<JsonObject>,
}

/// The longest `episode_id` label OpenEnv accepts.
const LABEL_LIMIT: usize = 255;

impl ResetParams {
    /// Reads reset parameters from a JSON object (`null` or nothing means defaults).
    pub fn parse(value: Value) -> Result<Self, DoorError> {
        if value.is_null() {
            return Ok(Self::default());
        }
        let params: Self = serde_json::from_value(value).map_err(|error| {
            DoorError::Invalid(format!(
                "invalid reset parameters ({error}); reset takes seed, episode_id, task, split, index and options, e.g. {{\"seed\": 7}} or {{\"split\": \"test\", \"index\": 3}}"
            ))
        })?;
        if params
            .episode_id
            .as_ref()
            .is_some_and(|label| label.chars().count() > LABEL_LIMIT)
        {
            return Err(DoorError::Invalid(format!(
                "episode_id is a label of at most {LABEL_LIMIT} characters"
            )));
        }
        if params.task.is_some() && params.index.is_some() {
            return Err(DoorError::Invalid(
                "give either task or index (with split), not both".into(),
            ));
        }
        Ok(params)
    }
}

/// One OpenEnv step action: MCP's `list_tools` or `call_tool`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// `{"type": "list_tools"}`
    ListTools {
        /// Ignored.
        #[serde(default)]
        #[allow(dead_code)]
        metadata: Option<Value>,
    },
    /// `{"type": "call_tool", "tool_name", "arguments"}`
    CallTool {
        /// The tool.
        tool_name: String,
        /// Its arguments.
        #[serde(default)]
        arguments: Option<JsonObject>,
        /// Read for `idempotency_key` (a string): a retried step with the same key gets the
        /// first answer and plays nothing. The rest is ignored.
        #[serde(default)]
        metadata: Option<Value>,
    },
}

impl Action {
    /// Reads an action, naming the environment's tools when it is not one.
    pub fn parse(value: Value, env: &dyn Environment) -> Result<Self, DoorError> {
        serde_json::from_value(value).map_err(|error| {
            let example = env
                .tools()
                .first()
                .map_or("guess", |tool| tool.name.as_ref());
            DoorError::Invalid(format!(
                "the action is not one this environment takes ({error}); send {{\"type\": \"call_tool\", \"tool_name\": \"{example}\", \"arguments\": {{…}}}} or {{\"type\": \"list_tools\"}}"
            ))
        })
    }
}

/// Why an OpenEnv request failed. Each message is a sentence the caller can act on.
#[derive(Debug, thiserror::Error)]
pub enum DoorError {
    /// The request was malformed.
    #[error("{0}")]
    Invalid(String),
    /// A step came before any reset.
    #[error(
        "no episode is running here yet: send a reset first (e.g. {{\"type\": \"reset\", \"data\": {{\"seed\": 7}}}})"
    )]
    NoEpisode,
    /// The hub refused.
    #[error(transparent)]
    Hub(#[from] HubError),
}

impl DoorError {
    /// OpenEnv's WebSocket error code for it.
    pub fn ws_code(&self) -> &'static str {
        match self {
            DoorError::Invalid(_) => "VALIDATION_ERROR",
            DoorError::NoEpisode => "SESSION_ERROR",
            DoorError::Hub(error) => match error {
                HubError::Full(_) | HubError::EnvFull { .. } => "CAPACITY_REACHED",
                HubError::UnknownEpisode(_)
                | HubError::Misrouted { .. }
                | HubError::Closed { .. } => "SESSION_ERROR",
                HubError::UnknownEnv { .. }
                | HubError::EnvRequired(_)
                | HubError::UnknownTask { .. }
                | HubError::SplitMismatch { .. }
                | HubError::EmptySplit { .. }
                | HubError::NoTaskAtLevels { .. }
                | HubError::UnknownTool { .. }
                | HubError::Start(StartError::InvalidOptions(_)) => "VALIDATION_ERROR",
                _ => "EXECUTION_ERROR",
            },
        }
    }

    /// The HTTP status for it.
    pub fn status(&self) -> StatusCode {
        match self {
            DoorError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            DoorError::NoEpisode => StatusCode::BAD_REQUEST,
            DoorError::Hub(error) => match error {
                HubError::Full(_)
                | HubError::EnvFull { .. }
                | HubError::Start(StartError::Unavailable(_)) => StatusCode::SERVICE_UNAVAILABLE,
                HubError::UnknownEpisode(_) => StatusCode::NOT_FOUND,
                HubError::Misrouted { .. } => StatusCode::MISDIRECTED_REQUEST,
                HubError::Closed { .. } => StatusCode::CONFLICT,
                HubError::UnknownTask { .. }
                | HubError::SplitMismatch { .. }
                | HubError::EmptySplit { .. }
                | HubError::NoTaskAtLevels { .. }
                | HubError::Start(StartError::InvalidOptions(_)) => {
                    StatusCode::UNPROCESSABLE_ENTITY
                }
                _ => StatusCode::BAD_REQUEST,
            },
        }
    }
}

/// An observation envelope: the observation (with its metadata), reward and done beside it,
/// and the metadata again at the top level when there is any (as OpenEnv puts it).
fn envelope(
    mut observation: Map<String, Value>,
    reward: Value,
    done: bool,
    metadata: Map<String, Value>,
) -> Value {
    observation.insert("metadata".into(), Value::Object(metadata.clone()));
    let mut envelope = Map::new();
    envelope.insert("observation".into(), Value::Object(observation));
    envelope.insert("reward".into(), reward);
    envelope.insert("done".into(), Value::Bool(done));
    if !metadata.is_empty() {
        envelope.insert("metadata".into(), Value::Object(metadata));
    }
    Value::Object(envelope)
}

/// What `reset` answers: the prompt the agent is given and the new episode's id (also in the
/// metadata as `episode_id`, so a trainer can read `GET /episodes/{id}`).
pub fn reset_envelope(created: &EpisodeCreated, prompt: String, label: Option<&str>) -> Value {
    let mut metadata = Map::new();
    metadata.insert("episode_id".into(), json!(created.id));
    metadata.insert("env".into(), json!(created.env));
    metadata.insert("task".into(), json!(created.task));
    metadata.insert("seed".into(), json!(created.seed));
    if let Some(label) = label {
        metadata.insert("episode_label".into(), json!(label));
    }
    let mut observation = Map::new();
    observation.insert("prompt".into(), json!(prompt));
    observation.insert("episode_id".into(), json!(created.id));
    observation.insert("env".into(), json!(created.env));
    observation.insert("task".into(), json!(created.task));
    observation.insert("seed".into(), json!(created.seed));
    envelope(observation, Value::Null, false, metadata)
}

/// The metadata of a step that ran: the episode, the turn, and the ledger.
fn step_metadata(step: &StepRecord) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("episode_id".into(), json!(step.episode));
    metadata.insert("turn".into(), json!(step.turn));
    metadata.insert("reward_components".into(), json!(step.reward_components));
    metadata.insert("return".into(), json!(step.return_));
    metadata.insert("truncated".into(), json!(step.truncated));
    metadata
}

/// The tool result as OpenEnv's MCP environments dump it (fastmcp's `CallToolResult`, snake
/// case): MCP content blocks, images included as `{type: "image", data, mimeType}`. `data`
/// (fastmcp's parsed structured output) is present only when the tool returned structure.
pub fn tool_result(step: &StepRecord) -> Value {
    let mut result = Map::new();
    result.insert("content".into(), json!(step.content));
    result.insert(
        "structured_content".into(),
        step.structured.clone().unwrap_or(Value::Null),
    );
    result.insert("meta".into(), Value::Null);
    if let Some(structured) = &step.structured {
        result.insert("data".into(), structured.clone());
    }
    result.insert("is_error".into(), json!(step.is_error));
    Value::Object(result)
}

/// What a `call_tool` step answers: OpenEnv's `CallToolObservation` with the step's reward and
/// done. A refused move is an ordinary observation with `is_error` true (the model must see
/// it); `error` is for calls that never reached the environment.
pub fn call_envelope(tool: &str, step: &StepRecord) -> Value {
    let mut observation = Map::new();
    observation.insert("tool_name".into(), json!(tool));
    observation.insert("result".into(), tool_result(step));
    observation.insert("error".into(), Value::Null);
    envelope(
        observation,
        json!(step.reward),
        step.done,
        step_metadata(step),
    )
}

/// A `call_tool` that never ran (an unknown tool): `error` says why; no reward, no turn used.
pub fn call_error_envelope(
    tool: &str,
    error_type: &str,
    message: String,
    status: &EpisodeStatus,
) -> Value {
    let mut observation = Map::new();
    observation.insert("tool_name".into(), json!(tool));
    observation.insert("result".into(), Value::Null);
    observation.insert(
        "error".into(),
        json!({ "error_type": error_type, "message": message }),
    );
    let mut metadata = Map::new();
    metadata.insert("episode_id".into(), json!(status.id));
    metadata.insert("turn".into(), json!(status.turn));
    metadata.insert("return".into(), json!(status.return_));
    metadata.insert("truncated".into(), json!(status.truncated));
    envelope(observation, Value::Null, status.done, metadata)
}

/// The environment's tools as OpenEnv's `Tool` model has them (`input_schema`, snake case).
pub fn tool_list(env: &dyn Environment) -> Vec<Value> {
    env.tools()
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description.as_deref().unwrap_or_default(),
                "input_schema": Value::Object((*tool.input_schema).clone()),
            })
        })
        .collect()
}

/// What a `list_tools` step answers.
pub fn list_tools_envelope(env: &dyn Environment, status: Option<&EpisodeStatus>) -> Value {
    let mut observation = Map::new();
    observation.insert("tools".into(), json!(tool_list(env)));
    let mut metadata = Map::new();
    if let Some(status) = status {
        metadata.insert("episode_id".into(), json!(status.id));
    }
    envelope(
        observation,
        Value::Null,
        status.is_some_and(|s| s.done),
        metadata,
    )
}

/// OpenEnv's `State`: `episode_id` and `step_count`, plus the episode's public state (env,
/// task, seed, return, done, truncated, and what it reveals once done). Before any reset:
/// no episode and no steps.
pub fn state(env: &dyn Environment, status: Option<&EpisodeStatus>) -> Value {
    let Some(status) = status else {
        return json!({ "episode_id": null, "step_count": 0, "env": env.name() });
    };
    let mut state = match serde_json::to_value(status) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    state.remove("id");
    let mut out = Map::new();
    out.insert("episode_id".into(), json!(status.id));
    out.insert("step_count".into(), json!(status.turn));
    out.extend(state);
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_parameters_are_checked() {
        let params = ResetParams::parse(json!({"seed": 7, "episode_id": "run-1"})).unwrap();
        assert_eq!(params.seed, Some(7));
        assert_eq!(params.episode_id.as_deref(), Some("run-1"));
        assert!(ResetParams::parse(Value::Null).unwrap().seed.is_none());
        let error = ResetParams::parse(json!({"taks": "x"}))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("taks") && error.contains("reset takes"),
            "{error}"
        );
        let error = ResetParams::parse(json!({"seed": -1}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("invalid reset parameters"), "{error}");
        let error = ResetParams::parse(json!({"task": "a", "index": 1}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("not both"), "{error}");
        let error = ResetParams::parse(json!({"split": "validation"}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("train"), "{error}");
        let long = "x".repeat(256);
        assert!(ResetParams::parse(json!({ "episode_id": long })).is_err());
    }
}
