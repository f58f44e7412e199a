//! Host uids for jails.
//!
//! Why a uid per sandbox: when the service runs as root, jailed code would otherwise run as
//! host root inside its user namespace, and the kernel exempts root from `RLIMIT_NPROC`. With
//! one shared unprivileged uid, every sandbox would share a single process budget, so one fork
//! bomb would starve the others. A lease is an exclusive `flock` on a file named after the uid,
//! which also keeps several service processes on one host from handing out the same uid.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;

use crate::error::{Error, Result};

/// A host user and group that `bwrap` is started as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostUser {
    /// Host uid.
    pub uid: u32,
    /// Host gid.
    pub gid: u32,
}

/// A range of otherwise unused host uids (gid = uid), leased one per sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UidPool {
    /// First uid of the range.
    pub first: u32,
    /// Number of uids in the range: the most sandboxes that can run at once.
    pub count: u32,
    /// Where the lock files live; must be on a local file system shared by all service
    /// processes of the host.
    pub lock_dir: PathBuf,
}

impl Default for UidPool {
    /// 65 536 uids from 1 900 000 000: far above login users and the usual `/etc/subuid`
    /// ranges, below the 32-bit ids the kernel reserves.
    fn default() -> Self {
        UidPool {
            first: 1_900_000_000,
            count: 65_536,
            lock_dir: std::env::temp_dir().join("mcpgym-sandbox-uids"),
        }
    }
}

impl UidPool {
    /// Takes a free uid. Blocking (file system): call from a blocking context.
    pub fn lease(&self) -> Result<UidLease> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.lock_dir)
            .map_err(|e| Error::io("create directory", &self.lock_dir, e))?;
        // Start at a place that depends on the process, so concurrent services rarely probe
        // the same uids.
        let start = std::process::id().wrapping_mul(7919) % self.count.max(1);
        for i in 0..self.count {
            let uid = self.first + (start + i) % self.count;
            let path = self.lock_dir.join(uid.to_string());
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(&path)
                .map_err(|e| Error::io("open lock file", &path, e))?;
            // SAFETY: plain system call on a descriptor we own.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(UidLease {
                    user: HostUser { uid, gid: uid },
                    _lock: file,
                });
            }
        }
        Err(Error::NoFreeUid {
            first: self.first,
            count: self.count,
        })
    }
}

/// A uid held for one sandbox until dropped.
#[derive(Debug)]
pub struct UidLease {
    user: HostUser,
    // Closing the descriptor releases the flock.
    _lock: File,
}

impl UidLease {
    /// The leased user.
    pub fn user(&self) -> HostUser {
        self.user
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_are_exclusive_and_released_on_drop() {
        let pool = UidPool {
            first: 1_000_000,
            count: 2,
            lock_dir: std::env::temp_dir()
                .join(format!("mcpgym-uid-test-{}", uuid::Uuid::new_v4())),
        };
        let a = pool.lease().unwrap();
        let b = pool.lease().unwrap();
        assert_ne!(a.user(), b.user());
        assert!(matches!(pool.lease(), Err(Error::NoFreeUid { .. })));
        let freed = a.user();
        drop(a);
        assert_eq!(pool.lease().unwrap().user(), freed);
        std::fs::remove_dir_all(&pool.lock_dir).unwrap();
    }
}
