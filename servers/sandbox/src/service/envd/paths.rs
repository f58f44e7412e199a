//! Mapping paths inside a sandbox to paths relative to its home, and the errors of file
//! operations on them.
//!
//! A path is checked lexically here (no `..` out of `/home/user`); symlinks are left to
//! [`beneath`](super::beneath), where the kernel resolves every path beneath the home's
//! descriptor and refuses any that leads out of it.

use std::path::{Component, Path, PathBuf};

use axum::http::StatusCode;

use crate::jail::HOME;
use crate::service::api_error::ApiError;

/// A path of a sandbox, as seen inside and relative to its home.
#[derive(Debug, Clone)]
pub(crate) struct SandboxPath {
    /// Absolute path inside the jail, normalized.
    pub(crate) inside: String,
    /// The same path relative to the home (empty for the home itself).
    pub(crate) relative: PathBuf,
}

fn escape(path: &str) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        format!(
            "path {path:?} is outside the sandbox's files: only paths under {HOME} can be read or written here (the sandbox's /tmp, which its kernels and commands share, is not served by the file API; copy a file from there into the home with a command)"
        ),
    )
}

/// Normalizes `path` (absolute, or relative to the home) to a path under the sandbox's home.
pub(crate) fn resolve(path: &str) -> Result<SandboxPath, ApiError> {
    if path.is_empty() {
        return Err(ApiError::bad_request(
            "missing path: pass ?path=/home/user/FILE (or \"path\" in the JSON body)",
        ));
    }
    if path.contains('\0') {
        return Err(ApiError::bad_request("the path contains a NUL byte"));
    }
    let absolute = if let Some(rest) = path.strip_prefix("~/") {
        Path::new(HOME).join(rest)
    } else if path == "~" {
        PathBuf::from(HOME)
    } else {
        Path::new(HOME).join(path)
    };
    let mut parts: Vec<String> = Vec::new();
    for component in absolute.components() {
        match component {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(escape(path));
                }
            }
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
        }
    }
    let inside = format!("/{}", parts.join("/"));
    let relative = inside
        .strip_prefix(HOME)
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
        .ok_or_else(|| escape(path))?
        .trim_start_matches('/')
        .to_owned();
    Ok(SandboxPath {
        inside,
        relative: PathBuf::from(relative),
    })
}

/// The error of file operation `action` (e.g. "read") on `path`, as a sentence with a status.
pub(crate) fn fs_error(action: &str, path: &SandboxPath, error: std::io::Error) -> ApiError {
    let inside = &path.inside;
    match error.raw_os_error() {
        Some(libc::EXDEV) => {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "cannot {action} {inside:?}: the path leads outside the sandbox's files (through a symlink or \"..\"): only files under {HOME} can be reached here, and symlinks are followed only while they stay inside (absolute targets never are)"
                ),
            );
        }
        Some(libc::ELOOP) => {
            return ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("cannot {action} {inside:?}: too many symlinks on the way"),
            );
        }
        Some(libc::ENOTDIR) => {
            return ApiError::bad_request(format!(
                "cannot {action} {inside:?}: a part of the path is not a directory"
            ));
        }
        _ => {}
    }
    let status = match error.kind() {
        std::io::ErrorKind::NotFound => StatusCode::NOT_FOUND,
        std::io::ErrorKind::AlreadyExists => StatusCode::CONFLICT,
        std::io::ErrorKind::PermissionDenied => StatusCode::FORBIDDEN,
        _ => StatusCode::BAD_REQUEST,
    };
    let reason = match error.kind() {
        std::io::ErrorKind::NotFound => "it does not exist".to_owned(),
        _ => error.to_string(),
    };
    ApiError::new(status, format!("cannot {action} {inside:?}: {reason}"))
}

/// Runs blocking file work with this thread's file-system identity set to the sandbox's user
/// (`setfsuid`/`setfsgid`), then restores it.
///
/// Why: the service runs as root, and the lexical and symlink checks of [`resolve`] race with
/// code in the sandbox that swaps a directory for a symlink. As the sandbox's user, a path
/// that ends up outside meets the same permission checks the sandbox itself would (root's
/// file capabilities are dropped while the fs uid is not 0), and new files get the right
/// owner. A no-op when the service is not root (the jail then runs as our own user).
pub(crate) fn as_user<T>(user: Option<crate::jail::HostUser>, work: impl FnOnce() -> T) -> T {
    struct Restore(u32, u32);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: plain system calls; they act on this thread only.
            unsafe {
                libc::setfsuid(self.0);
                libc::setfsgid(self.1);
            }
        }
    }
    let Some(user) = user else {
        return work();
    };
    // SAFETY: plain system calls on this thread; the previous ids are restored on drop,
    // also when `work` panics, so a pooled blocking thread never keeps the sandbox's ids.
    let _restore = unsafe {
        let old_gid = libc::setfsgid(user.gid) as u32;
        let old_uid = libc::setfsuid(user.uid) as u32;
        Restore(old_uid, old_gid)
    };
    work()
}
