//! Task files: desktop tasks of one's own, in JSON Lines (`--tasks FILE`).
//!
//! One task per line (blank lines are skipped):
//!
//! ```json
//! {"id": "invoice-total", "split": "train",
//!  "prompt": "invoice.fods is open in Calc. Put the total of column B into B12 as a formula and save the file as invoice.xlsx in /home/user.",
//!  "apps": [["libreoffice", "--calc", "invoice.fods"]],
//!  "files": [{"path": "invoice.fods", "text": "<?xml …"}, {"path": "logo.png", "base64": "iVBORw0KGgo…"}],
//!  "setup": "mkdir -p archive",
//!  "checks": [{"kind": "spreadsheet_cell", "path": "invoice.xlsx", "cell": "B12", "value": "1045.5"},
//!             {"kind": "spreadsheet_formula", "path": "invoice.xlsx", "cell": "B12", "exactly": "SUM(B2:B11)"}]}
//! ```
//!
//! - `id` (required): unique in the file; printable, no spaces, at most 200 bytes.
//! - `split`: `train` (the default) or `test`.
//! - `prompt` (required): what the agent is told.
//! - `apps` (required): the applications to start, in order; the last one has the focus. Each
//!   is an argv (`["mousepad", "notes.txt"]`) or one of the names `terminal`, `text_editor`,
//!   `spreadsheet`, `calculator`, `file_manager`, `browser`, `calc`, `writer`, `impress`.
//!   `["chromium", "URL"]` opens the task's pages; `["libreoffice", "--calc", "FILE"]` (or
//!   `--writer`, `--impress`) opens LibreOffice on a file of the home.
//! - `files`: written into the home folder (`/home/user`) first; each a relative `path` (no
//!   `..`) and exactly one of `text` or `base64`. At most [`MAX_TASK_BYTES`] in all.
//! - `pages`: served to the browser at `http://127.0.0.1:8000/<path>`: `path`, `body`, and
//!   optionally `content_type`.
//! - `setup`: a shell command run in the desktop's jail, in the home folder, after the files
//!   are written and before the applications start; a failing command fails the episode's
//!   start with its output.
//! - `checks` (required, at least one, all must pass): objects named by `kind`, as
//!   [`Check`] lists them: `file_equals`, `file_contains_line`, `file_matches` (regex),
//!   `file_exists`, `file_missing`, `dir_exists`, `spreadsheet_cell`, `spreadsheet_formula`,
//!   `spreadsheet_chart`, `document_contains`, `document_equals`, `document_lacks`, `document_styled`,
//!   `slide_text`, `slide_count`, `window_title_contains`, `window_title_equals`,
//!   `clipboard_equals`, `clipboard_number`, `page_request`, `bookmark`.
//! - `demo`: optional keyboard-only reference solution (`{"type": …}`, `{"key": …}`,
//!   `{"wait_for": {"focused": …}}` and the other [`crate::tasks::DemoCondition`]s,
//!   `{"wait_ms": …}` for a pause between keys), for checking a task by playing it.
//!
//! The whole file is read and validated once, at start-up; every problem is reported with its
//! line number, and one bad line fails the load (a half-loaded dataset would skew training).

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use mcpgym_env::Split;

use crate::grading::Check;
use crate::tasks::{App, DemoStep, DesktopTask, HomeFile, Page};

/// The most bytes of files one task may carry (they are written into every episode's home).
pub const MAX_TASK_BYTES: usize = 64 << 20;

/// Where the applications' programs are looked up (the jail's `PATH`).
const PROGRAM_DIRS: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin"];

pub use mcpgym_env::TaskFileError;

/// A line of a task file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskLine {
    id: String,
    #[serde(default = "default_split")]
    split: Split,
    prompt: String,
    apps: Vec<AppLine>,
    #[serde(default)]
    files: Vec<HomeFile>,
    #[serde(default)]
    pages: Vec<Page>,
    #[serde(default)]
    setup: Option<String>,
    checks: Vec<Check>,
    #[serde(default)]
    demo: Vec<DemoStep>,
}

fn default_split() -> Split {
    Split::Train
}

/// An application to start: an argv, or a name for a usual one.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum AppLine {
    Name(String),
    Argv(Vec<String>),
}

impl AppLine {
    /// The argv and the application it starts.
    fn resolve(self) -> Result<(Vec<String>, App), String> {
        let argv = match self {
            AppLine::Argv(argv) => argv,
            AppLine::Name(name) => match name.as_str() {
                "terminal" => vec!["xterm".into()],
                "text_editor" => vec!["mousepad".into()],
                "spreadsheet" => vec!["gnumeric".into()],
                "calculator" => vec!["galculator".into()],
                "file_manager" => vec!["pcmanfm".into(), crate::tasks::HOME.into()],
                "browser" => vec!["chromium".into()],
                "calc" | "writer" | "impress" => vec!["libreoffice".into(), format!("--{name}")],
                other => vec![other.to_owned()],
            },
        };
        let Some(program) = argv.first() else {
            return Err("an application's argv is empty".into());
        };
        let app = match program.rsplit('/').next().unwrap_or_default() {
            "xterm" => App::Terminal,
            "mousepad" => App::TextEditor,
            "gnumeric" => App::Spreadsheet,
            "galculator" => App::Calculator,
            "pcmanfm" => App::FileManager,
            "chromium" => App::Browser,
            "libreoffice" => match argv.get(1).map(String::as_str) {
                Some("--calc") => App::Calc,
                Some("--writer") => App::Writer,
                Some("--impress") => App::Impress,
                other => {
                    return Err(format!(
                        "libreoffice takes --calc, --writer or --impress first, not {other:?}"
                    ));
                }
            },
            _ => App::Other,
        };
        if !installed(program) {
            return Err(format!(
                "the application {program:?} is not installed here (looked in {}); install it, or use one of terminal, text_editor, spreadsheet, calculator, file_manager, browser, calc, writer, impress",
                PROGRAM_DIRS.join(", ")
            ));
        }
        Ok((argv, app))
    }
}

/// Whether `program` is an executable the jail can run (`chromium` and `libreoffice` are
/// resolved by [`crate::apps`]).
fn installed(program: &str) -> bool {
    let exists = |path: &Path| path.is_file();
    match program {
        "chromium" => exists(Path::new(crate::apps::chromium::BINARY)),
        "libreoffice" => PROGRAM_DIRS
            .iter()
            .any(|dir| exists(&Path::new(dir).join("soffice"))),
        _ if program.starts_with('/') => exists(Path::new(program)),
        _ => PROGRAM_DIRS
            .iter()
            .any(|dir| exists(&Path::new(dir).join(program))),
    }
}

/// Reads and validates a task file.
pub fn load_task_file(path: &Path) -> Result<Vec<DesktopTask>, TaskFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| TaskFileError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse_task_file(&text, path)
}

/// Parses a task file's text (`path` names it in errors).
pub fn parse_task_file(text: &str, path: &Path) -> Result<Vec<DesktopTask>, TaskFileError> {
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
                "{e}; each line is one JSON object with id, prompt, apps and checks (and optionally split, files, pages, setup, demo)"
            ))
        })?;
        let task = build(spec).map_err(fail)?;
        if !ids.insert(task.id.clone()) {
            return Err(fail(format!(
                "the id {:?} is used by an earlier line; ids must be unique",
                task.id
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
fn build(spec: TaskLine) -> Result<DesktopTask, String> {
    let id = spec.id;
    if id.is_empty() || id.len() > 200 || id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the id {id:?} must be 1 to 200 bytes with no space or control character"
        ));
    }
    if spec.prompt.trim().is_empty() {
        return Err("the prompt is empty: say what the desktop should look like when done".into());
    }
    if spec.apps.is_empty() {
        return Err("apps is empty: start at least one application (e.g. \"terminal\")".into());
    }
    let mut launch = Vec::new();
    let mut main_app = None;
    for app in spec.apps {
        let (argv, app) = app.resolve()?;
        main_app.get_or_insert(app);
        launch.push(argv);
    }
    let bytes: usize = spec.files.iter().map(|f| f.contents.len()).sum();
    if bytes > MAX_TASK_BYTES {
        return Err(format!(
            "the files hold {bytes} bytes; a task may carry at most {MAX_TASK_BYTES}"
        ));
    }
    let task = DesktopTask {
        id,
        split: spec.split,
        instruction: spec.prompt,
        app: main_app.unwrap_or(App::Other),
        files: spec.files,
        pages: spec.pages,
        setup: spec.setup,
        launch,
        checks: spec.checks,
        demo: spec.demo,
        hacks: Vec::new(),
        _notes: None,
    };
    task.validate()?;
    Ok(task)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<DesktopTask>, String> {
        parse_task_file(text, Path::new("tasks.jsonl")).map_err(|e| e.to_string())
    }

    const GOOD: &str = r#"{"id": "a", "prompt": "Rename x.txt to y.txt.", "apps": ["terminal"], "files": [{"path": "x.txt", "text": "hi"}], "checks": [{"kind": "file_exists", "path": "y.txt"}]}"#;

    #[test]
    fn a_good_file_loads_with_defaults() {
        let text = format!(
            "{GOOD}\n\n{}\n",
            r#"{"id": "b", "split": "test", "prompt": "Bold it.", "apps": [["libreoffice", "--writer", "d.fodt"]], "files": [{"path": "d.fodt", "base64": "PGRvYy8+"}], "setup": "true", "checks": [{"kind": "document_styled", "path": "d.odt", "text": "it", "bold": true}, {"kind": "file_matches", "path": "d.fodt", "pattern": "(?m)^<doc"}], "demo": [{"wait_ms": 100}]}"#
        );
        let tasks = parse(&text).unwrap();
        assert_eq!(tasks.len(), 2);
        assert_eq!(tasks[0].split, Split::Train);
        assert_eq!(tasks[0].launch, vec![vec!["xterm".to_owned()]]);
        assert_eq!(tasks[0].app(), App::Terminal);
        assert_eq!(tasks[1].split, Split::Test);
        assert_eq!(tasks[1].app(), App::Writer);
        assert_eq!(tasks[1].files()[0].1, b"<doc/>");
        assert_eq!(tasks[1].setup(), Some("true"));
    }

    #[test]
    fn broken_lines_are_refused_with_their_line_and_reason() {
        let cases: &[(&str, &str)] = &[
            ("not json", "line 1"),
            (
                r#"{"id": "a", "prompt": "p", "apps": ["terminal"]}"#,
                "checks",
            ),
            (
                r#"{"id": "a", "prompt": "p", "apps": ["terminal"], "checks": []}"#,
                "no checks",
            ),
            (
                r#"{"id": "a", "prompt": " ", "apps": ["terminal"], "checks": [{"kind": "file_exists", "path": "x"}]}"#,
                "prompt is empty",
            ),
            (
                r#"{"id": "a b", "prompt": "p", "apps": ["terminal"], "checks": [{"kind": "file_exists", "path": "x"}]}"#,
                "no space",
            ),
            (
                r#"{"id": "a", "prompt": "p", "apps": [], "checks": [{"kind": "file_exists", "path": "x"}]}"#,
                "apps is empty",
            ),
            (
                r#"{"id": "a", "prompt": "p", "apps": ["no-such-program-here"], "checks": [{"kind": "file_exists", "path": "x"}]}"#,
                "not installed",
            ),
            (
                r#"{"id": "a", "prompt": "p", "apps": [["libreoffice", "--base"]], "checks": [{"kind": "file_exists", "path": "x"}]}"#,
                "--calc, --writer or --impress",
            ),
            (
                r#"{"id": "a", "prompt": "p", "apps": ["terminal"], "checks": [{"kind": "file_exists", "path": "../etc/passwd"}]}"#,
                "check on",
            ),
            (
                r#"{"id": "a", "prompt": "p", "apps": ["terminal"], "checks": [{"kind": "file_matches", "path": "x", "pattern": "("}]}"#,
                "pattern",
            ),
            (
                r#"{"id": "a", "prompt": "p", "apps": ["terminal"], "checks": [{"kind": "no_such_check"}]}"#,
                "unknown variant",
            ),
            (
                r#"{"id": "a", "prompt": "p", "apps": ["terminal"], "files": [{"path": "x", "text": "a", "base64": "YQ=="}], "checks": [{"kind": "file_exists", "path": "x"}]}"#,
                "exactly one",
            ),
            (
                r#"{"id": "a", "prompt": "p", "apps": ["terminal"], "pages": [{"path": "../x", "body": ""}], "checks": [{"kind": "file_exists", "path": "x"}]}"#,
                "page",
            ),
            (
                r#"{"id": "a", "prompt": "p", "apps": ["terminal"], "checks": [{"kind": "file_exists", "path": "x"}], "answer": 4}"#,
                "unknown field",
            ),
        ];
        for (line, reason) in cases {
            let error = parse(line).expect_err(line);
            assert!(error.contains("line 1"), "{error}");
            assert!(error.contains(reason), "{line}: {error}");
        }
        let twice = format!("{GOOD}\n{GOOD}");
        let error = parse(&twice).unwrap_err();
        assert!(
            error.contains("line 2") && error.contains("unique"),
            "{error}"
        );
        assert!(parse("\n \n").unwrap_err().contains("holds no task"));
    }
}
