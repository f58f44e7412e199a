//! The desktop tasks: what the agent is asked, the files and applications its desktop starts
//! with, the hidden checks that grade it, and a scripted keyboard-only solution.
//!
//! Tasks are data: one JSON file per task in the crate's `tasks/` folder, embedded in the
//! binary and read once. A task's public face is its id, split and
//! [`DesktopTask::instruction`]; its checks are the grader (see [`crate::grading`]) and its
//! [`DesktopTask::demo`] is a reference solution that tests play on a real display to prove the
//! task solvable and its grader sound: the checks must fail on the untouched desktop and pass
//! after the demo. Both are secret: only the grader and tests reach them.
//!
//! A task file (the same shape [`DesktopTask::from_json`] reads from any source):
//!
//! ```json
//! {
//!   "id": "desktop-train-001",
//!   "split": "train",
//!   "app": "terminal",
//!   "instruction": "In your home folder (/home/user) there is a file named draft.txt. ...",
//!   "files": [{"path": "draft.txt", "text": "Quarterly report, final version.\n"}],
//!   "launch": [["xterm"]],
//!   "checks": [
//!     {"kind": "file_missing", "path": "draft.txt"},
//!     {"kind": "file_equals", "path": "report-final.txt", "text": "Quarterly report, final version."}
//!   ],
//!   "demo": [{"wait_ms": 1500}, {"type": "mv draft.txt report-final.txt"}, {"key": "Return"}],
//!   "notes": "Why the demo does what it does, for whoever maintains the task."
//! }
//! ```
//!
//! `files`, `demo` and `notes` may be left out; [`Check`] lists the check kinds.
//!
//! How a task runs: the environment writes the task's `files` into a fresh, empty home
//! folder (seen as `/home/user` by the applications), then starts each argv of its `launch`
//! in order, in the background, inside the application jail with
//! `HOME=/home/user` and the working directory at home. Under openbox the newest window has
//! the keyboard focus, so the last application launched is the one a demo starts typing into.
//! A window can be listed before its application accepts keys, so every demo starts with a
//! wait, and ends with one so that a save has reached the disk before the grader looks.
//!
//! What the applications do, as found on Debian (the demos depend on it):
//!
//! - `xterm` runs bash; `printf '\033]2;TITLE\007'` sets its window title, and `xclip
//!   -selection clipboard FILE` keeps the clipboard while the terminal lives.
//! - `mousepad` opens its Save As dialog (Ctrl+S on an untitled document, Ctrl+Shift+S) with
//!   the name field focused and the folder at home. A Return pressed within a few hundred
//!   milliseconds of typing the name is swallowed by the field's completion, hence the waits.
//!   Ctrl+R is Find and Replace; Escape closes it.
//! - `gnumeric` saving a workbook opened from CSV (Ctrl+S) opens Save As with the type
//!   "Gnumeric XML": a `.gnumeric` name saves at once, another extension asks for
//!   confirmation. Typing in a column auto-completes from its entries, so demos never type a
//!   prefix of an existing entry.
//! - `galculator` drops keys that arrive while it animates the button of the previous one
//!   (typing at 12 ms per key loses digits; the same key twice in a row is the most fragile),
//!   so its demos press one key at a time, 150 ms apart, and avoid repeated digits. Ctrl+C
//!   copies the display's number (`888`, `0.875`), without a newline.
//! - `pcmanfm`'s folder view has the focus at start; typing selects by name, Escape ends the
//!   search and keeps the selection, Return opens it. Ctrl+Shift+N asks for a new folder's
//!   name, F2 renames, Delete asks whether to move to the trash (`~/.local/share/Trash`, Yes
//!   focused), Ctrl+X / Ctrl+C then Ctrl+V in another folder moves or copies.
//! - LibreOffice 7.4 (X11 back end): Ctrl+Shift+S opens Save As with the current name
//!   unselected (Ctrl+A first); the file type is reached with Tab, then Home and Down (typing
//!   an entry's name fails: the names hold an en dash). Alt+D then A or N sorts ascending or
//!   descending; Alt+I, C inserts a chart and Return finishes its wizard; Ctrl+H is Find &
//!   Replace (Tab three times reaches the replacement, Alt+L replaces all); Alt+F, E, D
//!   exports a PDF; in Impress, Ctrl+M adds a slide after the current one. It drops the
//!   second of two identical keys typed in quick succession (taking them for auto-repeat),
//!   so the `type` action pauses before a repeated character.
//! - Chromium: Ctrl+L focuses the address bar, Tab moves between a page's fields, Space
//!   toggles a checkbox, a list's type-ahead wants the option's name in lowercase, Ctrl+D
//!   then Return bookmarks the page, and the bookmarks file is written about 2.5 s after a
//!   change. Downloads land in `~/Downloads` without a prompt.

use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

use mcpgym_env::{Split, TaskSet};
use serde::Deserialize;

use crate::grading::{Check, validate_relative_path};

/// The home folder as the applications see it.
pub const HOME: &str = "/home/user";

/// The application a task is mainly about (a few tasks use two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum App {
    /// `xterm` running bash.
    Terminal,
    /// `mousepad`, a GTK text editor.
    TextEditor,
    /// `gnumeric`, a spreadsheet.
    Spreadsheet,
    /// `galculator`, a calculator.
    Calculator,
    /// `pcmanfm`, a file manager.
    FileManager,
    /// Chromium, a web browser, on the task's local pages.
    Browser,
    /// LibreOffice Calc, a spreadsheet.
    Calc,
    /// LibreOffice Writer, a word processor.
    Writer,
    /// LibreOffice Impress, a presentation editor.
    Impress,
    /// Another program (a task file's own).
    Other,
}

/// One step of a scripted, keyboard-only solution. There are no coordinates, so a demo does
/// not depend on where the window manager places windows. In a task file:
/// `{"type": "ls"}`, `{"key": "Return"}`, `{"wait_ms": 700}`,
/// `{"wait_for": {"focused": "Save As"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DemoStep {
    /// Types the text, as the environment's `type` action does (about 12 ms per character).
    /// Never contains a newline: a demo presses `Return` with [`DemoStep::Key`] instead,
    /// because a typed newline can be lost.
    Type(String),
    /// Presses one key chord, in xdotool syntax: `ctrl+s`, `Return`, `alt+F4`, `KP_Multiply`.
    Key(String),
    /// Waits this many milliseconds: a pause between keys for an application that drops
    /// keys typed too fast. What a step waits for (a window, a file) is a [`DemoStep::WaitFor`].
    #[serde(rename = "wait_ms")]
    Wait(u32),
    /// Waits until the condition holds, for at most [`DEMO_WAIT_LIMIT`]: the window, dialog
    /// or file the next step needs.
    WaitFor(DemoCondition),
}

/// The longest a [`DemoStep::WaitFor`] waits before the demo fails, naming what never came.
pub const DEMO_WAIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// What a [`DemoStep::WaitFor`] waits for. In a task file: `{"focused": "Save As"}`,
/// `{"titled": "~/notes.txt - Mousepad"}`, `{"folder": "archive"}`, `{"missing": "old.txt"}`,
/// `{"file": "report.pdf"}`, `{"file_contains": ["notes.txt", "done"]}`, `{"gone": "Save As"}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DemoCondition {
    /// The focused window's title contains this text (a dialog opened, a document loaded).
    Focused(String),
    /// The focused window's title is exactly this text (an editor's title without its
    /// unsaved-changes mark: the document is saved).
    Titled(String),
    /// No window's title contains this text (a dialog closed).
    Gone(String),
    /// A file at this path (relative to the home folder) exists and is not empty.
    File(String),
    /// A file at this path (relative to the home folder) contains this text.
    FileContains(String, String),
    /// A folder at this path (relative to the home folder) exists.
    Folder(String),
    /// Nothing at this path (relative to the home folder) exists.
    Missing(String),
}

impl DemoCondition {
    /// A `/bin/sh` command line that exits 0 exactly when the condition holds, run in the
    /// home folder on the desktop's display (as the `run_command` tool runs commands).
    pub fn shell_test(&self) -> String {
        match self {
            DemoCondition::Focused(title) => format!(
                "xdotool getactivewindow getwindowname 2>/dev/null | grep -qF -- {}",
                shell_quote(title)
            ),
            DemoCondition::Titled(title) => format!(
                "xdotool getactivewindow getwindowname 2>/dev/null | grep -qxF -- {}",
                shell_quote(title)
            ),
            DemoCondition::Gone(title) => format!(
                "! xdotool search --onlyvisible --name -- {} >/dev/null 2>&1",
                shell_quote(&regex::escape(title))
            ),
            DemoCondition::File(path) => format!("test -s {}", shell_quote(path)),
            DemoCondition::Folder(path) => format!("test -d {}", shell_quote(path)),
            DemoCondition::Missing(path) => format!(
                "test ! -e {} && test ! -L {}",
                shell_quote(path),
                shell_quote(path)
            ),
            DemoCondition::FileContains(path, text) => format!(
                "grep -qF -- {} {} 2>/dev/null",
                shell_quote(text),
                shell_quote(path)
            ),
        }
    }
}

impl std::fmt::Display for DemoCondition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DemoCondition::Focused(title) => write!(f, "a focused window titled \"…{title}…\""),
            DemoCondition::Titled(title) => write!(f, "a focused window titled \"{title}\""),
            DemoCondition::Gone(title) => write!(f, "no window titled \"…{title}…\""),
            DemoCondition::File(path) => write!(f, "the file {path}"),
            DemoCondition::FileContains(path, text) => write!(f, "{text:?} in {path}"),
            DemoCondition::Folder(path) => write!(f, "the folder {path}"),
            DemoCondition::Missing(path) => write!(f, "{path} gone"),
        }
    }
}

/// `text` as one `/bin/sh` word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// How a client plays a [`DemoStep`] through the desktop's tools.
#[derive(Debug, Clone, PartialEq)]
pub enum DemoCall {
    /// Call this tool once with these arguments.
    Tool(&'static str, serde_json::Value),
    /// Call `run_command` (served with `--allow-shell`) with the condition's
    /// [`DemoCondition::shell_test`] until it exits 0, for at most [`DEMO_WAIT_LIMIT`]; past
    /// that the demo failed waiting for the condition.
    Until(DemoCondition),
}

impl DemoStep {
    /// The tool call (or calls) that play this step.
    pub fn call(&self) -> DemoCall {
        use serde_json::json;
        match self {
            DemoStep::Type(text) => DemoCall::Tool("type", json!({ "text": text })),
            DemoStep::Key(keys) => DemoCall::Tool("key", json!({ "text": keys })),
            DemoStep::Wait(ms) => {
                DemoCall::Tool("wait", json!({ "duration": f64::from(*ms) / 1000.0 }))
            }
            DemoStep::WaitFor(condition) => DemoCall::Until(condition.clone()),
        }
    }
}

/// A file the desktop starts with. In a task file: `{"path": "notes.txt", "text": "…"}` or
/// `{"path": "report.xlsx", "base64": "UEsDB…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "HomeFileJson")]
pub struct HomeFile {
    /// Relative to home; parent folders are created.
    pub path: String,
    /// The file's contents.
    pub contents: Vec<u8>,
}

/// A [`HomeFile`] as written in JSON: exactly one of `text` and `base64`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HomeFileJson {
    path: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    base64: Option<String>,
}

impl TryFrom<HomeFileJson> for HomeFile {
    type Error = String;

    fn try_from(json: HomeFileJson) -> Result<Self, String> {
        use base64::Engine as _;
        let contents = match (json.text, json.base64) {
            (Some(text), None) => text.into_bytes(),
            (None, Some(encoded)) => base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .map_err(|e| format!("file {:?}: base64 that does not decode: {e}", json.path))?,
            _ => {
                return Err(format!(
                    "file {:?} needs exactly one of \"text\" and \"base64\"",
                    json.path
                ));
            }
        };
        Ok(HomeFile {
            path: json.path,
            contents,
        })
    }
}

/// A page the task's own web server serves to the desktop's browser, at
/// `http://127.0.0.1:8000/<path>` inside the browser's jail. The server runs in the
/// environment's process, outside the jail: what it receives (form posts, downloads, visits)
/// is what web graders read, and the agent cannot touch that record.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// The URL path without the leading `/` (`index.html`, `files/report.csv`); `index.html`
    /// is also served at `/`.
    pub path: String,
    /// The body, as text.
    pub body: String,
    /// The `Content-Type`; by default from the path's extension (`.html`, `.css`, `.js`,
    /// `.csv`, `.txt`, `.json`), else `application/octet-stream`.
    #[serde(default)]
    pub content_type: Option<String>,
}

/// One desktop task. Only its public face (id, split, instruction) is a public field; the
/// files, applications, checks and demo are read through methods, and the checks only inside
/// this crate, by the grader.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DesktopTask {
    /// The stable id, `desktop-<split>-<nnn>` for the built-in tasks. Episodes, trajectories
    /// and clients name tasks by it, so it never changes.
    pub id: String,
    /// The split the task belongs to.
    pub split: Split,
    /// What the agent is told: exactly what to produce (names, text), never how it is checked.
    pub instruction: String,
    /// The application the task is mainly about.
    pub(crate) app: App,
    /// Files written into the home folder before the applications start.
    #[serde(default)]
    pub(crate) files: Vec<HomeFile>,
    /// Pages the episode's web server serves to the browser (see [`Page`]).
    #[serde(default)]
    pub(crate) pages: Vec<Page>,
    /// A shell command run in the jail, in the home folder, after the files are written and
    /// before the applications start; a failing command fails the episode's start.
    #[serde(default)]
    pub(crate) setup: Option<String>,
    /// The applications to start, in order, each an argv run with the working directory at
    /// home. `chromium URL` and `libreoffice --calc|--writer|--impress [FILE]` start those
    /// applications as the [`crate::apps`] module sets them up.
    pub(crate) launch: Vec<Vec<String>>,
    /// The grader: every check must pass. Secret.
    pub(crate) checks: Vec<Check>,
    /// A keyboard-only reference solution, played once the windows are up. Secret.
    #[serde(default)]
    pub(crate) demo: Vec<DemoStep>,
    /// A generated task's scripted near misses, each of which must fail its grader. Secret.
    #[serde(skip)]
    pub(crate) hacks: Vec<crate::families::Hack>,
    /// Why the demo does what it does, for whoever maintains the task; never used at run time.
    #[serde(default, rename = "notes")]
    pub(crate) _notes: Option<String>,
}

/// Why a task file was refused.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// Not JSON, or not a task's shape (a missing or unknown field, an unknown check kind).
    #[error("not a desktop task: {0}")]
    Json(#[from] serde_json::Error),
    /// A well-formed task that cannot run or be graded.
    #[error("desktop task {id:?}: {problem}")]
    Invalid {
        /// The task's id.
        id: String,
        /// What is wrong.
        problem: String,
    },
}

impl DesktopTask {
    /// Reads one task from its JSON text and checks that it can run and be graded: an id, at
    /// least one check, paths relative to home (plain names, no `..`) and each written once,
    /// no empty argv.
    pub fn from_json(json: &str) -> Result<Self, TaskError> {
        let task: DesktopTask = serde_json::from_str(json)?;
        task.validate().map_err(|problem| TaskError::Invalid {
            id: task.id.clone(),
            problem,
        })?;
        Ok(task)
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.id.trim().is_empty() {
            return Err("the id is empty".into());
        }
        if self.checks.is_empty() {
            return Err("it has no checks, so nothing could pass it".into());
        }
        let mut written = HashSet::new();
        for file in &self.files {
            validate_relative_path(&file.path).map_err(|e| format!("file {e}"))?;
            if !written.insert(file.path.as_str()) {
                return Err(format!("file {:?} is written twice", file.path));
            }
        }
        for check in &self.checks {
            if let Some(path) = check.path() {
                validate_relative_path(path).map_err(|e| format!("check on {e}"))?;
            }
            if let Check::FileMatches { pattern, .. } = check {
                regex::Regex::new(pattern)
                    .map_err(|e| format!("the pattern {pattern:?} is not a valid regex: {e}"))?;
            }
        }
        if self.launch.iter().any(Vec::is_empty) {
            return Err("an application's argv is empty".into());
        }
        let mut served = HashSet::new();
        for page in &self.pages {
            crate::pages::validate_page_path(&page.path).map_err(|e| format!("page {e}"))?;
            if !served.insert(page.path.as_str()) {
                return Err(format!("page {:?} is served twice", page.path));
            }
        }
        Ok(())
    }

    /// The application the task is mainly about.
    pub fn app(&self) -> App {
        self.app
    }

    /// The programs the task launches (each argv's first word), for coverage reports.
    pub fn programs(&self) -> impl Iterator<Item = &str> + '_ {
        self.launch
            .iter()
            .filter_map(|argv| argv.first().map(String::as_str))
    }

    /// The reference solution. Secret: for tests and harnesses that prove the task solvable,
    /// never for the agent.
    pub fn demo(&self) -> &[DemoStep] {
        &self.demo
    }

    /// The scripted near misses (see [`crate::families::Hack`]). Secret, like the demo.
    pub fn hacks(&self) -> &[crate::families::Hack] {
        &self.hacks
    }

    /// The pages the episode's web server serves.
    pub fn pages(&self) -> &[Page] {
        &self.pages
    }

    /// The setup command, if any.
    pub fn setup(&self) -> Option<&str> {
        self.setup.as_deref()
    }

    /// The files the desktop starts with, as (path relative to home, contents).
    pub(crate) fn files(&self) -> Vec<(&str, &[u8])> {
        self.files
            .iter()
            .map(|f| (f.path.as_str(), f.contents.as_slice()))
            .collect()
    }

    /// The applications to start, in order, each an argv.
    pub(crate) fn launch(&self) -> &[Vec<String>] {
        &self.launch
    }

    /// The grader. Secret: for this crate's grading only.
    pub(crate) fn checks(&self) -> &[Check] {
        &self.checks
    }
}

/// `(id, text of tasks/<id>.json)` for each id, embedded in the binary.
macro_rules! embedded {
    ($($id:literal),* $(,)?) => {
        &[$(($id, include_str!(concat!("../tasks/", $id, ".json")))),*]
    };
}

/// The built-in tasks' files, in catalog order: train and test interleaved, as they were
/// written. Ids number each split in order of appearance.
static EMBEDDED: &[(&str, &str)] = embedded![
    "desktop-train-000",
    "desktop-train-001",
    "desktop-train-002",
    "desktop-train-003",
    "desktop-test-000",
    "desktop-train-004",
    "desktop-test-001",
    "desktop-train-005",
    "desktop-train-006",
    "desktop-test-002",
    "desktop-train-007",
    "desktop-train-008",
    "desktop-train-009",
    "desktop-test-003",
    "desktop-train-010",
    "desktop-train-011",
    "desktop-test-004",
    "desktop-train-012",
    "desktop-train-013",
    "desktop-train-014",
    "desktop-train-015",
    "desktop-test-005",
    "desktop-train-016",
    "desktop-test-006",
    "desktop-train-017",
    "desktop-train-018",
    "desktop-test-007",
    "desktop-train-019",
    "desktop-train-020",
    "desktop-train-021",
    "desktop-test-008",
    "desktop-train-022",
    "desktop-test-009",
    "desktop-train-023",
    "desktop-train-024",
];

/// The built-in tasks, read once.
static CATALOG: LazyLock<Vec<DesktopTask>> = LazyLock::new(|| {
    EMBEDDED
        .iter()
        .map(|(name, json)| {
            // Compiled in and read by a unit test, so a broken file never reaches a build
            // that is run.
            DesktopTask::from_json(json).unwrap_or_else(|e| panic!("tasks/{name}.json: {e}"))
        })
        .collect()
});

/// Every built-in task, train and test interleaved, in a stable order.
pub fn catalog() -> &'static [DesktopTask] {
    &CATALOG
}

/// A task by id.
pub fn task(id: &str) -> Option<&'static DesktopTask> {
    catalog().iter().find(|t| t.id == id)
}

/// The ids by split, in catalog order, for [`mcpgym_env::Environment::tasks`].
pub fn task_set() -> TaskSet {
    let ids = |split: Split| {
        catalog()
            .iter()
            .filter(|t| t.split == split)
            .map(|t| t.id.clone())
            .collect::<Vec<_>>()
    };
    TaskSet::new(ids(Split::Train), ids(Split::Test))
}

/// The tasks an environment serves: the built-in ones (the fixed tasks and every family's
/// instances, `<family>/<n>`), or a list of one's own (`--tasks FILE`).
#[derive(Debug, Clone)]
pub struct DesktopTasks {
    /// Tasks listed one by one.
    listed: Vec<Arc<DesktopTask>>,
    /// Whether the built-in families serve `<family>/<n>` ids.
    families: bool,
    set: TaskSet,
}

impl Default for DesktopTasks {
    fn default() -> Self {
        Self::builtin()
    }
}

impl DesktopTasks {
    /// The fixed tasks and every generated family.
    pub fn builtin() -> Self {
        let mut set = task_set();
        for family in crate::families::FAMILIES.iter() {
            set = set.with_family(family.ranges());
        }
        Self {
            listed: catalog().iter().cloned().map(Arc::new).collect(),
            families: true,
            set,
        }
    }

    /// A task list of one's own (ids must be unique; splits come from each task).
    pub fn from_tasks(tasks: Vec<DesktopTask>) -> Self {
        let ids = |split: Split| {
            tasks
                .iter()
                .filter(|t| t.split == split)
                .map(|t| t.id.clone())
                .collect::<Vec<_>>()
        };
        let set = TaskSet::new(ids(Split::Train), ids(Split::Test));
        Self {
            listed: tasks.into_iter().map(Arc::new).collect(),
            families: false,
            set,
        }
    }

    /// The ids by split, for [`mcpgym_env::Environment::tasks`].
    pub fn set(&self) -> &TaskSet {
        &self.set
    }

    /// A task by id: a listed one, or an instance of a family, generated now.
    pub fn get(&self, id: &str) -> Option<Arc<DesktopTask>> {
        if let Some(task) = self.listed.iter().find(|t| t.id == id) {
            return Some(Arc::clone(task));
        }
        if !self.families {
            return None;
        }
        let (name, n) = mcpgym_env::parse_family_id(id)?;
        crate::families::family(name)?.task(n).map(Arc::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_file_reads_with_its_id_and_split() {
        let mut ids = HashSet::new();
        for (name, json) in EMBEDDED {
            let task = DesktopTask::from_json(json).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(task.id, *name, "tasks/{name}.json holds another id");
            assert!(
                task.id.starts_with(&format!("desktop-{}-", task.split)),
                "{}: the id does not match the split {}",
                task.id,
                task.split
            );
            assert!(!task.checks.is_empty(), "{}: no checks", task.id);
            assert!(ids.insert(task.id), "{name}: duplicate id");
        }
        // Every file in the folder is embedded: a new task cannot be forgotten.
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks");
        let mut on_disk: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = EMBEDDED
            .iter()
            .map(|(name, _)| format!("{name}.json"))
            .collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }

    #[test]
    fn task_files_that_cannot_run_are_refused() {
        let task = |extra: &str| {
            format!(
                r#"{{"id": "t", "split": "test", "app": "terminal", "instruction": "Do it.", "launch": [["xterm"]]{extra}}}"#
            )
        };
        let check = r#", "checks": [{"kind": "file_exists", "path": "a.txt"}]"#;
        assert!(DesktopTask::from_json(&task(check)).is_ok());
        let refused = [
            task(""),
            task(r#", "checks": []"#),
            task(r#", "checks": [{"kind": "file_exists", "path": "../a.txt"}]"#),
            task(r#", "checks": [{"kind": "file_exists", "path": "/etc/passwd"}]"#),
            task(&format!(
                r#"{check}, "files": [{{"path": "/x", "text": ""}}]"#
            )),
            task(&format!(
                r#"{check}, "files": [{{"path": "x", "text": ""}}, {{"path": "x", "text": ""}}]"#
            )),
            task(&format!(r#"{check}, "launch": [[]]"#)),
            task(&format!(r#"{check}, "answer": "42""#)),
            task(&format!(r#"{check}, "demo": [{{"wait": 10}}]"#)),
        ];
        for json in refused {
            assert!(DesktopTask::from_json(&json).is_err(), "{json}");
        }
    }

    #[test]
    fn catalog_is_large_unique_and_numbered_by_split() {
        let tasks = catalog();
        assert!(tasks.len() >= 24, "{}", tasks.len());
        let ids: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids.len(), tasks.len(), "duplicate ids");
        let set = task_set();
        let (train, test) = (set.listed(Split::Train), set.listed(Split::Test));
        assert_eq!(train.len() + test.len(), tasks.len());
        for (split, ids) in [(Split::Train, train), (Split::Test, test)] {
            for (n, id) in ids.iter().enumerate() {
                assert_eq!(*id, format!("desktop-{split}-{n:03}"));
                assert_eq!(task(id).unwrap().split, split);
            }
        }
        // About a third held out.
        let share = test.len() as f64 / tasks.len() as f64;
        assert!((0.25..=0.4).contains(&share), "{share}");
        assert!(task("desktop-nope").is_none());
    }

    #[test]
    fn both_splits_cover_several_apps() {
        for split in [Split::Train, Split::Test] {
            let apps: HashSet<App> = catalog()
                .iter()
                .filter(|t| t.split == split)
                .map(DesktopTask::app)
                .collect();
            assert!(apps.len() >= 3, "{split}: {apps:?}");
            let programs: HashSet<&str> = catalog()
                .iter()
                .filter(|t| t.split == split)
                .flat_map(DesktopTask::programs)
                .collect();
            assert!(programs.len() >= 3, "{split}: {programs:?}");
        }
        // Most tasks need a GUI application, not only the terminal.
        let gui = catalog()
            .iter()
            .filter(|t| t.app() != App::Terminal)
            .count();
        assert!(gui * 2 > catalog().len(), "{gui}");
    }

    #[test]
    fn launch_arguments_that_are_paths_point_into_home() {
        for t in catalog() {
            for argv in t.launch() {
                for arg in &argv[1..] {
                    assert!(
                        arg == HOME || !arg.starts_with('/') && !arg.contains(".."),
                        "{}: {arg}",
                        t.id
                    );
                }
            }
        }
    }

    #[test]
    fn demo_conditions_are_shell_tests_that_quote_their_text() {
        let home = std::env::temp_dir().join(format!("mcpgym-demo-cond-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("a b.txt"), "it's done\n").unwrap();
        std::fs::write(home.join("empty.txt"), "").unwrap();
        let holds = |condition: DemoCondition| {
            std::process::Command::new("sh")
                .arg("-c")
                .arg(condition.shell_test())
                .current_dir(&home)
                .status()
                .unwrap()
                .success()
        };
        let file = |path: &str| DemoCondition::File(path.into());
        let contains =
            |path: &str, text: &str| DemoCondition::FileContains(path.into(), text.into());
        assert!(holds(file("a b.txt")));
        assert!(!holds(file("empty.txt")));
        assert!(!holds(file("missing.txt")));
        assert!(holds(DemoCondition::Missing("missing.txt".into())));
        assert!(!holds(DemoCondition::Missing("a b.txt".into())));
        assert!(holds(DemoCondition::Folder(".".into())));
        assert!(!holds(DemoCondition::Folder("a b.txt".into())));
        assert!(holds(contains("a b.txt", "it's done")));
        assert!(!holds(contains("a b.txt", "it's not")));
        assert!(!holds(contains("missing.txt", "x")));
        // Text is never shell syntax.
        assert!(!holds(contains("a b.txt", "'; touch pwned; '")));
        assert!(!holds(file("$(touch pwned)")));
        assert!(!home.join("pwned").exists());
        let _ = std::fs::remove_dir_all(&home);
        // Task files spell them as objects.
        let steps: Vec<DemoStep> = serde_json::from_str(
            r#"[{"wait_for": {"focused": "Save As"}}, {"wait_for": {"file_contains": ["a.txt", "x"]}}]"#,
        )
        .unwrap();
        assert_eq!(
            steps[0],
            DemoStep::WaitFor(DemoCondition::Focused("Save As".into()))
        );
        let condition = DemoCondition::FileContains("a.txt".into(), "x".into());
        assert_eq!(
            condition.shell_test(),
            "grep -qF -- 'x' 'a.txt' 2>/dev/null"
        );
        assert_eq!(steps[1].call(), DemoCall::Until(condition));
    }

    #[test]
    fn every_task_has_checks_a_demo_and_a_clear_instruction() {
        let known = ["xterm", "mousepad", "gnumeric", "galculator", "pcmanfm"];
        for t in catalog() {
            assert!(!t.checks().is_empty(), "{}: no checks", t.id);
            assert!(!t.demo().is_empty(), "{}: no demo", t.id);
            assert!(!t.launch().is_empty(), "{}: nothing launched", t.id);
            assert!(t.instruction.len() > 30, "{}", t.id);
            for program in t.programs() {
                assert!(known.contains(&program), "{}: {program}", t.id);
            }
            // Demos stay short: the tests that play them run every task.
            let waited: u32 = t
                .demo()
                .iter()
                .map(|s| match s {
                    DemoStep::Wait(ms) => *ms,
                    DemoStep::Type(text) => 12 * text.chars().count() as u32,
                    DemoStep::Key(_) | DemoStep::WaitFor(_) => 12,
                })
                .sum();
            assert!(waited < 6000, "{}: demo takes {waited} ms", t.id);
            for step in t.demo() {
                match step {
                    DemoStep::Type(text) => {
                        assert!(!text.contains('\n'), "{}: newline in Type", t.id)
                    }
                    DemoStep::Key(key) => {
                        assert!(!key.is_empty() && !key.contains(' '), "{}: {key:?}", t.id)
                    }
                    DemoStep::Wait(ms) => assert!(*ms <= 3000, "{}", t.id),
                    DemoStep::WaitFor(_) => {}
                }
            }
        }
    }

    #[test]
    fn instructions_name_the_files_they_ask_for() {
        // A check on a file the instruction never mentions would grade something the agent
        // could not know to produce.
        for t in catalog() {
            for path in t.checks().iter().filter_map(Check::path) {
                let name = path.rsplit('/').next().unwrap();
                assert!(
                    t.instruction.contains(name)
                        || t.files()
                            .iter()
                            .any(|(p, _)| p.rsplit('/').next() == Some(name)),
                    "{}: {path} is not named in the instruction",
                    t.id
                );
            }
        }
    }

    #[test]
    fn calculator_answers_are_not_in_the_instructions() {
        for t in catalog() {
            for check in t.checks() {
                if let Check::ClipboardNumber { value, .. } = check {
                    assert!(!t.instruction.contains(&value.to_string()), "{}", t.id);
                }
            }
        }
    }
}
