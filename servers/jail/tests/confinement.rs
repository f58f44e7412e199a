//! What a program inside a jail can and cannot do, tried from inside.
//!
//! Run as root (as CI does) these also cover the leased host uid and the home quota.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use mcpgym_jail::{Jail, JailConfig, UidLease, UidPool, running_as_root};
use tokio::io::AsyncReadExt;

/// A jail root under the temp directory, removed (and unmounted) on drop, with the host uid
/// it runs as when we are root.
struct Root {
    config: JailConfig,
    _lease: Option<UidLease>,
}

impl Root {
    fn new() -> Self {
        let path = std::env::temp_dir().join(format!(
            "mcpgym-jail-test.{}",
            uuid::Uuid::new_v4().simple()
        ));
        let mut config = JailConfig::new(&path);
        let lease = running_as_root().then(|| {
            UidPool {
                lock_dir: std::env::temp_dir().join("mcpgym-jail-test-uids"),
                ..UidPool::default()
            }
            .lease()
            .unwrap()
        });
        config.run_as = lease.as_ref().map(UidLease::user);
        Root {
            config,
            _lease: lease,
        }
    }

    /// Runs a shell script in the jail; its exit code, stdout and stderr.
    async fn sh(&self, script: &str) -> (Option<i32>, String, String) {
        let command: Vec<OsString> = ["/bin/sh", "-c", script].map(OsString::from).to_vec();
        let mut jail = Jail::spawn_piped(&self.config, &command).await.unwrap();
        let (mut out, mut err) = jail.take_output().unwrap();
        let (mut stdout, mut stderr) = (String::new(), String::new());
        let (a, b) = tokio::join!(
            out.read_to_string(&mut stdout),
            err.read_to_string(&mut stderr)
        );
        a.unwrap();
        b.unwrap();
        let status = jail.wait().await.unwrap();
        (status.code(), stdout, stderr)
    }

    /// Runs Python code in the jail and returns its stdout.
    async fn python(&self, code: &str) -> String {
        let script = format!("python3 -c '{}'", code.replace('\'', r"'\''"));
        let (status, stdout, stderr) = self.sh(&script).await;
        assert_eq!(status, Some(0), "{stdout}\n{stderr}");
        stdout.trim().to_owned()
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        mcpgym_jail::remove_root(&self.config.root).unwrap();
    }
}

fn status_field<'a>(status: &'a str, name: &str) -> &'a str {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {name} in {status}"))
}

#[tokio::test]
async fn no_capability_no_new_privileges_and_a_seccomp_filter() {
    let root = Root::new();
    let (code, status, stderr) = root.sh("cat /proc/self/status").await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(status_field(&status, "CapEff"), "0000000000000000");
    assert_eq!(status_field(&status, "CapPrm"), "0000000000000000");
    assert_eq!(status_field(&status, "NoNewPrivs"), "1");
    assert_eq!(status_field(&status, "Seccomp"), "2");
    assert_eq!(
        status_field(&status, "Uid").split_whitespace().next(),
        Some("1000")
    );
    if running_as_root() {
        // The host sees the leased uid, not root.
        use std::os::unix::fs::MetadataExt;
        let (code, _, stderr) = root.sh("touch /home/user/mine").await;
        assert_eq!(code, Some(0), "{stderr}");
        let owner = std::fs::metadata(root.config.home_dir().join("mine"))
            .unwrap()
            .uid();
        assert_eq!(owner, root.config.run_as.unwrap().uid);
    }
}

#[tokio::test]
async fn sockets_are_allowed_by_family_and_io_uring_and_the_ldt_are_denied() {
    let root = Root::new();
    let code = r#"
import ctypes, errno, json, socket
libc = ctypes.CDLL(None, use_errno=True)
def family(number, kind):
    try:
        socket.socket(number, kind).close()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def call(*args):
    r = libc.syscall(*args)
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
out = {}
out["unix"] = family(socket.AF_UNIX, socket.SOCK_STREAM)
out["inet"] = family(socket.AF_INET, socket.SOCK_STREAM)
out["inet6"] = family(socket.AF_INET6, socket.SOCK_DGRAM)
out["netlink"] = family(socket.AF_NETLINK, socket.SOCK_RAW)
out["vsock"] = family(40, socket.SOCK_STREAM)
out["packet"] = family(17, socket.SOCK_RAW)
out["alg"] = family(38, socket.SOCK_SEQPACKET)
out["bluetooth"] = family(31, socket.SOCK_STREAM)
try:
    socket.socketpair(40, socket.SOCK_STREAM)
    out["vsock_pair"] = "ok"
except OSError as e:
    out["vsock_pair"] = errno.errorcode.get(e.errno, str(e.errno))
out["unix_pair"] = "ok" if socket.socketpair() else "no"
out["io_uring_setup"] = call(425, 4, ctypes.create_string_buffer(120))
out["io_uring_register"] = call(427, 0, 0, 0, 0)
out["modify_ldt"] = call(154, 0, ctypes.create_string_buffer(16), 16)
out["clock_settime"] = call(227, 0, ctypes.create_string_buffer(16))
print(json.dumps(out))
"#;
    let out: serde_json::Value = serde_json::from_str(&root.python(code).await).unwrap();
    for allowed in ["unix", "inet", "inet6", "netlink", "unix_pair"] {
        assert_eq!(out[allowed], "ok", "{allowed}: {out}");
    }
    for denied in [
        "vsock",
        "packet",
        "alg",
        "bluetooth",
        "vsock_pair",
        "io_uring_setup",
        "io_uring_register",
        "modify_ldt",
        "clock_settime",
    ] {
        assert_eq!(out[denied], "EPERM", "{denied}: {out}");
    }
}

#[tokio::test]
async fn mounts_namespaces_and_other_processes_are_denied() {
    let root = Root::new();
    // errno of each attempt, made with raw system calls.
    let code = r#"
import ctypes, errno, fcntl, json, os, termios
libc = ctypes.CDLL(None, use_errno=True)
def call(f, *args):
    r = f(*args)
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
out = {}
out["mount"] = call(libc.mount, b"none", b"/tmp", b"tmpfs", 0, None)
out["umount"] = call(libc.umount2, b"/proc", 2)
out["unshare_user"] = call(libc.unshare, 0x10000000)
out["unshare_ns"] = call(libc.unshare, 0x00020000)
fd = os.open("/proc/self/ns/net", os.O_RDONLY)
out["setns"] = call(libc.setns, fd, 0)
out["ptrace"] = call(libc.ptrace, 0, 0, None, None)
out["keyctl"] = call(libc.syscall, 250, 0, 0, 0, 0)
out["bpf"] = call(libc.syscall, 321, 0, 0, 0)
out["pivot_root"] = call(libc.syscall, 155, b"/tmp", b"/tmp")
try:
    fcntl.ioctl(os.open("/dev/null", os.O_RDONLY), termios.TIOCSTI, b"x")
    out["tiocsti"] = "ok"
except OSError as e:
    out["tiocsti"] = errno.errorcode[e.errno]
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
out["fork"] = "ok"
print(json.dumps(out))
"#;
    let out: serde_json::Value = serde_json::from_str(&root.python(code).await).unwrap();
    for (call, result) in out.as_object().unwrap() {
        let expected = if call == "fork" { "ok" } else { "EPERM" };
        assert_eq!(result, expected, "{call}: {out}");
    }
    // The tools an agent would use.
    for attempt in [
        "unshare -r true",
        "unshare -m true",
        "umount -l /proc",
        "mount -t tmpfs none /tmp",
        "nsenter --net=/proc/1/ns/net true",
    ] {
        let (status, stdout, stderr) = root.sh(attempt).await;
        assert_ne!(status, Some(0), "{attempt}: {stdout} {stderr}");
    }
}

#[tokio::test]
async fn the_hosts_processes_and_environment_are_out_of_sight() {
    let root = Root::new();
    let (_, seen, _) = root
        .sh("cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'; ls /proc | grep -c '^[0-9]'")
        .await;
    // The jail's environment is its own: nothing of this process's (which cargo fills with
    // CARGO_* variables) nor the host's init.
    assert!(!seen.contains("CARGO"), "{seen}");
    assert!(seen.contains("HOME=/home/user"), "{seen}");
    // Only the jail's few processes.
    let count: u32 = seen.lines().last().unwrap().trim().parse().unwrap();
    assert!(count < 10, "{seen}");
}

#[tokio::test]
async fn only_the_home_and_tmp_are_writable() {
    let root = Root::new();
    let code = r#"
import json
out = {}
for path in ["/x", "/usr/x", "/etc/x", "/dev/x", "/home/x", "/home/user/x", "/tmp/x", "/dev/shm/x"]:
    try:
        open(path, "w").write("x")
        out[path] = "ok"
    except OSError as e:
        out[path] = type(e).__name__
print(json.dumps(out))
"#;
    let out: serde_json::Value = serde_json::from_str(&root.python(code).await).unwrap();
    for (path, result) in out.as_object().unwrap() {
        let writable = ["/home/user/x", "/tmp/x", "/dev/shm/x"].contains(&path.as_str());
        assert_eq!(result == "ok", writable, "{path}: {out}");
    }
}

#[tokio::test]
async fn full_file_systems_say_enospc_and_the_host_stays_within_the_limit() {
    let mut root = Root::new();
    root.config.limits.tmp_bytes = Some(1 << 20);
    root.config.limits.shm_bytes = Some(1 << 20);
    root.config.limits.home_bytes = Some(2 << 20);
    let mut dirs = vec!["/tmp", "/dev/shm"];
    if running_as_root() {
        dirs.push("/home/user");
    }
    for dir in dirs {
        let (status, _, stderr) = root
            .sh(&format!("dd if=/dev/zero of={dir}/fill bs=64k count=100"))
            .await;
        assert_ne!(status, Some(0), "{dir}");
        assert!(
            stderr.contains("No space left on device"),
            "{dir}: {stderr}"
        );
    }
    if running_as_root() {
        let written = std::fs::metadata(root.config.home_dir().join("fill"))
            .unwrap()
            .len();
        assert!(written <= 2 << 20, "{written}");
        assert!(mcpgym_jail::is_mount_point(&root.config.home_dir()));
    }
}

#[tokio::test]
async fn the_servers_executable_and_masked_paths_read_empty() {
    let mut root = Root::new();
    let exe = mcpgym_jail::own_executable().unwrap().to_owned();
    // Bind the folder holding this executable, as /usr holds an installed server.
    let folder = exe.parent().unwrap().to_owned();
    root.config.system_paths.push(folder.clone());
    let neighbour = std::fs::read_dir(&folder)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_file() && *p != exe && std::fs::metadata(p).unwrap().len() > 0)
        .unwrap();
    let masked: PathBuf = neighbour.clone();
    root.config.masked_paths.push(masked.clone());
    let size = |p: &Path| format!("wc -c < '{}'", p.display());
    let script = format!(
        "{}; {}; ls /etc/shadow /etc/ssh 2>&1 | head -2",
        size(&exe),
        size(&masked)
    );
    let (_, stdout, stderr) = root.sh(&script).await;
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.get(..2), Some(&["0", "0"][..]), "{stdout}\n{stderr}");
    assert!(!stdout.contains("sshd_config"), "{stdout}");
}

/// Takes every process and inotify instance it can (the end-to-end battery's script too).
const HOG: &str = include_str!("../../../tests/data/hog.py");

#[tokio::test]
async fn one_jail_at_its_process_and_inotify_limits_leaves_its_neighbours_room() {
    let mut hog = Root::new();
    hog.config.limits.max_processes = Some(64);
    let script = format!("{HOG}\ntime.sleep(60)\n");
    let command: Vec<OsString> = ["/usr/bin/python3", "-c", &script]
        .map(OsString::from)
        .to_vec();
    let mut jail = Jail::spawn_piped(&hog.config, &command).await.unwrap();
    let (mut out, _err) = jail.take_output().unwrap();
    let mut line = Vec::new();
    while !line.ends_with(b"\n") {
        let mut byte = [0u8];
        assert_eq!(out.read(&mut byte).await.unwrap(), 1, "the hog ended early");
        line.push(byte[0]);
    }
    let counts: Vec<u64> = String::from_utf8(line)
        .unwrap()
        .split_whitespace()
        .filter_map(|word| word.parse().ok())
        .collect();
    // Each limit held: a few tasks of the 64 are python's and the shell's own.
    assert!((50..64).contains(&counts[0]), "{counts:?}");
    if running_as_root() {
        // A host uid of its own: the host's per-user limit, counted for this jail alone.
        assert!(counts[1] <= 128, "{counts:?}");
    } else {
        assert_eq!(counts[1], 32, "{counts:?}");
    }
    // The neighbour, meanwhile, forks and watches as it pleases.
    let neighbour = Root::new();
    let fine = neighbour
        .python(
            "import ctypes, os\n\
             libc = ctypes.CDLL(None)\n\
             assert all(libc.inotify_init() >= 0 for _ in range(8))\n\
             pids = [os.fork() or os._exit(0) for _ in range(16)]\n\
             [os.waitpid(p, 0) for p in pids]\n\
             print(\"fine\")",
        )
        .await;
    assert_eq!(fine, "fine");
    jail.kill().await;
}

#[tokio::test]
async fn a_cpu_quota_caps_the_jail_or_refuses_where_no_cgroup_can() {
    let mut root = Root::new();
    root.config.limits.cpu_millicores = Some(250);
    let spin = "import os, time\nend = time.time() + 1\nwhile time.time() < end: pass\nt = os.times()\nprint(t.user + t.system)";
    let command: Vec<OsString> = ["/usr/bin/python3", "-c", spin]
        .map(OsString::from)
        .to_vec();
    match Jail::spawn_piped(&root.config, &command).await {
        Ok(mut jail) => {
            assert!(jail.has_cgroup());
            let (mut out, _err) = jail.take_output().unwrap();
            let mut stdout = String::new();
            out.read_to_string(&mut stdout).await.unwrap();
            jail.wait().await.unwrap();
            let used: f64 = stdout.trim().parse().unwrap_or_else(|_| panic!("{stdout}"));
            // A quarter of a core over one second of spinning, with room for the start.
            assert!(
                used < 0.5,
                "the jail used {used} s of CPU in 1 s under a 0.25-core quota"
            );
        }
        Err(error) => {
            assert!(
                matches!(error, mcpgym_jail::Error::CpuQuotaUnenforceable),
                "{error}"
            );
            assert!(error.to_string().contains("--cpu-quota"), "{error}");
        }
    }
}
