//! Episodes across a restart: a server killed outright (SIGKILL) or stopped (SIGTERM) in the
//! middle of its episodes and started again on the same `--trajectory-dir` goes on with those
//! its log rebuilds exactly (Wordle) through the door that started each, keeps the answers of
//! their idempotency keys, and says of the others (a Jupyter kernel, a desktop) why they
//! ended. Nothing is paid twice.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;
use crate::legacy_sessions::{message, open, post as mcp_post, tool_call};
use crate::ors::{call_tool, created, episode_of as ors_episode, new_session, post_in};
use crate::wordle_http::answer_of;

/// A Wordle task and a word that is not its answer.
fn wordle_task() -> (&'static str, String, &'static str) {
    let task = "train-0005";
    let answer = answer_of(task);
    let wrong = ["crane", "slate", "pious"]
        .into_iter()
        .find(|word| *word != answer)
        .unwrap();
    (task, answer, wrong)
}

/// `POST /episodes/{id}/call` with an idempotency key: the step record as JSON.
async fn keyed_call(
    server: &HttpServer,
    id: &str,
    key: &str,
    tool: &str,
    arguments: Value,
) -> Value {
    json_body(
        http()
            .post(server.url(&format!("/episodes/{id}/call")))
            .header("Idempotency-Key", key)
            .json(&json!({ "tool": tool, "arguments": arguments })),
    )
    .await
}

/// Starts `mcpgym ARGS…` listening at `addr` (a server restarted where it was).
fn restart(args: &[&str], addr: &str) -> HttpServer {
    let mut command = Command::new(BIN);
    command.env("RUST_LOG", "warn").args(args);
    HttpServer::spawn_at(command, addr)
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpgym-restart-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_takes_up_its_episodes_through_every_door() {
    let dir = temp_dir("killed");
    let dir_arg = dir.display().to_string();
    let args = ["serve", "--trajectory-dir", &dir_arg];
    let server = HttpServer::start(&args);
    let addr = server.addr().to_string();
    let (task, answer, wrong) = wordle_task();
    let guess = |word: &str| json!({ "word": word });

    // The control plane, with a keyed call.
    let plain = server
        .create(NewEpisode::default().env("wordle").task(task))
        .await
        .id;
    let first = keyed_call(&server, &plain, "first-guess", "guess", guess(wrong)).await;
    assert_eq!(first["turn"], 1, "{first}");
    // A legacy MCP session, whose first call starts its episode.
    let mcp = server.url("/wordle/mcp");
    let (session, _) = open(&server, "/wordle/mcp").await;
    let reply =
        message(&mcp_post(&mcp, Some(&session), &tool_call(2, "guess", guess(wrong))).await);
    let in_session = reply["result"]["_meta"]["mcpgym/episode"]
        .as_str()
        .unwrap()
        .to_owned();
    // An ORS session.
    let sid = new_session(&server).await;
    created(post_in(&server, "/create", &sid).json(&json!({"split": "train", "index": 5}))).await;
    let result = call_tool(&server, "/wordle/call", &sid, "guess", guess(wrong)).await;
    let in_ors = ors_episode(&result);
    // OpenEnv: an episode by id over HTTP, and a named session reset over its WebSocket.
    let (_, reset) = status_and_json(
        http()
            .post(server.url("/wordle/reset"))
            .json(&json!({"seed": 3})),
    )
    .await;
    let by_id = reset["metadata"]["episode_id"].as_str().unwrap().to_owned();
    let action = json!({"type": "call_tool", "tool_name": "guess", "arguments": guess(wrong)});
    let (status, _) = status_and_json(
        http()
            .post(server.url("/wordle/step"))
            .json(&json!({ "action": action, "episode_id": by_id })),
    )
    .await;
    assert_eq!(status, 200);
    // The same address before and after the restart.
    let base = server.base.clone();
    let rpc = |id: u32, method: &str, params: Value| {
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        http().post(format!("{base}/wordle/mcp")).json(&body)
    };
    let named = json_body(rpc(1, "openenv/session/create", json!({}))).await;
    let named = named["result"]["session_id"].as_str().unwrap().to_owned();
    let ws = |base: &str| {
        format!(
            "{}/wordle/ws?session_id={named}",
            base.replacen("http://", "ws://", 1)
        )
    };
    let in_named = {
        let mut socket = ws_connect(&ws(&server.base)).await;
        let reset = ws_ask(&mut socket, json!({"type": "reset", "data": {"seed": 4}})).await;
        ws_ask(&mut socket, json!({"type": "step", "data": action})).await;
        reset["data"]["metadata"]["episode_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // A kernel and a display, one call each.
    let kernel = server.create(NewEpisode::default().env("jupyter")).await.id;
    let cell = server
        .control()
        .call(
            &kernel,
            "add_and_execute_code_cell",
            json!({"code": "x = 41"}),
        )
        .await
        .unwrap();
    assert!(!cell.is_error, "{}", cell.text());
    let desktop = server.create(NewEpisode::default().env("desktop")).await.id;
    server
        .control()
        .call(&desktop, "get_screen_size", json!({}))
        .await
        .unwrap();

    server.kill();
    let server = restart(&args, &addr);
    let control = server.control();

    // Each Wordle episode stands where it stood, live.
    for id in [&plain, &in_session, &in_ors, &by_id, &in_named] {
        let status = server.status(id).await;
        assert_eq!(
            (status.turn, status.done, status.aborted),
            (1, false, false),
            "{id}: {status:?}"
        );
    }
    // The keyed call's retry gets its first answer and plays nothing; the key is readable.
    let retried = keyed_call(&server, &plain, "first-guess", "guess", guess(wrong)).await;
    assert_eq!(retried, first);
    let (status, by_key) =
        status_and_json(http().get(server.url(&format!("/episodes/{plain}/calls/first-guess"))))
            .await;
    assert_eq!((status, &by_key), (200, &first));
    // It goes on, and the win is paid once: the return is the two lives' rewards.
    let win = control.call(&plain, "guess", guess(&answer)).await.unwrap();
    assert_eq!((win.turn, win.done), (2, true), "{}", win.text());
    let reward_before = first["reward"].as_f64().unwrap();
    assert!((win.return_ - (reward_before + win.reward)).abs() < 1e-9);
    assert!(win.reward > 0.5, "the win pays: {win:?}");
    let status = server.status(&plain).await;
    assert!((status.return_ - win.return_).abs() < 1e-9);
    assert_eq!(server.trajectory(&plain).await.lines().count(), 2);
    // The legacy session's next call plays its own episode.
    let reply =
        message(&mcp_post(&mcp, Some(&session), &tool_call(3, "guess", guess(wrong))).await);
    assert_eq!(
        reply["result"]["_meta"]["mcpgym/episode"],
        in_session.as_str(),
        "{reply}"
    );
    assert_eq!(
        reply["result"]["_meta"]["mcpgym/step"]["turn"], 2,
        "{reply}"
    );
    // So does the ORS session's.
    let result = call_tool(&server, "/wordle/call", &sid, "guess", guess(wrong)).await;
    assert_eq!(ors_episode(&result), in_ors);
    assert_eq!(result["output"]["metadata"]["turn"], 2, "{result}");
    // OpenEnv: the episode by id, and the named session over a new WebSocket and JSON-RPC.
    let (_, state) =
        status_and_json(http().get(server.url(&format!("/wordle/state?episode_id={by_id}")))).await;
    assert_eq!(state["step_count"], 1, "{state}");
    {
        let mut socket = ws_connect(&ws(&server.base)).await;
        let step = ws_ask(&mut socket, json!({"type": "step", "data": action})).await;
        assert_eq!(
            step["data"]["metadata"]["episode_id"],
            in_named.as_str(),
            "{step}"
        );
    }
    let call = json_body(rpc(
        2,
        "tools/call",
        json!({"name": "guess", "arguments": guess(wrong), "session_id": named}),
    ))
    .await;
    assert!(call.get("result").is_some(), "{call}");
    assert_eq!(server.status(&in_named).await.turn, 3, "{call}");

    // The kernel and the display are gone: their episodes say so, through every door.
    for (id, env, lost) in [
        (
            &kernel,
            "jupyter",
            "the server restarted; this episode's kernel was lost",
        ),
        (
            &desktop,
            "desktop",
            "the server restarted; this episode's display was lost",
        ),
    ] {
        let status = server.status(id).await;
        assert!(status.done && status.aborted, "{status:?}");
        assert_eq!(status.abort_reason.as_deref(), Some(lost));
        assert_eq!(status.turn, 1);
        let refused = control.call(id, "get_task", json!({})).await.unwrap();
        assert!(
            refused.is_error && refused.text().contains(lost),
            "{}",
            refused.text()
        );
        assert_eq!(refused.turn, 1);
        let result = raw_stateless_call(
            &server.url(&format!("/episodes/{id}/mcp")),
            "get_task",
            json!({}),
            json!({}),
        )
        .await;
        assert!(result.to_string().contains(lost), "{result}");
        let (_, state) =
            status_and_json(http().get(server.url(&format!("/{env}/state?episode_id={id}")))).await;
        assert_eq!(state["step_count"], 1, "{state}");
        assert_eq!(server.trajectory(id).await.lines().count(), 1);
    }
    drop(server);

    // A second restart pays nothing again: every episode is as the first left it.
    let server = restart(&args, &addr);
    let status = server.status(&plain).await;
    assert!(status.done && !status.aborted);
    assert!((status.return_ - win.return_).abs() < 1e-9);
    assert!(server.status(&kernel).await.aborted);
    let ends = std::fs::read_to_string(dir.join(format!("{kernel}.jsonl")))
        .unwrap()
        .matches("\"record\":\"end\"")
        .count();
    assert_eq!(ends, 1);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_stopped_with_sigterm_resumes_its_games_and_keeps_finished_ones_readable() {
    let dir = temp_dir("terminated");
    let dir_arg = dir.display().to_string();
    let args = ["wordle", "--trajectory-dir", &dir_arg];
    let mut server = HttpServer::start(&args);
    let addr = server.addr().to_string();
    let (task, answer, wrong) = wordle_task();
    let control = server.control();
    let live = server.create(NewEpisode::default().task(task)).await.id;
    control
        .call(&live, "guess", json!({ "word": wrong }))
        .await
        .unwrap();
    let won = server.create(NewEpisode::default().task(task)).await.id;
    let win = control
        .call(&won, "guess", json!({ "word": answer }))
        .await
        .unwrap();
    assert!(win.done);
    let status = server
        .terminate(std::time::Duration::from_secs(20))
        .expect("SIGTERM stops the server");
    assert!(status.success(), "{status:?}");
    drop(server);

    let server = restart(&args, &addr);
    let status = server.status(&live).await;
    assert_eq!((status.turn, status.done), (1, false));
    let finished = server.status(&won).await;
    assert!(finished.done && !finished.aborted);
    assert_eq!(finished.revealed["answer"], answer.as_str());
    assert!((finished.return_ - win.return_).abs() < 1e-9);
    let after = server
        .control()
        .call(&won, "guess", json!({ "word": answer }))
        .await
        .unwrap();
    assert!(after.is_error && after.reward == 0.0, "{after:?}");
    let next = server
        .control()
        .call(&live, "guess", json!({ "word": answer }))
        .await
        .unwrap();
    assert_eq!((next.turn, next.done), (2, true));
    let _ = std::fs::remove_dir_all(&dir);
}
