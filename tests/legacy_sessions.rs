//! Legacy MCP sessions (`initialize`, then `Mcp-Session-Id`) on the direct path: the same
//! bytes as rmcp for every method, one binding shared with rmcp when it takes a session over,
//! sessions ended by DELETE and by the idle reaper.

use crate::common::*;
use serde_json::{Value, json};

/// One raw HTTP exchange: status, headers (but the date), body.
#[derive(Debug, PartialEq)]
pub(crate) struct Exchange {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

/// The session id header of a legacy session.
const SESSION: &str = "mcp-session-id";

pub(crate) async fn post(url: &str, session: Option<&str>, body: &Value) -> Exchange {
    let mut request = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header(SESSION, session)
            .header("mcp-protocol-version", "2025-06-18");
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter(|(name, _)| *name != "date")
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
        .collect();
    let body = response.text().await.unwrap();
    Exchange {
        status,
        headers,
        body,
    }
}

fn header<'a>(exchange: &'a Exchange, name: &str) -> Option<&'a str> {
    exchange
        .headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The JSON-RPC message in an event-stream reply.
pub(crate) fn message(exchange: &Exchange) -> Value {
    let data = exchange
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .find(|data| !data.is_empty())
        .unwrap_or_else(|| panic!("no message in {exchange:?}"));
    serde_json::from_str(data).unwrap()
}

fn initialize(id: u32) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"roots": {"listChanged": true}},
        "clientInfo": {"name": "test", "version": "1"}}})
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub(crate) fn tool_call(id: u32, name: &str, arguments: Value) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// Opens a session on `path`; its id and the `initialize` exchange.
pub(crate) async fn open(server: &HttpServer, path: &str) -> (String, Exchange) {
    let init = post(&server.url(path), None, &initialize(1)).await;
    assert_eq!(init.status, 200, "{init:?}");
    let id = header(&init, SESSION).expect("a session id").to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let accepted = post(&server.url(path), Some(&id), &initialized).await;
    assert_eq!(accepted.status, 202, "{accepted:?}");
    (id, init)
}

/// What a session sees, in order, for every method the direct path answers and malformed
/// requests it passes on: the games, refused calls, the resource and prompt listings,
/// notifications, unknown and missing sessions. (A request rmcp takes the session over for
/// is not among them: rmcp then numbers the session's event ids afresh, as on any restore.)
async fn script(server: &HttpServer, path: &str) -> Vec<Exchange> {
    let url = server.url(path);
    let (session, init) = open(server, path).await;
    let s = Some(session.as_str());
    let mut seen = vec![init];
    let mut steps = vec![
        request(json!(2), "tools/list", json!({})),
        json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
        tool_call(3, "history", json!({})),
    ];
    for (n, word) in [
        "crane", "slate", "pious", "dumpy", "wight", "fjord", "crane",
    ]
    .iter()
    .enumerate()
    {
        steps.push(tool_call(10 + n as u32, "guess", json!({"word": word})));
    }
    steps.extend([
        tool_call(20, "guess", json!({"word": "zzzzz"})),
        tool_call(21, "guess", json!({"wrd": "crane"})),
        tool_call(22, "guess", json!(7)),
        tool_call(23, "no_such_tool", json!({})),
        json!({"jsonrpc": "2.0", "id": 24, "method": "tools/call", "params": {"name": "history"}}),
        request(
            json!(25),
            "tools/call",
            json!({"name": "guess", "arguments": {"word": "crane"}, "_meta": {"mcpgym/episode": 5}}),
        ),
        request(
            json!(26),
            "tools/call",
            json!({"name": "guess", "arguments": {"word": "crane"},
                   "_meta": {"mcpgym/episode": "0123456789abcdef0123456789abcdef"}}),
        ),
        tool_call(27, "reset", json!({})),
        request(
            json!(28),
            "tools/call",
            json!({"name": "guess", "arguments": {"word": "crane"}, "_meta": {"progressToken": 1}}),
        ),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 3, "reason": "test"}}),
        request(json!(29), "resources/list", json!({})),
        request(json!(30), "resources/templates/list", json!({"cursor": "x"})),
        request(json!(31), "prompts/list", json!({})),
        json!({"jsonrpc": "2.0", "id": 32, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 33, "method": "tools/call", "params": {"name": "guess"}}),
        json!({"jsonrpc": "2.0", "id": 34, "method": "tools/list", "params": {"cursor": "x"}}),
        request(json!(35), "logging/setLevel", json!({"level": "info"})),
        // Malformed: rmcp words the errors, and holds no session for them.
        json!({"jsonrpc": "2.0", "id": 36}),
        request(json!(37), "logging/setLevel", json!({"level": "loud"})),
        request(json!(38), "tools/list", json!({"cursor": 5})),
        tool_call(39, "history", json!({})),
    ]);
    for step in &steps {
        seen.push(post(&url, s, step).await);
    }
    // No session, an unknown one, and a malformed one.
    seen.push(post(&url, None, &request(json!(50), "tools/list", json!({}))).await);
    let unknown = "00000000-0000-4000-8000-000000000000";
    seen.push(
        post(
            &url,
            Some(unknown),
            &request(json!(51), "tools/list", json!({})),
        )
        .await,
    );
    seen.push(post(&url, Some("nope"), &request(json!(52), "ping", json!({}))).await);
    // The ids differ between servers; the rest must not.
    for exchange in &mut seen {
        exchange.body = exchange.body.replace(&session, "SESSION");
        for (_, value) in &mut exchange.headers {
            *value = value.replace(&session, "SESSION");
        }
        exchange.body = hex_ids_replaced(&exchange.body);
    }
    seen
}

/// `text` with every 32-digit hex id (episode ids) replaced by `EPISODE`.
fn hex_ids_replaced(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            .count();
        if run == 32 {
            out.push_str("EPISODE");
            i += 32;
        } else if run > 0 {
            out.push_str(&text[i..i + run]);
            i += run;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

#[tokio::test]
async fn direct_answers_are_byte_for_byte_rmcps() {
    let flags = ["wordle", "--reset-tool", "--seed", "3"];
    let direct = HttpServer::start_with_log(&flags, "mcpgym_shared::legacy=trace");
    let rmcp = HttpServer::start(&[&flags[..], &["--rmcp-sessions"]].concat());
    let (a, b) = (script(&direct, "/mcp").await, script(&rmcp, "/mcp").await);
    assert_eq!(a.len(), b.len());
    for (n, (direct, rmcp)) in a.iter().zip(&b).enumerate() {
        assert_eq!(direct, rmcp, "exchange {n} differs");
    }
    assert!(direct.log_contains("legacy session opened directly"));
    assert!(direct.log_contains("legacy session tool call answered directly"));
    // The script played a game: a guess reached the episode and was scored.
    assert!(
        a.iter().any(|e| e.body.contains("\"turn\":7")),
        "{:?}",
        a.iter().map(|e| &e.body).collect::<Vec<_>>()
    );

    // An episode's own endpoint, and the standalone stream.
    for server in [&direct, &rmcp] {
        let episode = server.create(NewEpisode::default().seed(5)).await;
        let path = episode.mcp_url.clone();
        let (session, init) = open(server, &path).await;
        assert_eq!(message(&init)["result"]["serverInfo"]["name"], "mcpgym");
        let listed = post(
            &server.url(&path),
            Some(&session),
            &request(json!(2), "tools/list", json!({})),
        )
        .await;
        assert_eq!(
            tool_names(&message(&listed)["result"]),
            ["guess", "history"]
        );
        let played = post(
            &server.url(&path),
            Some(&session),
            &tool_call(3, "guess", json!({"word": "crane"})),
        )
        .await;
        assert_eq!(
            message(&played)["result"]["_meta"]["mcpgym/episode"],
            json!(episode.id)
        );
    }
    assert_eq!(standalone(&direct).await, standalone(&rmcp).await);
}

/// A session's standalone stream (`GET`): status, headers (but the date) and first event.
async fn standalone(server: &HttpServer) -> (u16, Vec<String>, Vec<u8>) {
    let (session, _) = open(server, "/mcp").await;
    let mut response = http()
        .get(server.url("/mcp"))
        .header("accept", "text/event-stream")
        .header(SESSION, &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    let mut headers: Vec<_> = response
        .headers()
        .iter()
        .filter(|(name, _)| *name != "date")
        .map(|(n, v)| format!("{n}: {}", v.to_str().unwrap()))
        .collect();
    headers.sort();
    let status = response.status().as_u16();
    let first = response.chunk().await.unwrap().unwrap().to_vec();
    (status, headers, first)
}

#[tokio::test]
async fn a_session_rmcp_takes_over_keeps_its_episode() {
    let server = HttpServer::start(&["wordle"]);
    let url = server.url("/mcp");
    let (session, _) = open(&server, "/mcp").await;
    let first = post(
        &url,
        Some(&session),
        &tool_call(1, "guess", json!({"word": "crane"})),
    )
    .await;
    let first = message(&first);
    let episode = &first["result"]["_meta"]["mcpgym/step"]["episode"];
    // A method the direct path passes on: rmcp restores the session from the table.
    let completion = request(
        json!(2),
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": "b"}}),
    );
    let refused = post(&url, Some(&session), &completion).await;
    assert_eq!(refused.status, 200, "{refused:?}");
    assert!(message(&refused)["error"].is_object(), "{refused:?}");
    // rmcp answers the next call, on the session's episode.
    let second = post(
        &url,
        Some(&session),
        &tool_call(3, "guess", json!({"word": "slate"})),
    )
    .await;
    let second = message(&second);
    assert_eq!(
        &second["result"]["_meta"]["mcpgym/step"]["episode"],
        episode
    );
    assert_eq!(second["result"]["_meta"]["mcpgym/step"]["turn"], 2);
}

#[tokio::test]
async fn sessions_end_on_delete_and_when_idle() {
    let server = HttpServer::start(&["wordle", "--idle-ttl", "1"]);
    let url = server.url("/mcp");
    let ping = request(json!(1), "ping", json!({}));

    let (deleted, _) = open(&server, "/mcp").await;
    assert_eq!(post(&url, Some(&deleted), &ping).await.status, 200);
    let response = http()
        .delete(&url)
        .header(SESSION, &deleted)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 202);
    let gone = post(&url, Some(&deleted), &ping).await;
    assert_eq!(gone.status, 404, "{gone:?}");

    let (idle, _) = open(&server, "/mcp").await;
    let (used, _) = open(&server, "/mcp").await;
    for _ in 0..10 {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        assert_eq!(post(&url, Some(&used), &ping).await.status, 200);
    }
    let reaped = post(&url, Some(&idle), &ping).await;
    assert_eq!(reaped.status, 404, "{reaped:?}");
    assert_eq!(post(&url, Some(&used), &ping).await.status, 200);
}

#[tokio::test]
async fn a_call_that_wants_progress_streams_it_through_rmcp_on_the_sessions_episode() {
    let server = HttpServer::start(&["jupyter", "--task", "classic/0"]);
    let url = server.url("/mcp");
    let (session, _) = open(&server, "/mcp").await;
    let cell = |id: u32, code: &str, meta: Value| {
        request(
            json!(id),
            "tools/call",
            json!({"name": "add_and_execute_code_cell", "arguments": {"code": code}, "_meta": meta}),
        )
    };
    // Answered directly: no progress wanted.
    let first = post(&url, Some(&session), &cell(1, "x = 41", json!({}))).await;
    let first = message(&first);
    let episode = first["result"]["_meta"]["mcpgym/step"]["episode"].clone();
    assert!(episode.is_string(), "{first}");
    // Progress wanted from an environment that reports it: rmcp streams the notifications
    // before the result, on the same episode.
    let code = "import time\ntime.sleep(3)\nprint(x + 1)";
    let streamed = post(
        &url,
        Some(&session),
        &cell(2, code, json!({"progressToken": "cell-2"})),
    )
    .await;
    let messages: Vec<Value> = streamed
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    let (last, before) = messages.split_last().expect("messages");
    assert!(
        before
            .iter()
            .any(|m| m["method"] == "notifications/progress"
                && m["params"]["progressToken"] == "cell-2"),
        "{messages:?}"
    );
    assert_eq!(last["result"]["_meta"]["mcpgym/step"]["episode"], episode);
    assert_eq!(last["result"]["_meta"]["mcpgym/step"]["turn"], 2);
    assert!(last.to_string().contains("42"), "{last}");
}

#[tokio::test]
async fn a_call_whose_client_leaves_still_runs_to_its_end() {
    let server = HttpServer::start(&["jupyter", "--task", "classic/0"]);
    let url = server.url("/mcp");
    let (session, _) = open(&server, "/mcp").await;
    let cell = |id: u32, code: &str| {
        request(
            json!(id),
            "tools/call",
            json!({"name": "add_and_execute_code_cell", "arguments": {"code": code}}),
        )
    };
    // The client gives up after half a second, mid-cell.
    let left = http()
        .post(&url)
        .timeout(std::time::Duration::from_millis(500))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header(SESSION, &session)
        .body(cell(1, "import time\ntime.sleep(2)\ny = 7").to_string())
        .send()
        .await;
    assert!(
        left.is_err(),
        "the call should outlast the client: {left:?}"
    );
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    // The cell ran to its end and its turn counts.
    let next = post(&url, Some(&session), &cell(2, "print(y * 6)")).await;
    let next = message(&next);
    assert!(next.to_string().contains("42"), "{next}");
    assert_eq!(next["result"]["_meta"]["mcpgym/step"]["turn"], 2);
}

/// Ends a legacy session as a client does.
async fn end_session(url: &str, session: &str) {
    let response = http()
        .delete(url)
        .header(SESSION, session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 202);
}

#[tokio::test]
async fn deleting_a_session_aborts_the_episode_it_started_and_no_other() {
    let server = HttpServer::start(&["wordle"]);
    let url = server.url("/mcp");
    let guess = tool_call(2, "guess", json!({"word": "crane"}));
    let (session, _) = open(&server, "/mcp").await;
    assert_eq!(post(&url, Some(&session), &guess).await.status, 200);
    let listed = server.get_json("/episodes").await;
    let started = listed["episodes"][0]["id"].as_str().unwrap().to_owned();
    // An episode started from outside and reached by its URL, with a session of its own.
    let outside = server.create(NewEpisode::default()).await;
    let path = format!("/episodes/{}/mcp", outside.id);
    let (bound, _) = open(&server, &path).await;
    assert_eq!(
        post(&server.url(&path), Some(&bound), &guess).await.status,
        200
    );

    end_session(&url, &session).await;
    end_session(&server.url(&path), &bound).await;
    let control = server.control();
    let mut status = control.status(&started).await.unwrap();
    for _ in 0..100 {
        if status.aborted {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        status = control.status(&started).await.unwrap();
    }
    assert!(
        status.done && status.aborted && status.turn == 1,
        "{status:?}"
    );
    let kept = control.status(&outside.id).await.unwrap();
    assert!(!kept.done && kept.turn == 1, "{kept:?}");
    let metrics = server.metrics().await;
    assert!(metrics.contains("mcpgym_episodes_live 1"), "{metrics}");
    assert!(
        metrics.contains("mcpgym_episodes_finished_held 1"),
        "{metrics}"
    );
}

/// Trainers' churn: many games, each through a session opened, played to its end and ended,
/// against a small cap; finished episodes hold no place, so the cap is never reached, and
/// then a Jupyter and a desktop episode start at once beside them.
#[tokio::test(flavor = "multi_thread")]
async fn churned_sessions_leave_every_environment_room() {
    let games = by_tier(2_000, 50_000);
    let server = HttpServer::start(&["serve", "--max-episodes", "64", "--max-turns", "1"]);
    let url = server.url("/wordle/mcp");
    let guess = tool_call(2, "guess", json!({"word": "crane"}));
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers: Vec<_> = (0..16)
        .map(|_| {
            let (url, guess, next) = (url.clone(), guess.clone(), next.clone());
            tokio::spawn(async move {
                while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < games {
                    let init = post(&url, None, &initialize(1)).await;
                    assert_eq!(init.status, 200, "{init:?}");
                    let session = header(&init, SESSION).unwrap().to_owned();
                    let played = post(&url, Some(&session), &guess).await;
                    assert_eq!(played.status, 200, "{played:?}");
                    assert!(played.body.contains("\"done\":true"), "{}", played.body);
                    end_session(&url, &session).await;
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    let control = server.control();
    let (jupyter, desktop) = (
        NewEpisode::default().env("jupyter"),
        NewEpisode::default().env("desktop"),
    );
    let (jupyter, desktop) = tokio::join!(
        control.create_episode(&jupyter),
        control.create_episode(&desktop),
    );
    jupyter.unwrap_or_else(|e| panic!("jupyter refused after the churn: {e}"));
    desktop.unwrap_or_else(|e| panic!("desktop refused after the churn: {e}"));
    let metrics = server.metrics().await;
    assert!(metrics.contains("mcpgym_episodes_live 2"), "{metrics}");
    assert!(
        metrics.contains(&format!(
            "mcpgym_episodes_finished_total{{env=\"wordle\"}} {games}"
        )),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_session_call_retried_with_its_idempotency_key_plays_once() {
    let server = HttpServer::start(&["wordle"]);
    let url = server.url("/mcp");
    let (session, _) = open(&server, "/mcp").await;
    let keyed = |id: u32, word: &str| {
        request(
            json!(id),
            "tools/call",
            json!({"name": "guess", "arguments": {"word": word},
                   "_meta": {"mcpgym/idempotency-key": "7d0e-retry"}}),
        )
    };
    let first = message(&post(&url, Some(&session), &keyed(2, "crane")).await);
    let again = message(&post(&url, Some(&session), &keyed(3, "slate")).await);
    assert_eq!(first["result"], again["result"]);
    assert_eq!(
        first["result"]["_meta"]["mcpgym/step"]["turn"], 1,
        "{first}"
    );
    let bad = request(
        json!(4),
        "tools/call",
        json!({"name": "guess", "arguments": {"word": "crane"},
               "_meta": {"mcpgym/idempotency-key": 7}}),
    );
    let refused = message(&post(&url, Some(&session), &bad).await);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("must be a string"),
        "{refused}"
    );
}
