//! Size limits on a jail's home: a tmpfs mounted on the host directory.
//!
//! A server running as root mounts it in the host's mount namespace, where the server
//! itself (its file API, graders) keeps reading and writing the same folder. A server
//! running as an ordinary user first moves into a user and mount namespace of its own
//! ([`enter_private_mount_namespace`], at start-up), where it may mount tmpfs: the homes are
//! then visible to the server and its jails but not to the rest of the host, and vanish with
//! the server. Where neither is possible the home is bounded only per file (`RLIMIT_FSIZE`),
//! said once in the log. The tmpfs's pages count against memory, like the
//! jail's `/tmp` and `/dev/shm`, and are charged to whoever writes them (the jail's cgroup).
//!
//! A folder holding such a mount must be removed with [`remove_root`], which unmounts first:
//! `remove_dir_all` alone empties the tmpfs and then fails on the mount point.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::HostUser;
use crate::error::{Error, Result};

/// Whether this process is root (and so can mount home quotas and lease host uids).
pub fn running_as_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Set once this process owns a mount namespace it may mount in without being root.
static PRIVATE_MOUNTS: AtomicBool = AtomicBool::new(false);

/// Without root: moves this process into a new user namespace (its uid and gid mapped to
/// themselves, so files keep their owners) and a new mount namespace, so that
/// [`mount_quota`] can bound jail homes. Children get no capability from it: a program
/// started by a process whose uid is not 0 loses every capability at `exec`.
///
/// Call it first thing in `main`, while the process has a single thread (the kernel refuses
/// a new user namespace to a multi-threaded process). As root it does nothing.
pub fn enter_private_mount_namespace() -> std::io::Result<()> {
    if running_as_root() {
        return Ok(());
    }
    // SAFETY: plain system calls.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    // SAFETY: unshare(2) with namespace flags only.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    // Mounts made here must not travel back to the host's namespace.
    // SAFETY: a valid C string; no data argument.
    if unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    PRIVATE_MOUNTS.store(true, Ordering::Relaxed);
    Ok(())
}

/// Whether this process may mount home quotas (root, or a private mount namespace).
pub fn can_mount_quotas() -> bool {
    running_as_root() || PRIVATE_MOUNTS.load(Ordering::Relaxed)
}

/// Whether `dir` is the root of a mount (its device differs from its parent's).
pub fn is_mount_point(dir: &Path) -> bool {
    let (Ok(own), Some(Ok(parent))) = (
        std::fs::symlink_metadata(dir),
        dir.parent().map(std::fs::symlink_metadata),
    ) else {
        return false;
    };
    own.is_dir() && own.dev() != parent.dev()
}

/// Mounts a tmpfs of `bytes` on the existing directory `dir`, owned by `owner` with mode
/// 0700, `nosuid,nodev`, unless `dir` already is a mount point. Returns whether it mounted.
///
/// Where this process may not mount ([`can_mount_quotas`]) nothing is mounted (`Ok(false)`)
/// and a warning says, once per process, that homes are unbounded apart from the per-file
/// limit.
pub fn mount_quota(dir: &Path, bytes: u64, owner: HostUser) -> Result<bool> {
    if !can_mount_quotas() {
        static WARNED: Once = Once::new();
        WARNED.call_once(|| {
            tracing::warn!(
                "neither root nor a private mount namespace: jail homes have no size limit (only RLIMIT_FSIZE per file)"
            );
        });
        return Ok(false);
    }
    if is_mount_point(dir) {
        return Ok(false);
    }
    // About one inode per 4 KiB of space: a flood of empty files stays bounded too.
    let inodes = (bytes / 4096).max(4096);
    let options = format!(
        "size={bytes},nr_inodes={inodes},mode=0700,uid={},gid={}",
        owner.uid, owner.gid
    );
    let c = |text: &[u8]| CString::new(text).map_err(|e| Error::io("mount", dir, e.into()));
    let (target, options) = (c(dir.as_os_str().as_bytes())?, c(options.as_bytes())?);
    // SAFETY: valid C strings; mount(2) copies them.
    let mounted = unsafe {
        libc::mount(
            c"mcpgym-home".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    };
    if mounted != 0 {
        return Err(Error::io(
            "mount a tmpfs on",
            dir,
            std::io::Error::last_os_error(),
        ));
    }
    Ok(true)
}

/// Detaches every mount at or below `root` (deepest first). Returns how many it detached.
pub fn unmount_all_under(root: &Path) -> usize {
    let Ok(root) = root.canonicalize() else {
        return 0;
    };
    let mut points = mounts_under(&root);
    // Deepest first, so a mount is never hidden under one detached before it.
    points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    let mut detached = 0;
    for point in points {
        let Ok(path) = CString::new(point.as_os_str().as_bytes()) else {
            continue;
        };
        // SAFETY: a valid C string; MNT_DETACH never blocks on busy files.
        if unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) } == 0 {
            detached += 1;
        } else {
            let error = std::io::Error::last_os_error();
            tracing::warn!(mount = %point.display(), %error, "cannot unmount");
        }
    }
    detached
}

/// Removes a jail's (or an episode's) host folder: unmounts anything below it, then removes
/// it. A folder that does not exist is fine. Blocking (file system).
pub fn remove_root(root: &Path) -> std::io::Result<()> {
    unmount_all_under(root);
    match std::fs::remove_dir_all(root) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Mount points at or below `root` (canonical), from `/proc/self/mountinfo`.
fn mounts_under(root: &Path) -> Vec<PathBuf> {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    info.lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape(field)))
        .filter(|point| point.starts_with(root))
        .collect()
}

/// Undoes mountinfo's octal escapes (`\040` for a space, and so on).
fn unescape(field: &str) -> std::ffi::OsString {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|digits| {
            std::str::from_utf8(digits)
                .ok()
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    std::ffi::OsString::from(std::ffi::OsStr::from_bytes(&out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape(r"/tmp/a\040b"), "/tmp/a b");
        assert_eq!(unescape(r"/tmp/a\\b"), r"/tmp/a\\b");
        assert_eq!(unescape("/plain"), "/plain");
    }

    #[test]
    fn a_missing_root_is_removed_fine() {
        remove_root(Path::new("/nonexistent/mcpgym-root")).unwrap();
    }
}
