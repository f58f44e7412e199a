//! Trajectories: one JSON Lines record per tool call, kept with the episode and, with
//! `--trajectory-dir`, appended to `DIR/<episode>.jsonl`.
//!
//! Files are written by one background thread so that no tool call waits on the disk.
//!
//! A record holds at most about 64 KiB, however much a call printed or was sent: the
//! observation keeps its first and last 16 KiB ([`OBSERVATION_BUDGET`]), the arguments and the
//! structured content 16 KiB each ([`ARGUMENTS_BUDGET`], [`STRUCTURED_BUDGET`]) with long
//! strings clipped head and tail. A cut is said in place (`…[cut N bytes]…`) and counted in
//! the record's `cut_bytes`, so memory and files stay bounded by turns × 64 KiB per episode.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::SystemTime;

use rmcp::model::{ContentBlock, JsonObject};
use serde::Serialize;
use serde_json::Value;

use crate::clip::{Clipper, clip_json};

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

enum SinkMessage {
    Append(Arc<TrajectoryRecord>),
    Close { episode: Arc<str> },
}

/// Appends trajectory lines to per-episode files from a background thread.
#[derive(Debug, Clone)]
pub struct TrajectorySink {
    dir: PathBuf,
    sender: mpsc::Sender<SinkMessage>,
}

impl std::fmt::Debug for SinkMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SinkMessage")
    }
}

/// Files kept open at once; past this the writer closes them all and reopens on demand.
const MAX_OPEN_FILES: usize = 256;

impl TrajectorySink {
    /// Creates the directory if needed and starts the writer thread.
    pub fn start(dir: impl Into<PathBuf>) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        let (sender, receiver) = mpsc::channel::<SinkMessage>();
        let thread_dir = dir.clone();
        std::thread::Builder::new()
            .name("mcpgym-trajectory".into())
            .spawn(move || write_loop(&thread_dir, receiver))?;
        Ok(Self { dir, sender })
    }

    /// The file an episode's trajectory is written to.
    pub fn path_for(&self, episode: &str) -> PathBuf {
        self.dir.join(format!("{episode}.jsonl"))
    }

    /// Queues one record for its episode's file; the writer thread serializes it.
    pub fn append(&self, record: Arc<TrajectoryRecord>) {
        let _ = self.sender.send(SinkMessage::Append(record));
    }

    /// Flushes and closes an episode's file.
    pub fn close(&self, episode: &Arc<str>) {
        let _ = self.sender.send(SinkMessage::Close {
            episode: episode.clone(),
        });
    }
}

fn write_loop(dir: &Path, receiver: mpsc::Receiver<SinkMessage>) {
    let mut open: HashMap<Arc<str>, BufWriter<File>> = HashMap::new();
    while let Ok(first) = receiver.recv() {
        let mut next = Some(first);
        // Drain everything queued, then flush once.
        while let Some(message) = next.take() {
            match message {
                SinkMessage::Append(record) => {
                    let episode = record.episode.clone();
                    let line = record.to_json_line();
                    if !open.contains_key(&episode) && open.len() >= MAX_OPEN_FILES {
                        for (_, mut file) in open.drain() {
                            let _ = file.flush();
                        }
                    }
                    let writer = match open.entry(episode) {
                        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                        std::collections::hash_map::Entry::Vacant(e) => {
                            let path = dir.join(format!("{}.jsonl", e.key()));
                            match OpenOptions::new().create(true).append(true).open(&path) {
                                Ok(file) => e.insert(BufWriter::new(file)),
                                Err(error) => {
                                    tracing::error!(path = %path.display(), %error, "cannot open trajectory file");
                                    next = receiver.try_recv().ok();
                                    continue;
                                }
                            }
                        }
                    };
                    if let Err(error) = writer
                        .write_all(line.as_bytes())
                        .and_then(|()| writer.write_all(b"\n"))
                    {
                        tracing::error!(%error, "cannot write trajectory record");
                    }
                }
                SinkMessage::Close { episode } => {
                    if let Some(mut file) = open.remove(&episode) {
                        let _ = file.flush();
                    }
                }
            }
            next = receiver.try_recv().ok();
        }
        for file in open.values_mut() {
            let _ = file.flush();
        }
    }
}
