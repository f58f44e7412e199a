//! The one jail of mcpgym, for everything an agent controls: sandbox kernels and shell
//! commands, desktop applications and commands.
//!
//! A jail is a bubblewrap sandbox with new user, PID, IPC, UTS, cgroup and (unless allowed)
//! network namespaces. Its host identity: when the server runs as root, a host uid of its
//! own leased from a [`UidPool`] (so nothing inside is host root, and per-uid limits are per
//! jail); as an ordinary user, a user namespace of its own made before bwrap's, so that
//! process and inotify counts are per jail too (see [`Limits`]). Every capability dropped,
//! no-new-privileges, and a [seccomp filter](seccomp) allowing sockets by family and denying
//! the system calls that change mounts or namespaces, reach other processes or the kernel's
//! rarer interfaces; rlimits, and cgroup limits on memory, tasks and CPU (one weight per
//! jail, an optional quota) where the hierarchy is writable. Its file system is built from
//! nothing: the host's `/usr` (and the few `/etc` files its programs read) read-only, never
//! `/` wholesale, with the server's executable and [sensitive](SENSITIVE) host files masked;
//! a private writable home and `/run/sandbox` backed by host directories under the jail's
//! [root](JailConfig::root); size-limited private `/tmp`, `/root` and `/dev/shm`; the rest of
//! `/dev` and the root read-only; a cleared environment. The home and the run folder are
//! size-limited tmpfs ([`mount_quota`]) when the server runs as root, or as an ordinary user
//! that entered a mount namespace of its own at start-up ([`enter_private_mount_namespace`]);
//! otherwise they are bounded only per file (`RLIMIT_FSIZE`). bwrap gets its arguments, the
//! filter and the jail's `/etc/passwd` and `/etc/group` through memory files, so neither PID
//! 1's command line nor the mount table inside shows the jail's host folder. The jail dies
//! with the process that started it (`--die-with-parent` on bwrap's side, kill-on-drop on
//! ours) and is its own session, so it never sees the server's terminal.
//!
//! Host layout of a jail root:
//!
//! | host | inside | |
//! |---|---|---|
//! | `root/home` | `/home/user` | the user's files; kept across kernel restarts |
//! | `root/run` | `/run/sandbox` | the service's private exchange with the jail (kernel sockets); a [`RUN_BYTES`] tmpfs |
//! | `root/jail.log` | — | stdout and stderr of everything in the jail, its last [`LOG_BYTES`] |
//!
//! Not done here: Landlock (bwrap 0.8 cannot apply it after building its mounts, and a
//! Landlock domain applied before bwrap forbids those mounts; the jail's file system is
//! already only what is bound).

#![warn(missing_docs)]

mod cgroup;
mod config;
mod error;
mod limits;
mod log;
mod mask;
mod memfd;
mod process;
mod quota;
pub mod seccomp;
mod stale;
mod uid;

pub use cgroup::{parents as cgroup_parents, use_delegated_cgroup};
pub use config::{Bind, JailConfig, RUN_BYTES};
pub use error::{Error, Result};
pub use limits::Limits;
pub use log::LOG_BYTES;
pub use mask::{SENSITIVE, own_executable};
pub use process::{Jail, Output};
pub use quota::{
    can_mount_quotas, enter_private_mount_namespace, is_mount_point, mount_quota, remove_root,
    running_as_root, unmount_all_under,
};
pub use stale::{Cleanup, cleanup_stale};
pub use uid::{HostUser, UidLease, UidPool};

/// The user's home inside the jail.
pub const HOME: &str = "/home/user";

/// The host name inside every jail.
pub const HOSTNAME: &str = "sandbox";
/// The service's private directory inside the jail (connection file and sockets).
pub const RUN: &str = "/run/sandbox";
/// uid and gid of the user inside the jail.
pub const INSIDE_ID: u32 = 1000;
