//! A running jail: `bwrap` and everything below it.

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use crate::cgroup::Cgroup;
use crate::config::{self, SetupFds};
use crate::error::{Error, Result};
use crate::limits::PreExec;
use crate::{JailConfig, log, memfd, seccomp};

/// Where a jail's stdout and stderr go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Written to the jail's log ([`JailConfig::log_path`]), which keeps the last
    /// [`LOG_BYTES`](crate::LOG_BYTES).
    Log,
    /// Pipes to this process: take them with [`Jail::take_output`].
    Piped,
    /// Discarded.
    Null,
}

/// A running jail: `bwrap` and everything below it.
///
/// Dropping it kills the jail (SIGKILL to `bwrap`, whose PID-namespace init then takes every
/// process of the jail with it) and removes its cgroup in the background.
#[derive(Debug)]
pub struct Jail {
    child: tokio::process::Child,
    cgroup: Option<Cgroup>,
    log_path: PathBuf,
}

impl Jail {
    /// Prepares the jail's root and starts `command` (absolute path inside the jail, then its
    /// arguments) in a new jail. Nothing of the jail reaches this process's stdout or stderr.
    pub async fn spawn(config: &JailConfig, command: &[OsString]) -> Result<Jail> {
        Self::spawn_with(config, command, Output::Log).await
    }

    /// Like [`Jail::spawn`], but the command's stdout and stderr are pipes to this process:
    /// take them with [`Jail::take_output`].
    pub async fn spawn_piped(config: &JailConfig, command: &[OsString]) -> Result<Jail> {
        Self::spawn_with(config, command, Output::Piped).await
    }

    /// The stdout and stderr pipes of a jail started with [`Jail::spawn_piped`] (once).
    pub fn take_output(
        &mut self,
    ) -> Option<(tokio::process::ChildStdout, tokio::process::ChildStderr)> {
        Some((self.child.stdout.take()?, self.child.stderr.take()?))
    }

    /// Like [`Jail::spawn`], with the jail's stdout and stderr sent to `output`.
    pub async fn spawn_with(
        config: &JailConfig,
        command: &[OsString],
        output: Output,
    ) -> Result<Jail> {
        let prepared = config.clone();
        let cgroup = tokio::task::spawn_blocking(move || -> Result<_> {
            prepared.prepare_root()?;
            let cgroup = prepared
                .cgroups
                .then(|| {
                    let name = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4().simple());
                    Cgroup::create(&name, &prepared.limits)
                })
                .flatten();
            let limits = &prepared.limits;
            if limits.unlimited_address_space && limits.memory_bytes.is_some() && cgroup.is_none() {
                return Err(Error::MemoryUnbounded);
            }
            if limits.cpu_millicores.is_some() && !cgroup.as_ref().is_some_and(Cgroup::has_cpu) {
                return Err(Error::CpuQuotaUnenforceable);
            }
            Ok(cgroup)
        })
        .await
        .map_err(|e| Error::io("prepare", &config.root, std::io::Error::other(e)))??;

        let seccomp = seccomp::program_fd()?;
        let passwd = memfd::with_contents(c"mcpgym-passwd", config::passwd().as_bytes())?;
        let group = memfd::with_contents(c"mcpgym-group", config::group().as_bytes())?;

        let mut args = Vec::new();
        let setup = SetupFds {
            seccomp: seccomp.as_raw_fd(),
            passwd: passwd.as_raw_fd(),
            group: group.as_raw_fd(),
        };
        let mut empties = Vec::new();
        let options = config.bwrap_args(setup, &mut || {
            let fd = memfd::with_contents(c"mcpgym-empty", b"");
            let raw = fd.as_ref().map_or(-1, AsRawFd::as_raw_fd);
            empties.push(fd);
            raw
        });
        let empties = empties.into_iter().collect::<Result<Vec<_>>>()?;
        for arg in options {
            args.extend_from_slice(arg.as_bytes());
            args.push(0);
        }
        // On bwrap's command line only this descriptor and the jailed command: its command
        // line is that of the jail's PID 1, which any process inside can read.
        let args = memfd::with_contents(c"mcpgym-bwrap-args", &args)?;
        let stdio = || match output {
            Output::Log | Output::Piped => Stdio::piped(),
            Output::Null => Stdio::null(),
        };
        let pre_exec = PreExec::new(
            &config.limits,
            cgroup.as_ref().map(Cgroup::procs_files).unwrap_or_default(),
            config.run_as,
            [&seccomp, &passwd, &group, &args]
                .into_iter()
                .chain(&empties)
                .map(AsRawFd::as_raw_fd)
                .collect(),
        );
        let mut cmd = tokio::process::Command::new(&config.bwrap);
        cmd.arg("--args")
            .arg(args.as_raw_fd().to_string())
            .arg("--")
            .args(command)
            .env_clear()
            .stdin(Stdio::null())
            .stdout(stdio())
            .stderr(stdio())
            // Own process group: a Ctrl-C on the service's terminal must not reach the jail.
            .process_group(0)
            .kill_on_drop(true);
        // SAFETY: `PreExec::apply` makes only async-signal-safe system calls on data prepared
        // before the fork.
        unsafe {
            cmd.pre_exec(move || pre_exec.apply());
        }
        let spawned = cmd.spawn();
        // bwrap has its own copies (or never will): ours close now.
        drop((seccomp, passwd, group, empties, args));
        let mut child = match spawned {
            Ok(child) => child,
            Err(source) => {
                if let Some(cgroup) = cgroup {
                    cgroup.kill_and_remove().await;
                }
                return Err(Error::Spawn {
                    bwrap: config.bwrap.clone(),
                    source,
                });
            }
        };
        if output == Output::Log
            && let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take())
        {
            tokio::spawn(log::drain(stdout, stderr, config.log_path()));
        }
        Ok(Jail {
            child,
            cgroup,
            log_path: config.log_path(),
        })
    }
    /// Host pid of `bwrap`, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Whether the jail runs inside its own cgroup (limits on the whole jail).
    pub fn has_cgroup(&self) -> bool {
        self.cgroup.is_some()
    }

    /// Waits until the jail exits (cancel-safe: may be used in `select!`).
    pub async fn wait(&mut self) -> Result<ExitStatus> {
        self.child
            .wait()
            .await
            .map_err(|e| Error::io("wait for", &self.log_path, e))
    }

    /// The exit status if the jail has exited, without waiting.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Kills every process of the jail and waits until they are gone. Idempotent.
    pub async fn kill(&mut self) {
        let _ = self.child.start_kill();
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            tracing::warn!(log = %self.log_path.display(), "bwrap not reaped 5 s after SIGKILL");
        }
        if let Some(cgroup) = self.cgroup.take() {
            cgroup.kill_and_remove().await;
        }
    }

    /// The last `max_bytes` of the jail's log (for error messages).
    pub async fn log_tail(&self, max_bytes: usize) -> String {
        use tokio::io::{AsyncReadExt, AsyncSeekExt};
        // Only the tail is read: the log may be as large as the file-size limit.
        let mut text = Vec::new();
        if let Ok(mut file) = tokio::fs::File::open(&self.log_path).await {
            let len = file.metadata().await.map(|m| m.len()).unwrap_or(0);
            let start = len.saturating_sub(max_bytes as u64);
            if file.seek(std::io::SeekFrom::Start(start)).await.is_ok() {
                let _ = file.take(max_bytes as u64).read_to_end(&mut text).await;
            }
        }
        String::from_utf8_lossy(&text).trim().to_owned()
    }
}

impl Drop for Jail {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        if let Some(cgroup) = self.cgroup.take() {
            // A thread rather than a task: a runtime that is shutting down (the usual moment
            // for drops) would cancel the task and leave the cgroup behind.
            let spawned = std::thread::Builder::new()
                .name("jail-cgroup-cleanup".into())
                .spawn(move || cgroup.kill_and_remove_blocking());
            if let Err(error) = spawned {
                tracing::warn!(%error, "cannot start cgroup cleanup; cgroup left behind");
            }
        }
    }
}
