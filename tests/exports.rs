//! `mcpgym tasks export` and `mcpgym trajectories export`, run as a user runs them: the rows
//! start the episode of their task with the prompt they show, hold no answer, and recorded
//! episodes come out as chat messages whose tool calls pair with their results. (The Python
//! tests load the same files with `datasets` and play rows through the adapters.)

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcpgym_wordle::{Wordle, WordleConfig};
use serde_json::{Value, json};

use crate::common::{BIN, HttpServer, NewEpisode, http};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpgym-export-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn succeeded(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{}{stderr}",
        String::from_utf8_lossy(&output.stdout)
    );
    stderr
}

fn failed(output: &Output) -> String {
    assert!(!output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn task_rows_start_their_task_with_the_prompt_they_show() {
    let dir = temp_dir("hilo");
    let file = dir.join("hilo.jsonl");
    let file_arg = file.to_str().unwrap();
    let stderr = succeeded(&run(&[
        "tasks", "export", "--env", "hilo", "--count", "6", "--seed", "10", "-o", file_arg,
    ]));
    // Hi-Lo's train split has four tasks: six rows repeat two, with new seeds.
    assert!(stderr.contains("6 rows from 4 distinct tasks"), "{stderr}");
    assert!(!dir.join("hilo.jsonl.partial").exists());
    let rows = lines(&file);
    assert_eq!(rows.len(), 6);
    let tasks: Vec<&str> = rows.iter().map(|r| r["task"].as_str().unwrap()).collect();
    assert_eq!(
        tasks,
        [
            "1-to-16",
            "1-to-100",
            "1-to-1000",
            "1-to-4096",
            "1-to-16",
            "1-to-100"
        ]
    );
    let server = HttpServer::start(&["hilo"]);
    for (index, row) in rows.iter().enumerate() {
        let seed = 10 + index as u64;
        assert_eq!(row["seed"], seed);
        assert_eq!(row["data_source"], "mcpgym/hilo");
        assert_eq!(row["env_class"], "mcpgym");
        assert_eq!(
            row["reward_model"],
            json!({"style": "mcpgym", "ground_truth": ""})
        );
        let start = json!({"task": row["task"], "seed": seed, "split": "train"});
        assert_eq!(row["extra_info"]["index"], index);
        assert_eq!(row["extra_info"]["family"], Value::Null);
        for tool in ["guess", "rules"] {
            assert_eq!(
                row["extra_info"]["tools_kwargs"][tool]["create_kwargs"],
                start
            );
        }
        // What a trainer does with the row: start its task with its seed.
        let episode = server
            .create(
                NewEpisode::default()
                    .task(row["task"].as_str().unwrap())
                    .seed(seed),
            )
            .await;
        assert_eq!(episode.task, row["task"]);
        let prompt = server.control().prompt(&episode.id).await.unwrap();
        assert_eq!(row["prompt"], json!([{"role": "user", "content": prompt}]));
        server.close(&episode.id).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn jupyter_rows_need_no_kernel_and_take_each_family_in_turn() {
    let dir = temp_dir("jupyter");
    let file = dir.join("jupyter.jsonl");
    succeeded(&run(&[
        "tasks",
        "export",
        "--env",
        "jupyter",
        "--split",
        "test",
        "--families",
        "classic,word-frequency",
        "--count",
        "4",
        "-o",
        file.to_str().unwrap(),
    ]));
    let rows = lines(&file);
    let tasks: Vec<&str> = rows.iter().map(|r| r["task"].as_str().unwrap()).collect();
    assert_eq!(tasks[0].split('/').next(), Some("classic"));
    assert_eq!(tasks[1], "word-frequency/900000");
    assert_eq!(tasks[3], "word-frequency/900001");
    for row in &rows {
        let prompt = row["prompt"][0]["content"].as_str().unwrap();
        assert!(prompt.contains("\n\nTask: "), "{prompt}");
        assert_eq!(row["split"], "test");
        assert_eq!(
            row["extra_info"]["family"],
            row["task"].as_str().unwrap().split('/').next().unwrap()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn task_rows_hold_no_answer() {
    let dir = temp_dir("wordle");
    let file = dir.join("wordle.jsonl");
    succeeded(&run(&[
        "tasks",
        "export",
        "--env",
        "wordle",
        "--count",
        "50",
        "-o",
        file.to_str().unwrap(),
    ]));
    let wordle = Wordle::new(WordleConfig::default());
    for line in std::fs::read_to_string(&file).unwrap().lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let answer = wordle.answer_of(row["task"].as_str().unwrap()).unwrap();
        let lower = line.to_lowercase();
        // Whole-word: a five-letter answer may occur inside the instructions' own words.
        let words: HashSet<&str> = lower.split(|c: char| !c.is_ascii_alphabetic()).collect();
        assert!(!words.contains(answer.as_str()), "{answer} in {line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_parquet_export_is_a_whole_parquet_file() {
    let dir = temp_dir("parquet");
    let file = dir.join("wordle.parquet");
    succeeded(&run(&[
        "tasks",
        "export",
        "--env",
        "wordle",
        "--count",
        "20",
        "--format",
        "parquet",
        "-o",
        file.to_str().unwrap(),
    ]));
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    let refused = failed(&run(&[
        "tasks", "export", "--env", "wordle", "--format", "parquet", "-o", "-",
    ]));
    assert!(refused.contains("give a file with --output"), "{refused}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_selection_says_what_to_change() {
    let out = ["-o", "-"];
    let unknown = failed(&run(&[
        &["tasks", "export", "--env", "jupyter", "--families", "nope"][..],
        &out,
    ]
    .concat()));
    assert!(
        unknown.contains("no task family \"nope\"") && unknown.contains("word-frequency"),
        "{unknown}"
    );
    let held_out = failed(&run(&[
        &[
            "tasks",
            "export",
            "--env",
            "jupyter",
            "--families",
            "caesar-cipher",
        ][..],
        &out,
    ]
    .concat()));
    assert!(held_out.contains("has no train tasks"), "{held_out}");
    let listed = failed(&run(&[
        &["tasks", "export", "--env", "wordle", "--families", "x"][..],
        &out,
    ]
    .concat()));
    assert!(listed.contains("leave out --families"), "{listed}");
    let unbounded = failed(&run(
        &[&["tasks", "export", "--env", "jupyter"][..], &out].concat()
    ));
    assert!(unbounded.contains("--count N"), "{unbounded}");
    let flags = failed(&run(&[
        &["tasks", "export", "--env", "jupyter", "--count", "1"][..],
        &out,
        &["--", "--tasks", "/nonexistent/tasks.jsonl"],
    ]
    .concat()));
    assert!(flags.contains("/nonexistent/tasks.jsonl"), "{flags}");
}

/// Every tool call of `messages` is answered by the next message, under the same id, and its
/// arguments are a JSON object; returns the calls' tools.
fn tool_calls(messages: &[Value]) -> Vec<String> {
    assert_eq!(messages[0]["role"], "user");
    let mut tools = Vec::new();
    for pair in messages[1..].chunks(2) {
        let [call, result] = pair else {
            panic!("a tool call without its result: {pair:?}")
        };
        assert_eq!(call["role"], "assistant");
        assert_eq!(call["content"], Value::Null);
        let calls = call["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0]["type"], "function");
        let arguments: Value =
            serde_json::from_str(calls[0]["function"]["arguments"].as_str().unwrap()).unwrap();
        assert!(arguments.is_object());
        assert_eq!(result["role"], "tool");
        assert_eq!(result["tool_call_id"], calls[0]["id"]);
        tools.push(calls[0]["function"]["name"].as_str().unwrap().to_owned());
    }
    tools
}

#[tokio::test]
async fn recorded_wordle_episodes_export_as_tool_call_chats() {
    let dir = temp_dir("trajectories");
    let dir_arg = dir.to_str().unwrap().to_owned();
    let server = HttpServer::start(&["wordle", "--trajectory-dir", &dir_arg]);
    let control = server.control();
    let answer = Wordle::new(WordleConfig::default())
        .answer_of("test-0000")
        .unwrap();
    let won = server.create(NewEpisode::default().task("test-0000")).await;
    for word in ["crane", answer.as_str()] {
        control
            .call(&won.id, "guess", json!({ "word": word }))
            .await
            .unwrap();
    }
    let left = server.create(NewEpisode::default().task("test-0001")).await;
    control
        .call(&left.id, "guess", json!({"word": "crane"}))
        .await
        .unwrap();
    server.close(&left.id).await;
    drop(server);
    // A file that is not a trajectory, and one cut in the middle of a line.
    std::fs::write(dir.join("0bad.jsonl"), "not json\n").unwrap();
    let text = std::fs::read_to_string(dir.join(format!("{}.jsonl", won.id))).unwrap();
    std::fs::write(dir.join("1cut.jsonl"), &text[..text.len() / 2]).unwrap();

    let out = dir.join("chats.jsonl");
    let out_arg = out.to_str().unwrap();
    let export = |extra: &[&str]| {
        let args = [
            &["trajectories", "export", &dir_arg, "-o", out_arg][..],
            extra,
        ]
        .concat();
        let stderr = succeeded(&run(&args));
        (lines(&out), stderr)
    };
    let (chats, stderr) = export(&[]);
    assert!(
        stderr.contains("0bad.jsonl line 1: not a JSON record"),
        "{stderr}"
    );
    assert!(stderr.contains("1cut.jsonl line "), "{stderr}");
    assert!(stderr.contains("wrote 1 episodes"), "{stderr}");
    assert_eq!(chats.len(), 1, "the unfinished episode is left out");
    let chat = &chats[0];
    assert_eq!(chat["episode"], won.id.as_str());
    assert_eq!(chat["task"], "test-0000");
    assert_eq!(chat["passed"], true);
    assert!(chat["reward"].as_f64().unwrap() > 0.0);
    let messages = chat["messages"].as_array().unwrap();
    assert!(
        messages[0]["content"].as_str().unwrap().contains("Wordle"),
        "{}",
        messages[0]
    );
    assert_eq!(tool_calls(messages), ["guess", "guess"]);
    let last = &messages[3]["tool_calls"][0]["function"]["arguments"];
    assert_eq!(last, &json!(format!("{{\"word\":\"{answer}\"}}")));

    let (all, _) = export(&["--include-unfinished"]);
    assert_eq!(all.len(), 2);
    let (none, stderr) = export(&["--min-reward", "100"]);
    assert!(none.is_empty());
    assert!(stderr.contains("1 outside the reward filters"), "{stderr}");
    let (low, _) = export(&["--include-unfinished", "--max-reward", "0"]);
    assert_eq!(low.len(), 1);
    assert_eq!(low[0]["episode"], left.id.as_str());
    let (passed, _) = export(&["--include-unfinished", "--passed-only"]);
    assert_eq!(passed.len(), 1);
    assert_eq!(passed[0]["episode"], won.id.as_str());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_jupyter_plot_exports_as_a_data_url() {
    let dir = temp_dir("plots");
    let dir_arg = dir.to_str().unwrap().to_owned();
    let server = HttpServer::start(&["jupyter", "--trajectory-dir", &dir_arg]);
    let control = server.control();
    let id = server
        .create(NewEpisode::default().task("classic/0"))
        .await
        .id;
    let plot = "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()";
    let step = control
        .call(&id, "add_and_execute_code_cell", json!({ "code": plot }))
        .await
        .unwrap();
    assert!(!step.is_error, "{}", step.text());
    control
        .call(&id, "final_answer", json!({"answer": "0"}))
        .await
        .unwrap();
    drop(server);
    let out = dir.join("chats.jsonl");
    succeeded(&run(&[
        "trajectories",
        "export",
        &dir_arg,
        "--images",
        "data-url",
        "-o",
        out.to_str().unwrap(),
    ]));
    let chats = lines(&out);
    assert_eq!(chats.len(), 1);
    let messages = chats[0]["messages"].as_array().unwrap();
    assert_eq!(
        tool_calls(messages),
        ["add_and_execute_code_cell", "final_answer"]
    );
    // Every content is a list of parts; the plot is an image_url part with a PNG data URL.
    assert!(
        messages
            .iter()
            .all(|m| m["content"].is_array() || m["role"] == "assistant")
    );
    let prompt = messages[0]["content"][0]["text"].as_str().unwrap();
    assert!(prompt.contains("\n\nTask: "), "{prompt}");
    let parts = messages[2]["content"].as_array().unwrap();
    let url = parts
        .iter()
        .find(|p| p["type"] == "image_url")
        .and_then(|p| p["image_url"]["url"].as_str())
        .unwrap_or_else(|| panic!("no image part in {parts:?}"));
    assert!(
        url.starts_with("data:image/png;base64,iVBOR"),
        "{}",
        &url[..40]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes a test secret of 32 bytes, all `byte`, and returns its path.
fn secret_file(dir: &Path, byte: u8) -> PathBuf {
    let path = dir.join(format!("secret-{byte}"));
    std::fs::write(&path, format!("{byte:02x}").repeat(32)).unwrap();
    path
}

/// The prompts of the first rows of `split` of two families, exported under `secret`.
fn prompts(dir: &Path, split: &str, secret: &Path) -> Vec<String> {
    let file = dir.join("tasks.jsonl");
    succeeded(&run(&[
        "tasks",
        "export",
        "--env",
        "jupyter",
        "--split",
        split,
        "--families",
        "join-orders,group-revenue",
        "--count",
        "6",
        "--test-secret",
        secret.to_str().unwrap(),
        "-o",
        file.to_str().unwrap(),
    ]));
    lines(&file)
        .iter()
        .map(|row| row["prompt"][0]["content"].as_str().unwrap().to_owned())
        .collect()
}

/// A test task comes from its id and the server's secret: two secrets pose different test
/// tasks under the same ids, one secret always the same; training tasks depend on neither.
#[test]
fn test_tasks_follow_the_secret_and_train_tasks_do_not() {
    let dir = temp_dir("secret");
    let (one, two) = (secret_file(&dir, 1), secret_file(&dir, 2));
    let test_one = prompts(&dir, "test", &one);
    assert_eq!(
        prompts(&dir, "test", &one),
        test_one,
        "one secret, one task"
    );
    let test_two = prompts(&dir, "test", &two);
    let differ = test_one
        .iter()
        .zip(&test_two)
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        differ >= 5,
        "only {differ} of 6 test prompts changed with the secret"
    );
    assert_eq!(prompts(&dir, "train", &one), prompts(&dir, "train", &two));
    // A secret file that is not one is refused with what to do.
    std::fs::write(dir.join("bad"), "not hex").unwrap();
    let stderr = failed(&run(&[
        "tasks",
        "export",
        "--env",
        "jupyter",
        "--test-secret",
        dir.join("bad").to_str().unwrap(),
        "-o",
        "-",
    ]));
    assert!(stderr.contains("64 hexadecimal digits"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `GET /tasks` lists the levels of a family that has them, and none for one that does not.
#[tokio::test]
async fn the_task_list_names_each_familys_levels() {
    let server = HttpServer::start(&["jupyter"]);
    let listed = server.get_json("/tasks?env=jupyter&limit=1").await;
    let families = listed["families"].as_array().unwrap();
    let levels =
        |name: &str| families.iter().find(|f| f["name"] == name).unwrap()["levels"].clone();
    assert_eq!(levels("join-orders"), json!(["easy", "medium", "hard"]));
    assert_eq!(levels("classic"), json!([]));
}

/// `--levels` keeps an export to the instances of those levels, from the families that have
/// them, and says what to change when a named family has none.
#[test]
fn an_export_at_levels_holds_only_tasks_of_those_levels() {
    let dir = temp_dir("levels");
    let file = dir.join("hard.jsonl");
    succeeded(&run(&[
        "tasks",
        "export",
        "--env",
        "jupyter",
        "--levels",
        "hard",
        "--count",
        "60",
        "-o",
        file.to_str().unwrap(),
    ]));
    let rows = lines(&file);
    assert_eq!(rows.len(), 60);
    let mut families = HashSet::new();
    for row in &rows {
        let task = row["task"].as_str().unwrap();
        let (family, n) = task.rsplit_once('/').unwrap();
        assert_eq!(
            n.parse::<u64>().unwrap() % 3,
            2,
            "{task} is not a hard instance"
        );
        families.insert(family.to_owned());
    }
    assert!(families.len() > 5, "{families:?}");
    assert!(!families.contains("classic"), "classic has no levels");
    let unlevelled = failed(&run(&[
        "tasks",
        "export",
        "--env",
        "jupyter",
        "--levels",
        "easy",
        "--families",
        "classic",
        "-o",
        "-",
    ]));
    assert!(unlevelled.contains("has no levels"), "{unlevelled}");
    let unknown = failed(&run(&[
        "tasks", "export", "--env", "jupyter", "--levels", "extreme", "-o", "-",
    ]));
    assert!(unknown.contains("unknown level \"extreme\""), "{unknown}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server started with `--levels` draws its episodes' tasks from those levels; a request's
/// own `levels` overrides it, and a level that is none is refused with the three names.
#[tokio::test]
async fn episodes_are_drawn_at_the_levels_asked_for() {
    let server = HttpServer::start(&["jupyter", "--levels", "easy"]);
    let http = http();
    let create = |body: Value| {
        let http = http.clone();
        let url = server.url("/episodes");
        async move {
            let response = http.post(url).json(&body).send().await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        }
    };
    for (body, level) in [
        (json!({"seed": 7}), 0),
        (json!({"seed": 8, "levels": ["hard"]}), 2),
    ] {
        let (status, created) = create(body).await;
        assert!(status.is_success(), "{created}");
        let task = created["task"].as_str().unwrap();
        let n: u64 = task.rsplit_once('/').unwrap().1.parse().unwrap();
        assert_eq!(n % 3, level, "{task}");
        let id = created["id"].as_str().unwrap();
        http.delete(server.url(&format!("/episodes/{id}")))
            .send()
            .await
            .unwrap();
    }
    let (status, refused) = create(json!({"levels": ["extreme"]})).await;
    assert!(status.is_client_error(), "{refused}");
    let message = refused["error"].as_str();
    assert!(
        message.is_some_and(|m| m.contains("extreme") && m.contains("hard")),
        "{refused}"
    );
}
