//! The Open Reward Standard door through the real binary, spoken as the ORS clients speak it:
//! session ids from `/create_session`'s event stream, `/create`, `/<env>/prompt`, tool calls
//! answered as event streams, `/delete`.

mod common;

use common::*;
use reqwest::{RequestBuilder, Response};
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

/// A session id from `POST /create_session`.
async fn new_session(server: &HttpServer) -> String {
    let events = stream(http().post(server.url("/create_session"))).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0].0, "task_id");
    assert_eq!(events[1], ("end".to_owned(), String::new()));
    events[0].1.clone()
}

/// A sentence-bearing ORS error: its status and `detail`.
async fn detail(response: Response) -> (u16, String) {
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    (
        status,
        body["detail"].as_str().unwrap_or_default().to_owned(),
    )
}

/// `POST <path>` with a session and a JSON body: `task_id`, then the `RunToolOutput`.
async fn call(server: &HttpServer, path: &str, sid: &str, body: Value) -> (String, Value) {
    let events = stream(
        http()
            .post(server.url(path))
            .header("X-Session-ID", sid)
            .json(&body),
    )
    .await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0].0, "task_id");
    assert_eq!(events[1].0, "end", "{events:?}");
    (
        events[0].1.clone(),
        serde_json::from_str(&events[1].1).unwrap(),
    )
}

fn started(metrics: &str, env: &str) -> u64 {
    let prefix = format!("mcpgym_episodes_started_total{{env=\"{env}\"}} ");
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map_or(0, |v| v.parse().unwrap())
}

#[tokio::test]
async fn environments_splits_and_tasks() {
    let server = HttpServer::start(&["wordle"]);
    let get = |path: &str| http().get(server.url(path)).send();
    let post = |path: &str, body: Value| http().post(server.url(path)).json(&body).send();

    assert_eq!(
        get("/health").await.unwrap().json::<Value>().await.unwrap(),
        json!({"status": "ok"})
    );
    assert_eq!(
        get("/list_environments")
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap(),
        json!(["wordle"])
    );
    assert_eq!(
        get("/wordle/splits")
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap(),
        json!([{"name": "train", "type": "train"}, {"name": "test", "type": "test"}])
    );
    let tools: Value = get("/wordle/tools").await.unwrap().json().await.unwrap();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["guess", "history"]);
    let guess = &tools["tools"][0];
    assert_eq!(
        guess.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["description", "input_schema", "name"]
    );
    assert_eq!(guess["input_schema"]["required"], json!(["word"]));

    // Tasks are their ids only, in the control plane's order.
    let ids: Value = get("/tasks?env=wordle&split=test")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids = ids["tasks"].as_array().unwrap().clone();
    let tasks: Value = post("/wordle/tasks", json!({"split": "test"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tasks["env_name"], "wordle");
    let listed: Vec<Value> = ids.iter().map(|id| json!({ "id": id })).collect();
    assert_eq!(tasks["tasks"], json!(listed));
    let count: Value = post("/wordle/num_tasks", json!({"split": "test"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(count, json!({"num_tasks": ids.len()}));
    let last: Value = post("/wordle/task", json!({"split": "test", "index": -1}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        last,
        json!({"task": {"id": ids.last().unwrap()}, "env_name": "wordle"})
    );
    let range: Value = post(
        "/wordle/task_range",
        json!({"split": "test", "start": 1, "stop": 3}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(range["tasks"], json!(listed[1..3]));

    // The bare paths openreward uses serve the only environment.
    let bare: Value = post("/tasks", json!({"split": "test"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(bare, tasks);

    // Bad requests say what was wrong.
    let (status, text) = detail(
        post("/wordle/tasks", json!({"split": "dev"}))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(text.contains("Invalid split \"dev\""), "{text}");
    let (status, text) = detail(
        post("/wordle/task", json!({"split": "test", "index": 100_000}))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(text.contains("Invalid index 100000"), "{text}");
    let (status, text) = detail(
        post("/wordle/task", json!({"split": "test"}))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(text.contains("missing field `index`"), "{text}");
    assert!(text.contains("send JSON like"), "{text}");
}

#[tokio::test]
async fn a_wordle_game_through_ors_pays_what_the_episode_returns() {
    let server = HttpServer::start(&["wordle"]);
    let before = started(&server.metrics().await, "wordle");
    let sid = new_session(&server).await;
    // ors-sdk's body (with secrets) and openreward's (with toolset_name and X-Secrets) are
    // both accepted.
    let created = http()
        .post(server.url("/create"))
        .header("X-Session-ID", &sid)
        .header("X-Secrets", "e30=")
        .json(&json!({"split": "train", "index": 5, "secrets": {"k": "v"}, "toolset_name": null}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200);
    assert_eq!(
        created.json::<Value>().await.unwrap(),
        json!({ "sid": sid })
    );
    assert_eq!(started(&server.metrics().await, "wordle"), before + 1);

    let prompt: Value = http()
        .get(server.url("/wordle/prompt"))
        .header("X-Session-ID", &sid)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(prompt[0]["type"], "text");
    assert!(prompt[0]["text"].as_str().unwrap().contains("Wordle"));
    let tools: Value = http()
        .get(server.url("/wordle/task_tools"))
        .header("X-Session-ID", &sid)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tools["tools"].as_array().unwrap().len(), 2);

    let mut rewards = 0.0;
    let mut episode = String::new();
    let mut finished = false;
    let mut calls = 0;
    for word in GUESSES {
        let (_, result) = call(
            &server,
            "/wordle/call",
            &sid,
            json!({"name": "guess", "input": {"word": word}}),
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
        episode = output["metadata"]["episode_id"]
            .as_str()
            .unwrap()
            .to_owned();
        calls += 1;
        assert_eq!(output["metadata"]["turn"], calls);
        if output["finished"] == true {
            finished = true;
            break;
        }
    }
    assert!(finished, "six guesses end a game");
    let status = server.status(&episode).await;
    assert_eq!(status["done"], true);
    assert_eq!(status["task"], "train-0005");
    assert!((status["return"].as_f64().unwrap() - rewards).abs() < 1e-9);
    // The same steps are in the episode's trajectory.
    let trajectory = http()
        .get(server.url(&format!("/episodes/{episode}/trajectory")))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(trajectory.lines().count(), calls);

    // After the end, tools are not run.
    let (_, after) = call(
        &server,
        "/wordle/call",
        &sid,
        json!({"name": "history", "input": {}}),
    )
    .await;
    assert_eq!(after["ok"], false);
    assert_eq!(after["reason"], "episode_finished");

    assert_eq!(
        http()
            .post(server.url("/ping"))
            .header("X-Session-ID", &sid)
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap(),
        json!({"status": "ok"})
    );
    // Deleting the session closes its episode.
    let deleted: Value = http()
        .post(server.url("/delete"))
        .header("X-Session-ID", &sid)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(deleted, json!({ "sid": sid }));
    let gone = http()
        .get(server.url(&format!("/episodes/{episode}")))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    let (status, text) = detail(
        http()
            .post(server.url("/ping"))
            .header("X-Session-ID", &sid)
            .send()
            .await
            .unwrap(),
    )
    .await;
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
        request.send()
    };

    let (status, text) = detail(
        create(None, r#"{"split": "train", "index": 0}"#)
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(text.contains("X-Session-ID header is required"), "{text}");
    let (status, text) = detail(create(Some(&sid), "{not json").await.unwrap()).await;
    assert_eq!(status, 400);
    assert!(text.contains("not a valid session request"), "{text}");
    let (status, text) = detail(create(Some(&sid), "{}").await.unwrap()).await;
    assert_eq!(status, 400);
    assert!(
        text.contains("either task_spec or both split and index"),
        "{text}"
    );
    let (status, text) = detail(
        create(Some(&sid), r#"{"task_spec": {"id": "nope"}}"#)
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(text.contains("unknown task \"nope\""), "{text}");
    let (status, text) = detail(
        create(Some(&sid), r#"{"task_spec": {"answer": "crane"}}"#)
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(text.contains("task_spec is not a task"), "{text}");
    let (status, text) = detail(
        create(
            Some(&sid),
            r#"{"env_name": "chess", "split": "train", "index": 0}"#,
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert!(text.contains("unknown environment \"chess\""), "{text}");
    let (status, text) = detail(
        create(Some(&sid), r#"{"split": "train", "index": -999999}"#)
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(text.contains("Invalid index -999999"), "{text}");

    // None of those started an episode or a session.
    assert_eq!(started(&server.metrics().await, "wordle"), 0);
    let (status, _) = detail(
        http()
            .get(server.url("/wordle/prompt"))
            .header("X-Session-ID", &sid)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);

    let body = r#"{"task_spec": {"id": "train-0001", "seed": 3}, "env_name": "wordle"}"#;
    assert_eq!(create(Some(&sid), body).await.unwrap().status(), 200);
    let (status, text) = detail(create(Some(&sid), body).await.unwrap()).await;
    assert_eq!(status, 400);
    assert!(text.contains("Session already exists"), "{text}");

    // Refused calls: an unknown tool, arguments that do not fit the schema, a non-object.
    let (_, result) = call(&server, "/call", &sid, json!({"name": "gues", "input": {}})).await;
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
        let (_, result) = call(
            &server,
            "/wordle/call",
            &sid,
            json!({"name": "guess", "input": input}),
        )
        .await;
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
    let episode = result["output"]["metadata"]["episode_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let status = server.status(&episode).await;
    assert_eq!(
        (status["task"].as_str(), status["seed"].as_u64()),
        (Some("train-0001"), Some(3))
    );
    // Refused calls cost no turn; the illegal move is on the record.
    assert_eq!(status["turn"], 1);

    // A client whose stream broke resumes by task_id and gets the same result.
    let (again, resumed) = call(
        &server,
        "/wordle/call",
        &sid,
        json!({"name": "guess", "input": {"word": "crane"}, "task_id": task_id}),
    )
    .await;
    assert_eq!((again, resumed), (task_id, result));
    assert_eq!(server.status(&episode).await["turn"], 1);
    let events = stream(
        http()
            .post(server.url("/wordle/call"))
            .header("X-Session-ID", &sid)
            .json(&json!({"name": "guess", "input": {}, "task_id": "0123"})),
    )
    .await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].0, "error");
    assert!(events[0].1.contains("unknown task_id"), "{events:?}");

    // Bad call requests.
    let (status, text) = detail(
        http()
            .post(server.url("/wordle/call"))
            .json(&json!({"name": "guess", "input": {"word": "crane"}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(text.contains("X-Session-ID header is required"), "{text}");
    let (status, text) = detail(
        http()
            .post(server.url("/wordle/call"))
            .header("X-Session-ID", "no-such-session")
            .json(&json!({"name": "guess", "input": {"word": "crane"}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert!(text.contains("no session \"no-such-session\""), "{text}");
    let (status, text) = detail(
        http()
            .post(server.url("/wordle/call"))
            .header("X-Session-ID", &sid)
            .json(&json!({"input": {"word": "crane"}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(text.contains("not a valid tool call"), "{text}");
    let (status, _) = detail(
        http()
            .post(server.url("/wordle/call"))
            .header("X-Session-ID", &sid)
            .body(vec![0xff, 0xfe])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn several_environments_bind_sessions_by_path_or_deployment() {
    let server = HttpServer::start(&["serve"]);
    let post = |path: &str| http().post(server.url(path));

    assert_eq!(
        http()
            .get(server.url("/list_environments"))
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap(),
        json!(["desktop", "jupyter", "wordle"])
    );
    // A bare path cannot tell which environment is meant, unless X-Deployment says.
    let (status, text) = detail(
        post("/tasks")
            .json(&json!({"split": "train"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        text.contains("several environments (desktop, jupyter, wordle)"),
        "{text}"
    );
    let tasks: Value = post("/tasks")
        .header("X-Deployment", "someone/wordle")
        .json(&json!({"split": "train"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tasks["env_name"], "wordle");
    let tools: Value = http()
        .get(server.url("/tools"))
        .header("X-Session-ID", "any")
        .header("X-Deployment", "jupyter")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "final_answer")
    );
    // The control plane's GET /tools is unchanged for its own clients.
    let control: Value = http()
        .get(server.url("/tools?env=wordle"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(control["env"], "wordle");

    // ors-sdk's /create for split and index names no environment: the session's first
    // /<env>/ request binds it.
    let before = started(&server.metrics().await, "wordle");
    let sid = new_session(&server).await;
    let created = post("/create")
        .header("X-Session-ID", &sid)
        .json(&json!({"split": "test", "index": 0}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200);
    assert_eq!(started(&server.metrics().await, "wordle"), before);
    let (_, result) = call(
        &server,
        "/wordle/call",
        &sid,
        json!({"name": "guess", "input": {"word": "crane"}}),
    )
    .await;
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(started(&server.metrics().await, "wordle"), before + 1);
    let episode = result["output"]["metadata"]["episode_id"].as_str().unwrap();
    assert_eq!(server.status(episode).await["task"], "test-0000");
    // Its bare paths go to its own environment; another environment's are refused.
    let (_, bare) = call(
        &server,
        "/call",
        &sid,
        json!({"name": "history", "input": {}}),
    )
    .await;
    assert_eq!(bare["output"]["metadata"]["episode_id"], episode);
    let (status, text) = detail(
        http()
            .get(server.url("/jupyter/prompt"))
            .header("X-Session-ID", &sid)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        text.contains("this session plays wordle, not jupyter"),
        "{text}"
    );

    // A session deleted on the control plane is gone for ORS too.
    let deleted = http()
        .delete(server.url(&format!("/episodes/{episode}")))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let (status, text) = detail(
        http()
            .get(server.url("/wordle/prompt"))
            .header("X-Session-ID", &sid)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 410);
    assert!(text.contains("unknown episode"), "{text}");
    let (status, _) = detail(
        post("/ping")
            .header("X-Session-ID", &sid)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn idle_sessions_are_dropped_with_their_episodes_and_pings_keep_them() {
    let server = HttpServer::start(&["wordle", "--idle-ttl", "2"]);
    let start = |index: u32| {
        let server = &server;
        async move {
            let sid = new_session(server).await;
            let created = http()
                .post(server.url("/create"))
                .header("X-Session-ID", &sid)
                .json(&json!({"split": "train", "index": index}))
                .send()
                .await
                .unwrap();
            assert_eq!(created.status(), 200);
            let (_, result) = call(
                server,
                "/wordle/call",
                &sid,
                json!({"name": "history", "input": {}}),
            )
            .await;
            let episode = result["output"]["metadata"]["episode_id"]
                .as_str()
                .unwrap()
                .to_owned();
            (sid, episode)
        }
    };
    let ping = |sid: String| {
        http()
            .post(server.url("/ping"))
            .header("X-Session-ID", sid)
            .send()
    };
    let (kept, kept_episode) = start(0).await;
    let (idle, idle_episode) = start(1).await;
    // Pinged well within the TTL, one session outlives several TTLs; the other is dropped.
    let mut dropped = false;
    for _ in 0..50 {
        assert_eq!(ping(kept.clone()).await.unwrap().status(), 200);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let episode = http()
            .get(server.url(&format!("/episodes/{idle_episode}")))
            .send()
            .await
            .unwrap();
        if episode.status() == 404 {
            dropped = true;
            break;
        }
    }
    assert!(dropped, "the idle session's episode was closed");
    for _ in 0..50 {
        if ping(idle.clone()).await.unwrap().status() == 404 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(ping(idle).await.unwrap().status(), 404);
    // Past three TTLs, the pinged session still plays.
    for _ in 0..15 {
        assert_eq!(ping(kept.clone()).await.unwrap().status(), 200);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let (_, result) = call(
        &server,
        "/wordle/call",
        &kept,
        json!({"name": "guess", "input": {"word": "crane"}}),
    )
    .await;
    assert_eq!(result["output"]["metadata"]["episode_id"], kept_episode);
}
