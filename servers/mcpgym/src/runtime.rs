//! `--runtime DIR`: the Python prefix the sandboxes run on, shared by `mcpgym sandbox`,
//! `mcpgym jupyter` (its local sandbox service) and `mcpgym serve`.

use std::path::{Path, PathBuf};

use mcpgym_sandbox::Runtime;

/// The environment variable that names the runtime when the flag is not given (and through
/// which `mcpgym serve` hands its flag to the environments it builds).
pub const RUNTIME_VAR: &str = "MCPGYM_RUNTIME";

/// The flag choosing the sandboxes' Python.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RuntimeArgs {
    /// Python prefix or venv the sandboxes run on (kernels, shell commands, task setups and
    /// checks), bound read-only into each jail at its own path; it needs bin/python with
    /// ipykernel (default: target/runtime beside the binary, which .ci/setup builds; without
    /// it, Debian's python3).
    #[arg(long, value_name = "DIR", env = RUNTIME_VAR)]
    pub runtime: Option<PathBuf>,
}

impl RuntimeArgs {
    /// The runtime the flag names, checked; without the flag, the one beside the binary, or
    /// Debian's `/usr/bin/python3` with a warning when that is missing. Blocking: it runs
    /// the interpreter once.
    pub fn resolve(&self) -> anyhow::Result<Runtime> {
        if let Some(dir) = &self.runtime {
            return open(dir);
        }
        match default_dir() {
            Some(dir) if dir.exists() => open(&dir),
            other => {
                let place = other.map_or_else(
                    || "beside the binary".to_owned(),
                    |dir| dir.display().to_string(),
                );
                tracing::warn!(
                    "no data-science runtime at {place} (run .ci/setup to build it); sandboxes run on Debian's /usr/bin/python3"
                );
                Ok(Runtime::system())
            }
        }
    }
}

/// `<dir of the executable>/../runtime`: `target/runtime` for `target/release/mcpgym` and
/// `target/debug/mcpgym`, where `.ci/setup` builds it.
fn default_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    Some(exe.parent()?.parent()?.join("runtime"))
}

/// Opens `dir` as a runtime, or says in one sentence why it cannot serve and what to do.
fn open(dir: &Path) -> anyhow::Result<Runtime> {
    Runtime::open(dir).map_err(|error| {
        anyhow::anyhow!(
            "--runtime {} is not a usable Python prefix ({error}): give a venv or prefix whose \
             bin/python runs and has ipykernel (python -m pip install ipykernel), or run \
             .ci/setup to build the default runtime",
            dir.display()
        )
    })
}
