//! Wordle over stdio, through the real binary and rmcp's client.

use crate::common::*;
use serde_json::json;

/// Flags for a game whose answer list is empty: it must not start.
fn apple_game() -> Vec<&'static str> {
    vec!["wordle", "--answers", "/dev/null", "--seed", "1"]
}

#[tokio::test]
async fn duplicate_letters_then_a_win_then_frozen() {
    let answers = data("answers-apple.txt");
    let client = stdio_client(&["wordle", "--answers", &answers]).await;

    let paper = guess(&client, "PAPER").await;
    assert!(!is_error(&paper));
    assert_eq!(text(&paper), "PAPER 🟨🟨🟩🟨⬛\n5 guesses left.");
    assert_eq!(
        paper.structured_content,
        Some(json!({
            "guess": "paper", "feedback": ["yellow", "yellow", "green", "yellow", "gray"],
            "guesses_used": 1, "guesses_left": 5, "solved": false, "done": false
        }))
    );
    let s = step(&paper);
    assert_eq!(
        (s["turn"].clone(), s["done"].clone(), s["reward"].clone()),
        (json!(1), json!(false), json!(0.0))
    );

    let win = guess(&client, " apple ").await;
    assert!(
        text(&win).ends_with("Solved in 2 guesses! The answer was APPLE."),
        "{}",
        text(&win)
    );
    let s = step(&win);
    assert_eq!(s["done"], true);
    assert_eq!(s["truncated"], false);
    assert_eq!(
        s["reward_components"],
        json!({"win": 1.0, "efficiency": 0.4})
    );
    assert!((s["reward"].as_f64().unwrap() - 1.4).abs() < 1e-9);

    // Frozen: every later call is refused and pays nothing.
    for tool in ["guess", "history"] {
        let args = if tool == "guess" {
            word("apple")
        } else {
            Default::default()
        };
        let after = client.call_tool(call(tool, args)).await.unwrap();
        assert!(is_error(&after));
        assert_eq!(text(&after), "The game is over; start a new episode.");
        let s = step(&after);
        assert_eq!(s["reward"], 0.0);
        assert!((s["return"].as_f64().unwrap() - 1.4).abs() < 1e-9);
        assert_eq!(s["turn"], 2, "a refused call after done is not a turn");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_lost_game_reveals_the_answer_only_at_the_end() {
    // train-0000 is "light" (pinned in the wordle crate's tests).
    let client = stdio_client(&["wordle", "--task", "train-0000"]).await;
    let guesses = losing_guesses("light");
    for (i, w) in guesses.iter().enumerate() {
        let result = guess(&client, w).await;
        assert!(!is_error(&result), "{w}: {}", text(&result));
        let shown = format!("{} {:?}", text(&result), result.structured_content);
        if i < 5 {
            assert!(
                !shown.to_lowercase().contains("light"),
                "answer leaked: {shown}"
            );
            assert_eq!(step(&result)["done"], false);
        } else {
            assert!(text(&result).ends_with("Out of guesses. The answer was LIGHT."));
            let s = step(&result);
            assert_eq!(s["done"], true);
            assert_eq!(s["return"], 0.0);
            assert_eq!(s["reward_components"], json!({"win": 0.0}));
        }
    }
    let history = client.call_tool(call("history", Default::default())).await;
    assert!(is_error(&history.unwrap()));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn invalid_guesses_are_refused_and_use_no_guess() {
    let client = stdio_client(&["wordle", "--seed", "9"]).await;
    let cases = [
        (
            json!({"word": "abc"}),
            "is not a guess: a guess is exactly 5 letters A-Z",
        ),
        (json!({"word": "cr4ne"}), "is not a guess"),
        (json!({"word": "xqzvb"}), "XQZVB is not in the word list"),
        (
            json!({"word": 12345}),
            "Invalid arguments for guess: invalid type: integer `12345`, expected a string",
        ),
        (
            json!({}),
            "Invalid arguments for guess: missing field `word`",
        ),
        (
            json!({"word": "crane", "hint": true}),
            "unknown field `hint`",
        ),
    ];
    for (args, expected) in cases {
        let result = client
            .call_tool(call("guess", args.as_object().unwrap().clone()))
            .await
            .unwrap();
        assert!(is_error(&result), "{args}");
        assert!(
            text(&result).contains(expected),
            "{args}: {}",
            text(&result)
        );
        assert!(result.structured_content.is_none());
        assert_eq!(step(&result)["done"], false);
    }
    let history = client
        .call_tool(call("history", Default::default()))
        .await
        .unwrap();
    assert_eq!(
        history.structured_content.as_ref().unwrap()["guesses_left"],
        6
    );
    assert_eq!(
        history.structured_content.as_ref().unwrap()["guesses"],
        json!([])
    );
    assert_eq!(text(&history), "No guesses yet. 6 guesses left.");
    assert_eq!(
        step(&history)["turn"],
        7,
        "refused calls still count as turns"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn max_turns_truncates_the_episode() {
    let client = stdio_client(&["wordle", "--task", "train-0000", "--max-turns", "3"]).await;
    for turn in 1..=3 {
        let result = client
            .call_tool(call("history", Default::default()))
            .await
            .unwrap();
        let s = step(&result);
        assert_eq!(s["turn"], turn);
        assert_eq!(s["done"], turn == 3);
        assert_eq!(s["truncated"], turn == 3);
        if turn == 3 {
            assert!(
                text(&result).contains(
                    "The turn limit (3) is reached; the episode is over. The answer was LIGHT."
                ),
                "{}",
                text(&result)
            );
        }
    }
    let after = guess(&client, "light").await;
    assert!(is_error(&after));
    assert_eq!(step(&after)["return"], 0.0);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn tools_are_listed_with_inline_schemas_and_unknown_tools_are_protocol_errors() {
    let client = stdio_client(&["wordle"]).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["guess", "history"]);
    for tool in &tools {
        let schemas = serde_json::to_string(&(&tool.input_schema, &tool.output_schema)).unwrap();
        assert!(
            !schemas.contains("$ref") && !schemas.contains("$defs"),
            "{schemas}"
        );
        assert_eq!(tool.input_schema["type"], "object");
        assert!(tool.output_schema.is_some());
    }
    let history = tools.iter().find(|t| t.name == "history").unwrap();
    assert_eq!(
        history.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    assert_eq!(tools[0].input_schema["required"], json!(["word"]));

    let error = client
        .call_tool(call("reveal_answer", Default::default()))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("unknown tool \"reveal_answer\""),
        "{message}"
    );
    // The protocol error did not touch the episode.
    let history = client
        .call_tool(call("history", Default::default()))
        .await
        .unwrap();
    assert_eq!(step(&history)["turn"], 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn same_seed_same_game_on_stdio() {
    let mut boards = Vec::new();
    for _ in 0..2 {
        let client = stdio_client(&["wordle", "--seed", "424242"]).await;
        let mut board = Vec::new();
        for w in ["crane", "sloth", "dumpy"] {
            board.push(text(&guess(&client, w).await));
        }
        boards.push(board);
        client.cancel().await.unwrap();
    }
    assert_eq!(boards[0], boards[1]);
}

#[test]
fn bad_flags_fail_at_start_with_a_sentence() {
    let stderr = start_fails(&["wordle", "--task", "train-99999"]);
    assert!(stderr.contains("unknown task \"train-99999\""), "{stderr}");
    let stderr = start_fails(&apple_game());
    assert!(stderr.contains("the answer list is empty"), "{stderr}");
    let bad_list = data("answers-bad.txt");
    let stderr = start_fails(&["wordle", "--answers", &bad_list]);
    assert!(
        stderr.contains("line 2 of the answer list is \"toolong\""),
        "{stderr}"
    );
}

#[tokio::test]
async fn reset_tool_exists_only_on_request_and_starts_a_new_episode() {
    let plain = stdio_client(&["wordle"]).await;
    let names: Vec<_> = plain
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(!names.contains(&"reset".to_owned()));
    assert!(
        plain
            .call_tool(call("reset", Default::default()))
            .await
            .is_err()
    );
    plain.cancel().await.unwrap();

    let answers = data("answers-apple.txt");
    let client = stdio_client(&["wordle", "--answers", &answers, "--reset-tool"]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "reset"));
    let win = guess(&client, "apple").await;
    let first = step(&win)["episode"].clone();
    assert_eq!(step(&win)["done"], true);
    assert!(is_error(&guess(&client, "apple").await));

    let reset = client
        .call_tool(call("reset", Default::default()))
        .await
        .unwrap();
    assert!(!is_error(&reset));
    assert!(
        text(&reset).starts_with("A new episode has started"),
        "{}",
        text(&reset)
    );
    let s = step(&reset);
    assert_ne!(s["episode"], first);
    assert_eq!(
        (s["turn"].clone(), s["return"].clone(), s["done"].clone()),
        (json!(0), json!(0.0), json!(false))
    );

    let again = guess(&client, "paper").await;
    assert!(!is_error(&again));
    assert_eq!(step(&again)["episode"], s["episode"]);
    assert_eq!(step(&again)["turn"], 1);
    client.cancel().await.unwrap();
}
