//! Reading a trajectory file back: its header, its step records and its end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rmcp::model::JsonObject;
use serde::Deserialize;
use serde_json::{Value, json};

use super::TrajectoryHeader;

/// The summary `mcpgym eval` writes beside its trajectories.
pub const EVAL_SUMMARY: &str = "eval.json";

/// The folders holding `dir`'s recordings: `dir` itself, then (by name) each sub-folder
/// holding an eval run's summary, as `mcpgym eval -o DIR/NAME` writes them.
pub fn recording_folders(dir: &Path) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.join(EVAL_SUMMARY).is_file())
        .collect();
    runs.sort();
    runs.insert(0, dir.to_path_buf());
    runs
}

/// Why a trajectory file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TrajectoryFileError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// A line is not a trajectory record.
    #[error("{path} line {line}: {message}")]
    Line {
        /// The file.
        path: String,
        /// 1-based.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// One step record as read back: what replaying and re-scoring need.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RecordedStep {
    /// The turn (1-based).
    pub turn: u32,
    /// The tool called.
    pub tool: String,
    /// The arguments as recorded (clipped when `cut_bytes` says so).
    pub arguments: JsonObject,
    /// The observation's text.
    pub observation: String,
    /// Whether the call was refused.
    pub is_error: bool,
    /// The structured observation.
    #[serde(default)]
    pub structured: Option<Value>,
    /// What the step paid.
    pub reward: f64,
    /// By component.
    #[serde(default)]
    pub reward_components: BTreeMap<String, f64>,
    /// Whether the episode was over after it.
    pub done: bool,
    /// Whether it ended at the turn limit.
    pub truncated: bool,
    /// Whether it ended because the environment failed.
    #[serde(default)]
    pub aborted: bool,
    /// Bytes cut from fields, by field.
    #[serde(default)]
    pub cut_bytes: BTreeMap<String, usize>,
    /// The observation's images, relative to the trajectory directory.
    #[serde(default)]
    pub images: Vec<String>,
    /// The idempotency key the call was made with.
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

/// A trajectory file read back.
#[derive(Debug, Clone)]
pub struct RecordedEpisode {
    /// The episode id (the file's name without `.jsonl`).
    pub id: String,
    /// The header, when the file has one (files written before headers existed do not).
    pub header: Option<TrajectoryHeader>,
    /// The step records, as written.
    pub steps: Vec<Value>,
    /// The final status from the end record, when the episode ended.
    pub end: Option<JsonObject>,
    /// The calls made before the task's prompt was handed over, when it was.
    pub prompt_after: Option<u32>,
    /// What the grader read when the episode ended, from the end record, when the environment
    /// kept it.
    pub graded: Option<Value>,
}

impl RecordedEpisode {
    /// Reads `path`.
    pub fn read(path: &Path) -> Result<Self, TrajectoryFileError> {
        let text = std::fs::read_to_string(path).map_err(|error| TrajectoryFileError::Read {
            path: path.display().to_string(),
            error,
        })?;
        let id = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self::parse(&id, &path.display().to_string(), &text)
    }

    /// Parses the text of a file named `path` (for messages).
    pub fn parse(id: &str, path: &str, text: &str) -> Result<Self, TrajectoryFileError> {
        let mut episode = RecordedEpisode {
            id: id.to_owned(),
            header: None,
            steps: Vec::new(),
            end: None,
            prompt_after: None,
            graded: None,
        };
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |message: String| TrajectoryFileError::Line {
                path: path.to_owned(),
                line: index + 1,
                message,
            };
            let value: Value =
                serde_json::from_str(line).map_err(|e| bad(format!("not a JSON record: {e}")))?;
            match value
                .get("record")
                .and_then(Value::as_str)
                .unwrap_or("step")
            {
                "header" => {
                    let header = serde_json::from_value(value)
                        .map_err(|e| bad(format!("not a trajectory header: {e}")))?;
                    episode.header = Some(header);
                }
                "end" => match value.get("status") {
                    Some(Value::Object(status)) => {
                        episode.end = Some(status.clone());
                        episode.graded = value.get("graded").cloned();
                    }
                    _ => return Err(bad("an end record without a status object".into())),
                },
                "prompt" => {
                    let prompt: super::TrajectoryPrompt = serde_json::from_value(value)
                        .map_err(|e| bad(format!("not a prompt record: {e}")))?;
                    episode.prompt_after.get_or_insert(prompt.turn);
                }
                "step" => {
                    RecordedStep::deserialize(&value)
                        .map_err(|e| bad(format!("not a step record: {e}")))?;
                    episode.steps.push(value);
                }
                other => return Err(bad(format!("unknown record kind {other:?}"))),
            }
        }
        Ok(episode)
    }

    /// The step records, typed.
    pub fn typed_steps(&self) -> Vec<RecordedStep> {
        self.steps
            .iter()
            .filter_map(|step| RecordedStep::deserialize(step).ok())
            .collect()
    }

    /// The episode's status as `GET /episodes/{id}` shapes it: the end record's when there is
    /// one, otherwise made up from the header and the last step.
    pub fn status(&self) -> JsonObject {
        if let Some(end) = &self.end {
            return end.clone();
        }
        let steps = self.typed_steps();
        let last = steps.last();
        let mut components: BTreeMap<String, f64> = BTreeMap::new();
        for step in &steps {
            for (name, value) in &step.reward_components {
                *components.entry(name.clone()).or_default() += value;
            }
        }
        let header = self.header.as_ref();
        let status = json!({
            "id": self.id,
            "env": header.map(|h| h.env.as_str()).unwrap_or(""),
            "task": header.map(|h| h.task.as_str()).unwrap_or(""),
            "seed": header.map(|h| h.seed),
            "turn": last.map_or(0, |s| s.turn),
            "max_turns": header.map(|h| h.max_turns),
            "return": steps.iter().map(|s| s.reward).sum::<f64>(),
            "reward_components": components,
            "done": last.is_some_and(|s| s.done),
            "truncated": last.is_some_and(|s| s.truncated),
            "aborted": last.is_some_and(|s| s.aborted),
        });
        match status {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = concat!(
        r#"{"record":"header","episode":"ab","env":"wordle","task":"crane","seed":7,"options":{},"max_turns":6,"version":"0.1.0","time":"2026-01-01T00:00:00.000Z"}"#,
        "\n",
        r#"{"record":"step","time":"t","episode":"ab","turn":1,"tool":"guess","arguments":{"word":"slate"},"observation":"x","is_error":false,"reward":0.2,"reward_components":{"letters":0.2},"done":false,"truncated":false,"latency_ms":1.0}"#,
        "\n",
        r#"{"record":"step","time":"t","episode":"ab","turn":2,"tool":"guess","arguments":{"word":"crane"},"observation":"y","is_error":false,"reward":1.0,"reward_components":{"success":1.0},"done":true,"truncated":false,"latency_ms":1.0}"#,
        "\n",
    );

    #[test]
    fn a_file_without_its_end_gets_a_status_from_its_steps() {
        let episode = RecordedEpisode::parse("ab", "ab.jsonl", FILE).unwrap();
        assert_eq!(episode.header.as_ref().unwrap().task, "crane");
        assert_eq!(episode.steps.len(), 2);
        let status = episode.status();
        assert_eq!(status["return"], json!(1.2));
        assert_eq!(status["done"], json!(true));
        assert_eq!(status["reward_components"]["success"], json!(1.0));
        let with_end = format!(
            "{FILE}{}\n",
            r#"{"record":"end","time":"t","status":{"id":"ab","return":1.2,"answer":"crane"}}"#
        );
        let ended = RecordedEpisode::parse("ab", "ab.jsonl", &with_end).unwrap();
        assert_eq!(ended.status()["answer"], json!("crane"));
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let broken = format!("{FILE}{{\"record\":\"step\",\"turn\":\"three\"}}\n");
        let error = RecordedEpisode::parse("ab", "ab.jsonl", &broken).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("ab.jsonl line 4: not a step record"),
            "{error}"
        );
        let error = RecordedEpisode::parse("ab", "ab.jsonl", "{").unwrap_err();
        assert!(
            error.to_string().contains("line 1: not a JSON record"),
            "{error}"
        );
    }
}
