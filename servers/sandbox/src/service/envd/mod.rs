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
use serde_json::json;

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

pub(crate) fn connect_code(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => "invalid_argument",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::CONFLICT => "already_exists",
        StatusCode::FORBIDDEN => "permission_denied",
        StatusCode::PAYLOAD_TOO_LARGE | StatusCode::TOO_MANY_REQUESTS => "resource_exhausted",
        StatusCode::UNAUTHORIZED => "unauthenticated",
        _ => "internal",
    }
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
            Json(json!({ "code": code, "message": self.0.message })),
        )
            .into_response()
    }
}

/// `GET /health` of envd.
pub(crate) async fn health() -> Response {
    StatusCode::NO_CONTENT.into_response()
}
