//! The E2B wire protocol as mcpgym speaks it, in one place for both sides: the Jupyter
//! environment's client and the `mcpgym sandbox` service.
//!
//! Only types and pure functions on bytes live here, no HTTP stack: each side sends and
//! receives them with its own (hyper on the client, axum in the service).
//!
//! - [`control`]: the control plane's bodies (create, timeout, refresh, detail, health);
//! - [`interpreter`]: the code interpreter's `/execute` request, the JSON lines it streams
//!   back, and kernel contexts;
//! - [`process`]: envd's `process.Process` Connect messages (start, events, list, signal);
//! - [`connect`]: Connect's envelope framing (encode, decode, a streaming reader) and its
//!   error shape;
//! - [`lines`]: a streaming splitter for JSON-lines bodies;
//! - [`files`]: the `/files` query;
//! - [`routing`]: how a data-plane request names its sandbox (headers, or a per-port host);
//! - [`error`]: the `{"code", "message"}` error body of the control plane and interpreter;
//! - [`cut`]: the `[... N characters cut ...]` marker the service writes into cut output and
//!   the client counts when it cuts again.
//!
//! Bodies deserialize leniently (what E2B's cloud or an older service may leave out takes a
//! default) and serialize exactly what the service sends: an optional field the service
//! omits is skipped, one it sends as `null` is kept.

#![warn(missing_docs)]

pub mod connect;
pub mod control;
pub mod cut;
pub mod error;
pub mod files;
pub mod interpreter;
pub mod lines;
pub mod process;
pub mod routing;

pub use connect::FrameError;
pub use error::ErrorBody;

/// The code interpreter's port inside a sandbox.
pub const INTERPRETER_PORT: u16 = 49999;
/// envd's port inside a sandbox.
pub const ENVD_PORT: u16 = 49983;
/// The template a sandbox is created from when a create names none.
pub const DEFAULT_TEMPLATE: &str = "code-interpreter-v1";
/// E2B's cloud control plane.
pub const E2B_CLOUD_API: &str = "https://api.e2b.app";
/// E2B's cloud sandbox domain, when a create response names none.
pub const E2B_CLOUD_DOMAIN: &str = "e2b.app";

/// Request headers of the protocol, lowercase (as HTTP/1.1 libraries compare them).
pub mod headers {
    /// The control plane's key (E2B's API key, or the service's token).
    pub const API_KEY: &str = "x-api-key";
    /// A sandbox's own access token (`envdAccessToken`), accepted on its data plane.
    pub const ACCESS_TOKEN: &str = "x-access-token";
    /// The sandbox a data-plane request is for, when one URL serves every sandbox.
    pub const SANDBOX_ID: &str = "e2b-sandbox-id";
    /// The port of that sandbox ([`INTERPRETER_PORT`](crate::INTERPRETER_PORT) or
    /// [`ENVD_PORT`](crate::ENVD_PORT)).
    pub const SANDBOX_PORT: &str = "e2b-sandbox-port";
    /// Connect's protocol version header; its value is
    /// [`CONNECT_PROTOCOL_VERSION`](crate::connect::PROTOCOL_VERSION).
    pub const CONNECT_PROTOCOL_VERSION: &str = "connect-protocol-version";
}

/// Request paths of the protocol (those with a sandbox id in them are built by the caller).
pub mod paths {
    /// The control plane's sandboxes: `POST` creates, `GET` lists.
    pub const SANDBOXES: &str = "/sandboxes";
    /// The code interpreter's `POST /execute`.
    pub const EXECUTE: &str = "/execute";
    /// The code interpreter's contexts: `POST` creates, `GET` lists.
    pub const CONTEXTS: &str = "/contexts";
    /// envd's raw file transfer (`GET` reads, `POST` writes), with `?path=`.
    pub const FILES: &str = "/files";
    /// envd's `process.Process/Start` (server-streaming Connect call).
    pub const PROCESS_START: &str = "/process.Process/Start";
    /// envd's `process.Process/List` (unary Connect call).
    pub const PROCESS_LIST: &str = "/process.Process/List";
    /// envd's `process.Process/SendSignal` (unary Connect call).
    pub const PROCESS_SEND_SIGNAL: &str = "/process.Process/SendSignal";
}
