//! The Jupyter environment through the real binary and rmcp's client, over stdio and HTTP,
//! on real jailed kernels from the in-process sandbox service (`--sandbox local`).

use std::time::Duration;

use crate::common::*;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// Task: total revenue of the North region in sales.csv, rounded to 2 places (numeric grader).
const TASK: &str = "classic/0";

/// The agent-side computation of the task's answer, as a cell.
const SOLVE: &str = "import csv\nrows = list(csv.DictReader(open('sales.csv')))\nprint(f\"{sum(int(r['units']) * float(r['unit_price']) for r in rows if r['region'] == 'North'):.2f}\")";

/// A request for a Jupyter episode of `task`.
fn jupyter(task: &str) -> NewEpisode {
    NewEpisode::default().env("jupyter").task(task)
}

async fn cell(client: &Client, code: &str) -> CallToolResult {
    client
        .call_tool(call(
            "add_and_execute_code_cell",
            args(json!({ "code": code })),
        ))
        .await
        .expect("cell call")
}

async fn shell(client: &Client, command: &str) -> CallToolResult {
    client
        .call_tool(call(
            "execute_shell_command",
            args(json!({ "command": command })),
        ))
        .await
        .expect("shell call")
}

async fn answer(client: &Client, answer: &str) -> CallToolResult {
    client
        .call_tool(call("final_answer", args(json!({ "answer": answer }))))
        .await
        .expect("final_answer call")
}

fn images(result: &CallToolResult) -> Vec<(String, String)> {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Image(image) => Some((image.data.clone(), image.mime_type.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn stdio_episode_runs_cells_and_pays_a_right_answer() {
    let client = stdio_client(&["jupyter", "--task", TASK, "--cell-timeout", "30"]).await;
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    for name in [
        "get_task",
        "add_and_execute_code_cell",
        "edit_and_execute_current_cell",
        "execute_shell_command",
        "get_notebook_state",
        "final_answer",
    ] {
        assert!(tools.contains(&name.to_owned()), "{name} in {tools:?}");
    }

    // The first observation carries the task's prompt; the setup's file is there.
    let first = shell(&client, "ls").await;
    let listing = text(&first);
    assert!(listing.starts_with("Task: "), "{listing}");
    assert!(
        listing.contains("sales.csv") && listing.contains("[exit code 0]"),
        "{listing}"
    );
    let task = client
        .call_tool(call("get_task", Default::default()))
        .await
        .unwrap();
    assert!(text(&task).contains("North region"), "{}", text(&task));
    assert!(!text(&task).contains("17758"), "no answer in the prompt");

    // State persists across cells; an empty cell says so.
    assert_eq!(text(&cell(&client, "x = 21").await), "(no output)");
    let doubled = cell(&client, "print(x * 2)").await;
    assert_eq!(text(&doubled), "42");
    assert_eq!(
        doubled.structured_content.as_ref().unwrap()["stdout"],
        "42\n"
    );

    // stderr is shown, and marked.
    let warned = cell(
        &client,
        "import sys\nprint('fine')\nprint('oops', file=sys.stderr)",
    )
    .await;
    assert_eq!(text(&warned), "fine\n[stderr]\noops");

    // An exception: name, message and a traceback without colour codes.
    let raised = cell(&client, "def f():\n    return 1 / 0\nf()").await;
    let shown = text(&raised);
    assert!(
        !is_error(&raised),
        "a raising cell is an observation, not a refused call"
    );
    assert!(
        shown.contains("ZeroDivisionError: division by zero"),
        "{shown}"
    );
    assert!(shown.contains("return 1 / 0"), "{shown}");
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert_eq!(
        raised.structured_content.as_ref().unwrap()["error"]["name"],
        "ZeroDivisionError"
    );

    // The current cell can be fixed in place.
    let fixed = client
        .call_tool(call(
            "edit_and_execute_current_cell",
            args(json!({"code": "def f():\n    return 7\nf()"})),
        ))
        .await
        .unwrap();
    assert_eq!(text(&fixed), "7");

    // Shell: stdout, stderr and the exit code.
    let failed = shell(&client, "echo out; echo err >&2; exit 3").await;
    assert_eq!(text(&failed), "out\n[stderr]\nerr\n[exit code 3]");
    assert_eq!(failed.structured_content.as_ref().unwrap()["exit_code"], 3);
    // The shell's /tmp is the kernel's.
    let wrote = shell(&client, "echo from-shell > /tmp/note.txt").await;
    assert!(text(&wrote).ends_with("[exit code 0]"), "{}", text(&wrote));
    let read = cell(&client, "print(open('/tmp/note.txt').read().strip())").await;
    assert_eq!(text(&read), "from-shell");

    // A plot comes back as a PNG image beside a short text.
    let plot = cell(
        &client,
        "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
    )
    .await;
    let pictures = images(&plot);
    assert_eq!(pictures.len(), 1, "{plot:?}");
    assert_eq!(pictures[0].1, "image/png");
    assert!(
        pictures[0].0.starts_with("iVBORw0KGgo"),
        "PNG magic in base64"
    );
    assert!(text(&plot).contains("1 image(s)"), "{}", text(&plot));

    // Long output is cut, with a marker saying how much.
    let long = cell(&client, "print('a' * 20000)").await;
    let shown = text(&long);
    assert!(shown.contains("characters cut ...]"), "{}", &shown[..100]);
    assert!(shown.len() < 9_000, "{}", shown.len());

    // The notebook lists every cell; the edited one replaced its original.
    let notebook = client
        .call_tool(call("get_notebook_state", Default::default()))
        .await
        .unwrap();
    let cells = notebook.structured_content.as_ref().unwrap()["cells"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(cells, 10, "{}", text(&notebook));

    // The agent computes the answer in the kernel, then submits it.
    let solved = cell(&client, SOLVE).await;
    let value = text(&solved);
    let paid = answer(&client, &value).await;
    let s = step(&paid);
    assert_eq!(s["done"], true, "{s}");
    assert_eq!(s["reward"], 1.0, "{s}");
    assert_eq!(s["reward_components"]["correct"], 1.0, "{s}");
    assert_eq!(paid.structured_content.as_ref().unwrap()["correct"], true);

    // The episode is over: further calls are refused and pay nothing.
    let after = cell(&client, "1 + 1").await;
    assert!(is_error(&after), "{after:?}");
    assert_eq!(step(&after)["reward"], 0.0);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn http_wrong_answer_pays_nothing_and_episodes_are_isolated() {
    let server = HttpServer::start(&["jupyter", "--task", TASK]);
    let a = server.create(jupyter(TASK)).await.id;
    let b = server.create(jupyter(TASK)).await.id;
    let client_a = server.legacy_client(&format!("/episodes/{a}/mcp")).await;
    let client_b = server.legacy_client(&format!("/episodes/{b}/mcp")).await;

    // Both episodes work at once; neither sees the other's variables or files.
    let (wa, wb) = tokio::join!(
        cell(
            &client_a,
            "secret = 'from-a'\nopen('/home/user/a.txt', 'w').write('a')"
        ),
        cell(
            &client_b,
            "secret_b = 'from-b'\nopen('/home/user/b.txt', 'w').write('b')"
        ),
    );
    assert!(!is_error(&wa) && !is_error(&wb));
    let seen_by_b = cell(
        &client_b,
        "import os\nprint('secret' in globals(), os.path.exists('/home/user/a.txt'), os.path.exists('/home/user/b.txt'))",
    )
    .await;
    assert!(
        text(&seen_by_b).ends_with("False False True"),
        "{}",
        text(&seen_by_b)
    );
    let seen_by_a = shell(&client_a, "ls /home/user").await;
    assert!(text(&seen_by_a).contains("a.txt") && !text(&seen_by_a).contains("b.txt"));

    // A wrong answer pays 0 and ends the episode.
    let wrong = answer(&client_a, "1").await;
    let s = step(&wrong);
    assert_eq!(s["done"], true, "{s}");
    assert_eq!(s["reward_components"]["correct"], 0.0, "{s}");
    assert!(text(&wrong).contains("Incorrect"), "{}", text(&wrong));
    assert!(!text(&wrong).contains("17758"), "no answer revealed");
    let status = server.status(&a).await;
    assert!(status.done);
    assert_eq!(status.return_, 0.0);
    // B goes on untouched.
    let still = cell(&client_b, "print(secret_b)").await;
    assert_eq!(text(&still), "from-b");
    client_a.cancel().await.unwrap();
    client_b.cancel().await.unwrap();
}

#[tokio::test]
async fn deleting_an_episode_kills_its_sandbox() {
    let server = HttpServer::start(&["jupyter", "--task", TASK]);
    let id = server.create(jupyter(TASK)).await.id;
    let client = server.legacy_client(&format!("/episodes/{id}/mcp")).await;
    // A marker file in the sandbox's home, which lives on the host under the service's folder.
    let marker = format!("marker-{}", std::process::id());
    let wrote = cell(&client, &format!("open('{marker}', 'w').write('x')")).await;
    assert!(!is_error(&wrote));
    let root = std::env::temp_dir().join(format!("mcpgym-sandbox-{}", server.pid()));
    assert!(find(&root, &marker), "the marker under {}", root.display());

    server.close(&id).await;
    let mut gone = false;
    for _ in 0..100 {
        if !find(&root, &marker) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the sandbox's home outlived its episode");
    // A new episode still works.
    let fresh = server.create(jupyter(TASK)).await.id;
    let other = server
        .legacy_client(&format!("/episodes/{fresh}/mcp"))
        .await;
    let first = text(&cell(&other, "print(6 * 7)").await);
    assert!(
        first.starts_with("Task: ") && first.ends_with("\n---\n42"),
        "{first}"
    );
    other.cancel().await.unwrap();
    let _ = client.cancel().await;
}

/// Host processes whose command line holds `needle` (the jails' processes are visible from the
/// host's /proc).
fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) {
            found.push(pid);
        }
    }
    found
}

/// A numeric answer needs no sandbox to grade, yet it ends what the agent started: a process
/// a cell left in the background and one a shell command left are both gone after it.
#[tokio::test]
async fn what_the_agent_started_stops_when_it_answers() {
    let server = HttpServer::start(&["jupyter", "--task", TASK]);
    let id = server.create(jupyter(TASK)).await.id;
    let client = server.legacy_client(&format!("/episodes/{id}/mcp")).await;
    // Distinct durations, so the host's processes name this test's sleeps alone.
    let (from_cell, from_shell) = (
        format!("{}.25", 4000 + std::process::id() % 1000),
        format!("{}.75", 4000 + std::process::id() % 1000),
    );
    let started = cell(
        &client,
        &format!("import subprocess\nsubprocess.Popen(['sleep', '{from_cell}'])\nprint('ok')"),
    )
    .await;
    assert!(!is_error(&started), "{}", text(&started));
    let shell_started = shell(
        &client,
        &format!("setsid sleep {from_shell} >/dev/null 2>&1 & echo ok"),
    )
    .await;
    assert!(!is_error(&shell_started), "{}", text(&shell_started));
    let mut running = false;
    for _ in 0..50 {
        running = !processes_with(&format!("sleep {from_cell}")).is_empty();
        if running {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(running, "the cell's background process never started");

    let answered = answer(&client, "1").await;
    assert!(text(&answered).contains("Incorrect"), "{}", text(&answered));
    for needle in [&from_cell, &from_shell] {
        let mut left = Vec::new();
        for _ in 0..50 {
            left = processes_with(&format!("sleep {needle}"));
            if left.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            left.is_empty(),
            "sleep {needle} outlived the answer: {left:?}"
        );
    }
    let _ = client.cancel().await;
}

/// Whether a file named `name` exists anywhere below `dir`.
fn find(dir: &std::path::Path, name: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        if entry.file_name() == name {
            return true;
        }
        entry
            .file_type()
            .is_ok_and(|t| t.is_dir() && !t.is_symlink())
            && find(&path, name)
    })
}

/// Task: write people.csv from people.json (graded by a hidden check run in the sandbox).
const CHECK_TASK: &str = "classic/29";

#[tokio::test]
async fn hidden_checks_grade_the_files_the_agent_wrote() {
    let server = HttpServer::start(&["jupyter", "--task", CHECK_TASK]);
    let mut clients = Vec::new();
    for _ in 0..2 {
        let id = server.create(jupyter(CHECK_TASK)).await.id;
        clients.push(server.legacy_client(&format!("/episodes/{id}/mcp")).await);
    }
    // One episode writes the file and says where; the other only says so.
    let wrote = cell(
        &clients[0],
        "import csv, json\nwith open('people.csv', 'w', newline='') as f:\n    w = csv.writer(f)\n    w.writerow(['name', 'age', 'city'])\n    for p in json.load(open('people.json')):\n        w.writerow([p['name'], p['age'], p['city']])",
    )
    .await;
    assert!(
        !is_error(&wrote) && text(&wrote).ends_with("(no output)"),
        "{}",
        text(&wrote)
    );
    let right = answer(&clients[0], "/home/user/people.csv").await;
    assert_eq!(
        step(&right)["reward_components"]["correct"],
        1.0,
        "{}",
        text(&right)
    );
    assert_eq!(step(&right)["done"], true);
    let claimed = answer(&clients[1], "/home/user/people.csv").await;
    assert_eq!(
        step(&claimed)["reward_components"]["correct"],
        0.0,
        "{}",
        text(&claimed)
    );
    assert!(text(&claimed).contains("Incorrect"), "{}", text(&claimed));
    for client in clients {
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_cell_past_its_timeout_is_interrupted_and_the_next_runs() {
    let client = stdio_client(&["jupyter", "--task", TASK, "--cell-timeout", "2"]).await;
    let _ = cell(&client, "kept = 5").await;
    let started = std::time::Instant::now();
    let slow = cell(
        &client,
        "import time\nprint('start', flush=True)\ntime.sleep(60)",
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let shown = text(&slow);
    assert!(
        shown.contains("TimeoutError") && shown.contains("2 s"),
        "{shown}"
    );
    assert!(shown.contains("keeps its variables"), "{shown}");
    let next = cell(&client, "print(kept + 1)").await;
    assert_eq!(text(&next), "6");
    client.cancel().await.unwrap();
}

#[test]
fn bad_sandbox_urls_are_refused_at_start() {
    let said = start_fails(&["jupyter", "--sandbox", "nonsense"]);
    assert!(said.contains("http://HOST:PORT or https://HOST"), "{said}");
    let said = start_fails(&["jupyter", "--sandbox", "ftp://sandboxes.example"]);
    assert!(said.contains("invalid sandbox URL"), "{said}");
}

#[tokio::test]
async fn the_episode_exports_a_valid_notebook() {
    let server = HttpServer::start(&["jupyter", "--task", TASK]);
    let created = server.create(jupyter(TASK)).await;
    let id = created.id.clone();
    let client = server.legacy_client(&created.mcp_url).await;
    cell(&client, "x = 6 * 7\nprint('hello')\nx").await;
    cell(&client, "1 / 0").await;
    shell(&client, "echo from-shell").await;
    client.cancel().await.unwrap();

    let response = http()
        .get(server.url(&format!("/episodes/{id}/notebook")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "application/x-ipynb+json"
    );
    let body = response.text().await.unwrap();
    let notebook: Value = serde_json::from_str(&body).unwrap();
    mcpgym_jupyter::notebook::validate(&notebook).unwrap();
    assert_eq!(notebook["nbformat"], 4);
    let cells = notebook["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4, "the task, two cells and a shell command");
    assert_eq!(cells[0]["cell_type"], "markdown");
    assert!(cells[0]["source"].to_string().contains(TASK));
    assert!(cells[1]["source"].to_string().contains("x = 6 * 7"));
    let outputs = cells[1]["outputs"].to_string();
    assert!(
        outputs.contains("hello") && outputs.contains("42"),
        "{outputs}"
    );
    assert_eq!(cells[2]["outputs"][0]["output_type"], "error");
    assert_eq!(cells[2]["outputs"][0]["ename"], "ZeroDivisionError");
    assert!(cells[3]["source"].to_string().contains("!echo from-shell"));

    // Jupyter's own validator agrees (python3-nbformat, installed by .ci/setup).
    let mut validator = std::process::Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import nbformat, sys; nbformat.validate(nbformat.reads(sys.stdin.read(), as_version=4))",
        ])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    validator
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let checked = validator.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );

    // Other names and other environments' episodes have nothing to export.
    let missing = server.control().document(&id, "slides").await.unwrap_err();
    assert_eq!(missing.status().map(|s| s.as_u16()), Some(404));
    assert!(
        missing
            .to_string()
            .contains("jupyter episodes export: notebook"),
        "{missing}"
    );
}

/// A client that records the progress notifications it receives.
#[derive(Clone, Default)]
struct ProgressLog(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl rmcp::ClientHandler for ProgressLog {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
    }
}

#[tokio::test]
async fn long_cells_report_progress_to_clients_that_ask() {
    use rmcp::ServiceExt;
    let log = ProgressLog::default();
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(["jupyter", "--task", TASK])
        .stderr(std::process::Stdio::null());
    let transport = rmcp::transport::TokioChildProcess::new(command).unwrap();
    let client = log.clone().serve(transport).await.unwrap();
    let mut params = call(
        "add_and_execute_code_cell",
        args(json!({"code": "import time\ntime.sleep(5)\nprint('slept')"})),
    );
    let mut meta = rmcp::model::JsonObject::new();
    meta.insert("progressToken".into(), json!("cell-1"));
    params.meta = Some(rmcp::model::RequestMetaObject(rmcp::model::MetaObject(
        meta,
    )));
    let result = client.call_tool(params).await.unwrap();
    assert!(text(&result).contains("slept"), "{}", text(&result));
    let messages = log.0.lock().unwrap().clone();
    assert!(
        messages.iter().any(|m| m.starts_with("cell running: ")),
        "{messages:?}"
    );
    client.cancel().await.unwrap();
}

/// The loopback TCP ports process `pid` listens on (from its socket descriptors and
/// /proc/PID/net/tcp).
fn listening_ports(pid: u32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            link.strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
                .map(str::to_owned)
        })
        .collect();
    let table = std::fs::read_to_string(format!("/proc/{pid}/net/tcp")).unwrap();
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, state, inode) = (fields[1], fields[3], fields[9]);
            (state == "0A" && inodes.iter().any(|i| i == inode))
                .then(|| u16::from_str_radix(local.rsplit(':').next().unwrap(), 16).unwrap())
        })
        .collect()
}

/// The server's resident memory in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[tokio::test]
async fn the_internal_sandbox_service_refuses_anyone_without_its_token() {
    let server =
        HttpServer::start_with_log(&["jupyter", "--task", TASK], "warn,mcpgym_sandbox=debug");
    let created = server.create(jupyter(TASK)).await;
    let client = server.legacy_client(&created.mcp_url).await;
    assert_eq!(
        text(&cell(&client, "secret = 41\nsecret + 1").await)
            .rsplit('\n')
            .next(),
        Some("42")
    );
    // The sandbox's id, as the service logged it.
    assert!(server.log_contains("sandbox created"));
    let log = mcpgym_jupyter::observe::strip_ansi(&server.log.lock().unwrap());
    let sandbox = log
        .split("sandbox=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("a sandbox id in the log")
        .to_owned();
    let mcp_port: u16 = server.base.rsplit(':').next().unwrap().parse().unwrap();
    let ports: Vec<u16> = listening_ports(server.pid())
        .into_iter()
        .filter(|p| *p != mcp_port)
        .collect();
    assert_eq!(ports.len(), 1, "one internal service port: {ports:?}");
    let internal = format!("http://127.0.0.1:{}", ports[0]);
    let http = http();
    let listed = http
        .get(format!("{internal}/sandboxes"))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 401);
    let listed = http
        .get(format!("{internal}/sandboxes"))
        .header("X-API-Key", "guess")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 401);
    let run = http
        .post(format!("{internal}/execute"))
        .header("E2b-Sandbox-Id", &sandbox)
        .header("E2b-Sandbox-Port", "49999")
        .json(&json!({"code": "secret = 0"}))
        .send()
        .await
        .unwrap();
    assert_eq!(run.status(), 401);
    let said: Value = run.json().await.unwrap();
    assert!(
        said["message"].as_str().unwrap().contains("X-Access-Token"),
        "{said}"
    );
    let files = http
        .get(format!("{internal}/files?path=/home/user/sales.csv"))
        .header("E2b-Sandbox-Id", &sandbox)
        .header("E2b-Sandbox-Port", "49983")
        .send()
        .await
        .unwrap();
    assert_eq!(files.status(), 401);
    let killed = http
        .delete(format!("{internal}/sandboxes/{sandbox}"))
        .send()
        .await
        .unwrap();
    assert_eq!(killed.status(), 401);
    // Untouched: the kernel still has its variable.
    assert_eq!(text(&cell(&client, "secret").await), "41");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn printing_gigabytes_is_cut_and_leaves_the_server_flat() {
    let server = HttpServer::start(&["jupyter", "--task", TASK, "--cell-timeout", "300"]);
    let created = server.create(jupyter(TASK)).await;
    let id = created.id.clone();
    let client = server.legacy_client(&created.mcp_url).await;
    cell(&client, "1").await;
    let before = rss_kib(server.pid());
    for _ in 0..3 {
        let printed = text(
            &shell(
                &client,
                "head -c 1000000000 /dev/zero | tr '\\0' a; echo END",
            )
            .await,
        );
        assert!(printed.len() < 20_000, "{}", printed.len());
        assert!(
            printed.starts_with("aaaa") && printed.contains("END\n[exit code 0]"),
            "{}",
            &printed[printed.len() - 200..]
        );
        let cut = printed
            .split("[... ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap();
        let cut: u64 = cut.parse().unwrap();
        assert!(cut > 999_000_000, "{cut}");
    }
    let value = text(&cell(&client, "'y' * 100_000_000").await);
    assert!(
        value.len() < 20_000 && value.contains("characters cut"),
        "{}",
        value.len()
    );
    let printed = text(
        &cell(
            &client,
            "for i in range(20):\n    print('x' * 10_000_000)\nprint('END')",
        )
        .await,
    );
    assert!(
        printed.len() < 20_000 && printed.contains("characters cut") && printed.ends_with("END"),
        "{}",
        &printed[printed.len() - 200..]
    );
    let cut: u64 = printed
        .split("[... ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(cut > 190_000_000, "{cut}");
    // The kernel is fine, and the stored notebook is small.
    assert_eq!(text(&cell(&client, "6 * 7").await), "42");
    let notebook = server.control().document(&id, "notebook").await.unwrap();
    assert!(
        notebook.len() < 2 << 20,
        "notebook of {} bytes",
        notebook.len()
    );
    client.cancel().await.unwrap();
    server.close(&id).await;
    // The closed episode's buffers are freed as its tasks end: wait for that, up to 10 s.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut after = rss_kib(server.pid());
    while after >= before + 150 * 1024 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        after = rss_kib(server.pid());
    }
    assert!(
        after < before + 150 * 1024,
        "RSS went from {before} KiB to {after} KiB"
    );
}

/// Pids of the IPython kernels below process `ancestor`.
fn kernels_below(ancestor: u32) -> Vec<u32> {
    let parent = |pid: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit(')')
            .next()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("ipykernel_launcher"))
        })
        .filter(|pid| {
            let mut at = *pid;
            for _ in 0..20 {
                match parent(at) {
                    Some(p) if p == ancestor => return true,
                    Some(p) if p > 1 => at = p,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

#[tokio::test]
async fn a_killed_kernel_is_restarted_within_the_call() {
    let server = HttpServer::start(&["jupyter", "--task", TASK, "--cell-timeout", "3"]);
    let created = server.create(jupyter(TASK)).await;
    let client = server.legacy_client(&created.mcp_url).await;
    cell(&client, "kept = 5").await;
    // Killed by its own cell.
    let died = text(
        &cell(
            &client,
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
        )
        .await,
    );
    assert!(
        died.contains("KernelDied") && died.contains("variables and imports are gone"),
        "{died}"
    );
    assert!(!died.contains("Not connected"), "{died}");
    assert!(text(&cell(&client, "kept").await).contains("NameError"));
    assert_eq!(text(&cell(&client, "kept = 6\nkept").await), "6");
    // Killed from outside between two calls: the next call restarts it and runs.
    let kernels = kernels_below(server.pid());
    assert!(!kernels.is_empty());
    for pid in &kernels {
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    // Gone once their parent has reaped them.
    for _ in 0..100 {
        if kernels
            .iter()
            .all(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after = text(&cell(&client, "print('alive')\n'kept' in globals()").await);
    assert!(
        after.contains("had died") && after.contains("variables and imports are gone"),
        "{after}"
    );
    assert!(
        after.contains("alive") && after.ends_with("False"),
        "{after}"
    );
    assert!(!after.contains("Not connected"), "{after}");
    assert_eq!(text(&cell(&client, "6 * 7").await), "42");
    // A timed-out cell that ignores the interrupt loses the variables, and says so.
    cell(&client, "kept = 7").await;
    let stuck = text(&cell(&client, "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.05)").await);
    assert!(
        stuck.contains("TimeoutError")
            && stuck.contains("restarted")
            && stuck.contains("variables and imports are gone"),
        "{stuck}"
    );
    assert!(!stuck.contains("keeps its variables"), "{stuck}");
    assert!(text(&cell(&client, "kept").await).contains("NameError"));
    client.cancel().await.unwrap();
}

/// A family's reference solver as the agent's cell: `PROMPT` is the text `get_task` returned.
fn solver_cell(family: &str, prompt: &str) -> String {
    let path = format!(
        "{}/../../servers/jupyter/families/{family}/solver.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let solver = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    format!(
        "PROMPT = {}\n{solver}",
        serde_json::to_string(prompt).unwrap()
    )
}

#[tokio::test]
async fn generated_families_are_served_listed_and_graded() {
    let server = HttpServer::start(&["jupyter", "--sandbox-pool", "2"]);

    // The task list pages through millions of generated instances, family by family.
    let listed = server.get_json("/tasks?split=test&offset=0&limit=3").await;
    assert!(
        listed["total"].as_u64().unwrap() >= 30 * 100_000,
        "{listed}"
    );
    assert_eq!(
        listed["tasks"],
        json!(["classic/38", "classic/39", "classic/40"])
    );
    let families = listed["families"].as_array().unwrap();
    assert!(families.len() >= 31, "{listed}");
    assert_eq!(families[0]["name"], "classic");
    let too_many = server.get_json("/tasks?limit=100000").await;
    assert!(
        too_many["error"]
            .as_str()
            .unwrap()
            .contains("at most 10000"),
        "{too_many}"
    );

    // A seed picks a task of its split, the same one every time.
    let first = server
        .create(NewEpisode::default().seed(7).split(Split::Test))
        .await;
    let again = server
        .create(NewEpisode::default().seed(7).split(Split::Test))
        .await;
    assert_eq!(first.task, again.task);
    let (family, n) = first.task.rsplit_once('/').unwrap();
    let range = families.iter().find(|f| f["name"] == family).unwrap()["test"].clone();
    let n: u64 = n.parse().unwrap();
    assert!(
        range[0].as_u64().unwrap() <= n && n < range[1].as_u64().unwrap(),
        "{} outside {range}",
        first.task
    );
    for episode in [first, again] {
        server.control().close(&episode.id).await.unwrap();
    }

    // An answer family and a hidden-check family, solved by their reference solvers in the
    // sandbox; an untouched check episode fails.
    for task in ["group-revenue/4242", "fix-function/77"] {
        let created = server.create(jupyter(task)).await;
        let client = server.legacy_client(&created.mcp_url).await;
        let prompt = client
            .call_tool(call("get_task", Default::default()))
            .await
            .unwrap();
        let prompt = step_structured(&prompt)["prompt"]
            .as_str()
            .unwrap()
            .to_owned();
        let family = task.split('/').next().unwrap();
        let solved = cell(&client, &solver_cell(family, &prompt)).await;
        let printed = text(&solved);
        let answer_text = printed.lines().last().unwrap_or_default().to_owned();
        let graded = answer(&client, &answer_text).await;
        assert_eq!(
            step(&graded)["reward_components"]["correct"],
            1.0,
            "{task}: {printed} / {}",
            text(&graded)
        );
        client.cancel().await.unwrap();
    }
    let created = server.create(jupyter("fix-function/78")).await;
    let client = server.legacy_client(&created.mcp_url).await;
    let untouched = answer(&client, "done").await;
    assert_eq!(step(&untouched)["reward_components"]["correct"], 0.0);
    client.cancel().await.unwrap();
}

fn step_structured(result: &CallToolResult) -> Value {
    result
        .structured_content
        .clone()
        .expect("structured content")
}

/// The example task file shipped in examples/.
fn example_tasks() -> String {
    format!(
        "{}/../../examples/jupyter-tasks/tasks.jsonl",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[tokio::test]
async fn a_models_predictions_earn_partial_credit_measured_outside_the_sandbox() {
    let server = HttpServer::start(&["jupyter"]);
    let task = "house-prices/4242";
    let prompt_of = |result: &CallToolResult| {
        step_structured(result)["prompt"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    // The reference model succeeds; its reward is its score, under `success`.
    let created = server.create(jupyter(task)).await;
    let client = server.legacy_client(&created.mcp_url).await;
    let prompt = prompt_of(
        &client
            .call_tool(call("get_task", Default::default()))
            .await
            .unwrap(),
    );
    assert!(!prompt.contains("price\n") && prompt.contains("predictions.csv"));
    cell(&client, &solver_cell("house-prices", &prompt)).await;
    // The held-out prices are nowhere the agent can read.
    let listing = shell(&client, "ls -A; head -c 300 held_out.csv").await;
    assert!(!text(&listing).contains("price,"), "{}", text(&listing));
    let graded = answer(&client, "done").await;
    let components = &step(&graded)["reward_components"];
    let score = components["success"].as_f64().unwrap_or_default();
    assert!((0.8..=1.0).contains(&score), "{}", text(&graded));
    assert_eq!(step_structured(&graded)["score"], json!(score));
    assert_eq!(step_structured(&graded)["correct"], json!(true));
    client.cancel().await.unwrap();

    // Half the houses at the average price: some credit, short of success.
    let created = server.create(jupyter(task)).await;
    let client = server.legacy_client(&created.mcp_url).await;
    cell(&client, &solver_cell("house-prices", &prompt)).await;
    let halved = cell(
        &client,
        "import pandas as pd\np = pd.read_csv('predictions.csv')\nmean = pd.read_csv('sales.csv').price.mean()\np.loc[p.index % 2 == 0, 'prediction'] = mean\np.to_csv('predictions.csv', index=False)\nprint(len(p))",
    )
    .await;
    assert!(!text(&halved).contains("Error"), "{}", text(&halved));
    let graded = answer(&client, "done").await;
    let components = &step(&graded)["reward_components"];
    let partial = components["partial"].as_f64().unwrap_or_default();
    assert!(partial > 0.05 && partial < 0.8, "{}", text(&graded));
    assert!(components.get("success").is_none(), "{components}");
    assert!(text(&graded).contains("RMSE"), "{}", text(&graded));
    client.cancel().await.unwrap();

    // No file at all: nothing, with a sentence saying so.
    let created = server.create(jupyter(task)).await;
    let client = server.legacy_client(&created.mcp_url).await;
    let graded = answer(&client, "done").await;
    assert_eq!(step(&graded)["reward"], 0.0);
    assert!(
        text(&graded).contains("there is no predictions.csv"),
        "{}",
        text(&graded)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_task_file_of_ones_own_is_listed_and_graded() {
    // A task whose file is larger than one command-line argument may be.
    let folder = std::env::temp_dir().join(format!("mcpgym-task-file-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let mut lines = std::fs::read_to_string(example_tasks()).unwrap();
    let example_dir = format!(
        "{}/../../examples/jupyter-tasks",
        env!("CARGO_MANIFEST_DIR")
    );
    lines = lines.replace("\"source\": \"", &format!("\"source\": \"{example_dir}/"));
    lines = lines.replace(
        "\"check_file\": \"",
        &format!("\"check_file\": \"{example_dir}/"),
    );
    let big = json!({
        "id": "big-file", "prompt": "How many bytes has big.txt?",
        "files": [{"path": "data/big.txt", "text": "x".repeat(300_000)}],
        "grader": {"numeric": {"value": 300000}}
    });
    lines.push_str(&format!("{big}\n"));
    let file = folder.join("tasks.jsonl");
    std::fs::write(&file, lines).unwrap();

    let server = HttpServer::start(&["jupyter", "--tasks", file.to_str().unwrap()]);
    let listed = server.get_json("/tasks?split=train").await;
    assert_eq!(
        listed["tasks"],
        json!(["lisbon-total", "top-customer", "city-summary", "big-file"])
    );
    assert_eq!(listed["families"], json!([]));
    let held_out = server.get_json("/tasks?split=test").await;
    assert_eq!(held_out["tasks"], json!(["gzip-lines", "secret-word"]));

    let solve = [
        (
            "lisbon-total",
            "import pandas as pd\nd = pd.read_csv('orders.csv')\nprint(f\"{d[d.city == 'Lisbon'].amount.sum():.2f}\")",
        ),
        (
            "city-summary",
            "import pandas as pd, json\nd = pd.read_csv('orders.csv')\njson.dump(d.groupby('city').amount.sum().round(2).to_dict(), open('summary.json', 'w'))\nprint('done')",
        ),
        (
            "gzip-lines",
            "import gzip\nprint(len(gzip.open('notes.txt.gz').read().splitlines()))",
        ),
        (
            "secret-word",
            "import base64\nprint(base64.b64decode(open('word.b64').read()).decode())",
        ),
        (
            "big-file",
            "import os\nprint(os.path.getsize('data/big.txt'))",
        ),
    ];
    for (task, code) in solve {
        let created = server.create(jupyter(task)).await;
        let client = server.legacy_client(&created.mcp_url).await;
        let printed = text(&cell(&client, code).await);
        let graded = answer(&client, printed.lines().last().unwrap_or_default()).await;
        assert_eq!(
            step(&graded)["reward_components"]["correct"],
            1.0,
            "{task}: {printed} / {}",
            text(&graded)
        );
        client.cancel().await.unwrap();
    }
    let _ = std::fs::remove_dir_all(&folder);
}

#[test]
fn a_broken_task_file_is_refused_with_its_line() {
    let folder = std::env::temp_dir().join(format!("mcpgym-bad-tasks-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("tasks.jsonl");
    std::fs::write(
        &file,
        "{\"id\": \"a\", \"prompt\": \"p\", \"grader\": {\"exact\": \"x\"}}\n\n{\"id\": \"b\", \"prompt\": \"p\"}\n",
    )
    .unwrap();
    let said = start_fails(&["jupyter", "--tasks", file.to_str().unwrap()]);
    assert!(said.contains("line 3: missing field `grader`"), "{said}");
    let said = start_fails(&["jupyter", "--tasks", "/nonexistent/tasks.jsonl"]);
    assert!(said.contains("cannot read the task file"), "{said}");
    let _ = std::fs::remove_dir_all(&folder);
}

/// A client that fetches the prompt before its first call (OpenEnv's reset, ORS's `/prompt`,
/// the Python client) gets a first observation without the task text; the trajectory says
/// where the prompt was handed over, so `mcpgym replay` hands it over there too.
#[tokio::test(flavor = "multi_thread")]
async fn a_trajectory_whose_client_fetched_the_prompt_first_replays() {
    let dir = std::env::temp_dir().join(format!("mcpgym-jupyter-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_arg = dir.display().to_string();
    let server = HttpServer::start(&["jupyter", "--trajectory-dir", &dir_arg]);
    let control = server.control();
    let id = server.create(jupyter(TASK)).await.id;
    let prompt = control.prompt(&id).await.unwrap();
    assert!(prompt.contains("sales.csv"), "{prompt}");
    for code in ["x = 20 + 1", "print(x * 2)"] {
        let step = control
            .call(&id, "add_and_execute_code_cell", json!({ "code": code }))
            .await
            .unwrap();
        assert!(!step.is_error, "{}", step.text());
    }
    server.close(&id).await;
    drop(server);
    let output = std::process::Command::new(BIN)
        .args(["replay", &format!("{dir_arg}/{id}.jsonl")])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        printed.contains("every observation and reward matches"),
        "{printed}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
