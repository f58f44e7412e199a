//! Spreadsheet cells, read with `ssconvert` (Gnumeric's converter): anything it imports
//! (`.gnumeric`, `.xlsx`, `.ods`, `.csv`) is exported as CSV with raw values, so a formula's
//! result is read, never its text.
//!
//! The file is copied out of the home folder (through [`super::home`]'s checks) before the
//! converter runs, so it never opens anything the agent can still swap; it runs with a clean
//! environment, a scratch home of its own, and a timeout.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::csv::parse_csv;
use super::home::{MAX_READ_BYTES, read_bytes};
use super::{excerpt, parse_number};

/// How long `ssconvert` may take to turn one spreadsheet into CSV before it is killed.
pub const SSCONVERT_TIMEOUT: Duration = Duration::from_secs(20);

/// Relative tolerance for numbers compared by [`super::Check::SpreadsheetCell`]: spreadsheets
/// print up to 20 significant digits (`1/3` is `0.33333333333333333334`), a task's expected
/// value is written with a few.
const CELL_REL_TOL: f64 = 1e-9;

/// The text of one cell (an A1-style reference) of a spreadsheet inside home: empty when the
/// cell is empty or outside the sheet's data.
pub(super) async fn read_cell(
    home: &Path,
    rel: &str,
    sheet: Option<&str>,
    cell: &str,
) -> Result<String, String> {
    let (col, row) = parse_cell(cell).ok_or_else(|| format!("bad cell {cell:?}"))?;
    let rows = spreadsheet_rows(home, rel, sheet).await?;
    Ok(rows
        .get(row)
        .and_then(|r| r.get(col))
        .cloned()
        .unwrap_or_default())
}

/// Whether a cell's exported text matches the expected value.
pub(super) fn cell_matches(actual: &str, expected: &str) -> bool {
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

/// A private scratch folder, removed on drop. `create_dir` (not `create_dir_all`) fails on an
/// existing name, so nobody can pre-plant it. Named `mcpgym-grade-<n>-<nanos>-<pid>`, so that
/// the stale clean-up of a server starting beside this one keeps it while this process runs.
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
            // The pid last: servers starting beside this one remove every `mcpgym-…-<pid>`
            // folder whose pid is not running, and read it from the name's last part.
            let name = format!(
                "mcpgym-grade-{}-{nanos}-{}",
                COUNTER.fetch_add(1, Ordering::Relaxed),
                std::process::id()
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
    let mut options = String::from("format=raw");
    if let Some(sheet) = sheet {
        let quoted = sheet.replace('\\', "\\\\").replace('"', "\\\"");
        options.push_str(&format!(" sheet=\"{quoted}\""));
    }
    let csv = convert(
        home,
        rel,
        "Gnumeric_stf:stf_assistant",
        Some(&options),
        "csv",
    )
    .await?;
    Ok(parse_csv(&String::from_utf8_lossy(&csv)))
}

/// A spreadsheet inside home as an Excel workbook (`.xlsx`), converted by `ssconvert`: how the
/// formulas of a format read here only through Gnumeric (`.gnumeric`) are read.
pub(super) async fn as_xlsx(home: &Path, rel: &str) -> Result<Vec<u8>, String> {
    convert(home, rel, "Gnumeric_Excel:xlsx2", None, "xlsx").await
}

/// `rel`, copied out of home, converted by `ssconvert` to `export_type` (with its `options`);
/// the output's bytes.
async fn convert(
    home: &Path,
    rel: &str,
    export_type: &str,
    options: Option<&str>,
    out_ext: &str,
) -> Result<Vec<u8>, String> {
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
    let output = scratch.0.join(format!("output.{out_ext}"));
    let config = scratch.0.join("home");
    tokio::fs::write(&input, &bytes)
        .await
        .map_err(|e| format!("cannot copy {rel}: {e}"))?;
    tokio::fs::create_dir(&config)
        .await
        .map_err(|e| format!("cannot create ssconvert's home: {e}"))?;
    let mut command = tokio::process::Command::new("ssconvert");
    command.arg(format!("--export-type={export_type}"));
    if let Some(options) = options {
        command.arg("--export-options").arg(options);
    }
    command
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
    tokio::fs::read(&output).await.map_err(|_| {
        format!(
            "ssconvert produced nothing from {rel}: {}",
            excerpt(stderr.trim())
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn cell_values_compare_numbers_with_tolerance() {
        assert!(cell_matches("0.33333333333333333334", "0.333333333333"));
        assert!(cell_matches("17", "17.0"));
        assert!(!cell_matches("18", "17"));
        assert!(cell_matches("total", " total "));
        assert!(!cell_matches("Total", "total"));
        assert!(!cell_matches("", "0"));
    }

    #[tokio::test]
    async fn scratch_folders_end_with_this_processs_pid_so_stale_cleanup_keeps_them() {
        let scratch = ScratchDir::new().await.unwrap();
        let name = scratch.0.file_name().unwrap().to_str().unwrap().to_owned();
        let (_, pid) = name.rsplit_once('-').unwrap();
        assert_eq!(pid, std::process::id().to_string(), "{name}");
        assert!(name.starts_with("mcpgym-"), "{name}");
    }
}
