//! A bubblewrap jail for one sandbox.
//!
//! Inside the jail: the host's `/usr` (and the few `/etc` files Python and its libraries read)
//! read-only, a private writable `/home/user` and `/run/sandbox` backed by host directories
//! under the sandbox's [root](JailConfig::root), a private size-limited `/tmp`, new user, PID,
//! IPC, UTS, cgroup and (unless allowed) network namespaces, uid and gid 1000, a cleared
//! environment, and everything else of the root file system read-only. The jail dies with the
//! process that started it (`--die-with-parent` on bwrap's side, kill-on-drop on ours) and is
//! its own session, so it never sees the service's terminal.
//!
//! Host layout of a sandbox root:
//!
//! | host | inside | |
//! |---|---|---|
//! | `root/home` | `/home/user` | the user's files; kept across kernel restarts |
//! | `root/run` | `/run/sandbox` | the service's private exchange with the jail (kernel sockets) |
//! | `root/etc/{passwd,group}` | `/etc/{passwd,group}` | read-only; name the user `user` |
//! | `root/jail.log` | — | stdout and stderr of everything in the jail |
//!
//! Not done here: seccomp filters, Landlock, disk quotas (only `RLIMIT_FSIZE` per file), and a
//! CPU share (only `RLIMIT_CPU` per process).

mod cgroup;
mod limits;
mod uid;

use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

pub use limits::Limits;
pub use uid::{HostUser, UidLease, UidPool};

use crate::error::{Error, Result};
use cgroup::Cgroup;
use limits::PreExec;

/// The user's home inside the jail.
pub const HOME: &str = "/home/user";
/// The service's private directory inside the jail (connection file and sockets).
pub const RUN: &str = "/run/sandbox";
/// uid and gid of the user inside the jail.
pub const INSIDE_ID: u32 = 1000;

/// How to build a jail. [`JailConfig::new`] gives the defaults for a Python kernel.
#[derive(Debug, Clone)]
pub struct JailConfig {
    /// Host directory of this sandbox (see the [module docs](self) for its layout). Created if
    /// missing; never removed by the jail.
    pub root: PathBuf,
    /// The bubblewrap binary.
    pub bwrap: PathBuf,
    /// Keep the host's network namespace (off by default: no network, not even loopback).
    pub allow_network: bool,
    /// Host paths bound read-only at the same place inside. Missing ones are skipped, so a
    /// list can name files that only some systems have.
    pub system_paths: Vec<PathBuf>,
    /// The whole environment of the jailed program.
    pub env: Vec<(String, String)>,
    /// Resource limits.
    pub limits: Limits,
    /// Host user to start `bwrap` as (needs root); `None` keeps the current one.
    pub run_as: Option<HostUser>,
    /// Also bound the jail with cgroups where the hierarchy is writable.
    pub cgroups: bool,
    /// Host directory bound at [`HOME`] instead of `root/home`: how several jails of one
    /// sandbox (one kernel per context, shell commands) share the user's files.
    pub home: Option<PathBuf>,
}

impl JailConfig {
    /// Defaults for a sandbox rooted at `root`: the Debian system Python and its packages,
    /// no network, default [`Limits`], cgroups where possible.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let system_paths = [
            "/usr",
            "/etc/alternatives",
            "/etc/ld.so.cache",
            "/etc/ld.so.conf",
            "/etc/ld.so.conf.d",
            "/etc/localtime",
            "/etc/fonts",
            "/etc/matplotlibrc",
            "/etc/mime.types",
            "/etc/ssl",
            "/etc/ca-certificates",
            "/etc/python3",
            "/etc/python3.11",
        ]
        .map(PathBuf::from)
        .to_vec();
        let env = [
            ("HOME", HOME),
            ("USER", "user"),
            ("LOGNAME", "user"),
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("LANG", "C.UTF-8"),
            ("TMPDIR", "/tmp"),
            ("SHELL", "/bin/sh"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .to_vec();
        JailConfig {
            root: root.into(),
            bwrap: PathBuf::from("bwrap"),
            allow_network: false,
            system_paths,
            env,
            limits: Limits::default(),
            run_as: None,
            cgroups: true,
            home: None,
        }
    }

    /// Host directory bound at [`HOME`].
    pub fn home_dir(&self) -> PathBuf {
        self.home.clone().unwrap_or_else(|| self.root.join("home"))
    }

    /// Host directory bound at [`RUN`].
    pub fn run_dir(&self) -> PathBuf {
        self.root.join("run")
    }

    /// Host file that receives the jail's stdout and stderr.
    pub fn log_path(&self) -> PathBuf {
        self.root.join("jail.log")
    }

    /// The `bwrap` arguments that precede the jailed command.
    fn bwrap_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |items: &[&dyn AsRef<std::ffi::OsStr>]| {
            args.extend(items.iter().map(|s| s.as_ref().to_owned()));
        };
        push(&[&"--unshare-all", &"--unshare-user", &"--disable-userns"]);
        push(&[&"--die-with-parent"]);
        push(&[
            &"--new-session",
            &"--cap-drop",
            &"ALL",
            &"--hostname",
            &"sandbox",
        ]);
        if self.allow_network {
            push(&[&"--share-net"]);
        }
        let inside_id = INSIDE_ID.to_string();
        push(&[&"--uid", &inside_id, &"--gid", &inside_id]);
        // Merged-/usr systems link /bin, /lib... into /usr; mirror that, else bind them.
        for top in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
            match std::fs::read_link(top) {
                Ok(target) => push(&[&"--symlink", &target, &top]),
                Err(_) if Path::new(top).is_dir() => push(&[&"--ro-bind", &top, &top]),
                Err(_) => {}
            }
        }
        for path in &self.system_paths {
            if path.exists() {
                push(&[&"--ro-bind", path, path]);
            }
        }
        let etc = self.root.join("etc");
        push(&[&"--ro-bind", &etc.join("passwd"), &"/etc/passwd"]);
        push(&[&"--ro-bind", &etc.join("group"), &"/etc/group"]);
        if self.allow_network {
            for file in ["/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"] {
                if Path::new(file).exists() {
                    push(&[&"--ro-bind", &file, &file]);
                }
            }
        }
        push(&[&"--proc", &"/proc", &"--dev", &"/dev"]);
        if let Some(size) = self.limits.tmp_bytes {
            push(&[&"--size", &size.to_string()]);
        }
        push(&[&"--tmpfs", &"/tmp"]);
        push(&[&"--bind", &self.home_dir(), &HOME]);
        push(&[&"--bind", &self.run_dir(), &RUN]);
        // Last: the root tmpfs bwrap built, read-only, so nothing can be created beside the binds.
        push(&[&"--remount-ro", &"/", &"--chdir", &HOME, &"--clearenv"]);
        for (key, value) in &self.env {
            push(&[&"--setenv", key, value]);
        }
        push(&[&"--"]);
        args
    }

    /// Creates the host side of the layout (idempotent) and hands the writable parts to the
    /// jail's user. [`Jail::spawn`] does this itself; call it first to put files into the
    /// jail's directories before it starts.
    pub async fn prepare(&self) -> Result<()> {
        let config = self.clone();
        tokio::task::spawn_blocking(move || config.prepare_root())
            .await
            .expect("sandbox root preparation panicked")
    }

    /// Blocking body of [`JailConfig::prepare`].
    fn prepare_root(&self) -> Result<()> {
        let mkdir = |dir: &Path, mode: u32| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(mode)
                .create(dir)
                .map_err(|e| Error::io("create directory", dir, e))
        };
        mkdir(&self.root, 0o755)?;
        let etc = self.root.join("etc");
        mkdir(&etc, 0o755)?;
        let passwd = format!(
            "root:x:0:0:root:/root:/usr/sbin/nologin\n\
             user:x:{INSIDE_ID}:{INSIDE_ID}:user:{HOME}:/bin/sh\n\
             nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        );
        let group = format!("root:x:0:\nuser:x:{INSIDE_ID}:\nnogroup:x:65534:\n");
        for (name, text) in [("passwd", passwd), ("group", group)] {
            let path = etc.join(name);
            std::fs::write(&path, text).map_err(|e| Error::io("write", &path, e))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
                .map_err(|e| Error::io("chmod", &path, e))?;
        }
        for dir in [self.home_dir(), self.run_dir()] {
            mkdir(&dir, 0o700)?;
            if let Some(user) = self.run_as {
                std::os::unix::fs::chown(&dir, Some(user.uid), Some(user.gid))
                    .map_err(|e| Error::io("chown", &dir, e))?;
            }
        }
        Ok(())
    }
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
    /// Prepares the sandbox root and starts `command` (absolute path inside the jail, then its
    /// arguments) in a new jail. Nothing of the jail reaches this process's stdout or stderr.
    pub async fn spawn(config: &JailConfig, command: &[OsString]) -> Result<Jail> {
        Self::spawn_with(config, command, false).await
    }

    /// Like [`Jail::spawn`], but the command's stdout and stderr are pipes to this process:
    /// take them with [`Jail::take_output`].
    pub async fn spawn_piped(config: &JailConfig, command: &[OsString]) -> Result<Jail> {
        Self::spawn_with(config, command, true).await
    }

    /// The stdout and stderr pipes of a jail started with [`Jail::spawn_piped`] (once).
    pub fn take_output(
        &mut self,
    ) -> Option<(tokio::process::ChildStdout, tokio::process::ChildStderr)> {
        Some((self.child.stdout.take()?, self.child.stderr.take()?))
    }

    async fn spawn_with(config: &JailConfig, command: &[OsString], piped: bool) -> Result<Jail> {
        let prepared = config.clone();
        let (log, cgroup) = tokio::task::spawn_blocking(move || -> Result<_> {
            prepared.prepare_root()?;
            let log_path = prepared.log_path();
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log_path)
                .map_err(|e| Error::io("open", &log_path, e))?;
            let cgroup = prepared
                .cgroups
                .then(|| {
                    Cgroup::create(&uuid::Uuid::new_v4().simple().to_string(), &prepared.limits)
                })
                .flatten();
            Ok((log, cgroup))
        })
        .await
        .expect("jail preparation panicked")?;

        let stderr = log
            .try_clone()
            .map_err(|e| Error::io("dup", config.log_path(), e))?;
        let pre_exec = PreExec::new(
            &config.limits,
            cgroup.as_ref().map(Cgroup::procs_files).unwrap_or_default(),
            config.run_as,
        );
        let mut cmd = tokio::process::Command::new(&config.bwrap);
        cmd.args(config.bwrap_args())
            .args(command)
            .env_clear()
            .stdin(Stdio::null())
            .stdout(if piped {
                Stdio::piped()
            } else {
                Stdio::from(log)
            })
            .stderr(if piped {
                Stdio::piped()
            } else {
                Stdio::from(stderr)
            })
            // Own process group: a Ctrl-C on the service's terminal must not reach the jail.
            .process_group(0)
            .kill_on_drop(true);
        // SAFETY: `PreExec::apply` makes only async-signal-safe system calls on data prepared
        // before the fork.
        unsafe {
            cmd.pre_exec(move || pre_exec.apply());
        }
        let child = match cmd.spawn() {
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
        let text = tokio::fs::read(&self.log_path).await.unwrap_or_default();
        let start = text.len().saturating_sub(max_bytes);
        String::from_utf8_lossy(&text[start..]).trim().to_owned()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_is_off_unless_allowed() {
        let mut config = JailConfig::new("/tmp/x");
        let args = config.bwrap_args();
        assert!(args.iter().any(|a| a == "--unshare-all"));
        assert!(!args.iter().any(|a| a == "--share-net"));
        config.allow_network = true;
        assert!(config.bwrap_args().iter().any(|a| a == "--share-net"));
    }

    #[test]
    fn read_only_root_comes_after_every_mount() {
        let args = JailConfig::new("/tmp/x").bwrap_args();
        let position = |flag: &str| args.iter().rposition(|a| a == flag).unwrap();
        let remount = position("--remount-ro");
        for mount in ["--bind", "--ro-bind", "--tmpfs", "--proc", "--dev"] {
            assert!(position(mount) < remount, "{mount} after --remount-ro");
        }
        assert_eq!(args.last().unwrap(), "--");
    }
}
