//! The Open Reward Standard door through the real binary, spoken as the ORS clients speak it:
//! session ids from `/create_session`'s event stream, `/create`, `/<env>/prompt`, tool calls
//! answered as event streams, `/delete`.

use crate::common::*;
use reqwest::RequestBuilder;
use serde_json::{Value, json};

/// Six allowed guesses (servers/wordle/data/allowed.txt); played in order they end any game.
const GUESSES: [&str; 6] = ["crane", "slate", "pious", "dough", "nymph", "blitz"];

/// The events of an event stream, read as both ORS clients read them: `field: value` lines
/// with the value's leading spaces stripped, events ended by a blank line, comments skipped.
fn events(text: &str) -> Vec<(String, String)> {
    let mut events = Vec::new();
    let (mut event, mut data): (Option<String>, Vec<String>) = (None, Vec::new());
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            if let Some(name) = event.take() {
                events.push((name, data.join("\n")));
            }
            data.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("an event-stream line without a colon: {line:?}"));
        match field {
            "event" => event = Some(value.trim_start().to_owned()),
            "data" => data.push(value.trim_start().to_owned()),
            _ => {}
        }
    }
    events
}

async fn stream(request: RequestBuilder) -> Vec<(String, String)> {
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    events(&response.text().await.unwrap())
}

/// `POST <path>` in session `sid`.
pub(crate) fn post_in(server: &HttpServer, path: &str, sid: &str) -> RequestBuilder {
    http().post(server.url(path)).header("X-Session-ID", sid)
}

/// `GET <path>` in session `sid`.
fn get_in(server: &HttpServer, path: &str, sid: &str) -> RequestBuilder {
    http().get(server.url(path)).header("X-Session-ID", sid)
}

/// A session id from `POST /create_session`.
pub(crate) async fn new_session(server: &HttpServer) -> String {
    let events = stream(http().post(server.url("/create_session"))).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0].0, "task_id");
    assert_eq!(events[1], ("end".to_owned(), String::new()));
    events[0].1.clone()
}

/// Sends a `POST /create`, which must succeed: its JSON body.
pub(crate) async fn created(request: RequestBuilder) -> Value {
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// Sends `request`, answered with a sentence-bearing ORS error: its status and `detail`.
async fn detail(request: RequestBuilder) -> (u16, String) {
    let (status, body) = status_and_json(request).await;
    (
        status,
        body["detail"].as_str().unwrap_or_default().to_owned(),
    )
}

/// `POST <path>` with a session and a JSON body: `task_id`, then the `RunToolOutput`.
async fn call(server: &HttpServer, path: &str, sid: &str, body: Value) -> (String, Value) {
    let events = stream(post_in(server, path, sid).json(&body)).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0].0, "task_id");
    assert_eq!(events[1].0, "end", "{events:?}");
    (
        events[0].1.clone(),
        serde_json::from_str(&events[1].1).unwrap(),
    )
}

/// `POST <path>` calling `tool` with `input` in session `sid`: the `RunToolOutput`.
pub(crate) async fn call_tool(
    server: &HttpServer,
    path: &str,
    sid: &str,
    tool: &str,
    input: Value,
) -> Value {
    call(server, path, sid, json!({"name": tool, "input": input}))
        .await
        .1
}

/// The episode a successful `RunToolOutput` belongs to.
pub(crate) fn episode_of(result: &Value) -> String {
    result["output"]["metadata"]["episode_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no episode in {result}"))
        .to_owned()
}

#[tokio::test]
async fn environments_splits_and_tasks() {
    let server = HttpServer::start(&["wordle"]);
    let post = |path: &str, body: Value| http().post(server.url(path)).json(&body);
    let post_json = |path: &str, body: Value| json_body(post(path, body));

    assert_eq!(server.get_json("/health").await, json!({"status": "ok"}));
    assert_eq!(
        server.get_json("/list_environments").await,
        json!(["wordle"])
    );
    assert_eq!(
        server.get_json("/wordle/splits").await,
        json!([{"name": "train", "type": "train"}, {"name": "test", "type": "test"}])
    );
    let tools = server.get_json("/wordle/tools").await;
    assert_eq!(tool_names(&tools), ["guess", "history"]);
    let guess = &tools["tools"][0];
    assert_eq!(
        guess.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["description", "input_schema", "name"]
    );
    assert_eq!(guess["input_schema"]["required"], json!(["word"]));

    // Tasks are their ids only, in the control plane's order.
    let ids = server
        .control()
        .tasks(Some("wordle"), Split::Test)
        .await
        .unwrap()
        .tasks;
    let tasks = post_json("/wordle/tasks", json!({"split": "test"})).await;
    assert_eq!(tasks["env_name"], "wordle");
    let listed: Vec<Value> = ids.iter().map(|id| json!({ "id": id })).collect();
    assert_eq!(tasks["tasks"], json!(listed));
    let count = post_json("/wordle/num_tasks", json!({"split": "test"})).await;
    assert_eq!(count, json!({"num_tasks": ids.len()}));
    let last = post_json("/wordle/task", json!({"split": "test", "index": -1})).await;
    assert_eq!(
        last,
        json!({"task": {"id": ids.last().unwrap()}, "env_name": "wordle"})
    );
    let range = post_json(
        "/wordle/task_range",
        json!({"split": "test", "start": 1, "stop": 3}),
    )
    .await;
    assert_eq!(range["tasks"], json!(listed[1..3]));

    // The bare paths openreward uses serve the only environment.
    let bare = post_json("/tasks", json!({"split": "test"})).await;
    assert_eq!(bare, tasks);

    // Bad requests say what was wrong.
    for (path, body, expected) in [
        (
            "/wordle/tasks",
            json!({"split": "dev"}),
            &["Invalid split \"dev\""][..],
        ),
        (
            "/wordle/task",
            json!({"split": "test", "index": 100_000}),
            &["Invalid index 100000"],
        ),
        (
            "/wordle/task",
            json!({"split": "test"}),
            &["missing field `index`", "send JSON like"],
        ),
    ] {
        let (status, text) = detail(post(path, body)).await;
        assert_eq!(status, 400);
        for expected in expected {
            assert!(text.contains(expected), "{text}");
        }
    }
}

#[tokio::test]
async fn a_wordle_game_through_ors_pays_what_the_episode_returns() {
    let server = HttpServer::start(&["wordle"]);
    let before = server.started("wordle").await;
    let sid = new_session(&server).await;
    // ors-sdk's body (with secrets) and openreward's (with toolset_name and X-Secrets) are
    // both accepted.
    let created = created(
        post_in(&server, "/create", &sid)
            .header("X-Secrets", "e30=")
            .json(
                &json!({"split": "train", "index": 5, "secrets": {"k": "v"}, "toolset_name": null}),
            ),
    )
    .await;
    assert_eq!(created, json!({ "sid": sid }));
    assert_eq!(server.started("wordle").await, before + 1);

    let prompt = json_body(get_in(&server, "/wordle/prompt", &sid)).await;
    assert_eq!(prompt[0]["type"], "text");
    assert!(prompt[0]["text"].as_str().unwrap().contains("Wordle"));
    let tools = json_body(get_in(&server, "/wordle/task_tools", &sid)).await;
    assert_eq!(tools["tools"].as_array().unwrap().len(), 2);

    let mut rewards = 0.0;
    let mut episode = String::new();
    let mut finished = false;
    let mut calls = 0;
    for word in GUESSES {
        let result = call_tool(
            &server,
            "/wordle/call",
            &sid,
            "guess",
            json!({"word": word}),
        )
        .await;
        assert_eq!(result["ok"], true, "{result}");
        let output = &result["output"];
        assert_eq!(output["blocks"][0]["type"], "text");
        assert!(
            output["blocks"][0]["text"]
                .as_str()
                .unwrap()
                .contains(&word.to_uppercase())
        );
        rewards += output["reward"].as_f64().unwrap();
        episode = episode_of(&result);
        calls += 1;
        assert_eq!(output["metadata"]["turn"], calls);
        if output["finished"] == true {
            finished = true;
            break;
        }
    }
    assert!(finished, "six guesses end a game");
    let status = server.status(&episode).await;
    assert!(status.done);
    assert_eq!(status.task, "train-0005");
    assert!((status.return_ - rewards).abs() < 1e-9);
    // The same steps are in the episode's trajectory.
    assert_eq!(server.trajectory(&episode).await.lines().count(), calls);

    // After the end, tools are not run.
    let after = call_tool(&server, "/wordle/call", &sid, "history", json!({})).await;
    assert_eq!(after["ok"], false);
    assert_eq!(after["reason"], "episode_finished");

    assert_eq!(
        json_body(post_in(&server, "/ping", &sid)).await,
        json!({"status": "ok"})
    );
    // Deleting the session closes its episode.
    assert_eq!(
        json_body(post_in(&server, "/delete", &sid)).await,
        json!({ "sid": sid })
    );
    let gone = server.control().status(&episode).await.unwrap_err();
    assert_eq!(gone.status().map(|s| s.as_u16()), Some(404), "{gone}");
    let (status, text) = detail(post_in(&server, "/ping", &sid)).await;
    assert_eq!(status, 404);
    assert!(text.contains("POST /create"), "{text}");
}

#[tokio::test]
async fn refusals_resume_and_bad_requests() {
    let server = HttpServer::start(&["wordle"]);
    let sid = new_session(&server).await;
    let create = |sid: Option<&str>, body: &str| {
        let mut request = http()
            .post(server.url("/create"))
            .header("content-type", "application/json")
            .body(body.to_owned());
        if let Some(sid) = sid {
            request = request.header("X-Session-ID", sid);
        }
        request
    };

    for (sid, body, code, expected) in [
        (
            None,
            r#"{"split": "train", "index": 0}"#,
            400,
            "X-Session-ID header is required",
        ),
        (Some(&sid), "{not json", 400, "not a valid session request"),
        (
            Some(&sid),
            "{}",
            400,
            "either task_spec or both split and index",
        ),
        (
            Some(&sid),
            r#"{"task_spec": {"id": "nope"}}"#,
            400,
            "unknown task \"nope\"",
        ),
        (
            Some(&sid),
            r#"{"task_spec": {"answer": "crane"}}"#,
            400,
            "task_spec is not a task",
        ),
        (
            Some(&sid),
            r#"{"env_name": "chess", "split": "train", "index": 0}"#,
            404,
            "unknown environment \"chess\"",
        ),
        (
            Some(&sid),
            r#"{"split": "train", "index": -999999}"#,
            400,
            "Invalid index -999999",
        ),
    ] {
        let (status, text) = detail(create(sid.map(String::as_str), body)).await;
        assert_eq!(status, code, "{body}");
        assert!(text.contains(expected), "{text}");
    }

    // None of those started an episode or a session.
    assert_eq!(server.started("wordle").await, 0);
    let (status, _) = detail(get_in(&server, "/wordle/prompt", &sid)).await;
    assert_eq!(status, 404);

    let body = r#"{"task_spec": {"id": "train-0001", "seed": 3}, "env_name": "wordle"}"#;
    created(create(Some(&sid), body)).await;
    let (status, text) = detail(create(Some(&sid), body)).await;
    assert_eq!(status, 400);
    assert!(text.contains("Session already exists"), "{text}");

    // Refused calls: an unknown tool, arguments that do not fit the schema, a non-object.
    let result = call_tool(&server, "/call", &sid, "gues", json!({})).await;
    assert_eq!(result["ok"], false);
    assert_eq!(result["reason"], "not_found");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("wordle offers: guess, history")
    );
    for input in [
        json!({"word": 5}),
        json!({}),
        json!({"word": "crane", "x": 1}),
        json!([1]),
    ] {
        let result = call_tool(&server, "/wordle/call", &sid, "guess", input.clone()).await;
        assert_eq!(result["ok"], false, "{input}");
        assert_eq!(result["reason"], "input_validation", "{input}");
        assert!(
            result["error"]
                .as_str()
                .unwrap()
                .starts_with("Tool input validation error"),
            "{result}"
        );
    }
    // An illegal move is the model's to read.
    let (task_id, result) = call(
        &server,
        "/wordle/call",
        &sid,
        json!({"name": "guess", "input": {"word": "zzzzz"}}),
    )
    .await;
    assert_eq!(result["ok"], true);
    assert_eq!(result["output"]["metadata"]["is_error"], true);
    assert_eq!(result["output"]["finished"], false);
    let episode = episode_of(&result);
    let status = server.status(&episode).await;
    assert_eq!((status.task.as_str(), status.seed), ("train-0001", 3));
    // Refused calls cost no turn; the illegal move is on the record.
    assert_eq!(status.turn, 1);

    // A client whose stream broke resumes by task_id and gets the same result.
    let (again, resumed) = call(
        &server,
        "/wordle/call",
        &sid,
        json!({"name": "guess", "input": {"word": "crane"}, "task_id": task_id}),
    )
    .await;
    assert_eq!((again, resumed), (task_id, result));
    assert_eq!(server.status(&episode).await.turn, 1);
    let events = stream(
        post_in(&server, "/wordle/call", &sid)
            .json(&json!({"name": "guess", "input": {}, "task_id": "0123"})),
    )
    .await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].0, "error");
    assert!(events[0].1.contains("unknown task_id"), "{events:?}");

    // Bad call requests.
    let crane = json!({"name": "guess", "input": {"word": "crane"}});
    for (request, code, expected) in [
        (
            http().post(server.url("/wordle/call")).json(&crane),
            400,
            "X-Session-ID header is required",
        ),
        (
            post_in(&server, "/wordle/call", "no-such-session").json(&crane),
            404,
            "no session \"no-such-session\"",
        ),
        (
            post_in(&server, "/wordle/call", &sid).json(&json!({"input": {"word": "crane"}})),
            400,
            "not a valid tool call",
        ),
        (
            post_in(&server, "/wordle/call", &sid).body(vec![0xff, 0xfe]),
            400,
            "",
        ),
    ] {
        let (status, text) = detail(request).await;
        assert_eq!(status, code, "{text}");
        assert!(text.contains(expected), "{text}");
    }
}

#[tokio::test]
async fn several_environments_bind_sessions_by_path_or_deployment() {
    let server = HttpServer::start(&["serve"]);
    let post = |path: &str| http().post(server.url(path));

    assert_eq!(
        server.get_json("/list_environments").await,
        json!(["desktop", "hilo", "jupyter", "wordle"])
    );
    // A bare path cannot tell which environment is meant, unless X-Deployment says.
    let (status, text) = detail(post("/tasks").json(&json!({"split": "train"}))).await;
    assert_eq!(status, 400);
    assert!(
        text.contains("several environments (desktop, hilo, jupyter, wordle)"),
        "{text}"
    );
    let tasks = json_body(
        post("/tasks")
            .header("X-Deployment", "someone/wordle")
            .json(&json!({"split": "train"})),
    )
    .await;
    assert_eq!(tasks["env_name"], "wordle");
    let tools = json_body(get_in(&server, "/tools", "any").header("X-Deployment", "jupyter")).await;
    assert!(tool_names(&tools).contains(&"final_answer"));
    // The control plane's GET /tools is unchanged for its own clients.
    let control = server.control().tools(Some("wordle")).await.unwrap();
    let names: Vec<&str> = control.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["guess", "history"]);

    // ors-sdk's /create for split and index names no environment: the session's first
    // /<env>/ request binds it.
    let before = server.started("wordle").await;
    let sid = new_session(&server).await;
    created(post_in(&server, "/create", &sid).json(&json!({"split": "test", "index": 0}))).await;
    assert_eq!(server.started("wordle").await, before);
    let result = call_tool(
        &server,
        "/wordle/call",
        &sid,
        "guess",
        json!({"word": "crane"}),
    )
    .await;
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(server.started("wordle").await, before + 1);
    let episode = episode_of(&result);
    assert_eq!(server.status(&episode).await.task, "test-0000");
    // Its bare paths go to its own environment; another environment's are refused.
    let bare = call_tool(&server, "/call", &sid, "history", json!({})).await;
    assert_eq!(bare["output"]["metadata"]["episode_id"], episode);
    let (status, text) = detail(get_in(&server, "/jupyter/prompt", &sid)).await;
    assert_eq!(status, 400);
    assert!(
        text.contains("this session plays wordle, not jupyter"),
        "{text}"
    );

    // A session deleted on the control plane is gone for ORS too.
    server.close(&episode).await;
    let (status, text) = detail(get_in(&server, "/wordle/prompt", &sid)).await;
    assert_eq!(status, 410);
    assert!(text.contains("unknown episode"), "{text}");
    let (status, _) = detail(post_in(&server, "/ping", &sid)).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn idle_sessions_are_dropped_with_their_episodes_and_pings_keep_them() {
    let server = HttpServer::start(&["wordle", "--idle-ttl", "2"]);
    let start = |index: u32| {
        let server = &server;
        async move {
            let sid = new_session(server).await;
            created(
                post_in(server, "/create", &sid).json(&json!({"split": "train", "index": index})),
            )
            .await;
            let result = call_tool(server, "/wordle/call", &sid, "history", json!({})).await;
            (sid, episode_of(&result))
        }
    };
    let ping = |sid: &str| post_in(&server, "/ping", sid).send();
    let (kept, kept_episode) = start(0).await;
    let (idle, idle_episode) = start(1).await;
    // Pinged well within the TTL, one session outlives several TTLs; the other is dropped.
    let mut dropped = false;
    for _ in 0..50 {
        assert_eq!(ping(&kept).await.unwrap().status(), 200);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let episode = server.control().status(&idle_episode).await;
        if episode.is_err_and(|e| e.status().is_some_and(|s| s.as_u16() == 404)) {
            dropped = true;
            break;
        }
    }
    assert!(dropped, "the idle session's episode was closed");
    for _ in 0..50 {
        if ping(&idle).await.unwrap().status() == 404 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(ping(&idle).await.unwrap().status(), 404);
    // Past three TTLs, the pinged session still plays.
    for _ in 0..15 {
        assert_eq!(ping(&kept).await.unwrap().status(), 200);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let result = call_tool(
        &server,
        "/wordle/call",
        &kept,
        "guess",
        json!({"word": "crane"}),
    )
    .await;
    assert_eq!(result["output"]["metadata"]["episode_id"], kept_episode);
}

#[tokio::test]
async fn a_call_retried_with_its_idempotency_key_plays_once_even_the_last() {
    let server = HttpServer::start(&["wordle", "--max-turns", "2"]);
    let sid = new_session(&server).await;
    created(post_in(&server, "/create", &sid).json(&json!({"split": "train", "index": 1}))).await;
    let keyed = |key: &str, word: &str| {
        let events = stream(
            post_in(&server, "/wordle/call", &sid)
                .header("Idempotency-Key", key)
                .json(&json!({"name": "guess", "input": {"word": word}})),
        );
        async move {
            let events = events.await;
            assert_eq!(events[1].0, "end", "{events:?}");
            serde_json::from_str::<Value>(&events[1].1).unwrap()
        }
    };
    let first = keyed("ors-1", "crane").await;
    assert_eq!(keyed("ors-1", "slate").await, first);
    // The call that ends the episode, retried: its answer, not "the episode has finished".
    let last = keyed("ors-2", "slate").await;
    assert_eq!(last["output"]["finished"], true, "{last}");
    assert_eq!(keyed("ors-2", "pious").await, last);
    let episode = episode_of(&first);
    assert_eq!(server.status(&episode).await.turn, 2);
}
