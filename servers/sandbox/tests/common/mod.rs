//! Helpers shared by the integration tests: sandboxes in throw-away directories.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use mcpgym_sandbox::{Execution, ExecutionStatus, JailConfig, Kernel, KernelConfig, Output};

/// Generous: only a hung kernel should ever hit it.
pub const RUN: Duration = Duration::from_secs(30);

/// A kernel whose sandbox directory is removed when the test ends.
pub struct Sandbox {
    pub kernel: Kernel,
    _root: RemoveOnDrop,
}

/// Removes a sandbox directory when dropped.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = mcpgym_sandbox::jail::remove_root(&self.0);
    }
}

/// A fresh sandbox root under the system temp directory.
pub fn new_root() -> PathBuf {
    std::env::temp_dir()
        .join("mcpgym-sandbox-tests")
        .join(uuid::Uuid::new_v4().simple().to_string())
}

/// Starts a kernel with the default configuration, adjusted by `adjust`.
pub async fn start_with(adjust: impl FnOnce(&mut KernelConfig)) -> Sandbox {
    let root = new_root();
    let mut config = KernelConfig::new(JailConfig::new(&root));
    adjust(&mut config);
    let kernel = Kernel::start(config).await.expect("kernel starts");
    Sandbox {
        kernel,
        _root: RemoveOnDrop(root),
    }
}

/// Starts a kernel with the default configuration.
pub async fn start() -> Sandbox {
    start_with(|_| {}).await
}

impl Sandbox {
    /// Shuts the kernel down and waits for its jail and cgroup to be gone (a plain drop
    /// cleans up in the background, which a test binary that exits may cut short).
    pub async fn close(self) {
        self.kernel.shutdown().await;
    }

    /// Runs code that must succeed, with the generous timeout.
    pub async fn ok(&mut self, code: &str) -> Execution {
        let run = self.kernel.execute(code, RUN).await.expect("execute");
        assert_eq!(run.status, ExecutionStatus::Ok, "{code:?} gave {run:#?}");
        run
    }

    /// The `text/plain` of the cell's result.
    pub async fn value(&mut self, code: &str) -> String {
        let run = self.ok(code).await;
        result_text(&run).unwrap_or_else(|| panic!("{code:?} has no result: {run:#?}"))
    }
}

/// The `text/plain` of an execution's result, if it has one.
pub fn result_text(run: &Execution) -> Option<String> {
    run.outputs.iter().find_map(|o| match o {
        Output::Result { data, .. } => data.get("text/plain")?.as_str().map(str::to_owned),
        _ => None,
    })
}

/// The exception name of an execution's first error.
pub fn ename(run: &Execution) -> Option<&str> {
    match run.error()? {
        Output::Error { ename, .. } => Some(ename),
        _ => None,
    }
}
