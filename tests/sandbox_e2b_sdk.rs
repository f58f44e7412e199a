//! The official E2B Python SDK (`e2b-code-interpreter`, pinned in `.ci/setup`) against
//! `mcpgym sandbox`: create, run code (stdout, stderr, a result, a matplotlib PNG, an error),
//! contexts, files (write, read, list, rename, remove, escape refused), commands (also in the
//! background, listed and killed), a client-side timeout followed by a cell that runs, kill.
//! The script is `tests/data/sandbox_e2b_sdk.py`; `.ci/setup` prepares its venv in
//! `target/e2b-venv`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::BIN;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_official_e2b_sdk_works_against_the_local_service() {
    let python = workspace().join("target/e2b-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run .ci/setup --deps to create the E2B SDK venv",
        python.display()
    );
    let mut server = Command::new(BIN)
        .args(["sandbox", "--http", "127.0.0.1:0", "--pool", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcpgym sandbox");
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let base = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.strip_prefix("mcpgym: listening on ") {
                    break url.to_owned();
                }
            }
            _ => panic!(
                "mcpgym sandbox exited before listening: {:?}",
                server.wait()
            ),
        }
    };
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            eprintln!("[server] {line}");
        }
    });

    let started = Instant::now();
    let mut script = Command::new(&python)
        .arg(workspace().join("tests/data/sandbox_e2b_sdk.py"))
        .env("E2B_API_URL", &base)
        .env("E2B_SANDBOX_URL", &base)
        // The SDK checks the key's shape: e2b_ and 40 hex digits. The service ignores it.
        .env(
            "E2B_API_KEY",
            format!("e2b_{}", "0123456789abcdef".repeat(3).get(..40).unwrap()),
        )
        .env_remove("E2B_ACCESS_TOKEN")
        .env_remove("E2B_DOMAIN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the SDK script");
    // The script must not hang the suite.
    let output = loop {
        if let Some(_status) = script.try_wait().unwrap() {
            break script.wait_with_output().unwrap();
        }
        if started.elapsed() > Duration::from_secs(180) {
            let _ = script.kill();
            let output = script.wait_with_output().unwrap();
            panic!(
                "the SDK script hung; stdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("SDK script took {:?}", started.elapsed());
    assert!(
        output.status.success(),
        "the SDK script failed ({}); stdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    for check in [
        "ok create",
        "ok stdout",
        "ok stderr",
        "ok result",
        "ok streamed",
        "ok png bytes",
        "ok error",
        "ok context",
        "ok file read",
        "ok command stdout",
        "ok command exit code",
        "ok command failure",
        "ok command killed",
        "ok killed command ends",
        "ok list",
        "ok rename",
        "ok escape refused",
        "ok client timeout",
        "ok runs after a timeout",
        "ok killed",
        "all ok",
    ] {
        assert!(
            stdout.lines().any(|line| line == check),
            "{check:?} missing from:\n{stdout}"
        );
    }
    for _ in 0..100 {
        if let Ok(Some(_)) = server.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = server.kill();
    let _ = server.wait();
}
