//! `eval.json`: a run's settings, every finished episode's result, and the table per family
//! and level. Rewritten (beside, then renamed) after every episode, so a run stopped at any
//! point is resumed from it without playing a finished episode again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use mcpgym_shared::episode::EpisodeStatus;
use serde::{Deserialize, Serialize};

use super::EvalArgs;
use super::policy::PolicyKind;

/// The summary's file name in the output folder (what the viewer looks for).
pub const SUMMARY_FILE: &str = mcpgym_shared::trajectory::file::EVAL_SUMMARY;
/// The summary format's version.
const VERSION: u32 = 1;

/// What a run is: two runs with equal settings play the same episodes, so one resumes the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// The environment.
    pub env: String,
    /// The environment's own flags, as given (not those the policy adds).
    pub env_flags: Vec<String>,
    /// `oracle`, `noop`, `random`, or `API MODEL`.
    pub policy: String,
    /// The model endpoint's URL (none for a built-in policy).
    pub endpoint: Option<String>,
    /// Sampling temperature.
    pub temperature: f64,
    /// The split.
    pub split: String,
    /// The families asked for (empty: all).
    pub families: Vec<String>,
    /// The levels asked for (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<String>,
    /// Tasks asked for.
    pub count: Option<u64>,
    /// Tasks per family asked for.
    pub per_family: Option<u64>,
    /// The first seed.
    pub seed: u64,
    /// Samples per task.
    pub k: u32,
    /// The turn limit asked for.
    pub max_turns: Option<u32>,
}

impl RunConfig {
    /// The settings of `args`.
    pub fn of(args: &EvalArgs, kind: &PolicyKind) -> Self {
        Self {
            env: args.env.clone(),
            env_flags: args.env_flags.clone(),
            policy: kind.name(),
            endpoint: matches!(kind, PolicyKind::Model(_))
                .then(|| args.endpoint.clone())
                .flatten(),
            temperature: args.temperature,
            split: args.split.clone(),
            families: args.families.clone(),
            levels: args.levels.iter().map(|l| l.name().to_owned()).collect(),
            count: args.count,
            per_family: args.per_family,
            seed: args.seed,
            k: args.k,
            max_turns: args.max_turns,
        }
    }
}

/// One episode's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EpisodeResult {
    /// The task.
    pub task: String,
    /// Its family (`listed` for a task listed by id).
    pub family: String,
    /// Its level, where the family has levels.
    pub level: Option<String>,
    /// The seed.
    pub seed: u64,
    /// Which of the task's k samples this is.
    pub sample: u32,
    /// The episode's id: its trajectory is `EPISODE.jsonl` beside the summary.
    pub episode: String,
    /// The return.
    #[serde(rename = "return")]
    pub return_: f64,
    /// Whether it solved the task (a positive `success` or `win` component, else a positive
    /// return), as the trajectory exports count it.
    pub passed: bool,
    /// Tool calls made.
    pub turns: u32,
    /// Tokens the model read.
    pub tokens_in: u64,
    /// Tokens the model wrote.
    pub tokens_out: u64,
    /// Seconds from start to close.
    pub wall_s: f64,
    /// Whether the episode ended (done), at the turn limit (truncated), by a failure of the
    /// environment (aborted).
    pub done: bool,
    /// See `done`.
    pub truncated: bool,
    /// See `done`.
    pub aborted: bool,
    /// Why the loop stopped early (the endpoint failed, the context overflowed, no oracle).
    pub error: Option<String>,
}

impl EpisodeResult {
    /// A result not played yet.
    pub fn new(task: &str, family: &str, seed: u64, sample: u32) -> Self {
        Self {
            task: task.to_owned(),
            family: family.to_owned(),
            level: None,
            seed,
            sample,
            episode: String::new(),
            return_: 0.0,
            passed: false,
            turns: 0,
            tokens_in: 0,
            tokens_out: 0,
            wall_s: 0.0,
            done: false,
            truncated: false,
            aborted: false,
            error: None,
        }
    }

    /// Takes the episode's final status.
    pub fn apply(&mut self, status: &EpisodeStatus) {
        self.return_ = status.return_;
        self.passed = status.passed();
        self.turns = status.turn;
        self.done = status.done;
        self.truncated = status.truncated;
        self.aborted = status.aborted;
    }
}

/// One row of the table: a family and level, or `all`.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The family.
    pub family: String,
    /// The level (`-` where there is none).
    pub level: String,
    /// Distinct tasks.
    pub tasks: usize,
    /// Episodes.
    pub episodes: usize,
    /// The fraction of episodes that passed.
    #[serde(rename = "pass@1")]
    pub pass_1: f64,
    /// The fraction of tasks with a passing episode among their samples.
    #[serde(rename = "pass@k")]
    pub pass_k: f64,
    /// Mean return.
    pub mean_reward: f64,
    /// Mean tool calls.
    pub mean_turns: f64,
    /// Tokens read, in all.
    pub tokens_in: u64,
    /// Tokens written, in all.
    pub tokens_out: u64,
    /// Mean seconds per episode.
    pub mean_wall_s: f64,
    /// Episodes whose loop stopped early.
    pub errors: usize,
}

/// The file as written.
#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    config: RunConfig,
    episodes: Vec<EpisodeResult>,
    #[serde(default, skip_deserializing)]
    table: Vec<Row>,
}

/// A run's summary, kept on disk.
pub struct Summary {
    path: PathBuf,
    config: RunConfig,
    episodes: Vec<EpisodeResult>,
    done: BTreeSet<(String, u64, u32)>,
}

impl Summary {
    /// The summary in `dir`: the one there when its settings are `config` (a resumed run),
    /// else a new one; an error names what differs from a run already there.
    pub fn open(dir: &Path, config: RunConfig) -> anyhow::Result<Self> {
        let path = dir.join(SUMMARY_FILE);
        let episodes = match std::fs::read(&path) {
            Ok(bytes) => {
                let file: File = serde_json::from_slice(&bytes).with_context(|| {
                    format!(
                        "{} is not an eval summary; choose another --output folder",
                        path.display()
                    )
                })?;
                anyhow::ensure!(
                    file.config == config,
                    "{} holds a run with other settings ({}); resume it with the same flags or choose another --output folder",
                    path.display(),
                    serde_json::to_string(&file.config)?
                );
                file.episodes
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", path.display()));
            }
        };
        let done = episodes
            .iter()
            .map(|e| (e.task.clone(), e.seed, e.sample))
            .collect();
        Ok(Self {
            path,
            config,
            episodes,
            done,
        })
    }

    /// Whether that episode has a result.
    pub fn has(&self, task: &str, seed: u64, sample: u32) -> bool {
        self.done.contains(&(task.to_owned(), seed, sample))
    }

    /// Episodes with a result.
    pub fn len(&self) -> usize {
        self.episodes.len()
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds a result and writes the file.
    pub fn record(&mut self, result: EpisodeResult) -> anyhow::Result<()> {
        self.done
            .insert((result.task.clone(), result.seed, result.sample));
        self.episodes.push(result);
        self.write()
    }

    fn write(&self) -> anyhow::Result<()> {
        let file = File {
            version: VERSION,
            config: self.config.clone(),
            episodes: self.episodes.clone(),
            table: table(&self.episodes),
        };
        let partial = self.path.with_extension("json.partial");
        std::fs::write(&partial, serde_json::to_vec_pretty(&file)?)
            .with_context(|| format!("cannot write {}", partial.display()))?;
        std::fs::rename(&partial, &self.path)
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    /// The table as text, one line per family and level and a last line for all.
    pub fn table_text(&self) -> String {
        let mut text = format!(
            "{:<24} {:<6} {:>8} {:>7} {:>7} {:>8} {:>7} {:>10} {:>10} {:>8}\n",
            "family",
            "level",
            "episodes",
            "pass@1",
            "pass@k",
            "reward",
            "turns",
            "tokens in",
            "tokens out",
            "wall s"
        );
        for row in table(&self.episodes) {
            text.push_str(&format!(
                "{:<24} {:<6} {:>8} {:>7.3} {:>7.3} {:>8.3} {:>7.1} {:>10} {:>10} {:>8.1}{}\n",
                row.family,
                row.level,
                row.episodes,
                row.pass_1,
                row.pass_k,
                row.mean_reward,
                row.mean_turns,
                row.tokens_in,
                row.tokens_out,
                row.mean_wall_s,
                if row.errors > 0 {
                    format!("  ({} stopped early)", row.errors)
                } else {
                    String::new()
                }
            ));
        }
        text
    }
}

/// The table: a row per family and level, in name order, then `all`.
pub fn table(episodes: &[EpisodeResult]) -> Vec<Row> {
    let mut groups: BTreeMap<(String, String), Vec<&EpisodeResult>> = BTreeMap::new();
    for episode in episodes {
        let level = episode.level.clone().unwrap_or_else(|| "-".to_owned());
        groups
            .entry((episode.family.clone(), level))
            .or_default()
            .push(episode);
    }
    let mut rows: Vec<Row> = groups
        .into_iter()
        .map(|((family, level), episodes)| row(family, level, &episodes))
        .collect();
    if !episodes.is_empty() {
        let all: Vec<&EpisodeResult> = episodes.iter().collect();
        rows.push(row("all".into(), "-".into(), &all));
    }
    rows
}

fn row(family: String, level: String, episodes: &[&EpisodeResult]) -> Row {
    let n = episodes.len() as f64;
    let mean = |f: &dyn Fn(&EpisodeResult) -> f64| episodes.iter().map(|e| f(e)).sum::<f64>() / n;
    let mut tasks: BTreeMap<(&str, u64), bool> = BTreeMap::new();
    for episode in episodes {
        *tasks.entry((&episode.task, episode.seed)).or_default() |= episode.passed;
    }
    Row {
        family,
        level,
        tasks: tasks.len(),
        episodes: episodes.len(),
        pass_1: mean(&|e| f64::from(u8::from(e.passed))),
        pass_k: tasks.values().filter(|p| **p).count() as f64 / tasks.len() as f64,
        mean_reward: mean(&|e| e.return_),
        mean_turns: mean(&|e| f64::from(e.turns)),
        tokens_in: episodes.iter().map(|e| e.tokens_in).sum(),
        tokens_out: episodes.iter().map(|e| e.tokens_out).sum(),
        mean_wall_s: mean(&|e| e.wall_s),
        errors: episodes.iter().filter(|e| e.error.is_some()).count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(task: &str, sample: u32, passed: bool, return_: f64) -> EpisodeResult {
        let mut result = EpisodeResult::new(task, task.split('/').next().unwrap(), 3, sample);
        result.passed = passed;
        result.return_ = return_;
        result.turns = 2;
        result
    }

    #[test]
    fn pass_at_k_counts_tasks_with_any_pass_and_pass_at_1_every_sample() {
        let episodes = vec![
            result("a/1", 0, true, 1.0),
            result("a/1", 1, false, 0.0),
            result("a/2", 0, false, 0.0),
            result("a/2", 1, false, 0.5),
            result("b/1", 0, true, 1.0),
            result("b/1", 1, true, 1.0),
        ];
        let rows = table(&episodes);
        let a = &rows[0];
        assert_eq!((a.family.as_str(), a.tasks, a.episodes), ("a", 2, 4));
        assert_eq!((a.pass_1, a.pass_k, a.mean_reward), (0.25, 0.5, 0.375));
        let all = rows.last().unwrap();
        assert_eq!(all.family, "all");
        assert_eq!((all.pass_1, all.pass_k), (0.5, 2.0 / 3.0));
    }
}
