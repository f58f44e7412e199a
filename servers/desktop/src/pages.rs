//! The episode's page server: a task's local web pages, served to the browser in the jail,
//! and the record of what the browser sent back (what web graders read).
//!
//! The server runs in this process, outside the jail, on a Unix socket in the episode's
//! folder; the browser's jail sees the socket and relays `127.0.0.1:8000` to it. The record
//! lives only in this process, so nothing the agent controls can write it.

use std::collections::BTreeMap;

use serde::Serialize;

/// The port the pages are served on inside the browser's jail.
pub const PAGE_PORT: u16 = 8000;

/// One request the page server received.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PageRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The path with its leading `/`, without the query.
    pub path: String,
    /// The query string's fields and a form body's fields together (a later value of the
    /// same name wins).
    pub fields: BTreeMap<String, String>,
}

/// Checks a page's path: relative (no leading `/`), plain segments of letters, digits, `-`,
/// `_` and `.`, no `..`, at most 200 bytes.
pub fn validate_page_path(path: &str) -> Result<(), String> {
    let plain = |segment: &str| {
        !segment.is_empty()
            && segment != "."
            && segment != ".."
            && segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    if path.is_empty() || path.len() > 200 || !path.split('/').all(plain) {
        return Err(format!(
            "{path:?} must be a relative URL path of plain names (letters, digits, - _ .), such as \"index.html\" or \"files/report.csv\""
        ));
    }
    Ok(())
}

/// A running page server.
#[derive(Debug)]
pub struct PageServer {
    socket: std::path::PathBuf,
    log: std::sync::Arc<std::sync::Mutex<Vec<PageRequest>>>,
}

impl PageServer {
    /// Serves `pages` on a new Unix socket at `socket` (owned by `user` when given).
    pub async fn start(
        socket: &std::path::Path,
        pages: &[crate::tasks::Page],
        user: Option<mcpgym_jail::HostUser>,
    ) -> std::io::Result<Self> {
        let _ = (pages, user);
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            format!("no page server yet ({})", socket.display()),
        ))
    }

    /// The socket's path on the host.
    pub fn socket(&self) -> &std::path::Path {
        &self.socket
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<PageRequest> {
        self.log.lock().map(|log| log.clone()).unwrap_or_default()
    }

    /// Stops serving and removes the socket.
    pub async fn stop(self) {
        let _ = tokio::fs::remove_file(&self.socket).await;
    }
}
