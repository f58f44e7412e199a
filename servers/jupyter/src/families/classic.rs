//! `classic`: the hand-written tasks of `tasks/`, as a family of their own.
//!
//! Instance `n` is the `n`-th train task (`jupyter-train-NNN` on disk) and then, after the last
//! one, the test tasks (`jupyter-test-NNN`) in order; so the family's train and test ranges
//! are `0..T` and `T..T+H`. Unlike generated families, the instance number is the whole task:
//! the seed changes nothing.

use std::sync::LazyLock;

use mcpgym_env::{Split, TaskFamily};

use crate::catalog::catalog;
use crate::tasks::Task;

/// The family's name.
pub(crate) const CLASSIC: &str = "classic";

/// The catalog's tasks in instance order, renamed `classic/<n>`, with their folder names.
static TASKS: LazyLock<Vec<(String, Task)>> = LazyLock::new(|| {
    let all = catalog();
    let mut ordered: Vec<Task> = Vec::with_capacity(all.len());
    for split in [Split::Train, Split::Test] {
        let mut of_split: Vec<&Task> = all.iter().filter(|t| t.split() == split).collect();
        of_split.sort_by(|a, b| a.id().cmp(b.id()));
        ordered.extend(of_split.into_iter().cloned());
    }
    ordered
        .into_iter()
        .enumerate()
        .map(|(n, task)| {
            let folder = task.id().to_owned();
            (folder, task.renamed(format!("{CLASSIC}/{n}")))
        })
        .collect()
});

/// The family's instance ranges.
pub(crate) fn classic_ranges() -> TaskFamily {
    let train = TASKS
        .iter()
        .filter(|(_, t)| t.split() == Split::Train)
        .count() as u64;
    TaskFamily::new(CLASSIC, 0..train, train..TASKS.len() as u64)
}

/// Instance `n`.
pub(crate) fn classic_task(n: u64) -> Option<Task> {
    TASKS
        .get(usize::try_from(n).ok()?)
        .map(|(_, task)| task.clone())
}

/// The folder under `tasks/` that instance `n` is read from (`jupyter-train-003`): where its
/// reference solution lives, for the tests that read the folders on disk.
pub fn classic_folder(n: u64) -> Option<&'static str> {
    TASKS
        .get(usize::try_from(n).ok()?)
        .map(|(folder, _)| folder.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_numbers_train_then_test() {
        let ranges = classic_ranges();
        assert_eq!(ranges.train, 0..38);
        assert_eq!(ranges.test, 38..53);
        assert_eq!(classic_folder(0), Some("jupyter-train-000"));
        assert_eq!(classic_folder(38), Some("jupyter-test-000"));
        let task = classic_task(38).unwrap();
        assert_eq!(task.id(), "classic/38");
        assert_eq!(task.split(), Split::Test);
        assert!(classic_task(53).is_none());
    }
}
