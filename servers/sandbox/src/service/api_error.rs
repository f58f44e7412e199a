//! The JSON errors of the service and the body parsing that produces them.
//!
//! Control plane and code interpreter answer `{"code": <HTTP status>, "message": "..."}` as
//! E2B does; the Connect-RPC routes of envd use Connect's own error shape (see
//! [`super::envd`]).

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mcpgym_e2b::ErrorBody;
use serde::de::DeserializeOwned;

/// An HTTP error with a sentence that says what was wrong and what to do.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    pub(crate) fn unknown_sandbox(id: &str) -> Self {
        Self::not_found(format!(
            "sandbox {id:?} not found: it was killed or its timeout passed; create a new one with POST /sandboxes"
        ))
    }

    /// A request body that could not be read (too large, or broken off).
    pub(crate) fn from_body(rejection: BytesRejection) -> Self {
        let status = rejection.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "the request body is too large for this route; send less data (large files go to POST /files)".to_owned()
        } else {
            format!("cannot read the request body: {}", rejection.body_text())
        };
        Self::new(status, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(ErrorBody {
                code: self.status.as_u16(),
                message: self.message,
            }),
        )
            .into_response()
    }
}

/// Parses a JSON body; an empty body counts as `{}` (clients send no body for defaults).
pub(crate) fn parse_json<T: DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
) -> Result<T, ApiError> {
    let body = body.map_err(ApiError::from_body)?;
    let text: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &body
    };
    serde_json::from_slice(text).map_err(|error| {
        ApiError::bad_request(format!(
            "the request body is not valid JSON for this route ({error}); send a JSON object as described by the E2B API"
        ))
    })
}
