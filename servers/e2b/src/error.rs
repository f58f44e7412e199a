//! The error body of the control plane and the code interpreter (envd's Connect calls use
//! [`ConnectErrorBody`](crate::connect::ConnectErrorBody) instead).

use serde::{Deserialize, Serialize};

/// `{"code": <HTTP status>, "message": "..."}`, as E2B answers errors.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The HTTP status.
    pub code: u16,
    /// What was wrong and what to do.
    pub message: String,
}

/// The `message` of an error body, whatever its `code` (a status number, or a Connect code
/// string); `None` when the body is not a JSON object with a string `message`.
pub fn error_message(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Message {
        message: String,
    }
    serde_json::from_slice::<Message>(body)
        .ok()
        .map(|m| m.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_read_from_either_error_shape() {
        let body = serde_json::to_vec(&ErrorBody {
            code: 404,
            message: "gone".into(),
        })
        .unwrap();
        assert_eq!(body, br#"{"code":404,"message":"gone"}"#);
        assert_eq!(error_message(&body).as_deref(), Some("gone"));
        assert_eq!(
            error_message(br#"{"code":"not_found","message":"m"}"#).as_deref(),
            Some("m")
        );
        for bad in [&b"not json"[..], b"{}", br#"{"message": 3}"#, b"[]", b""] {
            assert_eq!(error_message(bad), None);
        }
    }
}
