//! envd's raw file transfer: `GET /files?path=` reads a file, `POST /files?path=` writes one.

use serde::{Deserialize, Serialize};

/// The path and query of `/files` for `path`, percent-encoded (slashes kept).
pub fn files_url(path: &str) -> String {
    format!("{}?path={}", crate::paths::FILES, encode_query(path))
}

/// Percent-encodes a query value, keeping unreserved characters and `/`.
pub fn encode_query(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// One file a write stored; `POST /files` answers a list of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrittenFile {
    /// Its path inside the sandbox.
    pub path: String,
    /// Its name.
    pub name: String,
    /// `file`.
    #[serde(rename = "type")]
    pub kind: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_encoded() {
        assert_eq!(encode_query("/home/user/a b"), "/home/user/a%20b");
        assert_eq!(files_url("/x/é&y"), "/files?path=/x/%C3%A9%26y");
        let written = WrittenFile {
            path: "/home/user/a".into(),
            name: "a".into(),
            kind: "file".into(),
        };
        assert_eq!(
            serde_json::to_string(&written).unwrap(),
            r#"{"path":"/home/user/a","name":"a","type":"file"}"#
        );
    }
}
