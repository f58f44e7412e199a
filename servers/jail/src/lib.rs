//! The one jail of mcpgym, for everything an agent controls: sandbox kernels and shell
//! commands, desktop applications and commands.
//!
//! A jail is a bubblewrap sandbox with new user, PID, IPC, UTS, cgroup and (unless allowed)
//! network namespaces; when the server runs as root, a host uid of its own leased from a
//! [`UidPool`] (so nothing inside is host root, and process limits are per jail); every
//! capability dropped, no-new-privileges, and a [seccomp filter](seccomp) denying the system
//! calls that change mounts or namespaces or reach other processes; rlimits, and cgroup
//! limits on memory and tasks where the hierarchy is writable. Its file system is built from
//! nothing: the host's `/usr` (and the few `/etc` files its programs read) read-only, never
//! `/` wholesale, with the server's executable and [sensitive](SENSITIVE) host files masked;
//! a private writable home and `/run/sandbox` backed by host directories under the jail's
//! [root](JailConfig::root); size-limited private `/tmp` and `/dev/shm`; the rest of `/dev`
//! and the root read-only; a cleared environment. The home is a size-limited tmpfs
//! ([`mount_quota`]) when the server runs as root, or as an ordinary user that entered a
//! mount namespace of its own at start-up ([`enter_private_mount_namespace`]); otherwise it
//! is bounded only per file (`RLIMIT_FSIZE`). The jail dies with the process that started it (`--die-with-parent` on
//! bwrap's side, kill-on-drop on ours) and is its own session, so it never sees the server's
//! terminal.
//!
//! Host layout of a jail root:
//!
//! | host | inside | |
//! |---|---|---|
//! | `root/home` | `/home/user` | the user's files; kept across kernel restarts |
//! | `root/run` | `/run/sandbox` | the service's private exchange with the jail (kernel sockets) |
//! | `root/etc/{passwd,group}` | `/etc/{passwd,group}` | read-only; name the user `user` |
//! | `root/mask/{file,dir}` | over masked paths | empty, read-only |
//! | `root/jail.log` | — | stdout and stderr of everything in the jail |
//!
//! Not done here: Landlock (bwrap 0.8 cannot apply it after building its mounts, and a
//! Landlock domain applied before bwrap forbids those mounts; the jail's file system is
//! already only what is bound), and a CPU share (only `RLIMIT_CPU` per process).

#![warn(missing_docs)]

mod cgroup;
mod config;
mod error;
mod limits;
mod mask;
mod process;
mod quota;
pub mod seccomp;
mod stale;
mod uid;

pub use config::{Bind, JailConfig};
pub use error::{Error, Result};
pub use limits::Limits;
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
