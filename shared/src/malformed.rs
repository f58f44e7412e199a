//! MCP request bodies that are not JSON-RPC. rmcp answers them `415` with plain text; a
//! JSON-RPC client expects `400` with an error object it can parse: `-32700` (parse error) for
//! a body that is not JSON, `-32600` (invalid request) for JSON that is no JSON-RPC message.

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::de::IgnoredAny;
use serde_json::json;

use crate::http::MCP_BODY_LIMIT;

/// JSON-RPC's code for a body that is not JSON.
pub const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's code for JSON that is not a valid request.
pub const INVALID_REQUEST: i32 = -32600;

/// Whether a request's headers say it carries JSON (as rmcp checks it: the essence, in any
/// case).
pub(crate) fn says_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}

/// A JSON-RPC error response with a null id (the request's id could not be read).
pub fn json_rpc_error(code: i32, message: impl Into<String>) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": code, "message": message.into() },
        })),
    )
        .into_response()
}

/// Turns rmcp's `415` for an unreadable JSON body into a JSON-RPC error; everything else
/// passes untouched.
pub async fn json_rpc_errors(request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !says_json(request.headers()) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes: Bytes = match axum::body::to_bytes(body, MCP_BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "Payload Too Large: an MCP request body may hold at most {MCP_BODY_LIMIT} bytes"
                ),
            )
                .into_response();
        }
    };
    // A clone of `Bytes` shares the buffer: no copy on the common path.
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes.clone())))
        .await;
    // The content type was JSON, so a 415 from rmcp means the body did not deserialize.
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    match serde_json::from_slice::<IgnoredAny>(&bytes) {
        Err(error) => json_rpc_error(
            PARSE_ERROR,
            format!("Parse error: the request body is not valid JSON ({error})"),
        ),
        Ok(_) => json_rpc_error(
            INVALID_REQUEST,
            "Invalid Request: the body is JSON but not a JSON-RPC 2.0 message (send {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ..., \"params\": ...})",
        ),
    }
}
