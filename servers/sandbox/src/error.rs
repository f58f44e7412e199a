//! The one error type of this crate.

use std::path::PathBuf;
use std::time::Duration;

/// Everything that can go wrong while jailing or talking to a kernel.
///
/// Failures of the user's code are not errors: they come back as outputs of an
/// [`Execution`](crate::kernel::Execution).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory of the sandbox could not be prepared or cleaned up.
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
    /// The jail could not be prepared, started or cleaned up.
    #[error(transparent)]
    Jail(#[from] mcpgym_jail::Error),
    /// The kernel did not answer `kernel_info_request` in time.
    #[error("kernel not ready after {waited:?}; its log ends with: {log_tail}")]
    StartTimeout {
        /// How long we waited.
        waited: Duration,
        /// The last lines the kernel (or bwrap) wrote to its log.
        log_tail: String,
    },
    /// The jail exited while the kernel was starting.
    #[error("kernel exited during start-up ({status}); its log ends with: {log_tail}")]
    ExitedDuringStart {
        /// How the jail exited.
        status: String,
        /// The last lines the kernel (or bwrap) wrote to its log.
        log_tail: String,
    },
    /// A ZMQ or Jupyter-protocol failure.
    #[error("jupyter protocol: {0}")]
    Protocol(#[from] jupyter_zmq_client::RuntimeError),
    /// A channel to the kernel closed (its socket failed or the kernel is gone).
    #[error("the kernel's {0} channel closed")]
    ChannelClosed(&'static str),
    /// No kernel for this language is installed, or the service has none for it.
    #[error("cannot run {language}: {reason}")]
    LanguageUnavailable {
        /// The language asked for.
        language: crate::kernel::Language,
        /// Why, and what to install.
        reason: String,
    },
}

impl Error {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
