//! Task families: generators of unlimited, seeded task instances.
//!
//! A family turns an instance number into a whole task: the files the sandbox starts with,
//! the question, and the secret grader (an expected answer or a hidden check). Its id is
//! `<family>/<n>`; the same `n` gives byte-identical files and prompt on any machine, because
//! every random choice comes from [`Gen`], seeded by the family's name and `n` alone.
//!
//! Splits: a family that trains uses instances [`TRAIN`] for the train split and [`TEST`]
//! for the test split; a held-out family ([`FamilySplit::TestOnly`]) is never seen in
//! training at all, and uses both ranges for test. Each family has a reference solver,
//! `families/<name>/solver.py` beside this crate, which the family tests run on hundreds of
//! instances (it is never embedded in the binary).
//!
//! A numeric grader keeps the value unrounded: its tolerance is half a unit of the precision
//! the prompt asks for ([`mcpgym_env::answer`]), so a value on a rounding edge accepts both of
//! its roundings, which summing in another order can give.
//!
//! To add a family: a module in `data/`, `modelling/`, `text/` or `numeric/` with
//! `pub(super) const FAMILY: Family`, listed in that folder's `FAMILIES`, its solver, and
//! its line in `family_tests!` (`servers/jupyter/tests/families.rs`; a test fails until it is
//! there). `cargo nextest run -E 'test(=group_revenue)'` runs one family's test alone.

mod checks;
mod classic;
mod data;
mod instance;
mod modelling;
mod money;
mod numeric;
mod text;

use std::sync::LazyLock;

use mcpgym_env::{Split, TaskFamily};

pub use mcpgym_env::generate::{FamilySplit, TEST, TRAIN};

pub use checks::{child_check, function_check, functions_check};
pub use instance::{Instance, csv_bytes};
pub(crate) use mcpgym_env::generate::words;
pub use mcpgym_env::generate::{Gen, Level, date_of, round};

use crate::tasks::{Task, TaskKind};

/// A family of generated tasks.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// The name, the part of task ids before the `/`.
    pub name: &'static str,
    /// What kind of work its tasks ask for.
    pub kind: TaskKind,
    /// Which splits it serves.
    pub split: FamilySplit,
    /// Whether its generator reads the instance's [`Level`] (`Gen::level`) to change the work:
    /// instance `n` is of level `n % 3`.
    pub levelled: bool,
    /// One line on what its tasks ask.
    pub about: &'static str,
    /// The generator: an instance from a seeded stream.
    pub generate: fn(&mut Gen) -> Instance,
}

/// Every generated family, in the order task lists show them.
pub static FAMILIES: LazyLock<Vec<Family>> = LazyLock::new(|| {
    [
        data::FAMILIES,
        modelling::FAMILIES,
        text::FAMILIES,
        numeric::FAMILIES,
    ]
    .concat()
});

impl Family {
    /// The family's instance ranges, for a [`mcpgym_env::TaskSet`].
    pub fn ranges(&self) -> TaskFamily {
        let ranges = self.split.ranges(self.name);
        if self.levelled {
            ranges.with_levels()
        } else {
            ranges
        }
    }

    /// Instance `n`, or `None` when `n` is outside the family's ranges.
    pub fn instance(&self, n: u64) -> Option<Instance> {
        let ranges = self.ranges();
        let split = if ranges.train.contains(&n) {
            Split::Train
        } else if ranges.test.contains(&n) {
            Split::Test
        } else {
            return None;
        };
        Some((self.generate)(&mut Gen::for_instance(self.name, n, split)))
    }

    /// Instance `n` as a task (`None` when `n` is out of range).
    pub fn task(&self, n: u64) -> Option<Task> {
        let split = if self.ranges().train.contains(&n) {
            Split::Train
        } else {
            Split::Test
        };
        let instance = self.instance(n)?;
        Some(instance.into_task(format!("{}/{n}", self.name), split, self.kind))
    }
}

/// The family named `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

pub use classic::classic_folder;
pub(crate) use classic::{CLASSIC, classic_ranges, classic_task};
