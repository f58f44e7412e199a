//! The episode's page server: a task's local web pages, served to the browser in the jail,
//! and the record of what the browser sent back (what web graders read).
//!
//! The server runs in this process, outside the jail, on a Unix socket in the episode's
//! folder; the browser's jail sees the socket and relays `127.0.0.1:8000` to it. The record
//! lives only in this process, so nothing the agent controls can write it.

use std::collections::{BTreeMap, VecDeque};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// The port the pages are served on inside the browser's jail.
pub const PAGE_PORT: u16 = 8000;

/// One request the page server received.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// The largest request body the server reads; a larger one is refused with 413.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// How many requests the record keeps; past that the oldest are dropped.
pub const MAX_LOGGED: usize = 1000;

/// Pages under this folder are served as downloads (`Content-Disposition: attachment`), so
/// a link to one saves a file instead of showing it.
pub const DOWNLOAD_FOLDER: &str = "files/";

/// The `Content-Type` of a page: its own, else from its path's extension.
pub fn content_type(page: &crate::tasks::Page) -> String {
    if let Some(explicit) = &page.content_type {
        return explicit.clone();
    }
    let extension = page
        .path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("csv") => "text/csv; charset=utf-8",
        Some("txt") => "text/plain; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    }
    .to_owned()
}

/// One page ready to answer: its headers and body.
#[derive(Debug)]
struct Served {
    content_type: String,
    attachment: Option<String>,
    body: axum::body::Bytes,
}

/// What every request handler shares.
#[derive(Debug)]
struct Shared {
    pages: BTreeMap<String, Served>,
    log: Arc<Mutex<VecDeque<PageRequest>>>,
}

/// A running page server.
#[derive(Debug)]
pub struct PageServer {
    socket: PathBuf,
    log: Arc<Mutex<VecDeque<PageRequest>>>,
    task: tokio::task::JoinHandle<()>,
}

impl PageServer {
    /// Serves `pages` on a new Unix socket at `socket` (owned by `user` when given, so the
    /// jail's user can connect). `/` serves `index.html`; a page under [`DOWNLOAD_FOLDER`] is
    /// sent as an attachment; every request is recorded, answered or not.
    pub async fn start(
        socket: &Path,
        pages: &[crate::tasks::Page],
        user: Option<mcpgym_jail::HostUser>,
    ) -> std::io::Result<Self> {
        let mut served = BTreeMap::new();
        for page in pages {
            validate_page_path(&page.path).map_err(std::io::Error::other)?;
            let attachment = page
                .path
                .strip_prefix(DOWNLOAD_FOLDER)
                .map(|rest| rest.rsplit('/').next().unwrap_or(rest).to_owned());
            served.insert(
                format!("/{}", page.path),
                Served {
                    content_type: content_type(page),
                    attachment,
                    body: axum::body::Bytes::from(page.body.clone()),
                },
            );
        }
        // A socket left by a crashed run would make the bind fail.
        match tokio::fs::remove_file(socket).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let listener = tokio::net::UnixListener::bind(socket)?;
        // Only the jail's user (or this process's own) may connect.
        tokio::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600)).await?;
        if let Some(user) = user {
            std::os::unix::fs::chown(socket, Some(user.uid), Some(user.gid))?;
        }
        let log = Arc::new(Mutex::new(VecDeque::new()));
        let shared = Arc::new(Shared {
            pages: served,
            log: Arc::clone(&log),
        });
        let app = axum::Router::new().fallback(answer).with_state(shared);
        let task = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::warn!(%error, "the page server stopped");
            }
        });
        Ok(Self {
            socket: socket.to_owned(),
            log,
            task,
        })
    }

    /// The socket's path on the host.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<PageRequest> {
        self.log
            .lock()
            .map(|log| log.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Stops serving and removes the socket.
    pub async fn stop(self) {
        self.task.abort();
        let _ = tokio::fs::remove_file(&self.socket).await;
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Records a request, then answers it with its page (or 404, or 413 for a body too large).
async fn answer(
    axum::extract::State(shared): axum::extract::State<Arc<Shared>>,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;

    let (parts, body) = request.into_parts();
    let mut record = PageRequest {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        fields: BTreeMap::new(),
    };
    if let Some(query) = parts.uri.query() {
        add_fields(&mut record.fields, query.as_bytes());
    }
    let too_large = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => {
            let form = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| {
                    v.to_ascii_lowercase()
                        .starts_with("application/x-www-form-urlencoded")
                });
            if form {
                add_fields(&mut record.fields, &bytes);
            }
            false
        }
        Err(_) => true,
    };
    let path = if record.path == "/" {
        "/index.html".to_owned()
    } else {
        record.path.clone()
    };
    if let Ok(mut log) = shared.log.lock() {
        if log.len() >= MAX_LOGGED {
            log.pop_front();
        }
        log.push_back(record);
    }
    if too_large {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Request bodies are limited to {MAX_BODY_BYTES} bytes.\n"),
        )
            .into_response();
    }
    let Some(page) = shared.pages.get(&path) else {
        return (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            "<!doctype html><title>Not found</title><h1>Not found</h1>\n",
        )
            .into_response();
    };
    let mut response = (
        [
            (header::CONTENT_TYPE, page.content_type.clone()),
            (header::CACHE_CONTROL, "no-store".to_owned()),
        ],
        page.body.clone(),
    )
        .into_response();
    if let Some(name) = &page.attachment
        && let Ok(value) = format!("attachment; filename=\"{name}\"").parse()
    {
        response
            .headers_mut()
            .insert(header::CONTENT_DISPOSITION, value);
    }
    response
}

/// Adds the fields of an `application/x-www-form-urlencoded` text (a later value of a name
/// wins); text that does not decode adds nothing.
fn add_fields(fields: &mut BTreeMap<String, String>, encoded: &[u8]) {
    if let Ok(pairs) = serde_urlencoded::from_bytes::<Vec<(String, String)>>(encoded) {
        fields.extend(pairs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::Page;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Sends one raw HTTP/1.1 request over the socket; the status line and the whole
    /// response.
    async fn send(socket: &Path, request: String) -> String {
        let mut stream = tokio::net::UnixStream::connect(socket).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.unwrap();
        String::from_utf8_lossy(&response).into_owned()
    }

    fn get(path: &str) -> String {
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    }

    fn post(path: &str, body: &str) -> String {
        format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    fn page(path: &str, body: &str) -> Page {
        Page {
            path: path.into(),
            body: body.into(),
            content_type: None,
        }
    }

    #[tokio::test]
    async fn serves_pages_and_records_what_the_browser_sends() {
        let dir = std::env::temp_dir().join(format!("mcpgym-pages-test.{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("page.sock");
        let pages = [
            page("index.html", "<h1>Home</h1>"),
            page("data/list.csv", "a,b\n"),
            page("files/report.txt", "the report\n"),
        ];
        let server = PageServer::start(&socket, &pages, None).await.unwrap();

        let home = send(&socket, get("/")).await;
        assert!(home.starts_with("HTTP/1.1 200"), "{home}");
        assert!(
            home.to_ascii_lowercase()
                .contains("content-type: text/html; charset=utf-8")
        );
        assert!(home.ends_with("<h1>Home</h1>"), "{home}");
        let csv = send(&socket, get("/data/list.csv?x=1")).await;
        assert!(
            csv.to_ascii_lowercase().contains("content-type: text/csv"),
            "{csv}"
        );
        assert!(
            !csv.to_ascii_lowercase().contains("content-disposition"),
            "{csv}"
        );
        let download = send(&socket, get("/files/report.txt")).await;
        assert!(
            download
                .to_ascii_lowercase()
                .contains("content-disposition: attachment; filename=\"report.txt\""),
            "{download}"
        );
        let missing = send(&socket, get("/nope.html")).await;
        assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");

        let search = send(&socket, get("/search?q=red+shoes&size=42&q2=%C3%A9")).await;
        assert!(search.starts_with("HTTP/1.1 404"), "{search}");
        let posted = send(
            &socket,
            post(
                "/submit?from=form",
                "name=Ada+Lovelace&city=Z%C3%BCrich&from=body",
            ),
        )
        .await;
        assert!(posted.starts_with("HTTP/1.1 404"), "{posted}");
        let big = "x=".to_owned() + &"y".repeat(MAX_BODY_BYTES + 10);
        let refused = send(&socket, post("/submit", &big)).await;
        assert!(refused.starts_with("HTTP/1.1 413"), "{refused}");

        let log = server.requests();
        let paths: Vec<&str> = log.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/",
                "/data/list.csv",
                "/files/report.txt",
                "/nope.html",
                "/search",
                "/submit",
                "/submit"
            ]
        );
        let search = &log[4];
        assert_eq!(search.method, "GET");
        assert_eq!(search.fields["q"], "red shoes");
        assert_eq!(search.fields["size"], "42");
        assert_eq!(search.fields["q2"], "é");
        let form = &log[5];
        assert_eq!(form.method, "POST");
        assert_eq!(form.fields["name"], "Ada Lovelace");
        assert_eq!(form.fields["city"], "Zürich");
        assert_eq!(form.fields["from"], "body", "the body's value wins");
        assert!(log[6].fields.is_empty(), "a refused body adds no fields");

        server.stop().await;
        assert!(!socket.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn the_record_is_bounded() {
        let dir = std::env::temp_dir().join(format!("mcpgym-pages-bound.{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("page.sock");
        let server = PageServer::start(&socket, &[page("index.html", "hi")], None)
            .await
            .unwrap();
        let mut stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
        // Many requests on one kept-alive connection, the last one closing it.
        let mut batch = String::new();
        for n in 0..MAX_LOGGED + 5 {
            batch.push_str(&format!("GET /p{n} HTTP/1.1\r\nHost: x\r\n\r\n"));
        }
        batch.push_str(&get("/last"));
        stream.write_all(batch.as_bytes()).await.unwrap();
        let mut sink = Vec::new();
        stream.read_to_end(&mut sink).await.unwrap();
        let log = server.requests();
        assert_eq!(log.len(), MAX_LOGGED);
        assert_eq!(log.last().unwrap().path, "/last");
        assert_eq!(log[0].path, "/p6");
        server.stop().await;
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
