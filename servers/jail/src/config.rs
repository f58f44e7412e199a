//! How a jail is built: [`JailConfig`], its host layout and its bwrap arguments.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
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

    /// Host directory of the empty file and directory bound over masked paths.
    fn mask_dir(&self) -> PathBuf {
        self.root.join("mask")
    }

    /// The read-only binds of the system, then the masks over what they must not show.
    fn system_binds(&self, push: &mut impl FnMut(&[&dyn AsRef<OsStr>])) {
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
        let mask = self.mask_dir();
        let (empty_file, empty_dir) = (mask.join("file"), mask.join("dir"));
        for (inside, is_dir) in masks(&bound, &secrets) {
            let source = if is_dir { &empty_dir } else { &empty_file };
            push(&[&"--ro-bind", source, &inside]);
        }
    }

    /// The `bwrap` arguments that precede the jailed command; `seccomp_fd` is the descriptor
    /// bwrap reads the filter from.
    pub(crate) fn bwrap_args(&self, seccomp_fd: libc::c_int) -> Vec<OsString> {
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
        if let Some(size) = self.limits.tmp_bytes {
            push(&[&"--size", &size.to_string()]);
        }
        push(&[&"--tmpfs", &"/tmp"]);
        // A private, writable /root as in E2B's sandboxes (code that expects root's home, a
        // context created there), bounded like /tmp. The host's /root is never bound.
        if let Some(size) = self.limits.tmp_bytes {
            push(&[&"--size", &size.to_string()]);
        }
        push(&[&"--tmpfs", &"/root"]);
        self.system_binds(&mut push);
        let etc = self.root.join("etc");
        push(&[&"--ro-bind", &etc.join("passwd"), &"/etc/passwd"]);
        push(&[&"--ro-bind", &etc.join("group"), &"/etc/group"]);
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
        push(&[&"--seccomp", &seccomp_fd.to_string()]);
        push(&[&"--chdir", &HOME, &"--clearenv"]);
        for (key, value) in &self.env {
            push(&[&"--setenv", key, value]);
        }
        push(&[&"--"]);
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
        let mask = self.mask_dir();
        // The parent first: a recursive create would give it the read-only mode too, and
        // without root nothing could then be made inside it.
        mkdir(&mask, 0o755)?;
        mkdir(&mask.join("dir"), 0o555)?;
        let empty = mask.join("file");
        // Made once: it is read-only afterwards, which without root also stops a rewrite.
        if !empty.exists() {
            std::fs::write(&empty, "").map_err(|e| Error::io("write", &empty, e))?;
            std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(0o444))
                .map_err(|e| Error::io("chmod", &empty, e))?;
        }
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_is_off_unless_allowed() {
        let mut config = JailConfig::new("/tmp/x");
        let args = config.bwrap_args(3);
        assert!(args.iter().any(|a| a == "--unshare-all"));
        assert!(!args.iter().any(|a| a == "--share-net"));
        config.allow_network = true;
        assert!(config.bwrap_args(3).iter().any(|a| a == "--share-net"));
    }

    #[test]
    fn read_only_root_comes_after_every_mount() {
        let mut config = JailConfig::new("/tmp/x");
        config.binds.push(Bind {
            source: "/etc/hostname".into(),
            target: "/tmp/hostname".into(),
            writable: false,
        });
        let args = config.bwrap_args(3);
        let position = |flag: &str| args.iter().rposition(|a| a == flag).unwrap();
        let remount = args.iter().position(|a| a == "--remount-ro").unwrap();
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
        assert_eq!(args.last().unwrap(), "--");
    }

    #[test]
    fn sensitive_paths_are_never_bound() {
        let mut config = JailConfig::new("/tmp/x");
        config.system_paths.push("/etc/shadow".into());
        config.system_paths.push("/etc/ssh".into());
        let args = config.bwrap_args(3);
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
            assert!(binds.contains(&("/tmp/x/mask/dir".into(), "/etc/ssl/private".into())));
        }
    }
}
