//! Reading the episode's home folder, which is hostile: the agent controls it while the
//! episode runs, so it may hold symlinks leading out of it, huge files, FIFOs, or files swapped
//! between two system calls.
//!
//! Every path a check names must be relative and free of `..`; symlinks are resolved and the
//! result must stay inside the home folder; only regular files are read (never a FIFO, which
//! would block the grader), at most [`MAX_READ_BYTES`] of any file, within [`READ_TIMEOUT`].

use std::os::fd::AsRawFd;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use tokio::io::AsyncReadExt;

/// The most bytes a check reads from one file; a larger file fails its check.
pub const MAX_READ_BYTES: u64 = 1024 * 1024;

/// How long reading one file may take. Reads are non-blocking and capped, so this only bounds
/// pathological file systems.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

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

/// Where a home-relative path leads.
pub(super) enum Located {
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
pub(super) async fn existing_metadata(home: &Path, rel: &str) -> Result<std::fs::Metadata, String> {
    let (_, real) = resolve_inside(home, rel)
        .await?
        .ok_or_else(|| format!("{rel} does not exist"))?;
    tokio::fs::metadata(&real)
        .await
        .map_err(|e| format!("{rel}: {e}"))
}

/// Whether anything is at `rel`. A dangling symlink counts as present (it is still there);
/// a parent folder that leads outside home is refused.
pub(super) async fn locate(home: &Path, rel: &str) -> Result<Located, String> {
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
pub(super) async fn read_bytes(home: &Path, rel: &str, limit: u64) -> Result<Vec<u8>, String> {
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
pub(super) async fn read_text(home: &Path, rel: &str) -> Result<String, String> {
    let bytes = read_bytes(home, rel, MAX_READ_BYTES).await?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
