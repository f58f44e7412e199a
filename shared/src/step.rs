//! The step record every door speaks from: one tool call's observation, reward and flags,
//! read once from the result the episode produced.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::META_STEP;

/// One tool call as trainers see it, whatever the protocol. `POST /episodes/{id}/call`
/// answers it as is; OpenEnv and ORS turn it into their own shapes.
#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    /// The episode id.
    pub episode: String,
    /// Tool calls made so far, this one included.
    pub turn: u32,
    /// The observation as the model sees it: MCP content blocks (`text`, `image`).
    pub content: Vec<ContentBlock>,
    /// The observation's structure, when the tool has an output schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// Whether the call was refused (a bad argument, an illegal move, a finished episode).
    pub is_error: bool,
    /// What this step paid.
    pub reward: f64,
    /// This step's reward by component.
    pub reward_components: Map<String, Value>,
    /// The sum of every step's reward so far.
    #[serde(rename = "return")]
    pub return_: f64,
    /// Whether the episode is over.
    pub done: bool,
    /// Whether it ended at the turn limit.
    pub truncated: bool,
}

impl StepRecord {
    /// Reads the record from a tool result the hub produced (its `_meta` holds the step).
    pub fn from_result(result: CallToolResult) -> Self {
        let step = result
            .meta
            .as_ref()
            .and_then(|meta| meta.0.get(META_STEP))
            .cloned()
            .unwrap_or(Value::Null);
        Self {
            episode: step["episode"].as_str().unwrap_or_default().to_owned(),
            turn: step["turn"]
                .as_u64()
                .and_then(|t| u32::try_from(t).ok())
                .unwrap_or(0),
            content: result.content,
            structured: result.structured_content,
            is_error: result.is_error == Some(true),
            reward: step["reward"].as_f64().unwrap_or(0.0),
            reward_components: step["reward_components"]
                .as_object()
                .cloned()
                .unwrap_or_default(),
            return_: step["return"].as_f64().unwrap_or(0.0),
            done: step["done"].as_bool().unwrap_or(false),
            truncated: step["truncated"].as_bool().unwrap_or(false),
        }
    }

    /// The observation's text parts, joined by newlines.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for block in &self.content {
            if let Some(part) = block.as_text() {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&part.text);
            }
        }
        text
    }

    /// The observation's images: base64 data and media type.
    pub fn images(&self) -> impl Iterator<Item = (&str, &str)> {
        self.content
            .iter()
            .filter_map(ContentBlock::as_image)
            .map(|image| (image.data.as_str(), image.mime_type.as_str()))
    }
}
