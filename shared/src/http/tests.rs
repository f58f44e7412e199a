//! The HTTP application in process (`oneshot`): routing, the guard, bodies and the step path,
//! where spawning a server adds nothing. The binary's own tests cover the transports.

use axum::body::{Body, to_bytes};
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;

use super::{HttpOptions, router};
use crate::hub::{Hub, HubSettings};

fn app() -> axum::Router {
    let hub = Hub::new(vec![mcpgym_hilo::new()], HubSettings::default()).unwrap();
    let options = HttpOptions {
        loopback_hosts_only: true,
        ..HttpOptions::default()
    };
    router(hub, options)
}

fn request(method: &str, path: &str, body: Option<Value>) -> Request<Body> {
    let builder = Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, "127.0.0.1:8000");
    match body {
        Some(body) => builder
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string())),
        None => builder.body(Body::empty()),
    }
    .unwrap()
}

async fn send(app: &axum::Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = to_bytes(response.into_body(), 1 << 20).await.unwrap();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, value)
}

/// Plays an episode to its end by bisection through `POST /episodes/{id}/call`.
async fn play(app: &axum::Router, id: &str) -> Value {
    let (mut low, mut high) = (1, 16);
    loop {
        let guess = (low + high) / 2;
        let call = json!({"tool": "guess", "arguments": {"number": guess}});
        let (status, step) = send(
            app,
            request("POST", &format!("/episodes/{id}/call"), Some(call)),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{step}");
        if step["done"] == true {
            return step;
        }
        match step["structured"]["hint"].as_str() {
            Some("higher") => low = guess + 1,
            Some("lower") => high = guess - 1,
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn an_episode_runs_over_the_control_plane_and_its_status_follows_each_step() {
    let app = app();
    let (status, created) = send(
        &app,
        request(
            "POST",
            "/episodes",
            Some(json!({"task": "1-to-16", "seed": 3})),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["env"], "hilo");
    let id = created["id"].as_str().unwrap().to_owned();

    let (_, before) = send(&app, request("GET", &format!("/episodes/{id}"), None)).await;
    assert_eq!(before["turn"], 0);
    assert!(
        before.get("number").is_none(),
        "hidden before the end: {before}"
    );

    let last = play(&app, &id).await;
    assert_eq!(last["reward_components"]["win"], 1.0);
    let (_, after) = send(&app, request("GET", &format!("/episodes/{id}"), None)).await;
    assert_eq!(after["turn"], last["turn"]);
    assert_eq!(after["return"], last["return"]);
    assert_eq!(after["done"], true);
    assert_eq!(after["reward_components"]["win"], 1.0);
    assert!(after["number"].is_u64(), "revealed once done: {after}");

    let (_, trajectory) = send(
        &app,
        request("GET", &format!("/episodes/{id}/trajectory"), None),
    )
    .await;
    let lines = trajectory.as_str().unwrap().lines().count();
    assert_eq!(lines as u64, last["turn"].as_u64().unwrap());
}

#[tokio::test]
async fn bad_requests_are_refused_with_a_sentence() {
    let app = app();
    let (status, body) = send(
        &app,
        request("POST", "/episodes", Some(json!({"env": "chess"}))),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("chess"), "{body}");

    let (status, body) = send(
        &app,
        request(
            "POST",
            "/episodes",
            Some(json!({"options": {"guesses": "many"}})),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains(r#"allowed: {"guesses": integer}"#),
        "{body}"
    );

    let (_, created) = send(&app, request("POST", "/episodes", Some(json!({})))).await;
    let call = format!("/episodes/{}/call", created["id"].as_str().unwrap());
    let (status, body) = send(
        &app,
        request("POST", &call, Some(json!({"tool": "resign"}))),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("hilo offers: guess, rules"),
        "{body}"
    );
    let (status, body) = send(
        &app,
        request(
            "POST",
            &call,
            Some(json!({"tool": "guess", "arguments": {"number": -1}})),
        ),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a bad argument is the model's mistake: {body}"
    );
    assert_eq!(body["is_error"], true);
    assert_eq!(body["turn"], 1);

    let (status, _) = send(&app, request("GET", "/episodes/0123abcd", None)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_guard_refuses_foreign_hosts_and_origins() {
    let app = app();
    let mut foreign = request("GET", "/tasks", None);
    foreign
        .headers_mut()
        .insert(header::HOST, "evil.example".parse().unwrap());
    assert_eq!(send(&app, foreign).await.0, StatusCode::FORBIDDEN);

    let mut cross_site = request("GET", "/tasks", None);
    cross_site
        .headers_mut()
        .insert(header::ORIGIN, "https://evil.example".parse().unwrap());
    assert_eq!(send(&app, cross_site).await.0, StatusCode::FORBIDDEN);

    let mut dev_name = request("GET", "/tasks?env=hilo&split=test", None);
    dev_name
        .headers_mut()
        .insert(header::HOST, "app.localhost:8000".parse().unwrap());
    let (status, tasks) = send(&app, dev_name).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(tasks["tasks"], json!(["1-to-50", "1-to-5000"]));
}

#[tokio::test]
async fn a_stateless_tool_call_is_answered_directly_with_its_step_in_meta() {
    let app = app();
    let (_, created) = send(&app, request("POST", "/episodes", Some(json!({})))).await;
    let id = created["id"].as_str().unwrap();
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {
            "name": "rules", "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let mut call = request("POST", &format!("/episodes/{id}/mcp"), Some(body));
    let headers = call.headers_mut();
    headers.insert(
        header::ACCEPT,
        "application/json, text/event-stream".parse().unwrap(),
    );
    headers.insert("mcp-protocol-version", "2026-07-28".parse().unwrap());
    headers.insert("mcp-method", "tools/call".parse().unwrap());
    headers.insert("mcp-name", "rules".parse().unwrap());
    let (status, reply) = send(&app, call).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(reply["id"], 7);
    let meta = &reply["result"]["_meta"];
    assert_eq!(meta["mcpgym/step"]["turn"], 1, "{reply}");
    assert_eq!(meta["mcpgym/episode"], id);
    assert_eq!(reply["result"]["structuredContent"]["hint"], "none");
}
