//! `mcpgym trajectories export`: recorded episodes as chat data, one JSON line per episode
//! whose `messages` follow OpenAI's chat format with tool calls (see the README's
//! "Trajectories as chat data").

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use mcpgym_shared::Environment;
use mcpgym_shared::env::full_prompt;
use mcpgym_shared::episode::passed;
use mcpgym_shared::hub::{is_episode_id, is_image_name};
use mcpgym_shared::trajectory::file::{RecordedEpisode, RecordedStep};
use mcpgym_shared::trajectory::mime_type_of;
use serde_json::{Value, json};

use crate::export::Progress;
use crate::registry::{Built, Registration};

/// Which episodes are written.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only returns at least this.
    pub min_reward: Option<f64>,
    /// Only returns at most this.
    pub max_reward: Option<f64>,
    /// Only episodes that solved their task.
    pub passed_only: bool,
    /// Also episodes that never finished.
    pub include_unfinished: bool,
    /// Also episodes the environment aborted.
    pub include_aborted: bool,
}

/// How observation images are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageMode {
    /// Not at all: every message's content is a string.
    None,
    /// As `image_url` parts with base64 `data:` URLs; every message's content is then a list
    /// of parts, so a column reader (Arrow, `datasets`) sees one type.
    DataUrl,
}

/// What an export did, for its closing line.
#[derive(Debug, Default)]
pub struct Summary {
    /// Episodes written.
    pub written: u64,
    /// Files that could not be read or used (each reported as it was met).
    pub unreadable: u64,
    /// Episodes left out because they did not finish.
    pub unfinished: u64,
    /// Episodes left out because they were aborted.
    pub aborted: u64,
    /// Episodes left out by the reward filters.
    pub filtered: u64,
}

impl Summary {
    /// What was skipped, as a phrase.
    pub fn skipped_sentence(&self) -> String {
        format!(
            "skipped: {} unreadable, {} unfinished, {} aborted, {} outside the reward filters",
            self.unreadable, self.unfinished, self.aborted, self.filtered
        )
    }
}

/// Exports every episode file of `dir` (in file name order) to `output`.
pub fn export<W: Write>(
    dir: &Path,
    filter: &Filter,
    images: ImageMode,
    mut output: W,
    progress: impl FnOnce(u64) -> Progress,
) -> anyhow::Result<(W, Summary)> {
    let files = episode_files(dir)?;
    let mut progress = progress(files.len() as u64);
    let mut catalogs = Catalogs::default();
    let mut summary = Summary::default();
    for path in &files {
        match line_of(dir, path, filter, images, &mut catalogs) {
            Ok(Some(line)) => {
                serde_json::to_writer(&mut output, &line)?;
                output.write_all(b"\n")?;
                summary.written += 1;
            }
            Ok(None) => {}
            Err(Skip::Unreadable(why)) => {
                // Above the bar's line, so neither hides the other.
                eprintln!("\rskipped {why}");
                summary.unreadable += 1;
            }
            Err(Skip::Unfinished) => summary.unfinished += 1,
            Err(Skip::Aborted) => summary.aborted += 1,
            Err(Skip::Filtered) => summary.filtered += 1,
        }
        progress.tick();
    }
    progress.finish();
    catalogs.release();
    Ok((output, summary))
}

/// Why an episode was not written.
enum Skip {
    /// The file is not a usable trajectory: the sentence names it (and the line).
    Unreadable(String),
    Unfinished,
    Aborted,
    Filtered,
}

/// The `EPISODE_ID.jsonl` files of `dir`, sorted.
fn episode_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", dir.display()))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension().is_some_and(|ext| ext == "jsonl")
                && path
                    .file_stem()
                    .and_then(|stem| stem.to_str())
                    .is_some_and(is_episode_id)
                && path.is_file()
        })
        .collect();
    files.sort();
    Ok(files)
}

/// One episode's line, or why it is left out.
fn line_of(
    dir: &Path,
    path: &Path,
    filter: &Filter,
    images: ImageMode,
    catalogs: &mut Catalogs,
) -> Result<Option<Value>, Skip> {
    let recorded =
        RecordedEpisode::read(path).map_err(|error| Skip::Unreadable(error.to_string()))?;
    let header = recorded.header.as_ref().ok_or_else(|| {
        Skip::Unreadable(format!(
            "{}: no header record, so its environment and task are unknown",
            path.display()
        ))
    })?;
    let status = recorded.status();
    let flag = |key: &str| status.get(key).and_then(Value::as_bool).unwrap_or(false);
    if flag("aborted") && !filter.include_aborted {
        return Err(Skip::Aborted);
    }
    // An aborted episode is the aborted filter's to keep or drop, whether it ended or not.
    let finished = recorded.end.is_some() && flag("done");
    if !(finished || flag("aborted") || filter.include_unfinished) {
        return Err(Skip::Unfinished);
    }
    let return_ = status.get("return").and_then(Value::as_f64).unwrap_or(0.0);
    let components: BTreeMap<String, f64> = status
        .get("reward_components")
        .and_then(|c| serde_json::from_value(c.clone()).ok())
        .unwrap_or_default();
    let solved = passed(return_, &components, flag("aborted"));
    if filter.min_reward.is_some_and(|min| return_ < min)
        || filter.max_reward.is_some_and(|max| return_ > max)
        || (filter.passed_only && !solved)
    {
        return Err(Skip::Filtered);
    }
    let env = catalogs.get(&header.env).ok_or_else(|| {
        Skip::Unreadable(format!(
            "{}: recorded in environment {:?}, which this binary does not have, so its prompt is unknown",
            path.display(),
            header.env
        ))
    })?;
    let prompt = full_prompt(env.instructions(), env.task_prompt(&header.task).as_deref());
    let steps = recorded.typed_steps();
    let messages = messages(dir, &recorded.id, &prompt, &steps, images)
        .map_err(|why| Skip::Unreadable(format!("{}: {why}", path.display())))?;
    Ok(Some(json!({
        "messages": messages,
        "reward": return_,
        "reward_components": components,
        "passed": solved,
        "env": header.env,
        "task": header.task,
        "seed": header.seed,
        "episode": recorded.id,
        "turns": steps.len(),
        "done": flag("done"),
        "truncated": flag("truncated"),
        "aborted": flag("aborted"),
    })))
}

/// The episode as chat messages: the prompt, then per step the assistant's tool call and the
/// tool's answer, paired by the call's id (`call_<turn>`).
fn messages(
    dir: &Path,
    episode: &str,
    prompt: &str,
    steps: &[RecordedStep],
    images: ImageMode,
) -> Result<Vec<Value>, String> {
    let mut messages =
        vec![json!({"role": "user", "content": content(prompt, Vec::new(), images)})];
    for step in steps {
        let id = format!("call_{}", step.turn);
        let arguments = serde_json::to_string(&step.arguments).unwrap_or_else(|_| "{}".into());
        messages.push(json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": id,
                "type": "function",
                "function": {"name": step.tool, "arguments": arguments},
            }],
        }));
        let urls = match images {
            ImageMode::None => Vec::new(),
            ImageMode::DataUrl => step
                .images
                .iter()
                .map(|image| data_url(dir, episode, image))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .flatten()
                .collect(),
        };
        messages.push(json!({
            "role": "tool",
            "tool_call_id": id,
            "content": content(&step.observation, urls, images),
        }));
    }
    Ok(messages)
}

/// A message's content in the file's one shape: a string, or text and image parts.
fn content(text: &str, urls: Vec<String>, images: ImageMode) -> Value {
    match images {
        ImageMode::None => Value::String(text.to_owned()),
        ImageMode::DataUrl => {
            let mut parts = vec![json!({"type": "text", "text": text})];
            parts.extend(
                urls.into_iter()
                    .map(|url| json!({"type": "image_url", "image_url": {"url": url}})),
            );
            Value::Array(parts)
        }
    }
}

/// A step's image as a data URL; `None` when its file was not kept (the directory's image
/// policy keeps one step in N). A name outside the episode's own image folder is refused: a
/// file in the folder must not make the export read any other file.
fn data_url(dir: &Path, episode: &str, image: &str) -> Result<Option<String>, String> {
    let name = image
        .strip_prefix(episode)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|name| is_image_name(name))
        .ok_or_else(|| format!("image {image:?} is not one of this episode's image files"))?;
    match std::fs::read(dir.join(episode).join(name)) {
        Ok(bytes) => Ok(Some(format!(
            "data:{};base64,{}",
            mime_type_of(name),
            base64::engine::general_purpose::STANDARD.encode(bytes)
        ))),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(format!("cannot read image {image}: {error}")),
    }
}

/// The environments episodes were recorded in, built once each (with their default flags)
/// to read instructions and task prompts.
#[derive(Default)]
struct Catalogs {
    built: BTreeMap<String, Option<Built>>,
}

impl Catalogs {
    fn get(&mut self, env: &str) -> Option<Arc<dyn Environment>> {
        self.built
            .entry(env.to_owned())
            .or_insert_with(|| {
                let registration = Registration::find(env)?;
                match registration.catalog(&[]) {
                    Ok(built) => Some(built),
                    Err(error) => {
                        eprintln!("cannot read {env}'s tasks: {error:#}");
                        None
                    }
                }
            })
            .as_ref()
            .map(|built| built.env.clone())
    }

    fn release(self) {
        for built in self.built.into_values().flatten() {
            let Built { env, backing } = built;
            drop(env);
            Built::release(backing);
        }
    }
}
