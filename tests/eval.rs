//! `mcpgym eval` end to end, through the real binary: the built-in policies give each
//! family its ceiling and floor, and models behind stand-ins for the OpenAI-compatible and
//! Anthropic APIs (local servers answering with scripted tool calls) play episodes, survive
//! rate limits, malformed calls and context overflows, and see screenshots as images. A run
//! that is killed resumes from its summary.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::common::browser::Browser;
use crate::common::*;

/// What a stand-in answers a request with: a status and a JSON body.
type Reply = (u16, Value);
/// A stand-in's script: the request's body and its number (from 0) to the reply.
type Script = Arc<dyn Fn(&Value, usize) -> Reply + Send + Sync>;

/// A model API stand-in on a loopback port: HTTP/1.1 with keep-alive, every request's body
/// kept for the test to read.
struct StandIn {
    url: String,
    requests: Arc<Mutex<Vec<Value>>>,
    /// While set, requests wait unanswered (a model that hangs).
    hold: Arc<std::sync::atomic::AtomicBool>,
}

impl StandIn {
    async fn start(script: Script) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = requests.clone();
        let hold = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let held = hold.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (script, kept, held) = (script.clone(), kept.clone(), held.clone());
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut read = BufReader::new(read);
                    loop {
                        let mut length = 0;
                        let mut line = String::new();
                        loop {
                            line.clear();
                            if read.read_line(&mut line).await.unwrap_or(0) == 0 {
                                return;
                            }
                            if line == "\r\n" {
                                break;
                            }
                            if let Some((name, value)) = line.split_once(':')
                                && name.eq_ignore_ascii_case("content-length")
                            {
                                length = value.trim().parse().unwrap_or(0);
                            }
                        }
                        let mut body = vec![0; length];
                        read.read_exact(&mut body).await.unwrap();
                        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                        while held.load(std::sync::atomic::Ordering::Relaxed) {
                            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        }
                        let n = {
                            let mut kept = kept.lock().unwrap();
                            kept.push(body.clone());
                            kept.len() - 1
                        };
                        let (status, reply) = script(&body, n);
                        let reply = reply.to_string();
                        let head = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\nretry-after: 0\r\ncontent-length: {}\r\n\r\n",
                            reply.len()
                        );
                        if write.write_all(head.as_bytes()).await.is_err()
                            || write.write_all(reply.as_bytes()).await.is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        Self {
            url,
            requests,
            hold,
        }
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

/// An OpenAI chat-completion answer calling `tool` with `arguments` (a JSON string).
fn openai_call(tool: &str, arguments: &str) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": format!("call_{tool}"), "type": "function", "function": {"name": tool, "arguments": arguments}}
    ]}}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
}

/// The text of the last tool message of an OpenAI request.
fn last_tool_text(body: &Value) -> Option<String> {
    body["messages"]
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .map(str::to_owned)
}

/// A model that plays Hi-Lo by bisection, reading the hints' text ("…: the number is in
/// A..=B, …"): `rules` first, then the middle of the range.
fn hilo_model(body: &Value) -> Value {
    let Some(text) = last_tool_text(body) else {
        return openai_call("rules", "{}");
    };
    let range = text
        .split("is in ")
        .nth(1)
        .and_then(|r| r.split(',').next());
    let (low, high) = range
        .and_then(|r| r.split_once("..="))
        .map(|(a, b)| (a.parse::<u64>().unwrap(), b.parse::<u64>().unwrap()))
        .unwrap_or((1, 100));
    openai_call("guess", &json!({"number": (low + high) / 2}).to_string())
}

/// Runs `mcpgym eval ARGS -o DIR`; its stdout and summary.
fn eval(args: &[&str], dir: &std::path::Path) -> (String, Value) {
    let output = Command::new(BIN)
        .arg("eval")
        .args(args)
        .arg("-o")
        .arg(dir)
        .env("MCPGYM_TEST_KEY", "sk-secret-never-shown")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?}: {stdout}\n{stderr}");
    assert!(!stderr.contains("sk-secret") && !stdout.contains("sk-secret"));
    let summary = std::fs::read(dir.join("eval.json")).unwrap();
    (stdout, serde_json::from_slice(&summary).unwrap())
}

/// [`eval`] from an async test (the stand-ins answer on its runtime meanwhile).
async fn eval_async(args: &[&str], dir: &std::path::Path) -> (String, Value) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || {
        eval(&args.iter().map(String::as_str).collect::<Vec<_>>(), &dir)
    })
    .await
    .unwrap()
}

fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpgym-eval-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The table's row for `family`.
fn row<'a>(summary: &'a Value, family: &str) -> &'a Value {
    summary["table"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["family"] == family)
        .unwrap_or_else(|| panic!("no row {family}: {summary}"))
}

/// Every episode's return and pass in the summary equal what its trajectory file recorded.
fn check_against_trajectories(dir: &std::path::Path, summary: &Value) {
    for episode in summary["episodes"].as_array().unwrap() {
        let id = episode["episode"].as_str().unwrap();
        let file = std::fs::read_to_string(dir.join(format!("{id}.jsonl"))).unwrap();
        let steps: Vec<Value> = file
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["record"] == "step")
            .collect();
        let recorded: f64 = steps.iter().map(|s| s["reward"].as_f64().unwrap()).sum();
        assert!(
            (episode["return"].as_f64().unwrap() - recorded).abs() < 1e-9,
            "{episode} vs {recorded}"
        );
        assert_eq!(
            episode["turns"].as_u64().unwrap(),
            steps.len() as u64,
            "{episode}"
        );
    }
    let episodes = summary["episodes"].as_array().unwrap();
    let passed = episodes.iter().filter(|e| e["passed"] == true).count() as f64;
    let all = row(summary, "all");
    assert!((all["pass@1"].as_f64().unwrap() - passed / episodes.len() as f64).abs() < 1e-9);
    let mean: f64 = episodes
        .iter()
        .map(|e| e["return"].as_f64().unwrap())
        .sum::<f64>()
        / episodes.len() as f64;
    assert!((all["mean_reward"].as_f64().unwrap() - mean).abs() < 1e-9);
}

#[test]
fn the_oracle_solves_and_noop_fails_two_seeds_of_every_family() {
    for (env, extra) in [
        ("wordle", vec![]),
        ("hilo", vec![]),
        ("jupyter", vec!["--concurrency", "4"]),
    ] {
        let oracle_dir = fresh_dir(&format!("oracle-{env}"));
        let mut args = vec!["--env", env, "--policy", "oracle", "--per-family", "2"];
        args.extend(&extra);
        let (stdout, oracle) = eval(&args, &oracle_dir);
        check_against_trajectories(&oracle_dir, &oracle);
        let rows = oracle["table"].as_array().unwrap();
        assert!(rows.len() >= 2, "{oracle}");
        if env == "jupyter" {
            assert!(rows.len() > 30, "every Jupyter family: {stdout}");
        }
        for row in rows {
            assert_eq!(row["pass@1"], 1.0, "{env}: {row}\n{stdout}");
        }
        assert!(
            stdout.contains("pass@1") && stdout.contains("all"),
            "{stdout}"
        );

        let noop_dir = fresh_dir(&format!("noop-{env}"));
        args[3] = "noop";
        let (_, noop) = eval(&args, &noop_dir);
        for row in noop["table"].as_array().unwrap() {
            assert_eq!(
                (row["pass@1"].clone(), row["mean_reward"].clone()),
                (json!(0.0), json!(0.0)),
                "{env}: {row}"
            );
        }
        // The same tasks in both.
        let tasks = |s: &Value| -> std::collections::BTreeSet<String> {
            s["episodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["task"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(tasks(&oracle), tasks(&noop));
        for dir in [oracle_dir, noop_dir] {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[tokio::test]
async fn a_model_behind_an_openai_endpoint_survives_rate_limits_and_malformed_calls() {
    // Requests 0 and 1 are refused with 429; request 2 calls a tool with malformed arguments
    // and request 3 one that does not exist; from then on the model bisects.
    let model = StandIn::start(Arc::new(|body, n| match n {
        0 | 1 => (429, json!({"error": {"message": "rate limited"}})),
        2 => (200, openai_call("guess", "{\"number\": ")),
        3 => (200, openai_call("fly_away", "{}")),
        _ => (200, hilo_model(body)),
    }))
    .await;
    let dir = fresh_dir("openai");
    let args = [
        "--env",
        "hilo",
        "--policy",
        "model",
        "--api",
        "openai",
        "--endpoint",
        &model.url,
        "--model",
        "stand-in",
        "--api-key-env",
        "MCPGYM_TEST_KEY",
        "--count",
        "2",
        "-k",
        "2",
        "--concurrency",
        "1",
        "--temperature",
        "0.7",
    ];
    let (stdout, summary) = eval_async(&args, &dir).await;
    check_against_trajectories(&dir, &summary);
    let episodes = summary["episodes"].as_array().unwrap();
    assert_eq!(episodes.len(), 4, "{summary}");
    for episode in episodes {
        assert_eq!(episode["passed"], true, "{episode}");
        assert!(episode["error"].is_null(), "{episode}");
        assert!(episode["tokens_in"].as_u64().unwrap() >= 100, "{episode}");
    }
    let all = row(&summary, "all");
    assert_eq!(
        (all["pass@1"].clone(), all["pass@k"].clone()),
        (json!(1.0), json!(1.0))
    );
    assert_eq!(all["tasks"], 2);
    let tokens_in: u64 = episodes
        .iter()
        .map(|e| e["tokens_in"].as_u64().unwrap())
        .sum();
    assert_eq!(all["tokens_in"].as_u64().unwrap(), tokens_in);
    assert!(stdout.contains(&tokens_in.to_string()), "{stdout}");

    let requests = model.requests();
    // The tools came from the episode's own list, with their schemas; the flags were sent.
    let tools = requests[0]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["guess", "rules"]);
    assert!(tools[0]["function"]["parameters"]["properties"]["number"].is_object());
    assert_eq!(
        (
            requests[0]["model"].clone(),
            requests[0]["temperature"].clone()
        ),
        (json!("stand-in"), json!(0.7))
    );
    assert!(
        requests[0]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Hi-Lo")
    );
    // The malformed call and the unknown tool were answered to the model, which went on.
    let malformed = last_tool_text(&requests[3]).unwrap();
    assert!(malformed.contains("not valid JSON"), "{malformed}");
    let unknown = last_tool_text(&requests[4]).unwrap();
    assert!(unknown.contains("fly_away"), "{unknown}");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn an_endpoint_that_breaks_ends_its_episode_not_the_run() {
    // Every conversation on the 1-to-100 task overflows; the others fail with a 400.
    let model = StandIn::start(Arc::new(|body, _| {
        let prompt = body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let _ = prompt;
        if last_tool_text(body).is_some() {
            (
                400,
                json!({"error": {"message": "This model's maximum context length is 8192 tokens"}}),
            )
        } else {
            (200, openai_call("rules", "{}"))
        }
    }))
    .await;
    let dir = fresh_dir("broken");
    let url = model.url.clone();
    let (_, summary) = eval_async(
        &[
            "--env",
            "hilo",
            "--model",
            "m",
            "--endpoint",
            &url,
            "--count",
            "2",
            "--retries",
            "1",
        ],
        &dir,
    )
    .await;
    let episodes = summary["episodes"].as_array().unwrap();
    assert_eq!(episodes.len(), 2);
    for episode in episodes {
        assert!(
            episode["error"]
                .as_str()
                .unwrap()
                .contains("context overflowed"),
            "{episode}"
        );
        assert_eq!(episode["turns"], 1);
        assert_eq!(episode["passed"], false);
    }
    assert_eq!(row(&summary, "all")["errors"], 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_killed_run_resumes_without_playing_finished_episodes_again() {
    // The model answers at once until told to hang, so the run can be killed mid-way.
    let model = StandIn::start(Arc::new(|body, _| (200, hilo_model(body)))).await;
    let hang = model.hold.clone();
    let dir = fresh_dir("resume");
    let args = [
        "eval",
        "--env",
        "hilo",
        "--model",
        "m",
        "--endpoint",
        &model.url,
        "--count",
        "6",
        "--concurrency",
        "1",
    ];
    let mut child = Command::new(BIN)
        .args(args)
        .arg("-o")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let summary_file = dir.join("eval.json");
    let finished = |file: &std::path::Path| -> Vec<Value> {
        std::fs::read(file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .map(|s| s["episodes"].as_array().unwrap().clone())
            .unwrap_or_default()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while finished(&summary_file).len() < 2 {
        assert!(std::time::Instant::now() < deadline, "no episode finished");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    hang.store(true, std::sync::atomic::Ordering::Relaxed);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    child.kill().unwrap();
    child.wait().unwrap();
    hang.store(false, std::sync::atomic::Ordering::Relaxed);
    let before = finished(&summary_file);
    assert!((2..6).contains(&before.len()), "{before:?}");

    let (stdout, summary) = eval_async(&args[1..], &dir).await;
    let after = summary["episodes"].as_array().unwrap();
    assert_eq!(after.len(), 6, "{stdout}");
    // The episodes finished before the kill are kept as they were, not played again.
    for episode in &before {
        assert_eq!(
            after
                .iter()
                .filter(|e| e["task"] == episode["task"] && e["seed"] == episode["seed"])
                .count(),
            1
        );
        assert!(after.contains(episode), "{episode}");
    }
    assert_eq!(row(&summary, "all")["pass@1"], 1.0);
    // Other settings in the same folder are refused with a sentence.
    let refused = Command::new(BIN)
        .args(["eval", "--env", "hilo", "--policy", "noop", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("other settings"));
    let _ = std::fs::remove_dir_all(dir);
}

/// Whether an Anthropic content list holds a base64 PNG image.
fn has_png(content: &Value) -> bool {
    content.as_array().is_some_and(|blocks| {
        blocks.iter().any(|b| {
            b["type"] == "image"
                && b["source"]["media_type"] == "image/png"
                && b["source"]["data"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("iVBORw0KGgo"))
        })
    })
}

#[tokio::test]
async fn anthropic_computer_use_and_qwen3vl_see_the_desktop_as_images() {
    // Anthropic: a screenshot through the computer tool, then terminate.
    let claude = StandIn::start(Arc::new(|body, _| {
        let messages = body["messages"].as_array().unwrap();
        let tool_use = |name: &str, input: Value| {
            json!({"content": [{"type": "text", "text": "Looking."},
                               {"type": "tool_use", "id": format!("toolu_{}", messages.len()), "name": name, "input": input}],
                   "stop_reason": "tool_use", "usage": {"input_tokens": 1000, "output_tokens": 20}})
        };
        match messages.len() {
            1 => (200, tool_use("computer", json!({"action": "screenshot"}))),
            3 => (200, tool_use("terminate", json!({"status": "failure"}))),
            _ => (200, json!({"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}})),
        }
    }))
    .await;
    let dir = fresh_dir("anthropic");
    let url = claude.url.clone();
    let (_, summary) = eval_async(
        &[
            "--env",
            "desktop",
            "--api",
            "anthropic",
            "--model",
            "claude",
            "--endpoint",
            &url,
            "--count",
            "1",
        ],
        &dir,
    )
    .await;
    check_against_trajectories(&dir, &summary);
    let requests = claude.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let tools = requests[0]["tools"].as_array().unwrap();
    let computer = tools.iter().find(|t| t["name"] == "computer").unwrap();
    assert_eq!(computer["type"], "computer_20251124");
    assert!(
        computer["display_width_px"].as_u64().unwrap() > 0
            && computer["display_height_px"].as_u64().unwrap() > 0
    );
    assert!(
        tools
            .iter()
            .any(|t| t["name"] == "terminate" && t["input_schema"].is_object())
    );
    assert!(
        !tools.iter().any(|t| t["name"] == "left_click"),
        "one-action tools are the computer tool's"
    );
    let result = &requests[1]["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert!(has_png(&result["content"]), "{result}");
    let episode = &summary["episodes"][0];
    assert_eq!(
        (episode["passed"].clone(), episode["done"].clone()),
        (json!(false), json!(true)),
        "{episode}"
    );
    assert_eq!(episode["tokens_in"], 2000);

    // Qwen3-VL: its computer_use function, and the screen as the user's image.
    let qwen = StandIn::start(Arc::new(|body, _| {
        if last_tool_text(body).is_none() {
            (
                200,
                openai_call(
                    "computer_use",
                    r#"{"action": "left_click", "coordinate": [500, 500]}"#,
                ),
            )
        } else {
            (
                200,
                openai_call(
                    "computer_use",
                    r#"{"action": "terminate", "status": "failure"}"#,
                ),
            )
        }
    }))
    .await;
    let qwen_dir = fresh_dir("qwen");
    let url = qwen.url.clone();
    let (_, summary) = eval_async(
        &[
            "--env",
            "desktop",
            "--api",
            "qwen3vl",
            "--model",
            "qwen3-vl",
            "--endpoint",
            &url,
            "--count",
            "1",
        ],
        &qwen_dir,
    )
    .await;
    let requests = qwen.requests();
    let names: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"computer_use"), "{names:?}");
    let image = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(image["role"], "user");
    assert!(
        image["content"][1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{image}"
    );
    assert_eq!(summary["episodes"][0]["done"], true, "{summary}");
    for dir in [dir, qwen_dir] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn the_desktop_oracle_plays_demos_and_noop_leaves_the_desktop_ungraded() {
    // The fast tier plays a terminal and an editor family; the full tier every family.
    let families = by_tier("terminal_rename_file,editor_write_save", "");
    let mut args = vec![
        "--env",
        "desktop",
        "--policy",
        "oracle",
        "--per-family",
        "2",
        "--concurrency",
        "2",
    ];
    if !families.is_empty() {
        args.extend(["--families", families]);
    }
    let dir = fresh_dir("desktop-oracle");
    let (stdout, oracle) = eval(&args, &dir);
    check_against_trajectories(&dir, &oracle);
    for row in oracle["table"].as_array().unwrap() {
        assert_eq!(row["pass@1"], 1.0, "{row}\n{stdout}");
    }
    // The demo's calls are in the trajectory, ending in terminate.
    let first = oracle["episodes"][0]["episode"]
        .as_str()
        .unwrap()
        .to_owned();
    let file = std::fs::read_to_string(dir.join(format!("{first}.jsonl"))).unwrap();
    assert!(file.contains("\"tool\":\"terminate\""), "{file}");
    args[3] = "noop";
    let noop_dir = fresh_dir("desktop-noop");
    let (_, noop) = eval(&args, &noop_dir);
    assert_eq!(row(&noop, "all")["pass@1"], 0.0, "{noop}");

    // The demos rescore from the files, titles and clipboard their end records kept, with no
    // display; the no-op episodes never ended, so they paid no grade to compare.
    let (ok, printed) = rescore(&[&dir, &noop_dir]);
    assert!(ok, "{printed}");
    let (played, idle) = (
        oracle["episodes"].as_array().unwrap().len(),
        noop["episodes"].as_array().unwrap().len(),
    );
    assert!(
        printed.contains(&format!(
            " {played} agree, 0 differ, {idle} were not graded online, 0 could not be rescored"
        )),
        "{printed}"
    );
    // A kept file emptied after the fact no longer passes, and is named.
    let file = dir.join(format!("{first}.jsonl"));
    let mut lines: Vec<String> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let mut end: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    let paths = end["graded"]["paths"].as_object_mut().expect("kept paths");
    assert!(!paths.is_empty(), "{end}");
    for entry in paths.values_mut() {
        if entry["kind"] == "file" {
            entry["base64"] = json!("");
        } else {
            *entry = json!({"kind": "absent"});
        }
    }
    *lines.last_mut().unwrap() = end.to_string();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let (ok, printed) = rescore(&[&file]);
    assert!(!ok, "{printed}");
    assert!(
        printed.contains("DIFFERS: component success was 1 online and is 0 graded again"),
        "{printed}"
    );
    for dir in [dir, noop_dir] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[tokio::test]
async fn the_viewer_lists_eval_runs_with_their_tables_and_links_to_each_episode() {
    // Two runs side by side under one folder, as `-o runs/NAME` writes them.
    let root = fresh_dir("viewer");
    let (_, oracle) = eval_async(
        &[
            "--env",
            "hilo",
            "--policy",
            "oracle",
            "--per-family",
            "1",
            "-k",
            "2",
        ],
        &root.join("oracle"),
    )
    .await;
    let (_, noop) = eval_async(
        &["--env", "hilo", "--policy", "noop", "--per-family", "1"],
        &root.join("noop"),
    )
    .await;
    let viewer = HttpServer::start(&["view", root.to_str().unwrap()]);

    // The runs, by folder name, with the tables the summaries hold.
    let evals = viewer.get_json("/evals").await;
    let runs = evals["runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["noop", "oracle"]);
    assert_eq!(runs[1]["table"], oracle["table"]);
    assert_eq!(runs[0]["table"], noop["table"]);
    let oracle_episodes = oracle["episodes"].as_array().unwrap();
    let noop_episodes = noop["episodes"].as_array().unwrap();
    assert!(oracle_episodes.len() >= 2 && !noop_episodes.is_empty());
    // Every episode of both runs is listed and shown from its own folder.
    let listed = viewer.get_json("/episodes?limit=500").await;
    assert_eq!(
        listed["total"].as_u64().unwrap() as usize,
        oracle_episodes.len() + noop_episodes.len()
    );
    let first = oracle_episodes[0]["episode"].as_str().unwrap();
    let status = viewer.get_json(&format!("/episodes/{first}")).await;
    assert_eq!(status["return"], oracle_episodes[0]["return"]);

    // The page shows each run's table as eval prints it, and a link per episode.
    let mut browser = Browser::start().await;
    browser.goto(&viewer.url("/")).await;
    browser
        .wait_for("document.querySelectorAll('.eval-run .eval-row').length > 0 && document.querySelectorAll('.eval-run').length === 2")
        .await;
    let cell = |run: &str, class: &str| {
        format!(
            "document.querySelector('.eval-run[data-run=\"{run}\"] tr.eval-row[data-family=\"all\"] td.{class}').innerText"
        )
    };
    let all = |summary: &Value, field: &str| {
        format!("{:.3}", row(summary, "all")[field].as_f64().unwrap())
    };
    assert_eq!(
        browser.eval(&cell("oracle", "pass-1")).await,
        json!(all(&oracle, "pass@1"))
    );
    assert_eq!(
        browser.eval(&cell("oracle", "pass-1")).await,
        json!("1.000")
    );
    assert_eq!(
        browser.eval(&cell("noop", "mean-reward")).await,
        json!(all(&noop, "mean_reward"))
    );
    assert_eq!(browser.eval(&cell("noop", "pass-k")).await, json!("0.000"));
    let links = browser
        .eval("[...document.querySelectorAll('.eval-run[data-run=\"oracle\"] a.eval-episode')].map(a => a.dataset.episode + (a.classList.contains('passed') ? '+' : '-'))")
        .await;
    let mut links: Vec<String> = serde_json::from_value(links).unwrap();
    links.sort();
    let mut expected: Vec<String> = oracle_episodes
        .iter()
        .map(|e| {
            format!(
                "{}{}",
                e["episode"].as_str().unwrap(),
                if e["passed"] == true { "+" } else { "-" }
            )
        })
        .collect();
    expected.sort();
    assert_eq!(links, expected);
    browser.screenshot("eval-runs").await;

    // A link opens the episode's own page.
    browser
        .eval(&format!(
            "document.querySelector('a.eval-episode[data-episode=\"{first}\"]').click()"
        ))
        .await;
    browser
        .wait_for(&format!(
            "location.pathname === '/view/{first}' && document.querySelector('#state')?.innerText.includes('done')"
        ))
        .await;
    browser.screenshot("eval-episode").await;

    // One run's own folder shows that run alone, named `.`; a summary that is not one is named
    // with the reason, and the rest still listed.
    let single = HttpServer::start(&["view", root.join("oracle").to_str().unwrap()]);
    let evals = single.get_json("/evals").await;
    assert_eq!(evals["runs"][0]["name"], ".");
    assert_eq!(evals["runs"].as_array().unwrap().len(), 1);
    std::fs::create_dir_all(root.join("broken")).unwrap();
    std::fs::write(root.join("broken/eval.json"), "{not json").unwrap();
    let evals = viewer.get_json("/evals").await;
    let broken = evals["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "broken")
        .unwrap();
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("is not a summary mcpgym eval wrote"),
        "{broken}"
    );
    assert_eq!(evals["runs"].as_array().unwrap().len(), 3);
}

#[test]
fn rescore_agrees_with_the_online_rewards_and_names_a_tampered_one() {
    let root = fresh_dir("rescore");
    let (wordle, hilo, jupyter) = (root.join("wordle"), root.join("hilo"), root.join("jupyter"));
    eval(
        &["--env", "wordle", "--policy", "oracle", "--per-family", "1"],
        &wordle,
    );
    eval(
        &[
            "--env",
            "hilo",
            "--policy",
            "random",
            "--per-family",
            "1",
            "-k",
            "2",
        ],
        &hilo,
    );
    // An answer graded alone, two graded by hidden checks on the files left in the home
    // folder (the kept folder goes into a new sandbox), and a model's predictions (the kept
    // file measured again on the host).
    eval(
        &[
            "--env",
            "jupyter",
            "--policy",
            "oracle",
            "--per-family",
            "1",
            "--families",
            "prime-sums,fix-function,organise-files,house-prices,revenue-chart",
        ],
        &jupyter,
    );
    let (ok, printed) = rescore(&[&wordle, &hilo, &jupyter]);
    assert!(ok, "{printed}");
    assert!(
        printed.contains(" 0 differ, 0 were not graded online, 0 could not be rescored"),
        "{printed}"
    );
    let agreed = printed.lines().filter(|l| l.contains(": agrees")).count();
    assert!(agreed >= 7, "{printed}");

    // Test tasks were played under this machine's secret; under another they would be other
    // tasks, so they are not graded again but named, with the fingerprint to look for.
    let other = root.join("other-secret");
    std::fs::write(&other, "ab".repeat(32)).unwrap();
    let output = Command::new(BIN)
        .arg("rescore")
        .arg("--test-secret")
        .arg(&other)
        .arg(&jupyter)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        printed
            .contains("cannot be rescored: it was played under the test secret with fingerprint")
            && printed.contains("--test-secret"),
        "{printed}"
    );
    let header: Value = serde_json::from_str(
        std::fs::read_dir(&jupyter)
            .unwrap()
            .flatten()
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .find(|text| text.contains(r#""record":"header""#))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert!(
        header["test_secret"]
            .as_str()
            .is_some_and(|f| f.len() == 16),
        "{header}"
    );

    // A trajectory whose kept answer was changed after the fact is named, and the run fails.
    let file = std::fs::read_dir(&jupyter)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(r#""task":"prime-sums/"#)))
        .unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let tampered = regex_replace_answer(&text);
    std::fs::write(&file, tampered).unwrap();
    let (ok, printed) = rescore(&[&file]);
    assert!(!ok, "{printed}");
    assert!(
        printed.contains("DIFFERS: component correct was 1 online and is 0 graded again"),
        "{printed}"
    );
}

/// The end record's kept answer replaced by a wrong one.
fn regex_replace_answer(text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let end = lines.last_mut().unwrap();
    let mut record: Value = serde_json::from_str(end).unwrap();
    record["graded"]["answer"] = json!("-1");
    *end = record.to_string();
    lines.join("\n") + "\n"
}
