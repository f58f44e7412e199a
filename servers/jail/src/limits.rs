//! Resource limits applied in the forked child just before `bwrap` is executed.
//!
//! Everything here runs between `fork` and `exec` of a multi-threaded process, so the closure
//! only makes raw system calls on data prepared beforehand: no allocation, no locks.

use std::ffi::CString;
use std::io;

use crate::HostUser;

/// Per-sandbox resource limits. `None` leaves a limit as inherited.
///
/// The rlimits apply to each process of the jail separately (address space, CPU time, file
/// size), except `max_processes`, which the kernel counts per user namespace and uid: each
/// jail gets its own host uid from a [`UidPool`](super::UidPool) when we run as root, and a
/// user namespace of its own otherwise (made before the rlimits are set), so the count is the
/// jail's.
/// When cgroups are usable, `memory_bytes` and `max_processes` also bound the jail as a
/// whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Address space of each process (`RLIMIT_AS`) and, with cgroups, memory of the whole jail.
    pub memory_bytes: Option<u64>,
    /// Processes and threads (`RLIMIT_NPROC`, counted per jail) and, with cgroups, `pids.max`.
    pub max_processes: Option<u64>,
    /// CPU seconds of each process over its lifetime (`RLIMIT_CPU`): a backstop for code that
    /// escapes the execution timeout, not a per-execution budget.
    pub cpu_seconds: Option<u64>,
    /// Largest file a process may write (`RLIMIT_FSIZE`).
    pub file_size_bytes: Option<u64>,
    /// Open file descriptors per process (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
    /// Size of the private `/tmp` (a tmpfs, whose pages otherwise only count against memory).
    pub tmp_bytes: Option<u64>,
    /// Size of the home. When the server runs as root the host directory of the home is a
    /// tmpfs of this size (the host still sees its files; a full home gives `ENOSPC` inside);
    /// without root it cannot be mounted, and the home is bounded only per file, by
    /// `file_size_bytes`.
    pub home_bytes: Option<u64>,
    /// Size of `/dev/shm` (a tmpfs; the rest of `/dev` is read-only).
    pub shm_bytes: Option<u64>,
    /// Leave `RLIMIT_AS` unset, so `memory_bytes` bounds the jail through its cgroup only:
    /// for V8 (the JavaScript kernel), which reserves tens of GiB of address space it never
    /// touches and aborts at start under any smaller limit. A jail asking for this with a
    /// memory limit refuses to start where cgroups cannot enforce it.
    pub unlimited_address_space: bool,
    /// inotify instances the whole jail may hold (per jail only where it gets a user
    /// namespace of its own, made without root; as root each jail's own host uid has the
    /// host's per-uid limit).
    pub inotify_instances: Option<u64>,
    /// inotify watches the whole jail may hold (like `inotify_instances`).
    pub inotify_watches: Option<u64>,
    /// Most CPU the whole jail may use, in thousandths of a core (1500: one and a half
    /// cores). Needs a cgroup with the CPU controller: a jail asking for it refuses to start
    /// where none is usable. Without it, jails still share the CPU by weight, one weight
    /// per jail, wherever that controller is usable.
    pub cpu_millicores: Option<u64>,
}

impl Default for Limits {
    /// Generous defaults for a data-science kernel: 2 GiB, 256 tasks, one CPU hour, 1 GiB files,
    /// 1024 descriptors, 512 MiB of `/tmp`, a 1 GiB home, 64 MiB of `/dev/shm`, 32 inotify
    /// instances with 16384 watches (a quarter of the host's usual 128 instances per user).
    fn default() -> Self {
        Limits {
            memory_bytes: Some(2 << 30),
            max_processes: Some(256),
            cpu_seconds: Some(3600),
            file_size_bytes: Some(1 << 30),
            open_files: Some(1024),
            tmp_bytes: Some(512 << 20),
            home_bytes: Some(1 << 30),
            shm_bytes: Some(64 << 20),
            unlimited_address_space: false,
            inotify_instances: Some(32),
            inotify_watches: Some(16384),
            cpu_millicores: None,
        }
    }
}

impl Limits {
    /// The `(resource, value)` pairs for `setrlimit`.
    fn rlimits(&self) -> Vec<(libc::__rlimit_resource_t, u64)> {
        [
            (
                libc::RLIMIT_AS,
                self.memory_bytes.filter(|_| !self.unlimited_address_space),
            ),
            (libc::RLIMIT_NPROC, self.max_processes),
            (libc::RLIMIT_CPU, self.cpu_seconds),
            (libc::RLIMIT_FSIZE, self.file_size_bytes),
            (libc::RLIMIT_NOFILE, self.open_files),
        ]
        .into_iter()
        .filter_map(|(resource, value)| value.map(|v| (resource, v)))
        .collect()
    }
}

/// What the child does before `exec`: everything resolved up front.
pub(super) struct PreExec {
    rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    cgroup_procs: Vec<CString>,
    run_as: Option<HostUser>,
    /// Descriptors bwrap reads (its arguments, the seccomp filter, files it copies in):
    /// inherited across `exec` by this child only.
    setup_fds: Vec<libc::c_int>,
    /// Files written right after entering the jail's own user namespace, when it gets one.
    own_namespace: Option<OwnNamespace>,
}

impl PreExec {
    /// Without root (`run_as` is `None` and we are not root), the child first enters a user
    /// namespace of the jail's own, mapping our uid and gid to themselves, before setting
    /// any rlimit.
    ///
    /// Why: the kernel counts processes and inotify instances per user namespace and uid,
    /// each level also charging the namespace's creator one level up, and checks a level's
    /// count against the rlimit the namespace's creator had. Were bwrap's namespace made
    /// straight from the server's, every jail would charge the same (server namespace, uid)
    /// count and check it against its own `RLIMIT_NPROC`: one jail at its limit would stop
    /// every other jail from forking. With a namespace per jail made before the rlimits,
    /// each jail's count is its own, checked against its own limits, and the shared level
    /// above only against the server's. The namespace's inotify limits are set here too,
    /// so that one jail cannot take the host's per-user instances from every other.
    pub(super) fn new(
        limits: &Limits,
        cgroup_procs: Vec<CString>,
        run_as: Option<HostUser>,
        setup_fds: Vec<libc::c_int>,
    ) -> Self {
        let own_namespace = (run_as.is_none() && !crate::running_as_root()).then(|| {
            // SAFETY: geteuid and getegid cannot fail.
            let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
            let file = |path: &std::ffi::CStr, text: String| (path.to_owned(), text.into_bytes());
            let maps = vec![
                file(c"/proc/self/setgroups", "deny".into()),
                file(c"/proc/self/uid_map", format!("{uid} {uid} 1")),
                file(c"/proc/self/gid_map", format!("{gid} {gid} 1")),
            ];
            let limits = [
                (
                    c"/proc/sys/user/max_inotify_instances",
                    limits.inotify_instances,
                ),
                (
                    c"/proc/sys/user/max_inotify_watches",
                    limits.inotify_watches,
                ),
            ]
            .into_iter()
            .filter_map(|(path, value)| Some(file(path, value?.to_string())))
            .collect();
            OwnNamespace { maps, limits }
        });
        PreExec {
            rlimits: limits.rlimits(),
            cgroup_procs,
            run_as,
            setup_fds,
            own_namespace,
        }
    }

    /// Runs in the child after `fork`. Only async-signal-safe calls.
    pub(super) fn apply(&self) -> io::Result<()> {
        for &fd in &self.setup_fds {
            // SAFETY: fcntl on a descriptor the parent keeps open until the child has executed.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        // Join the cgroups while still privileged; "0" means the writing process itself.
        for procs in &self.cgroup_procs {
            write_file(procs, b"0")?;
        }
        if let Some(namespace) = &self.own_namespace {
            // SAFETY: unshare(2) with a namespace flag only; the child has a single thread.
            if unsafe { libc::unshare(libc::CLONE_NEWUSER) } != 0 {
                return Err(io::Error::last_os_error());
            }
            for (path, contents) in &namespace.maps {
                write_file(path, contents)?;
            }
            // Best effort: a container may mount /proc/sys read-only, and then the host's
            // per-user inotify limits are the only ones.
            for (path, contents) in &namespace.limits {
                let _ = write_file(path, contents);
            }
        }
        for &(resource, value) in &self.rlimits {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            // SAFETY: plain system call on a stack value.
            if unsafe { libc::setrlimit(resource, &limit) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(user) = self.run_as {
            // SAFETY: plain system calls; the order (groups, gid, uid) is the only one that works.
            unsafe {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(user.gid) != 0
                    || libc::setuid(user.uid) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
}

/// The files that make a jail's own user namespace.
struct OwnNamespace {
    /// `setgroups`, `uid_map` and `gid_map`, which must all be written.
    maps: Vec<(CString, Vec<u8>)>,
    /// The namespace's inotify limits.
    limits: Vec<(CString, Vec<u8>)>,
}

/// Writes `contents` to the existing file at `path` in one `write`. Async-signal-safe.
fn write_file(path: &CString, contents: &[u8]) -> io::Result<()> {
    // SAFETY: the path is a valid C string; the descriptor is closed right after.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, contents.as_ptr().cast(), contents.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        if written != contents.len() as isize {
            return Err(error);
        }
    }
    Ok(())
}
