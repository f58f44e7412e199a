//! The lowest layer of the mcpgym sandbox service: Jupyter kernels (Python, JavaScript and
//! TypeScript, R, Bash) in bubblewrap jails, spoken to from Rust over ZMQ (pure Rust, no libzmq).
//!
//! - [`jail`]: one sandbox's jail: no network, read-only system, private `/home/user` and
//!   `/tmp`, own PID namespace, uid 1000, rlimits and (where writable) cgroups.
//! - [`kernel`]: a kernel in such a jail: start, [`Kernel::execute`] with a timeout
//!   (interrupt, then kill and restart), interrupt, restart, shutdown; [`Language`] says which.
//! - [`service`]: the E2B-compatible HTTP service over them (control plane, code
//!   interpreter, envd subset) with a warm pool and server-side deadlines.
//! - [`runtime`]: the Python prefix every jail runs on, bound read-only (a venv of its own,
//!   or Debian's `/usr`).
//!
//! The system needs `bwrap` and a Python with `ipykernel`: a [`Runtime`], or Debian's under
//! `/usr` (`bubblewrap`, `python3-ipykernel`; `python3-matplotlib` for plots).

#![warn(missing_docs)]

pub mod error;
pub mod kernel;
pub mod runtime;
pub mod service;

/// The jail every sandbox process runs in (the `mcpgym-jail` crate, shared with the desktop).
pub use mcpgym_jail as jail;

pub use error::{Error, Result};
pub use jail::{Jail, JailConfig, Limits};
pub use kernel::{
    Event, Execution, ExecutionStatus, Kernel, KernelConfig, KernelKind, Language, Output,
    StreamName,
};
pub use runtime::{Runtime, RuntimeError};
