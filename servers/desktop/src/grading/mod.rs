//! Graders: checks of the desktop's real state when an episode ends.
//!
//! A task passes when every one of its [`Check`]s passes against a [`DesktopSnapshot`]: the
//! files in the episode's home folder, the titles of its windows and the text on its clipboard.
//! What the agent says about its work is never consulted.
//!
//! The home folder belongs to the agent while the episode runs, so it is read as hostile (the
//! `home` module): every path a check names must be relative and free of `..`, symlinks are
//! resolved and the result must stay inside the home folder, only regular files are read
//! (never a FIFO, which would block the grader), and at most [`MAX_READ_BYTES`] of any file.
//! Spreadsheets are copied out of the home folder before `ssconvert` reads them (the
//! `spreadsheet` module), so the converter never opens anything the agent can still swap.
//!
//! Checks are data: a task file lists them as JSON objects named by `kind`, e.g.
//! `{"kind": "file_equals", "path": "notes/todo.txt", "text": "buy milk"}`.

mod csv;
mod document;
mod home;
pub mod kept;
mod spreadsheet;
mod web;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use home::Located;
pub use home::{MAX_READ_BYTES, validate_relative_path};
pub use spreadsheet::SSCONVERT_TIMEOUT;
pub use web::Requests;

/// The state of a desktop when its episode ends: what a grader judges.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DesktopSnapshot {
    /// The episode's home folder on the host (the applications see it as `/home/user`).
    pub home: PathBuf,
    /// The titles of the display's windows (every top-level window; order does not matter).
    pub window_titles: Vec<String>,
    /// The CLIPBOARD selection's text as `xclip -o -selection clipboard` prints it; `None`
    /// when the clipboard is empty or no owner answers.
    pub clipboard: Option<String>,
    /// What the episode's page server received, in order (empty when the task serves no
    /// pages).
    pub page_requests: Vec<crate::pages::PageRequest>,
}

/// One condition on the desktop's final state. A task's checks are combined with all-of
/// semantics. Paths are relative to the home folder (`/home/user` inside the sandbox).
///
/// In a task file each check is a JSON object whose `kind` is the variant's name in
/// snake_case and whose other keys are its fields; unknown keys are refused. Checks are
/// secret: they are read from task files, never written anywhere the agent could see.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// The file's text equals `text` once line endings are normalised to `\n` and trailing
    /// whitespace (final newlines, spaces) is trimmed from the end of both; leading text and
    /// inner lines must match exactly.
    FileEquals {
        /// The file, relative to home.
        path: String,
        /// The expected text.
        text: String,
    },
    /// Some line of the file, trimmed of surrounding whitespace, equals `line` (trimmed).
    FileContainsLine {
        /// The file, relative to home.
        path: String,
        /// The expected line.
        line: String,
    },
    /// Nothing (no file, folder or link) is at `path`: a deleted, moved or renamed item.
    /// Moving it to the trash counts as deleting it.
    FileMissing {
        /// The path, relative to home.
        path: String,
    },
    /// A regular file is at `path` (a symlink counts if it resolves inside home).
    FileExists {
        /// The file, relative to home.
        path: String,
    },
    /// A folder is at `path` (a symlink counts if it resolves inside home).
    DirExists {
        /// The folder, relative to home.
        path: String,
    },
    /// Some window's title contains `text` (case-sensitive).
    WindowTitleContains {
        /// The text to find.
        text: String,
    },
    /// Some window's title, trimmed, equals `text` exactly (case-sensitive): for tasks where
    /// a title listing every candidate must not pass.
    WindowTitleEquals {
        /// The whole title.
        text: String,
    },
    /// The clipboard's text, trimmed of surrounding whitespace, equals `text` (trimmed); line
    /// endings are normalised first.
    ClipboardEquals {
        /// The expected text.
        text: String,
    },
    /// The clipboard holds one number within `tolerance` of `value`.
    ClipboardNumber {
        /// The expected number.
        value: f64,
        /// The largest accepted absolute difference.
        tolerance: f64,
    },
    /// A cell of a spreadsheet file (anything `ssconvert` reads: `.gnumeric`, `.xlsx`, `.ods`,
    /// `.csv`) shows `value`. The cell's raw value is read (a formula's result, not its text).
    /// When both sides are numbers they are compared with a relative tolerance of 1e-9;
    /// otherwise as strings, trimmed, case-sensitive.
    SpreadsheetCell {
        /// The spreadsheet, relative to home.
        path: String,
        /// The sheet's name; absent reads the sheet that was active when the file was saved.
        #[serde(default)]
        sheet: Option<String>,
        /// An A1-style reference such as `B4` or `AA10`.
        cell: String,
        /// The expected value, as text (`"17"`, `"0.25"`, `"total"`).
        value: String,
    },
    /// The file's text matches the regular expression `pattern` (Rust `regex` syntax; use
    /// `(?m)` for `^`/`$` at line ends). At most [`MAX_READ_BYTES`] are read.
    FileMatches {
        /// The file, relative to home.
        path: String,
        /// The pattern.
        pattern: String,
    },
    /// A spreadsheet cell holds a formula (not a typed constant) whose text contains
    /// `contains`, case-insensitively (`"SUM("`); an empty `contains` accepts any formula.
    /// With `exactly`, the formula must be that one and nothing more (`"SUM(B2:B7)"`: the
    /// named function over the named range, no constant and no other term), compared with
    /// spaces, case, `$` anchors and the file format's notation (`of:=SUM([.B2:.B7])`) aside.
    /// Reads `.xlsx`, `.ods`, `.fods` and `.gnumeric`.
    SpreadsheetFormula {
        /// The spreadsheet, relative to home.
        path: String,
        /// The sheet's name; absent reads the first sheet.
        #[serde(default)]
        sheet: Option<String>,
        /// An A1-style reference.
        cell: String,
        /// Text the formula must contain.
        #[serde(default)]
        contains: String,
        /// The whole formula it must be.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exactly: Option<String>,
    },
    /// A spreadsheet (`.xlsx`, `.ods`) holds at least one chart.
    SpreadsheetChart {
        /// The spreadsheet, relative to home.
        path: String,
    },
    /// A document's text (`.odt`, `.docx`, `.odp`, `.pptx`, `.pdf`, `.txt`), with runs of
    /// whitespace collapsed to one space, contains `text`.
    DocumentContains {
        /// The document, relative to home.
        path: String,
        /// The text to find.
        text: String,
    },
    /// A document's whole text, with runs of whitespace (paragraph breaks among them)
    /// collapsed to one space, is `text`: an edit that also deleted, added or changed anything
    /// else fails.
    DocumentEquals {
        /// The document, relative to home.
        path: String,
        /// Its expected text.
        text: String,
    },
    /// A document exists and its text does not contain `text` (a replaced or deleted phrase).
    DocumentLacks {
        /// The document, relative to home.
        path: String,
        /// The text that must be gone.
        text: String,
    },
    /// Every character of `text` in a word-processor document (`.odt`, `.docx`) is shown
    /// with the given formatting; unset properties are not checked.
    DocumentStyled {
        /// The document, relative to home.
        path: String,
        /// The formatted text.
        text: String,
        /// Bold.
        #[serde(default)]
        bold: Option<bool>,
        /// Italic.
        #[serde(default)]
        italic: Option<bool>,
        /// Underlined.
        #[serde(default)]
        underline: Option<bool>,
    },
    /// A presentation (`.odp`, `.pptx`) has a slide whose text contains `text`: slide
    /// number `slide` (from 1) when given, else any slide.
    SlideText {
        /// The presentation, relative to home.
        path: String,
        /// The slide's number, from 1.
        #[serde(default)]
        slide: Option<u32>,
        /// The text to find.
        text: String,
    },
    /// A presentation (`.odp`, `.pptx`) has exactly `count` slides.
    SlideCount {
        /// The presentation, relative to home.
        path: String,
        /// The number of slides.
        count: u32,
    },
    /// The episode's page server received a request with this method and path (no query)
    /// whose fields (query string and form body together) include every one of `fields`,
    /// values compared trimmed and case-sensitively.
    PageRequest {
        /// `GET` or `POST`.
        method: String,
        /// The path, with its leading `/` (`/submit`).
        path: String,
        /// Field values the request must carry.
        #[serde(default)]
        fields: std::collections::BTreeMap<String, String>,
        /// Which requests to that path are judged: `any` (one of them matches), `last` (the
        /// last one does: a search refined until it is right) or `only` (there is exactly one
        /// and it matches: a form sent wrong first and right after is not right).
        #[serde(default)]
        requests: web::Requests,
        /// The request carries no other non-empty field: every filter ticked is not the one
        /// filter asked for.
        #[serde(default)]
        exact_fields: bool,
    },
    /// Chromium's profile in the home folder holds a bookmark of `url`.
    Bookmark {
        /// The bookmarked URL, exactly as Chromium stores it
        /// (`http://127.0.0.1:8000/page.html`).
        url: String,
    },
}

impl Check {
    /// The home-relative path the check reads, if it reads one: for validating tasks.
    pub fn path(&self) -> Option<&str> {
        match self {
            Check::FileEquals { path, .. }
            | Check::FileContainsLine { path, .. }
            | Check::FileMissing { path }
            | Check::FileExists { path }
            | Check::DirExists { path }
            | Check::SpreadsheetCell { path, .. }
            | Check::FileMatches { path, .. }
            | Check::SpreadsheetFormula { path, .. }
            | Check::SpreadsheetChart { path }
            | Check::DocumentContains { path, .. }
            | Check::DocumentLacks { path, .. }
            | Check::DocumentEquals { path, .. }
            | Check::DocumentStyled { path, .. }
            | Check::SlideText { path, .. }
            | Check::SlideCount { path, .. } => Some(path),
            Check::PageRequest { .. } | Check::Bookmark { .. } => None,
            Check::WindowTitleContains { .. }
            | Check::WindowTitleEquals { .. }
            | Check::ClipboardEquals { .. }
            | Check::ClipboardNumber { .. } => None,
        }
    }

    /// A one-line description of what the check requires, for logs and trajectories.
    pub fn describe(&self) -> String {
        match self {
            Check::FileEquals { path, .. } => format!("file {path} has the expected text"),
            Check::FileContainsLine { path, line } => {
                format!("file {path} contains the line {line:?}")
            }
            Check::FileMissing { path } => format!("nothing is at {path}"),
            Check::FileExists { path } => format!("file {path} exists"),
            Check::DirExists { path } => format!("folder {path} exists"),
            Check::WindowTitleContains { text } => format!("a window title contains {text:?}"),
            Check::WindowTitleEquals { text } => format!("a window is titled {text:?}"),
            Check::ClipboardEquals { text } => format!("the clipboard holds {text:?}"),
            Check::ClipboardNumber { value, tolerance } => {
                format!("the clipboard holds {value} (± {tolerance})")
            }
            Check::SpreadsheetCell {
                path,
                sheet,
                cell,
                value,
            } => match sheet {
                Some(sheet) => format!("cell {sheet}!{cell} of {path} is {value:?}"),
                None => format!("cell {cell} of {path} is {value:?}"),
            },
            Check::FileMatches { path, pattern } => format!("file {path} matches /{pattern}/"),
            Check::SpreadsheetFormula {
                path,
                cell,
                exactly: Some(formula),
                ..
            } => format!("cell {cell} of {path} holds the formula ={formula}"),
            Check::SpreadsheetFormula {
                path,
                cell,
                contains,
                ..
            } => format!("cell {cell} of {path} holds a formula with {contains:?}"),
            Check::SpreadsheetChart { path } => format!("{path} holds a chart"),
            Check::DocumentContains { path, text } => format!("{path} contains {text:?}"),
            Check::DocumentLacks { path, text } => format!("{path} no longer contains {text:?}"),
            Check::DocumentEquals { path, .. } => format!("{path} holds exactly the expected text"),
            Check::DocumentStyled {
                path,
                text,
                bold,
                italic,
                underline,
            } => format!(
                "{text:?} in {path} is styled (bold {bold:?}, italic {italic:?}, underline {underline:?})"
            ),
            Check::SlideText { path, slide, text } => match slide {
                Some(n) => format!("slide {n} of {path} contains {text:?}"),
                None => format!("a slide of {path} contains {text:?}"),
            },
            Check::SlideCount { path, count } => format!("{path} has {count} slides"),
            Check::PageRequest {
                method,
                path,
                fields,
                requests,
                exact_fields,
            } => format!(
                "the page server received {method} {path} with {fields:?}{} ({} request judged)",
                if *exact_fields {
                    " and no other field"
                } else {
                    ""
                },
                requests.name()
            ),
            Check::Bookmark { url } => format!("the browser has a bookmark of {url}"),
        }
    }

    /// Evaluates the check against a snapshot.
    pub async fn evaluate(&self, snapshot: &DesktopSnapshot) -> CheckResult {
        let outcome = self.run(snapshot).await;
        let (passed, detail) = match outcome {
            Ok(detail) => (true, detail),
            Err(detail) => (false, detail),
        };
        CheckResult {
            description: self.describe(),
            passed,
            detail,
        }
    }

    /// `Ok(detail)` when the check passes, `Err(detail)` when it fails.
    async fn run(&self, snapshot: &DesktopSnapshot) -> Result<String, String> {
        let home = &snapshot.home;
        match self {
            Check::FileEquals { path, text } => {
                let actual = home::read_text(home, path).await?;
                let (want, got) = (normalise_text(text), normalise_text(&actual));
                if want == got {
                    Ok(format!("{path} matches ({} bytes)", got.len()))
                } else {
                    Err(format!(
                        "{path} differs: expected {}, found {}",
                        excerpt(&want),
                        excerpt(&got)
                    ))
                }
            }
            Check::FileContainsLine { path, line } => {
                let actual = home::read_text(home, path).await?;
                let want = line.trim();
                let normalised = actual.replace("\r\n", "\n").replace('\r', "\n");
                if normalised.lines().any(|l| l.trim() == want) {
                    Ok(format!("{path} contains the line"))
                } else {
                    Err(format!(
                        "{path} has no line {want:?}; it holds {}",
                        excerpt(&normalised)
                    ))
                }
            }
            Check::FileMissing { path } => match home::locate(home, path).await? {
                Located::Absent => Ok(format!("{path} is absent")),
                Located::Present(kind) => Err(format!("{path} still exists ({kind})")),
            },
            Check::FileExists { path } => {
                let meta = home::existing_metadata(home, path).await?;
                if meta.is_file() {
                    Ok(format!("{path} is a file of {} bytes", meta.len()))
                } else {
                    Err(format!("{path} exists but is not a regular file"))
                }
            }
            Check::DirExists { path } => {
                let meta = home::existing_metadata(home, path).await?;
                if meta.is_dir() {
                    Ok(format!("{path} is a folder"))
                } else {
                    Err(format!("{path} exists but is not a folder"))
                }
            }
            Check::WindowTitleContains { text } => {
                match snapshot
                    .window_titles
                    .iter()
                    .find(|t| t.contains(text.as_str()))
                {
                    Some(title) => Ok(format!("window {title:?}")),
                    None => Err(format!("window titles: {:?}", snapshot.window_titles)),
                }
            }
            Check::WindowTitleEquals { text } => {
                match snapshot.window_titles.iter().find(|t| t.trim() == text) {
                    Some(title) => Ok(format!("window {title:?}")),
                    None => Err(format!("window titles: {:?}", snapshot.window_titles)),
                }
            }
            Check::ClipboardEquals { text } => {
                let clip = snapshot
                    .clipboard
                    .as_deref()
                    .ok_or_else(|| "the clipboard is empty".to_owned())?;
                let got = clip.replace("\r\n", "\n");
                let want = text.replace("\r\n", "\n");
                if got.trim() == want.trim() {
                    Ok("the clipboard matches".to_owned())
                } else {
                    Err(format!("the clipboard holds {}", excerpt(got.trim())))
                }
            }
            Check::ClipboardNumber { value, tolerance } => {
                let clip = snapshot
                    .clipboard
                    .as_deref()
                    .ok_or_else(|| "the clipboard is empty".to_owned())?;
                let number = parse_number(clip).ok_or_else(|| {
                    format!("the clipboard holds {}, not a number", excerpt(clip))
                })?;
                if (number - value).abs() <= *tolerance {
                    Ok(format!("the clipboard holds {number}"))
                } else {
                    Err(format!("the clipboard holds {number}, expected {value}"))
                }
            }
            Check::SpreadsheetCell {
                path,
                sheet,
                cell,
                value,
            } => {
                let actual = spreadsheet::read_cell(home, path, sheet.as_deref(), cell).await?;
                if spreadsheet::cell_matches(&actual, value) {
                    Ok(format!("{cell} is {actual:?}"))
                } else {
                    Err(format!("{cell} is {actual:?}, expected {value:?}"))
                }
            }
            Check::FileMatches { path, pattern } => {
                let regex = regex::Regex::new(pattern)
                    .map_err(|e| format!("the pattern {pattern:?} is not valid: {e}"))?;
                let actual = home::read_text(home, path).await?;
                if regex.is_match(&actual) {
                    Ok(format!("{path} matches"))
                } else {
                    Err(format!(
                        "{path} does not match; it holds {}",
                        excerpt(&actual)
                    ))
                }
            }
            Check::SpreadsheetFormula {
                path,
                sheet,
                cell,
                contains,
                exactly,
            } => {
                let wanted = match exactly {
                    Some(formula) => document::Formula::Exactly(formula),
                    None => document::Formula::Containing(contains),
                };
                document::spreadsheet_formula(home, path, sheet.as_deref(), cell, wanted).await
            }
            Check::SpreadsheetChart { path } => document::spreadsheet_chart(home, path).await,
            Check::DocumentContains { path, text } => {
                let found = document::text(home, path).await?;
                if collapse_whitespace(&found).contains(&collapse_whitespace(text)) {
                    Ok(format!("{path} contains the text"))
                } else {
                    Err(format!(
                        "{path} does not contain it; it reads {}",
                        excerpt(&found)
                    ))
                }
            }
            Check::DocumentEquals { path, text } => {
                let found = document::text(home, path).await?;
                let (found, expected) = (collapse_whitespace(&found), collapse_whitespace(text));
                if found.trim() == expected.trim() {
                    Ok(format!("{path} holds exactly the expected text"))
                } else {
                    Err(format!(
                        "{path} is not the expected text; it reads {}",
                        excerpt(&found)
                    ))
                }
            }
            Check::DocumentLacks { path, text } => {
                let found = document::text(home, path).await?;
                if collapse_whitespace(&found).contains(&collapse_whitespace(text)) {
                    Err(format!("{path} still contains {text:?}"))
                } else {
                    Ok(format!("{path} no longer contains it"))
                }
            }
            Check::DocumentStyled {
                path,
                text,
                bold,
                italic,
                underline,
            } => {
                let want = document::Style {
                    bold: *bold,
                    italic: *italic,
                    underline: *underline,
                };
                document::styled(home, path, text, want).await
            }
            Check::SlideText { path, slide, text } => {
                document::slide_text(home, path, *slide, text).await
            }
            Check::SlideCount { path, count } => {
                let slides = document::slides(home, path).await?;
                if slides.len() == *count as usize {
                    Ok(format!("{path} has {count} slides"))
                } else {
                    Err(format!(
                        "{path} has {} slides, expected {count}",
                        slides.len()
                    ))
                }
            }
            Check::PageRequest {
                method,
                path,
                fields,
                requests,
                exact_fields,
            } => web::page_request(
                &snapshot.page_requests,
                method,
                path,
                fields,
                *requests,
                *exact_fields,
            ),
            Check::Bookmark { url } => web::bookmark(home, url).await,
        }
    }
}

/// Runs of whitespace as one space, trimmed: documents break lines where their layout does.
fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckResult {
    /// What the check requires.
    pub description: String,
    /// Whether the desktop met it.
    pub passed: bool,
    /// What was found; for the trajectory and logs, shown only after the episode.
    pub detail: String,
}

/// A task's grade: every check's result, and whether all passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grade {
    /// True when there is at least one check and every check passed.
    pub passed: bool,
    /// The checks' results, in the task's order.
    pub checks: Vec<CheckResult>,
}

impl Grade {
    /// The share of checks that passed, in `[0, 1]`: a shaped signal next to the sparse
    /// [`Grade::passed`]. Zero when there are no checks.
    pub fn fraction(&self) -> f64 {
        if self.checks.is_empty() {
            return 0.0;
        }
        self.checks.iter().filter(|c| c.passed).count() as f64 / self.checks.len() as f64
    }
}

/// Grades a task against the desktop's final state: every check, in order.
pub async fn grade(task: &crate::tasks::DesktopTask, snapshot: &DesktopSnapshot) -> Grade {
    grade_checks(task.checks(), snapshot).await
}

/// How often [`settle`] looks at the files a grade reads, and how long it waits at most.
const SETTLE_POLL: Duration = Duration::from_millis(250);
const SETTLE_LIMIT: Duration = Duration::from_secs(5);

/// Waits until none of the files the checks read is changing: their size and modification
/// time the same on two looks [`SETTLE_POLL`] apart, for at most [`SETTLE_LIMIT`]. An agent
/// often ends its episode the moment it has pressed save; LibreOffice then still writes the
/// file for a moment, and a grade that read it half-written (or read it twice, one check
/// before the write and one after) would judge a file the agent never left.
async fn settle(home: &std::path::Path, checks: &[Check]) {
    let mut paths: Vec<&str> = checks.iter().filter_map(Check::path).collect();
    paths.sort_unstable();
    paths.dedup();
    if paths.is_empty() {
        return;
    }
    let look = || async {
        let mut state = Vec::with_capacity(paths.len());
        for path in &paths {
            let meta = tokio::fs::symlink_metadata(home.join(path)).await.ok();
            state.push(meta.map(|m| (m.len(), m.modified().ok())));
        }
        state
    };
    let deadline = tokio::time::Instant::now() + SETTLE_LIMIT;
    let mut before = look().await;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(SETTLE_POLL).await;
        let now = look().await;
        if now == before {
            return;
        }
        before = now;
    }
}

/// Grades a list of checks (all-of) against a snapshot, once the files they read have
/// stopped changing.
pub async fn grade_checks(checks: &[Check], snapshot: &DesktopSnapshot) -> Grade {
    settle(&snapshot.home, checks).await;
    let mut results = Vec::with_capacity(checks.len());
    for check in checks {
        results.push(check.evaluate(snapshot).await);
    }
    let passed = !results.is_empty() && results.iter().all(|r| r.passed);
    Grade {
        passed,
        checks: results,
    }
}

/// Trailing whitespace trimmed, line endings `\n`, trailing spaces of each line kept (they are
/// content) except on the last.
fn normalise_text(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .trim_end()
        .to_owned()
}

/// A short, quoted view of a text for details.
fn excerpt(text: &str) -> String {
    const MAX: usize = 200;
    if text.chars().count() <= MAX {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(MAX).collect();
        format!("{head:?}… ({} bytes)", text.len())
    }
}

/// A number as calculators and spreadsheets print it: surrounding whitespace ignored.
fn parse_number(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use std::process::Stdio;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use super::*;

    /// A fresh folder for one test, removed on drop.
    struct TempHome(PathBuf);

    impl TempHome {
        fn new(name: &str) -> Self {
            static N: AtomicU64 = AtomicU64::new(0);
            // The pid last, as servers' stale clean-up reads it (see spreadsheet.rs).
            let dir = std::env::temp_dir().join(format!(
                "mcpgym-desktop-grading-{name}-{}-{}",
                N.fetch_add(1, Ordering::Relaxed),
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }

        fn write(&self, rel: &str, text: &str) {
            let path = self.0.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }

        fn snapshot(&self) -> DesktopSnapshot {
            DesktopSnapshot {
                home: self.0.clone(),
                window_titles: vec![],
                clipboard: None,
                page_requests: vec![],
            }
        }
    }

    impl Drop for TempHome {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    async fn passes(check: Check, snapshot: &DesktopSnapshot) -> bool {
        let result = check.evaluate(snapshot).await;
        eprintln!(
            "{}: {} — {}",
            result.description, result.passed, result.detail
        );
        result.passed
    }

    #[test]
    fn checks_read_from_json_by_kind() {
        let read = |json: &str| serde_json::from_str::<Check>(json);
        assert_eq!(
            read(r#"{"kind": "file_equals", "path": "a.txt", "text": "x"}"#).unwrap(),
            Check::FileEquals {
                path: "a.txt".into(),
                text: "x".into()
            }
        );
        assert_eq!(
            read(r#"{"kind": "window_title_equals", "text": "Done"}"#).unwrap(),
            Check::WindowTitleEquals {
                text: "Done".into()
            }
        );
        assert_eq!(
            read(r#"{"kind": "spreadsheet_cell", "path": "b.ods", "cell": "B4", "value": "17"}"#)
                .unwrap(),
            Check::SpreadsheetCell {
                path: "b.ods".into(),
                sheet: None,
                cell: "B4".into(),
                value: "17".into()
            }
        );
        // Typos are refused instead of silently weakening a check.
        assert!(read(r#"{"kind": "file_equals", "path": "a.txt", "txt": "x"}"#).is_err());
        assert!(read(r#"{"kind": "file_equal", "path": "a.txt", "text": "x"}"#).is_err());
        assert!(read(r#"{"kind": "clipboard_number", "value": 1}"#).is_err());
    }

    #[tokio::test]
    async fn file_equals_normalises_endings_and_trailing_space() {
        let home = TempHome::new("equals");
        home.write("a.txt", "one\r\ntwo  \r\n\r\n");
        let snap = home.snapshot();
        for (path, text, expected) in [
            ("a.txt", "one\ntwo", true),
            ("a.txt", "one\ntwo\n", true),
            ("a.txt", "one\nthree", false),
            ("a.txt", " one\ntwo", false),
            ("nope.txt", "", false),
        ] {
            let check = Check::FileEquals {
                path: path.into(),
                text: text.into(),
            };
            assert_eq!(passes(check, &snap).await, expected, "{path}: {text:?}");
        }
    }

    #[tokio::test]
    async fn file_contains_line() {
        let home = TempHome::new("line");
        home.write("log/x.log", "start\n  ERROR disk full  \nend");
        let snap = home.snapshot();
        let check = |line: &str| Check::FileContainsLine {
            path: "log/x.log".into(),
            line: line.into(),
        };
        assert!(passes(check("ERROR disk full"), &snap).await);
        assert!(passes(check("end"), &snap).await);
        assert!(!passes(check("ERROR"), &snap).await);
    }

    #[tokio::test]
    async fn a_grade_waits_for_a_file_still_being_written() {
        let home = TempHome::new("settle");
        home.write("saved.txt", "line 0\n");
        let path = home.0.join("saved.txt");
        // An application still saving: a line every 100 ms for a second after the agent ended.
        let writer = tokio::spawn(async move {
            for n in 1..=10 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let mut text = tokio::fs::read_to_string(&path).await.unwrap();
                text.push_str(&format!("line {n}\n"));
                tokio::fs::write(&path, text).await.unwrap();
            }
        });
        let check = Check::FileContainsLine {
            path: "saved.txt".into(),
            line: "line 10".into(),
        };
        let grade = grade_checks(&[check], &home.snapshot()).await;
        writer.await.unwrap();
        assert!(grade.passed, "{:?}", grade.checks);
    }

    #[tokio::test]
    async fn existence_checks() {
        let home = TempHome::new("exist");
        home.write("dir/file.txt", "x");
        let snap = home.snapshot();
        assert!(
            passes(
                Check::FileExists {
                    path: "dir/file.txt".into()
                },
                &snap
            )
            .await
        );
        assert!(!passes(Check::FileExists { path: "dir".into() }, &snap).await);
        assert!(
            !passes(
                Check::FileExists {
                    path: "dir/none".into()
                },
                &snap
            )
            .await
        );
        assert!(passes(Check::DirExists { path: "dir".into() }, &snap).await);
        assert!(
            !passes(
                Check::DirExists {
                    path: "dir/file.txt".into()
                },
                &snap
            )
            .await
        );
        assert!(
            !passes(
                Check::DirExists {
                    path: "other".into()
                },
                &snap
            )
            .await
        );
        assert!(
            passes(
                Check::FileMissing {
                    path: "gone.txt".into()
                },
                &snap
            )
            .await
        );
        assert!(
            passes(
                Check::FileMissing {
                    path: "nodir/gone.txt".into()
                },
                &snap
            )
            .await
        );
        assert!(
            passes(
                Check::FileMissing {
                    path: "dir/file.txt/x".into()
                },
                &snap
            )
            .await
        );
        assert!(
            !passes(
                Check::FileMissing {
                    path: "dir/file.txt".into()
                },
                &snap
            )
            .await
        );
        assert!(!passes(Check::FileMissing { path: "dir".into() }, &snap).await);
        // A dangling symlink is still something at that path.
        std::os::unix::fs::symlink("/nonexistent-target", home.0.join("dangling")).unwrap();
        assert!(
            !passes(
                Check::FileMissing {
                    path: "dangling".into()
                },
                &snap
            )
            .await
        );
    }

    #[tokio::test]
    async fn symlinks_out_of_home_are_refused() {
        let outside = TempHome::new("outside");
        outside.write("secret.txt", "expected");
        let home = TempHome::new("escape");
        std::os::unix::fs::symlink(outside.0.join("secret.txt"), home.0.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(&outside.0, home.0.join("out")).unwrap();
        let snap = home.snapshot();
        let result = Check::FileEquals {
            path: "link.txt".into(),
            text: "expected".into(),
        }
        .evaluate(&snap)
        .await;
        assert!(!result.passed);
        assert!(result.detail.contains("refused"), "{}", result.detail);
        assert!(
            !passes(
                Check::FileExists {
                    path: "out/secret.txt".into()
                },
                &snap
            )
            .await
        );
        assert!(!passes(Check::DirExists { path: "out".into() }, &snap).await);
        assert!(
            !passes(
                Check::FileMissing {
                    path: "out/other.txt".into()
                },
                &snap
            )
            .await
        );
        // Paths that are not plain relative names never run.
        let abs = Check::FileEquals {
            path: "/etc/hostname".into(),
            text: "".into(),
        };
        assert!(!passes(abs, &snap).await);
        let dotdot = Check::FileExists {
            path: "../escape/x".into(),
        };
        assert!(!passes(dotdot, &snap).await);
        // A symlink that stays inside home is followed.
        home.write("real.txt", "inside");
        std::os::unix::fs::symlink(home.0.join("real.txt"), home.0.join("alias.txt")).unwrap();
        let inside = Check::FileEquals {
            path: "alias.txt".into(),
            text: "inside".into(),
        };
        assert!(passes(inside, &snap).await);
    }

    #[tokio::test]
    async fn oversized_and_special_files_are_refused() {
        let home = TempHome::new("big");
        let big = "x".repeat(MAX_READ_BYTES as usize + 1);
        home.write("big.txt", &big);
        let snap = home.snapshot();
        let result = Check::FileContainsLine {
            path: "big.txt".into(),
            line: "x".into(),
        }
        .evaluate(&snap)
        .await;
        assert!(!result.passed);
        assert!(result.detail.contains("more than"), "{}", result.detail);
        // A FIFO must fail at once instead of blocking the grader.
        let fifo = home.0.join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let check = Check::FileEquals {
            path: "pipe".into(),
            text: "".into(),
        };
        let result = tokio::time::timeout(Duration::from_secs(5), check.evaluate(&snap))
            .await
            .expect("reading a FIFO must not block");
        assert!(!result.passed);
    }

    #[tokio::test]
    async fn window_titles_and_clipboard() {
        let mut snap = DesktopSnapshot {
            home: std::env::temp_dir(),
            window_titles: vec!["xterm".into(), "Deploy finished".into()],
            clipboard: Some("  888\n".into()),
            page_requests: vec![],
        };
        assert!(
            passes(
                Check::WindowTitleContains {
                    text: "Deploy fin".into()
                },
                &snap
            )
            .await
        );
        assert!(
            !passes(
                Check::WindowTitleContains {
                    text: "deploy".into()
                },
                &snap
            )
            .await
        );
        assert!(
            passes(
                Check::WindowTitleEquals {
                    text: "Deploy finished".into()
                },
                &snap
            )
            .await
        );
        assert!(
            !passes(
                Check::WindowTitleEquals {
                    text: "Deploy".into()
                },
                &snap
            )
            .await
        );
        assert!(passes(Check::ClipboardEquals { text: "888".into() }, &snap).await);
        assert!(!passes(Check::ClipboardEquals { text: "88".into() }, &snap).await);
        let number = |value| Check::ClipboardNumber {
            value,
            tolerance: 1e-9,
        };
        assert!(passes(number(888.0), &snap).await);
        assert!(!passes(number(887.0), &snap).await);
        snap.clipboard = Some("0.125".into());
        assert!(passes(number(0.125), &snap).await);
        snap.clipboard = Some("a\r\nb".into());
        assert!(
            passes(
                Check::ClipboardEquals {
                    text: "a\nb".into()
                },
                &snap
            )
            .await
        );
        assert!(!passes(number(0.0), &snap).await);
        snap.clipboard = None;
        assert!(!passes(Check::ClipboardEquals { text: "".into() }, &snap).await);
        snap.window_titles.clear();
        assert!(!passes(Check::WindowTitleContains { text: "x".into() }, &snap).await);
    }

    #[tokio::test]
    async fn grade_is_all_of_and_empty_fails() {
        let home = TempHome::new("grade");
        home.write("a.txt", "a");
        let snap = home.snapshot();
        let good = Check::FileExists {
            path: "a.txt".into(),
        };
        let bad = Check::FileExists {
            path: "b.txt".into(),
        };
        let g = grade_checks(&[good.clone(), bad], &snap).await;
        assert!(!g.passed);
        assert_eq!(g.fraction(), 0.5);
        assert!(grade_checks(&[good], &snap).await.passed);
        assert!(!grade_checks(&[], &snap).await.passed);
    }

    /// Whether `ssconvert` is installed; the spreadsheet test needs it.
    fn have_ssconvert() -> bool {
        std::process::Command::new("ssconvert")
            .arg("--version")
            .env("HOME", std::env::temp_dir())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }

    #[tokio::test]
    async fn spreadsheet_cells_through_ssconvert() {
        if !have_ssconvert() {
            eprintln!("ssconvert is not installed; skipping");
            return;
        }
        let home = TempHome::new("sheet");
        home.write(
            "data.csv",
            "item,qty\napples,3\npears,5\n\"plums, red\",9\ntotal,=SUM(B2:B4)\nthird,=1/3\n",
        );
        // A real .gnumeric file, made by ssconvert itself from the CSV.
        let status = std::process::Command::new("ssconvert")
            .arg(home.0.join("data.csv"))
            .arg(home.0.join("book.gnumeric"))
            .env("HOME", &home.0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let snap = home.snapshot();
        let cell = |path: &str, cell: &str, value: &str| Check::SpreadsheetCell {
            path: path.into(),
            sheet: None,
            cell: cell.into(),
            value: value.into(),
        };
        for path in ["book.gnumeric", "data.csv"] {
            assert!(passes(cell(path, "B5", "17"), &snap).await);
            assert!(passes(cell(path, "A5", "total"), &snap).await);
            assert!(passes(cell(path, "A4", "plums, red"), &snap).await);
            assert!(passes(cell(path, "B6", "0.333333333333"), &snap).await);
            assert!(!passes(cell(path, "B5", "18"), &snap).await);
            assert!(!passes(cell(path, "C9", "1"), &snap).await);
        }
        let named = |sheet: &str| Check::SpreadsheetCell {
            path: "book.gnumeric".into(),
            sheet: Some(sheet.into()),
            cell: "B2".into(),
            value: "3".into(),
        };
        // A workbook made from a CSV file names its sheet after the file.
        assert!(passes(named("data.csv"), &snap).await);
        assert!(!passes(named("Sheet9"), &snap).await);
        home.write(
            "broken.gnumeric",
            "<?xml version=\"1.0\"?><not-a-workbook/>",
        );
        assert!(!passes(cell("broken.gnumeric", "A1", ""), &snap).await);
        assert!(!passes(cell("missing.gnumeric", "A1", ""), &snap).await);
    }
}
