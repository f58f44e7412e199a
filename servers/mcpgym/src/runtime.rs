//! The data-science runtime the sandboxes run on (a Python venv and Deno): where it is found,
//! what it is built from, and `mcpgym runtime install|path`.
//!
//! It is looked for in this order: `--runtime DIR` or `MCPGYM_RUNTIME`; `target/runtime`
//! beside the binary (where `.ci/setup` builds it); the per-user cache, where `mcpgym runtime
//! install` builds it. There is no fallback: a sandbox on another Python would miss the
//! packages tasks rely on and score 0, so without a runtime whatever needs one fails with
//! [`MISSING`].
//!
//! The lock and Deno's version are embedded from the files `manifests/container/install
//! runtime` reads, and both write and compare the same stamp, so either builds a runtime the
//! other recognises as complete.

mod install;

use std::path::{Path, PathBuf};

use anyhow::Context;
use mcpgym_sandbox::Runtime;
use mcpgym_sandbox::jail::SENSITIVE;
use sha2::Digest;

/// The environment variable that names the runtime when the flag is not given (and through
/// which `mcpgym serve` hands its flag to the environments it builds).
pub const RUNTIME_VAR: &str = "MCPGYM_RUNTIME";

/// Every wheel of the runtime's venv, pinned with its dependencies.
const LOCK: &str = include_str!("../../../.ci/runtime-requirements.txt");
/// The version of Deno, from npm: the JavaScript and TypeScript kernel.
const DENO_VERSION: &str = include_str!("../../../.ci/runtime-deno-version").trim_ascii();
/// The interpreter the venv is made from: Debian's, under `/usr`, which every jail binds; the
/// lock's wheels are built for its Python 3.11.
const BASE_PYTHON: &str = "/usr/bin/python3";
/// The file in a complete runtime that holds its stamp (written last).
const STAMP_FILE: &str = ".requirements-sha256";
/// Where a per-user cache goes when the user's own lies where jails never look (root's home).
const SYSTEM_CACHE: &str = "/var/cache";

/// What whatever needs a runtime says when none is found.
pub const MISSING: &str = "no data-science runtime for the Jupyter sandboxes: run `mcpgym \
    runtime install` once (it builds the pinned Python venv, about 1.2 GB, into a per-user \
    cache where it is found from then on), or give one with --runtime DIR or MCPGYM_RUNTIME";

/// The flag choosing the sandboxes' Python.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RuntimeArgs {
    /// Python prefix or venv the sandboxes run on (kernels, shell commands, task setups and
    /// checks), bound read-only into each jail at its own path; it needs bin/python with
    /// ipykernel (default: target/runtime beside the binary, which .ci/setup builds, else the
    /// one `mcpgym runtime install` built in the per-user cache).
    #[arg(long, value_name = "DIR", env = RUNTIME_VAR)]
    pub runtime: Option<PathBuf>,
}

impl RuntimeArgs {
    /// The runtime the flag names, checked; without the flag, the one beside the binary, then
    /// the per-user cache's; `Ok(None)` when there is none. Blocking: it runs the interpreter.
    pub fn find(&self) -> anyhow::Result<Option<Runtime>> {
        if let Some(dir) = &self.runtime {
            return open(dir).map(Some);
        }
        if let Some(dir) = beside_binary().filter(|dir| dir.exists()) {
            return open(&dir).map(Some);
        }
        match per_user_dir() {
            Some(dir) if Stamp::current().is_ok_and(|stamp| stamp.marks(&dir)) => {
                open(&dir).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// The runtime [`RuntimeArgs::find`] finds, or the error [`MISSING`].
    pub fn resolve(&self) -> anyhow::Result<Runtime> {
        self.find()?.ok_or_else(|| anyhow::anyhow!(MISSING))
    }
}

/// `<dir of the executable>/../runtime`: `target/runtime` for `target/release/mcpgym` and
/// `target/debug/mcpgym`, where `.ci/setup` builds it.
fn beside_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    Some(exe.parent()?.parent()?.join("runtime"))
}

/// `$XDG_CACHE_HOME/mcpgym/runtime`, else `~/.cache/mcpgym/runtime`; `/var/cache/mcpgym/runtime`
/// when that lies under root's home, which jails never see.
fn cache_dir() -> Option<PathBuf> {
    let base = dirs::cache_dir()?;
    let base = if hidden_from_jails(&base) {
        PathBuf::from(SYSTEM_CACHE)
    } else {
        base
    };
    Some(base.join("mcpgym").join("runtime"))
}

/// The runtime this binary builds, in the cache: one folder per stamp, so the runtime of
/// another version (an upgrade, another lock) is neither clobbered nor mistaken for this one.
fn per_user_dir() -> Option<PathBuf> {
    Some(cache_dir()?.join(Stamp::current().ok()?.key()))
}

/// Whether `path` lies where no jail can see it.
fn hidden_from_jails(path: &Path) -> bool {
    SENSITIVE.iter().any(|hidden| path.starts_with(hidden))
}

/// Opens `dir` as a runtime, or says in one sentence why it cannot serve and what to do.
fn open(dir: &Path) -> anyhow::Result<Runtime> {
    Runtime::open(dir).map_err(|error| {
        anyhow::anyhow!(
            "--runtime {} is not a usable Python prefix ({error}): give a venv or prefix whose \
             bin/python runs and has ipykernel (python -m pip install ipykernel), or run \
             `mcpgym runtime install` to build the default runtime",
            dir.display()
        )
    })
}

/// The sha256 of a runtime's inputs: the lock, the base interpreter's `-VV`, Deno's version,
/// hashed as `manifests/container/install runtime-stamp` does.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    /// Lowercase hex.
    hash: String,
    /// The base interpreter's `-VV` line.
    python: String,
}

impl Stamp {
    /// The stamp for this binary's lock and the base interpreter. Blocking: it runs it.
    fn current() -> anyhow::Result<Self> {
        let output = std::process::Command::new(BASE_PYTHON)
            .arg("-VV")
            .env_remove("PYTHONHOME")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .with_context(|| format!("cannot run {BASE_PYTHON}"))?;
        anyhow::ensure!(
            output.status.success(),
            "{BASE_PYTHON} -VV failed ({})",
            output.status
        );
        let python = String::from_utf8_lossy(&output.stdout).into_owned();
        Ok(Self::of(&python))
    }

    /// The stamp for this binary's lock and an interpreter whose `-VV` printed `python`.
    fn of(python: &str) -> Self {
        let mut hasher = sha2::Sha256::new();
        hasher.update(LOCK);
        hasher.update(python);
        hasher.update(format!("deno {DENO_VERSION}\n"));
        let hash = hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        Self {
            hash,
            python: python.trim().to_owned(),
        }
    }

    /// The name of this runtime's folder in the cache.
    fn key(&self) -> &str {
        &self.hash[..16]
    }

    /// Whether the runtime at `dir` is complete and built from these inputs.
    fn marks(&self, dir: &Path) -> bool {
        std::fs::read_to_string(dir.join(STAMP_FILE)).is_ok_and(|held| held.trim() == self.hash)
    }
}

/// The wheels of the lock, one per requirement line.
fn locked_packages() -> impl Iterator<Item = &'static str> {
    LOCK.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
}

/// `mcpgym runtime …`.
#[derive(Debug, clap::Subcommand)]
pub enum RuntimeCommand {
    /// Build the runtime into the per-user cache, where the servers find it from then on.
    ///
    /// The runtime is a venv of Debian's Python 3.11 holding the data-science wheels this
    /// binary pins, from the package index, and Deno from npm: about 1.2 GB, a few minutes. It
    /// goes into $XDG_CACHE_HOME/mcpgym/runtime or ~/.cache/mcpgym/runtime
    /// (/var/cache/mcpgym/runtime for root, whose home jails never see), one folder per lock.
    /// Nothing is done when it is there already; an interrupted build leaves nothing that
    /// looks complete. Prints the runtime's folder.
    Install(install::InstallArgs),
    /// Print the folder of the runtime the sandboxes run on.
    ///
    /// Looked for as the servers do: --runtime or MCPGYM_RUNTIME, target/runtime beside the
    /// binary, then the per-user cache. Exit status 1, saying how to get one, when there is
    /// none.
    Path(RuntimeArgs),
}

/// Runs `mcpgym runtime …`.
pub fn run(command: RuntimeCommand) -> anyhow::Result<()> {
    match command {
        RuntimeCommand::Install(args) => install::run(args),
        RuntimeCommand::Path(args) => {
            let runtime = args.resolve()?;
            println!("{}", runtime.prefix().display());
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_lock_pins_every_wheel_and_deno() {
        let packages: Vec<_> = locked_packages().collect();
        assert!(packages.len() > 50, "{packages:?}");
        assert!(packages.iter().all(|p| p.contains("==")), "{packages:?}");
        assert!(packages.iter().any(|p| p.starts_with("pandas==")));
        assert!(packages.iter().any(|p| p.starts_with("ipykernel==")));
        assert!(
            DENO_VERSION.split('.').count() == 3
                && DENO_VERSION.split('.').all(|n| n.parse::<u32>().is_ok()),
            "{DENO_VERSION:?}"
        );
    }

    #[test]
    fn the_stamp_depends_on_the_interpreter() {
        let one = Stamp::of("Python 3.11.2 (main) [GCC 12.2.0]\n");
        let other = Stamp::of("Python 3.11.9 (main) [GCC 12.2.0]\n");
        assert_eq!(one.hash.len(), 64);
        assert_ne!(one.key(), other.key());
        assert_eq!(one, Stamp::of("Python 3.11.2 (main) [GCC 12.2.0]\n"));
    }

    #[test]
    fn root_home_is_never_a_runtime_place() {
        assert!(hidden_from_jails(Path::new("/root/.cache")));
        assert!(!hidden_from_jails(Path::new("/home/ada/.cache")));
        assert!(!hidden_from_jails(Path::new("/rootless/.cache")));
    }
}
