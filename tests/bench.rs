//! The benchmark command runs end to end and prints its figures (no timing is asserted: speed
//! is measured by the command, not judged by tests).

mod common;

use common::BIN;

#[test]
fn wordle_bench_runs_every_phase_and_prints_figures() {
    let output = std::process::Command::new(BIN)
        .args([
            "bench",
            "wordle",
            "--concurrency",
            "4",
            "--seconds",
            "1",
            "--stdio-calls",
            "200",
            "--idle",
            "500",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "wordle over HTTP, 1 concurrent episode(s)",
        "wordle over HTTP, 4 concurrent episode(s)",
        "guess calls/s",
        "guess latency p50",
        "CPU: server",
        "wordle over stdio, one client, 200 calls",
        "wordle idle episodes: 500 created",
        "server RSS",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
}

#[test]
fn jupyter_bench_runs_every_phase_and_prints_figures() {
    let output = std::process::Command::new(BIN)
        .args([
            "bench",
            "jupyter",
            "--creates",
            "2",
            "--cells",
            "3",
            "--concurrency",
            "2",
            "--seconds",
            "1",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "jupyter sandboxes: 2 created from a full warm pool",
        "ready p50",
        "MiB per sandbox",
        "3 cells `1+1` one after another",
        "cell p50",
        "jupyter, 2 episodes running cells at once",
        "executions/s",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
}
