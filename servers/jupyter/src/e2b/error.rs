//! Why a sandbox operation failed.

use std::time::Duration;

/// Why a sandbox operation failed.
#[derive(Debug, thiserror::Error)]
pub enum E2bError {
    /// The URL is not an `http://` or `https://` URL.
    #[error("invalid sandbox URL {0:?}: give it as http://HOST:PORT or https://HOST")]
    InvalidUrl(String),
    /// TLS could not be set up (no CA certificates found).
    #[error("cannot set up TLS for {url}: {message}")]
    TlsSetup {
        /// The `https` URL that needs TLS.
        url: String,
        /// Why.
        message: String,
    },
    /// The TLS handshake failed (a server not speaking TLS, an untrusted or mismatched
    /// certificate).
    #[error("TLS handshake with {url} failed: {message}")]
    Tls {
        /// The request's URL.
        url: String,
        /// rustls' reason.
        message: String,
    },
    /// The request could not be sent or its response read.
    #[error("sandbox request to {url} failed: {message}")]
    Http {
        /// The request's URL.
        url: String,
        /// The error and its causes.
        message: String,
    },
    /// The service answered with an error status.
    #[error("the sandbox service answered {status}: {message}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The service's message (or body).
        message: String,
    },
    /// The response was not what the protocol says.
    #[error("unexpected response from the sandbox service: {0}")]
    Protocol(String),
    /// The operation did not finish in time.
    #[error("the sandbox did not answer within {0:?}")]
    Timeout(Duration),
    /// No sandbox service of a pool took the sandbox: each one's reason.
    #[error("no sandbox service could take a sandbox: {0}")]
    NoHost(String),
}

impl E2bError {
    /// Whether the request failed in transport (no connection, a connection cut, a failed
    /// handshake) rather than with an answer: the service may be gone.
    pub fn is_transport(&self) -> bool {
        matches!(self, E2bError::Http { .. } | E2bError::Tls { .. })
    }
}
