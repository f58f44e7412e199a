//! The one error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong while preparing, starting or cleaning up a jail.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory of the jail could not be prepared or cleaned up.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done, e.g. "create directory".
        action: &'static str,
        /// The host path concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// `bwrap` could not be started (not installed, not executable, or refused).
    #[error("could not start the jail with {bwrap}: {source}")]
    Spawn {
        /// The bubblewrap binary that was tried.
        bwrap: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// No host uid of the pool was free.
    #[error("all {count} host uids from {first} are in use")]
    NoFreeUid {
        /// First uid of the pool.
        first: u32,
        /// Size of the pool.
        count: u32,
    },
    /// The seccomp filter could not be built for this machine (an architecture it does not
    /// know): jails refuse to start rather than run without it.
    #[error("cannot build the jail's seccomp filter: {0}")]
    Seccomp(String),
    /// The jail asked for [`Limits::unlimited_address_space`](crate::Limits) with a memory
    /// limit, and no cgroup could enforce that limit here.
    #[error(
        "this program needs its memory bounded by a cgroup (it reserves more address space than RLIMIT_AS can allow), and cgroups are not usable here: run the server as root or in a cgroup with the memory controller delegated"
    )]
    MemoryUnbounded,
    /// A CPU quota was asked for ([`Limits::cpu_millicores`](crate::Limits)) and no cgroup
    /// with the CPU controller is usable here.
    #[error(
        "a CPU quota needs a cgroup with the cpu controller, and none is usable here: run the server as root or in a cgroup with the cpu controller delegated, or leave out --cpu-quota"
    )]
    CpuQuotaUnenforceable,
}

impl Error {
    /// An [`Error::Io`].
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
