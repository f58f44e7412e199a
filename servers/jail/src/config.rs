//! How a jail is built: [`JailConfig`], its host layout and its bwrap arguments.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::mask::{SENSITIVE, is_sensitive, masks, own_executable};
use crate::quota::mount_quota;
use crate::{HOME, HostUser, INSIDE_ID, Limits, RUN};

/// An extra host path bound into the jail (after `/tmp` and the home, so it may land in
/// either).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    /// The host path (skipped when missing).
    pub source: PathBuf,
    /// Where it appears inside.
    pub target: PathBuf,
    /// Whether the jail may write to it.
    pub writable: bool,
}

/// How to build a jail. [`JailConfig::new`] gives the defaults for a Python kernel.
#[derive(Debug, Clone)]
pub struct JailConfig {
    /// Host directory of this jail (see the [crate docs](crate) for its layout). Created if
    /// missing; never removed by the jail (use [`remove_root`](crate::remove_root)).
    pub root: PathBuf,
    /// The bubblewrap binary.
    pub bwrap: PathBuf,
    /// Keep the host's network namespace (off by default: no network, not even loopback).
    pub allow_network: bool,
    /// Host paths bound read-only at the same place inside. Missing ones are skipped, so a
    /// list can name files that only some systems have; [sensitive](crate::SENSITIVE) ones
    /// are never bound.
    pub system_paths: Vec<PathBuf>,
    /// Host paths hidden wherever a bound directory holds them (an empty file or directory
    /// is bound over them), besides this process's executable and the
    /// [sensitive](crate::SENSITIVE) paths, which are always hidden: task data, server state.
    pub masked_paths: Vec<PathBuf>,
    /// Extra binds, e.g. a display's socket into `/tmp`.
    pub binds: Vec<Bind>,
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
    /// Host directory bound at `/tmp` instead of a private tmpfs: how the jails of one sandbox
    /// (its kernels and its commands) share one `/tmp`, as the processes of one machine do.
    /// Bounded like the private one, by [`Limits::tmp_bytes`], where mounts are possible.
    pub tmp: Option<PathBuf>,
}

/// Size of the tmpfs at [`RUN`]: room for a connection file and socket files.
pub const RUN_BYTES: u64 = 1 << 20;

/// Descriptors bwrap reads while it builds a jail (see [`crate::memfd`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SetupFds {
    /// The seccomp filter.
    pub(crate) seccomp: libc::c_int,
    /// The jail's `/etc/passwd`.
    pub(crate) passwd: libc::c_int,
    /// The jail's `/etc/group`.
    pub(crate) group: libc::c_int,
}

/// The jail's `/etc/passwd`: the user is `user`, with [`INSIDE_ID`] and [`HOME`].
pub(crate) fn passwd() -> String {
    format!(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n\
         user:x:{INSIDE_ID}:{INSIDE_ID}:user:{HOME}:/bin/sh\n\
         nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
}

/// The jail's `/etc/group`.
pub(crate) fn group() -> String {
    format!("root:x:0:\nuser:x:{INSIDE_ID}:\nnogroup:x:65534:\n")
}

/// Host folders of locally installed programs, masked in every jail by default.
pub const LOCAL_PROGRAMS: [&str; 2] = ["/usr/local/bin", "/usr/local/sbin"];

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
            // R's own configuration (Renviron, Rprofile.site), for the R kernel.
            "/etc/R",
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
            // Where images and package managers install programs of their own (mcpgym among
            // them, and every copy of it embeds the task catalogs): nothing a jail runs
            // comes from there.
            masked_paths: LOCAL_PROGRAMS.map(PathBuf::from).to_vec(),
            binds: Vec::new(),
            env,
            limits: Limits::default(),
            run_as: None,
            cgroups: true,
            home: None,
            tmp: None,
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

    /// Host file that receives the jail's stdout and stderr (its last
    /// [`LOG_BYTES`](crate::LOG_BYTES) at most).
    pub fn log_path(&self) -> PathBuf {
        self.root.join("jail.log")
    }

    /// The read-only binds of the system, then the masks over what they must not show.
    fn system_binds(
        &self,
        empty_file: &mut dyn FnMut() -> libc::c_int,
        push: &mut impl FnMut(&[&dyn AsRef<OsStr>]),
    ) {
        let mut bound: Vec<PathBuf> = Vec::new();
        // Merged-/usr systems link /bin, /lib... into /usr; mirror that, else bind them.
        for top in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
            match std::fs::read_link(top) {
                Ok(target) => push(&[&"--symlink", &target, &top]),
                Err(_) if Path::new(top).is_dir() => bound.push(top.into()),
                Err(_) => {}
            }
        }
        let mut network_files = Vec::new();
        if self.allow_network {
            network_files = ["/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"]
                .map(PathBuf::from)
                .to_vec();
        }
        for path in self.system_paths.iter().chain(&network_files) {
            if is_sensitive(path) {
                tracing::warn!(path = %path.display(), "a sensitive path is never bound into a jail");
            } else if path.exists() && !bound.contains(path) {
                bound.push(path.clone());
            }
        }
        for path in &bound {
            push(&[&"--ro-bind", path, path]);
        }
        let mut secrets: Vec<PathBuf> = SENSITIVE.iter().map(PathBuf::from).collect();
        secrets.extend(own_executable().map(Path::to_owned));
        secrets.extend(self.masked_paths.iter().cloned());
        // Neither mask names a host path in the jail's mount table: a file is covered by an
        // empty read-only copy (bwrap consumes one empty memory file for each), a directory
        // by an empty read-only tmpfs.
        for (inside, is_dir) in masks(&bound, &secrets) {
            if is_dir {
                push(&[&"--perms", &"0555", &"--tmpfs", &inside]);
                push(&[&"--remount-ro", &inside]);
            } else {
                let empty = empty_file().to_string();
                push(&[&"--perms", &"0444", &"--ro-bind-data", &empty, &inside]);
            }
        }
    }

    /// The `bwrap` options, reading what `fds` hold and one new empty file from
    /// `empty_file` for each masked file (the jailed command follows a `--`).
    pub(crate) fn bwrap_args(
        &self,
        fds: SetupFds,
        empty_file: &mut dyn FnMut() -> libc::c_int,
    ) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |items: &[&dyn AsRef<OsStr>]| {
            args.extend(items.iter().map(|s| s.as_ref().to_owned()));
        };
        push(&[&"--unshare-all", &"--unshare-user", &"--disable-userns"]);
        push(&[&"--die-with-parent"]);
        push(&[
            &"--new-session",
            &"--cap-drop",
            &"ALL",
            &"--hostname",
            &crate::HOSTNAME,
        ]);
        if self.allow_network {
            push(&[&"--share-net"]);
        }
        let inside_id = INSIDE_ID.to_string();
        push(&[&"--uid", &inside_id, &"--gid", &inside_id]);
        // The private /tmp before the system binds: a bound path that lies under /tmp (a
        // server run from a checkout there) stays visible, and masked, instead of hidden.
        match &self.tmp {
            Some(shared) => push(&[&"--bind", shared, &"/tmp"]),
            None => {
                if let Some(size) = self.limits.tmp_bytes {
                    push(&[&"--size", &size.to_string()]);
                }
                push(&[&"--tmpfs", &"/tmp"]);
            }
        }
        // A private, writable /root as in E2B's sandboxes (code that expects root's home, a
        // context created there), bounded like /tmp. The host's /root is never bound.
        if let Some(size) = self.limits.tmp_bytes {
            push(&[&"--size", &size.to_string()]);
        }
        push(&[&"--tmpfs", &"/root"]);
        self.system_binds(empty_file, &mut push);
        // Copied onto the jail's root, which is read-only by the end.
        push(&[&"--file", &fds.passwd.to_string(), &"/etc/passwd"]);
        push(&[&"--file", &fds.group.to_string(), &"/etc/group"]);
        push(&[&"--proc", &"/proc", &"--dev", &"/dev"]);
        // /dev is a tmpfs bwrap fills with a few device nodes: its own size-limited tmpfs for
        // /dev/shm, the rest read-only (below).
        if let Some(size) = self.limits.shm_bytes {
            push(&[&"--size", &size.to_string()]);
        }
        push(&[&"--tmpfs", &"/dev/shm"]);
        push(&[&"--bind", &self.home_dir(), &HOME]);
        push(&[&"--bind", &self.run_dir(), &RUN]);
        for bind in &self.binds {
            if bind.source.exists() {
                let flag = if bind.writable { "--bind" } else { "--ro-bind" };
                push(&[&flag, &bind.source, &bind.target]);
            }
        }
        // Last: the tmpfs bwrap built for / and /dev, read-only, so nothing can be created
        // beside the binds.
        push(&[&"--remount-ro", &"/dev", &"--remount-ro", &"/"]);
        push(&[&"--seccomp", &fds.seccomp.to_string()]);
        push(&[&"--chdir", &HOME, &"--clearenv"]);
        for (key, value) in &self.env {
            push(&[&"--setenv", key, value]);
        }
        args
    }

    /// Creates the host side of the layout (idempotent), bounds the home where it can (see
    /// [`mount_quota`](crate::mount_quota)) and hands the writable parts to the jail's user.
    /// [`Jail::spawn`](crate::Jail::spawn) does this itself; call it first to put files into
    /// the jail's directories before it starts.
    pub async fn prepare(&self) -> Result<()> {
        let config = self.clone();
        tokio::task::spawn_blocking(move || config.prepare_root())
            .await
            .map_err(|e| Error::io("prepare", &self.root, std::io::Error::other(e)))?
    }

    /// Blocking body of [`JailConfig::prepare`].
    pub fn prepare_root(&self) -> Result<()> {
        let mkdir = |dir: &Path, mode: u32| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(mode)
                .create(dir)
                .map_err(|e| Error::io("create directory", dir, e))
        };
        mkdir(&self.root, 0o755)?;
        let owner = self.run_as.unwrap_or_else(|| HostUser {
            // SAFETY: geteuid and getegid cannot fail.
            uid: unsafe { libc::geteuid() },
            gid: unsafe { libc::getegid() },
        });
        let home = self.home_dir();
        for dir in [&home, &self.run_dir()] {
            mkdir(dir, 0o700)?;
            if let Some(user) = self.run_as {
                std::os::unix::fs::chown(dir, Some(user.uid), Some(user.gid))
                    .map_err(|e| Error::io("chown", dir, e))?;
            }
        }
        if let Some(bytes) = self.limits.home_bytes {
            mount_quota(&home, bytes, owner)?;
        }
        if let Some(tmp) = &self.tmp {
            mkdir(tmp, 0o700)?;
            if let Some(user) = self.run_as {
                std::os::unix::fs::chown(tmp, Some(user.uid), Some(user.gid))
                    .map_err(|e| Error::io("chown", tmp, e))?;
            }
            if let Some(bytes) = self.limits.tmp_bytes {
                mount_quota(tmp, bytes, owner)?;
            }
        }
        // The run folder holds a connection file and socket files: a small tmpfs keeps a
        // jail that writes there off the host's disk.
        mount_quota(&self.run_dir(), RUN_BYTES, owner)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FDS: SetupFds = SetupFds {
        seccomp: 3,
        passwd: 4,
        group: 5,
    };

    /// The options for `config`, with made-up descriptors.
    fn args_of(config: &JailConfig) -> Vec<OsString> {
        config.bwrap_args(FDS, &mut || 9)
    }

    #[test]
    fn network_is_off_unless_allowed() {
        let mut config = JailConfig::new("/tmp/x");
        let args = args_of(&config);
        assert!(args.iter().any(|a| a == "--unshare-all"));
        assert!(!args.iter().any(|a| a == "--share-net"));
        config.allow_network = true;
        assert!(args_of(&config).iter().any(|a| a == "--share-net"));
    }

    #[test]
    fn read_only_root_comes_after_every_mount() {
        let mut config = JailConfig::new("/tmp/x");
        config.binds.push(Bind {
            source: "/etc/hostname".into(),
            target: "/tmp/hostname".into(),
            writable: false,
        });
        let args = args_of(&config);
        let position = |flag: &str| args.iter().rposition(|a| a == flag).unwrap();
        let remount = args
            .windows(2)
            .position(|w| w[0] == "--remount-ro" && w[1] == "/")
            .unwrap();
        for mount in [
            "--bind",
            "--ro-bind",
            "--tmpfs",
            "--proc",
            "--dev",
            "--size",
        ] {
            assert!(position(mount) < remount, "{mount} after --remount-ro");
        }
        assert!(position("--seccomp") > remount);
    }

    #[test]
    fn sensitive_paths_are_never_bound() {
        let mut config = JailConfig::new("/tmp/x");
        config.system_paths.push("/etc/shadow".into());
        config.system_paths.push("/etc/ssh".into());
        let args = args_of(&config);
        let binds: Vec<_> = args
            .windows(3)
            .filter(|w| w[0] == "--ro-bind")
            .map(|w| (w[1].clone(), w[2].clone()))
            .collect();
        assert!(
            !binds
                .iter()
                .any(|(source, _)| source == "/etc/shadow" || source == "/etc/ssh")
        );
        if Path::new("/etc/ssl/private").exists() {
            let masked = args
                .windows(2)
                .any(|w| w[0] == "--tmpfs" && w[1] == "/etc/ssl/private");
            assert!(masked, "/etc/ssl/private is not covered");
        }
        // Nothing bound names the jail's host folder.
        assert!(
            !binds
                .iter()
                .any(|(source, _)| Path::new(source).starts_with("/tmp/x"))
        );
    }

    #[test]
    fn a_shared_tmp_replaces_the_private_one() {
        let mut config = JailConfig::new("/tmp/x");
        let private = args_of(&config);
        assert!(
            private
                .windows(2)
                .any(|w| w[0] == "--tmpfs" && w[1] == "/tmp")
        );
        config.tmp = Some("/tmp/sandbox/tmp".into());
        let shared = args_of(&config);
        assert!(
            !shared
                .windows(2)
                .any(|w| w[0] == "--tmpfs" && w[1] == "/tmp")
        );
        assert!(
            shared
                .windows(3)
                .any(|w| w[0] == "--bind" && w[1] == "/tmp/sandbox/tmp" && w[2] == "/tmp")
        );
    }
}
