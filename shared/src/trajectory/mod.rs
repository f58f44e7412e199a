//! Trajectories: one JSON Lines record per tool call, kept with the episode and, with
//! `--trajectory-dir`, appended to `DIR/<episode>.jsonl`.
//!
//! A file is a whole episode: a [`TrajectoryHeader`] first (environment, task, seed,
//! options, turn limit, server version: enough to replay it), one step record per tool call,
//! a [`TrajectoryPrompt`] where the task's prompt was handed over, and a [`TrajectoryEnd`] with the final status and what the environment revealed once the
//! episode is over. Observation images (screenshots, plots) are written beside it as
//! `DIR/<episode>/<turn>-<n>.png`, which the step records name ([`ImagePolicy`] says which
//! are kept). Files are written by one background thread ([`sink`]) so that no tool call waits
//! on the disk; [`file`](mod@file) reads them back.
//!
//! A record holds at most about 64 KiB, however much a call printed or was sent: the
//! observation keeps its first and last 16 KiB ([`OBSERVATION_BUDGET`]), the arguments and the
//! structured content 16 KiB each ([`ARGUMENTS_BUDGET`], [`STRUCTURED_BUDGET`]) with long
//! strings clipped head and tail. A cut is said in place (`…[cut N bytes]…`) and counted in
//! the record's `cut_bytes`, so memory and files stay bounded by turns × 64 KiB per episode.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::SystemTime;

use rmcp::model::{ContentBlock, JsonObject};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clip::{Clipper, clip_json};
use crate::episode::EpisodeStatus;

pub mod file;
pub mod replay;
pub mod sink;

pub use sink::TrajectorySink;

/// Bytes of observation text a record keeps: the first and last half of it.
pub const OBSERVATION_BUDGET: usize = 32 * 1024;
/// Bytes of JSON a record keeps of the call's arguments.
pub const ARGUMENTS_BUDGET: usize = 16 * 1024;
/// Bytes of JSON a record keeps of the structured observation.
pub const STRUCTURED_BUDGET: usize = 16 * 1024;

/// One tool call, as recorded: its step record (observation as text, everything within its
/// budget) with the tool, its arguments and the call's latency. Kept as data and turned into
/// JSON only when read (or by the file writer's thread), so a tool call does not pay for
/// serializing its own record.
#[derive(Debug, Serialize)]
pub struct TrajectoryRecord {
    /// Always `step`: what kind of line of a trajectory file this is.
    pub record: &'static str,
    /// Wall-clock time of the call's end, RFC 3339 in UTC.
    #[serde(serialize_with = "serialize_time")]
    pub time: SystemTime,
    /// The episode id.
    pub episode: Arc<str>,
    /// The turn number this call was (1-based).
    pub turn: u32,
    /// The tool called.
    pub tool: String,
    /// The arguments as sent.
    pub arguments: JsonObject,
    /// The text the model saw.
    pub observation: String,
    /// Whether the call was refused.
    pub is_error: bool,
    /// The structured observation, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
    /// The reward paid on this call.
    pub reward: f64,
    /// The components of that reward.
    pub reward_components: BTreeMap<String, f64>,
    /// Whether the episode is done after this call.
    pub done: bool,
    /// Whether it ended at the turn limit.
    pub truncated: bool,
    /// Whether it ended because the environment failed, not because of the agent.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
    /// How long the call took, in milliseconds.
    pub latency_ms: f64,
    /// Bytes cut from `observation`, `arguments` or `structured` to keep the record within its
    /// budget; only the fields that were cut.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub cut_bytes: BTreeMap<&'static str, usize>,
    /// The observation's images, as paths relative to the trajectory directory
    /// (`<episode>/<turn>-<n>.png`); whether each file was written is [`ImagePolicy`]'s call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// The idempotency key the call was made with, so that a retry after a restart still gets
    /// this answer instead of a second step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<Box<str>>,
}

/// A line saying the task's prompt was handed over (the control plane's
/// `GET /episodes/{id}/prompt`, OpenEnv's reset, ORS's `/prompt`, the Python client) after
/// `turn` calls, written the first time only; a file without one is of an episode whose
/// client never fetched it. An environment may then leave the task out of the next
/// observation (Jupyter does), so replaying the episode hands it over at the same point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrajectoryPrompt {
    /// Always `prompt`.
    pub record: String,
    /// When, RFC 3339 in UTC.
    pub time: String,
    /// The calls made before it.
    pub turn: u32,
}

/// The first line of a trajectory file: where the episode came from, enough to start it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryHeader {
    /// Always `header`.
    pub record: String,
    /// The episode id.
    pub episode: String,
    /// The environment's name.
    pub env: String,
    /// The task id.
    pub task: String,
    /// The seed.
    pub seed: u64,
    /// The options the episode was created with.
    pub options: JsonObject,
    /// The turn limit.
    pub max_turns: u32,
    /// The version of the server that played it.
    pub version: String,
    /// When the episode started, RFC 3339 in UTC.
    pub time: String,
    /// The client session that started the episode, so that a restart gives it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionRecord>,
    /// For a generated test task, the fingerprint of the test secret its files and answer were
    /// derived with (`public` when none was set): rescoring it needs the same secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_secret: Option<String>,
}

/// A client session that started an episode, as its trajectory header keeps it: after a
/// restart the session is held again, bound to the same episode, so the client's next
/// request goes on where it stood instead of meeting an unknown session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "door", rename_all = "lowercase")]
pub enum SessionRecord {
    /// A legacy MCP session (`Mcp-Session-Id`).
    Mcp {
        /// The session id.
        id: String,
        /// The endpoint that issued it, by number (the same for the same command line).
        endpoint: u32,
        /// The client's `initialize` parameters, as JSON.
        initialize: String,
    },
    /// An ORS session (`X-Session-ID`).
    Ors {
        /// The session id.
        id: String,
    },
    /// An OpenEnv session made with `openenv/session/create` (a WebSocket attaches to it with
    /// `?session_id=`).
    OpenEnv {
        /// The session id.
        id: String,
    },
}

impl SessionRecord {
    /// The session id, whichever door issued it.
    pub fn id(&self) -> &str {
        match self {
            SessionRecord::Mcp { id, .. }
            | SessionRecord::Ors { id }
            | SessionRecord::OpenEnv { id } => id,
        }
    }
}

/// The last line of a trajectory file, written when the episode is over (or closed before).
#[derive(Debug, Serialize)]
pub struct TrajectoryEnd {
    /// Always `end`.
    pub record: &'static str,
    /// When it was written, RFC 3339 in UTC.
    pub time: String,
    /// The final status, with what the environment revealed (`answer`, …) once done.
    pub status: EpisodeStatus,
    /// What the grader read when the episode ended, for `mcpgym rescore`
    /// ([`EpisodeState::graded`](crate::env::EpisodeState::graded)); never shown to the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graded: Option<Value>,
}

/// One image of an observation, waiting to be written beside the trajectory (and kept for a
/// while for the live viewer).
#[derive(Debug, Clone)]
pub struct ObservationImage {
    /// The file name, `<turn>-<n>.<ext>`.
    pub name: String,
    /// The MIME type, as the content block gave it.
    pub mime_type: String,
    /// The image, base64-encoded as the content block carried it; shared by the sink and the
    /// episode's recent images, so it is copied once, out of the observation.
    pub base64: Arc<str>,
}

impl ObservationImage {
    /// The images of a step's content, named by turn and position.
    pub fn from_content(turn: u32, content: &[ContentBlock]) -> Vec<ObservationImage> {
        content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Image(image) => Some(image),
                _ => None,
            })
            .enumerate()
            .map(|(n, image)| ObservationImage {
                name: format!("{turn}-{n}.{}", extension(&image.mime_type)),
                mime_type: image.mime_type.clone(),
                base64: image.data.as_str().into(),
            })
            .collect()
    }
}

/// The file extension for an image MIME type.
pub fn extension(mime_type: &str) -> &'static str {
    match mime_type {
        "image/jpeg" => "jpg",
        "image/webp" => "webp",
        "image/gif" => "gif",
        _ => "png",
    }
}

/// The MIME type for an image file name's extension.
pub fn mime_type_of(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("jpg") => "image/jpeg",
        Some("webp") => "image/webp",
        Some("gif") => "image/gif",
        _ => "image/png",
    }
}

/// Which observation images a trajectory directory keeps: `none`, `all`, or one in `N`
/// (the first image-bearing step, then every Nth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImagePolicy {
    /// No image files.
    None,
    /// The images of one image-bearing step in this many (1 is every one).
    OneIn(NonZeroU32),
}

impl Default for ImagePolicy {
    fn default() -> Self {
        ImagePolicy::OneIn(NonZeroU32::MIN)
    }
}

impl ImagePolicy {
    /// Whether the `index`th image-bearing step (from 0) keeps its images.
    pub fn keeps(self, index: u64) -> bool {
        match self {
            ImagePolicy::None => false,
            ImagePolicy::OneIn(n) => index.is_multiple_of(u64::from(n.get())),
        }
    }
}

impl std::str::FromStr for ImagePolicy {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "none" => Ok(ImagePolicy::None),
            "all" => Ok(ImagePolicy::default()),
            n => n
                .parse::<NonZeroU32>()
                .map(ImagePolicy::OneIn)
                .map_err(|_| {
                    format!("{text:?} is not an image policy: give none, all, or N (one step in N)")
                }),
        }
    }
}

impl std::fmt::Display for ImagePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImagePolicy::None => f.write_str("none"),
            ImagePolicy::OneIn(n) if n.get() == 1 => f.write_str("all"),
            ImagePolicy::OneIn(n) => write!(f, "{n}"),
        }
    }
}

/// The current time as trajectory files write it.
pub fn now_rfc3339() -> String {
    mcpgym_serve::rfc3339(SystemTime::now(), mcpgym_serve::Fraction::Millis)
}

impl TrajectoryRecord {
    /// The record as one JSON line, without its newline.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

fn serialize_time<S: serde::Serializer>(
    time: &SystemTime,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&mcpgym_serve::rfc3339(
        *time,
        mcpgym_serve::Fraction::Millis,
    ))
}

/// The text of an observation, as a trajectory shows it: text parts joined by newlines,
/// other parts named.
pub fn observation_text(content: &[ContentBlock]) -> String {
    let mut text = String::new();
    for block in content {
        if !text.is_empty() {
            text.push('\n');
        }
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::Image(image) => {
                text.push_str(&format!("[image {}]", image.mime_type));
            }
            _ => text.push_str("[non-text content]"),
        }
    }
    text
}

/// [`observation_text`] within [`OBSERVATION_BUDGET`], built without ever holding the whole
/// text; and the bytes cut.
pub fn clipped_observation_text(content: &[ContentBlock]) -> (String, usize) {
    let mut text = Clipper::new(OBSERVATION_BUDGET);
    for (index, block) in content.iter().enumerate() {
        if index > 0 {
            text.push_str("\n");
        }
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::Image(image) => text.push_str(&format!("[image {}]", image.mime_type)),
            _ => text.push_str("[non-text content]"),
        }
    }
    text.finish()
}

/// Arguments within [`ARGUMENTS_BUDGET`] (long strings clipped), and the bytes cut.
pub fn clipped_arguments(arguments: &JsonObject) -> (JsonObject, usize) {
    // Typical arguments are far below the budget: decide without copying them twice.
    let small = arguments
        .iter()
        .map(|(key, value)| key.len() + serde_json_len_bound(value))
        .sum::<usize>()
        < ARGUMENTS_BUDGET / 6;
    if small {
        return (arguments.clone(), 0);
    }
    match clip_json(&Value::Object(arguments.clone()), ARGUMENTS_BUDGET) {
        (Value::Object(map), cut) => (map, cut),
        (_, cut) => (JsonObject::new(), cut),
    }
}

/// Structured content within [`STRUCTURED_BUDGET`], and the bytes cut.
pub fn clipped_structured(structured: &Value) -> (Value, usize) {
    clip_json(structured, STRUCTURED_BUDGET)
}

/// A rough size of a JSON value: its string and key bytes plus a little per node.
fn serde_json_len_bound(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len() + 2,
        Value::Array(items) => 2 + items.iter().map(serde_json_len_bound).sum::<usize>(),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + serde_json_len_bound(v))
                .sum::<usize>()
        }
        _ => 24,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_policies_parse_and_keep_one_step_in_n() {
        let parse = |text: &str| text.parse::<ImagePolicy>();
        assert_eq!(parse("all"), Ok(ImagePolicy::default()));
        assert_eq!(parse("none"), Ok(ImagePolicy::None));
        let every_third = parse("3").unwrap();
        let kept: Vec<u64> = (0..7).filter(|&i| every_third.keeps(i)).collect();
        assert_eq!(kept, [0, 3, 6]);
        assert!((0..5).all(|i| ImagePolicy::default().keeps(i)));
        assert!((0..5).all(|i| !ImagePolicy::None.keeps(i)));
        for bad in ["0", "-1", "some", ""] {
            let error = parse(bad).unwrap_err();
            assert!(error.contains("give none, all, or N"), "{error}");
        }
        assert_eq!(every_third.to_string(), "3");
        assert_eq!(ImagePolicy::default().to_string(), "all");
    }

    #[test]
    fn images_are_named_by_turn_and_position() {
        let content = vec![
            ContentBlock::text("clicked"),
            ContentBlock::image("aGk=", "image/png"),
            ContentBlock::image("aGk=", "image/jpeg"),
        ];
        let names: Vec<String> = ObservationImage::from_content(7, &content)
            .into_iter()
            .map(|image| image.name)
            .collect();
        assert_eq!(names, ["7-0.png", "7-1.jpg"]);
        assert_eq!(mime_type_of("7-1.jpg"), "image/jpeg");
    }
}
