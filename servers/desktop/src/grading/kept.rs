//! What a desktop's grade read, kept in the episode's end record so `mcpgym rescore` can
//! grade it again offline: for each path a check names, what was there (a file's bytes, a
//! folder, nothing, a link leading nowhere or out of home, an oversized or special file), and
//! the window titles, clipboard and page requests.
//!
//! Kept by meaning rather than as a copy of the tree: each entry is what the grader's own
//! reading of that path found, and [`restore`] rebuilds a home folder in which the same reading
//! finds the same thing. The record is untrusted input (a file anyone may edit), so every path
//! is validated again before anything is written.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use mcpgym_env::rescore::GRADED_BUDGET;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::home::{Located, locate, read_bytes, validate_relative_path};
use super::web::BOOKMARKS;
use super::{Check, DesktopSnapshot, MAX_READ_BYTES};
use crate::pages::PageRequest;

/// What was at one home-relative path when the episode was graded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum Entry {
    /// Nothing.
    Absent,
    /// A regular file (or a link to one inside home), its bytes in base64.
    File { base64: String },
    /// A regular file larger than a check reads, which fails every check that reads it.
    TooLarge { bytes: u64 },
    /// A folder.
    Folder,
    /// A symlink leading nowhere (present, yet no file).
    Dangling,
    /// Something leading outside home, which the grader refuses.
    Outside,
    /// A FIFO, socket or device, which the grader never reads.
    Special,
}

/// A desktop's graded state, as the end record keeps it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Kept {
    /// The reward mode the episode was paid in (`sparse` or `partial`).
    reward: String,
    /// Each path a check reads.
    paths: BTreeMap<String, Entry>,
    window_titles: Vec<String>,
    clipboard: Option<String>,
    page_requests: Vec<PageRequest>,
}

/// The paths `checks` read: those they name, and the browser's bookmarks file for a
/// bookmark check.
fn read_paths(checks: &[Check]) -> Vec<&str> {
    let mut paths: Vec<&str> = checks.iter().filter_map(Check::path).collect();
    if checks.iter().any(|c| matches!(c, Check::Bookmark { .. })) {
        paths.push(BOOKMARKS);
    }
    paths.sort_unstable();
    paths.dedup();
    paths
}

/// What the grader finds at `rel`.
async fn entry(home: &Path, rel: &str) -> Entry {
    match locate(home, rel).await {
        Err(_) => return Entry::Outside,
        Ok(Located::Absent) => return Entry::Absent,
        Ok(Located::Present(_)) => {}
    }
    let Ok(canonical_home) = tokio::fs::canonicalize(home).await else {
        return Entry::Outside;
    };
    let real = match tokio::fs::canonicalize(home.join(rel)).await {
        Ok(real) if real.starts_with(&canonical_home) => real,
        Ok(_) => return Entry::Outside,
        Err(_) => return Entry::Dangling,
    };
    match tokio::fs::metadata(&real).await {
        Ok(meta) if meta.is_dir() => Entry::Folder,
        Ok(meta) if meta.is_file() && meta.len() > MAX_READ_BYTES => {
            Entry::TooLarge { bytes: meta.len() }
        }
        Ok(meta) if meta.is_file() => match read_bytes(home, rel, MAX_READ_BYTES).await {
            Ok(bytes) => Entry::File {
                base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            },
            Err(_) => Entry::Special,
        },
        Ok(_) => Entry::Special,
        Err(_) => Entry::Dangling,
    }
}

/// What `checks` read in `snapshot`, for the end record; `{"over_budget": bytes}` when the
/// files they read exceed [`GRADED_BUDGET`] together.
pub async fn keep(checks: &[Check], snapshot: &DesktopSnapshot, reward: &str) -> Value {
    let mut paths = BTreeMap::new();
    let mut bytes = 0usize;
    for rel in read_paths(checks) {
        let found = entry(&snapshot.home, rel).await;
        if let Entry::File { base64 } = &found {
            bytes += base64.len() / 4 * 3;
        }
        paths.insert(rel.to_owned(), found);
    }
    if bytes > GRADED_BUDGET {
        return serde_json::json!({ "over_budget": bytes });
    }
    let kept = Kept {
        reward: reward.to_owned(),
        paths,
        window_titles: snapshot.window_titles.clone(),
        clipboard: snapshot.clipboard.clone(),
        page_requests: snapshot.page_requests.clone(),
    };
    serde_json::to_value(kept).unwrap_or(Value::Null)
}

/// A kept state read back: the reward mode it was paid in and everything but the home folder.
pub struct Restorable {
    /// The reward mode (`sparse`, `partial`).
    pub reward: String,
    kept: Kept,
}

/// Reads a kept state; the sentence says what is wrong with it.
pub fn read(graded: Option<&Value>) -> Result<Restorable, String> {
    let graded = graded.ok_or(
        "the end record keeps no graded state (written before desktops kept one, or aborted)",
    )?;
    if let Some(bytes) = graded.get("over_budget") {
        return Err(format!(
            "the files the checks read came to {bytes} bytes, over the {GRADED_BUDGET} an end record keeps"
        ));
    }
    let kept: Kept = serde_json::from_value(graded.clone())
        .map_err(|e| format!("the end record's graded state is not a desktop's: {e}"))?;
    for rel in kept.paths.keys() {
        validate_relative_path(rel)
            .map_err(|e| format!("the graded state names a bad path: {e}"))?;
    }
    Ok(Restorable {
        reward: kept.reward.clone(),
        kept,
    })
}

impl Restorable {
    /// Rebuilds the graded home in `home` (an empty folder) and the snapshot to grade.
    pub async fn restore(self, home: &Path) -> Result<DesktopSnapshot, String> {
        // Parents before children.
        let mut entries: Vec<(&String, &Entry)> = self.kept.paths.iter().collect();
        entries.sort_by_key(|(rel, _)| rel.matches('/').count());
        for (rel, entry) in entries {
            place(home, rel, entry)
                .await
                .map_err(|e| format!("cannot rebuild {rel}: {e}"))?;
        }
        Ok(DesktopSnapshot {
            home: home.to_path_buf(),
            window_titles: self.kept.window_titles,
            clipboard: self.kept.clipboard,
            page_requests: self.kept.page_requests,
        })
    }
}

/// Makes `rel` in `home` read as `entry` does.
async fn place(home: &Path, rel: &str, entry: &Entry) -> std::io::Result<()> {
    let path = home.join(rel);
    let parent = || async {
        match path.parent() {
            Some(parent) => tokio::fs::create_dir_all(parent).await,
            None => Ok(()),
        }
    };
    match entry {
        Entry::Absent => Ok(()),
        Entry::Folder => tokio::fs::create_dir_all(&path).await,
        Entry::File { base64 } => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(base64)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            parent().await?;
            tokio::fs::write(&path, bytes).await
        }
        Entry::TooLarge { bytes } => {
            parent().await?;
            // Sparse: its length is all a check looks at before refusing it.
            tokio::fs::File::create(&path).await?.set_len(*bytes).await
        }
        Entry::Dangling => {
            parent().await?;
            tokio::fs::symlink(".mcpgym-nowhere/nothing", &path).await
        }
        Entry::Outside => {
            parent().await?;
            tokio::fs::symlink("/", &path).await
        }
        Entry::Special => {
            parent().await?;
            let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
            // SAFETY: mkfifo reads a NUL-terminated path and creates a FIFO there.
            if unsafe { libc::mkfifo(name.as_ptr(), 0o600) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "mcpgym-kept-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Every kind of entry, kept and restored, reads the same to the grader's checks.
    #[tokio::test]
    async fn a_kept_home_grades_as_the_original_did() {
        let home = scratch("original");
        std::fs::create_dir_all(home.join("docs/old")).unwrap();
        std::fs::write(home.join("docs/notes.txt"), "buy milk\n").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", home.join("docs/escape.txt")).unwrap();
        std::os::unix::fs::symlink("gone.txt", home.join("docs/dangling.txt")).unwrap();
        std::os::unix::fs::symlink("notes.txt", home.join("docs/alias.txt")).unwrap();
        std::fs::File::create(home.join("big.bin"))
            .unwrap()
            .set_len(MAX_READ_BYTES + 1)
            .unwrap();
        let checks: Vec<Check> = serde_json::from_value(serde_json::json!([
            {"kind": "file_equals", "path": "docs/notes.txt", "text": "buy milk"},
            {"kind": "file_equals", "path": "docs/alias.txt", "text": "buy milk"},
            {"kind": "file_exists", "path": "docs/escape.txt"},
            {"kind": "file_missing", "path": "docs/dangling.txt"},
            {"kind": "dir_exists", "path": "docs/old"},
            {"kind": "file_missing", "path": "docs/removed.txt"},
            {"kind": "file_contains_line", "path": "big.bin", "line": "x"},
            {"kind": "clipboard_equals", "text": "42"},
            {"kind": "window_title_contains", "text": "Report"},
        ]))
        .unwrap();
        let snapshot = DesktopSnapshot {
            home: home.clone(),
            window_titles: vec!["Report - LibreOffice".into()],
            clipboard: Some("41".into()),
            page_requests: Vec::new(),
        };
        let online = super::super::grade_checks(&checks, &snapshot).await;
        let kept = keep(&checks, &snapshot, "partial").await;
        let text = serde_json::to_string(&kept).unwrap();
        assert!(
            !text.contains("passwd"),
            "a link out of home keeps nothing of its target: {text}"
        );
        let restorable = read(Some(&kept)).unwrap();
        assert_eq!(restorable.reward, "partial");
        let again_home = scratch("again");
        let again = restorable.restore(&again_home).await.unwrap();
        let offline = super::super::grade_checks(&checks, &again).await;
        let verdicts =
            |g: &super::super::Grade| g.checks.iter().map(|c| c.passed).collect::<Vec<_>>();
        assert_eq!(verdicts(&offline), verdicts(&online));
        assert_eq!(
            verdicts(&online),
            [true, true, false, false, true, true, false, false, true]
        );
        let _ = std::fs::remove_dir_all(home);
        let _ = std::fs::remove_dir_all(again_home);
    }

    #[test]
    fn a_kept_state_naming_a_path_out_of_home_is_refused() {
        let kept = serde_json::json!({
            "reward": "sparse",
            "paths": {"../../etc/cron.d/x": {"kind": "file", "base64": "eA=="}},
            "window_titles": [], "clipboard": null, "page_requests": [],
        });
        let error = read(Some(&kept)).err().expect("refused");
        assert!(error.contains("bad path"), "{error}");
        let over = read(Some(&serde_json::json!({"over_budget": 9_000_000})))
            .err()
            .unwrap();
        assert!(over.contains("9000000 bytes"), "{over}");
        assert!(read(None).is_err());
    }
}
