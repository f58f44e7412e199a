//! The built-in tasks, as data: one folder per task under `tasks/`, embedded in the binary.
//!
//! A task's folder holds `task.json` (id, split, kind, prompt, the setup's file and the
//! grader), its own `setup.py` and `check.py` when it has them, and `solution.py`, the
//! reference solution `tests/reference.rs` runs (never embedded). Setups several tasks share
//! live in `tasks/_shared/` and are named by relative path (`"setup": "../_shared/sales.py"`).
//! Setups and checks run as written, each after `prelude.py`; `tasks/ruff.toml` declares the
//! prelude's names (and `HOME`, `ANSWER`, `ORIGINAL`, which the runner defines) as builtins, so
//! ruff lints the very files that run, with nothing stripped when they are embedded. The split
//! is a field; the id still names it (`jupyter-<split>-NNN`) and the two must agree.
//!
//! `task.json`, field by field:
//!
//! ```json
//! {
//!   "id": "jupyter-train-000",
//!   "split": "train",
//!   "kind": "data_analysis",
//!   "prompt": "What the agent is told.",
//!   "setup": "setup.py",
//!   "grader": { "numeric": { "value": 17758.55, "rel_tol": 0.0, "abs_tol": 0.01 } }
//! }
//! ```
//!
//! `setup` is optional (no files written); `kind` is `data_analysis`, `numeric`, `text` or
//! `files`; `grader` is one of `{"exact": "…"}`, `{"one_of": ["…", …]}`,
//! `{"numeric": {"value": …}}` (tolerances default to 0) or `{"check": "check.py"}`.
//!
//! To add a task: add its folder, then its files to [`FILES`] (a unit test fails while a file
//! on disk is missing from the list, or a listed file is unused).

use std::sync::LazyLock;

use serde::Deserialize;

use mcpgym_env::Split;

use crate::tasks::{Grader, Task, TaskKind};

/// `(path under tasks/, text)` for each listed file, embedded in the binary.
macro_rules! embedded {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!("../tasks/", $path)))),*]
    };
}

/// Every file the built-in tasks are read from: shared setups first, then each task's files,
/// tasks in catalog order (train and test interleaved, as they were written; ids number each
/// split in order of appearance).
pub(crate) static FILES: &[(&str, &str)] = embedded![
    "_shared/employees.py",
    "_shared/orders.py",
    "_shared/sales.py",
    "_shared/story.py",
    "jupyter-train-000/task.json",
    "jupyter-train-001/task.json",
    "jupyter-test-000/task.json",
    "jupyter-train-002/task.json",
    "jupyter-test-001/task.json",
    "jupyter-train-003/task.json",
    "jupyter-train-003/setup.py",
    "jupyter-train-004/task.json",
    "jupyter-train-005/task.json",
    "jupyter-train-006/task.json",
    "jupyter-train-006/setup.py",
    "jupyter-test-002/task.json",
    "jupyter-test-002/setup.py",
    "jupyter-train-007/task.json",
    "jupyter-train-007/setup.py",
    "jupyter-train-008/task.json",
    "jupyter-train-008/setup.py",
    "jupyter-test-003/task.json",
    "jupyter-test-003/setup.py",
    "jupyter-train-009/task.json",
    "jupyter-train-009/setup.py",
    "jupyter-train-010/task.json",
    "jupyter-train-010/setup.py",
    "jupyter-train-011/task.json",
    "jupyter-train-011/setup.py",
    "jupyter-test-004/task.json",
    "jupyter-test-004/setup.py",
    "jupyter-train-012/task.json",
    "jupyter-train-013/task.json",
    "jupyter-test-005/task.json",
    "jupyter-train-014/task.json",
    "jupyter-train-015/task.json",
    "jupyter-train-016/task.json",
    "jupyter-test-006/task.json",
    "jupyter-train-017/task.json",
    "jupyter-train-018/task.json",
    "jupyter-test-007/task.json",
    "jupyter-train-019/task.json",
    "jupyter-train-020/task.json",
    "jupyter-train-020/setup.py",
    "jupyter-train-021/task.json",
    "jupyter-test-008/task.json",
    "jupyter-train-022/task.json",
    "jupyter-train-022/setup.py",
    "jupyter-train-023/task.json",
    "jupyter-train-023/setup.py",
    "jupyter-test-009/task.json",
    "jupyter-test-009/setup.py",
    "jupyter-train-024/task.json",
    "jupyter-train-024/setup.py",
    "jupyter-train-025/task.json",
    "jupyter-train-025/setup.py",
    "jupyter-test-010/task.json",
    "jupyter-test-010/setup.py",
    "jupyter-train-026/task.json",
    "jupyter-train-026/setup.py",
    "jupyter-train-027/task.json",
    "jupyter-train-027/setup.py",
    "jupyter-train-028/task.json",
    "jupyter-train-028/check.py",
    "jupyter-train-029/task.json",
    "jupyter-train-029/setup.py",
    "jupyter-train-029/check.py",
    "jupyter-test-011/task.json",
    "jupyter-test-011/setup.py",
    "jupyter-test-011/check.py",
    "jupyter-train-030/task.json",
    "jupyter-train-030/setup.py",
    "jupyter-train-030/check.py",
    "jupyter-train-031/task.json",
    "jupyter-train-031/setup.py",
    "jupyter-train-031/check.py",
    "jupyter-train-032/task.json",
    "jupyter-train-032/setup.py",
    "jupyter-test-012/task.json",
    "jupyter-test-012/setup.py",
    "jupyter-train-033/task.json",
    "jupyter-train-033/setup.py",
    "jupyter-train-033/check.py",
    "jupyter-train-034/task.json",
    "jupyter-train-034/setup.py",
    "jupyter-test-013/task.json",
    "jupyter-test-013/setup.py",
    "jupyter-train-035/task.json",
    "jupyter-train-035/check.py",
    "jupyter-train-036/task.json",
    "jupyter-train-036/setup.py",
    "jupyter-train-036/check.py",
    "jupyter-train-037/task.json",
    "jupyter-train-037/setup.py",
    "jupyter-test-014/task.json",
    "jupyter-test-014/setup.py",
];

/// The built-in tasks, read once.
static CATALOG: LazyLock<Vec<Task>> = LazyLock::new(|| {
    // Compiled in and read by a unit test, so a broken file never reaches a build that runs.
    load(FILES).unwrap_or_else(|e| panic!("the built-in Jupyter tasks: {e}"))
});

/// Every built-in task, in catalog order.
pub(crate) fn catalog() -> Vec<Task> {
    CATALOG.clone()
}

/// Why the task files could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CatalogError {
    /// A `task.json` is not a valid task description.
    #[error("tasks/{path}: {source}")]
    Json {
        /// The file's path under `tasks/`.
        path: String,
        /// What was wrong with it.
        source: serde_json::Error,
    },
    /// A `task.json` names a file that is not in the list.
    #[error("tasks/{task}: no embedded file {name:?}")]
    Missing {
        /// The `task.json` naming it.
        task: String,
        /// The name as written.
        name: String,
    },
}

/// A `task.json`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    id: String,
    split: Split,
    kind: TaskKind,
    prompt: String,
    /// The setup's path, relative to the task's folder.
    #[serde(default)]
    setup: Option<String>,
    grader: GraderFile,
}

/// A task's grader, as written: the check by file name.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum GraderFile {
    Exact(String),
    OneOf(Vec<String>),
    Numeric {
        value: f64,
        #[serde(default)]
        rel_tol: f64,
        #[serde(default)]
        abs_tol: f64,
    },
    /// The check's path, relative to the task's folder.
    Check(String),
}

/// Reads every `*/task.json` of `files`, in order, with the files they name.
pub(crate) fn load(files: &[(&str, &str)]) -> Result<Vec<Task>, CatalogError> {
    files
        .iter()
        .filter(|(path, _)| path.ends_with("/task.json"))
        .map(|(path, text)| read_task(files, path, text))
        .collect()
}

/// One task from its `task.json` at `path`.
fn read_task(files: &[(&str, &str)], path: &str, text: &str) -> Result<Task, CatalogError> {
    let spec: TaskFile = serde_json::from_str(text).map_err(|source| CatalogError::Json {
        path: path.to_owned(),
        source,
    })?;
    let folder = path.strip_suffix("task.json").unwrap_or_default();
    let named = |name: &str| {
        let wanted = resolve(folder, name);
        files
            .iter()
            .find(|(path, _)| *path == wanted)
            .map(|(_, text)| *text)
            .ok_or_else(|| CatalogError::Missing {
                task: path.to_owned(),
                name: name.to_owned(),
            })
    };
    let setup = spec.setup.as_deref().map(named).transpose()?.unwrap_or("");
    let grader = match spec.grader {
        GraderFile::Exact(answer) => Grader::Exact(answer),
        GraderFile::OneOf(answers) => Grader::OneOf(answers),
        GraderFile::Numeric {
            value,
            rel_tol,
            abs_tol,
        } => Grader::Numeric {
            value,
            rel_tol,
            abs_tol,
        },
        GraderFile::Check(name) => Grader::Check {
            code: named(&name)?.to_owned(),
        },
    };
    Ok(Task::new(
        spec.id,
        spec.split,
        spec.kind,
        spec.prompt,
        setup,
        grader,
    ))
}

/// `name` (relative, `..` allowed) from the folder `folder` (ending in `/`), as a path under
/// `tasks/`.
fn resolve(folder: &str, name: &str) -> String {
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashSet};
    use std::path::Path;

    use super::*;

    #[test]
    fn every_embedded_task_parses_with_what_its_kind_needs() {
        let tasks = load(FILES).unwrap();
        assert_eq!(
            tasks.len(),
            FILES
                .iter()
                .filter(|(p, _)| p.ends_with("/task.json"))
                .count()
        );
        let mut ids = HashSet::new();
        for ((path, _), task) in FILES
            .iter()
            .filter(|(p, _)| p.ends_with("/task.json"))
            .zip(&tasks)
        {
            let id = task.id();
            assert!(ids.insert(id), "{id}: duplicate id");
            assert_eq!(
                *path,
                format!("{id}/task.json"),
                "{id}: folder and id differ"
            );
            // The split is a field; ids still name it, and the two must agree.
            let split = task.split();
            assert!(
                id.starts_with(&format!("jupyter-{split}-")),
                "{id}: split field says {split}"
            );
            assert!(!task.prompt().trim().is_empty(), "{id}: empty prompt");
            // Tasks about files need files to work on; numeric and text ones may compute
            // from the prompt alone.
            if matches!(task.kind(), TaskKind::DataAnalysis | TaskKind::Files) {
                assert!(
                    task.has_setup(),
                    "{id}: a {:?} task without setup",
                    task.kind()
                );
            }
            match task.grader() {
                Grader::Check { code } | Grader::HiddenTests { code } => {
                    assert!(!code.trim().is_empty(), "{id}: empty check");
                    assert!(
                        task.has_setup(),
                        "{id}: a check with no inputs to compare with"
                    );
                }
                Grader::Exact(answer) => assert!(!answer.trim().is_empty(), "{id}"),
                Grader::OneOf(answers) => {
                    assert!(!answers.is_empty(), "{id}");
                    assert!(answers.iter().all(|a| !a.trim().is_empty()), "{id}");
                }
                Grader::Numeric {
                    value,
                    rel_tol,
                    abs_tol,
                } => {
                    assert!(value.is_finite(), "{id}");
                    assert!(*rel_tol >= 0.0 && *abs_tol >= 0.0, "{id}");
                }
                Grader::Predictions(grader) => {
                    assert!(!grader.ids.is_empty(), "{id}: no held-out rows");
                    assert!(grader.baseline != grader.reference, "{id}");
                }
                Grader::Chart(grader) => {
                    assert!(!grader.series.is_empty(), "{id}: a chart of nothing");
                }
            }
        }
    }

    #[test]
    fn the_list_holds_exactly_the_files_on_disk() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks");
        let mut on_disk = BTreeSet::new();
        for entry in std::fs::read_dir(&root).unwrap() {
            let dir = entry.unwrap().path();
            // Skips ruff.toml and tool caches (.ruff_cache).
            let hidden = dir.file_name().unwrap().to_str().unwrap().starts_with('.');
            if !dir.is_dir() || hidden {
                continue;
            }
            for file in std::fs::read_dir(&dir).unwrap() {
                let file = file.unwrap().path();
                let relative = file
                    .strip_prefix(&root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                // Solutions are for the reference test, never the binary.
                if file.is_file() && !relative.ends_with("/solution.py") {
                    on_disk.insert(relative);
                }
            }
        }
        let listed: BTreeSet<String> = FILES.iter().map(|(p, _)| (*p).to_owned()).collect();
        assert_eq!(listed.len(), FILES.len(), "a file is listed twice");
        assert_eq!(listed, on_disk);
        // Every listed file is used: each task.json, and every file one of them names.
        let mut used: BTreeSet<String> = BTreeSet::new();
        for (path, text) in FILES.iter().filter(|(p, _)| p.ends_with("/task.json")) {
            let spec: TaskFile = serde_json::from_str(text).unwrap();
            let folder = path.strip_suffix("task.json").unwrap();
            used.insert((*path).to_owned());
            used.extend(spec.setup.map(|s| resolve(folder, &s)));
            if let GraderFile::Check(name) = spec.grader {
                used.insert(resolve(folder, &name));
            }
        }
        assert_eq!(used, listed);
    }

    #[test]
    fn a_bad_file_is_an_error_not_a_panic() {
        let missing = [(
            "t/task.json",
            r#"{"id": "t", "split": "train", "kind": "text", "prompt": "p",
                "setup": "../_shared/none.py", "grader": {"exact": "x"}}"#,
        )];
        assert!(matches!(load(&missing), Err(CatalogError::Missing { .. })));
        let unknown = [(
            "t/task.json",
            r#"{"id": "t", "split": "train", "kind": "text", "prompt": "p",
                "grader": {"exact": "x"}, "answer": "x"}"#,
        )];
        assert!(matches!(load(&unknown), Err(CatalogError::Json { .. })));
    }

    #[test]
    fn relative_names_resolve_under_the_tasks_folder() {
        assert_eq!(resolve("a/", "setup.py"), "a/setup.py");
        assert_eq!(resolve("a/", "../_shared/s.py"), "_shared/s.py");
        assert_eq!(resolve("a/", "./b/../c.py"), "a/c.py");
    }
}
