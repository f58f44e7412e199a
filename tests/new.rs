//! `mcpgym new NAME`: the files it writes run as they are — the Python environment served and
//! played to its reward, the Rust crate built with its test passing.

use std::process::Command;

use serde_json::json;

use crate::common::{BIN, HttpServer, NewEpisode};

/// A fresh folder for one test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpgym-new-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn new(args: &[&str]) -> std::process::Output {
    Command::new(BIN).arg("new").args(args).output().unwrap()
}

#[tokio::test]
async fn a_new_python_environment_serves_and_pays_for_the_right_answer() {
    let dir = scratch("python");
    let made = new(&["coin-sum", "--dir", dir.to_str().unwrap()]);
    assert!(made.status.success(), "{made:?}");
    let said = String::from_utf8_lossy(&made.stdout);
    assert!(said.contains("mcpgym python coin_sum.py:CoinSum"), "{said}");
    assert!(dir.join("test_coin_sum.py").is_file());

    let spec = format!("{}/coin_sum.py:CoinSum", dir.display());
    let mut command = Command::new(BIN);
    command
        .args(["python", &spec])
        .env(
            "PYTHONPATH",
            format!("{}/../../python/src", env!("CARGO_MANIFEST_DIR")),
        )
        .env("MCPGYM_PYTHON", "python3");
    let server = HttpServer::spawn(command);
    let control = server.control();
    for (seed, right) in [(1, true), (2, false)] {
        let episode = server
            .create(NewEpisode::default().task("large").seed(seed))
            .await;
        let prompt = control.prompt(&episode.id).await.unwrap();
        let numbers: Vec<u64> = prompt
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|part| part.parse().ok())
            .collect();
        let sum: u64 = numbers[numbers.len() - 2..].iter().sum();
        let value = if right { sum } else { sum + 1 };
        let step = control
            .call(&episode.id, "answer", json!({ "value": value }))
            .await
            .unwrap();
        assert!(step.done, "{step:?}");
        assert_eq!(step.reward, if right { 1.0 } else { 0.0 }, "{prompt}");
    }

    // It refuses to write over files, and names that cannot be environments.
    let again = new(&["coin-sum", "--dir", dir.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists and is not empty"));
    let bad = new(&["Coin_Sum"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot name an environment"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "full tier"]
fn a_new_rust_environment_builds_and_its_test_passes() {
    let dir = scratch("rust");
    let checkout = format!("{}/../..", env!("CARGO_MANIFEST_DIR"));
    let made = new(&[
        "coin-sum",
        "--lang",
        "rust",
        "--dir",
        dir.to_str().unwrap(),
        "--checkout",
        &checkout,
    ]);
    assert!(made.status.success(), "{made:?}");
    // Its own target folder under target/, kept between runs: only the first one compiles
    // the dependencies.
    let target = format!("{checkout}/target/new-template");
    let tested = Command::new(env!("CARGO"))
        .args(["test", "--offline", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&tested.stdout),
        String::from_utf8_lossy(&tested.stderr)
    );
    assert!(tested.status.success(), "{out}");
    assert!(out.contains("test result: ok. 1 passed"), "{out}");
    assert!(!out.contains("warning"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
