//! Mapping paths inside a sandbox to host paths, refusing anything that leaves its home.
//!
//! The service runs as root on the host side, so a path is checked twice: lexically (no
//! `..` out of `/home/user`) and after resolving symlinks (a link the sandbox's code made to
//! `/etc/shadow` must not be followed by us).

use std::path::{Component, Path, PathBuf};

use axum::http::StatusCode;

use crate::jail::HOME;
use crate::service::api_error::ApiError;
use crate::service::registry::Sandbox;

/// A path of a sandbox, as seen inside and on the host.
#[derive(Debug, Clone)]
pub(crate) struct SandboxPath {
    /// Absolute path inside the jail, normalized.
    pub(crate) inside: String,
    /// The same file on the host.
    pub(crate) host: PathBuf,
}

fn escape(path: &str) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        format!(
            "path {path:?} is outside the sandbox's files: only paths under {HOME} can be read or written here (each process's /tmp is private to it)"
        ),
    )
}

/// Resolves `path` (absolute, or relative to the home) to a host path under the sandbox's
/// home, following symlinks only where they stay inside.
pub(crate) async fn resolve(sandbox: &Sandbox, path: &str) -> Result<SandboxPath, ApiError> {
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
    let home = sandbox.home.clone();
    let host = home.join(&relative);
    let checked = host.clone();
    let original = path.to_owned();
    tokio::task::spawn_blocking(move || confined(&home, &checked))
        .await
        .map_err(|_| ApiError::internal("path check panicked"))?
        .map_err(|()| escape(&original))?;
    Ok(SandboxPath { inside, host })
}

/// Whether the deepest existing ancestor of `host` (itself included), with symlinks
/// resolved, is inside `home`. Blocking.
fn confined(home: &Path, host: &Path) -> Result<(), ()> {
    let home = home.canonicalize().map_err(|_| ())?;
    let mut probe = host.to_path_buf();
    loop {
        match probe.canonicalize() {
            Ok(real) => {
                return if real.starts_with(&home) {
                    Ok(())
                } else {
                    Err(())
                };
            }
            Err(_) => {
                // A dangling symlink must not be followed later either.
                if probe.symlink_metadata().is_ok() {
                    return Err(());
                }
                if !probe.pop() {
                    return Err(());
                }
            }
        }
    }
}

/// Creates the missing directories of `dir` below `home`. Blocking; call it inside
/// [`as_user`] so they belong to the sandbox's user.
pub(crate) fn create_dirs(home: &Path, dir: &Path) -> std::io::Result<()> {
    let mut missing = Vec::new();
    let mut probe = dir.to_path_buf();
    while !probe.exists() && probe.starts_with(home) && probe != home {
        missing.push(probe.clone());
        if !probe.pop() {
            break;
        }
    }
    for created in missing.into_iter().rev() {
        match std::fs::create_dir(&created) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
    }
    Ok(())
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
