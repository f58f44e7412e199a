//! Clean-up after servers that were killed: their folders (with any home quota mounted in
//! them) and their cgroups.

use std::path::{Path, PathBuf};

use crate::cgroup;
use crate::quota::remove_root;

/// What [`cleanup_stale`] removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cleanup {
    /// Folders `mcpgym-*-<pid>` of servers no longer running (unmounted, then removed).
    pub folders: Vec<PathBuf>,
    /// Cgroup directories `mcpgym-<pid>-*` of servers no longer running, and empty ones
    /// without a pid in their name.
    pub cgroups: Vec<PathBuf>,
}

/// Removes what servers that died without cleaning up left behind: every folder directly in
/// `temp_dir` named `mcpgym-<anything>-<pid>` whose pid is no longer running (after
/// unmounting the home quotas inside), and every jail cgroup `mcpgym-<pid>-<id>` whose pid is
/// no longer running (after killing what is left in it) beside the ones this process would
/// make. Folders and cgroups of this process and of running processes are kept. Call it at
/// start-up; blocking (file system), and never fails: what cannot be removed is logged.
pub fn cleanup_stale(temp_dir: &Path) -> Cleanup {
    let mut cleanup = Cleanup::default();
    if let Ok(entries) = std::fs::read_dir(temp_dir) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(folder_pid) else {
                continue;
            };
            if !entry.file_type().is_ok_and(|t| t.is_dir()) || is_running(pid) {
                continue;
            }
            let path = entry.path();
            match remove_root(&path) {
                Ok(()) => cleanup.folders.push(path),
                Err(error) => {
                    tracing::warn!(folder = %path.display(), %error, "cannot remove a stale folder")
                }
            }
        }
    }
    for parent in cgroup::parents() {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("mcpgym-")) else {
                continue;
            };
            let path = entry.path();
            let removed = match cgroup_pid(rest) {
                Some(pid) if !is_running(pid) => {
                    cgroup::kill_and_remove_dirs(std::slice::from_ref(&path))
                }
                Some(_) => false,
                // An older name without the server's pid: only an empty one is surely stale.
                None => std::fs::remove_dir(&path).is_ok(),
            };
            if removed {
                cleanup.cgroups.push(path);
            }
        }
    }
    if cleanup != Cleanup::default() {
        tracing::info!(
            folders = cleanup.folders.len(),
            cgroups = cleanup.cgroups.len(),
            "removed what killed servers left behind"
        );
    }
    cleanup
}

/// `mcpgym-<anything>-<pid>` → pid (not this process's).
fn folder_pid(name: &str) -> Option<libc::pid_t> {
    let rest = name.strip_prefix("mcpgym-")?;
    let (_, pid) = rest.rsplit_once('-')?;
    parse_pid(pid)
}

/// `<pid>-<id>` → pid (not this process's).
fn cgroup_pid(rest: &str) -> Option<libc::pid_t> {
    parse_pid(rest.split_once('-')?.0)
}

fn parse_pid(text: &str) -> Option<libc::pid_t> {
    let pid: libc::pid_t = text.parse().ok()?;
    (pid > 0 && pid as u32 != std::process::id()).then_some(pid)
}

/// Whether a process with this pid exists and has not exited (one we may not signal exists
/// too; a zombie, killed but not yet reaped by its parent, does not run).
fn is_running(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let signalled = unsafe { libc::kill(pid, 0) } == 0;
    let exists = signalled || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && !is_zombie(pid)
}

/// Whether `/proc/<pid>/stat` gives the process's state as `Z` (exited, not reaped).
fn is_zombie(pid: libc::pid_t) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        // The state follows the command name, which is in parentheses and may hold any byte.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            == Some("Z")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_stale_things() {
        assert_eq!(folder_pid("mcpgym-desktop-123"), Some(123));
        assert_eq!(folder_pid("mcpgym-sandbox-77"), Some(77));
        assert_eq!(folder_pid("mcpgym-sandbox-uids"), None);
        assert_eq!(folder_pid("other-12"), None);
        assert_eq!(
            folder_pid(&format!("mcpgym-x-{}", std::process::id())),
            None
        );
        assert_eq!(cgroup_pid("42-0123abcd"), Some(42));
        assert_eq!(cgroup_pid("0123abcdef"), None);
    }

    #[test]
    fn folders_of_dead_servers_go_and_others_stay() {
        let temp = std::env::temp_dir().join(format!("mcpgym-stale-test.{}", std::process::id()));
        // A pid far above pid_max is never running.
        let dead = temp.join("mcpgym-desktop-2147483000");
        let alive = temp.join("mcpgym-desktop-1");
        let own = temp.join(format!("mcpgym-desktop-{}", std::process::id()));
        for dir in [&dead, &alive, &own] {
            std::fs::create_dir_all(dir.join("home")).unwrap();
        }
        let cleanup = cleanup_stale(&temp);
        assert_eq!(cleanup.folders, vec![dead.clone()]);
        assert!(!dead.exists() && alive.exists() && own.exists());
        std::fs::remove_dir_all(&temp).unwrap();
    }
}
