//! `mcpgym replay FILE` on files the real binary recorded with `--trajectory-dir`: a client
//! that fetched the prompt before its first call, and cells whose output holds the clock,
//! timings, `ls -l` and ids, replay as a match; a tampered record is reported as differing.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::*;

/// Task: total revenue of the North region in sales.csv (numeric grader).
const TASK: &str = "classic/0";

/// Cells whose output changes from run to run in every volatile way replay masks, around a
/// computed answer that does not.
const CELLS: &[&str] = &[
    "x = 20 + 1\nprint(x)",
    "import datetime, time, uuid, os, subprocess\nstarted = time.time()\nprint(datetime.datetime.now())\nprint(datetime.datetime.now(datetime.timezone.utc).isoformat())\nprint(datetime.date.today())\nprint(time.ctime())\nprint('stamp', time.time())\nprint(subprocess.run(['ls', '-l'], capture_output=True, text=True).stdout)\nprint(object())\nprint('run', uuid.uuid4(), uuid.uuid4().hex)\nprint('pid', os.getpid())\nprint(f'took {time.time() - started:.4f} s')\nprint('answer', x * 2)",
];

/// The task's solution: prints the North region's revenue.
const SOLUTION: &str = "import csv\nrows = list(csv.DictReader(open('sales.csv')))\nprint(f\"{sum(int(r['units']) * float(r['unit_price']) for r in rows if r['region'] == 'North'):.2f}\")";

/// A shell command with the same kind of output.
const SHELL: &str = "date; date -u +%FT%T.%NZ; ls -l; echo total lines $(wc -l < sales.csv)";

/// A fresh folder for one test's trajectories.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpgym-replay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The file's records, parsed.
fn records(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Writes `records` as a trajectory file named like `original`, in `dir`.
fn write_records(dir: &Path, original: &Path, records: &[Value]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(original.file_name().unwrap());
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn a_jupyter_episode_fetching_the_prompt_first_and_printing_the_clock_replays() {
    let dir = folder("jupyter");
    let dir_arg = dir.display().to_string();
    let server = HttpServer::start(&["jupyter", "--trajectory-dir", &dir_arg]);
    let control = server.control();
    let id = server
        .create(NewEpisode::default().env("jupyter").task(TASK))
        .await
        .id;
    let prompt = control.prompt(&id).await.unwrap();
    assert!(prompt.contains("sales.csv"), "{prompt}");
    let mut observations = Vec::new();
    for code in CELLS {
        let step = control
            .call(&id, "add_and_execute_code_cell", json!({ "code": code }))
            .await
            .unwrap();
        assert!(!step.is_error, "{}", step.text());
        observations.push(step.text());
    }
    let shell = control
        .call(&id, "execute_shell_command", json!({ "command": SHELL }))
        .await
        .unwrap();
    assert!(!shell.is_error, "{}", shell.text());
    server.close(&id).await;
    // A second episode, prompt fetched first too, solved and answered.
    let solved = server
        .create(NewEpisode::default().env("jupyter").task(TASK))
        .await
        .id;
    control.prompt(&solved).await.unwrap();
    let total = control
        .call(
            &solved,
            "add_and_execute_code_cell",
            json!({ "code": SOLUTION }),
        )
        .await
        .unwrap()
        .text();
    let answered = control
        .call(&solved, "final_answer", json!({ "answer": total.trim() }))
        .await
        .unwrap();
    assert!(answered.done, "{}", answered.text());
    assert_eq!(
        answered.reward_components.get("correct"),
        Some(&1.0),
        "{}",
        answered.text()
    );
    drop(server);

    // The prompt was fetched first, so the first observation is the cell's output alone.
    assert_eq!(observations[0], "21");
    let clock = &observations[1];
    for part in [
        "answer 42",
        "sales.csv",
        "-rw-r--r--",
        " at 0x",
        "pid ",
        "took ",
    ] {
        assert!(clock.contains(part), "{part:?} in {clock}");
    }
    let file = dir.join(format!("{id}.jsonl"));
    let recorded = records(&file);
    let kinds: Vec<&str> = recorded
        .iter()
        .map(|r| r["record"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["header", "prompt", "step", "step", "step", "end"]);
    assert_eq!(recorded[1]["turn"], 0);

    // A second later every clock, timing and id differs, and the file replays as a match.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (matched, printed) = replay(&file);
    assert!(matched, "{printed}");
    assert!(
        printed.contains("3 steps): every observation and reward matches"),
        "{printed}"
    );

    // A recorded answer changed: reported as a difference at its turn, with the value.
    let mut tampered = recorded.clone();
    let step = &mut tampered[3];
    let observation = step["observation"]
        .as_str()
        .unwrap()
        .replace("answer 42", "answer 43");
    step["observation"] = json!(observation);
    let stdout = step["structured"]["stdout"]
        .as_str()
        .unwrap()
        .replace("answer 42", "answer 43");
    step["structured"]["stdout"] = json!(stdout);
    let edited = write_records(&dir.join("tampered"), &file, &tampered);
    let (matched, printed) = replay(&edited);
    assert!(!matched, "{printed}");
    assert!(
        printed.contains("differs at turn 2 (add_and_execute_code_cell): the observation differs"),
        "{printed}"
    );
    assert!(
        printed.contains("answer 43") && printed.contains("answer 42"),
        "{printed}"
    );

    // Without its prompt line the file no longer says the prompt was handed over first: the
    // replayed first observation carries the task, and replay says so at turn 1.
    let unprompted: Vec<Value> = recorded
        .iter()
        .filter(|r| r["record"] != "prompt")
        .cloned()
        .collect();
    let edited = write_records(&dir.join("unprompted"), &file, &unprompted);
    let (matched, printed) = replay(&edited);
    assert!(!matched, "{printed}");
    assert!(
        printed.contains("differs at turn 1") && printed.contains("Task:"),
        "{printed}"
    );

    // Rescored offline, the answered episode agrees with the reward it was paid.
    let solved = dir.join(format!("{solved}.jsonl"));
    assert!(records(&solved).iter().any(|r| r["record"] == "prompt"));
    let (agrees, printed) = rescore(&[&solved]);
    assert!(agrees, "{printed}");
    assert!(printed.contains(": agrees (return "), "{printed}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Wordle and Hi-Lo have no task text beyond their instructions; their files still say
/// where the prompt was fetched, and replay as a match.
#[tokio::test(flavor = "multi_thread")]
async fn wordle_and_hilo_episodes_fetching_the_prompt_first_replay() {
    let dir = folder("serve");
    let dir_arg = dir.display().to_string();
    let server = HttpServer::start(&["serve", "--trajectory-dir", &dir_arg]);
    let control = server.control();
    let mut files = Vec::new();
    for (env, tool, arguments) in [
        ("wordle", "guess", json!({ "word": "crane" })),
        ("hilo", "guess", json!({ "number": 50 })),
    ] {
        let id = server.create(NewEpisode::default().env(env)).await.id;
        control.call(&id, tool, arguments.clone()).await.unwrap();
        let prompt = control.prompt(&id).await.unwrap();
        assert!(!prompt.is_empty());
        control.call(&id, tool, arguments).await.unwrap();
        server.close(&id).await;
        files.push(dir.join(format!("{id}.jsonl")));
    }
    drop(server);
    for file in files {
        let recorded = records(&file);
        let prompt = recorded
            .iter()
            .find(|r| r["record"] == "prompt")
            .unwrap_or_else(|| panic!("no prompt line in {}", file.display()));
        assert_eq!(prompt["turn"], 1);
        let (matched, printed) = replay(&file);
        assert!(matched, "{printed}");
        assert!(
            printed.contains("every observation and reward matches"),
            "{printed}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
