//! The official E2B SDK (`e2b-code-interpreter`, pinned in `.ci/setup`) against `mcpgym
//! sandbox`, one pytest file per group of E2B features: each Rust test starts its own service
//! and runs `tests/e2b_sdk/<file>` with pytest from `target/e2b-venv`. The Python files are
//! ours, written from what E2B's documentation and its own suite say the SDK must do.

use std::path::PathBuf;
use std::process::Command;

use crate::common::HttpServer;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Starts `mcpgym sandbox` and runs one pytest file of `tests/e2b_sdk/` against it.
pub(crate) fn run_suite(file: &str) {
    let python = workspace().join("target/e2b-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run .ci/setup --deps to create the E2B SDK venv",
        python.display()
    );
    let server = HttpServer::start(&["sandbox", "--pool", "1"]);
    let output = Command::new(&python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--timeout=300",
        ])
        .arg(workspace().join("tests/e2b_sdk").join(file))
        .env("E2B_API_URL", &server.base)
        .env("E2B_SANDBOX_URL", &server.base)
        // The SDK checks the key's shape: e2b_ and 40 hex digits. The service ignores it.
        .env(
            "E2B_API_KEY",
            format!("e2b_{}", "0123456789abcdef".repeat(3).get(..40).unwrap()),
        )
        .env_remove("E2B_ACCESS_TOKEN")
        .env_remove("E2B_DOMAIN")
        .output()
        .expect("run pytest");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "tests/e2b_sdk/{file} failed ({}); stdout:\n{stdout}\nstderr:\n{stderr}\nserver log:\n{}",
        output.status,
        server.log.lock().unwrap()
    );
}

/// Matplotlib figures carry E2B's structured chart (`result.chart`) beside their PNG.
#[test]
fn charts() {
    run_suite("test_charts.py")
}

/// DataFrames give `result.data`; PIL's show and save and saved figures display PNGs.
#[test]
fn rich_results() {
    run_suite("test_rich_results.py")
}

/// JavaScript, TypeScript, R and Bash kernels beside Python: output, working directories,
/// environment variables and contexts; Java refused with a reason.
#[test]
fn languages() {
    run_suite("test_languages.py");
}

/// Kernels killed from inside come back, timeouts leave contexts usable, and a sandbox killed
/// mid-request makes the SDK raise its TimeoutException.
#[test]
fn recovery() {
    run_suite("test_recovery.py");
}
