//! Environments written in Python (`mcpgym python SPEC`, `mcpgym serve --python SPEC`): the
//! example Hi-Lo class played through every door a Rust environment has, a thousand episodes
//! at once, and steps that raise, hang or kill their worker, each ending only its own episode.

use std::process::{Command, Stdio};

use futures::{StreamExt, stream};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::transport::TokioChildProcess;
use serde_json::json;

use crate::common::{
    BIN, Client, ControlClient, HttpServer, NewEpisode, args, http, raw_stateless_call,
    status_and_json, text, tool_names, ws_ask, ws_connect,
};

/// The repository root.
fn repo() -> String {
    format!("{}/../..", env!("CARGO_MANIFEST_DIR"))
}

/// The example environment.
fn example() -> String {
    format!("{}/examples/python/hilo.py:HiLo", repo())
}

/// The misbehaving one.
fn faults() -> String {
    format!("{}/tests/data/python_faults.py:Faults", repo())
}

/// `mcpgym ARGS…` with the checkout's Python package importable by the workers.
fn mcpgym(args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env("PYTHONPATH", format!("{}/python/src", repo()))
        .env("MCPGYM_PYTHON", "python3")
        .env("RUST_LOG", "warn");
    command
}

/// The number the range narrows to from `low..=high` and a hint.
fn narrow(hint: &str, guess: u64, low: &mut u64, high: &mut u64) {
    if hint.starts_with("higher") {
        *low = guess + 1;
    } else if hint.starts_with("lower") {
        *high = guess - 1;
    }
}

/// Plays a Hi-Lo game to its win by bisection through `guess`, which sends one guess and
/// answers (observation text, done).
async fn bisect<F, Fut>(high: u64, mut guess: F) -> u32
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = (String, bool)>,
{
    let (mut low, mut high, mut turns) = (1, high, 0);
    loop {
        let number = (low + high) / 2;
        let (text, done) = guess(number).await;
        turns += 1;
        if text.starts_with("Correct") {
            assert!(done, "{text}");
            return turns;
        }
        assert!(!done, "lost: {text}");
        narrow(&text, number, &mut low, &mut high);
    }
}

fn guess_call(number: u64) -> CallToolRequestParams {
    crate::common::call("guess", args(json!({ "number": number })))
}

#[tokio::test]
async fn a_python_environment_plays_through_the_control_plane_and_both_mcp_eras() {
    let spec = example();
    let server = HttpServer::spawn(mcpgym(&["serve", "--python", &spec]));
    let control = server.control();

    // Its tools, with schemas read from the Python signatures, sit beside the Rust ones.
    let listing = server.get_json("/tools?env=hilo-py").await;
    assert_eq!(tool_names(&listing), ["guess", "rules"], "{listing}");
    let schema = &listing["tools"][0]["inputSchema"];
    assert_eq!(
        schema["properties"]["number"]["type"], "integer",
        "{listing}"
    );
    assert_eq!(schema["required"], json!(["number"]), "{listing}");
    let tasks = control
        .tasks(Some("hilo-py"), crate::common::Split::Test)
        .await
        .unwrap();
    assert_eq!(tasks.tasks, ["1-to-50", "1-to-5000"]);

    // The legacy era, with a session, on the episode's own MCP URL.
    let episode = server
        .create(
            NewEpisode::default()
                .env("hilo-py")
                .task("1-to-1000")
                .seed(9),
        )
        .await;
    let prompt = control.prompt(&episode.id).await.unwrap();
    assert!(prompt.contains("between 1 and 1000"), "{prompt}");
    let client = server.legacy_client(&episode.mcp_url).await;
    let bad = client
        .call_tool(crate::common::call("guess", args(json!({"number": "ten"}))))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert!(
        text(&bad).contains("expected a whole number"),
        "{}",
        text(&bad)
    );
    let turns = bisect(1000, |n| {
        let client = &client;
        async move {
            let result = client.call_tool(guess_call(n)).await.unwrap();
            (text(&result), crate::common::step(&result)["done"] == true)
        }
    })
    .await;
    let status = server.status(&episode.id).await;
    assert!(status.done && !status.aborted, "{status:?}");
    assert_eq!(status.turn, turns + 1);
    assert_eq!(status.reward_components["win"], 1.0, "{status:?}");
    assert!(status.revealed["number"].is_u64(), "{status:?}");
    client.cancel().await.unwrap();

    // The stateless era: plain POSTs naming the episode.
    let episode = server
        .create(
            NewEpisode::default()
                .env("hilo-py")
                .task("1-to-100")
                .seed(4),
        )
        .await;
    let url = server.url(&episode.mcp_url);
    bisect(100, |n| {
        let url = url.clone();
        async move {
            let answer = raw_stateless_call(&url, "guess", json!({"number": n}), json!({})).await;
            let result = &answer["result"];
            let text = result["content"][0]["text"].as_str().unwrap().to_owned();
            (text, result["_meta"]["mcpgym/step"]["done"] == true)
        }
    })
    .await;
    assert!(server.status(&episode.id).await.done);
}

#[tokio::test]
async fn a_python_environment_plays_over_stdio() {
    let spec = example();
    let mut command =
        tokio::process::Command::from(mcpgym(&["python", &spec, "--task", "1-to-16"]));
    command.stderr(Stdio::null());
    let client: Client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let info = client.peer_info().unwrap();
    assert!(
        info.instructions
            .as_deref()
            .unwrap_or_default()
            .contains("Hi-Lo"),
        "{info:?}"
    );
    bisect(16, |n| {
        let client = &client;
        async move {
            let result = client.call_tool(guess_call(n)).await.unwrap();
            (text(&result), crate::common::step(&result)["done"] == true)
        }
    })
    .await;
    let over = client.call_tool(guess_call(1)).await.unwrap();
    assert!(text(&over).contains("over"), "{}", text(&over));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_python_environment_plays_through_openenv_and_ors() {
    let spec = example();
    let server = HttpServer::spawn(mcpgym(&["python", &spec]));

    // OpenEnv over its WebSocket.
    let ws_url = server.url("/hilo-py/ws").replacen("http://", "ws://", 1);
    let mut socket = ws_connect(&ws_url).await;
    let reset = ws_ask(
        &mut socket,
        json!({"type": "reset", "data": {"seed": 5, "task": "1-to-50"}}),
    )
    .await;
    let observation = &reset["data"]["observation"];
    assert!(
        observation["prompt"]
            .as_str()
            .unwrap_or_default()
            .contains("between 1 and 50"),
        "{reset}"
    );
    let (mut rewards, mut low, mut high) = (0.0, 1, 50);
    loop {
        let n = (low + high) / 2;
        let step = json!({"type": "step", "data": {"type": "call_tool", "tool_name": "guess", "arguments": {"number": n}}});
        let answer = ws_ask(&mut socket, step).await;
        let data = &answer["data"];
        rewards += data["reward"].as_f64().unwrap_or(0.0);
        let text = data["observation"]["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"));
        if data["done"] == true {
            assert!(text.starts_with("Correct"), "{text}");
            break;
        }
        narrow(text, n, &mut low, &mut high);
    }
    assert!(rewards >= 1.0, "{rewards}");

    // ORS: a session, a task, tool calls with rewards.
    let sid = crate::ors::new_session(&server).await;
    let created = crate::ors::created(
        crate::ors::post_in(&server, "/create", &sid).json(&json!({"split": "train", "index": 0})),
    )
    .await;
    assert!(created.is_object(), "{created}");
    let (mut finished, mut low, mut high) = (false, 1, 16);
    while !finished {
        let n = (low + high) / 2;
        let result = crate::ors::call_tool(
            &server,
            "/hilo-py/call",
            &sid,
            "guess",
            json!({"number": n}),
        )
        .await;
        let output = &result["output"];
        finished = output["finished"] == true;
        let text = output["blocks"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{result}"));
        narrow(text, n, &mut low, &mut high);
    }
    assert!(finished);
}

#[tokio::test]
async fn a_trajectory_of_a_python_environment_replays() {
    let dir = std::env::temp_dir().join(format!("mcpgym-python-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let spec = example();
    let dir_arg = dir.to_string_lossy().into_owned();
    let server = HttpServer::spawn(mcpgym(&["python", &spec, "--trajectory-dir", &dir_arg]));
    let control = server.control();
    let episode = server
        .create(NewEpisode::default().task("1-to-4096").seed(11))
        .await;
    bisect(4096, |n| {
        let control = &control;
        let id = episode.id.clone();
        async move {
            let step = control
                .call(&id, "guess", json!({"number": n}))
                .await
                .unwrap();
            (step_text(&step.content), step.done)
        }
    })
    .await;
    drop(server);
    let file = dir.join(format!("{}.jsonl", episode.id));
    let replay = mcpgym(&["replay", file.to_str().unwrap(), "--python", &spec])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&replay.stdout);
    assert!(
        replay.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    assert!(
        stdout.contains("every observation and reward matches"),
        "{stdout}"
    );

    // A different class under the same name is caught at its first different answer.
    let unnamed = mcpgym(&["replay", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!unnamed.status.success());
    assert!(
        String::from_utf8_lossy(&unnamed.stderr).contains("--python MODULE:CLASS"),
        "{unnamed:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `faults` server with one worker and a two-second step timeout.
fn faults_server() -> HttpServer {
    let spec = faults();
    HttpServer::spawn(mcpgym(&[
        "python",
        &spec,
        "--python-workers",
        "1",
        "--python-step-timeout",
        "2",
    ]))
}

async fn start(control: &ControlClient, seed: u64) -> String {
    control
        .create_episode(&NewEpisode::default().task("one").seed(seed))
        .await
        .unwrap()
        .id
}

async fn count(control: &ControlClient, id: &str) -> String {
    let step = control.call(id, "count", json!({})).await.unwrap();
    assert!(!step.is_error, "{step:?}");
    step_text(&step.content)
}

/// Calls `tool` expecting it to abort the episode: the observation's text.
async fn aborts(control: &ControlClient, id: &str, tool: &str) -> String {
    let step = control.call(id, tool, json!({})).await.unwrap();
    assert!(step.aborted && step.done, "{step:?}");
    let status = control.status(id).await.unwrap();
    assert!(status.aborted, "{status:?}");
    step_text(&step.content)
}

#[tokio::test]
async fn a_step_that_raises_hangs_or_exits_ends_only_its_episode() {
    let server = faults_server();
    let control = server.control();
    let (a, b) = (start(&control, 100).await, start(&control, 200).await);
    assert_eq!(count(&control, &a).await, "one: 101");
    assert_eq!(count(&control, &b).await, "one: 201");

    // Raising: the episode aborts with the exception named; the worker goes on.
    let raised = aborts(&control, &a, "fail").await;
    assert!(
        raised.contains("RuntimeError: failing on purpose at 101"),
        "{raised}"
    );
    assert_eq!(count(&control, &b).await, "one: 202");

    // Hanging: past the timeout the worker is stopped; a call of another episode waiting
    // behind it is answered from a new worker that rebuilt that episode from its calls.
    let c = start(&control, 300).await;
    let (hung, waited) = tokio::join!(aborts(&control, &c, "hang"), async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        count(&control, &b).await
    });
    assert!(hung.contains("ran longer than 2s"), "{hung}");
    assert_eq!(waited, "one: 203");

    // Exiting the worker: that episode aborts with the exit status; the others go on.
    let d = start(&control, 400).await;
    let exited = aborts(&control, &d, "exit_worker").await;
    assert!(
        exited.contains("exited during this step (exit status 3)"),
        "{exited}"
    );
    assert_eq!(count(&control, &b).await, "one: 204");

    // A stopped worker takes what it started with it.
    let e = start(&control, 500).await;
    let step = control.call(&e, "spawn_sleeper", json!({})).await.unwrap();
    let sleeper: i32 = step_text(&step.content).parse().unwrap();
    assert!(std::path::Path::new(&format!("/proc/{sleeper}")).exists());
    aborts(&control, &e, "hang").await;
    let mut gone = false;
    for _ in 0..200 {
        let state = std::fs::read_to_string(format!("/proc/{sleeper}/stat")).unwrap_or_default();
        if state.is_empty() || state.contains(") Z ") {
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(gone, "the sleeper {sleeper} outlived its worker");

    // The episode that lived through all of it still pays.
    let finish = control
        .call(&b, "finish", json!({"pay": 0.5}))
        .await
        .unwrap();
    assert!(finish.done && !finish.aborted, "{finish:?}");
    assert_eq!(control.status(&b).await.unwrap().return_, 0.5);
}

#[tokio::test]
async fn a_class_that_cannot_serve_stops_the_server_with_a_sentence() {
    let missing = mcpgym(&["python", "no_such_module:Env"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let said = String::from_utf8_lossy(&missing.stderr);
    assert!(said.contains("cannot import 'no_such_module'"), "{said}");

    let spec = format!("{}/examples/python/hilo.py:Nothing", repo());
    let wrong = mcpgym(&["python", &spec])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        said.contains("has no class Nothing deriving mcpgym.env.Environment"),
        "{said}"
    );

    let bare = mcpgym(&["python", "examples/python/hilo.py:HiLo"])
        .env("PYTHONPATH", "/nonexistent")
        .current_dir(repo())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&bare.stderr);
    assert!(said.contains("has no mcpgym package"), "{said}");

    // A Python environment may not take a built-in's name.
    let taken = std::env::temp_dir().join(format!("mcpgym-taken-{}.py", std::process::id()));
    std::fs::write(
        &taken,
        "from mcpgym.env import Environment, tool\n\
         class Taken(Environment):\n    name = 'wordle'\n    tasks = {'train': ['a']}\n\
         \n    def reset(self, task, seed):\n        return None\n\
         \n    @tool\n    def go(self) -> str:\n        return 'ok'\n",
    )
    .unwrap();
    let spec = format!("{}:Taken", taken.display());
    let clash = mcpgym(&["serve", "--http", "127.0.0.1:0", "--python", &spec])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&clash.stderr);
    assert!(
        said.contains("is named \"wordle\", which wordle already is"),
        "{said}"
    );
    let _ = std::fs::remove_file(&taken);
}

#[tokio::test]
async fn a_thousand_python_episodes_run_at_once() {
    let spec = faults();
    let server = HttpServer::spawn(mcpgym(&["python", &spec, "--max-episodes", "1000"]));
    let control = server.control();
    // Every episode is live at once; requests go 64 at a time (more than the server's
    // connection limit would only queue in the client).
    let started: Vec<(String, u64)> = stream::iter(0..1000_u64)
        .map(|seed| {
            let control = control.clone();
            async move {
                let id = start(&control, seed * 10).await;
                assert_eq!(
                    count(&control, &id).await,
                    format!("one: {}", seed * 10 + 1)
                );
                (id, seed)
            }
        })
        .buffer_unordered(64)
        .collect()
        .await;
    let live = server.metrics().await;
    assert!(live.contains("mcpgym_episodes_live 1000"), "{live}");
    stream::iter(&started)
        .for_each_concurrent(64, |(id, seed)| {
            let control = control.clone();
            async move {
                let finish = control
                    .call(id, "finish", json!({"pay": *seed as f64}))
                    .await
                    .unwrap();
                assert!(finish.done && !finish.aborted, "{finish:?}");
            }
        })
        .await;
    for (id, seed) in started.iter().step_by(97) {
        assert_eq!(control.status(id).await.unwrap().return_, *seed as f64);
    }
    let metrics = server.metrics().await;
    assert!(
        metrics.contains("mcpgym_episodes_started_total{env=\"faults\"} 1000"),
        "{metrics}"
    );
    let (status, body) = status_and_json(http().get(server.url("/episodes/none"))).await;
    assert_eq!(status, 404, "{body}");
}

/// The text parts of an observation, joined.
fn step_text(content: &[ContentBlock]) -> String {
    let parts: Vec<&str> = content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect();
    parts.join("\n")
}
