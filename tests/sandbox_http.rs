//! `mcpgym sandbox` through its HTTP API, as E2B clients use it: real jails, real kernels, one
//! server for the whole file (kernels are the expensive part on two cores).

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{BIN, HttpServer};
use base64::Engine;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The server-side deadline per execution this file runs with: above the 5 s keepalive.
const DEADLINE_SECS: u64 = 6;

/// A client for one sandbox (or the control plane when `id` is empty).
#[derive(Clone)]
struct Client {
    http: reqwest::Client,
    base: String,
}

impl Client {
    fn new(base: &str) -> Client {
        Client {
            http: reqwest::Client::builder().http1_only().build().unwrap(),
            base: base.to_owned(),
        }
    }

    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .header("X-API-Key", "e2b_ignored")
    }

    async fn create(&self, body: Value) -> String {
        let response = self.post("/sandboxes").json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        let created: Value = response.json().await.unwrap();
        for field in ["templateID", "clientID", "envdVersion", "envdAccessToken"] {
            assert!(created[field].is_string(), "{field} missing: {created}");
        }
        created["sandboxID"].as_str().unwrap().to_owned()
    }

    /// A request to port `port` of sandbox `id`.
    fn data(
        &self,
        method: reqwest::Method,
        id: &str,
        port: u16,
        path: &str,
    ) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .header("E2b-Sandbox-Id", id)
            .header("E2b-Sandbox-Port", port.to_string())
    }

    /// Runs `code` and returns the streamed lines (asserting `end_of_execution` is last).
    async fn execute(&self, id: &str, body: Value) -> Vec<Value> {
        let response = self
            .data(reqwest::Method::POST, id, 49999, "/execute")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let text = response.text().await.unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        assert_eq!(
            lines.last().map(|l| l["type"].clone()),
            Some(json!("end_of_execution")),
            "{lines:#?}"
        );
        lines
    }

    async fn run(&self, id: &str, code: &str) -> Vec<Value> {
        self.execute(id, json!({ "code": code })).await
    }
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

fn text_of(lines: &[Value], kind: &str) -> String {
    of_type(lines, kind)
        .iter()
        .map(|l| l["text"].as_str().unwrap_or(""))
        .collect()
}

fn main_result(lines: &[Value]) -> Option<String> {
    of_type(lines, "result")
        .iter()
        .find(|l| l["is_main_result"] == true)
        .and_then(|l| l["text"].as_str().map(str::to_owned))
}

fn errors(lines: &[Value]) -> Vec<&Value> {
    of_type(lines, "error")
}

/// Asserts an error response: status and a JSON body `{code, message}`.
async fn assert_json_error(response: reqwest::Response, status: StatusCode, needle: &str) {
    assert_eq!(response.status(), status);
    let body: Value = response.json().await.expect("a JSON error body");
    assert_eq!(body["code"], status.as_u16(), "{body}");
    let message = body["message"].as_str().unwrap_or("");
    assert!(message.contains(needle), "{message:?} lacks {needle:?}");
}

/// Connect framing: flag, big-endian length, JSON.
fn connect_frame(message: &Value) -> Vec<u8> {
    let json = serde_json::to_vec(message).unwrap();
    let mut out = vec![0u8];
    out.extend_from_slice(&(json.len() as u32).to_be_bytes());
    out.extend_from_slice(&json);
    out
}

fn connect_frames(mut body: &[u8]) -> Vec<(u8, Value)> {
    let mut frames = Vec::new();
    while body.len() >= 5 {
        let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        frames.push((
            body[0],
            serde_json::from_slice(&body[5..5 + length]).unwrap(),
        ));
        body = &body[5 + length..];
    }
    assert!(body.is_empty(), "trailing bytes after the frames");
    frames
}

/// Runs a shell command through envd's process.Process/Start: (stdout, stderr, exit code).
async fn command(client: &Client, id: &str, cmd: &str, envs: Value) -> (String, String, i64) {
    let request = json!({"process": {"cmd": "/bin/bash", "args": ["-l", "-c", cmd], "envs": envs, "cwd": "/home/user"}});
    let response = client
        .data(reqwest::Method::POST, id, 49983, "/process.Process/Start")
        .header("Content-Type", "application/connect+json")
        .body(connect_frame(&request))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.bytes().await.unwrap();
    let frames = connect_frames(&body);
    let b64 = base64::engine::general_purpose::STANDARD;
    let (mut out, mut err, mut code) = (Vec::new(), Vec::new(), None);
    assert!(frames[0].1["event"]["start"]["pid"].is_u64(), "{frames:?}");
    for (_, frame) in &frames {
        let event = &frame["event"];
        if let Some(data) = event["data"]["stdout"].as_str() {
            out.extend(b64.decode(data).unwrap());
        }
        if let Some(data) = event["data"]["stderr"].as_str() {
            err.extend(b64.decode(data).unwrap());
        }
        if let Some(exit) = event["end"]["exitCode"].as_i64() {
            code = Some(exit);
        }
    }
    let (flag, last) = frames.last().unwrap();
    assert_eq!((*flag, last), (2, &json!({})), "end of stream: {frames:?}");
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
        code.expect("an end event with the exit code"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_service_speaks_e2b() {
    let service = HttpServer::start(&[
        "sandbox",
        "--pool",
        "2",
        "--execution-timeout",
        &DEADLINE_SECS.to_string(),
    ]);
    let client = Client::new(&service.base);

    control_plane(&client).await;
    let id = client
        .create(json!({"templateID": "code-interpreter-v1", "timeout": 300}))
        .await;
    execute_streams_and_keeps_state(&client, &id).await;
    deadlines_interrupt_then_restart(&client, &id).await;
    a_client_that_leaves_interrupts_its_cell(&client, &id).await;
    contexts(&client, &id).await;
    files(&client, &id).await;
    process_and_filesystem(&client, &id).await;
    bad_inputs(&client, &id).await;
    sandboxes_are_apart(&client, &id).await;
    ttl_is_enforced(&client).await;

    // Kill, then the control plane says 404 and the data plane 502, as E2B does.
    let kill = client
        .http
        .delete(format!("{}/sandboxes/{id}", service.base))
        .send()
        .await
        .unwrap();
    assert_eq!(kill.status(), StatusCode::NO_CONTENT);
    let again = client
        .http
        .delete(format!("{}/sandboxes/{id}", service.base))
        .send()
        .await
        .unwrap();
    assert_json_error(again, StatusCode::NOT_FOUND, "not found").await;
    let gone = client
        .data(reqwest::Method::POST, &id, 49999, "/execute")
        .json(&json!({"code": "1"}))
        .send()
        .await
        .unwrap();
    assert_json_error(gone, StatusCode::BAD_GATEWAY, "not found").await;
}

async fn control_plane(client: &Client) {
    let health = client
        .http
        .get(format!("{}/health", client.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);

    // Once the pool is warm, a create only hands a kernel over.
    let warm_by = Instant::now() + Duration::from_secs(60);
    loop {
        let health: Value = client
            .http
            .get(format!("{}/health", client.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if health["warmKernels"] == 2 {
            break;
        }
        assert!(Instant::now() < warm_by, "the pool never filled: {health}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let started = Instant::now();
    let id = client
        .create(json!({"templateID": "base", "metadata": {"run": "cp"}, "envVars": {"SANDBOX_VAR": "from create"}}))
        .await;
    let took = started.elapsed();
    eprintln!("create from the warm pool took {took:?}");
    assert!(took < Duration::from_millis(500), "create took {took:?}");

    // envVars reach the kernel and commands; a cell's env_vars last for that cell only.
    let lines = client
        .run(&id, "import os\nos.environ['SANDBOX_VAR']")
        .await;
    assert_eq!(
        main_result(&lines).as_deref(),
        Some("from create"),
        "{lines:?}"
    );
    let lines = client
        .execute(
            &id,
            json!({"code": "import os\nos.environ.get('CELL_VAR')", "env_vars": {"CELL_VAR": "for this cell"}}),
        )
        .await;
    assert_eq!(
        main_result(&lines).as_deref(),
        Some("for this cell"),
        "{lines:?}"
    );
    assert_eq!(
        lines[0]["execution_count"], 2,
        "housekeeping must not count: {lines:?}"
    );
    let lines = client.run(&id, "os.environ.get('CELL_VAR', 'gone')").await;
    assert_eq!(main_result(&lines).as_deref(), Some("gone"));
    let (out, _, _) = command(client, &id, "echo \"$SANDBOX_VAR\"", json!({})).await;
    assert_eq!(out, "from create\n");
    let detail: Value = client
        .http
        .get(format!("{}/sandboxes/{id}", client.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(detail["sandboxID"], id.as_str());
    assert_eq!(detail["state"], "running");
    assert_eq!(detail["metadata"]["run"], "cp");
    assert!(detail["endAt"].as_str().unwrap().ends_with('Z'));

    for path in [
        "/sandboxes",
        "/v2/sandboxes?metadata=run%3Dcp&state=running",
    ] {
        let listed: Vec<Value> = client
            .http
            .get(format!("{}{path}", client.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(
            listed.iter().any(|s| s["sandboxID"] == id.as_str()),
            "{path}: {listed:?}"
        );
    }
    let none: Vec<Value> = client
        .http
        .get(format!("{}/v2/sandboxes?metadata=run%3Dother", client.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(none.is_empty());

    let timeout = client
        .post(&format!("/sandboxes/{id}/timeout"))
        .json(&json!({"timeout": 600}))
        .send()
        .await
        .unwrap();
    assert_eq!(timeout.status(), StatusCode::NO_CONTENT);
    let connect = client
        .post(&format!("/sandboxes/{id}/connect"))
        .json(&json!({"timeout": 60}))
        .send()
        .await
        .unwrap();
    assert_eq!(connect.status(), StatusCode::OK);
    let connected: Value = connect.json().await.unwrap();
    assert_eq!(connected["sandboxID"], id.as_str());

    let health = client
        .data(reqwest::Method::GET, &id, 49999, "/health")
        .send()
        .await
        .unwrap();
    assert_eq!(health.json::<Value>().await.unwrap(), json!("OK"));
    // The Host form routes too.
    let host_form = client
        .http
        .get(format!("{}/health", client.base))
        .header("Host", format!("49983-{id}.localhost"))
        .send()
        .await
        .unwrap();
    assert_eq!(host_form.status(), StatusCode::NO_CONTENT);

    let kill = client
        .http
        .delete(format!("{}/sandboxes/{id}", client.base))
        .send()
        .await
        .unwrap();
    assert_eq!(kill.status(), StatusCode::NO_CONTENT);
    let gone = client
        .http
        .get(format!("{}/sandboxes/{id}", client.base))
        .send()
        .await
        .unwrap();
    assert_json_error(gone, StatusCode::NOT_FOUND, "not found").await;
}

async fn execute_streams_and_keeps_state(client: &Client, id: &str) {
    let lines = client
        .run(
            id,
            "import sys\nx = 41\nprint(x + 1)\nprint('oops', file=sys.stderr)\nx",
        )
        .await;
    assert_eq!(lines[0]["type"], "number_of_executions", "{lines:?}");
    assert_eq!(text_of(&lines, "stdout"), "42\n");
    assert_eq!(text_of(&lines, "stderr"), "oops\n");
    assert!(of_type(&lines, "stdout")[0]["timestamp"].is_string());
    assert_eq!(main_result(&lines).as_deref(), Some("41"));
    // State persists; a repr'd string loses one pair of quotes.
    let lines = client.run(id, "s = 'hi'\nx += 1\ns").await;
    assert_eq!(main_result(&lines).as_deref(), Some("hi"));
    assert_eq!(
        main_result(&client.run(id, "x").await).as_deref(),
        Some("42")
    );

    // Output arrives while the cell still runs.
    let started = Instant::now();
    let mut response = client
        .data(reqwest::Method::POST, id, 49999, "/execute")
        .json(&json!({"code": "import time\nprint('early', flush=True)\ntime.sleep(2)\nprint('late')"}))
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    let mut early_at = None;
    while let Some(chunk) = response.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if early_at.is_none() && seen.contains("early") {
            early_at = Some(started.elapsed());
        }
    }
    let early_at = early_at.expect("the early line");
    assert!(
        early_at < Duration::from_millis(1500),
        "first line after {early_at:?}"
    );
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert!(seen.contains("late") && seen.trim_end().ends_with(r#"{"type":"end_of_execution"}"#));

    // A matplotlib figure is a display result with a PNG.
    let lines = client
        .run(
            id,
            "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
        )
        .await;
    let png = of_type(&lines, "result")
        .iter()
        .find_map(|l| l["png"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no png: {lines:?}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(png)
        .unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        of_type(&lines, "result")
            .iter()
            .all(|l| l["is_main_result"] == false)
    );

    // An exception: name, value, traceback as one string.
    let lines = client.run(id, "def f():\n    return 1 / 0\nf()").await;
    let errs = errors(&lines);
    assert_eq!(errs.len(), 1, "{lines:?}");
    assert_eq!(errs[0]["name"], "ZeroDivisionError");
    assert!(
        errs[0]["value"]
            .as_str()
            .unwrap()
            .contains("division by zero")
    );
    assert!(
        errs[0]["traceback"]
            .as_str()
            .unwrap()
            .contains("ZeroDivisionError")
    );
    assert_eq!(
        main_result(&client.run(id, "x").await).as_deref(),
        Some("42")
    );
}

async fn deadlines_interrupt_then_restart(client: &Client, id: &str) {
    // Past the deadline: keepalive while quiet, an interrupt, a line that says so, state kept.
    let started = Instant::now();
    let lines = client.run(id, "import time\ntime.sleep(60)").await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(DEADLINE_SECS + 4),
        "took {took:?}"
    );
    assert!(
        !of_type(&lines, "keepalive").is_empty(),
        "no keepalive: {lines:?}"
    );
    let last_error = errors(&lines)
        .last()
        .cloned()
        .cloned()
        .expect("an error line");
    assert_eq!(last_error["name"], "TimeoutError");
    assert!(
        last_error["value"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{last_error}"
    );
    assert_eq!(
        main_result(&client.run(id, "x").await).as_deref(),
        Some("42")
    );

    // Code that ignores SIGINT: killed, kernel restarted, and the line says so.
    let lines = client
        .run(
            id,
            "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.05)",
        )
        .await;
    let last_error = errors(&lines)
        .last()
        .cloned()
        .cloned()
        .expect("an error line");
    assert_eq!(last_error["name"], "TimeoutError");
    assert!(
        last_error["value"]
            .as_str()
            .unwrap()
            .contains("killed and restarted"),
        "{last_error}"
    );
    // The next execution runs, in a fresh kernel.
    let lines = client.run(id, "x").await;
    assert_eq!(errors(&lines)[0]["name"], "NameError", "{lines:?}");
    client.run(id, "x = 42").await;
}

async fn a_client_that_leaves_interrupts_its_cell(client: &Client, id: &str) {
    let impatient = reqwest::Client::builder()
        .http1_only()
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    // A client-side timeout: the whole request, body included, may take 800 ms.
    let left = impatient
        .post(format!("{}/execute", client.base))
        .header("E2b-Sandbox-Id", id)
        .header("E2b-Sandbox-Port", "49999")
        .json(&json!({"code": "import time\nfor i in range(100):\n    time.sleep(0.1)\nleft_ran_out = True"}))
        .send()
        .await;
    if let Ok(response) = left {
        assert!(response.text().await.is_err(), "the body should time out");
    }
    drop(impatient);
    let started = Instant::now();
    let lines = client.run(id, "'left_ran_out' in globals()").await;
    assert_eq!(main_result(&lines).as_deref(), Some("False"), "{lines:?}");
    // Interrupted at once, not after the 10 s the cell would take nor the deadline.
    assert!(
        started.elapsed() < Duration::from_secs(DEADLINE_SECS),
        "{:?}",
        started.elapsed()
    );
}

async fn contexts(client: &Client, id: &str) {
    let created = client
        .data(reqwest::Method::POST, id, 49999, "/contexts")
        .json(&json!({"language": "python", "cwd": "/home/user/project"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::OK);
    let context: Value = created.json().await.unwrap();
    let ctx = context["id"].as_str().unwrap().to_owned();
    assert_eq!(context["cwd"], "/home/user/project");

    let run = |code: &str| client.execute(id, json!({"code": code, "context_id": ctx}));
    assert_eq!(
        main_result(&run("import os\nos.getcwd()").await).as_deref(),
        Some("/home/user/project")
    );
    // Variables are per context; files are per sandbox.
    let lines = run("'x' in globals()").await;
    assert_eq!(main_result(&lines).as_deref(), Some("False"));
    run("y = 7\nopen('/home/user/shared.txt', 'w').write('from ctx')").await;
    let lines = client.run(id, "open('/home/user/shared.txt').read()").await;
    assert_eq!(main_result(&lines).as_deref(), Some("from ctx"));
    let lines = client
        .execute(id, json!({"code": "x", "language": "python"}))
        .await;
    assert_eq!(main_result(&lines).as_deref(), Some("42"));

    let listed: Vec<Value> = client
        .data(reqwest::Method::GET, id, 49999, "/contexts")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // The default Python context, the JavaScript one every sandbox lists, and ours.
    let languages: Vec<&str> = listed
        .iter()
        .map(|c| c["language"].as_str().unwrap())
        .collect();
    assert_eq!(languages, ["python", "javascript", "python"], "{listed:?}");

    let restart = client
        .data(
            reqwest::Method::POST,
            id,
            49999,
            &format!("/contexts/{ctx}/restart"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(restart.status(), StatusCode::OK);
    let lines = run("import os\n('y' in globals(), os.getcwd())").await;
    assert_eq!(
        main_result(&lines).as_deref(),
        Some("(False, '/home/user/project')")
    );

    let path = format!("/contexts/{ctx}");
    let deleted = client
        .data(reqwest::Method::DELETE, id, 49999, &path)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::OK);
    let again = client
        .data(reqwest::Method::DELETE, id, 49999, &path)
        .send()
        .await
        .unwrap();
    assert_json_error(again, StatusCode::NOT_FOUND, "not found").await;
    let unknown = client
        .data(reqwest::Method::POST, id, 49999, "/execute")
        .json(&json!({"code": "1", "context_id": ctx}))
        .send()
        .await
        .unwrap();
    assert_json_error(
        unknown,
        StatusCode::NOT_FOUND,
        &format!("Context {ctx} not found"),
    )
    .await;
}

async fn files(client: &Client, id: &str) {
    let write = client
        .data(
            reqwest::Method::POST,
            id,
            49983,
            "/files?path=/home/user/in/raw.txt",
        )
        .header("Content-Type", "application/octet-stream")
        .body("raw bytes")
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), StatusCode::OK);
    let written: Value = write.json().await.unwrap();
    assert_eq!(
        written,
        json!([{"path": "/home/user/in/raw.txt", "name": "raw.txt", "type": "file"}])
    );

    let boundary = "mcpgymboundary";
    let multipart = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"m.txt\"\r\nContent-Type: application/octet-stream\r\n\r\nvia multipart\r\n--{boundary}--\r\n"
    );
    let write = client
        .data(
            reqwest::Method::POST,
            id,
            49983,
            "/files?path=deep/er/m.txt",
        )
        .header(
            "Content-Type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(multipart)
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), StatusCode::OK);

    let lines = client
        .run(
            id,
            "open('/home/user/deep/er/m.txt').read() + open('in/raw.txt').read()",
        )
        .await;
    assert_eq!(
        main_result(&lines).as_deref(),
        Some("via multipartraw bytes")
    );
    // What the service wrote belongs to the sandbox's user: the code can change it.
    let lines = client
        .run(
            id,
            "open('/home/user/deep/er/new.txt', 'w').write('k')\nopen('in/raw.txt', 'a').write('')",
        )
        .await;
    assert!(errors(&lines).is_empty(), "{lines:?}");
    client
        .run(id, "import os\nopen('made.bin', 'wb').write(bytes(range(256)))\nos.symlink('/etc/passwd', 'link')\nos.symlink('/etc', 'etcdir')")
        .await;
    let read = |path: &str| {
        client
            .data(
                reqwest::Method::GET,
                id,
                49983,
                &format!("/files?path={path}"),
            )
            .send()
    };
    let made = read("/home/user/made.bin").await.unwrap();
    assert_eq!(made.status(), StatusCode::OK);
    assert_eq!(
        made.bytes().await.unwrap().to_vec(),
        (0..=255u8).collect::<Vec<_>>()
    );

    assert_json_error(
        read("/home/user/missing").await.unwrap(),
        StatusCode::NOT_FOUND,
        "does not exist",
    )
    .await;
    assert_json_error(
        read("/home/user/in").await.unwrap(),
        StatusCode::BAD_REQUEST,
        "directory",
    )
    .await;
    for escape in [
        "/etc/passwd",
        "../../etc/passwd",
        "/home/user/../../etc/passwd",
        "/home/user/link",
        "/home/user/etcdir/passwd",
    ] {
        assert_json_error(
            read(escape).await.unwrap(),
            StatusCode::FORBIDDEN,
            "outside the sandbox",
        )
        .await;
    }
    let write_out = client
        .data(
            reqwest::Method::POST,
            id,
            49983,
            "/files?path=/home/user/etcdir/evil",
        )
        .header("Content-Type", "application/octet-stream")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_json_error(write_out, StatusCode::FORBIDDEN, "outside the sandbox").await;
    assert!(!std::path::Path::new("/etc/evil").exists());
}

async fn process_and_filesystem(client: &Client, id: &str) {
    let (out, err, code) = command(
        client,
        id,
        "echo \"$GREETING\"; pwd; cat in/raw.txt; echo; id -un; echo problem >&2; exit 3",
        json!({"GREETING": "hello"}),
    )
    .await;
    assert_eq!(out, "hello\n/home/user\nraw bytes\nuser\n");
    assert_eq!(err, "problem\n");
    assert_eq!(code, 3);
    // No network inside.
    let (_, _, code) = command(
        client,
        id,
        "exec 3<>/dev/tcp/127.0.0.1/22 || exec 3<>/dev/tcp/1.1.1.1/53",
        json!({}),
    )
    .await;
    assert_ne!(code, 0);

    let rpc = |method: &str, body: Value| {
        client
            .data(
                reqwest::Method::POST,
                id,
                49983,
                &format!("/filesystem.Filesystem/{method}"),
            )
            .header("Content-Type", "application/json")
            .json(&body)
            .send()
    };
    let made = rpc("MakeDir", json!({"path": "/home/user/newdir/sub"}))
        .await
        .unwrap();
    assert_eq!(made.status(), StatusCode::OK);
    let made: Value = made.json().await.unwrap();
    assert_eq!(made["entry"]["type"], "FILE_TYPE_DIRECTORY");
    let moved = rpc(
        "Move",
        json!({"source": "/home/user/in/raw.txt", "destination": "/home/user/newdir/raw.txt"}),
    )
    .await
    .unwrap();
    assert_eq!(moved.status(), StatusCode::OK);
    let listed: Value = rpc("ListDir", json!({"path": "/home/user/newdir"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut names: Vec<&str> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["raw.txt", "sub"]);
    let stat: Value = rpc("Stat", json!({"path": "/home/user/newdir/raw.txt"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stat["entry"]["type"], "FILE_TYPE_FILE");
    let removed = rpc("Remove", json!({"path": "/home/user/newdir"}))
        .await
        .unwrap();
    assert_eq!(removed.status(), StatusCode::OK);
    let missing = rpc("Stat", json!({"path": "/home/user/newdir"}))
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["code"], "not_found");
    let escape = rpc("ListDir", json!({"path": "/etc"})).await.unwrap();
    assert_eq!(escape.status(), StatusCode::FORBIDDEN);

    // One /tmp for the whole sandbox: what a cell writes there a command reads, and what one
    // command leaves there the next one and the kernel see.
    let lines = client
        .run(id, "open('/tmp/from-kernel.txt', 'w').write('kernel')")
        .await;
    assert!(errors(&lines).is_empty(), "{lines:?}");
    let (out, _, code) = command(
        client,
        id,
        "cat /tmp/from-kernel.txt; echo shell > /tmp/from-shell.txt",
        json!({}),
    )
    .await;
    assert_eq!((out.as_str(), code), ("kernel", 0));
    let (out, _, _) = command(client, id, "cat /tmp/from-shell.txt", json!({})).await;
    assert_eq!(out, "shell\n");
    let lines = client
        .run(id, "open('/tmp/from-shell.txt').read() == 'shell\\n'")
        .await;
    assert_eq!(main_result(&lines).as_deref(), Some("True"));
}

async fn bad_inputs(client: &Client, id: &str) {
    let execute = |body: String| {
        client
            .data(reqwest::Method::POST, id, 49999, "/execute")
            .header("Content-Type", "application/json")
            .body(body)
            .send()
    };
    assert_json_error(
        execute("{not json".into()).await.unwrap(),
        StatusCode::BAD_REQUEST,
        "not valid JSON",
    )
    .await;
    assert_json_error(
        execute("{}".into()).await.unwrap(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "code",
    )
    .await;
    assert_json_error(
        execute(json!({"code": "1", "context_id": "a", "language": "python"}).to_string())
            .await
            .unwrap(),
        StatusCode::BAD_REQUEST,
        "Only one of context_id or language can be provided",
    )
    .await;
    assert_json_error(
        execute(json!({"code": "1", "language": "cobol"}).to_string())
            .await
            .unwrap(),
        StatusCode::BAD_REQUEST,
        "is not known",
    )
    .await;
    assert_json_error(
        execute(json!({"code": "1", "language": "java"}).to_string())
            .await
            .unwrap(),
        StatusCode::BAD_REQUEST,
        "Java is not supported",
    )
    .await;
    // The service answers 413 as soon as the declared length is over the limit, without
    // reading the rest, and closes that connection: a client still writing the body may see
    // it closed first. It goes on a client of its own, so the shared pool never hands the
    // closing connection to the next request.
    let huge = json!({"code": "x".repeat(5 << 20)}).to_string();
    let once = Client::new(&client.base);
    let sent = once
        .data(reqwest::Method::POST, id, 49999, "/execute")
        .header("Content-Type", "application/json")
        .body(huge)
        .send()
        .await;
    match sent {
        Ok(response) => {
            assert_json_error(response, StatusCode::PAYLOAD_TOO_LARGE, "too large").await
        }
        Err(error) => assert!(error.is_request(), "{error:?}"),
    }

    let unknown = client
        .data(reqwest::Method::POST, "inosuchsandbox", 49999, "/execute")
        .json(&json!({"code": "1"}))
        .send()
        .await
        .unwrap();
    assert_json_error(unknown, StatusCode::BAD_GATEWAY, "not found").await;
    let create = client
        .post("/sandboxes")
        .header("Content-Type", "application/json")
        .body("[1, 2")
        .send()
        .await
        .unwrap();
    assert_json_error(create, StatusCode::BAD_REQUEST, "not valid JSON").await;
    let create = client
        .post("/sandboxes")
        .json(&json!({"timeout": 0}))
        .send()
        .await
        .unwrap();
    assert_json_error(create, StatusCode::BAD_REQUEST, "timeout").await;
    let timeout = client
        .post(&format!("/sandboxes/{id}/timeout"))
        .json(&json!({"timeout": "soon"}))
        .send()
        .await
        .unwrap();
    assert_json_error(timeout, StatusCode::BAD_REQUEST, "not valid JSON").await;
    let rebound = client
        .http
        .get(format!("{}/sandboxes", client.base))
        .header("Host", "attacker.example:80")
        .send()
        .await
        .unwrap();
    assert_json_error(rebound, StatusCode::FORBIDDEN, "loopback").await;
    let nowhere = client
        .http
        .get(format!("{}/nowhere", client.base))
        .send()
        .await
        .unwrap();
    assert_json_error(nowhere, StatusCode::NOT_FOUND, "no route").await;
    // Over the control plane's limit: answered 413 without the rest being read, and that
    // connection closed, so it goes on a client of its own too (as the 5 MiB cell above).
    let once = Client::new(&client.base);
    let big = once
        .post("/sandboxes")
        .header("Content-Type", "application/json")
        .body(format!(
            "{{\"metadata\": {{\"k\": \"{}\"}}}}",
            "v".repeat(200_000)
        ))
        .send()
        .await;
    match big {
        Ok(response) => {
            assert_json_error(response, StatusCode::PAYLOAD_TOO_LARGE, "too large").await
        }
        Err(error) => assert!(error.is_request(), "{error:?}"),
    }
}

async fn sandboxes_are_apart(client: &Client, first: &str) {
    let second = client
        .create(json!({"templateID": "code-interpreter-v1"}))
        .await;
    let lines = client.run(&second, "x").await;
    assert_eq!(errors(&lines)[0]["name"], "NameError", "{lines:?}");
    let lines = client
        .run(
            &second,
            "import os\nsorted(n for n in os.listdir('/home/user') if not n.startswith('.'))",
        )
        .await;
    assert_eq!(main_result(&lines).as_deref(), Some("[]"));
    // The first sandbox's /tmp is its own.
    let (out, _, _) = command(client, &second, "ls -A /tmp", json!({})).await;
    assert!(!out.contains("from-"), "{out}");
    let read = client
        .data(
            reqwest::Method::GET,
            &second,
            49983,
            "/files?path=/home/user/made.bin",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), StatusCode::NOT_FOUND);
    // The first one is untouched.
    assert_eq!(
        main_result(&client.run(first, "x").await).as_deref(),
        Some("42")
    );
    // Killing a sandbox ends the cell it is running by cutting its stream off (no
    // `end_of_execution`), as a sandbox that dies does in E2B: its SDK then finds the sandbox
    // gone (502 below) and says it was killed during the request.
    let running = {
        let client = client.clone();
        let second = second.clone();
        tokio::spawn(async move {
            let response = client
                .data(reqwest::Method::POST, &second, 49999, "/execute")
                .json(&json!({"code": "import time\ntime.sleep(60)"}))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            response.text().await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    let kill = client
        .http
        .delete(format!("{}/sandboxes/{second}", client.base))
        .send()
        .await
        .unwrap();
    assert_eq!(kill.status(), StatusCode::NO_CONTENT);
    let body = running.await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(body.is_err(), "the stream ended normally: {body:?}");
    let health = client
        .data(reqwest::Method::GET, &second, 49999, "/health")
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::BAD_GATEWAY);
}

async fn ttl_is_enforced(client: &Client) {
    let short = client
        .create(json!({"templateID": "base", "timeout": 1}))
        .await;
    let kept = client
        .create(json!({"templateID": "base", "timeout": 1}))
        .await;
    let extend = client
        .post(&format!("/sandboxes/{kept}/timeout"))
        .json(&json!({"timeout": 120}))
        .send()
        .await
        .unwrap();
    assert_eq!(extend.status(), StatusCode::NO_CONTENT);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let status = |id: String| {
        client
            .http
            .get(format!("{}/sandboxes/{id}", client.base))
            .send()
    };
    assert_json_error(
        status(short.clone()).await.unwrap(),
        StatusCode::NOT_FOUND,
        "not found",
    )
    .await;
    assert_eq!(status(kept.clone()).await.unwrap().status(), StatusCode::OK);
    let kill = client
        .http
        .delete(format!("{}/sandboxes/{kept}", client.base))
        .send()
        .await
        .unwrap();
    assert_eq!(kill.status(), StatusCode::NO_CONTENT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_guards_the_service_and_limits_hold() {
    // Beyond loopback only with a token.
    let refused = Command::new(BIN)
        .args(["sandbox", "--http", "0.0.0.0:0"])
        .env_remove("MCPGYM_TOKEN")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--token"));

    let service = HttpServer::start(&[
        "sandbox",
        "--pool",
        "0",
        "--max-sandboxes",
        "1",
        "--token",
        "sekrit",
    ]);
    let client = Client::new(&service.base);
    let health = client
        .http
        .get(format!("{}/health", service.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let anonymous = client
        .http
        .post(format!("{}/sandboxes", service.base))
        .json(&json!({"templateID": "base"}))
        .send()
        .await
        .unwrap();
    assert_json_error(anonymous, StatusCode::UNAUTHORIZED, "X-API-Key").await;

    let created: Value = client
        .http
        .post(format!("{}/sandboxes", service.base))
        .header("X-API-Key", "sekrit")
        .json(&json!({"templateID": "base"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["sandboxID"].as_str().unwrap();
    let access = created["envdAccessToken"].as_str().unwrap();

    let full = client
        .http
        .post(format!("{}/sandboxes", service.base))
        .header("Authorization", "Bearer sekrit")
        .json(&json!({"templateID": "base"}))
        .send()
        .await
        .unwrap();
    assert_json_error(full, StatusCode::TOO_MANY_REQUESTS, "--max-sandboxes").await;

    // The data plane takes the sandbox's own access token.
    let without = client
        .data(reqwest::Method::POST, id, 49999, "/execute")
        .json(&json!({"code": "1 + 1"}))
        .send()
        .await
        .unwrap();
    assert_json_error(without, StatusCode::UNAUTHORIZED, "X-Access-Token").await;
    let with = client
        .data(reqwest::Method::POST, id, 49999, "/execute")
        .header("X-Access-Token", access)
        .json(&json!({"code": "1 + 1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(with.status(), StatusCode::OK);
    assert!(with.text().await.unwrap().contains(r#""text":"2""#));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_never_pass_the_limit() {
    let service = HttpServer::start(&["sandbox", "--pool", "1", "--max-sandboxes", "5"]);
    let client = Client::new(&service.base);
    let creates: Vec<_> = (0..20)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                let response = client
                    .post("/sandboxes")
                    .json(&json!({"templateID": "base"}))
                    .send()
                    .await
                    .unwrap();
                let status = response.status();
                let body: Value = response.json().await.unwrap();
                (status, body)
            })
        })
        .collect();
    let mut answers = Vec::new();
    for create in creates {
        answers.push(create.await.unwrap());
    }
    let created = answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .count();
    assert_eq!(created, 5, "{answers:?}");
    for (status, body) in &answers {
        if *status != StatusCode::CREATED {
            assert_eq!(*status, StatusCode::TOO_MANY_REQUESTS, "{body}");
            assert!(
                body["message"]
                    .as_str()
                    .unwrap()
                    .contains("--max-sandboxes"),
                "{body}"
            );
        }
    }
    let listed: Vec<Value> = client
        .http
        .get(format!("{}/sandboxes", service.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed.len(), 5);
}

/// A file request of sandbox `id` on port 49983.
async fn envd(client: &Client, id: &str, path: &str, body: Value) -> (StatusCode, Vec<u8>) {
    let response = client
        .data(reqwest::Method::POST, id, 49983, path)
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status(), response.bytes().await.unwrap().to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_requests_never_follow_a_symlink_swapped_in_out_of_the_home() {
    let service = HttpServer::start(&["sandbox", "--pool", "2"]);
    let client = Client::new(&service.base);
    // A host directory anyone may write, holding a file anyone may read.
    let host = std::env::temp_dir().join(format!("mcpgym-race-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&host);
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(host.join("secret"), "HOST-SECRET").unwrap();
    std::fs::write(host.join("f0"), "HOST-SECRET").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o777)).unwrap();
    let id = client.create(json!({"templateID": "base"})).await;
    let other = client.create(json!({"templateID": "base"})).await;
    // A thread of the kernel swaps /home/user/d between a directory and a symlink to the
    // host directory, as fast as it can.
    let swapper = format!(
        r#"
import ctypes, os, threading
os.makedirs('/home/user/d', exist_ok=True)
open('/home/user/d/secret', 'w').write('mine')
open('/home/user/d/f0', 'w').write('mine')
os.symlink({host:?}, '/home/user/swap')
libc = ctypes.CDLL(None, use_errno=True)
def swap():
    while True:
        libc.renameat2(-100, b'/home/user/d', -100, b'/home/user/swap', 2)
threading.Thread(target=swap, daemon=True).start()
'started'"#,
        host = host.to_string_lossy()
    );
    assert_eq!(
        main_result(&client.run(&id, &swapper).await).as_deref(),
        Some("started")
    );
    let mut answers = std::collections::BTreeMap::<u16, usize>::new();
    for i in 0..60 {
        let mut statuses = Vec::new();
        // Write, read, list, stat, make a directory, move, remove: all through d.
        let write = client
            .data(
                reqwest::Method::POST,
                &id,
                49983,
                &format!("/files?path=/home/user/d/w{i}"),
            )
            .header("Content-Type", "application/octet-stream")
            .body("x")
            .send()
            .await
            .unwrap();
        statuses.push(write.status());
        let read = client
            .data(
                reqwest::Method::GET,
                &id,
                49983,
                "/files?path=/home/user/d/secret",
            )
            .send()
            .await
            .unwrap();
        statuses.push(read.status());
        let text = read.bytes().await.unwrap();
        assert!(
            !String::from_utf8_lossy(&text).contains("HOST-SECRET"),
            "read a host file"
        );
        let (status, listed) = envd(
            &client,
            &id,
            "/filesystem.Filesystem/ListDir",
            json!({"path": "/home/user/d", "depth": 2}),
        )
        .await;
        statuses.push(status);
        let listed = String::from_utf8_lossy(&listed).into_owned();
        assert!(
            !listed.contains("\"size\":\"11\""),
            "listed a host file: {listed}"
        );
        let (status, _) = envd(
            &client,
            &id,
            "/filesystem.Filesystem/Stat",
            json!({"path": "/home/user/d/secret"}),
        )
        .await;
        statuses.push(status);
        let (status, _) = envd(
            &client,
            &id,
            "/filesystem.Filesystem/MakeDir",
            json!({"path": format!("/home/user/d/m{i}")}),
        )
        .await;
        statuses.push(status);
        let (status, _) = envd(
            &client,
            &id,
            "/filesystem.Filesystem/Move",
            json!({"source": "/home/user/d/f0", "destination": format!("/home/user/d/f{}", i + 1)}),
        )
        .await;
        statuses.push(status);
        let (status, _) = envd(
            &client,
            &id,
            "/filesystem.Filesystem/Move",
            json!({"source": format!("/home/user/d/f{}", i + 1), "destination": "/home/user/d/f0"}),
        )
        .await;
        statuses.push(status);
        let (status, _) = envd(
            &client,
            &id,
            "/filesystem.Filesystem/Remove",
            json!({"path": format!("/home/user/d/m{i}")}),
        )
        .await;
        statuses.push(status);
        for status in statuses {
            *answers.entry(status.as_u16()).or_default() += 1;
            assert!(status.is_success() || status.is_client_error(), "{status}");
        }
    }
    // Nothing came into, or went out of, the host directory.
    let mut names: Vec<String> = std::fs::read_dir(&host)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["f0", "secret"], "{answers:?}");
    assert_eq!(
        std::fs::read_to_string(host.join("secret")).unwrap(),
        "HOST-SECRET"
    );
    // Both ways were taken: some requests reached d, others were refused.
    assert!(answers.get(&200).copied().unwrap_or(0) > 0, "{answers:?}");
    assert!(answers.get(&403).copied().unwrap_or(0) > 0, "{answers:?}");

    // A symlink to another sandbox's jail log, or to its root: refused with a sentence.
    let root = std::env::temp_dir().join(format!("mcpgym-sandbox-{}", service.pid()));
    let mut logs = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            } else if entry.file_name() == "jail.log" {
                logs.push(path);
            }
        }
    }
    assert!(!logs.is_empty(), "no jail.log under {}", root.display());
    let links = format!(
        "import os\nos.symlink({:?}, '/home/user/log')\nos.symlink({:?}, '/home/user/root')\nos.symlink('../../..' + {:?}, '/home/user/rel')",
        logs[0].to_string_lossy(),
        root.to_string_lossy(),
        logs[0].to_string_lossy()
    );
    assert!(errors(&client.run(&other, &links).await).is_empty());
    for path in ["/home/user/log", "/home/user/root/x", "/home/user/rel"] {
        let read = client
            .data(
                reqwest::Method::GET,
                &other,
                49983,
                &format!("/files?path={path}"),
            )
            .send()
            .await
            .unwrap();
        assert_json_error(
            read,
            StatusCode::FORBIDDEN,
            "leads outside the sandbox's files",
        )
        .await;
    }
    let (status, body) = envd(
        &client,
        &other,
        "/filesystem.Filesystem/ListDir",
        json!({"path": "/home/user/root"}),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "{}",
        String::from_utf8_lossy(&body)
    );
    let _ = std::fs::remove_dir_all(&host);
}

/// The lock the default runtime is built from: (distribution, version) pairs.
fn runtime_lock() -> Vec<(String, String)> {
    let path = format!(
        "{}/../../.ci/runtime-requirements.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (name, version) = line.split_once("==").expect("name==version");
            (name.trim().to_owned(), version.trim().to_owned())
        })
        .collect()
}

/// The runtime `.ci/setup` builds, as the binary finds it (beside `target/debug`).
fn default_runtime() -> std::path::PathBuf {
    let runtime = std::path::Path::new(BIN)
        .parent()
        .and_then(|dir| dir.parent())
        .unwrap()
        .join("runtime");
    assert!(
        runtime.join(".requirements-sha256").is_file(),
        "no runtime at {}: run .ci/setup --deps",
        runtime.display()
    );
    runtime
}

/// The data-science runtime: every package of the lock importable at its locked version, in
/// the kernel and in shell commands, and read-only inside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxes_run_on_the_locked_data_science_runtime() {
    let runtime = default_runtime();
    let site = runtime.join("lib/python3.11/site-packages");
    let service = HttpServer::start(&["sandbox", "--pool", "1"]);
    let client = Client::new(&service.base);
    let id = client.create(json!({"timeout": 300})).await;

    let modules = "numpy pandas matplotlib seaborn scipy sklearn statsmodels sympy networkx \
        openpyxl xlrd pyarrow polars requests bs4 lxml PIL plotly tabulate ipykernel";
    let names: Vec<String> = runtime_lock().into_iter().map(|(name, _)| name).collect();
    let code = format!(
        r#"import importlib, importlib.metadata, json, os, sys, time
started = time.perf_counter()
import pandas as pd
pandas_seconds = time.perf_counter() - started
for name in {modules:?}.split():
    importlib.import_module(name)
started = time.perf_counter()
import matplotlib.pyplot as plt
plt.plot([1, 2])
plt.savefig("/tmp/plot.png")
plot_seconds = time.perf_counter() - started
frame = pd.DataFrame({{"city": ["Oslo", "Lima", "Pune"], "rain": [1.5, 0.25, 3.0], "days": [3, 1, 7]}})
frame.to_parquet("round.parquet", engine="pyarrow")
frame.to_excel("round.xlsx", index=False, engine="openpyxl")
parquet_ok = pd.read_parquet("round.parquet").equals(frame)
xlsx_ok = pd.read_excel("round.xlsx", engine="openpyxl").equals(frame)
print(json.dumps({{
    "versions": {{name: importlib.metadata.version(name) for name in {names:?}}},
    "prefix": sys.prefix,
    "parquet": parquet_ok,
    "xlsx": xlsx_ok,
    "mpl_dir": sorted(os.listdir(os.environ["MPLCONFIGDIR"])),
    "home": sorted(os.listdir(os.path.expanduser("~"))),
    "pandas_seconds": pandas_seconds,
    "plot_seconds": plot_seconds,
}}))"#
    );
    let lines = client.run(&id, &code).await;
    assert!(errors(&lines).is_empty(), "{lines:#?}");
    let report: Value = serde_json::from_str(text_of(&lines, "stdout").trim()).unwrap();
    eprintln!(
        "runtime: import pandas {:.2} s, first plot {:.2} s",
        report["pandas_seconds"].as_f64().unwrap(),
        report["plot_seconds"].as_f64().unwrap()
    );
    for (name, version) in runtime_lock() {
        assert_eq!(report["versions"][&name], version, "{name}");
    }
    assert_eq!(report["prefix"], runtime.to_str().unwrap());
    assert_eq!(report["parquet"], true);
    assert_eq!(report["xlsx"], true);
    // The font cache came with the runtime: nothing rebuilt it, nothing landed in the home.
    assert!(
        report["mpl_dir"]
            .as_array()
            .unwrap()
            .iter()
            .any(|name| name.as_str().unwrap().starts_with("fontlist-")),
        "{report}"
    );
    for written in [".cache", ".config"] {
        assert!(
            !report["home"].as_array().unwrap().contains(&json!(written)),
            "{report}"
        );
    }

    // Shell commands (and so task setups and checks) find the same Python first on PATH.
    let (out, err, code) = command(
        &client,
        &id,
        "python3 -c 'import pandas; print(pandas.__version__)' && command -v python3 python pip",
        json!({}),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let pandas = runtime_lock()
        .into_iter()
        .find(|(name, _)| name == "pandas")
        .unwrap()
        .1;
    let bin = runtime.join("bin");
    let expected = format!(
        "{pandas}\n{0}/python3\n{0}/python\n{0}/pip\n",
        bin.display()
    );
    assert_eq!(out, expected);

    // Read-only inside, from a command and from the kernel.
    let (_, err, code) = command(
        &client,
        &id,
        &format!("touch {}/pandas/planted.py", site.display()),
        json!({}),
    )
    .await;
    assert_ne!(code, 0);
    assert!(err.contains("Read-only file system"), "{err}");
    let lines = client
        .run(
            &id,
            "import pandas, pathlib\n\
             pathlib.Path(pandas.__file__).with_name('planted.py').write_text('x')",
        )
        .await;
    assert!(
        text_of(&lines, "stderr").contains("Read-only file system")
            || format!("{lines:?}").contains("Read-only file system"),
        "{lines:#?}"
    );
    assert!(!site.join("pandas/planted.py").exists());
}

/// A `--runtime` that is no Python prefix is refused at start, with what to do.
#[test]
fn a_runtime_that_is_no_python_prefix_is_refused() {
    for args in [
        &["sandbox", "--http", "127.0.0.1:0"][..],
        &["jupyter", "--http", "127.0.0.1:0"],
        &["serve", "--http", "127.0.0.1:0"],
    ] {
        let mut args = args.to_vec();
        args.extend(["--runtime", "/nonexistent/venv"]);
        let said = crate::common::start_fails(&args);
        assert!(
            said.contains(
                "--runtime /nonexistent/venv is not a usable Python prefix (/nonexistent/venv/bin/python is missing)"
            ) && said.contains("mcpgym runtime install"),
            "{args:?}: {said}"
        );
    }
}

#[tokio::test]
async fn a_burst_of_creates_queues_for_kernels_and_each_gets_one() {
    // No warm kernel at all: every create waits for one the pool starts for it, a few at a
    // time, instead of starting its own.
    let service = HttpServer::start(&["sandbox", "--pool", "0", "--start-timeout", "120"]);
    let client = Client::new(&service.base);
    let creates: Vec<_> = (0..12)
        .map(|n| {
            let client = client.clone();
            tokio::spawn(async move {
                let id = client.create(json!({"templateID": "base"})).await;
                let lines = client.run(&id, &format!("{n} * 2")).await;
                (n, main_result(&lines))
            })
        })
        .collect();
    for create in creates {
        let (n, result) = create.await.unwrap();
        assert_eq!(result, Some((n * 2).to_string()));
    }
    // The burst raised the pool's target: kernels are started ahead for the next one.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let health: Value = client
            .http
            .get(format!("{}/health", service.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if health["warmKernels"].as_u64().unwrap_or(0) >= 12 {
            break;
        }
        assert!(Instant::now() < deadline, "the pool did not grow: {health}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test]
async fn a_create_that_gets_no_kernel_in_time_says_why() {
    // A runtime whose kernels never come up (the fault a hung start-up would cause): its
    // python is the real one, except that a kernel launch sleeps.
    let runtime = std::env::temp_dir().join(format!("mcpgym-hung-runtime-{}", std::process::id()));
    std::fs::create_dir_all(runtime.join("bin")).unwrap();
    let real =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/runtime/bin/python");
    let python = runtime.join("bin/python");
    std::fs::write(
        &python,
        format!(
            "#!/bin/sh\ncase \"$*\" in *ipykernel_launcher*) exec sleep 600;; esac\nexec {} \"$@\"\n",
            real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let service = HttpServer::start(&[
        "sandbox",
        "--pool",
        "0",
        "--start-timeout",
        "2",
        "--runtime",
        runtime.to_str().unwrap(),
    ]);
    let client = Client::new(&service.base);
    let response = client
        .post("/sandboxes")
        .json(&json!({"templateID": "base"}))
        .send()
        .await
        .unwrap();
    assert_json_error(
        response,
        StatusCode::SERVICE_UNAVAILABLE,
        "no sandbox kernel became ready within 2 s",
    )
    .await;
    let said =
        crate::common::start_fails(&["sandbox", "--http", "127.0.0.1:0", "--start-timeout", "0"]);
    assert!(said.contains("--start-timeout"), "{said}");
    drop(service);
    let _ = std::fs::remove_dir_all(&runtime);
}
