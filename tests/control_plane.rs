//! The HTTP control plane and the server's guards, through the real binary.

use std::time::Duration;

use crate::common::*;
use mcpgym_wordle::{Wordle, WordleConfig};
use serde_json::{Value, json};

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpgym-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The HTTP status of a refusal from the typed client.
fn code_of(error: &ClientError) -> u16 {
    error
        .status()
        .unwrap_or_else(|| panic!("not a refusal: {error}"))
        .as_u16()
}

async fn error_of(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    let body: Value = response.json().await.expect("errors are JSON");
    (
        status,
        body["error"]
            .as_str()
            .expect("an error sentence")
            .to_owned(),
    )
}

#[tokio::test]
async fn round_trip_create_play_inspect_delete() {
    let dir = temp_dir("round-trip");
    let dir_arg = dir.to_str().unwrap().to_owned();
    let server = HttpServer::start(&["wordle", "--trajectory-dir", &dir_arg]);
    let control = server.control();
    let created = server.create(NewEpisode::default().task("test-0000")).await;
    assert_eq!(created.env, "wordle");
    assert_eq!(created.task, "test-0000");
    let id = created.id.clone();

    let status = server.status(&id).await;
    assert_eq!(status.turn, 0);
    assert!(!status.done);
    assert!(status.revealed.get("answer").is_none());

    let client = server.legacy_client(&created.mcp_url).await;
    guess(&client, "xqzvb").await; // refused
    guess(&client, "crane").await;
    let answer = Wordle::new(WordleConfig::default())
        .answer_of("test-0000")
        .unwrap();
    assert_eq!(answer, "serif");
    let win = guess(&client, &answer).await;
    assert_eq!(step(&win)["done"], true);

    let status = server.status(&id).await;
    assert_eq!(status.revealed["answer"], "serif");
    assert!(status.done);
    assert!(!status.truncated);
    assert_eq!(status.turn, 3);
    assert_eq!(Some(status.return_), step(&win)["return"].as_f64());
    assert_eq!(status.reward_components["win"], 1.0);

    let body = server.trajectory(&id).await;
    let records: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3);
    assert_eq!(records[0]["tool"], "guess");
    assert_eq!(records[0]["arguments"], json!({"word": "xqzvb"}));
    assert_eq!(records[0]["is_error"], true);
    assert!(
        records[0]["observation"]
            .as_str()
            .unwrap()
            .contains("not in the word list")
    );
    assert_eq!(
        records[1]["observation"].as_str().unwrap().lines().count(),
        2
    );
    assert_eq!(records[2]["done"], true);
    assert_eq!(records[2]["reward"], step(&win)["reward"]);
    for (i, record) in records.iter().enumerate() {
        assert_eq!(record["episode"], json!(id));
        assert_eq!(record["turn"], i + 1);
        assert!(record["latency_ms"].as_f64().unwrap() >= 0.0);
        assert!(record["time"].as_str().unwrap().ends_with('Z'));
    }
    client.cancel().await.unwrap();

    control.close(&id).await.unwrap();
    let gone = control.status(&id).await.unwrap_err();
    assert_eq!(code_of(&gone), 404);
    assert!(gone.to_string().contains("unknown episode"), "{gone}");
    let again = control.close(&id).await.unwrap_err();
    assert_eq!(code_of(&again), 404);
    // An empty id is named as such, not taken for an episode called "".
    for path in ["/episodes//trajectory", "/episodes//prompt"] {
        let (status, body) = status_and_json(http().get(control.url(path))).await;
        assert_eq!(status, 404, "{body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("no episode id in the request"),
            "{path}: {body}"
        );
    }

    // The file outlives the episode and is served from disk. It is the whole episode: a
    // header naming where it came from, the same step records, and the final status with
    // what the environment revealed.
    let file = std::fs::read_to_string(dir.join(format!("{id}.jsonl"))).unwrap();
    let lines: Vec<&str> = file.lines().collect();
    let header: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(header["record"], "header");
    assert_eq!(header["episode"], json!(id));
    assert_eq!(
        (&header["env"], &header["task"], &header["max_turns"]),
        (
            &json!("wordle"),
            &json!("test-0000"),
            &json!(status.max_turns)
        )
    );
    assert_eq!(header["seed"], json!(created.seed));
    assert_eq!(header["options"], json!({}));
    assert_eq!(header["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(lines[1..4].join("\n") + "\n", body);
    let end: Value = serde_json::from_str(lines[4]).unwrap();
    assert_eq!(end["record"], "end");
    assert_eq!(end["status"]["answer"], "serif");
    assert_eq!(end["status"]["return"], json!(status.return_));
    assert_eq!(lines.len(), 5);
    let from_disk = server.trajectory(&id).await;
    assert_eq!(from_disk, body);
    let traversal = http()
        .get(server.url("/episodes/..%2F..%2Fetc%2Fpasswd/trajectory"))
        .send()
        .await
        .unwrap();
    assert_eq!(traversal.status(), 404);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn bad_requests_get_a_sentence() {
    let server = HttpServer::start(&["wordle"]);
    let post = |body: &'static str| {
        http()
            .post(server.url("/episodes"))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let cases = [
        ("{bad json", "not a valid episode request"),
        (
            r#"{"seed": "abc"}"#,
            "invalid type: string \"abc\", expected u64",
        ),
        (r#"{"seed": -1}"#, "expected u64"),
        (r#"{"sede": 1}"#, "unknown field `sede`"),
        (r#"{"env": "chess"}"#, "unknown environment \"chess\""),
        (r#"{"task": "train-99999"}"#, "unknown task \"train-99999\""),
        (
            r#"{"task": "train-0000", "split": "test"}"#,
            "is in the train split, not test",
        ),
        (r#"{"split": "validation"}"#, "unknown variant `validation`"),
        (
            r#"{"options": {"reward": "dense"}}"#,
            "invalid Wordle options",
        ),
        (r#"[1, 2]"#, "not a valid episode request"),
    ];
    for (body, expected) in cases {
        let (status, message) = error_of(post(body).await.unwrap()).await;
        assert_eq!(status, 400, "{body}");
        assert!(message.contains(expected), "{body}: {message}");
    }
    // An empty body is a request for a default episode.
    assert_eq!(post("").await.unwrap().status(), 201);
    // Oversized bodies are refused before parsing.
    let huge = format!("{{\"task\": \"{}\"}}", "x".repeat(200_000));
    let response = http()
        .post(server.url("/episodes"))
        .body(huge)
        .send()
        .await
        .unwrap();
    let (status, message) = error_of(response).await;
    assert_eq!(status, 413);
    assert!(message.contains("at most"), "{message}");

    // Malformed MCP requests are answered, and the server keeps serving.
    let response = http()
        .post(server.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert!(response.status().is_client_error(), "{}", response.status());
    let tasks = http()
        .get(server.url("/tasks?split=nope"))
        .send()
        .await
        .unwrap();
    let (status, message) = error_of(tasks).await;
    assert_eq!(status, 400);
    assert!(message.contains("split=train"), "{message}");
    let episode = server.create(NewEpisode::default()).await;
    let export = server
        .control()
        .document(&episode.id, "notebook")
        .await
        .unwrap_err();
    assert_eq!(code_of(&export), 404);
    assert!(
        export
            .to_string()
            .contains("wordle episodes export: nothing"),
        "{export}"
    );
    let healthy = http().get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(healthy.status(), 200);
}

#[tokio::test]
async fn task_lists_are_ids_only_and_disjoint() {
    let server = HttpServer::start(&["wordle"]);
    let control = server.control();
    let train = control.tasks(None, Split::Train).await.unwrap();
    let test = control.tasks(None, Split::Test).await.unwrap();
    assert_eq!((train.env.as_str(), train.split), ("wordle", Split::Train));
    assert_eq!(test.split, Split::Test);
    assert_eq!(train.tasks.len(), 1881);
    assert_eq!(test.tasks.len(), 434);
    assert!(train.tasks.iter().all(|id| !test.tasks.contains(id)));
    // Ids name tasks; they never carry the answer.
    let text = format!("{:?}{:?}", train.tasks, test.tasks);
    for answer in ["light", "serif", "crane", "apple"] {
        assert!(!text.contains(answer));
    }
}

#[tokio::test]
async fn capacity_is_enforced_with_503() {
    let server = HttpServer::start(&["wordle", "--max-episodes", "2"]);
    let first = server.create(NewEpisode::default()).await;
    server.create(NewEpisode::default()).await;
    let full = server
        .control()
        .create_episode(&NewEpisode::default())
        .await
        .unwrap_err();
    assert_eq!(code_of(&full), 503);
    assert!(
        full.to_string().contains("maximum of 2 live episodes"),
        "{full}"
    );
    // Sessions that would need a new episode get a protocol error, not a hang.
    let client = server.legacy_client("/mcp").await;
    let error = client
        .call_tool(call("guess", word("crane")))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("maximum of 2 live episodes"), "{error}");
    // Deleting frees a place.
    server.close(&first.id).await;
    let result = guess(&client, "crane").await;
    assert_eq!(step(&result)["turn"], 1);
    client.cancel().await.unwrap();
}

/// A finished episode frees its place at once and stays readable until newer finished ones
/// push it out of `--max-finished`.
#[tokio::test]
async fn a_finished_episode_frees_its_place_and_stays_readable() {
    let server = HttpServer::start(&[
        "wordle",
        "--max-episodes",
        "1",
        "--max-turns",
        "1",
        "--max-finished",
        "1",
    ]);
    let control = server.control();
    let first = server.create(NewEpisode::default()).await;
    let full = control
        .create_episode(&NewEpisode::default())
        .await
        .unwrap_err();
    assert_eq!(code_of(&full), 503);
    let last = control
        .call(&first.id, "guess", json!({"word": "crane"}))
        .await
        .unwrap();
    assert!(last.done && last.truncated, "{last:?}");
    // Its place is free; it still reads as it ended.
    let second = server.create(NewEpisode::default()).await;
    let status = control.status(&first.id).await.unwrap();
    assert!(status.done && status.turn == 1, "{status:?}");
    assert_eq!(
        control.trajectory(&first.id).await.unwrap().lines().count(),
        1
    );
    let again = control
        .call(&first.id, "guess", json!({"word": "slate"}))
        .await
        .unwrap();
    assert!(again.is_error && again.turn == 1, "{again:?}");
    let listed = server.get_json("/episodes").await;
    assert_eq!(listed["total"], 2, "{listed}");
    let metrics = server.metrics().await;
    assert!(metrics.contains("mcpgym_episodes_live 1"), "{metrics}");
    assert!(
        metrics.contains("mcpgym_episodes_finished_held 1"),
        "{metrics}"
    );
    // A newer finished episode pushes it out of the one place for finished ones.
    control
        .call(&second.id, "guess", json!({"word": "crane"}))
        .await
        .unwrap();
    let forgotten = control.status(&first.id).await.unwrap_err();
    assert_eq!(code_of(&forgotten), 404);
    assert!(
        forgotten.to_string().contains("--max-finished"),
        "{forgotten}"
    );
    let metrics = server.metrics().await;
    assert!(
        metrics.contains("mcpgym_episodes_finished_dropped_total 1"),
        "{metrics}"
    );
    assert!(control.status(&second.id).await.unwrap().done);
}

/// One environment at its own limit refuses with a sentence naming it, its limit and what
/// holds it, while another environment of the same server still starts; a limit for an
/// environment the server does not host stops it at start.
#[tokio::test]
async fn limits_per_environment_refuse_one_environment_and_not_another() {
    let server = HttpServer::start(&["serve", "--max-episodes", "100,wordle=2"]);
    let control = server.control();
    for _ in 0..2 {
        server.create(NewEpisode::default().env("wordle")).await;
    }
    let full = control
        .create_episode(&NewEpisode::default().env("wordle"))
        .await
        .unwrap_err();
    assert_eq!(code_of(&full), 503);
    let sentence = full.to_string();
    assert!(
        sentence.contains("maximum of 2 live wordle episodes")
            && sentence.contains("0 of them unused for a minute")
            && sentence.contains("--max-episodes wordle=N"),
        "{sentence}"
    );
    server.create(NewEpisode::default().env("hilo")).await;
    let metrics = server.metrics().await;
    assert!(metrics.contains("mcpgym_episodes_live 3"), "{metrics}");

    let refused = std::process::Command::new(crate::common::BIN)
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--max-episodes",
            "chess=3",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--max-episodes names \"chess\", which this server does not host"),
        "{stderr}"
    );
}

/// A retried call with the same idempotency key gets the first answer and plays no second
/// step; the answer can be asked for by its key; a key that cannot be one is refused.
#[tokio::test]
async fn a_retried_call_with_its_idempotency_key_plays_once() {
    let server = HttpServer::start(&["wordle"]);
    let episode = server.create(NewEpisode::default()).await;
    let url = server.url(&format!("/episodes/{}/call", episode.id));
    let call = |key: &str, word: &str| {
        http()
            .post(&url)
            .header("idempotency-key", key)
            .json(&json!({"tool": "guess", "arguments": {"word": word}}))
    };
    let (status, first) = status_and_json(call("key-1", "crane")).await;
    assert_eq!(status, 200, "{first}");
    // The retry (even with other arguments, as a confused client might send) is the same
    // answer, and no turn is played.
    let (_, again) = status_and_json(call("key-1", "slate")).await;
    assert_eq!(again, first);
    let (_, next) = status_and_json(call("key-2", "slate")).await;
    assert_eq!(
        (first["turn"].as_u64(), next["turn"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(server.trajectory(&episode.id).await.lines().count(), 2);
    let asked = server
        .get_json(&format!("/episodes/{}/calls/key-1", episode.id))
        .await;
    assert_eq!(asked, first);
    let (status, missing) = status_and_json(
        http().get(server.url(&format!("/episodes/{}/calls/never-sent", episode.id))),
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        missing["error"]
            .as_str()
            .unwrap()
            .contains("answered no call with idempotency key"),
        "{missing}"
    );
    let (status, bad) = status_and_json(call(&"k".repeat(200), "crane")).await;
    assert_eq!(status, 400);
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .contains("1 to 128 visible ASCII"),
        "{bad}"
    );
}

#[tokio::test]
async fn idle_episodes_are_reaped() {
    let server = HttpServer::start(&["wordle", "--idle-ttl", "1"]);
    let control = server.control();
    let kept = server.create(NewEpisode::default()).await;
    let dropped = server.create(NewEpisode::default()).await;
    // Keep one busy for longer than the TTL; leave the other idle.
    for _ in 0..8 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        control.status(&kept.id).await.unwrap();
    }
    let reaped = control.status(&dropped.id).await.unwrap_err();
    assert_eq!(code_of(&reaped), 404);
    let metrics = server.metrics().await;
    assert!(metrics.contains("mcpgym_episodes_live 1"), "{metrics}");
    assert!(
        metrics.contains("mcpgym_episodes_started_total{env=\"wordle\"} 2"),
        "{metrics}"
    );
}

#[tokio::test]
async fn token_is_required_when_set() {
    let server = HttpServer::start(&["wordle", "--token", "s3cret"]);
    let url = server.url("/episodes");
    let (status, message) =
        error_of(http().post(&url).json(&json!({})).send().await.unwrap()).await;
    assert_eq!(status, 401);
    assert!(message.contains("Authorization: Bearer"), "{message}");
    let wrong = http()
        .post(&url)
        .bearer_auth("guess")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(wrong.headers()["www-authenticate"], "Bearer");
    let right = ControlClient::new(&server.base, Some("s3cret")).unwrap();
    let created = right.create_episode(&NewEpisode::default()).await.unwrap();
    right.status(&created.id).await.unwrap();
    // The scheme is case-insensitive.
    for scheme in ["bearer", "BEARER"] {
        let response = http()
            .post(&url)
            .header("authorization", format!("{scheme} s3cret"))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "{scheme}");
    }
    let mcp = http()
        .post(server.url("/mcp"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status(), 401);
    let metrics = http().get(server.url("/metrics")).send().await.unwrap();
    assert_eq!(metrics.status(), 401);
    // Probes need no token.
    assert_eq!(
        http()
            .get(server.url("/healthz"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}

#[test]
fn refuses_to_listen_beyond_loopback_without_a_token() {
    let stderr = start_fails(&["wordle", "--http", "0.0.0.0:0"]);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0 without a token"),
        "{stderr}"
    );
}

#[tokio::test]
async fn foreign_origins_and_hosts_are_refused() {
    let server = HttpServer::start(&["wordle", "--allow-origin", "https://app.example"]);
    let with_origin = |path: &str, origin: &'static str| {
        http()
            .post(server.url(path))
            .header("origin", origin)
            .header("accept", "application/json, text/event-stream")
            .json(&json!({}))
            .send()
    };
    for path in ["/episodes", "/mcp"] {
        let (status, message) =
            error_of(with_origin(path, "https://evil.example").await.unwrap()).await;
        assert_eq!(status, 403, "{path}");
        assert!(
            message.contains("--allow-origin https://evil.example"),
            "{message}"
        );
    }
    assert_eq!(
        with_origin("/episodes", "http://localhost:6274")
            .await
            .unwrap()
            .status(),
        201
    );
    assert_eq!(
        with_origin("/episodes", "https://app.example")
            .await
            .unwrap()
            .status(),
        201
    );
    // DNS rebinding: a loopback server answers loopback names only.
    let rebound = http()
        .get(server.url("/healthz"))
        .header("host", "attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
}

#[tokio::test]
async fn metrics_count_calls_and_finished_episodes() {
    let server = HttpServer::start(&["wordle", "--max-turns", "2"]);
    let client = server.legacy_client("/mcp").await;
    guess(&client, "crane").await;
    let last = guess(&client, "sloth").await;
    assert_eq!(step(&last)["truncated"], true);
    let metrics = server.metrics().await;
    assert!(
        metrics.contains("mcpgym_tool_calls_total{env=\"wordle\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("mcpgym_episodes_finished_total{env=\"wordle\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("mcpgym_tool_call_duration_seconds_count{env=\"wordle\"} 2"),
        "{metrics}"
    );
    client.cancel().await.unwrap();
}

/// What a client that opens a connection and stops mid-request sends.
const HALF_SENT_HEAD: &[u8] = b"POST /episodes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le";
/// A complete head announcing a body of which only the first byte comes.
const STALLED_BODY: &[u8] = b"POST /episodes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{";
const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_stalled_and_idle_connections_are_closed() {
    let server = HttpServer::start(&[
        "wordle",
        "--header-timeout",
        "1",
        "--keep-alive-timeout",
        "2",
    ]);
    let addr = server.addr();
    let mut half_sent = Vec::new();
    let mut idle = Vec::new();
    let mut stalled = Vec::new();
    for _ in 0..200 {
        half_sent.push(raw_connection(addr, HALF_SENT_HEAD).await);
        let mut connection = raw_connection(addr, HEALTHZ).await;
        let response = read_response(&mut connection).await;
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        idle.push(connection);
    }
    for _ in 0..20 {
        stalled.push(raw_connection(addr, STALLED_BODY).await);
    }
    let bound = Duration::from_secs(30);
    let closing: Vec<_> = half_sent
        .into_iter()
        .chain(idle)
        .chain(stalled)
        .map(|mut connection| {
            tokio::spawn(async move { read_until_closed(&mut connection, bound).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for handle in closing {
        outcomes.push(handle.await.unwrap());
    }
    let open = outcomes.iter().filter(|o| o.is_none()).count();
    assert_eq!(
        open, 0,
        "{open} of 420 connections were still open after {bound:?}"
    );
    // Nothing was answered to the half-sent requests.
    assert!(
        outcomes[..400]
            .iter()
            .all(|o| o.as_ref().is_some_and(|r| r.is_empty()))
    );
    // The server still serves.
    let health = http().get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_server_whatever_clients_hold() {
    // Timeouts far beyond the test: only the shutdown deadline can end these connections.
    let mut server = HttpServer::start(&[
        "wordle",
        "--header-timeout",
        "600",
        "--keep-alive-timeout",
        "600",
    ]);
    let addr = server.addr();
    let created = server.create(NewEpisode::default()).await;
    let _half_sent = raw_connection(addr, HALF_SENT_HEAD).await;
    let _stalled = raw_connection(addr, STALLED_BODY).await;
    let mut idle = raw_connection(addr, HEALTHZ).await;
    read_response(&mut idle).await;
    let client = server.legacy_client(&created.mcp_url).await;
    guess(&client, "crane").await;
    let status = server
        .terminate(Duration::from_secs(20))
        .expect("the server exits within 20 s of SIGTERM");
    assert!(status.success(), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_limit_holds() {
    let server = HttpServer::start(&[
        "wordle",
        "--max-connections",
        "4",
        "--header-timeout",
        "600",
        "--keep-alive-timeout",
        "600",
    ]);
    let addr = server.addr();
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut connection = raw_connection(addr, HEALTHZ).await;
        read_response(&mut connection).await;
        held.push(connection);
    }
    let mut waiting = raw_connection(addr, HEALTHZ).await;
    // Not served while four connections are open (a served request answers in milliseconds).
    let early = tokio::time::timeout(Duration::from_secs(1), read_response(&mut waiting)).await;
    assert!(early.is_err(), "a fifth connection was served: {early:?}");
    // Closing one lets it in.
    drop(held.pop());
    let response = tokio::time::timeout(Duration::from_secs(20), read_response(&mut waiting))
        .await
        .expect("served once a connection closed");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_stop_exactly_at_max_episodes() {
    let server = HttpServer::start(&["wordle", "--max-episodes", "10"]);
    let url = server.url("/episodes");
    // All 50 in flight before any is answered.
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(50));
    let creates: Vec<_> = (0..50)
        .map(|_| {
            let (url, start) = (url.clone(), start.clone());
            tokio::spawn(async move {
                let request = http().post(&url).json(&json!({}));
                start.wait().await;
                request.send().await.unwrap()
            })
        })
        .collect();
    let mut created = 0;
    let mut refused = 0;
    for handle in creates {
        let response = handle.await.unwrap();
        match response.status().as_u16() {
            201 => created += 1,
            503 => {
                let (_, message) = error_of(response).await;
                assert!(message.contains("maximum of 10 live episodes"), "{message}");
                refused += 1;
            }
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!((created, refused), (10, 40));
    let health: Value = http()
        .get(server.url("/healthz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["episodes"], 10);
    // Sessions that would start an episode are refused the same way.
    let call = raw_stateless_call(
        &server.url("/mcp"),
        "guess",
        json!({"word": "crane"}),
        json!({}),
    )
    .await;
    let message = call["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("maximum of 10 live episodes"), "{call}");
}

/// A POST to an MCP endpoint with the headers the transport requires and a raw body.
async fn raw_mcp_post(url: &str, body: &'static str) -> reqwest::Response {
    http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn malformed_mcp_bodies_get_json_rpc_errors() {
    let server = HttpServer::start(&["wordle"]);
    let created = server.create(NewEpisode::default()).await;
    let episode_mcp = server.url(&created.mcp_url);
    for url in [server.url("/mcp"), server.url("/wordle/mcp"), episode_mcp] {
        for (body, code) in [
            ("{\"jsonrpc\": \"2.0\", \"id\": 1,", -32700),
            ("[1, 2]", -32600),
        ] {
            let response = raw_mcp_post(&url, body).await;
            assert_eq!(response.status(), 400, "{url} {body}");
            let reply: Value = response.json().await.expect("a JSON-RPC error body");
            assert_eq!(reply["jsonrpc"], "2.0");
            assert_eq!(reply["id"], Value::Null);
            assert_eq!(reply["error"]["code"], code, "{url} {body}: {reply}");
            assert!(
                reply["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
        }
    }
}

#[tokio::test]
async fn trajectory_records_stay_within_their_budget() {
    let dir = temp_dir("clipped");
    let dir_arg = dir.to_str().unwrap().to_owned();
    let server = HttpServer::start(&["wordle", "--trajectory-dir", &dir_arg]);
    let id = server.create(NewEpisode::default()).await.id;
    let long_word = format!("START{}END", "q".repeat(1_000_000));
    let reply = raw_stateless_call(
        &server.url("/mcp"),
        "guess",
        json!({"word": long_word}),
        json!({"mcpgym/episode": id}),
    )
    .await;
    assert!(reply.get("result").is_some(), "{reply}");
    let from_memory = server.trajectory(&id).await;
    let file = dir.join(format!("{id}.jsonl"));
    let mut from_file = String::new();
    for _ in 0..200 {
        // The header, then the step record.
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.ends_with('\n') && text.lines().count() == 2 {
            from_file = text.lines().nth(1).unwrap().to_owned();
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for text in [&from_memory, &from_file] {
        assert!(text.len() < 70 * 1024, "a record of {} bytes", text.len());
        let record: Value = serde_json::from_str(text.trim_end()).unwrap();
        let word = record["arguments"]["word"].as_str().unwrap();
        assert!(
            word.starts_with("STARTqq") && word.ends_with("qqEND"),
            "{word:.100}"
        );
        assert!(word.contains("bytes]…"), "the cut is said");
        assert!(
            record["cut_bytes"]["arguments"].as_u64().unwrap() > 900_000,
            "{}",
            record["cut_bytes"]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_service_holds_connections_the_same_way() {
    let mut service = HttpServer::start(&["sandbox", "--pool", "0", "--token", "s3cret"]);
    let folder = std::env::temp_dir().join(format!("mcpgym-sandbox-{}", service.pid()));
    assert!(folder.is_dir(), "{folder:?}");
    // The bearer scheme in any case.
    for scheme in ["Bearer", "bearer"] {
        let list = http()
            .get(service.url("/sandboxes"))
            .header("authorization", format!("{scheme} s3cret"))
            .send()
            .await
            .unwrap();
        assert_eq!(list.status(), 200, "{scheme}");
    }
    let addr = service.addr();
    let _half_sent =
        raw_connection(addr, b"POST /sandboxes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Ap").await;
    let _stalled = raw_connection(
        addr,
        b"POST /sandboxes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    )
    .await;
    let status = service
        .terminate(Duration::from_secs(20))
        .expect("the service exits within 20 s of SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(!folder.exists(), "{folder:?} was left behind");
}

#[tokio::test]
async fn a_game_played_through_the_step_route() {
    let server = HttpServer::start(&["wordle"]);
    let control = server.control();
    let id = server
        .create(NewEpisode::default().task("test-0000"))
        .await
        .id;
    let call_url = server.url(&format!("/episodes/{id}/call"));

    let prompt = control.prompt(&id).await.unwrap();
    assert!(prompt.contains("guess(word)"), "{prompt}");
    let tools = control.tools(Some("wordle")).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["guess", "history"]);

    let mut sum = 0.0;
    for word in ["xqzvb", "crane", "serif"] {
        let step = control
            .call(&id, "guess", json!({"word": word}))
            .await
            .unwrap();
        assert_eq!(step.episode, id);
        assert_eq!(step.is_error, word == "xqzvb", "{step:?}");
        assert_eq!(step.done, word == "serif", "{step:?}");
        assert!(step.content[0].as_text().is_some(), "{step:?}");
        sum += step.reward;
        assert_eq!(step.return_, sum);
    }
    let status = server.status(&id).await;
    assert_eq!(status.return_, sum);
    assert_eq!(status.turn, 3);

    // Once done, a call is refused and pays nothing.
    let frozen = control.call(&id, "history", json!({})).await.unwrap();
    assert_eq!((frozen.is_error, frozen.reward), (true, 0.0));
    let unknown = control.call(&id, "nope", json!({})).await.unwrap_err();
    assert_eq!(code_of(&unknown), 400);
    assert!(
        unknown.to_string().contains("unknown tool \"nope\""),
        "{unknown}"
    );
    let elsewhere = control.call("0123", "guess", json!({})).await.unwrap_err();
    assert_eq!(code_of(&elsewhere), 404);
    assert!(
        elsewhere.to_string().contains("unknown episode"),
        "{elsewhere}"
    );
    let chess = control.tools(Some("chess")).await.unwrap_err();
    assert_eq!(code_of(&chess), 400);
    assert!(chess.to_string().contains("unknown environment"), "{chess}");

    // Bodies the client would never send.
    let refusals = [
        (json!({"arguments": {}}), "missing field `tool`"),
        (
            json!({"tool": "guess", "extra": 1}),
            "unknown field `extra`",
        ),
        (json!({"tool": "guess", "arguments": [1]}), "send JSON like"),
    ]
    .map(|(body, expected)| (http().post(&call_url).json(&body), expected));
    for (request, expected) in refusals {
        let (status, message) = error_of(request.send().await.unwrap()).await;
        assert_eq!(status, 400, "{expected}");
        assert!(message.contains(expected), "{message}");
    }
}
