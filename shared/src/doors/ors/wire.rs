//! ORS wire shapes: request bodies, content blocks, tool specs, tool outputs and errors.
//!
//! Request bodies are read leniently (unknown fields are ignored) because the two SDKs differ:
//! ors-sdk sends `secrets` in `/create`, openreward sends `toolset_name` (and `env` in
//! `/create_session`); each SDK's own server rejects the other's field.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rmcp::model::{ContentBlock, JsonObject, ResourceContents, Tool};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::env::StartError;
use crate::hub::HubError;
use crate::step::StepRecord;
use crate::task::Split;

/// An ORS error response: `{"detail": "sentence"}`, the shape both SDKs read their message
/// from.
#[derive(Debug)]
pub(super) struct OrsError {
    status: StatusCode,
    message: String,
}

impl OrsError {
    /// An error with this status and sentence.
    pub(super) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// A 400 with this sentence.
    pub(super) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
}

impl IntoResponse for OrsError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "detail": self.message }))).into_response()
    }
}

impl From<HubError> for OrsError {
    fn from(error: HubError) -> Self {
        let status = match &error {
            HubError::UnknownEnv { .. } => StatusCode::NOT_FOUND,
            // The session's episode was deleted or reaped: the session is gone.
            HubError::UnknownEpisode(_) | HubError::Closed { .. } => StatusCode::GONE,
            HubError::Misrouted { .. } => StatusCode::MISDIRECTED_REQUEST,
            HubError::Full(_)
            | HubError::EnvFull { .. }
            | HubError::Start(StartError::Unavailable(_)) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::BAD_REQUEST,
        };
        Self::new(status, error.to_string())
    }
}

/// Parses a JSON body, or says what was wrong and what to send instead.
pub(super) fn parse_body<T: DeserializeOwned>(
    body: &[u8],
    what: &str,
    example: &str,
) -> Result<T, OrsError> {
    serde_json::from_slice(body).map_err(|error| {
        OrsError::bad_request(format!(
            "the body is not a valid {what} ({error}); send JSON like {example}"
        ))
    })
}

/// A split name as ORS sends it; mcpgym has `train` and `test`.
pub(super) fn parse_split(name: &str) -> Result<Split, OrsError> {
    name.parse().map_err(|_| {
        OrsError::bad_request(format!(
            "Invalid split {name:?}: this environment has the splits \"train\" and \"test\""
        ))
    })
}

/// `POST /{env}/tasks` and `/{env}/num_tasks` body.
#[derive(Debug, Deserialize)]
pub(super) struct SplitBody {
    /// The split's name.
    pub split: String,
}

/// `POST /{env}/task` body.
#[derive(Debug, Deserialize)]
pub(super) struct TaskBody {
    /// The split's name.
    pub split: String,
    /// The task's index in the split (negative counts from the end, as in Python).
    pub index: i64,
}

/// `POST /{env}/task_range` body.
#[derive(Debug, Deserialize)]
pub(super) struct TaskRangeBody {
    /// The split's name.
    pub split: String,
    /// First index (inclusive); Python slice rules.
    pub start: Option<i64>,
    /// Last index (exclusive); Python slice rules.
    pub stop: Option<i64>,
}

/// `POST /create` body. `secrets` (ors-sdk) and `toolset_name` (openreward) are accepted and
/// ignored: mcpgym's environments take no secrets and have no toolsets.
#[derive(Debug, Deserialize)]
pub(super) struct CreateBody {
    /// The environment; optional when it can be told otherwise.
    pub env_name: Option<String>,
    /// A task object as `/tasks` lists it: `{"id", "seed"?, "options"?}`.
    pub task_spec: Option<Value>,
    /// With `index`: the index-th task of this split.
    pub split: Option<String>,
    /// With `split`.
    pub index: Option<i64>,
}

/// What a task object may carry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TaskSpec {
    /// The task id.
    pub id: String,
    /// The episode's seed; random when left out.
    pub seed: Option<u64>,
    /// Environment-specific options.
    pub options: Option<JsonObject>,
}

/// `POST /{env}/call` body.
#[derive(Debug, Deserialize)]
pub(super) struct CallBody {
    /// The tool.
    pub name: String,
    /// Its arguments.
    #[serde(default)]
    pub input: Option<Value>,
    /// Set when resuming a call whose stream broke.
    pub task_id: Option<String>,
}

/// A task as ORS lists it: its id only (what a task hides stays in the environment).
pub(super) fn task_object(id: &str) -> Value {
    json!({ "id": id })
}

/// The index-th element of `len` elements, Python style (`-1` is the last).
pub(super) fn python_index(index: i64, len: u64) -> Option<u64> {
    let len = i64::try_from(len).ok()?;
    let index = if index < 0 { index + len } else { index };
    (0..len).contains(&index).then_some(index as u64)
}

/// `range(start, stop)` clamped to `len` elements, Python slice style.
pub(super) fn python_range(start: Option<i64>, stop: Option<i64>, len: u64) -> (u64, u64) {
    let total = i64::try_from(len).unwrap_or(i64::MAX);
    let clamp = |value: i64| {
        let value = if value < 0 {
            (total + value).max(0)
        } else {
            value
        };
        value.min(total) as u64
    };
    let (start, stop) = (clamp(start.unwrap_or(0)), clamp(stop.unwrap_or(total)));
    (start, stop.max(start))
}

/// `ListToolsOutput`: `{tools: [{name, description, input_schema}]}`.
pub(super) fn tool_list(tools: &[Tool]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description.as_deref().unwrap_or_default(),
                "input_schema": &*tool.input_schema,
            })
        })
        .collect();
    json!({ "tools": tools })
}

/// A `TextBlock`.
pub(super) fn text_block(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// MCP content as ORS blocks: text stays text, images stay images (base64 and media type).
pub(super) fn blocks(content: &[ContentBlock]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|block| {
            if let Some(text) = block.as_text() {
                Some(text_block(&text.text))
            } else if let Some(image) = block.as_image() {
                Some(json!({ "type": "image", "data": image.data, "mimeType": image.mime_type }))
            } else if let Some(resource) = block.as_resource() {
                match &resource.resource {
                    ResourceContents::TextResourceContents { text, .. } => Some(text_block(text)),
                    ResourceContents::BlobResourceContents {
                        blob,
                        mime_type: Some(mime),
                        ..
                    } if mime.starts_with("image/") => {
                        Some(json!({ "type": "image", "data": blob, "mimeType": mime }))
                    }
                    ResourceContents::BlobResourceContents { uri, .. } => {
                        Some(text_block(&format!("[binary resource {uri}]")))
                    }
                    _ => None,
                }
            } else {
                None
            }
        })
        .collect()
}

/// The `RunToolOutput` of a step: `{ok: true, output: ToolOutput}`. A refused call (an illegal
/// move) is still a success here, so the model reads the refusal.
pub(super) fn tool_output(step: &StepRecord) -> Value {
    json!({
        "ok": true,
        "output": {
            "blocks": blocks(&step.content),
            "metadata": {
                "episode_id": step.episode,
                "turn": step.turn,
                "reward_components": step.reward_components,
                "return": step.return_,
                "truncated": step.truncated,
                "is_error": step.is_error,
            },
            "reward": step.reward,
            "finished": step.done,
        },
    })
}

/// Why a tool was not run, as openreward names it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Refusal {
    /// No such tool.
    NotFound,
    /// The arguments do not match the tool's schema.
    InputValidation,
    /// The episode is over.
    EpisodeFinished,
}

/// `{ok: false, error, reason}`.
pub(super) fn refusal(reason: Refusal, error: &str) -> Value {
    let reason = match reason {
        Refusal::NotFound => "not_found",
        Refusal::InputValidation => "input_validation",
        Refusal::EpisodeFinished => "episode_finished",
    };
    json!({ "ok": false, "error": error, "reason": reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_indexing() {
        assert_eq!(python_index(0, 3), Some(0));
        assert_eq!(python_index(-1, 3), Some(2));
        assert_eq!(python_index(3, 3), None);
        assert_eq!(python_index(-4, 3), None);
        assert_eq!(python_index(i64::MIN, 3), None);
        assert_eq!(python_range(None, None, 5), (0, 5));
        assert_eq!(python_range(Some(-2), None, 5), (3, 5));
        assert_eq!(python_range(Some(4), Some(2), 5), (4, 4));
        assert_eq!(python_range(Some(-100), Some(100), 5), (0, 5));
        assert_eq!(python_range(Some(i64::MIN), Some(i64::MAX), 5), (0, 5));
    }
}
