//! The Python a sandbox runs on: a prefix (a venv, a conda environment, or Debian's `/usr`)
//! bound read-only into every jail of the sandbox at the same path as on the host, so the
//! absolute paths venvs and conda environments hold keep working inside.
//!
//! Its `bin` comes first on the jail's `PATH`, so `python3`, `python` and `pip` in shell
//! commands, task setups and checks are the kernel's own interpreter. When the interpreter's
//! base prefix (a venv's `home`) lies outside `/usr`, that is bound read-only too.
//!
//! Matplotlib needs a writable configuration directory: every jail gets `/tmp/matplotlib`
//! (its private `/tmp`), seeded with the font caches the runtime ships in
//! [`FONT_CACHE_DIR`], bound read-only file by file, so the first plot does not scan the
//! fonts again and nothing is written into the user's home.

use std::path::{Path, PathBuf};

use crate::jail::{Bind, JailConfig, SENSITIVE};

/// Where, inside a runtime, the prebuilt Matplotlib font caches are (`fontlist-v*.json`).
pub const FONT_CACHE_DIR: &str = "share/mcpgym/matplotlib";
/// Matplotlib's configuration and cache directory inside every jail.
pub const MATPLOTLIB_DIR: &str = "/tmp/matplotlib";
/// The system prefix, bound into every jail anyway.
const SYSTEM_PREFIX: &str = "/usr";

/// Why a directory cannot serve as a runtime.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// There is no `bin/python`.
    #[error("{} is missing", .0.display())]
    NoPython(PathBuf),
    /// `bin/python` could not be run, or failed.
    #[error("{} does not run ({reason})", .python.display())]
    NotRunnable {
        /// The interpreter.
        python: PathBuf,
        /// What happened, briefly.
        reason: String,
    },
    /// The interpreter runs but cannot import ipykernel, so no kernel could start.
    #[error("its Python has no ipykernel")]
    NoIpykernel,
    /// The runtime or its base interpreter lies in a path never bound into a jail.
    #[error("{} is never bound into a jail", .0.display())]
    Unreachable(PathBuf),
}

/// A Python prefix every jail of a sandbox runs on. [`Runtime::system`] is Debian's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runtime {
    /// The prefix, absolute, as bound (at the same path) inside.
    prefix: PathBuf,
    /// The interpreter kernels start.
    python: PathBuf,
    /// The base interpreter's prefix, when it must be bound too.
    base: Option<PathBuf>,
    /// Font caches to seed each jail's Matplotlib directory with.
    font_caches: Vec<PathBuf>,
}

impl Default for Runtime {
    fn default() -> Self {
        Self::system()
    }
}

impl Runtime {
    /// Debian's `/usr/bin/python3` with the packages installed under `/usr`.
    pub fn system() -> Self {
        Runtime {
            prefix: PathBuf::from(SYSTEM_PREFIX),
            python: PathBuf::from("/usr/bin/python3"),
            base: None,
            font_caches: Vec::new(),
        }
    }

    /// The prefix at `dir` (made canonical: bound where it really is), checked: its
    /// `bin/python` runs and finds ipykernel. Blocking: it starts that interpreter once, to
    /// learn its base prefix.
    pub fn open(dir: &Path) -> Result<Self, RuntimeError> {
        let missing = || RuntimeError::NoPython(dir.join("bin/python"));
        let prefix = dir.canonicalize().map_err(|_| missing())?;
        let python = prefix.join("bin/python");
        if !python.exists() {
            return Err(missing());
        }
        let not_runnable = |reason: String| RuntimeError::NotRunnable {
            python: python.clone(),
            reason,
        };
        let output = std::process::Command::new(&python)
            .args([
                "-I",
                "-c",
                "import importlib.util, sys\n\
                 print(importlib.util.find_spec('ipykernel') is not None)\n\
                 print(sys.base_prefix)",
            ])
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|error| not_runnable(error.to_string()))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().last().unwrap_or("no message").trim();
            return Err(not_runnable(format!("{}: {last}", output.status)));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let mut lines = stdout.lines();
        if lines.next() != Some("True") {
            return Err(RuntimeError::NoIpykernel);
        }
        let base = lines.next().map(PathBuf::from);
        let base = base.filter(|base| {
            !base.starts_with(SYSTEM_PREFIX) && !base.starts_with(&prefix) && base.is_absolute()
        });
        for path in std::iter::once(&prefix).chain(&base) {
            if SENSITIVE.iter().any(|s| path.starts_with(s)) {
                return Err(RuntimeError::Unreachable(path.clone()));
            }
        }
        let mut font_caches: Vec<PathBuf> = std::fs::read_dir(prefix.join(FONT_CACHE_DIR))
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|e| e == "json") && path.is_file())
            .collect();
        font_caches.sort();
        Ok(Runtime {
            prefix,
            python,
            base,
            font_caches,
        })
    }

    /// The prefix (bound at this path inside).
    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    /// The interpreter kernels start, as a path inside the jail (the same as outside).
    pub fn python(&self) -> &Path {
        &self.python
    }

    /// Makes `jail` run on this runtime: binds it (and its base interpreter) read-only, puts
    /// its `bin` first on `PATH`, and gives Matplotlib a writable, pre-seeded directory.
    pub fn apply(&self, jail: &mut JailConfig) {
        for path in std::iter::once(&self.prefix).chain(&self.base) {
            if !jail.system_paths.contains(path) {
                jail.system_paths.push(path.clone());
            }
        }
        let mut path = String::from("/usr/local/bin:/usr/bin:/bin");
        if self.prefix != Path::new(SYSTEM_PREFIX) {
            path = format!("{}:{path}", self.prefix.join("bin").display());
        }
        set_env(jail, "PATH", path);
        set_env(jail, "MPLCONFIGDIR", MATPLOTLIB_DIR.to_owned());
        for cache in &self.font_caches {
            if let Some(name) = cache.file_name() {
                let target = Path::new(MATPLOTLIB_DIR).join(name);
                jail.binds.retain(|bind| bind.target != target);
                jail.binds.push(Bind {
                    source: cache.clone(),
                    target,
                    writable: false,
                });
            }
        }
    }
}

/// Sets `key` in the jail's environment, replacing any earlier value.
fn set_env(jail: &mut JailConfig, key: &str, value: String) {
    jail.env.retain(|(k, _)| k != key);
    jail.env.push((key.to_owned(), value));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_runtime_keeps_the_system_path() {
        let mut jail = JailConfig::new("/tmp/x");
        let before = jail.system_paths.clone();
        Runtime::system().apply(&mut jail);
        assert_eq!(jail.system_paths, before);
        let path = jail.env.iter().find(|(k, _)| k == "PATH").unwrap();
        assert_eq!(path.1, "/usr/local/bin:/usr/bin:/bin");
        assert!(
            jail.env
                .iter()
                .any(|(k, v)| k == "MPLCONFIGDIR" && v == MATPLOTLIB_DIR)
        );
    }

    #[test]
    fn a_prefix_is_bound_and_first_on_path() {
        let runtime = Runtime {
            prefix: "/opt/rt".into(),
            python: "/opt/rt/bin/python".into(),
            base: Some("/opt/python3.12".into()),
            font_caches: vec!["/opt/rt/share/mcpgym/matplotlib/fontlist-v390.json".into()],
        };
        let mut jail = JailConfig::new("/tmp/x");
        runtime.apply(&mut jail);
        runtime.apply(&mut jail);
        assert_eq!(
            jail.system_paths
                .iter()
                .filter(|p| p.starts_with("/opt"))
                .count(),
            2
        );
        let paths: Vec<_> = jail.env.iter().filter(|(k, _)| k == "PATH").collect();
        assert_eq!(paths.len(), 1);
        assert_eq!(paths[0].1, "/opt/rt/bin:/usr/local/bin:/usr/bin:/bin");
        assert_eq!(jail.binds.len(), 1);
        assert!(!jail.binds[0].writable);
        assert_eq!(
            jail.binds[0].target,
            Path::new("/tmp/matplotlib/fontlist-v390.json")
        );
    }

    #[test]
    fn a_directory_without_python_is_refused() {
        let error = Runtime::open(Path::new("/nonexistent/runtime")).unwrap_err();
        assert!(matches!(error, RuntimeError::NoPython(_)), "{error}");
    }

    /// A prefix whose `bin/python` is this shell script.
    fn fake_prefix(name: &str, script: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let prefix =
            std::env::temp_dir().join(format!("mcpgym-runtime-test-{}-{name}", std::process::id()));
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        let python = prefix.join("bin/python");
        std::fs::write(&python, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
        prefix
    }

    #[test]
    fn a_python_that_fails_or_lacks_ipykernel_is_refused() {
        let failing = fake_prefix("failing", "echo 'broken install' >&2; exit 3");
        let error = Runtime::open(&failing).unwrap_err();
        assert!(error.to_string().contains("broken install"), "{error}");
        let bare = fake_prefix("bare", "echo False; echo /usr");
        let error = Runtime::open(&bare).unwrap_err();
        assert!(matches!(error, RuntimeError::NoIpykernel), "{error}");
        let foreign = fake_prefix("foreign", "echo True; echo /opt/python3.12");
        let runtime = Runtime::open(&foreign).unwrap();
        assert_eq!(runtime.base.as_deref(), Some(Path::new("/opt/python3.12")));
        assert_eq!(runtime.python(), foreign.join("bin/python"));
        let hidden = fake_prefix("hidden", "echo True; echo /root/.pyenv/versions/3.11");
        let error = Runtime::open(&hidden).unwrap_err();
        assert!(matches!(error, RuntimeError::Unreachable(_)), "{error}");
        for prefix in [failing, bare, foreign, hidden] {
            std::fs::remove_dir_all(prefix).unwrap();
        }
    }
}
