//! The envd subset (port 49983): files over plain HTTP, and the Connect-RPC `process` (Start,
//! List, SendSignal) and `filesystem` services with JSON messages.
//!
//! Only `/home/user` of a sandbox is reachable from the host side: each jail's `/tmp` is its
//! own private tmpfs, so there is no single `/tmp` to read or write from outside.

pub(crate) mod beneath;
pub(crate) mod files;
pub(crate) mod filesystem;
pub(crate) mod paths;
pub(crate) mod process;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mcpgym_e2b::connect::{ConnectErrorBody, code_for_status};

use super::api_error::ApiError;

/// A Connect-RPC error: `{"code": "<connect code>", "message": "..."}` with the matching HTTP
/// status, as Connect clients expect from a unary call.
#[derive(Debug)]
pub(crate) struct ConnectError(pub(crate) ApiError);

impl ConnectError {
    pub(crate) fn code(&self) -> &'static str {
        connect_code(self.0.status)
    }
}

/// Connect's code for an HTTP status.
pub(crate) fn connect_code(status: StatusCode) -> &'static str {
    code_for_status(status.as_u16())
}

impl From<ApiError> for ConnectError {
    fn from(error: ApiError) -> Self {
        ConnectError(error)
    }
}

impl IntoResponse for ConnectError {
    fn into_response(self) -> Response {
        let code = self.code();
        (
            self.0.status,
            Json(ConnectErrorBody {
                code: code.to_owned(),
                message: self.0.message,
            }),
        )
            .into_response()
    }
}

/// `GET /health` of envd.
pub(crate) async fn health() -> Response {
    StatusCode::NO_CONTENT.into_response()
}
