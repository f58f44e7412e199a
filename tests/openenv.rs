//! The OpenEnv door through the real binary over HTTP: `/<env>/health`, `/metadata`,
//! `/schema`, a Wordle game played with `/reset` and `/step` (episodes named by
//! `episode_id`), named sessions whose episode outlives a WebSocket, and the sentences bad
//! requests get. The WebSocket's own protocol and OpenEnv's client classes are exercised from
//! Python (`python/tests/test_openenv.py`).

use crate::common::*;
use serde_json::{Value, json};

/// Guesses from Wordle's allowed list.
const GUESSES: [&str; 6] = ["crane", "slate", "pious", "dough", "nymph", "blitz"];

async fn post(server: &HttpServer, path: &str, body: Value) -> (u16, Value) {
    status_and_json(http().post(server.url(path)).json(&body)).await
}

async fn post_raw(server: &HttpServer, path: &str, body: &'static str) -> (u16, Value) {
    status_and_json(
        http()
            .post(server.url(path))
            .header("content-type", "application/json")
            .body(body),
    )
    .await
}

async fn get(server: &HttpServer, path: &str) -> (u16, Value) {
    let response = http().get(server.url(path)).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// An OpenEnv JSON-RPC request on `/wordle/mcp`: the reply.
async fn rpc(server: &HttpServer, id: u32, method: &str, params: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    post(server, "/wordle/mcp", body).await.1
}

fn detail(body: &Value) -> &str {
    body["detail"]
        .as_str()
        .unwrap_or_else(|| panic!("no detail in {body}"))
}

#[tokio::test]
async fn health_metadata_and_schema_describe_the_environment() {
    let server = HttpServer::start(&["wordle"]);
    assert_eq!(
        get(&server, "/wordle/health").await,
        (200, json!({ "status": "healthy" }))
    );

    let (status, metadata) = get(&server, "/wordle/metadata").await;
    assert_eq!(status, 200);
    assert_eq!(metadata["name"], "wordle");
    assert!(
        metadata["description"]
            .as_str()
            .unwrap()
            .contains("5-letter"),
        "{metadata}"
    );
    assert_eq!(metadata["version"], env!("CARGO_PKG_VERSION"));

    let (status, schema) = get(&server, "/wordle/schema").await;
    assert_eq!(status, 200);
    let tools = server.control().tools(Some("wordle")).await.unwrap();
    let tool_names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    let actions = schema["action"]["oneOf"].as_array().unwrap();
    assert_eq!(
        actions[0]["properties"]["type"]["const"], "list_tools",
        "{schema}"
    );
    let called: Vec<&str> = actions[1..]
        .iter()
        .map(|a| {
            assert_eq!(a["properties"]["type"]["const"], "call_tool");
            a["properties"]["tool_name"]["const"].as_str().unwrap()
        })
        .collect();
    assert_eq!(called, tool_names);
    let guess = &actions[1 + tool_names.iter().position(|n| *n == "guess").unwrap()];
    assert!(
        guess["properties"]["arguments"]["properties"]["word"].is_object(),
        "{guess}"
    );
    for key in ["observation", "reset_observation", "state"] {
        assert!(schema[key].is_object(), "{key} in {schema}");
    }
    assert_eq!(
        schema["state"]["required"],
        json!(["episode_id", "step_count"])
    );
}

#[tokio::test]
async fn http_reset_and_step_play_a_game_to_its_end() {
    let server = HttpServer::start(&["wordle"]);
    let before = server.started("wordle").await;

    let (status, reset) = post(
        &server,
        "/wordle/reset",
        json!({ "seed": 5, "episode_id": "run-7", "options": { "reward": "shaped" } }),
    )
    .await;
    assert_eq!(status, 200, "{reset}");
    assert_eq!(reset["reward"], Value::Null);
    assert_eq!(reset["done"], false);
    let id = reset["metadata"]["episode_id"].as_str().unwrap().to_owned();
    assert_eq!(reset["observation"]["episode_id"], id.as_str());
    assert_eq!(reset["metadata"]["episode_label"], "run-7");
    assert_eq!(reset["metadata"]["seed"], 5);
    assert!(
        reset["observation"]["prompt"]
            .as_str()
            .unwrap()
            .contains("Wordle"),
        "{reset}"
    );
    // An ordinary episode: on the control plane and counted.
    assert_eq!(server.status(&id).await.env, "wordle");
    assert_eq!(server.started("wordle").await, before + 1);

    let step = |action: Value| {
        let body = json!({ "episode_id": id, "action": action });
        let server = &server;
        async move { post(server, "/wordle/step", body).await }
    };

    let (status, listed) = step(json!({ "type": "list_tools" })).await;
    assert_eq!(status, 200, "{listed}");
    let names: Vec<&str> = listed["observation"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert!(t["input_schema"].is_object(), "{t}");
            t["name"].as_str().unwrap()
        })
        .collect();
    assert!(names.contains(&"guess"), "{listed}");

    // A tool the environment lacks never reaches it: no turn, no reward.
    let (status, unknown) = step(json!({ "type": "call_tool", "tool_name": "shout" })).await;
    assert_eq!(status, 200, "{unknown}");
    assert_eq!(
        unknown["observation"]["error"]["error_type"],
        "tool_not_found"
    );
    assert_eq!(unknown["reward"], Value::Null);

    // A refused move is an ordinary observation the model sees, with its penalty.
    let mut rewards = Vec::new();
    let (status, refused) = step(json!({
        "type": "call_tool", "tool_name": "guess", "arguments": { "word": "zzzzz" }
    }))
    .await;
    assert_eq!(status, 200, "{refused}");
    assert_eq!(
        refused["observation"]["result"]["is_error"], true,
        "{refused}"
    );
    assert_eq!(refused["observation"]["error"], Value::Null);
    assert_eq!(refused["done"], false);
    rewards.push(refused["reward"].as_f64().unwrap());

    let mut last = Value::Null;
    for word in GUESSES {
        let (status, played) = step(json!({
            "type": "call_tool", "tool_name": "guess", "arguments": { "word": word }
        }))
        .await;
        assert_eq!(status, 200, "{played}");
        let result = &played["observation"]["result"];
        assert_eq!(result["is_error"], false, "{played}");
        assert_eq!(result["content"][0]["type"], "text");
        assert!(
            result["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(&word.to_uppercase()),
            "{played}"
        );
        assert_eq!(played["metadata"]["episode_id"], id.as_str());
        rewards.push(played["reward"].as_f64().unwrap());
        let done = played["done"] == true;
        last = played;
        if done {
            break;
        }
    }
    assert_eq!(last["done"], true, "six guesses end the game: {last}");

    let status = server.status(&id).await;
    assert!(status.done);
    let total: f64 = rewards.iter().sum();
    let episode_return = status.return_;
    assert!(
        (total - episode_return).abs() < 1e-9,
        "rewards {rewards:?} sum to {total}, the episode's return is {episode_return}"
    );
    assert_eq!(last["metadata"]["return"], json!(status.return_));
    assert_eq!(last["metadata"]["turn"], status.turn);

    let (code, state) = get(&server, &format!("/wordle/state?episode_id={id}")).await;
    assert_eq!(code, 200, "{state}");
    assert_eq!(state["episode_id"], id.as_str());
    assert_eq!(state["step_count"], status.turn);
    assert_eq!(state["done"], true);
    assert_eq!(state["return"], json!(status.return_));

    // Every call that reached the environment is in the trajectory.
    let trajectory = server.trajectory(&id).await;
    assert_eq!(trajectory.lines().count(), rewards.len(), "{trajectory}");
}

#[tokio::test]
async fn bad_requests_get_sentences() {
    let server = HttpServer::start(&["wordle"]);

    for (body, expected) in [
        ("{not json", &["not valid JSON"][..]),
        (r#"{"taks": "x"}"#, &["taks", "reset takes"]),
        (r#"{"task": "nope"}"#, &["unknown task"]),
        (r#"{"split": "test", "index": 1000000}"#, &["out of range"]),
    ] {
        let (status, reply) = post_raw(&server, "/wordle/reset", body).await;
        assert_eq!(status, 422, "{body}");
        for expected in expected {
            assert!(detail(&reply).contains(expected), "{reply}");
        }
    }

    // OpenEnv's task API: split and index pick a task.
    let tasks = server
        .control()
        .tasks(Some("wordle"), Split::Test)
        .await
        .unwrap();
    let (status, body) = post(
        &server,
        "/wordle/reset",
        json!({ "split": "test", "index": 2 }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["metadata"]["task"], tasks.tasks[2]);
    let id = body["metadata"]["episode_id"].as_str().unwrap().to_owned();

    for (body, code, expected) in [
        (
            json!({ "action": { "type": "list_tools" } }),
            400,
            &["episode_id", "/wordle/ws"][..],
        ),
        (
            json!({ "episode_id": id, "action": { "type": "call_tool" } }),
            422,
            &["tool_name", "guess"],
        ),
        (
            json!({ "episode_id": id, "action": { "type": "dance" } }),
            422,
            &["list_tools"],
        ),
        (
            json!({ "episode_id": id, "action": { "type": "list_tools" }, "verbose": true }),
            422,
            &["verbose"],
        ),
        (
            json!({ "episode_id": "0000", "action": { "type": "list_tools" } }),
            404,
            &["unknown episode"],
        ),
    ] {
        let (status, reply) = post(&server, "/wordle/step", body.clone()).await;
        assert_eq!(status, code, "{body}");
        for expected in expected {
            assert!(detail(&reply).contains(expected), "{reply}");
        }
    }

    let (status, body) = post_raw(&server, "/wordle/step", "").await;
    assert_eq!(status, 422);
    assert!(detail(&body).contains("action"), "{body}");

    let (status, body) = get(&server, "/wordle/state?episode_id=0000").await;
    assert_eq!(status, 404);
    assert!(detail(&body).contains("unknown episode"), "{body}");
    // Without an episode: OpenEnv's state of a fresh environment.
    assert_eq!(
        get(&server, "/wordle/state").await,
        (
            200,
            json!({ "episode_id": null, "step_count": 0, "env": "wordle" })
        )
    );

    // A plain GET of the WebSocket says what it is.
    let (status, body) = get(&server, "/wordle/ws").await;
    assert_eq!(status, 400);
    assert!(detail(&body).contains("WebSocket"), "{body}");

    // OpenEnv's JSON-RPC on /wordle/mcp: a tool call needs a session.
    let (status, body) = post(
        &server,
        "/wordle/mcp",
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "guess", "arguments": { "word": "crane" } } }),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("openenv/session/create"),
        "{body}"
    );
    let (_, body) = post(
        &server,
        "/wordle/mcp",
        json!({ "jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {} }),
    )
    .await;
    assert_eq!(body["error"]["code"], -32601, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("text/event-stream"),
        "{body}"
    );
    let (_, body) = post_raw(&server, "/wordle/mcp", "[1,").await;
    assert_eq!(body["error"]["code"], -32700, "{body}");

    // Unknown environments have no OpenEnv routes.
    let response = http()
        .get(server.url("/nosuch/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn json_rpc_sessions_over_http() {
    let server = HttpServer::start(&["wordle"]);
    let rpc = |id, method, params| rpc(&server, id, method, params);

    let listed = rpc(1, "tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t["name"] == "guess" && t["inputSchema"].is_object()),
        "{listed}"
    );

    let created = rpc(2, "openenv/session/create", json!({})).await;
    let session = created["result"]["session_id"].as_str().unwrap().to_owned();
    // No reset yet: the call says what to do, and no episode starts.
    let before = server.started("wordle").await;
    let call = rpc(
        3,
        "tools/call",
        json!({ "name": "guess", "arguments": { "word": "crane" }, "session_id": session }),
    )
    .await;
    assert!(
        call["error"]["message"]
            .as_str()
            .unwrap()
            .contains("reset first"),
        "{call}"
    );
    assert_eq!(server.started("wordle").await, before);

    let closed = rpc(4, "openenv/session/close", json!({ "session_id": session })).await;
    assert_eq!(
        closed["result"],
        json!({ "session_id": session, "closed": true })
    );
    let again = rpc(5, "openenv/session/close", json!({ "session_id": session })).await;
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Unknown session_id"),
        "{again}"
    );

    // MCP clients (which accept event streams) still reach MCP on the same path.
    let response = http()
        .post(server.url("/wordle/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } }
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body = response.text().await.unwrap();
    assert!(body.contains("\"serverInfo\""), "{body}");
}

#[tokio::test]
async fn each_hosted_environment_has_its_own_base_url() {
    let server = HttpServer::start(&["serve"]);
    for env in ["wordle", "jupyter", "desktop"] {
        assert_eq!(
            get(&server, &format!("/{env}/health")).await.0,
            200,
            "{env}"
        );
        let (_, metadata) = get(&server, &format!("/{env}/metadata")).await;
        assert_eq!(metadata["name"], env);
    }
    let (_, schema) = get(&server, "/jupyter/schema").await;
    let tools: Vec<&str> = schema["action"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["properties"]["tool_name"]["const"].as_str())
        .collect();
    assert!(tools.contains(&"final_answer"), "{tools:?}");

    let (status, reset) = post(&server, "/wordle/reset", json!({})).await;
    assert_eq!(status, 200, "{reset}");
    assert_eq!(reset["metadata"]["env"], "wordle");
    let id = reset["metadata"]["episode_id"].as_str().unwrap();
    // An episode steps only at its own environment's URL.
    let (status, body) = post(
        &server,
        "/jupyter/step",
        json!({ "episode_id": id, "action": { "type": "list_tools" } }),
    )
    .await;
    assert_eq!(status, 422);
    assert!(detail(&body).contains("/wordle/step"), "{body}");
}

#[tokio::test]
async fn a_step_retried_with_its_idempotency_key_plays_once() {
    let server = HttpServer::start(&["wordle"]);
    let (_, reset) = post(&server, "/wordle/reset", json!({ "seed": 5 })).await;
    let id = reset["metadata"]["episode_id"].as_str().unwrap().to_owned();
    let step = |key: Value, word: &str| {
        let body = json!({ "episode_id": id, "action": {
            "type": "call_tool", "tool_name": "guess", "arguments": {"word": word},
            "metadata": {"idempotency_key": key}}});
        let server = &server;
        async move { post(server, "/wordle/step", body).await }
    };
    let (status, first) = step(json!("openenv-1"), "crane").await;
    assert_eq!(status, 200, "{first}");
    let (_, again) = step(json!("openenv-1"), "slate").await;
    assert_eq!(again, first);
    assert_eq!(server.status(&id).await.turn, 1);
    let (status, refused) = step(json!(7), "crane").await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused.to_string().contains("must be a string"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_named_sessions_episode_outlives_its_websocket() {
    let server = HttpServer::start(&["wordle"]);
    let rpc = |id, method, params| rpc(&server, id, method, params);
    let created = rpc(1, "openenv/session/create", json!({})).await;
    let session = created["result"]["session_id"].as_str().unwrap().to_owned();
    let url = server
        .url(&format!("/wordle/ws?session_id={session}"))
        .replacen("http://", "ws://", 1);
    let step = |word: &str, key: &str| {
        json!({"type": "step", "data": {"type": "call_tool", "tool_name": "guess",
               "arguments": {"word": word}, "metadata": {"idempotency_key": key}}})
    };
    let (episode, first) = {
        let mut socket = ws_connect(&url).await;
        let reset = ws_ask(&mut socket, json!({"type": "reset", "data": {"seed": 9}})).await;
        let episode = reset["data"]["metadata"]["episode_id"]
            .as_str()
            .unwrap()
            .to_owned();
        (episode, ws_ask(&mut socket, step("crane", "ws-1")).await)
    };
    // The connection dropped; the client attaches again, resends its last step with its key
    // (answered as before, nothing played) and goes on in the same episode.
    let mut socket = ws_connect(&url).await;
    assert_eq!(ws_ask(&mut socket, step("crane", "ws-1")).await, first);
    let next = ws_ask(&mut socket, step("slate", "ws-2")).await;
    assert_eq!(
        next["data"]["metadata"]["episode_id"],
        episode.as_str(),
        "{next}"
    );
    assert_eq!(server.status(&episode).await.turn, 2);
    drop(socket);
    // Closing the session ends its episode (once the server has seen the socket go).
    let closed = rpc(2, "openenv/session/close", json!({ "session_id": session })).await;
    assert_eq!(closed["result"]["session_id"], session.as_str(), "{closed}");
    assert!(
        gone(&server, &episode).await,
        "the closed session's episode outlived it"
    );
    // A connection's own session still ends with it, and its episode too.
    let own = server.url("/wordle/ws").replacen("http://", "ws://", 1);
    let episode = {
        let mut socket = ws_connect(&own).await;
        let reset = ws_ask(&mut socket, json!({"type": "reset"})).await;
        reset["data"]["metadata"]["episode_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(
        gone(&server, &episode).await,
        "the connection's own episode outlived it"
    );
}

/// Whether episode `id` is gone from the control plane within five seconds.
async fn gone(server: &HttpServer, id: &str) -> bool {
    for _ in 0..200 {
        let (status, _) = status_and_json(http().get(server.url(&format!("/episodes/{id}")))).await;
        if status == 404 {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    false
}
