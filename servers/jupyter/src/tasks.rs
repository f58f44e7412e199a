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

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use mcpgym_env::{Split, TaskSet, parse_family_id};

use crate::charts::ChartGrader;
use crate::families::{CLASSIC, FAMILIES, classic_ranges, classic_task, family};
use crate::predictions::PredictionGrader;
use crate::python::{files_writer, setup_program};

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
    /// Debugging: a given program must be fixed until its hidden tests pass.
    Debugging,
    /// Modelling: a model trained on given data predicts held-out rows, scored with partial
    /// credit.
    Modelling,
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
    /// Hidden tests run like a `Check`, printing one line per test (`PASS <name>` or
    /// `FAIL <name>: reason`); the reward is the fraction that passed, success when all do.
    HiddenTests {
        /// The tests' Python source.
        code: String,
    },
    /// A predictions file scored on the host against held-out labels, with partial credit
    /// ([`crate::predictions`]).
    Predictions(Box<PredictionGrader>),
    /// The last chart shown in the notebook, checked from its extracted data
    /// ([`crate::charts`]).
    Chart(Box<ChartGrader>),
}

/// One task. Its fields are private so that nothing can serialise a task with its secrets;
/// [`Task::info`] is the public part.
#[derive(Debug, Clone)]
pub struct Task {
    id: String,
    split: Split,
    kind: TaskKind,
    prompt: String,
    /// Files written into the home folder before the setup runs (shared: a task's files may be
    /// large, and every episode of it clones the task).
    files: Arc<[(String, Vec<u8>)]>,
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
            files: Arc::new([]),
            setup: setup.into(),
            grader,
        }
    }

    /// The same task with files (relative path, bytes) written into the home folder before
    /// its setup runs.
    pub fn with_files(mut self, files: Vec<(String, Vec<u8>)>) -> Self {
        self.files = files.into();
        self
    }

    /// The files written before the setup runs.
    pub fn files(&self) -> &[(String, Vec<u8>)] {
        &self.files
    }

    /// The same task under another id.
    pub(crate) fn renamed(mut self, id: String) -> Self {
        self.id = id;
        self
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

    /// Whether the task starts with any files (some numeric tasks need none).
    pub fn has_setup(&self) -> bool {
        !self.files.is_empty() || self.has_setup_code()
    }

    /// Whether the setup has code to run (beyond writing [`Task::files`]).
    pub fn has_setup_code(&self) -> bool {
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

    /// The setup's code alone as a program like [`Task::setup_program`], for a home folder
    /// that already holds [`Task::files`] (written by other means, e.g. a sandbox's file API).
    pub fn setup_code_program(&self, home: &str) -> String {
        setup_program(home, &format!("{PRELUDE}\n{}", self.setup))
    }

    /// The setup's source with its prelude, files included: what recreates the starting
    /// folder, run in it.
    pub(crate) fn setup_source(&self) -> String {
        format!("{PRELUDE}\n{}{}", files_writer(&self.files), self.setup)
    }

    /// Grades an answer to this task; see [`crate::grading`].
    pub fn grade(&self, answer: &str, home: &str) -> crate::grading::Grading {
        crate::grading::grade(self, answer, home)
    }
}

/// The Jupyter environment's tasks: the built-in families (generated instances, plus the
/// hand-written tasks as the family `classic`), or a list of one's own.
#[derive(Debug, Clone)]
pub struct JupyterTasks {
    /// Tasks listed one by one (a task file's); empty for the built-in families.
    listed: Vec<Task>,
    /// Whether the built-in families serve `<family>/<n>` ids.
    families: bool,
    set: TaskSet,
}

impl Default for JupyterTasks {
    fn default() -> Self {
        Self::builtin()
    }
}

impl JupyterTasks {
    /// The built-in families: `classic` (the hand-written tasks) and every generated family.
    pub fn builtin() -> Self {
        let mut set = TaskSet::new(Vec::new(), Vec::new()).with_family(classic_ranges());
        for family in FAMILIES.iter() {
            set = set.with_family(family.ranges());
        }
        Self {
            listed: Vec::new(),
            families: true,
            set,
        }
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
        Self {
            listed: tasks,
            families: false,
            set,
        }
    }

    /// The ids by split, for [`mcpgym_env::Environment::tasks`].
    pub fn set(&self) -> &TaskSet {
        &self.set
    }

    /// A task by id: a listed one, or an instance of a family, generated now.
    pub fn get(&self, id: &str) -> Option<Task> {
        if let Some(task) = self.listed.iter().find(|t| t.id == id) {
            return Some(task.clone());
        }
        if !self.families {
            return None;
        }
        let (name, n) = parse_family_id(id)?;
        if name == CLASSIC {
            return classic_task(n);
        }
        family(name)?.task(n)
    }

    /// The tasks listed one by one (none for the built-in families).
    pub fn listed(&self) -> &[Task] {
        &self.listed
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn builtin_tasks_are_many_disjoint_and_well_named() {
        let tasks = JupyterTasks::from_tasks(crate::catalog::catalog());
        assert!(tasks.listed().len() >= 40, "{}", tasks.listed().len());
        let train = tasks.set().listed(Split::Train);
        let test = tasks.set().listed(Split::Test);
        assert_eq!(train.len() + test.len(), tasks.listed().len());
        // About one in four held out.
        let share = test.len() as f64 / tasks.listed().len() as f64;
        assert!((0.2..=0.33).contains(&share), "{share}");
        let unique: HashSet<&str> = tasks.listed().iter().map(Task::id).collect();
        assert_eq!(unique.len(), tasks.listed().len());
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
                    tasks
                        .listed()
                        .iter()
                        .any(|t| t.kind() == kind && t.split() == split),
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
        let tasks = JupyterTasks::from_tasks(crate::catalog::catalog());
        let mut leaks = Vec::new();
        for task in tasks.listed().iter().filter(|t| !CHOICES.contains(&t.id())) {
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
                Grader::Check { .. }
                | Grader::HiddenTests { .. }
                | Grader::Predictions(_)
                | Grader::Chart(_) => {
                    vec![]
                }
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
    fn builtin_tasks_are_families_with_the_classic_tasks_first() {
        let tasks = JupyterTasks::builtin();
        let set = tasks.set();
        assert_eq!(set.families()[0].name, CLASSIC);
        assert_eq!(set.families().len(), FAMILIES.len() + 1);
        let classic = tasks.get("classic/0").unwrap();
        assert_eq!(classic.split(), Split::Train);
        assert!(tasks.get("classic/53").is_none());
        assert!(tasks.get("jupyter-train-000").is_none());
        for family in FAMILIES.iter() {
            let task = tasks.get(&format!("{}/5", family.name)).unwrap();
            let split = match family.split {
                crate::families::FamilySplit::TrainAndTest => Split::Train,
                crate::families::FamilySplit::TestOnly => Split::Test,
            };
            assert_eq!(task.split(), split, "{}", family.name);
            assert_eq!(set.split_of(task.id()), Some(split));
        }
    }

    #[test]
    fn setup_program_is_self_contained() {
        let tasks = JupyterTasks::from_tasks(crate::catalog::catalog());
        let task = tasks.get("jupyter-train-000").unwrap();
        let program = task.setup_program(SANDBOX_HOME);
        // The body travels hex-encoded: no quoting can break out of it.
        assert!(!program.contains("sales.csv"));
        assert!(program.contains("bytes.fromhex"));
    }
}
