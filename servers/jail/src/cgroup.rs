//! Optional cgroups for a jail: a whole-jail bound on tasks and memory, and a reliable kill.
//!
//! Best effort by design. Where the hierarchy is not writable (no root, a read-only
//! `/sys/fs/cgroup`, cgroup v2 without the controllers delegated to us) the jail runs with
//! rlimits only. We nest under the cgroup this process is already in, so limits set on us by
//! a supervisor still hold. On cgroup v2, [`use_delegated_cgroup`] first makes that cgroup
//! able to hold jail cgroups where it is ours to change (root, systemd's `Delegate=yes`, a
//! container's own writable hierarchy). The standard mount layout
//! (`/sys/fs/cgroup/<controller>` for v1, `/sys/fs/cgroup` for v2) is assumed rather than
//! read from `/proc/self/mountinfo`.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use crate::Limits;

const ROOT: &str = "/sys/fs/cgroup";
/// The scheduler period a CPU quota is spread over, in microseconds (the kernel's default).
const CPU_PERIOD_US: u64 = 100_000;
/// A jail's CPU weight (cgroup v2; the default, equal for every jail).
const CPU_WEIGHT: u64 = 100;
/// A jail's CPU shares (cgroup v1; the default, equal for every jail).
const CPU_SHARES: u64 = 1024;
/// Removal attempts 20 ms apart: about 5 s for the killed processes to be reaped on a busy
/// machine.
const ATTEMPTS: u32 = 250;

/// The cgroup directories of one jail (one per v1 controller, or a single v2 directory).
#[derive(Debug)]
pub(crate) struct Cgroup {
    dirs: Vec<PathBuf>,
    /// Whether one of `dirs` is a CPU controller's.
    cpu: bool,
}

impl Cgroup {
    /// Creates `mcpgym-<name>` (name: `<server pid>-<id>`, so that
    /// [`cleanup_stale`](crate::cleanup_stale) can tell a dead server's) with the limits set, or `None` where cgroups are not usable.
    /// Blocking (file system): call from a blocking context.
    pub(crate) fn create(name: &str, limits: &Limits) -> Option<Cgroup> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let leaf = format!("mcpgym-{name}");
        let mut settings: Vec<(PathBuf, &str, String)> = Vec::new();
        let quota = limits.cpu_millicores.map(|m| m * CPU_PERIOD_US / 1000);
        if Path::new(ROOT).join("cgroup.controllers").exists() {
            let parent = v2_parent(&own)?;
            let delegated = std::fs::read_to_string(parent.join("cgroup.subtree_control")).ok()?;
            let has = |controller| delegated.split_whitespace().any(|c| c == controller);
            let dir = parent.join(&leaf);
            for (controller, file, value) in [
                ("pids", "pids.max", limits.max_processes),
                ("memory", "memory.max", limits.memory_bytes),
            ] {
                if let Some(value) = value {
                    if !has(controller) {
                        tracing::debug!(
                            controller,
                            "cgroup v2 controller not delegated; rlimits only"
                        );
                        return None;
                    }
                    settings.push((dir.clone(), file, value.to_string()));
                }
            }
            // Each jail one weight among its siblings, however many processes it runs.
            if has("cpu") {
                settings.push((dir.clone(), "cpu.weight", CPU_WEIGHT.to_string()));
                if let Some(quota) = quota {
                    settings.push((dir, "cpu.max", format!("{quota} {CPU_PERIOD_US}")));
                }
            }
        } else {
            for (controller, file, value) in [
                ("pids", "pids.max", limits.max_processes),
                ("memory", "memory.limit_in_bytes", limits.memory_bytes),
            ] {
                if let Some(value) = value {
                    let parent = v1_path(&own, controller)?;
                    settings.push((parent.join(&leaf), file, value.to_string()));
                }
            }
            if let Some(parent) = v1_path(&own, "cpu") {
                let dir = parent.join(&leaf);
                settings.push((dir.clone(), "cpu.shares", CPU_SHARES.to_string()));
                if let Some(quota) = quota {
                    settings.push((dir.clone(), "cpu.cfs_period_us", CPU_PERIOD_US.to_string()));
                    settings.push((dir, "cpu.cfs_quota_us", quota.to_string()));
                }
            }
        }
        let cpu = settings.iter().any(|(_, file, _)| file.starts_with("cpu."));
        let mut cgroup = Cgroup {
            dirs: Vec::new(),
            cpu,
        };
        for (dir, file, value) in settings {
            if !cgroup.dirs.contains(&dir) {
                if let Err(error) = std::fs::create_dir(&dir) {
                    tracing::debug!(dir = %dir.display(), %error, "cgroup not writable; rlimits only");
                    cgroup.remove_now();
                    return None;
                }
                cgroup.dirs.push(dir.clone());
            }
            if let Err(error) = std::fs::write(dir.join(file), &value) {
                tracing::debug!(file, %error, "cannot set cgroup limit; rlimits only");
                cgroup.remove_now();
                return None;
            }
        }
        (!cgroup.dirs.is_empty()).then_some(cgroup)
    }

    /// Whether the jail's processes share one CPU weight (and the quota, if any).
    pub(crate) fn has_cpu(&self) -> bool {
        self.cpu
    }

    /// The `cgroup.procs` files the child writes itself into before `exec`.
    pub(crate) fn procs_files(&self) -> Vec<CString> {
        self.dirs
            .iter()
            .filter_map(|dir| CString::new(dir.join("cgroup.procs").as_os_str().as_bytes()).ok())
            .collect()
    }

    /// Kills whatever is left in the cgroup and removes it, retrying while the dying
    /// processes are being reaped. Never fails: a cgroup that refuses to go is logged.
    pub(crate) async fn kill_and_remove(self) {
        for _ in 0..ATTEMPTS {
            let dirs = self.dirs.clone();
            let done = tokio::task::spawn_blocking(move || kill_and_rmdir(&dirs))
                .await
                .unwrap_or(false);
            if done {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tracing::warn!(dirs = ?self.dirs, "jail cgroup still busy; left behind");
    }

    /// [`Cgroup::kill_and_remove`] for a plain thread.
    pub(crate) fn kill_and_remove_blocking(self) {
        for _ in 0..ATTEMPTS {
            if kill_and_rmdir(&self.dirs) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tracing::warn!(dirs = ?self.dirs, "jail cgroup still busy; left behind");
    }

    /// Removes directories right away, for a cgroup that never held a process.
    fn remove_now(&self) {
        for dir in &self.dirs {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The directories jail cgroups are made in (one per v1 controller used, or the v2 one), as
/// seen from this process: a server's children find its jails' cgroups there too.
pub fn parents() -> Vec<PathBuf> {
    let Ok(own) = std::fs::read_to_string("/proc/self/cgroup") else {
        return Vec::new();
    };
    if Path::new(ROOT).join("cgroup.controllers").exists() {
        v2_parent(&own).into_iter().collect()
    } else {
        ["pids", "memory", "cpu"]
            .into_iter()
            .filter_map(|controller| v1_path(&own, controller))
            .collect()
    }
}

/// Kills what is left in `dirs` and removes them, retrying for a moment while the killed
/// processes are reaped. Returns whether they are gone.
pub(crate) fn kill_and_remove_dirs(dirs: &[PathBuf]) -> bool {
    for _ in 0..50 {
        if kill_and_rmdir(dirs) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// One pass: SIGKILL every listed process, then try to remove each directory.
/// Returns whether all directories are gone.
fn kill_and_rmdir(dirs: &[PathBuf]) -> bool {
    let mut all_gone = true;
    for dir in dirs {
        if !dir.exists() {
            continue;
        }
        if let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) {
            for pid in procs
                .lines()
                .filter_map(|l| l.trim().parse::<libc::pid_t>().ok())
            {
                // SAFETY: plain system call; a pid that vanished meanwhile gives ESRCH.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        if std::fs::remove_dir(dir).is_err() {
            all_gone = false;
        }
    }
    all_gone
}

/// Our v1 cgroup directory for `controller`, from `/proc/self/cgroup`.
fn v1_path(own: &str, controller: &str) -> Option<PathBuf> {
    own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers.split(',').any(|c| c == controller).then(|| {
            Path::new(ROOT)
                .join(controller)
                .join(path.trim_start_matches('/'))
        })
    })
}

/// The cgroup v2 directory [`use_delegated_cgroup`] prepared for jail cgroups.
static DELEGATED: OnceLock<PathBuf> = OnceLock::new();

/// The v2 directory jail cgroups are made in: the one [`use_delegated_cgroup`] prepared, or
/// our own.
fn v2_parent(own: &str) -> Option<PathBuf> {
    DELEGATED.get().cloned().or_else(|| v2_path(own))
}

/// The controllers a jail's cgroup v2 uses, required ones first.
const V2_CONTROLLERS: [&str; 3] = ["pids", "memory", "cpu"];

/// On cgroup v2, makes the cgroup this process started in able to hold jail cgroups with
/// the pids, memory and (where offered) cpu controllers, and returns it; `None` where that is
/// not ours to do (cgroup v1, a read-only or foreign hierarchy, a controller not offered).
///
/// Why: cgroup v2 enables a controller for a cgroup's children only while the cgroup itself
/// holds no process, and a service given a delegated cgroup (systemd's `Delegate=yes`, a
/// container's own hierarchy) starts inside it. So every process there moves into a leaf
/// `mcpgym-<pid>-server` first, then the controllers are enabled, and jails become its
/// siblings. Call it once at start-up, before any jail; blocking (file system).
pub fn use_delegated_cgroup() -> Option<PathBuf> {
    if !Path::new(ROOT).join("cgroup.controllers").exists() {
        return None;
    }
    let own = v2_path(&std::fs::read_to_string("/proc/self/cgroup").ok()?)?;
    let prepared = delegate(&own, std::process::id())
        .inspect_err(|error| {
            tracing::info!(cgroup = %own.display(), %error, "cgroup not delegated to us; jails get rlimits only");
        })
        .ok()?;
    Some(DELEGATED.get_or_init(|| prepared).clone())
}

/// The work of [`use_delegated_cgroup`] on the cgroup directory `dir`, for the server `pid`.
fn delegate(dir: &Path, pid: u32) -> std::io::Result<PathBuf> {
    let read = |file: &str| std::fs::read_to_string(dir.join(file));
    let enabled = read("cgroup.subtree_control")?;
    let is_enabled = |c: &str| enabled.split_whitespace().any(|e| e == c);
    if is_enabled("pids") && is_enabled("memory") {
        return Ok(dir.to_owned());
    }
    let offered = read("cgroup.controllers")?;
    let wanted: Vec<&str> = V2_CONTROLLERS
        .into_iter()
        .filter(|c| offered.split_whitespace().any(|o| o == *c))
        .collect();
    if !wanted.starts_with(&["pids", "memory"]) {
        return Err(std::io::Error::other(format!(
            "the controllers offered are {:?}, without pids and memory",
            offered.trim()
        )));
    }
    let leaf = dir.join(format!("mcpgym-{pid}-server"));
    match std::fs::create_dir(&leaf) {
        Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => return Err(error),
        _ => {}
    }
    // Every process of the cgroup, ours and any other (a wrapper shell, a container's init).
    for process in read("cgroup.procs")?.split_whitespace() {
        std::fs::write(leaf.join("cgroup.procs"), process)?;
    }
    let enable: Vec<String> = wanted.iter().map(|c| format!("+{c}")).collect();
    std::fs::write(dir.join("cgroup.subtree_control"), enable.join(" "))?;
    Ok(dir.to_owned())
}

/// Our v2 cgroup directory, from the `0::` line of `/proc/self/cgroup`.
fn v2_path(own: &str) -> Option<PathBuf> {
    own.lines()
        .find_map(|line| line.strip_prefix("0::"))
        .map(|path| Path::new(ROOT).join(path.trim_start_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory shaped like a cgroup v2 one (the files the kernel would show), for the
    /// one step this machine's cgroups cannot show: what a delegated cgroup is made into.
    fn fake_cgroup(offered: &str, procs: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcpgym-fake-cgroup-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cgroup.controllers"), offered).unwrap();
        std::fs::write(dir.join("cgroup.subtree_control"), "").unwrap();
        std::fs::write(dir.join("cgroup.procs"), procs).unwrap();
        dir
    }

    #[test]
    fn a_delegated_cgroup_moves_its_processes_to_a_leaf_and_enables_the_controllers() {
        let dir = fake_cgroup("cpuset cpu io memory pids\n", "41\n42\n");
        assert_eq!(delegate(&dir, 42).unwrap(), dir);
        let leaf = dir.join("mcpgym-42-server");
        // The kernel moves each pid written; a plain file keeps the last.
        assert_eq!(
            std::fs::read_to_string(leaf.join("cgroup.procs")).unwrap(),
            "42"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap(),
            "+pids +memory +cpu"
        );
        std::fs::remove_dir_all(&dir).unwrap();

        let without_memory = fake_cgroup("cpu pids\n", "42\n");
        let error = delegate(&without_memory, 42).unwrap_err();
        assert!(
            error.to_string().contains("without pids and memory"),
            "{error}"
        );
        assert!(!without_memory.join("mcpgym-42-server").exists());
        std::fs::remove_dir_all(&without_memory).unwrap();
    }

    #[test]
    fn finds_own_cgroup_paths() {
        let own = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n0::/x/y\n";
        assert_eq!(
            v1_path(own, "pids"),
            Some(PathBuf::from("/sys/fs/cgroup/pids/"))
        );
        assert_eq!(
            v1_path(own, "memory"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/process_api/abc"))
        );
        assert_eq!(v1_path(own, "cpu"), None);
        assert_eq!(v2_path(own), Some(PathBuf::from("/sys/fs/cgroup/x/y")));
    }
}
