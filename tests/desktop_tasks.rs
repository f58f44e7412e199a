//! Every desktop task through the real binary: its grader fails on the untouched desktop and
//! passes after its scripted, keyboard-only solution is played through the MCP tools — so
//! each task is solvable with the real applications and graded by the desktop's real state.

use std::sync::Arc;

use crate::common::*;
use mcpgym_desktop::tasks::{
    DEMO_WAIT_LIMIT, DemoCall, DemoCondition, DemoStep, DesktopTask, catalog,
};
use serde_json::{Value, json};

/// How the tests that play demos start the server: `run_command` listed, so that a demo
/// step waiting for a window or a file can look for it.
pub(crate) const DEMO_SERVER: &[&str] = &[
    "desktop",
    "--max-turns",
    "1000",
    "--no-action-screenshots",
    "--allow-shell",
];

/// Waits until `condition` holds on the episode's desktop, asking with `run_command` (its
/// server runs with `--allow-shell`); after [`DEMO_WAIT_LIMIT`], says what never came.
pub(crate) async fn wait_for(client: &Client, condition: &DemoCondition) -> Result<(), String> {
    let started = std::time::Instant::now();
    let command = condition.shell_test();
    loop {
        let result = act(client, "run_command", json!({ "command": command })).await;
        if is_error(&result) {
            return Err(format!("run_command failed: {}", text(&result)));
        }
        if result.structured_content.as_ref().map(|s| &s["exit_code"]) == Some(&json!(0)) {
            return Ok(());
        }
        if started.elapsed() > DEMO_WAIT_LIMIT {
            return Err(format!(
                "waited {DEMO_WAIT_LIMIT:?} for {condition}, which never came ({})",
                text(&result)
            ));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Plays `task`'s demo on `client` (an episode served with `--allow-shell`, so that a demo
/// waiting for a window or a file can look for it with `run_command`).
pub(crate) async fn play_demo(client: &Client, task: &DesktopTask) -> Result<(), String> {
    play_steps(client, task, task.demo()).await
}

/// Plays demo steps (a demo's or a hack's) through the MCP tools.
pub(crate) async fn play_steps(
    client: &Client,
    task: &DesktopTask,
    steps: &[mcpgym_desktop::tasks::DemoStep],
) -> Result<(), String> {
    for demo_step in steps {
        match demo_step.call() {
            DemoCall::Tool(tool, arguments) => {
                let result = act(client, tool, arguments).await;
                if is_error(&result) {
                    return Err(format!("{}: {tool} failed: {}", task.id, text(&result)));
                }
            }
            DemoCall::Until(condition) => wait_for(client, &condition)
                .await
                .map_err(|waited| format!("{}: {waited}", task.id))?,
        }
    }
    Ok(())
}

pub(crate) async fn episode(server: &HttpServer, task: &str) -> Client {
    episode_with_id(server, task)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .1
}

/// A new episode of `task`: its id and an MCP client on it.
async fn episode_with_id(server: &HttpServer, task: &str) -> Result<(String, Client), String> {
    let id = server
        .control()
        .create_episode(&NewEpisode::default().env("desktop").task(task))
        .await
        .map_err(|e| format!("{task}: the episode did not start: {e}"))?
        .id;
    let client = server.legacy_client(&format!("/episodes/{id}/mcp")).await;
    Ok((id, client))
}

/// Plays a task twice: untouched (must fail) and solved by its demo (must pass).
pub(crate) async fn check_task(
    server: Arc<HttpServer>,
    task: Arc<DesktopTask>,
) -> Result<(), String> {
    check_untouched(&server, &task).await?;
    check_demo_twice(&server, &task).await.map(|_| ())
}

/// [`check_demo`], with a second try on a fresh desktop when the first fails: a demo is a
/// script of keys, and on a loaded machine an application can miss one. A grader or demo
/// that is wrong fails the same way twice; a missed key, almost never. `Some(first failure)`
/// when the second try was needed.
pub(crate) async fn check_demo_twice(
    server: &HttpServer,
    task: &DesktopTask,
) -> Result<Option<String>, String> {
    match check_demo(server, task).await {
        Ok(()) => Ok(None),
        Err(first) => match check_demo(server, task).await {
            Ok(()) => Ok(Some(first)),
            Err(second) => Err(format!("{first}\nand again: {second}")),
        },
    }
}

/// Each of the task's scripted hacks, played through the MCP tools, must score 0.
pub(crate) async fn check_hacks(server: &HttpServer, task: &DesktopTask) -> Result<(), String> {
    for hack in task.hacks() {
        let (_, hacked) = episode_with_id(server, &task.id).await?;
        let played = play_steps(&hacked, task, &hack.steps).await;
        let done = act(&hacked, "terminate", json!({"status": "success"})).await;
        let _ = hacked.cancel().await;
        // A hack that could not be played to its end proves nothing.
        played.map_err(|failed| {
            format!(
                "{}: the hack {:?} did not play: {failed}",
                task.id, hack.name
            )
        })?;
        let outcome = step(&done);
        if outcome["reward"] != 0.0 {
            return Err(format!(
                "{}: the hack {:?} was paid: {outcome} {}",
                task.id,
                hack.name,
                text(&done)
            ));
        }
    }
    Ok(())
}

/// An untouched desktop of the task must fail its grader.
pub(crate) async fn check_untouched(server: &HttpServer, task: &DesktopTask) -> Result<(), String> {
    let (_, untouched) = episode_with_id(server, &task.id).await?;
    let done = act(&untouched, "terminate", json!({"status": "success"})).await;
    let first = step(&done);
    let _ = untouched.cancel().await;
    if first["done"] != true || first["reward"] != 0.0 {
        return Err(format!(
            "{}: an untouched desktop must fail its grader: {first} {}",
            task.id,
            text(&done)
        ));
    }
    Ok(())
}

/// The task's demo, played through the MCP tools, must pass its grader.
pub(crate) async fn check_demo(server: &HttpServer, task: &DesktopTask) -> Result<(), String> {
    let (id, solved) = episode_with_id(server, &task.id).await?;
    if let Err(failed) = play_demo(&solved, task).await {
        let _ = solved.cancel().await;
        return Err(failed);
    }
    let done = act(&solved, "terminate", json!({"status": "success"})).await;
    let step = step(&done);
    if step["reward"] != 1.0 {
        // What each check found, revealed once the episode is over.
        let checks = server
            .control()
            .status(&id)
            .await
            .map(|status| Value::Object(status.revealed).to_string())
            .unwrap_or_default();
        let _ = solved.cancel().await;
        return Err(format!(
            "{}: the demo must pass the grader: {step} {} {checks}",
            task.id,
            text(&done)
        ));
    }
    let _ = solved.cancel().await;
    Ok(())
}

/// The fixed tasks a tier plays: all in the full tier; in the fast tier the first task of each
/// application, so every application the catalog uses is played.
fn tier_tasks() -> Vec<Arc<DesktopTask>> {
    let mut apps = std::collections::HashSet::new();
    catalog()
        .iter()
        .filter(|task| full_tier() || apps.insert(task.app()))
        .cloned()
        .map(Arc::new)
        .collect()
}

#[test]
fn the_fast_tier_plays_a_fixed_task_of_every_application() {
    let played: std::collections::HashSet<_> = tier_tasks().iter().map(|t| t.app()).collect();
    let used: std::collections::HashSet<_> = catalog().iter().map(|t| t.app()).collect();
    assert_eq!(played, used);
    assert!(catalog().len() >= 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_fails_untouched_and_passes_after_its_demo() {
    let server = Arc::new(HttpServer::start(DEMO_SERVER));
    // Two desktops per core: starting applications is what loads the machine, and each task
    // runs its two desktops one after the other.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let places = Arc::new(tokio::sync::Semaphore::new(2 * cores));
    let runs: Vec<_> = tier_tasks()
        .into_iter()
        .map(|task| {
            let (server, places) = (server.clone(), places.clone());
            tokio::spawn(async move {
                let _place = places.acquire_owned().await.unwrap();
                check_task(server, task).await
            })
        })
        .collect();
    let mut failures = Vec::new();
    for run in runs {
        if let Err(message) = run.await.unwrap() {
            failures.push(message);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn the_turn_limit_ends_the_episode_and_grades_the_desktop() {
    // The limit falls on the demo's last step: the desktop is graded then, and passes.
    // A demo of single tool calls (none that waits for a condition, which takes a varying
    // number of calls), so that its length is its turn count.
    let task = catalog()
        .iter()
        .find(|t| {
            t.demo().len() >= 2 && t.demo().iter().all(|s| !matches!(s, DemoStep::WaitFor(_)))
        })
        .expect("a task with a demo");
    let limit = task.demo().len().to_string();
    let server = HttpServer::start(&["desktop", "--max-turns", &limit, "--no-action-screenshots"]);
    let client = episode(&server, &task.id).await;
    let mut last = None;
    for demo_step in task.demo() {
        let DemoCall::Tool(tool, arguments) = demo_step.call() else {
            unreachable!("no condition waits in this demo");
        };
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

/// The example task file shipped in examples/.
fn example_tasks() -> String {
    format!(
        "{}/../../examples/desktop-tasks/tasks.jsonl",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_file_of_ones_own_is_listed_set_up_and_graded() {
    let path = example_tasks();
    let tasks = mcpgym_desktop::task_file::load_task_file(std::path::Path::new(&path)).unwrap();
    let server = Arc::new(HttpServer::start(
        &[DEMO_SERVER, &["--tasks", path.as_str()]].concat(),
    ));
    let listed = server.get_json("/tasks?split=train").await;
    assert_eq!(listed["tasks"], json!(["archive-logs", "greeting-note"]));
    assert_eq!(listed["families"], json!([]));
    let held_out = server.get_json("/tasks?split=test").await;
    assert_eq!(held_out["tasks"], json!(["title-the-terminal"]));
    // The built-in tasks and families are not served beside one's own.
    let refused = server
        .control()
        .create_episode(
            &NewEpisode::default()
                .env("desktop")
                .task("desktop-train-000"),
        )
        .await;
    assert!(refused.is_err(), "{refused:?}");
    // Each task fails untouched and passes after its demo; archive-logs needs its setup
    // command's folder.
    for task in tasks {
        check_task(server.clone(), Arc::new(task))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn a_broken_desktop_task_file_is_refused_with_its_line() {
    let folder =
        std::env::temp_dir().join(format!("mcpgym-bad-desktop-tasks-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("tasks.jsonl");
    let good = r#"{"id": "a", "prompt": "Make x.", "apps": ["terminal"], "checks": [{"kind": "file_exists", "path": "x"}]}"#;
    let cases = [
        (
            r#"{"id": "b", "prompt": "p", "apps": ["terminal"]}"#,
            "line 2: missing field `checks`",
        ),
        (
            r#"{"id": "b", "prompt": "p", "apps": ["terminal"], "checks": [{"kind": "file_exists", "path": "/etc/shadow"}]}"#,
            "line 2",
        ),
        (
            r#"{"id": "b", "prompt": "p", "apps": ["not-a-program"], "checks": [{"kind": "file_exists", "path": "x"}]}"#,
            "is not installed here",
        ),
    ];
    for (bad, said_part) in cases {
        std::fs::write(&file, format!("{good}\n{bad}\n")).unwrap();
        let said = start_fails(&["desktop", "--tasks", file.to_str().unwrap()]);
        assert!(said.contains(said_part), "{said}");
    }
    let said = start_fails(&["desktop", "--tasks", "/nonexistent/tasks.jsonl"]);
    assert!(said.contains("cannot read the task file"), "{said}");
    let _ = std::fs::remove_dir_all(&folder);
}
