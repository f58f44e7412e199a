//! Tasks: what the agent is asked, the files its sandbox starts with, and the hidden grader.
//!
//! A task's public description ([`TaskInfo`]: id, split, kind, prompt) is what the agent and the
//! control plane may see. Its setup and grader are secrets: no method that returns public data
//! includes them, and the reference tests check that no prompt contains its expected answer.
//!
//! Setups and checks are Python. They never run inside the agent's kernel namespace: the
//! programs [`Task::setup_program`] and [`crate::grading::CheckProgram`] are self-contained,
//! take the home folder as a parameter (`/home/user` in a sandbox, a temporary folder in tests)
//! and are meant to run as their own process (`python3 -I -c PROGRAM`).
//!
//! The built-in tasks are data files, one folder per task under `tasks/`, embedded in the
//! binary and read once; the format is described in the `catalog` module.

use serde::{Deserialize, Serialize};

use mcpgym_env::{Split, TaskSet};

use crate::catalog::catalog;
use crate::python::setup_program;

/// The home folder of a sandbox: where setups write and where the agent's kernel starts.
pub const SANDBOX_HOME: &str = "/home/user";

/// The Python every setup and check starts with: the modules setups use (`os`, `json`, `csv`,
/// `math`) and `rng(seed)`, a generator fixed by this file alone.
pub const PRELUDE: &str = include_str!("prelude.py");

/// What kind of work a task asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// Analysis of data files (CSV, JSON, logs) the setup writes into the home folder.
    DataAnalysis,
    /// A computation: primes, integrals, roots, combinatorics, linear algebra.
    Numeric,
    /// Text processing: counting, parsing, decoding, matching.
    Text,
    /// File handling: the answer is about a file, or is a file the agent must produce.
    Files,
}

/// How a task's answer is judged. Secret: never part of the public description.
///
/// The exact comparison rules are in [`crate::grading`].
#[derive(Debug, Clone, PartialEq)]
pub enum Grader {
    /// The answer, normalised, equals this string exactly (case-sensitive).
    Exact(String),
    /// The answer is a number within `max(abs_tol, rel_tol × |value|)` of `value`.
    Numeric {
        /// The expected value.
        value: f64,
        /// Tolerance relative to `|value|`.
        rel_tol: f64,
        /// Absolute tolerance.
        abs_tol: f64,
    },
    /// The answer, normalised, equals one of these spellings, ignoring case.
    OneOf(Vec<String>),
    /// Hidden Python run in the sandbox after the episode, with the working directory at the
    /// home folder, after the prelude, and with these names defined: `HOME` (the home folder),
    /// `ANSWER` (the string given to `final_answer`) and `ORIGINAL` (a temporary folder holding
    /// a fresh run of the task's setup: compare against inputs there, since the agent may have
    /// edited the ones in the home folder). It prints `PASS` or `FAIL` (optionally
    /// `FAIL: reason`).
    Check {
        /// The check's Python source.
        code: String,
    },
}

/// One task. Its fields are private so that nothing can serialise a task with its secrets;
/// [`Task::info`] is the public part.
#[derive(Debug, Clone)]
pub struct Task {
    id: String,
    split: Split,
    kind: TaskKind,
    prompt: String,
    setup: String,
    grader: Grader,
}

/// The public description of a task: safe to show to the agent and to list over HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskInfo {
    /// The stable id, e.g. `jupyter-train-000`.
    pub id: String,
    /// The split the task belongs to.
    pub split: Split,
    /// What kind of work it is.
    pub kind: TaskKind,
    /// What the agent is told: what to compute, and in which form to give `final_answer`.
    pub prompt: String,
}

impl Task {
    /// A task. `setup` is the body of the setup script (it runs after [`PRELUDE`], in the home
    /// folder); an empty setup writes nothing.
    pub fn new(
        id: impl Into<String>,
        split: Split,
        kind: TaskKind,
        prompt: impl Into<String>,
        setup: impl Into<String>,
        grader: Grader,
    ) -> Self {
        Self {
            id: id.into(),
            split,
            kind,
            prompt: prompt.into(),
            setup: setup.into(),
            grader,
        }
    }

    /// The stable id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The split.
    pub fn split(&self) -> Split {
        self.split
    }

    /// The kind of work.
    pub fn kind(&self) -> TaskKind {
        self.kind
    }

    /// What the agent is told.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    /// The public description.
    pub fn info(&self) -> TaskInfo {
        TaskInfo {
            id: self.id.clone(),
            split: self.split,
            kind: self.kind,
            prompt: self.prompt.clone(),
        }
    }

    /// Whether the task's setup writes any files (some numeric tasks need none).
    pub fn has_setup(&self) -> bool {
        !self.setup.trim().is_empty()
    }

    /// The grader. Secret: for the environment's own grading, and for tests and harnesses
    /// that verify the tasks themselves; no tool and no public description returns it.
    pub fn grader(&self) -> &Grader {
        &self.grader
    }

    /// The setup as one self-contained Python program that creates the task's files in `home`
    /// (created if missing). Run it as its own process, `python3 -I -c PROGRAM`, before the
    /// agent's first cell: it changes directory only for its own run and leaves no names in
    /// any namespace but its own. Exits non-zero (with a traceback) if the setup fails.
    pub fn setup_program(&self, home: &str) -> String {
        setup_program(home, &self.setup_source())
    }

    /// The setup's source with its prelude: what runs, in the home folder.
    pub(crate) fn setup_source(&self) -> String {
        format!("{PRELUDE}\n{}", self.setup)
    }

    /// Grades an answer to this task; see [`crate::grading`].
    pub fn grade(&self, answer: &str, home: &str) -> crate::grading::Grading {
        crate::grading::grade(self, answer, home)
    }
}

/// The Jupyter environment's tasks: the built-in list, by split.
#[derive(Debug, Clone)]
pub struct JupyterTasks {
    tasks: Vec<Task>,
    set: TaskSet,
}

impl Default for JupyterTasks {
    fn default() -> Self {
        Self::builtin()
    }
}

impl JupyterTasks {
    /// The built-in tasks.
    pub fn builtin() -> Self {
        Self::from_tasks(catalog())
    }

    /// A task list of one's own (ids must be unique; splits come from each task).
    pub fn from_tasks(tasks: Vec<Task>) -> Self {
        let ids = |split: Split| {
            tasks
                .iter()
                .filter(|t| t.split == split)
                .map(|t| t.id.clone())
                .collect::<Vec<_>>()
        };
        let set = TaskSet::new(ids(Split::Train), ids(Split::Test));
        Self { tasks, set }
    }

    /// The ids by split, for [`mcpgym_env::Environment::tasks`].
    pub fn set(&self) -> &TaskSet {
        &self.set
    }

    /// A task by id.
    pub fn get(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.id == id)
    }

    /// Every task, in list order (train and test interleaved).
    pub fn iter(&self) -> impl Iterator<Item = &Task> {
        self.tasks.iter()
    }

    /// The number of tasks.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether there are no tasks.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// The public descriptions of one split, in id order.
    pub fn infos(&self, split: Split) -> Vec<TaskInfo> {
        self.set
            .ids(split)
            .iter()
            .filter_map(|id| self.get(id))
            .map(Task::info)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn builtin_tasks_are_many_disjoint_and_well_named() {
        let tasks = JupyterTasks::builtin();
        assert!(tasks.len() >= 40, "{}", tasks.len());
        let train = tasks.set().ids(Split::Train);
        let test = tasks.set().ids(Split::Test);
        assert_eq!(train.len() + test.len(), tasks.len());
        // About one in four held out.
        let share = test.len() as f64 / tasks.len() as f64;
        assert!((0.2..=0.33).contains(&share), "{share}");
        let unique: HashSet<&str> = tasks.iter().map(Task::id).collect();
        assert_eq!(unique.len(), tasks.len());
        for (split, ids) in [(Split::Train, train), (Split::Test, test)] {
            for (n, id) in ids.iter().enumerate() {
                assert_eq!(*id, format!("jupyter-{split}-{n:03}"));
            }
        }
        for kind in [
            TaskKind::DataAnalysis,
            TaskKind::Numeric,
            TaskKind::Text,
            TaskKind::Files,
        ] {
            for split in [Split::Train, Split::Test] {
                assert!(
                    tasks.iter().any(|t| t.kind() == kind && t.split() == split),
                    "{kind:?} {split}"
                );
            }
        }
    }

    #[test]
    fn public_description_carries_no_secret() {
        // Questions that name their options (which of these columns...): the answer is
        // necessarily one of the words of the prompt.
        const CHOICES: &[&str] = &["jupyter-train-010"];
        let tasks = JupyterTasks::builtin();
        let mut leaks = Vec::new();
        for task in tasks.iter().filter(|t| !CHOICES.contains(&t.id())) {
            let public = serde_json::to_string(&task.info()).unwrap();
            assert!(!public.contains("setup") && !public.contains("grader"));
            let secrets: Vec<String> = match task.grader() {
                Grader::Exact(s) => vec![s.clone()],
                Grader::OneOf(v) => v.clone(),
                // Short numbers (a month, a count under 1000) occur in ordinary prose; longer
                // ones in a prompt would be a leak.
                Grader::Numeric { value, .. } => {
                    let text = format!("{value}");
                    let text = text.trim_end_matches(".0").to_owned();
                    if text.trim_start_matches('-').len() >= 4 {
                        vec![text]
                    } else {
                        vec![]
                    }
                }
                Grader::Check { .. } => vec![],
            };
            for secret in secrets {
                if task
                    .prompt()
                    .to_lowercase()
                    .contains(&secret.to_lowercase())
                {
                    leaks.push(task.id().to_owned());
                }
            }
        }
        assert!(
            leaks.is_empty(),
            "prompts that reveal their answer: {leaks:?}"
        );
    }

    #[test]
    fn setup_program_is_self_contained() {
        let tasks = JupyterTasks::builtin();
        let task = tasks.get("jupyter-train-000").unwrap();
        let program = task.setup_program(SANDBOX_HOME);
        // The body travels hex-encoded: no quoting can break out of it.
        assert!(!program.contains("sales.csv"));
        assert!(program.contains("bytes.fromhex"));
    }
}
