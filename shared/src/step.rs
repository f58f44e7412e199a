//! The typed step record: what one tool call did, as every transport and door reports it.
//! The episode produces it; the MCP edge turns it into a tool result with its `_meta` here, in
//! one place; the control plane answers it as is; OpenEnv and ORS reshape it.

use std::collections::BTreeMap;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{META_EPISODE, META_STEP};

/// One tool call as harnesses and trainers see it, whatever the protocol.
/// `POST /episodes/{id}/call` answers it as JSON; Rust and Python clients parse it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The episode id.
    pub episode: String,
    /// Tool calls made so far, this one included.
    pub turn: u32,
    /// The observation as the model sees it: MCP content blocks (`text`, `image`).
    pub content: Vec<ContentBlock>,
    /// The observation's structure, when the tool has an output schema (successes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// Whether the call was refused (a bad argument, an illegal move, a finished episode).
    pub is_error: bool,
    /// What this step paid.
    pub reward: f64,
    /// This step's reward by component.
    pub reward_components: BTreeMap<String, f64>,
    /// The sum of every step's reward so far.
    #[serde(rename = "return")]
    pub return_: f64,
    /// Whether the episode is over.
    pub done: bool,
    /// Whether it ended at the turn limit.
    pub truncated: bool,
    /// Whether it ended because the environment failed (a display or kernel died), not because
    /// of the agent: a trainer should drop such an episode rather than learn from its return.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
}

/// The step information under `_meta["mcpgym/step"]`: the record without the observation.
#[derive(Serialize)]
struct StepMeta<'a> {
    episode: &'a str,
    turn: u32,
    reward: f64,
    reward_components: &'a BTreeMap<String, f64>,
    #[serde(rename = "return")]
    return_: f64,
    done: bool,
    truncated: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    aborted: bool,
}

impl StepRecord {
    /// The `_meta` of the tool result: the episode id under [`META_EPISODE`] and the step
    /// information under [`META_STEP`].
    pub fn meta(&self) -> MetaObject {
        let step = StepMeta {
            episode: &self.episode,
            turn: self.turn,
            reward: self.reward,
            reward_components: &self.reward_components,
            return_: self.return_,
            done: self.done,
            truncated: self.truncated,
            aborted: self.aborted,
        };
        let mut meta = JsonObject::new();
        meta.insert(META_EPISODE.into(), Value::String(self.episode.clone()));
        meta.insert(
            META_STEP.into(),
            serde_json::to_value(step).unwrap_or(Value::Null),
        );
        MetaObject(meta)
    }

    /// The MCP tool result: the observation, its structure on success, the step in `_meta`.
    pub fn into_call_result(self) -> CallToolResult {
        let meta = self.meta();
        let mut result = if self.is_error {
            CallToolResult::error(self.content)
        } else {
            CallToolResult::success(self.content)
        };
        // Structured content must match the output schema, which describes successes only.
        if !self.is_error {
            result.structured_content = self.structured;
        }
        result.meta = Some(meta);
        result
    }

    /// The observation's text parts, joined by newlines.
    pub fn text(&self) -> String {
        crate::env::text_of(&self.content)
    }

    /// The observation's images: base64 data and media type.
    pub fn images(&self) -> impl Iterator<Item = (&str, &str)> {
        self.content
            .iter()
            .filter_map(ContentBlock::as_image)
            .map(|image| (image.data.as_str(), image.mime_type.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record() -> StepRecord {
        StepRecord {
            episode: "e1".into(),
            turn: 3,
            content: vec![
                ContentBlock::text("board"),
                ContentBlock::image("iVBO", "image/png"),
            ],
            structured: Some(json!({"solved": true})),
            is_error: false,
            reward: 1.3,
            reward_components: [("win".to_owned(), 1.0), ("efficiency".to_owned(), 0.3)].into(),
            return_: 1.3,
            done: true,
            truncated: false,
            aborted: false,
        }
    }

    #[test]
    fn meta_holds_the_step_without_the_observation() {
        let meta = record().meta();
        assert_eq!(meta.0[META_EPISODE], "e1");
        assert_eq!(
            meta.0[META_STEP],
            json!({"episode": "e1", "turn": 3, "reward": 1.3,
                   "reward_components": {"efficiency": 0.3, "win": 1.0},
                   "return": 1.3, "done": true, "truncated": false})
        );
        let mut aborted = record();
        aborted.aborted = true;
        assert_eq!(aborted.meta().0[META_STEP]["aborted"], true);
    }

    #[test]
    fn a_record_round_trips_and_reads_as_text_and_images() {
        let step = record();
        let json = serde_json::to_value(&step).unwrap();
        assert!(json.get("aborted").is_none());
        let back: StepRecord = serde_json::from_value(json).unwrap();
        assert_eq!(back, step);
        assert_eq!(step.text(), "board");
        assert_eq!(step.images().collect::<Vec<_>>(), [("iVBO", "image/png")]);
    }

    #[test]
    fn a_refusal_carries_no_structure() {
        let mut step = record();
        step.is_error = true;
        let result = step.into_call_result();
        assert_eq!(result.is_error, Some(true));
        assert!(result.structured_content.is_none());
        assert!(result.meta.is_some());
    }
}
