//! Task files: a dataset of one's own, in JSON Lines (`--tasks FILE`).
//!
//! One task per line (blank lines are skipped):
//!
//! ```json
//! {"id": "north-revenue", "split": "train", "kind": "data_analysis",
//!  "prompt": "sales.csv in /home/user has ... What is ...? Give a number to 2 places.",
//!  "files": [{"path": "sales.csv", "source": "data/sales.csv"},
//!            {"path": "notes.txt", "text": "inline text"},
//!            {"path": "logo.png", "base64": "iVBORw0KGgo..."}],
//!  "setup": "gunzip -k archive.csv.gz",
//!  "grader": {"numeric": {"value": 17758.55, "abs_tol": 0.01}}}
//! ```
//!
//! - `id` (required): unique in the file; printable, no spaces, at most 200 bytes.
//! - `split`: `train` (the default) or `test`.
//! - `kind`: `data_analysis` (the default), `numeric`, `text`, `files` or `debugging`.
//! - `prompt` (required): what the agent is told, with the form `final_answer` expects.
//! - `files`: written into the home folder before the agent starts; each has a relative
//!   `path` (no `..`) and exactly one of `text` (UTF-8), `base64`, or `source` (a path relative
//!   to the task file's folder, read once at load).
//! - `setup`: a shell command run in the home folder after the files are written, before the
//!   agent's first cell (with the sandbox's runtime on `PATH`); a failing command fails the
//!   episode's start with a sentence.
//! - `grader` (required), one of: `{"exact": "…"}` (case-sensitive), `{"one_of": ["…", …]}`
//!   (case-insensitive), `{"numeric": {"value": …, "rel_tol": …, "abs_tol": …}}` (tolerances
//!   default to 0), `{"check": "python source"}` or `{"check_file": "checks/x.py"}`: a hidden
//!   Python check run after the agent's processes are stopped (see [`Grader::Check`]).
//!
//! The whole file is read and validated once, at start-up; every problem is reported with its
//! line number, and one bad line fails the load (a half-loaded dataset would skew training).

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;

use mcpgym_env::Split;

use crate::families::Instance;
use crate::tasks::{Grader, Task, TaskKind};

/// The most bytes of files one task may carry (its files travel into every episode's sandbox).
pub const MAX_TASK_BYTES: usize = 64 << 20;

pub use mcpgym_env::TaskFileError;

/// A line of a task file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskLine {
    id: String,
    #[serde(default = "default_split")]
    split: Split,
    #[serde(default = "default_kind")]
    kind: TaskKind,
    prompt: String,
    #[serde(default)]
    files: Vec<FileLine>,
    #[serde(default)]
    setup: Option<String>,
    grader: GraderLine,
}

fn default_split() -> Split {
    Split::Train
}

fn default_kind() -> TaskKind {
    TaskKind::DataAnalysis
}

/// A file of a task, as written: a path and exactly one way to give its bytes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLine {
    path: String,
    text: Option<String>,
    base64: Option<String>,
    source: Option<String>,
}

/// A grader, as written.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum GraderLine {
    Exact(String),
    OneOf(Vec<String>),
    Numeric {
        value: f64,
        #[serde(default)]
        rel_tol: f64,
        #[serde(default)]
        abs_tol: f64,
    },
    Check(String),
    CheckFile(String),
}

/// Reads and validates a task file.
pub fn load_task_file(path: &Path) -> Result<Vec<Task>, TaskFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| TaskFileError::Read {
        path: path.to_owned(),
        source,
    })?;
    let folder = path.parent().unwrap_or(Path::new("."));
    parse_task_file(&text, path, folder)
}

/// Parses a task file's text; `folder` is where `source` and `check_file` paths start.
pub fn parse_task_file(text: &str, path: &Path, folder: &Path) -> Result<Vec<Task>, TaskFileError> {
    let mut tasks = Vec::new();
    let mut ids = HashSet::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fail = |message: String| TaskFileError::Line {
            path: path.to_owned(),
            line: index + 1,
            message,
        };
        let spec: TaskLine = serde_json::from_str(line).map_err(|e| {
            fail(format!(
                "{e}; each line is one JSON object with id, prompt and grader (and optionally split, kind, files, setup)"
            ))
        })?;
        let task = build(spec, folder).map_err(fail)?;
        if !ids.insert(task.id().to_owned()) {
            return Err(fail(format!(
                "the id {:?} is used by an earlier line; ids must be unique",
                task.id()
            )));
        }
        tasks.push(task);
    }
    if tasks.is_empty() {
        return Err(TaskFileError::Empty {
            path: path.to_owned(),
        });
    }
    Ok(tasks)
}

/// One task from its line; `Err` with a sentence.
fn build(spec: TaskLine, folder: &Path) -> Result<Task, String> {
    check_id(&spec.id)?;
    if spec.prompt.trim().is_empty() {
        return Err("the prompt is empty: say what to compute and in which form to answer".into());
    }
    let grader = match spec.grader {
        GraderLine::Exact(answer) if answer.trim().is_empty() => {
            return Err("the exact answer is empty".into());
        }
        GraderLine::Exact(answer) => Grader::Exact(answer),
        GraderLine::OneOf(answers)
            if answers.is_empty() || answers.iter().any(|a| a.trim().is_empty()) =>
        {
            return Err("one_of needs at least one answer, none of them empty".into());
        }
        GraderLine::OneOf(answers) => Grader::OneOf(answers),
        GraderLine::Numeric {
            value,
            rel_tol,
            abs_tol,
        } => {
            let tolerance = |t: f64| t >= 0.0 && t.is_finite();
            if !(value.is_finite() && tolerance(rel_tol) && tolerance(abs_tol)) {
                return Err("numeric needs a finite value and tolerances of 0 or more".into());
            }
            Grader::Numeric {
                value,
                rel_tol,
                abs_tol,
            }
        }
        GraderLine::Check(code) if code.trim().is_empty() => {
            return Err("the check is empty".into());
        }
        GraderLine::Check(code) => Grader::Check { code },
        GraderLine::CheckFile(name) => {
            let file = resolve(folder, &name)?;
            let code = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read the check file {}: {e}", file.display()))?;
            Grader::Check { code }
        }
    };
    let mut instance = Instance::new(spec.prompt, grader);
    let mut total = 0usize;
    let mut paths = HashSet::new();
    for file in spec.files {
        check_relative(&file.path)?;
        if !paths.insert(file.path.clone()) {
            return Err(format!("the file {:?} is listed twice", file.path));
        }
        let bytes = match (file.text, file.base64, file.source) {
            (Some(text), None, None) => text.into_bytes(),
            (None, Some(encoded), None) => base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .map_err(|e| {
                    format!(
                        "the file {:?}: base64 that does not decode ({e})",
                        file.path
                    )
                })?,
            (None, None, Some(source)) => {
                let from = resolve(folder, &source)?;
                std::fs::read(&from).map_err(|e| {
                    format!(
                        "the file {:?}: cannot read {} ({e})",
                        file.path,
                        from.display()
                    )
                })?
            }
            _ => {
                return Err(format!(
                    "the file {:?} needs exactly one of text, base64 or source",
                    file.path
                ));
            }
        };
        total += bytes.len();
        if total > MAX_TASK_BYTES {
            return Err(format!(
                "the task's files exceed {} MiB in all",
                MAX_TASK_BYTES >> 20
            ));
        }
        instance = instance.file(file.path, bytes);
    }
    if let Some(command) = spec.setup.filter(|c| !c.trim().is_empty()) {
        // The command travels as a JSON string literal, which is also a valid Python literal
        // for any text: no quoting can break out of it.
        let literal = serde_json::to_string(&command).expect("a string serializes");
        instance = instance.setup(format!(
            "import subprocess\nsubprocess.run({literal}, shell=True, check=True)"
        ));
    }
    Ok(instance.into_task(spec.id, spec.split, spec.kind))
}

fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > 200 {
        return Err("the id must be 1 to 200 bytes long".into());
    }
    if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the id {id:?} holds a space or a control character"
        ));
    }
    Ok(())
}

/// A task file path must stay inside the home folder.
fn check_relative(path: &str) -> Result<(), String> {
    let parsed = Path::new(path);
    let fine = !path.is_empty()
        && !path.contains('\0')
        && parsed
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && parsed
            .components()
            .any(|c| matches!(c, Component::Normal(_)));
    if fine {
        Ok(())
    } else {
        Err(format!(
            "the file path {path:?} must be relative to the home folder, without `..` (e.g. \"data/sales.csv\")"
        ))
    }
}

/// `name` relative to the task file's folder.
fn resolve(folder: &Path, name: &str) -> Result<PathBuf, String> {
    if name.is_empty() || name.contains('\0') {
        return Err(format!("{name:?} is not a file name"));
    }
    Ok(folder.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Task>, TaskFileError> {
        parse_task_file(text, Path::new("tasks.jsonl"), Path::new("/nonexistent"))
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn a_good_file_loads_every_grader_and_file_form() {
        let text = r#"
{"id": "a", "prompt": "p", "grader": {"exact": "x"}, "files": [{"path": "d/t.txt", "text": "hi"}, {"path": "b.bin", "base64": "AP8="}]}
{"id": "b", "split": "test", "kind": "numeric", "prompt": "p", "grader": {"numeric": {"value": 2.5, "abs_tol": 0.1}}}
{"id": "c", "prompt": "p", "grader": {"one_of": ["yes", "y"]}, "setup": "echo '\"; import os' > x"}
{"id": "d", "prompt": "p", "grader": {"check": "print('PASS')"}}
"#;
        let tasks = parse(text).unwrap();
        assert_eq!(tasks.len(), 4);
        assert_eq!(tasks[0].split(), Split::Train);
        assert_eq!(tasks[1].split(), Split::Test);
        assert_eq!(tasks[1].kind(), TaskKind::Numeric);
        assert!(matches!(tasks[1].grader(), Grader::Numeric { value, .. } if *value == 2.5));
        assert!(tasks[0].setup_source().contains("\"d/t.txt\""));
        // The command is a JSON literal inside the program.
        assert!(
            tasks[2]
                .setup_source()
                .contains(r#"subprocess.run("echo '\"; import os' > x""#)
        );
        assert!(matches!(tasks[3].grader(), Grader::Check { .. }));
    }

    #[test]
    fn broken_lines_say_where_and_what() {
        for (text, wanted) in [
            ("{\"id\": \"a\"}", "line 1: missing field `prompt`"),
            (
                "\n\n{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"exact\": \"x\"}, \"answer\": 1}",
                "line 3: unknown field `answer`",
            ),
            (
                "{\"id\": \"a b\", \"prompt\": \"p\", \"grader\": {\"exact\": \"x\"}}",
                "line 1: the id \"a b\" holds a space",
            ),
            (
                "{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"exact\": \"x\"}}\n{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"exact\": \"x\"}}",
                "line 2: the id \"a\" is used by an earlier line",
            ),
            (
                "{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"exact\": \"x\"}, \"files\": [{\"path\": \"../x\", \"text\": \"\"}]}",
                "must be relative to the home folder",
            ),
            (
                "{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"exact\": \"x\"}, \"files\": [{\"path\": \"/etc/x\", \"text\": \"\"}]}",
                "must be relative to the home folder",
            ),
            (
                "{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"exact\": \"x\"}, \"files\": [{\"path\": \"x\"}]}",
                "needs exactly one of text, base64 or source",
            ),
            (
                "{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"exact\": \"x\"}, \"files\": [{\"path\": \"x\", \"base64\": \"!!\"}]}",
                "base64 that does not decode",
            ),
            (
                "{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"exact\": \"x\"}, \"files\": [{\"path\": \"x\", \"source\": \"missing.csv\"}]}",
                "cannot read /nonexistent/missing.csv",
            ),
            (
                "{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"numeric\": {\"value\": 1, \"abs_tol\": -1}}}",
                "tolerances of 0 or more",
            ),
            (
                "{\"id\": \"a\", \"prompt\": \" \", \"grader\": {\"exact\": \"x\"}}",
                "the prompt is empty",
            ),
            (
                "{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"grep\": \"x\"}}",
                "line 1: unknown variant `grep`",
            ),
            ("not json", "line 1: expected"),
            ("\n  \n", "holds no task"),
        ] {
            let message = error(text);
            assert!(message.contains(wanted), "{text:?}: {message}");
        }
    }
}
