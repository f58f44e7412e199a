//! Headless Chromium (the Debian package) driven over the DevTools protocol, for the tests of
//! the viewer's pages: open a page, run script in it, wait for what it shows, click where a
//! person would, and save screenshots as test artefacts.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A headless Chromium with one page; killed when dropped.
pub struct Browser {
    child: tokio::process::Child,
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    profile: PathBuf,
}

/// Where page screenshots are saved: `target/test-artifacts/viewer/`.
pub fn artifacts_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts/viewer");
    std::fs::create_dir_all(&dir).expect("create the artefacts folder");
    dir
}

impl Browser {
    /// Starts Chromium with a fresh profile and a 1280×900 window, and opens a blank page.
    pub async fn start() -> Self {
        let profile = std::env::temp_dir().join(format!(
            "mcpgym-test-chromium-{}-{}",
            std::process::id(),
            uuid_like()
        ));
        let mut child = tokio::process::Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start chromium (installed by .ci/setup)");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let endpoint = tokio::time::timeout(Duration::from_secs(60), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return url.trim().to_owned();
                }
            }
            panic!("chromium exited before listening");
        })
        .await
        .expect("chromium starts within a minute");
        // Keep draining its log so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (socket, _) = tokio_tungstenite::connect_async(endpoint.as_str())
            .await
            .expect("connect to chromium's DevTools");
        let mut browser = Browser {
            child,
            socket,
            session: String::new(),
            next_id: 0,
            profile,
        };
        let target = browser
            .command(None, "Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let target_id = target["targetId"].as_str().unwrap().to_owned();
        let attached = browser
            .command(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await;
        browser.session = attached["sessionId"].as_str().unwrap().to_owned();
        browser.page("Page.enable", json!({})).await;
        browser.page("Runtime.enable", json!({})).await;
        browser
    }

    async fn command(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(Message::text(message.to_string()))
            .await
            .expect("send to chromium");
        let answer = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(Ok(message)) = self.socket.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                let value: Value = serde_json::from_str(&text).unwrap();
                if value["id"] == json!(id) {
                    return value;
                }
            }
            panic!("chromium closed its DevTools connection");
        })
        .await
        .unwrap_or_else(|_| panic!("chromium did not answer {method}"));
        assert!(
            answer.get("error").is_none(),
            "{method} failed: {}",
            answer["error"]
        );
        answer["result"].clone()
    }

    async fn page(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.command(Some(&session), method, params).await
    }

    /// Opens `url` and waits for its document to load.
    pub async fn goto(&mut self, url: &str) {
        self.page("Page.navigate", json!({"url": url})).await;
        self.wait_for("document.readyState === 'complete'").await;
    }

    /// The value of `expression` (awaited if it is a promise); a thrown error fails the test.
    pub async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .page(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            )
            .await;
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression} threw: {}",
            result["exceptionDetails"]
        );
        result["result"]["value"].clone()
    }

    /// Waits up to 30 s for `expression` to be truthy, and returns its value.
    pub async fn wait_for(&mut self, expression: &str) -> Value {
        for _ in 0..300 {
            let value = self
                .page(
                    "Runtime.evaluate",
                    json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
                )
                .await;
            let value = value["result"]["value"].clone();
            let truthy = match &value {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                Value::Array(_) | Value::Object(_) => true,
            };
            if truthy {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let page = self
            .eval("document.body ? document.body.innerText : ''")
            .await;
        panic!("the page never showed {expression}; it reads: {page}");
    }

    /// A real mouse click (press and release) at page coordinates.
    pub async fn click_at(&mut self, x: f64, y: f64) {
        for kind in ["mousePressed", "mouseReleased"] {
            self.page(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await;
        }
    }

    /// Types `text` into the focused element, as key events.
    pub async fn type_text(&mut self, text: &str) {
        self.page("Input.insertText", json!({"text": text})).await;
    }

    /// Saves a PNG of the page to the artefacts folder as `name.png`, and returns its path.
    pub async fn screenshot(&mut self, name: &str) -> PathBuf {
        use base64::Engine;
        let shot = self
            .page("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        let path = artifacts_dir().join(format!("{name}.png"));
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn uuid_like() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
