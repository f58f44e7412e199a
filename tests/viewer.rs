//! The viewer as a person uses it: pages served by the real binary, opened in headless
//! Chromium, showing live episodes of each environment and recorded ones, and played from the
//! page through the same tools an agent calls. Each test saves screenshots of its pages under
//! `target/test-artifacts/viewer/`. `mcpgym replay` is tested here too, on the files the
//! episodes wrote.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::browser::Browser;
use crate::common::*;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpgym-viewer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn call(server: &HttpServer, id: &str, tool: &str, arguments: Value) -> Value {
    let step = server
        .control()
        .call(id, tool, arguments)
        .await
        .unwrap_or_else(|e| panic!("{tool} on {id}: {e}"));
    serde_json::to_value(step).unwrap()
}

/// Waits for the trajectory file to hold its end record (the writer thread is asynchronous).
async fn ended_file(dir: &Path, id: &str) -> PathBuf {
    let path = dir.join(format!("{id}.jsonl"));
    for _ in 0..100 {
        if std::fs::read_to_string(&path).is_ok_and(|text| text.contains(r#""record":"end""#)) {
            return path;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{} never got its end record", path.display());
}

#[tokio::test]
async fn wordle_list_board_play_view_and_replay() {
    let dir = temp_dir("wordle");
    let server = HttpServer::start(&["wordle", "--trajectory-dir", dir.to_str().unwrap()]);
    let mut browser = Browser::start().await;

    // The list shows a running episode, and updates without a reload when it ends.
    let first = server
        .create(NewEpisode::default().task("test-0000"))
        .await
        .id;
    browser.goto(&server.url("/")).await;
    let row = format!("document.querySelector('tr.episode[data-id=\"{first}\"]')");
    browser
        .wait_for(&format!("{row} && {row}.dataset.state === 'running'"))
        .await;
    call(&server, &first, "guess", json!({"word": "crane"})).await;
    call(&server, &first, "guess", json!({"word": "xqzvb"})).await; // refused
    call(&server, &first, "guess", json!({"word": "slate"})).await;
    call(&server, &first, "guess", json!({"word": "serif"})).await; // the answer
    browser
        .wait_for(&format!("{row}.dataset.state === 'done'"))
        .await;
    // The summary counts it: one episode of the task, passed.
    let summary = browser
        .wait_for("document.querySelector('#summary .task-summary[data-task=\"test\"]')?.innerText")
        .await;
    assert!(summary.as_str().unwrap().contains("100"), "{summary}");
    browser.screenshot("index").await;

    // The episode's page shows the board in the game's colours, as the steps reported them.
    browser.goto(&server.url(&format!("/view/{first}"))).await;
    browser
        .wait_for("document.querySelectorAll('#board .board-row:not(.blank)').length === 3")
        .await;
    let colours = browser
        .eval(
            "[...document.querySelectorAll('#board .board-row:not(.blank)')].map(row => [...row.querySelectorAll('.tile')].map(t => ['green','yellow','gray'].find(c => t.classList.contains(c)) + ':' + t.textContent.trim().toLowerCase()))",
        )
        .await;
    let expected: Vec<Vec<String>> = server
        .trajectory(&first)
        .await
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|record| !record["is_error"].as_bool().unwrap())
        .map(|record| {
            let guess = record["structured"]["guess"].as_str().unwrap().to_owned();
            record["structured"]["feedback"]
                .as_array()
                .unwrap()
                .iter()
                .zip(guess.chars())
                .map(|(colour, letter)| format!("{}:{letter}", colour.as_str().unwrap()))
                .collect()
        })
        .collect();
    assert_eq!(colours, json!(expected));
    assert_eq!(
        expected[2].join(" "),
        "green:s green:e green:r green:i green:f"
    );
    let page = browser.eval("document.body.innerText").await;
    assert!(
        page.as_str().unwrap().contains("serif"),
        "the answer is shown once done"
    );
    browser.screenshot("wordle").await;

    // A person plays a guess from the page; it reaches the episode as a `guess` call.
    let second = server
        .create(NewEpisode::default().task("test-0001"))
        .await
        .id;
    browser.goto(&server.url(&format!("/view/{second}"))).await;
    browser
        .wait_for("document.querySelector('#guess-input')")
        .await;
    browser
        .eval("document.querySelector('#guess-input').focus()")
        .await;
    browser.type_text("crane").await;
    browser
        .eval("document.querySelector('#guess-button').click()")
        .await;
    browser
        .wait_for("document.querySelectorAll('#board .board-row:not(.blank)').length === 1")
        .await;
    let played = server.trajectory(&second).await;
    let record: Value = serde_json::from_str(played.lines().next().unwrap()).unwrap();
    assert_eq!(record["tool"], "guess");
    assert_eq!(record["arguments"], json!({"word": "crane"}));
    assert_eq!(server.status(&second).await.turn, 1);
    // A refused guess from the page says why, on the page.
    browser
        .eval("document.querySelector('#guess-input').value = 'qqqqq'; document.querySelector('#guess-button').click()")
        .await;
    browser
        .wait_for(
            "document.querySelector('#play-status')?.innerText.includes('not in the word list')",
        )
        .await;

    // `mcpgym view DIR` serves the same pages over the files, with no environment.
    let path = ended_file(&dir, &first).await;
    let viewer = HttpServer::start(&["view", dir.to_str().unwrap()]);
    browser.goto(&viewer.url("/")).await;
    browser
        .wait_for(&format!(
            "document.querySelector('tr.episode[data-id=\"{first}\"]')?.dataset.state === 'done'"
        ))
        .await;
    browser.screenshot("recorded-index").await;
    browser.goto(&viewer.url(&format!("/view/{first}"))).await;
    browser
        .wait_for("document.querySelectorAll('#board .board-row:not(.blank)').length === 3")
        .await;
    let recorded = browser
        .eval(
            "[...document.querySelectorAll('#board .tile')].map(t => ['green','yellow','gray'].find(c => t.classList.contains(c))).join(' ')",
        )
        .await;
    assert_eq!(
        recorded,
        json!(
            expected
                .concat()
                .iter()
                .map(|t| t.split(':').next().unwrap())
                .collect::<Vec<_>>()
                .join(" ")
        )
    );
    assert_eq!(
        browser
            .eval("document.querySelector('#guess-input') === null")
            .await,
        json!(true),
        "a recording cannot be played"
    );
    browser.screenshot("recorded-wordle").await;

    // Replaying the file matches; an edited record is named as the first difference.
    let (matched, printed) = replay(&path);
    assert!(matched, "{printed}");
    assert!(
        printed.contains("every observation and reward matches"),
        "{printed}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let edited: Vec<String> = text
        .lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            if record["turn"] == 3 {
                record["observation"] = json!("SLATE 🟩🟩🟩🟩🟩\nYou won.");
            }
            record.to_string()
        })
        .collect();
    let edited_path = dir.join("edited").join(path.file_name().unwrap());
    std::fs::create_dir_all(edited_path.parent().unwrap()).unwrap();
    std::fs::write(&edited_path, edited.join("\n") + "\n").unwrap();
    let (matched, printed) = replay(&edited_path);
    assert!(!matched, "{printed}");
    assert!(
        printed.contains("differs at turn 3 (guess): the observation differs"),
        "{printed}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_token_given_once_in_the_url_lets_the_browser_in() {
    let server = HttpServer::start(&["wordle", "--token", "s3cret"]);
    let mut browser = Browser::start().await;
    browser.goto(&server.url("/")).await;
    let refused = browser.eval("document.body.innerText").await;
    assert!(
        refused.as_str().unwrap().contains("missing or wrong token"),
        "{refused}"
    );
    browser.goto(&server.url("/?token=wrong")).await;
    let refused = browser.eval("document.body.innerText").await;
    assert!(refused.as_str().unwrap().contains("missing or wrong token"));

    browser.goto(&server.url("/?token=s3cret")).await;
    // The token left the address bar; the cookie carries it, to the pages and the data alike.
    assert_eq!(browser.eval("location.search").await, json!(""));
    assert_eq!(
        browser.eval("document.cookie").await,
        json!(""),
        "the cookie is HttpOnly"
    );
    let listed = browser.eval("fetch('/episodes').then(r => r.status)").await;
    assert_eq!(listed, json!(200));
    browser
        .wait_for("document.querySelector('#episodes')")
        .await;
}

#[tokio::test]
async fn a_jupyter_page_shows_cells_tracebacks_and_plots_and_runs_a_cell() {
    let dir = temp_dir("jupyter");
    let server = HttpServer::start(&[
        "jupyter",
        "--task",
        "classic/0",
        "--trajectory-dir",
        dir.to_str().unwrap(),
    ]);
    let id = server
        .create(NewEpisode::default().env("jupyter").task("classic/0"))
        .await
        .id;
    let plot = "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('rising then falling')\nplt.show()";
    let plotted = call(
        &server,
        &id,
        "add_and_execute_code_cell",
        json!({"code": plot}),
    )
    .await;
    assert!(
        plotted["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "image"),
        "{plotted}"
    );
    call(
        &server,
        &id,
        "add_and_execute_code_cell",
        json!({"code": "1/0"}),
    )
    .await;

    let mut browser = Browser::start().await;
    browser.goto(&server.url(&format!("/view/{id}"))).await;
    // The plot is an image the browser decoded from the episode's image route.
    let size = browser
        .wait_for("(() => { const img = document.querySelector('.cell img.output-image'); return img && img.complete && img.naturalWidth > 100 ? [img.naturalWidth, img.naturalHeight] : null })()")
        .await;
    assert!(size[1].as_u64().unwrap() > 100, "{size}");
    let page = browser.eval("document.body.innerText").await;
    let page = page.as_str().unwrap();
    assert!(
        page.contains("plt.plot([1, 3, 2])"),
        "the cell's code is shown"
    );
    assert!(page.contains("ZeroDivisionError"), "the traceback is shown");
    assert!(
        browser
            .eval("document.querySelectorAll('.cell .traceback').length")
            .await
            == json!(1)
    );

    // A cell run from the page reaches the kernel.
    browser
        .eval("document.querySelector('#code-input').value = 'print(6 * 7)'; document.querySelector('#run-button').click()")
        .await;
    browser
        .wait_for("document.querySelectorAll('.cell').length === 3 && document.querySelectorAll('.cell')[2].innerText.includes('42')")
        .await;
    browser.screenshot("jupyter").await;

    // The recorded episode replays: same outputs, same rewards.
    let answer = call(&server, &id, "final_answer", json!({"answer": "0"})).await;
    assert_eq!(answer["done"], true, "{answer}");
    let path = ended_file(&dir, &id).await;
    assert!(
        dir.join(&id).join("1-0.png").is_file(),
        "the plot is on disk"
    );
    let (matched, printed) = replay(&path);
    assert!(matched, "{printed}");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_desktop_page_draws_actions_on_screenshots_and_a_click_on_it_plays() {
    let server = HttpServer::start(&["desktop"]);
    let id = server
        .create(
            NewEpisode::default()
                .env("desktop")
                .task("desktop-train-000"),
        )
        .await
        .id;
    call(
        &server,
        &id,
        "left_click",
        json!({"coordinate": [320, 200]}),
    )
    .await;
    call(&server, &id, "type", json!({"text": "echo viewer"})).await;

    let mut browser = Browser::start().await;
    browser.goto(&server.url(&format!("/view/{id}"))).await;
    browser
        .wait_for("document.querySelectorAll('#filmstrip img').length === 2")
        .await;
    // Step 1 is the click: its marker sits where it clicked, on the screenshot as shown.
    browser
        .eval("document.querySelector('#first').click()")
        .await;
    let placed = browser
        .wait_for("(() => { const img = document.querySelector('#player img'); const m = document.querySelector('#player .click-marker'); if (!img || !m || !img.complete || !img.naturalWidth) return null; const a = img.getBoundingClientRect(), b = m.getBoundingClientRect(); return [(b.left + b.width / 2 - a.left) / a.width, (b.top + b.height / 2 - a.top) / a.height]; })()")
        .await;
    let (x, y) = (placed[0].as_f64().unwrap(), placed[1].as_f64().unwrap());
    assert!((x - 320.0 / 1280.0).abs() < 0.01, "marker x {x}");
    assert!((y - 200.0 / 800.0).abs() < 0.01, "marker y {y}");
    browser.screenshot("desktop-click").await;
    // Step 2 shows the text it typed.
    browser
        .eval("document.querySelector('#next').click()")
        .await;
    browser
        .wait_for(
            "document.querySelector('#player .typed-text')?.innerText.includes('echo viewer')",
        )
        .await;
    browser.screenshot("desktop-type").await;

    // A click on the latest screenshot is a left_click at that screen pixel.
    browser
        .eval("document.querySelector('#last').click()")
        .await;
    let target = browser
        .wait_for("(() => { const r = document.querySelector('#player img').getBoundingClientRect(); return r.width > 0 ? [r.left + r.width * 0.75, r.top + r.height * 0.5] : null })()")
        .await;
    browser
        .click_at(target[0].as_f64().unwrap(), target[1].as_f64().unwrap())
        .await;
    browser
        .wait_for("document.querySelectorAll('#filmstrip img').length === 3")
        .await;
    let last = server.trajectory(&id).await;
    let record: Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
    assert_eq!(record["tool"], "left_click");
    let at = record["arguments"]["coordinate"]
        .as_array()
        .unwrap()
        .clone();
    let (cx, cy) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
    assert!(
        (cx - 960.0).abs() <= 3.0 && (cy - 400.0).abs() <= 3.0,
        "{at:?}"
    );
    browser.screenshot("desktop").await;
    server.close(&id).await;
}

#[tokio::test]
async fn bad_requests_to_the_viewer_get_a_sentence() {
    let dir = temp_dir("bad");
    let server = HttpServer::start(&["wordle", "--trajectory-dir", dir.to_str().unwrap()]);
    let id = server.create(NewEpisode::default()).await.id;
    for (path, status, sentence) in [
        (
            "/episodes?limit=99999".to_owned(),
            400,
            "at most 5000 episodes",
        ),
        ("/episodes?limit=many".to_owned(), 400, "give ?limit=N"),
        (
            format!("/episodes/{id}/trajectory?after=x"),
            400,
            "a turn number",
        ),
        (
            format!("/episodes/{id}/images/1-0.png"),
            404,
            "has no image",
        ),
        (
            format!("/episodes/{id}/images/..%2F..%2Fetc%2Fpasswd"),
            404,
            "has no image",
        ),
        (
            "/episodes/nothex/images/1-0.png".to_owned(),
            404,
            "has no image",
        ),
        (
            "/viewer/other.js".to_owned(),
            404,
            "viewer.js and viewer.css",
        ),
    ] {
        let (code, body) = status_and_json(http().get(server.url(&path))).await;
        assert_eq!(code, status, "{path}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(sentence),
            "{path}: {body}"
        );
    }
    // The pages forbid inline script and any other origin.
    let page = http().get(server.url("/")).send().await.unwrap();
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"));

    // A recorded folder: a file that is not a trajectory is left out of the list and named
    // with its line when asked for.
    call(&server, &id, "guess", json!({"word": "crane"})).await;
    server.close(&id).await;
    ended_file(&dir, &id).await;
    let broken = "0123456789abcdef0123456789abcdef";
    std::fs::write(
        dir.join(format!("{broken}.jsonl")),
        "{\"record\":\"step\"}\n",
    )
    .unwrap();
    let viewer = HttpServer::start(&["view", dir.to_str().unwrap()]);
    let listed = viewer.get_json("/episodes").await;
    let ids: Vec<&str> = listed["episodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [id.as_str()]);
    assert_eq!(listed["source"], "recorded");
    let (code, body) =
        status_and_json(http().get(viewer.url(&format!("/episodes/{broken}")))).await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("line 1: not a step record"),
        "{body}"
    );
    let (code, _) = status_and_json(http().get(viewer.url("/episodes/abc/trajectory"))).await;
    assert_eq!(code, 404);
    assert!(
        start_fails(&["view", "/nonexistent-folder"]).contains("is not a folder"),
        "view refuses a folder that is not there"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn closed_and_aborted_recordings_show_as_such_and_unknown_routes_say_what_there_is() {
    let dir = temp_dir("closed");
    let server = HttpServer::start(&["wordle", "--trajectory-dir", dir.to_str().unwrap()]);
    // Closed after one guess, before it was done: its file has an end record that is not done.
    let closed = server
        .create(NewEpisode::default().task("test-0000"))
        .await
        .id;
    call(&server, &closed, "guess", json!({"word": "crane"})).await;
    server.close(&closed).await;
    let closed_file = ended_file(&dir, &closed).await;
    // Still running: no end record yet.
    let running = server
        .create(NewEpisode::default().task("test-0001"))
        .await
        .id;
    call(&server, &running, "guess", json!({"word": "crane"})).await;
    // Aborted by the harness, with its reason (as a restart ends a kernel's episode).
    let aborted = "0123456789abcdef0123456789abcdef";
    let reason = "the server restarted and a kernel cannot be rebuilt";
    let text = std::fs::read_to_string(&closed_file).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for record in &mut lines {
        record["episode"] = json!(aborted);
        if record["record"] == "end" {
            record["status"]["id"] = json!(aborted);
            record["status"]["done"] = json!(true);
            record["status"]["aborted"] = json!(true);
            record["status"]["abort_reason"] = json!(reason);
        }
    }
    let body: String = lines.iter().map(|record| format!("{record}\n")).collect();
    std::fs::write(dir.join(format!("{aborted}.jsonl")), body).unwrap();

    let viewer = HttpServer::start(&["view", dir.to_str().unwrap()]);
    let listed = viewer.get_json("/episodes").await;
    let of = |id: &str| {
        listed["episodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("{id} not listed: {listed}"))
            .clone()
    };
    assert_eq!(of(&closed)["ended"], json!(true));
    assert_eq!(of(&closed)["done"], json!(false));
    assert_eq!(of(&running)["ended"], json!(false));
    assert_eq!(of(aborted)["abort_reason"], json!(reason));
    let status = viewer.get_json(&format!("/episodes/{closed}")).await;
    assert_eq!(status["ended"], json!(true), "{status}");

    let mut browser = Browser::start().await;
    browser.goto(&viewer.url("/")).await;
    let state =
        |id: &str| format!("document.querySelector('tr.episode[data-id=\"{id}\"]')?.dataset.state");
    browser
        .wait_for(&format!("{} === 'closed'", state(&closed)))
        .await;
    assert_eq!(browser.eval(&state(&running)).await, json!("running"));
    assert_eq!(browser.eval(&state(aborted)).await, json!("aborted"));
    let counts = browser
        .eval("document.querySelector('#counts').innerText")
        .await;
    assert!(counts.as_str().unwrap().contains("1 running"), "{counts}");
    let title = browser
        .eval(&format!(
            "document.querySelector('tr.episode[data-id=\"{aborted}\"] .badge').title"
        ))
        .await;
    assert!(title.as_str().unwrap().contains(reason), "{title}");
    browser.screenshot("recorded-closed-index").await;
    browser.goto(&viewer.url(&format!("/view/{closed}"))).await;
    browser
        .wait_for("document.body.dataset.state === 'closed'")
        .await;
    browser.goto(&viewer.url(&format!("/view/{aborted}"))).await;
    let shown = browser
        .wait_for("document.querySelector('#facts dd[data-field=\"abort_reason\"]')?.innerText")
        .await;
    assert_eq!(shown, json!(reason));
    assert_eq!(
        browser
            .eval("document.querySelector('#state').innerText")
            .await,
        json!("aborted (recorded)")
    );
    browser.screenshot("recorded-aborted").await;

    // An unknown route names the path and the routes there are, on both servers.
    for (on, path, names) in [
        (&viewer, "/nope", "/episodes/{id}/trajectory"),
        (&viewer, "/view/", "/view/{id}"),
        (&viewer, "/episodes//trajectory", "/episodes/{id}"),
        (&server, "/nope", "/wordle/mcp"),
        (&server, "/viewer/", "/view/{id}"),
    ] {
        let (code, body) = status_and_json(http().get(on.url(path))).await;
        assert_eq!(code, 404, "{path}: {body}");
        let sentence = body["error"].as_str().unwrap();
        assert!(!sentence.contains("unknown episode"), "{path}: {sentence}");
        assert!(sentence.contains(names), "{path}: {sentence}");
        if path != "/episodes//trajectory" {
            assert!(
                sentence.contains(&format!("{path:?}")),
                "{path}: {sentence}"
            );
        }
    }
    server.close(&running).await;
    let _ = std::fs::remove_dir_all(dir);
}
