//! A client for E2B's HTTP protocol: the control plane (create, kill, set timeout), the code
//! interpreter (`/execute` streaming JSON lines, `/contexts`) and the envd subset (`/files`,
//! `process.Process/Start` as Connect JSON streaming, `process.Process/{List,SendSignal}`).
//!
//! The bodies, lines, events and frames are those of [`mcpgym_e2b`], the wire types the
//! sandbox service serves with; this module sends and reads them.
//!
//! The same client reaches the local sandbox service, a remote `mcpgym sandbox`, or E2B's
//! cloud; only [`E2bConfig`] differs:
//!
//! - **one URL** ([`E2bConfig::single_url`]): control plane and data plane on one base URL; the
//!   data plane names the sandbox and port in the `E2b-Sandbox-Id` and `E2b-Sandbox-Port`
//!   headers (what the SDKs do with `E2B_SANDBOX_URL`).
//! - **E2B's cloud** ([`E2bConfig::cloud`]): control plane at `https://api.e2b.app` with
//!   `X-API-Key`, data plane at `https://<port>-<sandboxID>.<domain>`.
//!
//! The modules: `transport` (HTTP/1.1 over hyper, TLS with rustls), `control` (the
//! client, create, kill, timeouts), `interpreter` (cells and contexts), `process`
//! (commands), `files` (file transfer).

mod config;
mod control;
mod error;
mod files;
mod interpreter;
mod process;
mod transport;

pub use config::E2bConfig;
pub use control::{E2bClient, Sandbox};
pub use error::E2bError;
pub use interpreter::{ContextInfo, Execution, TIMEOUT_SLACK};
pub use mcpgym_e2b::{E2B_CLOUD_API, E2B_CLOUD_DOMAIN, ENVD_PORT, INTERPRETER_PORT};
pub use process::CommandOutput;

/// The longest line or Connect frame read from a sandbox service; a longer one is skipped
/// unread (and said so) rather than buffered.
const MAX_MESSAGE_BYTES: usize = 16 << 20;
