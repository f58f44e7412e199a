//! Wordle over streamable HTTP, in both protocol eras, through the real binary and rmcp's
//! client: how calls bind to episodes, and that episodes never see each other.

use crate::common::*;
use mcpgym_wordle::{Wordle, WordleConfig};
use serde_json::json;

pub(crate) fn answer_of(task: &str) -> String {
    Wordle::new(WordleConfig::default())
        .answer_of(task)
        .expect("known task")
}

fn episode_of(result: &rmcp::model::CallToolResult) -> String {
    step(result)["episode"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn legacy_session_binds_one_episode_and_can_win() {
    let server = HttpServer::start(&["wordle"]);
    let client = server.legacy_client("/mcp").await;
    let first = guess(&client, "crane").await;
    let id = episode_of(&first);
    // The id is also at the top of _meta, for harnesses that echo it back.
    assert_eq!(first.meta.as_ref().unwrap()["mcpgym/episode"], json!(id));
    let status = server.status(&id).await;
    assert!(
        status.revealed.get("answer").is_none(),
        "no answer before done: {status:?}"
    );
    let answer = answer_of(&status.task);
    let win = guess(&client, &answer).await;
    assert_eq!(episode_of(&win), id, "the session keeps its episode");
    let s = step(&win);
    assert_eq!(s["turn"], 2);
    assert_eq!(s["done"], true);
    assert!(s["reward"].as_f64().unwrap() >= 1.0);
    let status = server.status(&id).await;
    assert_eq!(status.revealed["answer"], json!(answer));
    assert!(status.done);
    assert_eq!(Some(status.return_), s["return"].as_f64());

    // A second session gets its own episode.
    let other = server.legacy_client("/mcp").await;
    let fresh = guess(&other, "crane").await;
    assert_ne!(episode_of(&fresh), id);
    assert_eq!(step(&fresh)["turn"], 1);
    client.cancel().await.unwrap();
    other.cancel().await.unwrap();
}

#[tokio::test]
async fn stateless_era_binds_by_meta_or_starts_a_new_episode() {
    let server = HttpServer::start(&["wordle"]);
    let client = server.stateless_client("/mcp").await;
    // Nothing names an episode: each call starts one and says which.
    let a = guess(&client, "crane").await;
    let b = guess(&client, "crane").await;
    assert_ne!(episode_of(&a), episode_of(&b));
    assert_eq!(step(&b)["turn"], 1);
    // Naming it in _meta continues it.
    let id = episode_of(&a);
    let next = client
        .call_tool(call_in(&id, "guess", word("sloth")))
        .await
        .unwrap();
    assert_eq!(episode_of(&next), id);
    assert_eq!(step(&next)["turn"], 2);
    let board = client
        .call_tool(call_in(&id, "history", Default::default()))
        .await
        .unwrap();
    let guesses = &board.structured_content.as_ref().unwrap()["guesses"];
    assert_eq!(guesses.as_array().unwrap().len(), 2);
    assert_eq!(guesses[1]["guess"], "sloth");
    // An unknown episode is a protocol error with a sentence, not a new game.
    let error = client
        .call_tool(call_in("0123abcd", "guess", word("crane")))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown episode \"0123abcd\""), "{error}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn episode_urls_serve_exactly_one_episode_in_both_eras() {
    let server = HttpServer::start(&["wordle"]);
    let created = server.create(NewEpisode::default().seed(5)).await;
    let (id, url) = (created.id, created.mcp_url);
    assert_eq!(url, format!("/episodes/{id}/mcp"));

    let legacy = server.legacy_client(&url).await;
    let tools = legacy.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2);
    let first = guess(&legacy, "crane").await;
    assert_eq!(episode_of(&first), id);

    let stateless = server.stateless_client(&url).await;
    let second = guess(&stateless, "sloth").await;
    assert_eq!(episode_of(&second), id);
    assert_eq!(step(&second)["turn"], 2);

    // _meta wins over the URL.
    let other = server.create(NewEpisode::default().seed(6)).await;
    let other_id = other.id.as_str();
    let redirected = stateless
        .call_tool(call_in(other_id, "guess", word("crane")))
        .await
        .unwrap();
    assert_eq!(episode_of(&redirected), other_id);
    assert_eq!(step(&redirected)["turn"], 1);

    // An unknown episode URL is a 404 with a JSON sentence.
    let response = http()
        .post(server.url("/episodes/ffff/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let body: serde_json::Value = response.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("unknown episode"));
    legacy.cancel().await.unwrap();
    stateless.cancel().await.unwrap();
}

async fn play(client: &Client, words: [&str; 4]) -> Vec<rmcp::model::CallToolResult> {
    let mut seen = Vec::new();
    for w in words {
        seen.push(guess(client, w).await);
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_episodes_never_see_each_other() {
    let server = HttpServer::start(&["wordle"]);
    // Two seeds that pick different answers.
    let a = server.create(NewEpisode::default().seed(1)).await;
    let mut b = server.create(NewEpisode::default().seed(2)).await;
    let mut seed = 2;
    while b.task == a.task {
        seed += 1;
        b = server.create(NewEpisode::default().seed(seed)).await;
    }
    let client_a = server.legacy_client(&a.mcp_url).await;
    let client_b = server.legacy_client(&b.mcp_url).await;
    let words_a = ["crane", "sloth", "dumpy", "wight"];
    let words_b = ["pious", "fjord", "vexed", "abbot"];
    let (seen_a, seen_b) = tokio::join!(play(&client_a, words_a), play(&client_b, words_b));
    for (seen, words, id) in [(&seen_a, words_a, &a.id), (&seen_b, words_b, &b.id)] {
        for (turn, result) in seen.iter().enumerate() {
            assert_eq!(step(result)["episode"], json!(id));
            assert_eq!(step(result)["turn"], turn + 1);
            let structured = result.structured_content.as_ref().unwrap();
            assert_eq!(structured["guess"], words[turn]);
            assert_eq!(structured["guesses_used"], turn + 1);
        }
    }
    // Each board holds only its own guesses.
    let board_a = text(
        &client_a
            .call_tool(call("history", Default::default()))
            .await
            .unwrap(),
    );
    assert!(
        board_a.contains("CRANE") && !board_a.contains("PIOUS"),
        "{board_a}"
    );
    let board_b = text(
        &client_b
            .call_tool(call("history", Default::default()))
            .await
            .unwrap(),
    );
    assert!(
        board_b.contains("PIOUS") && !board_b.contains("CRANE"),
        "{board_b}"
    );
    assert_ne!(answer_of(&a.task), answer_of(&b.task));
    client_a.cancel().await.unwrap();
    client_b.cancel().await.unwrap();
}

#[tokio::test]
async fn same_seed_same_answer_over_http() {
    let server = HttpServer::start(&["wordle"]);
    let mut answers = Vec::new();
    for _ in 0..2 {
        let created = server
            .create(NewEpisode::default().seed(77).split(Split::Test))
            .await;
        assert!(created.task.starts_with("test-"));
        let client = server.stateless_client(&created.mcp_url).await;
        for w in losing_guesses("") {
            guess(&client, w).await;
        }
        let status = server.status(&created.id).await;
        assert!(status.done);
        answers.push((created.task, status.revealed["answer"].clone()));
        client.cancel().await.unwrap();
    }
    assert_eq!(answers[0], answers[1]);
    // And it matches a fresh process with the same seed: the choice is machine-independent.
    let other = HttpServer::start(&["wordle"]);
    let again = other
        .create(NewEpisode::default().seed(77).split(Split::Test))
        .await;
    assert_eq!(again.task, answers[0].0);
}

#[tokio::test]
async fn serve_hosts_environments_by_name() {
    let server = {
        // `serve` takes --http itself.
        HttpServer::start(&["serve"])
    };
    let created = server
        .create(NewEpisode::default().env("wordle").seed(3))
        .await;
    assert_eq!(created.env, "wordle");
    let client = server.legacy_client("/wordle/mcp").await;
    let result = guess(&client, "crane").await;
    assert!(!is_error(&result));
    let missing = http().post(server.url("/mcp")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    let refused = server
        .control()
        .create_episode(&NewEpisode::default().env("chess"))
        .await
        .unwrap_err();
    assert_eq!(refused.status().map(|s| s.as_u16()), Some(400));
    assert!(
        refused.to_string().contains(
            "unknown environment \"chess\"; this server hosts: desktop, hilo, jupyter, wordle"
        ),
        "{refused}"
    );
    // Every environment is there, each behind its own MCP endpoint.
    let jupyter = server
        .create(NewEpisode::default().env("jupyter").task("classic/0"))
        .await;
    assert_eq!(jupyter.env, "jupyter");
    let notebook = server.legacy_client("/jupyter/mcp").await;
    let tools = notebook.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "add_and_execute_code_cell"));
    notebook.cancel().await.unwrap();
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn direct_stateless_path_serves_sdk_clients_and_matches_rmcp() {
    let server = HttpServer::start_with_log(&["wordle"], "mcpgym_shared::stateless=trace");
    let a = server.create(NewEpisode::default().seed(11)).await;
    let b = server.create(NewEpisode::default().seed(11)).await;

    // rmcp's own 2026-07-28 client takes the direct path.
    let client = server.stateless_client(&a.mcp_url).await;
    let first = guess(&client, "crane").await;
    assert_eq!(step(&first)["turn"], 1);
    client.cancel().await.unwrap();
    assert!(
        server.log_contains("answered directly"),
        "{}",
        server.log.lock().unwrap()
    );

    // The same call answered directly and by rmcp (a legacy session) gives the same result,
    // but for the episode id and the 2026-07-28 result type.
    let direct = raw_stateless_call(
        &server.url(&b.mcp_url),
        "guess",
        json!({"word": "crane"}),
        json!({}),
    )
    .await;
    assert_eq!(direct["id"], 42);
    assert_eq!(direct["result"]["resultType"], "complete");
    let legacy = server.legacy_client("/mcp").await;
    let c = server.create(NewEpisode::default().seed(11)).await;
    let via_rmcp = legacy
        .call_tool(call_in(&c.id, "guess", word("crane")))
        .await
        .unwrap();
    legacy.cancel().await.unwrap();
    let mut direct_result = direct["result"].clone();
    direct_result.as_object_mut().unwrap().remove("resultType");
    let direct_text = direct_result.to_string().replace(&b.id, "EPISODE");
    let rmcp_text = serde_json::to_value(&via_rmcp)
        .unwrap()
        .to_string()
        .replace(&c.id, "EPISODE");
    assert_eq!(direct_text, rmcp_text);

    // Protocol errors are JSON-RPC errors on both paths.
    let unknown = raw_stateless_call(
        &server.url("/mcp"),
        "guess",
        json!({"word": "crane"}),
        json!({"mcpgym/episode": "nope"}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown episode \"nope\"")
    );
}
