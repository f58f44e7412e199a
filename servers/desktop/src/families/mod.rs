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
//! `pub(super) const FAMILY: Family`, listed in that folder's `FAMILIES`, and its line in
//! `family_tests!` (`tests/desktop_families.rs`; a test fails until it is there): its demo must
//! pass through the real binary (2 seeds in the fast tier, 20 in the full one) and the
//! untouched desktop must fail. `cargo nextest run -E 'test(=desktop_families::NAME)'` runs
//! one family alone.

mod classic;
mod office;
mod web;

use std::sync::LazyLock;

use mcpgym_env::{Split, TaskFamily};

pub use mcpgym_env::generate::{FamilySplit, TEST, TRAIN};

pub use mcpgym_env::generate::{Gen, words};

use crate::grading::Check;
use crate::tasks::{App, DemoCondition, DemoStep, DesktopTask, HomeFile, Page};

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
        let instance = (self.generate)(&mut Gen::for_instance(self.name, n, split));
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
    hacks: Vec<Hack>,
}

/// A scripted near miss of a task: what a policy searching for reward tries instead of the
/// work (a constant for a formula, a document cut down to the checked sentence). Played by the
/// family tests, which require it to score 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Hack {
    /// What it tries, in a few words.
    pub name: &'static str,
    /// Its keys and waits, from the task's starting desktop.
    pub steps: Vec<DemoStep>,
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

    /// Applies `steps` (a helper that adds to the demo), inside a chain of setters.
    pub fn then(self, steps: impl FnOnce(Self) -> Self) -> Self {
        steps(self)
    }

    /// Waits in the demo until `condition` holds: the window, dialog or file the next step
    /// needs (see [`DemoCondition`]).
    pub fn wait_for(mut self, condition: DemoCondition) -> Self {
        self.demo.push(DemoStep::WaitFor(condition));
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

    /// Adds a hack: `steps` builds its keys and waits on an empty instance with the same
    /// helpers a demo uses.
    pub fn hack(mut self, name: &'static str, steps: impl FnOnce(Self) -> Self) -> Self {
        let steps = steps(Self::default()).demo;
        self.hacks.push(Hack { name, steps });
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
            hacks: self.hacks,
            _notes: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use mcpgym_env::parse_family_id;

    use super::*;
    use crate::tasks::DesktopTasks;

    /// What an agent starts from: two instances with the same state are the same task.
    fn starting_state(task: &DesktopTask) -> String {
        format!(
            "{}\n{:?}\n{:?}\n{:?}\n{:?}",
            task.instruction, task.files, task.pages, task.setup, task.launch
        )
    }

    /// The split of a family's instances below the boundary (`TRAIN.end`): train, or test
    /// for a held-out family.
    fn main_split(family: &Family) -> Split {
        match family.split {
            FamilySplit::TrainAndTest => Split::Train,
            FamilySplit::TestOnly => Split::Test,
        }
    }

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
            let first = family.ranges().range(main_split(family)).start;
            let mut starts = HashSet::new();
            for n in first..first + 500 {
                let task = family.task(n).unwrap();
                task.validate()
                    .unwrap_or_else(|e| panic!("{}: {e}", task.id));
                assert!(!task.checks.is_empty(), "{}: no checks", task.id);
                assert!(!task.demo.is_empty(), "{}: no demo", task.id);
                assert!(!task.launch.is_empty(), "{}: nothing launched", task.id);
                let again = family.task(n).unwrap();
                assert_eq!(
                    starting_state(&task),
                    starting_state(&again),
                    "{}: not deterministic",
                    task.id
                );
                starts.insert(starting_state(&task));
            }
            assert!(
                starts.len() >= 490,
                "{}: only {} distinct starting states in 500 instances",
                family.name,
                starts.len()
            );
        }
    }

    #[test]
    fn held_out_families_never_reach_training_and_the_boundary_splits_the_rest() {
        // Stored task ids name instance numbers: the ranges must not move.
        assert_eq!((TRAIN, TEST), (0..900_000, 900_000..1_000_000));
        let tasks = DesktopTasks::builtin();
        let set = tasks.set();
        let held_out: HashSet<&str> = FAMILIES
            .iter()
            .filter(|f| f.split == FamilySplit::TestOnly)
            .map(|f| f.name)
            .collect();
        assert!(held_out.len() >= 5, "{} held-out families", held_out.len());
        assert!(held_out.len() < FAMILIES.len(), "every family is held out");
        let resolves_to = |id: &str| (set.split_of(id), tasks.get(id).map(|t| t.split));
        for family in FAMILIES.iter() {
            let id = |n: u64| family.ranges().id(n);
            // Below the boundary: train, unless the family is held out.
            let below = Some(main_split(family));
            for n in [TRAIN.start, TRAIN.end - 1] {
                assert_eq!(resolves_to(&id(n)), (below, below), "{}", id(n));
            }
            for n in [TEST.start, TEST.end - 1] {
                let test = Some(Split::Test);
                assert_eq!(resolves_to(&id(n)), (test, test), "{}", id(n));
            }
            assert_eq!(resolves_to(&id(TEST.end)), (None, None), "{}", id(TEST.end));
        }

        // By index: each training family's first train instance, one after another, and
        // nothing after the last; held-out families add nothing to the train split.
        let listed = set.listed(Split::Train).len() as u64;
        let training: Vec<&str> = FAMILIES
            .iter()
            .map(|f| f.name)
            .filter(|name| !held_out.contains(name))
            .collect();
        for (k, name) in training.iter().enumerate() {
            let first = set.get(Split::Train, listed + k as u64 * TRAIN.end);
            assert_eq!(first, Some(format!("{name}/0")));
        }
        let train_len = listed + training.len() as u64 * TRAIN.end;
        assert_eq!(set.len(Split::Train), train_len);
        assert_eq!(set.get(Split::Train, train_len), None);

        // By seed, as episodes are drawn: train draws reach every training family and no
        // held-out one; test draws reach every held-out family.
        let families_drawn = |split: Split| -> HashSet<String> {
            (0..5_000)
                .filter_map(|seed| {
                    let id = set.pick(split, seed).unwrap();
                    assert_eq!(tasks.get(&id).map(|t| t.split), Some(split), "{id}");
                    parse_family_id(&id).map(|(name, _)| name.to_owned())
                })
                .collect()
        };
        let drawn = families_drawn(Split::Train);
        let held_out_drawn: Vec<&String> = drawn
            .iter()
            .filter(|name| held_out.contains(name.as_str()))
            .collect();
        assert!(
            held_out_drawn.is_empty(),
            "held out, drawn for training: {held_out_drawn:?}"
        );
        assert_eq!(drawn.len(), training.len());
        let drawn = families_drawn(Split::Test);
        assert!(
            held_out.iter().all(|name| drawn.contains(*name)),
            "{drawn:?}"
        );
    }

    #[test]
    fn every_family_has_at_least_a_thousand_distinct_instances() {
        for family in FAMILIES.iter() {
            let first = family.ranges().range(main_split(family)).start;
            let starts: HashSet<String> = (first..first + 1_200)
                .map(|n| starting_state(&family.task(n).unwrap()))
                .collect();
            assert!(
                starts.len() >= 1_000,
                "{}: only {} distinct starting states in 1,200 instances",
                family.name,
                starts.len()
            );
        }
    }
}
