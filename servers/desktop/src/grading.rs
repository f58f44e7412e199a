//! Graders: checks of the desktop's real state when an episode ends.
//!
//! A task passes when every one of its [`Check`]s passes against a [`DesktopSnapshot`]: the
//! files in the episode's home folder, the titles of its windows and the text on its clipboard.
//! What the agent says about its work is never consulted.
//!
//! The home folder belongs to the agent while the episode runs, so it is read as hostile:
//! every path a check names must be relative and free of `..`, symlinks are resolved and the
//! result must stay inside the home folder, only regular files are read (never a FIFO, which
//! would block the grader), and at most [`MAX_READ_BYTES`] of any file. Spreadsheets are
//! copied out of the home folder before `ssconvert` reads them, so the converter never opens
//! anything the agent can still swap.

use std::ffi::OsStr;
use std::os::fd::AsRawFd;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;
use tokio::io::AsyncReadExt;

/// The most bytes a check reads from one file; a larger file fails its check.
pub const MAX_READ_BYTES: u64 = 1024 * 1024;

/// How long `ssconvert` may take to turn one spreadsheet into CSV before it is killed.
pub const SSCONVERT_TIMEOUT: Duration = Duration::from_secs(20);

/// How long reading one file may take. Reads are non-blocking and capped, so this only bounds
/// pathological file systems.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Relative tolerance for numbers compared by [`Check::SpreadsheetCell`]: spreadsheets print
/// up to 20 significant digits (`1/3` is `0.33333333333333333334`), a task's expected value
/// is written with a few.
const CELL_REL_TOL: f64 = 1e-9;

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
}

/// One condition on the desktop's final state. A task's checks are combined with all-of
/// semantics. Paths are relative to the home folder (`/home/user` inside the sandbox).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    /// The file's text equals `text` once line endings are normalised to `\n` and trailing
    /// whitespace (final newlines, spaces) is trimmed from the end of both; leading text and
    /// inner lines must match exactly.
    FileEquals {
        /// The file, relative to home.
        path: &'static str,
        /// The expected text.
        text: &'static str,
    },
    /// Some line of the file, trimmed of surrounding whitespace, equals `line` (trimmed).
    FileContainsLine {
        /// The file, relative to home.
        path: &'static str,
        /// The expected line.
        line: &'static str,
    },
    /// Nothing (no file, folder or link) is at `path`: a deleted, moved or renamed item.
    /// Moving it to the trash counts as deleting it.
    FileMissing {
        /// The path, relative to home.
        path: &'static str,
    },
    /// A regular file is at `path` (a symlink counts if it resolves inside home).
    FileExists {
        /// The file, relative to home.
        path: &'static str,
    },
    /// A folder is at `path` (a symlink counts if it resolves inside home).
    DirExists {
        /// The folder, relative to home.
        path: &'static str,
    },
    /// Some window's title contains this text (case-sensitive).
    WindowTitleContains(&'static str),
    /// Some window's title, trimmed, equals this text exactly (case-sensitive): for tasks
    /// where a title listing every candidate must not pass.
    WindowTitleEquals(&'static str),
    /// The clipboard's text, trimmed of surrounding whitespace, equals this text (trimmed);
    /// line endings are normalised first.
    ClipboardEquals(&'static str),
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
        path: &'static str,
        /// The sheet's name; `None` reads the sheet that was active when the file was saved.
        sheet: Option<&'static str>,
        /// An A1-style reference such as `B4` or `AA10`.
        cell: &'static str,
        /// The expected value.
        value: &'static str,
    },
}

impl Check {
    /// The home-relative paths the check reads, for validating a catalog.
    pub fn paths(&self) -> Vec<&'static str> {
        match *self {
            Check::FileEquals { path, .. }
            | Check::FileContainsLine { path, .. }
            | Check::FileMissing { path }
            | Check::FileExists { path }
            | Check::DirExists { path }
            | Check::SpreadsheetCell { path, .. } => vec![path],
            Check::WindowTitleContains(_)
            | Check::WindowTitleEquals(_)
            | Check::ClipboardEquals(_)
            | Check::ClipboardNumber { .. } => vec![],
        }
    }

    /// A one-line description of what the check requires, for logs and trajectories.
    pub fn describe(&self) -> String {
        match *self {
            Check::FileEquals { path, .. } => format!("file {path} has the expected text"),
            Check::FileContainsLine { path, line } => {
                format!("file {path} contains the line {line:?}")
            }
            Check::FileMissing { path } => format!("nothing is at {path}"),
            Check::FileExists { path } => format!("file {path} exists"),
            Check::DirExists { path } => format!("folder {path} exists"),
            Check::WindowTitleContains(text) => format!("a window title contains {text:?}"),
            Check::WindowTitleEquals(text) => format!("a window is titled {text:?}"),
            Check::ClipboardEquals(text) => format!("the clipboard holds {text:?}"),
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
        match *self {
            Check::FileEquals { path, text } => {
                let actual = read_text(home, path).await?;
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
                let actual = read_text(home, path).await?;
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
            Check::FileMissing { path } => match locate(home, path).await? {
                Located::Absent => Ok(format!("{path} is absent")),
                Located::Present(kind) => Err(format!("{path} still exists ({kind})")),
            },
            Check::FileExists { path } => {
                let meta = existing_metadata(home, path).await?;
                if meta.is_file() {
                    Ok(format!("{path} is a file of {} bytes", meta.len()))
                } else {
                    Err(format!("{path} exists but is not a regular file"))
                }
            }
            Check::DirExists { path } => {
                let meta = existing_metadata(home, path).await?;
                if meta.is_dir() {
                    Ok(format!("{path} is a folder"))
                } else {
                    Err(format!("{path} exists but is not a folder"))
                }
            }
            Check::WindowTitleContains(text) => {
                match snapshot.window_titles.iter().find(|t| t.contains(text)) {
                    Some(title) => Ok(format!("window {title:?}")),
                    None => Err(format!("window titles: {:?}", snapshot.window_titles)),
                }
            }
            Check::WindowTitleEquals(text) => {
                match snapshot.window_titles.iter().find(|t| t.trim() == text) {
                    Some(title) => Ok(format!("window {title:?}")),
                    None => Err(format!("window titles: {:?}", snapshot.window_titles)),
                }
            }
            Check::ClipboardEquals(text) => {
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
                if (number - value).abs() <= tolerance {
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
                let (col, row) = parse_cell(cell).ok_or_else(|| format!("bad cell {cell:?}"))?;
                let rows = spreadsheet_rows(home, path, sheet).await?;
                let actual = rows
                    .get(row)
                    .and_then(|r| r.get(col))
                    .map(String::as_str)
                    .unwrap_or("");
                if cell_matches(actual, value) {
                    Ok(format!("{cell} is {actual:?}"))
                } else {
                    Err(format!("{cell} is {actual:?}, expected {value:?}"))
                }
            }
        }
    }
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
    grade_checks(task.checks, snapshot).await
}

/// Grades a list of checks (all-of) against a snapshot.
pub async fn grade_checks(checks: &[Check], snapshot: &DesktopSnapshot) -> Grade {
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

/// Whether `path` may appear in a task: non-empty, relative, made of plain components only
/// (no `..`, no `.`, no root). Every catalog path is validated by a unit test, and again when
/// a check runs.
pub fn validate_relative_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("empty path".to_owned());
    }
    if path.contains('\0') {
        return Err(format!("{path:?} contains a NUL byte"));
    }
    let p = Path::new(path);
    if p.is_absolute() {
        return Err(format!("{path:?} is absolute"));
    }
    for component in p.components() {
        match component {
            Component::Normal(_) => {}
            _ => return Err(format!("{path:?} must be plain names joined by '/'")),
        }
    }
    Ok(())
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

/// Whether a cell's exported text matches the expected value.
fn cell_matches(actual: &str, expected: &str) -> bool {
    match (parse_number(actual), parse_number(expected)) {
        (Some(a), Some(e)) => (a - e).abs() <= CELL_REL_TOL * e.abs().max(1.0),
        _ => actual.trim() == expected.trim(),
    }
}

/// `B4` → (column 1, row 3), zero-based. Columns run A..Z, AA.., up to XFD like spreadsheets.
fn parse_cell(cell: &str) -> Option<(usize, usize)> {
    let cell = cell.trim().trim_start_matches('$');
    let letters: String = cell
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    let digits = cell[letters.len()..].trim_start_matches('$');
    if letters.is_empty() || letters.len() > 3 || digits.is_empty() {
        return None;
    }
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let col = letters
        .chars()
        .fold(0usize, |acc, c| {
            acc * 26 + (c.to_ascii_uppercase() as usize - 'A' as usize + 1)
        })
        .checked_sub(1)?;
    let row = digits.parse::<usize>().ok()?.checked_sub(1)?;
    Some((col, row))
}

/// Where a home-relative path leads.
enum Located {
    /// Nothing is there (or a parent folder is missing).
    Absent,
    /// Something is there; the kind, for details.
    Present(&'static str),
}

/// The home folder, canonical.
async fn canonical_home(home: &Path) -> Result<PathBuf, String> {
    tokio::fs::canonicalize(home)
        .await
        .map_err(|e| format!("home folder {} unreadable: {e}", home.display()))
}

/// Resolves `rel` inside `home`, following symlinks, and refuses a result outside home.
/// `Ok(None)` when nothing is there.
async fn resolve_inside(home: &Path, rel: &str) -> Result<Option<(PathBuf, PathBuf)>, String> {
    validate_relative_path(rel)?;
    let home = canonical_home(home).await?;
    match tokio::fs::canonicalize(home.join(rel)).await {
        Ok(real) if real.starts_with(&home) => Ok(Some((home, real))),
        Ok(_) => Err(format!("{rel} leads outside the home folder; refused")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        // A parent that is a file (ENOTDIR) also means nothing is at the path.
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Ok(None),
        Err(e) => Err(format!("{rel}: {e}")),
    }
}

/// The metadata of what is at `rel` (symlinks followed, inside home only); an error when
/// nothing is there.
async fn existing_metadata(home: &Path, rel: &str) -> Result<std::fs::Metadata, String> {
    let (_, real) = resolve_inside(home, rel)
        .await?
        .ok_or_else(|| format!("{rel} does not exist"))?;
    tokio::fs::metadata(&real)
        .await
        .map_err(|e| format!("{rel}: {e}"))
}

/// Whether anything is at `rel`. A dangling symlink counts as present (it is still there);
/// a parent folder that leads outside home is refused.
async fn locate(home: &Path, rel: &str) -> Result<Located, String> {
    validate_relative_path(rel)?;
    let home = canonical_home(home).await?;
    let path = Path::new(rel);
    let (parent, name) = match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => (parent, name),
        _ => return Err(format!("{rel} has no file name")),
    };
    let parent_real = if parent.as_os_str().is_empty() {
        home.clone()
    } else {
        match tokio::fs::canonicalize(home.join(parent)).await {
            Ok(real) if real.starts_with(&home) => real,
            Ok(_) => return Err(format!("{rel}: its folder leads outside home; refused")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Located::Absent),
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(Located::Absent),
            Err(e) => return Err(format!("{rel}: {e}")),
        }
    };
    match tokio::fs::symlink_metadata(parent_real.join(name)).await {
        Ok(meta) => {
            let kind = if meta.is_dir() {
                "a folder"
            } else if meta.file_type().is_symlink() {
                "a symlink"
            } else if meta.is_file() {
                "a file"
            } else {
                "a special file"
            };
            Ok(Located::Present(kind))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Located::Absent),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Ok(Located::Absent),
        Err(e) => Err(format!("{rel}: {e}")),
    }
}

/// Reads a regular file inside home, at most `limit` bytes (more is an error).
async fn read_bytes(home: &Path, rel: &str, limit: u64) -> Result<Vec<u8>, String> {
    tokio::time::timeout(READ_TIMEOUT, read_bytes_inner(home, rel, limit))
        .await
        .map_err(|_| format!("{rel}: reading timed out"))?
}

async fn read_bytes_inner(home: &Path, rel: &str, limit: u64) -> Result<Vec<u8>, String> {
    let (home, real) = resolve_inside(home, rel)
        .await?
        .ok_or_else(|| format!("{rel} does not exist"))?;
    // O_NOFOLLOW: the canonical path has no symlink, so one appearing now is a swap.
    // O_NONBLOCK: a FIFO swapped in after canonicalisation must not block the open.
    let file = tokio::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&real)
        .await
        .map_err(|e| format!("{rel}: cannot open: {e}"))?;
    // Where the open really landed, whatever was swapped along the way.
    let opened = tokio::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .await
        .map_err(|e| format!("{rel}: cannot verify the opened file: {e}"))?;
    if !opened.starts_with(&home) {
        return Err(format!("{rel} leads outside the home folder; refused"));
    }
    let meta = file.metadata().await.map_err(|e| format!("{rel}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{rel} is not a regular file"));
    }
    if meta.len() > limit {
        return Err(format!(
            "{rel} is {} bytes, more than the {limit} a check reads",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    // One byte past the limit tells a file that grew after `metadata` from one that fits.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| format!("{rel}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "{rel} is more than the {limit} bytes a check reads"
        ));
    }
    Ok(bytes)
}

/// Reads a text file inside home (UTF-8; invalid bytes are replaced, so a wrong encoding
/// fails the comparison rather than the read).
async fn read_text(home: &Path, rel: &str) -> Result<String, String> {
    let bytes = read_bytes(home, rel, MAX_READ_BYTES).await?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A private scratch folder, removed on drop. `create_dir` (not `create_dir_all`) fails on an
/// existing name, so nobody can pre-plant it.
struct ScratchDir(PathBuf);

impl ScratchDir {
    async fn new() -> Result<Self, String> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        for _ in 0..8 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let name = format!(
                "mcpgym-grade-{}-{}-{nanos}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            );
            let dir = base.join(name);
            match tokio::fs::create_dir(&dir).await {
                Ok(()) => return Ok(Self(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("cannot create a scratch folder: {e}")),
            }
        }
        Err("cannot create a scratch folder".to_owned())
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Drop also runs when the grading future is cancelled, so cleanup happens here; on a
        // runtime the removal goes to the blocking pool instead of stalling an async thread.
        let dir = std::mem::take(&mut self.0);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || {
                    let _ = std::fs::remove_dir_all(dir);
                });
            }
            Err(_) => {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}

/// The rows of one sheet of a spreadsheet inside home, as `ssconvert` exports them to CSV
/// (raw values: a formula's result, numbers unformatted).
async fn spreadsheet_rows(
    home: &Path,
    rel: &str,
    sheet: Option<&str>,
) -> Result<Vec<Vec<String>>, String> {
    let bytes = read_bytes(home, rel, MAX_READ_BYTES).await?;
    let scratch = ScratchDir::new().await?;
    // Keep the extension: ssconvert picks its importer by it when the content is ambiguous
    // (a CSV file has no magic bytes).
    let ext = Path::new(rel)
        .extension()
        .and_then(OsStr::to_str)
        .filter(|e| e.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or("gnumeric");
    let input = scratch.0.join(format!("input.{ext}"));
    let output = scratch.0.join("output.csv");
    let config = scratch.0.join("home");
    tokio::fs::write(&input, &bytes)
        .await
        .map_err(|e| format!("cannot copy {rel}: {e}"))?;
    tokio::fs::create_dir(&config)
        .await
        .map_err(|e| format!("cannot create ssconvert's home: {e}"))?;
    let mut options = String::from("format=raw");
    if let Some(sheet) = sheet {
        let quoted = sheet.replace('\\', "\\\\").replace('"', "\\\"");
        options.push_str(&format!(" sheet=\"{quoted}\""));
    }
    let mut command = tokio::process::Command::new("ssconvert");
    command
        .arg("--export-type=Gnumeric_stf:stf_assistant")
        .arg("--export-options")
        .arg(&options)
        .arg(&input)
        .arg(&output)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &config)
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        .env("GSETTINGS_BACKEND", "memory")
        .env("NO_AT_BRIDGE", "1")
        .current_dir(&scratch.0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command
        .spawn()
        .map_err(|e| format!("cannot run ssconvert: {e}"))?;
    let out = tokio::time::timeout(SSCONVERT_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| format!("ssconvert took longer than {SSCONVERT_TIMEOUT:?} on {rel}"))?
        .map_err(|e| format!("ssconvert failed: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!(
            "ssconvert could not read {rel} ({}): {}",
            out.status,
            excerpt(stderr.trim())
        ));
    }
    let csv = match tokio::fs::read(&output).await {
        Ok(csv) => csv,
        Err(_) => {
            return Err(format!(
                "ssconvert produced nothing from {rel}: {}",
                excerpt(stderr.trim())
            ));
        }
    };
    Ok(parse_csv(&String::from_utf8_lossy(&csv)))
}

/// A CSV parser for what `ssconvert` writes: `,` separators, `"` quoting with `""` escapes,
/// newlines allowed inside quotes.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            _ => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder for one test, removed on drop.
    struct TempHome(PathBuf);

    impl TempHome {
        fn new(name: &str) -> Self {
            static N: AtomicU64 = AtomicU64::new(0);
            let dir = std::env::temp_dir().join(format!(
                "mcpgym-desktop-grading-{}-{name}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
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
    fn relative_paths_are_validated() {
        assert!(validate_relative_path("a/b.txt").is_ok());
        assert!(validate_relative_path("notes.txt").is_ok());
        assert!(validate_relative_path("").is_err());
        assert!(validate_relative_path("/etc/passwd").is_err());
        assert!(validate_relative_path("../x").is_err());
        assert!(validate_relative_path("a/../../x").is_err());
        assert!(validate_relative_path("./x").is_err());
    }

    #[test]
    fn cells_parse() {
        assert_eq!(parse_cell("A1"), Some((0, 0)));
        assert_eq!(parse_cell("B4"), Some((1, 3)));
        assert_eq!(parse_cell("aa10"), Some((26, 9)));
        assert_eq!(parse_cell("$C$2"), Some((2, 1)));
        assert_eq!(parse_cell("A0"), None);
        assert_eq!(parse_cell("4B"), None);
        assert_eq!(parse_cell("B"), None);
    }

    #[test]
    fn csv_parses_quotes_and_newlines() {
        let rows = parse_csv("a,\"b,c\",\"say \"\"hi\"\"\"\r\n1,\"x\ny\",\n");
        assert_eq!(rows[0], vec!["a", "b,c", "say \"hi\""]);
        assert_eq!(rows[1], vec!["1", "x\ny", ""]);
        assert_eq!(rows.len(), 2);
    }

    #[test]
    fn cell_values_compare_numbers_with_tolerance() {
        assert!(cell_matches("0.33333333333333333334", "0.333333333333"));
        assert!(cell_matches("17", "17.0"));
        assert!(!cell_matches("18", "17"));
        assert!(cell_matches("total", " total "));
        assert!(!cell_matches("Total", "total"));
        assert!(!cell_matches("", "0"));
    }

    #[tokio::test]
    async fn file_equals_normalises_endings_and_trailing_space() {
        let home = TempHome::new("equals");
        home.write("a.txt", "one\r\ntwo  \r\n\r\n");
        let snap = home.snapshot();
        assert!(
            passes(
                Check::FileEquals {
                    path: "a.txt",
                    text: "one\ntwo"
                },
                &snap
            )
            .await
        );
        assert!(
            passes(
                Check::FileEquals {
                    path: "a.txt",
                    text: "one\ntwo\n"
                },
                &snap
            )
            .await
        );
        assert!(
            !passes(
                Check::FileEquals {
                    path: "a.txt",
                    text: "one\nthree"
                },
                &snap
            )
            .await
        );
        assert!(
            !passes(
                Check::FileEquals {
                    path: "a.txt",
                    text: " one\ntwo"
                },
                &snap
            )
            .await
        );
        assert!(
            !passes(
                Check::FileEquals {
                    path: "nope.txt",
                    text: ""
                },
                &snap
            )
            .await
        );
    }

    #[tokio::test]
    async fn file_contains_line() {
        let home = TempHome::new("line");
        home.write("log/x.log", "start\n  ERROR disk full  \nend");
        let snap = home.snapshot();
        let check = |line| Check::FileContainsLine {
            path: "log/x.log",
            line,
        };
        assert!(passes(check("ERROR disk full"), &snap).await);
        assert!(passes(check("end"), &snap).await);
        assert!(!passes(check("ERROR"), &snap).await);
    }

    #[tokio::test]
    async fn existence_checks() {
        let home = TempHome::new("exist");
        home.write("dir/file.txt", "x");
        let snap = home.snapshot();
        assert!(
            passes(
                Check::FileExists {
                    path: "dir/file.txt"
                },
                &snap
            )
            .await
        );
        assert!(!passes(Check::FileExists { path: "dir" }, &snap).await);
        assert!(!passes(Check::FileExists { path: "dir/none" }, &snap).await);
        assert!(passes(Check::DirExists { path: "dir" }, &snap).await);
        assert!(
            !passes(
                Check::DirExists {
                    path: "dir/file.txt"
                },
                &snap
            )
            .await
        );
        assert!(!passes(Check::DirExists { path: "other" }, &snap).await);
        assert!(passes(Check::FileMissing { path: "gone.txt" }, &snap).await);
        assert!(
            passes(
                Check::FileMissing {
                    path: "nodir/gone.txt"
                },
                &snap
            )
            .await
        );
        assert!(
            passes(
                Check::FileMissing {
                    path: "dir/file.txt/x"
                },
                &snap
            )
            .await
        );
        assert!(
            !passes(
                Check::FileMissing {
                    path: "dir/file.txt"
                },
                &snap
            )
            .await
        );
        assert!(!passes(Check::FileMissing { path: "dir" }, &snap).await);
        // A dangling symlink is still something at that path.
        std::os::unix::fs::symlink("/nonexistent-target", home.0.join("dangling")).unwrap();
        assert!(!passes(Check::FileMissing { path: "dangling" }, &snap).await);
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
            path: "link.txt",
            text: "expected",
        }
        .evaluate(&snap)
        .await;
        assert!(!result.passed);
        assert!(result.detail.contains("refused"), "{}", result.detail);
        assert!(
            !passes(
                Check::FileExists {
                    path: "out/secret.txt"
                },
                &snap
            )
            .await
        );
        assert!(!passes(Check::DirExists { path: "out" }, &snap).await);
        assert!(
            !passes(
                Check::FileMissing {
                    path: "out/other.txt"
                },
                &snap
            )
            .await
        );
        // Paths that are not plain relative names never run.
        let abs = Check::FileEquals {
            path: "/etc/hostname",
            text: "",
        };
        assert!(!passes(abs, &snap).await);
        let dotdot = Check::FileExists {
            path: "../escape/x",
        };
        assert!(!passes(dotdot, &snap).await);
        // A symlink that stays inside home is followed.
        home.write("real.txt", "inside");
        std::os::unix::fs::symlink(home.0.join("real.txt"), home.0.join("alias.txt")).unwrap();
        let inside = Check::FileEquals {
            path: "alias.txt",
            text: "inside",
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
            path: "big.txt",
            line: "x",
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
            path: "pipe",
            text: "",
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
        };
        assert!(passes(Check::WindowTitleContains("Deploy fin"), &snap).await);
        assert!(!passes(Check::WindowTitleContains("deploy"), &snap).await);
        assert!(passes(Check::WindowTitleEquals("Deploy finished"), &snap).await);
        assert!(!passes(Check::WindowTitleEquals("Deploy"), &snap).await);
        assert!(passes(Check::ClipboardEquals("888"), &snap).await);
        assert!(!passes(Check::ClipboardEquals("88"), &snap).await);
        let number = |value| Check::ClipboardNumber {
            value,
            tolerance: 1e-9,
        };
        assert!(passes(number(888.0), &snap).await);
        assert!(!passes(number(887.0), &snap).await);
        snap.clipboard = Some("0.125".into());
        assert!(passes(number(0.125), &snap).await);
        snap.clipboard = Some("a\r\nb".into());
        assert!(passes(Check::ClipboardEquals("a\nb"), &snap).await);
        assert!(!passes(number(0.0), &snap).await);
        snap.clipboard = None;
        assert!(!passes(Check::ClipboardEquals(""), &snap).await);
        snap.window_titles.clear();
        assert!(!passes(Check::WindowTitleContains("x"), &snap).await);
    }

    #[tokio::test]
    async fn grade_is_all_of_and_empty_fails() {
        let home = TempHome::new("grade");
        home.write("a.txt", "a");
        let snap = home.snapshot();
        let good = Check::FileExists { path: "a.txt" };
        let bad = Check::FileExists { path: "b.txt" };
        let g = grade_checks(&[good, bad], &snap).await;
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
        let cell = |path, cell, value| Check::SpreadsheetCell {
            path,
            sheet: None,
            cell,
            value,
        };
        for path in ["book.gnumeric", "data.csv"] {
            assert!(passes(cell(path, "B5", "17"), &snap).await);
            assert!(passes(cell(path, "A5", "total"), &snap).await);
            assert!(passes(cell(path, "A4", "plums, red"), &snap).await);
            assert!(passes(cell(path, "B6", "0.333333333333"), &snap).await);
            assert!(!passes(cell(path, "B5", "18"), &snap).await);
            assert!(!passes(cell(path, "C9", "1"), &snap).await);
        }
        let named = |sheet| Check::SpreadsheetCell {
            path: "book.gnumeric",
            sheet: Some(sheet),
            cell: "B2",
            value: "3",
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
