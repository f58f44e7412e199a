//! Every desktop task through the real binary: its grader fails on the untouched desktop and
//! passes after its scripted, keyboard-only solution is played through the MCP tools — so
//! each task is solvable with the real applications and graded by the desktop's real state.

use std::sync::Arc;

use crate::common::*;
use mcpgym_desktop::tasks::{DemoStep, DesktopTask, catalog};
use serde_json::{Value, json};

/// The tool call a demo step becomes.
pub(crate) fn demo_call(step: &DemoStep) -> (&'static str, Value) {
    match step {
        DemoStep::Type(text) => ("type", json!({ "text": text })),
        DemoStep::Key(keys) => ("key", json!({ "text": keys })),
        DemoStep::Wait(ms) => ("wait", json!({ "duration": f64::from(*ms) / 1000.0 })),
    }
}

pub(crate) async fn episode(server: &HttpServer, task: &str) -> Client {
    let id = server
        .create(NewEpisode::default().env("desktop").task(task))
        .await
        .id;
    server.legacy_client(&format!("/episodes/{id}/mcp")).await
}

/// Plays a task twice: untouched (must fail) and solved by its demo (must pass).
pub(crate) async fn check_task(
    server: Arc<HttpServer>,
    task: Arc<DesktopTask>,
) -> Result<(), String> {
    let untouched = episode(&server, &task.id).await;
    let done = act(&untouched, "terminate", json!({"status": "success"})).await;
    let first = step(&done);
    if first["done"] != true || first["reward"] != 0.0 {
        return Err(format!(
            "{}: an untouched desktop must fail its grader: {first} {}",
            task.id,
            text(&done)
        ));
    }
    let _ = untouched.cancel().await;

    let solved = episode(&server, &task.id).await;
    for demo_step in task.demo() {
        let (tool, arguments) = demo_call(demo_step);
        let result = act(&solved, tool, arguments).await;
        if is_error(&result) {
            return Err(format!("{}: {tool} failed: {}", task.id, text(&result)));
        }
    }
    let done = act(&solved, "terminate", json!({"status": "success"})).await;
    let step = step(&done);
    let _ = solved.cancel().await;
    if step["reward"] != 1.0 {
        return Err(format!(
            "{}: the demo must pass the grader: {step} {}",
            task.id,
            text(&done)
        ));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_fails_untouched_and_passes_after_its_demo() {
    let server = Arc::new(HttpServer::start(&[
        "desktop",
        "--max-turns",
        "1000",
        "--no-action-screenshots",
    ]));
    let tasks: Vec<Arc<DesktopTask>> = catalog().iter().cloned().map(Arc::new).collect();
    assert!(tasks.len() >= 20);
    // A few desktops at a time: enough to overlap start-up, few enough for two cores.
    let mut failures = Vec::new();
    for chunk in tasks.chunks(3) {
        let runs: Vec<_> = chunk
            .iter()
            .map(|task| tokio::spawn(check_task(server.clone(), task.clone())))
            .collect();
        for run in runs {
            if let Err(message) = run.await.unwrap() {
                failures.push(message);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn the_turn_limit_ends_the_episode_and_grades_the_desktop() {
    // The limit falls on the demo's last step: the desktop is graded then, and passes.
    let task = catalog()
        .iter()
        .find(|t| t.demo().len() >= 2)
        .expect("a task with a demo");
    let limit = task.demo().len().to_string();
    let server = HttpServer::start(&["desktop", "--max-turns", &limit, "--no-action-screenshots"]);
    let client = episode(&server, &task.id).await;
    let mut last = None;
    for demo_step in task.demo() {
        let (tool, arguments) = demo_call(demo_step);
        last = Some(act(&client, tool, arguments).await);
    }
    let last = last.unwrap();
    let step = step(&last);
    assert_eq!(step["done"], true, "{step}");
    assert_eq!(step["truncated"], true, "{step}");
    assert_eq!(
        step["reward_components"]["success"],
        1.0,
        "{step} {}",
        text(&last)
    );
    assert!(text(&last).contains("graded"), "{}", text(&last));
}
