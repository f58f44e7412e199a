//! Task families: generators of unlimited, seeded desktop tasks.
//!
//! A family turns an instance number into a whole [`DesktopTask`]: the files and pages the
//! desktop starts with, the applications it opens, the instruction, the secret checks and a
//! scripted solution. Its id is `<family>/<n>`; the same `n` gives the same starting state and
//! instruction on any machine, because every random choice comes from a [`Gen`] seeded by the
//! family's name and `n` alone.
//!
//! Splits: a family that trains uses instances [`TRAIN`] for the train split and [`TEST`] for
//! the test split; a held-out family ([`FamilySplit::TestOnly`]) is never seen in training and
//! uses both ranges for test.
//!
//! To add a family: a module in `web/`, `office/` or `classic/` with
//! `pub(super) const FAMILY: Family`, listed in that folder's `FAMILIES`. The family tests
//! (`tests/desktop_families.rs`) pick it up: its demo must pass on 20 seeds through the real
//! binary and the untouched desktop must fail; `MCPGYM_FAMILIES=a,b` runs only those.

mod classic;
mod office;
mod web;

use std::sync::LazyLock;

use mcpgym_env::{Split, TaskFamily};

pub use mcpgym_env::generate::{FamilySplit, TEST, TRAIN};

pub use mcpgym_env::generate::{Gen, words};

use crate::grading::Check;
use crate::tasks::{App, DemoStep, DesktopTask, HomeFile, Page};

/// A family of generated desktop tasks.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// The name, the part of task ids before the `/`.
    pub name: &'static str,
    /// The application its tasks are mainly about.
    pub app: App,
    /// Which splits it serves.
    pub split: FamilySplit,
    /// One line on what its tasks ask.
    pub about: &'static str,
    /// The generator: an instance from a seeded stream.
    pub generate: fn(&mut Gen) -> Instance,
}

/// Every generated family, in the order task lists show them.
pub static FAMILIES: LazyLock<Vec<Family>> =
    LazyLock::new(|| [web::FAMILIES, office::FAMILIES, classic::FAMILIES].concat());

/// The family named `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

impl Family {
    /// The family's instance ranges, for a [`mcpgym_env::TaskSet`].
    pub fn ranges(&self) -> TaskFamily {
        self.split.ranges(self.name)
    }

    /// Instance `n` as a task (`None` when `n` is outside the family's ranges).
    pub fn task(&self, n: u64) -> Option<DesktopTask> {
        let ranges = self.ranges();
        let split = if ranges.train.contains(&n) {
            Split::Train
        } else if ranges.test.contains(&n) {
            Split::Test
        } else {
            return None;
        };
        let instance = (self.generate)(&mut Gen::new(self.name, n));
        Some(instance.into_task(format!("{}/{n}", self.name), split, self.app))
    }
}

/// What a generator makes: a task without its id, split and application, which the family
/// gives. Built with the chained setters; every generated task is checked by
/// [`DesktopTask::validate`] in the family tests.
#[derive(Debug, Clone, Default)]
pub struct Instance {
    instruction: String,
    files: Vec<HomeFile>,
    pages: Vec<Page>,
    setup: Option<String>,
    launch: Vec<Vec<String>>,
    checks: Vec<Check>,
    demo: Vec<DemoStep>,
}

impl Instance {
    /// An instance that tells the agent `instruction`.
    pub fn new(instruction: impl Into<String>) -> Self {
        Self {
            instruction: instruction.into(),
            ..Self::default()
        }
    }

    /// Adds a file to the home folder (`path` relative to home).
    pub fn file(mut self, path: impl Into<String>, text: impl Into<String>) -> Self {
        self.files.push(HomeFile {
            path: path.into(),
            contents: text.into().into_bytes(),
        });
        self
    }

    /// Adds a page to the episode's web server (`path` without the leading `/`), its
    /// content type from the extension.
    pub fn page(mut self, path: impl Into<String>, body: impl Into<String>) -> Self {
        self.pages.push(Page {
            path: path.into(),
            body: body.into(),
            content_type: None,
        });
        self
    }

    /// Adds a page with an explicit content type.
    pub fn page_typed(
        mut self,
        path: impl Into<String>,
        body: impl Into<String>,
        content_type: impl Into<String>,
    ) -> Self {
        self.pages.push(Page {
            path: path.into(),
            body: body.into(),
            content_type: Some(content_type.into()),
        });
        self
    }

    /// Sets the setup command.
    pub fn setup(mut self, command: impl Into<String>) -> Self {
        self.setup = Some(command.into());
        self
    }

    /// Starts an application (an argv; see [`crate::apps`] for `chromium` and `libreoffice`).
    pub fn launch<S: Into<String>>(mut self, argv: impl IntoIterator<Item = S>) -> Self {
        self.launch.push(argv.into_iter().map(Into::into).collect());
        self
    }

    /// Adds a check.
    pub fn check(mut self, check: Check) -> Self {
        self.checks.push(check);
        self
    }

    /// Waits `ms` milliseconds in the demo.
    pub fn wait(mut self, ms: u32) -> Self {
        self.demo.push(DemoStep::Wait(ms));
        self
    }

    /// Types `text` in the demo (no newlines: press `Return` with [`Instance::key`]).
    pub fn type_text(mut self, text: impl Into<String>) -> Self {
        self.demo.push(DemoStep::Type(text.into()));
        self
    }

    /// Presses a key chord in the demo (xdotool syntax: `ctrl+s`, `Return`).
    pub fn key(mut self, chord: impl Into<String>) -> Self {
        self.demo.push(DemoStep::Key(chord.into()));
        self
    }

    /// Turns the instance into task `id` of `split`.
    pub(crate) fn into_task(self, id: String, split: Split, app: App) -> DesktopTask {
        DesktopTask {
            id,
            split,
            instruction: self.instruction,
            app,
            files: self.files,
            pages: self.pages,
            setup: self.setup,
            launch: self.launch,
            checks: self.checks,
            demo: self.demo,
            _notes: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn names_are_unique_and_ids_round_trip() {
        let mut names = HashSet::new();
        for family in FAMILIES.iter() {
            assert!(names.insert(family.name), "{} twice", family.name);
            assert!(!family.name.contains('/'), "{}", family.name);
            let task = family.task(3).or_else(|| family.task(900_003)).unwrap();
            assert!(task.id.starts_with(&format!("{}/", family.name)));
            assert!(family.task(1_000_000).is_none());
        }
    }

    #[test]
    fn generated_tasks_are_valid_deterministic_and_distinct() {
        for family in FAMILIES.iter() {
            let ranges = family.ranges();
            let first = if ranges.train.is_empty() {
                ranges.test.start
            } else {
                ranges.train.start
            };
            let mut starts = HashSet::new();
            for n in first..first + 500 {
                let task = family.task(n).unwrap();
                task.validate()
                    .unwrap_or_else(|e| panic!("{}: {e}", task.id));
                assert!(!task.checks.is_empty(), "{}: no checks", task.id);
                assert!(!task.demo.is_empty(), "{}: no demo", task.id);
                assert!(!task.launch.is_empty(), "{}: nothing launched", task.id);
                let again = family.task(n).unwrap();
                let state = |t: &DesktopTask| {
                    format!(
                        "{}\n{:?}\n{:?}\n{:?}\n{:?}",
                        t.instruction, t.files, t.pages, t.setup, t.launch
                    )
                };
                assert_eq!(
                    state(&task),
                    state(&again),
                    "{}: not deterministic",
                    task.id
                );
                starts.insert(state(&task));
            }
            assert!(
                starts.len() >= 490,
                "{}: only {} distinct starting states in 500 instances",
                family.name,
                starts.len()
            );
        }
    }
}
