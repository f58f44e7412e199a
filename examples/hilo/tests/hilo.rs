//! Hi-Lo played through the environment API, as the server plays it.

use mcpgym_env::{Environment, EpisodeSpec, EpisodeState, Split, StartError, StepOutcome};
use mcpgym_hilo::HiLo;
use serde_json::{Value, json};

fn spec(task: &str, seed: u64, options: Value) -> EpisodeSpec {
    let options = options.as_object().cloned().unwrap_or_default();
    EpisodeSpec {
        task: task.into(),
        seed,
        options,
    }
}

async fn call(game: &mut Box<dyn EpisodeState>, tool: &str, arguments: Value) -> StepOutcome {
    game.call(tool, arguments.as_object().cloned().unwrap_or_default())
        .await
}

fn terminal(outcome: &StepOutcome, name: &str) -> f64 {
    let rewards = outcome.finished.as_ref().expect("the game is over");
    rewards
        .iter()
        .find(|r| r.name == name)
        .map_or(0.0, |r| r.value)
}

#[tokio::test]
async fn bisection_wins_every_task_and_seed() {
    let hilo = HiLo::default();
    for split in [Split::Train, Split::Test] {
        for task in hilo.tasks().listed(split) {
            for seed in 0..20 {
                let mut game = hilo.start(&spec(task, seed, json!({}))).await.unwrap();
                let won = loop {
                    let rules = call(&mut game, "rules", json!({})).await;
                    let range = rules.structured.unwrap();
                    let (low, high) = (
                        range["low"].as_u64().unwrap(),
                        range["high"].as_u64().unwrap(),
                    );
                    let number = (low + high) / 2;
                    let outcome = call(&mut game, "guess", json!({ "number": number })).await;
                    assert!(!outcome.is_error, "{}", outcome.text());
                    if outcome.finished.is_some() {
                        break (outcome, number);
                    }
                };
                let (won, number) = won;
                assert_eq!(terminal(&won, "win"), 1.0, "{task} seed {seed}");
                assert_eq!(won.structured.unwrap()["hint"], "correct");
                assert_eq!(game.reveal()["number"], number);
            }
        }
    }
}

#[tokio::test]
async fn the_seed_picks_the_number_and_bad_moves_cost_nothing() {
    let hilo = HiLo::default();
    let numbers: std::collections::BTreeSet<String> = futures_numbers(&hilo).await;
    assert!(numbers.len() > 5, "{numbers:?}");
    let mut game = hilo
        .start(&spec("1-to-100", 1, json!({"guesses": 1})))
        .await
        .unwrap();
    for refused in [
        json!({"number": 0}),
        json!({"number": 101}),
        json!({"n": 5}),
        json!({"number": "5"}),
    ] {
        let outcome = call(&mut game, "guess", refused).await;
        assert!(
            outcome.is_error && outcome.finished.is_none(),
            "{}",
            outcome.text()
        );
    }
    let number = game.reveal()["number"].as_u64().unwrap();
    let wrong = if number == 1 { 2 } else { 1 };
    let lost = call(&mut game, "guess", json!({"number": wrong})).await;
    assert_eq!(terminal(&lost, "win"), 0.0);
}

async fn futures_numbers(hilo: &HiLo) -> std::collections::BTreeSet<String> {
    let mut numbers = std::collections::BTreeSet::new();
    for seed in 0..10 {
        let game = hilo
            .start(&spec("1-to-1000", seed, json!({})))
            .await
            .unwrap();
        numbers.insert(game.reveal()["number"].to_string());
    }
    numbers
}

#[tokio::test]
async fn options_are_checked() {
    let hilo = HiLo::default();
    for (options, expected) in [
        (json!({"guesses": 0}), "between 1 and 64"),
        (json!({"tries": 3}), r#"allowed: {"guesses": integer}"#),
    ] {
        let Err(StartError::InvalidOptions(message)) =
            hilo.start(&spec("1-to-16", 0, options)).await
        else {
            panic!("{expected}: refused");
        };
        assert!(message.contains(expected), "{message}");
    }
}
