//! The container image's steps, run in a chroot: a minimal Debian root made with debootstrap
//! gets the image's packages and user from `manifests/container/install`, as the Containerfile
//! does, then the binary and the sandboxes' runtime, and runs the server as the image does: as
//! uid 10001, PID 1 of its own PID namespace, entered with `pivot_root` as a container runtime
//! enters it, under `manifests/container/seccomp.json` applied by libseccomp. Also checked: the
//! seccomp profile's format, and that the AppArmor profile compiles.
//!
//! No image is built here: the base images cannot be pulled where the tests run. The root is
//! cached under `target/container/`, keyed by the package list and the install script, so only
//! the first run pays for debootstrap and the packages.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{BIN, ControlClient, NewEpisode, http};

/// The package groups the image's runtime stage installs (see the Containerfile).
const IMAGE_GROUPS: &[&str] = &["core", "desktop"];

/// The jails' additions to the default allowlist: each one bubblewrap cannot do without.
const JAIL_SYSCALLS: &[&str] = &[
    "clone",
    "mount",
    "pivot_root",
    "sethostname",
    "umount2",
    "unshare",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn running_as_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `command`, panicking with its output when it fails.
fn run(command: &mut Command) -> String {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} failed:\n{text}");
    text
}

fn profile() -> Value {
    let path = repo().join("manifests/container/seccomp.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("seccomp.json is JSON")
}

/// Names a rule allows without conditions.
fn allowed(profile: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for rule in profile["syscalls"].as_array().unwrap() {
        if rule["action"] == "SCMP_ACT_ALLOW" && rule.get("args").is_none() {
            for name in rule["names"].as_array().unwrap() {
                names.push(name.as_str().unwrap().to_owned());
            }
        }
    }
    names
}

/// The profile in the OCI runtime spec's format, which containerd reads for Kubernetes'
/// Localhost profiles (ignoring fields it does not know, so a condition on capabilities or
/// the kernel would silently vanish) and which Docker and Podman accept too.
#[test]
fn the_seccomp_profile_is_an_oci_allowlist_with_the_jails_calls() {
    let profile = profile();
    let top = profile.as_object().unwrap();
    for key in top.keys() {
        assert!(
            [
                "defaultAction",
                "defaultErrnoRet",
                "architectures",
                "syscalls"
            ]
            .contains(&&**key),
            "top-level {key:?} is not in the OCI format"
        );
    }
    assert_eq!(profile["defaultAction"], "SCMP_ACT_ERRNO", "an allowlist");
    assert_eq!(
        profile["defaultErrnoRet"], 1,
        "EPERM, as the runtimes' default"
    );
    for arch in profile["architectures"].as_array().unwrap() {
        assert!(arch.as_str().unwrap().starts_with("SCMP_ARCH_"), "{arch}");
    }
    let ops = [
        "SCMP_CMP_NE",
        "SCMP_CMP_LT",
        "SCMP_CMP_LE",
        "SCMP_CMP_EQ",
        "SCMP_CMP_GE",
        "SCMP_CMP_GT",
        "SCMP_CMP_MASKED_EQ",
    ];
    let mut seen = std::collections::HashSet::new();
    for rule in profile["syscalls"].as_array().unwrap() {
        for key in rule.as_object().unwrap().keys() {
            assert!(
                ["names", "action", "errnoRet", "args", "comment"].contains(&&**key),
                "{key:?} in {rule}: not in the OCI format (or ignored by containerd)"
            );
        }
        let action = rule["action"].as_str().unwrap();
        assert!(
            ["SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO"].contains(&action),
            "{rule}"
        );
        assert_eq!(
            rule.get("errnoRet").is_some(),
            action == "SCMP_ACT_ERRNO",
            "{rule}"
        );
        for arg in rule["args"].as_array().into_iter().flatten() {
            assert!(arg["index"].as_u64().unwrap() < 6, "{rule}");
            assert!(arg["value"].is_u64(), "{rule}");
            assert!(ops.contains(&arg["op"].as_str().unwrap()), "{rule}");
        }
        let names = rule["names"].as_array().unwrap();
        assert!(!names.is_empty(), "{rule}");
        for name in names {
            let name = name.as_str().unwrap();
            // A name may come back only under argument conditions (personality).
            assert!(
                seen.insert(name) || rule.get("args").is_some(),
                "{name} twice"
            );
        }
    }
    let allowed = allowed(&profile);
    for name in JAIL_SYSCALLS {
        assert!(allowed.iter().any(|a| a == name), "{name} not allowed");
    }
    // What neither the server nor the jails need stays denied, as in the default.
    for name in [
        "setns",
        "chroot",
        "keyctl",
        "add_key",
        "request_key",
        "bpf",
        "perf_event_open",
        "init_module",
        "finit_module",
        "delete_module",
        "kexec_load",
        "kexec_file_load",
        "open_by_handle_at",
        "reboot",
        "swapon",
        "iopl",
        "ioperm",
        "userfaultfd",
        "fsopen",
        "fsmount",
        "move_mount",
        "open_tree",
        "mount_setattr",
        "settimeofday",
        "clock_settime",
        "acct",
        "quotactl",
        "syslog",
    ] {
        assert!(!seen.contains(name), "{name} is allowed");
    }
}

/// AppArmor 4's parser (Debian's bookworm has 3, which predates the `userns` rule), from
/// Debian's next release with that release's C library, unpacked under target/: the parser
/// runs through that library's loader, installing nothing on the machine.
fn apparmor4_parser() -> Vec<PathBuf> {
    let dir = repo().join("target/container/apparmor-4");
    let root = dir.join("root");
    let loader = root.join("usr/lib64/ld-linux-x86-64.so.2");
    if !loader.exists() {
        let lists = dir.join("lists");
        std::fs::create_dir_all(lists.join("partial")).unwrap();
        let sources = dir.join("sources.list");
        std::fs::write(&sources, "deb http://deb.debian.org/debian trixie main\n").unwrap();
        let apt = |command: &str, args: &[&str]| {
            let mut apt = Command::new("apt-get");
            apt.current_dir(&dir)
                .arg(format!("-oDir::Etc::SourceList={}", sources.display()))
                .arg("-oDir::Etc::SourceParts=/nonexistent")
                .arg(format!("-oDir::State::Lists={}", lists.display()))
                .arg("-oAPT::Sandbox::User=root")
                .arg("-qq")
                .arg(command)
                .args(args);
            run(&mut apt);
        };
        apt("update", &[]);
        apt("download", &["apparmor", "libc6"]);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "deb") {
                run(Command::new("dpkg").arg("-x").arg(&path).arg(&root));
                std::fs::remove_file(path).unwrap();
            }
        }
    }
    vec![
        loader,
        "--library-path".into(),
        root.join("usr/lib/x86_64-linux-gnu"),
        root.join("usr/sbin/apparmor_parser"),
        "--config-file=/dev/null".into(),
        // Compile for AppArmor 4.0's features (Ubuntu 24.04's), write nothing, load nothing.
        "--kernel-features".into(),
        root.join("etc/apparmor.d/abi/4.0"),
        "--skip-kernel-load".into(),
        "--skip-cache".into(),
        "--ofile=/dev/null".into(),
        "--base".into(),
        root.join("etc/apparmor.d"),
    ]
}

/// The profile compiles; it is not loaded (this kernel has no AppArmor), so what it allows at
/// run time is not tested here.
#[test]
fn the_apparmor_profile_compiles() {
    if !cfg!(target_arch = "x86_64") || Command::new("apt-get").arg("-v").output().is_err() {
        eprintln!("skipped: needs Debian's apt-get on x86-64 to fetch AppArmor 4's parser");
        return;
    }
    let parser = apparmor4_parser();
    let profile = repo().join("manifests/container/apparmor/mcpgym");
    run(Command::new(&parser[0]).args(&parser[1..]).arg(&profile));
    let text = std::fs::read_to_string(&profile).unwrap();
    for rule in ["userns,", "mount,", "umount,", "pivot_root,"] {
        assert!(text.lines().any(|l| l.trim() == rule), "{rule} missing");
    }
    // AppArmor 3's variant (README): without the ABI line and the rule it does not know.
    if Path::new("/usr/sbin/apparmor_parser").exists() {
        let variant = std::env::temp_dir().join(format!("mcpgym-apparmor3-{}", std::process::id()));
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| !["abi <abi/4.0>,", "userns,"].contains(&l.trim()))
            .collect();
        std::fs::write(&variant, lines.join("\n")).unwrap();
        let compiled = Command::new("/usr/sbin/apparmor_parser")
            .args([
                "--config-file=/dev/null",
                "--skip-kernel-load",
                "--skip-cache",
            ])
            .args(["--ofile=/dev/null", "--base=/etc/apparmor.d"])
            .arg(&variant)
            .output()
            .unwrap();
        std::fs::remove_file(&variant).unwrap();
        assert!(
            compiled.status.success(),
            "{}",
            String::from_utf8_lossy(&compiled.stderr)
        );
    }
    // The check can fail: a rule the parser does not know is refused.
    let broken = std::env::temp_dir().join(format!("mcpgym-apparmor-{}", std::process::id()));
    std::fs::write(&broken, text.replace("userns,", "userns nonsense,")).unwrap();
    let refused = Command::new(&parser[0])
        .args(&parser[1..])
        .arg(&broken)
        .output()
        .unwrap();
    std::fs::remove_file(&broken).unwrap();
    assert!(!refused.status.success(), "a broken profile compiled");
}

/// How a root made by debootstrap is turned into what the image's base is: the slim image's
/// dpkg exclusions and its apt sources. Part of the cache key.
const SLIM: &str = r#"set -eu
root=$1
mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
rm -f "$root/etc/apt/sources.list"
cat >"$root/etc/apt/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
cp /etc/resolv.conf "$root/etc/resolv.conf"
"#;

/// The Containerfile's runtime stage, in the root: its packages and its user. Runs in a mount
/// namespace of its own, so the /proc that apt's scripts want is gone when it ends, whatever
/// happens to the test.
const IMAGE_STEPS: &str = r#"set -eu
root=$1; shift
mount -t proc proc "$root/proc"
# Not in the image: skipping fsync while the packages unpack (a throwaway root) saves minutes.
echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/unsafe-io"
chroot "$root" /usr/local/share/mcpgym/install packages "$@"
chroot "$root" /usr/local/share/mcpgym/install user
rm "$root/etc/dpkg/dpkg.cfg.d/unsafe-io"
rm -rf "$root/var/lib/apt/lists/"* "$root/usr/local/share/mcpgym"
"#;

/// The hex SHA-256 of `bytes` (coreutils' sha256sum).
fn sha256(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()[..64].to_owned()
}

/// Removes a directory when dropped, unless disarmed: a root whose build failed.
struct RemoveOnDrop(Option<PathBuf>);

impl RemoveOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The image's root file system without the binary and runtime: cached, else built (minutes).
fn image_root() -> PathBuf {
    let repo = repo();
    let install = repo.join("manifests/container/install");
    let packages = repo.join("manifests/container/packages");
    let mut inputs = std::fs::read(&install).unwrap();
    inputs.extend(std::fs::read(&packages).unwrap());
    inputs.extend(format!("{SLIM}{IMAGE_STEPS}{}", IMAGE_GROUPS.join(" ")).into_bytes());
    let key = sha256(&inputs);
    let key = &key[..16];
    let dir = repo.join("target/container");
    let root = dir.join(format!("root-{key}"));
    if root.join(".complete").exists() {
        return root;
    }
    // Each root is gigabytes: older ones go.
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("root-")
        {
            std::fs::remove_dir_all(&path).unwrap();
        }
    }
    let building = dir.join(format!("root-{key}.build"));
    let guard = RemoveOnDrop(Some(building.clone()));
    let started = Instant::now();
    run(Command::new("debootstrap")
        .args(["--variant=minbase", "bookworm"])
        .arg(&building)
        .arg("http://deb.debian.org/debian"));
    run(Command::new("sh")
        .arg("-c")
        .arg(SLIM)
        .arg("sh")
        .arg(&building));
    // Where the Containerfile copies them.
    let share = building.join("usr/local/share/mcpgym");
    std::fs::create_dir_all(&share).unwrap();
    std::fs::copy(&install, share.join("install")).unwrap();
    std::fs::copy(&packages, share.join("packages")).unwrap();
    run(Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            IMAGE_STEPS,
            "sh",
        ])
        .arg(&building)
        .args(IMAGE_GROUPS));
    std::fs::write(building.join(".complete"), "").unwrap();
    std::fs::rename(&building, &root).unwrap();
    guard.disarm();
    eprintln!(
        "container root built in {:.0} s: {}",
        started.elapsed().as_secs_f64(),
        root.display()
    );
    root
}

/// Enters the root as a container runtime does, in the mount and PID namespaces `unshare`
/// made: the root bound on itself, a new /proc, a small /dev of the usual device nodes with its
/// own devpts and /dev/shm, a read-only /sys, a tmpfs /tmp, and the runtime bound read-only
/// at the path it was built at (the image copies it to the path it was built at). Then
/// [`ENTER`] switches root and user and applies the seccomp profile. With `MASK_PROC` set,
/// /proc is masked as runtimes mask it by default.
const MOUNTS: &str = r#"set -eu
root=$1 profile=$2 runtime=$3; shift 3
mount --bind "$root" "$root"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
if [ -n "${MASK_PROC:-}" ]; then
  for entry in acpi asound interrupts kcore keys latency_stats timer_list timer_stats sched_debug scsi; do
    if [ -d "$root/proc/$entry" ]; then mount -t tmpfs -o ro tmpfs "$root/proc/$entry"
    elif [ -e "$root/proc/$entry" ]; then mount --bind /dev/null "$root/proc/$entry"; fi
  done
  for entry in bus fs irq sys sysrq-trigger; do
    if [ -e "$root/proc/$entry" ]; then mount --bind -o ro "$root/proc/$entry" "$root/proc/$entry"; fi
  done
fi
mount -t tmpfs -o nosuid,mode=755,size=64k tmpfs "$root/dev"
for node in null zero full random urandom tty; do
  touch "$root/dev/$node"
  mount --bind "/dev/$node" "$root/dev/$node"
done
mkdir "$root/dev/pts" "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620,nosuid,noexec devpts "$root/dev/pts"
mount -t tmpfs -o nosuid,nodev,noexec,mode=1777,size=64m shm "$root/dev/shm"
ln -s pts/ptmx "$root/dev/ptmx"
ln -s /proc/self/fd "$root/dev/fd"
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$root/tmp"
mkdir -p "$root$runtime"
mount --bind -o ro "$runtime" "$root$runtime"
exec /usr/bin/python3 -c "$ENTER" "$root" "$profile" "$@"
"#;

/// Switches root with `pivot_root` (the kernel refuses a new user namespace to a chrooted
/// process, so a plain chroot would fail where a container works), becomes the image's user,
/// loads the seccomp profile as runc does (the default action, each rule's names with its
/// argument conditions; names this architecture lacks are skipped, as runc skips them), and
/// executes the command. Debian's Python with libseccomp's bindings, loaded before the switch.
const ENTER: &str = r#"
import ctypes, json, os, sys
import seccomp
root, profile, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(profile) as f:
    profile = json.load(f)
ops = {"SCMP_CMP_NE": seccomp.NE, "SCMP_CMP_LT": seccomp.LT, "SCMP_CMP_LE": seccomp.LE,
       "SCMP_CMP_EQ": seccomp.EQ, "SCMP_CMP_GE": seccomp.GE, "SCMP_CMP_GT": seccomp.GT,
       "SCMP_CMP_MASKED_EQ": seccomp.MASKED_EQ}
def action(name, errno):
    return seccomp.ALLOW if name == "SCMP_ACT_ALLOW" else seccomp.ERRNO(errno)
rules = seccomp.SyscallFilter(action(profile["defaultAction"], profile.get("defaultErrnoRet", 1)))
for rule in profile["syscalls"]:
    act = action(rule["action"], rule.get("errnoRet", 1))
    args = [seccomp.Arg(a["index"], ops[a["op"]], a["value"], a.get("valueTwo", 0))
            for a in rule.get("args", [])]
    for name in rule["names"]:
        try:
            rules.add_rule(act, name, *args)
        except (RuntimeError, ValueError):
            pass
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(root)
if libc.syscall(155, b".", b".") != 0 or libc.umount2(b".", 2) != 0:
    raise OSError(ctypes.get_errno(), "pivot_root")
os.chdir("/home/mcpgym")
os.setgroups([])
os.setgid(10001)
os.setuid(10001)
rules.load()
os.execve(argv[0], argv, os.environ)
"#;

/// `unshare … sh -c MOUNTS`: `command` run in `root` as the image runs it, under `profile`.
fn in_container(root: &Path, profile: &Path, command: &[&str]) -> Command {
    let runtime = repo().join("target/runtime");
    let mut unshare = Command::new("unshare");
    unshare
        .args(["--mount", "--propagation", "private", "--pid", "--fork"])
        // The server gets what stops the container: SIGTERM (when unshare goes).
        .arg("--kill-child=SIGTERM")
        .args(["sh", "-c", MOUNTS, "sh"])
        .arg(root)
        .arg(profile)
        .arg(&runtime)
        .args(command)
        .env_clear()
        .env("ENTER", ENTER)
        // The image's environment (ENV in the Containerfile).
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("HOME", "/home/mcpgym")
        .env("TMPDIR", "/tmp")
        .env("LANG", "C.UTF-8")
        .env("MCPGYM_RUNTIME", &runtime)
        .env("RUST_LOG", "warn");
    // Should the test itself die, unshare goes too, and the server gets its SIGTERM.
    // SAFETY: prctl is async-signal-safe.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut unshare, || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    unshare
}

/// A jail as the jail crate builds one, reduced to what needs the kernel's and the profile's
/// permission: new namespaces of every kind, the mounts, a new /proc, the host name.
const BWRAP_PROBE: &[&str] = &[
    "/usr/bin/bwrap",
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--hostname",
    "sandbox",
    "--uid",
    "1000",
    "--gid",
    "1000",
    "--tmpfs",
    "/tmp",
    "--ro-bind",
    "/usr",
    "/usr",
    "--symlink",
    "usr/lib",
    "/lib",
    "--symlink",
    "usr/lib64",
    "/lib64",
    "--symlink",
    "usr/bin",
    "/bin",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--remount-ro",
    "/",
    "--",
    "/usr/bin/true",
];

/// Runs [`BWRAP_PROBE`] in the root under `profile`; returns what bwrap said when it failed.
fn probe(root: &Path, profile: &Value, mask_proc: bool) -> Result<(), String> {
    let path = std::env::temp_dir().join(format!(
        "mcpgym-seccomp-{}-{}.json",
        std::process::id(),
        next_id()
    ));
    std::fs::write(&path, profile.to_string()).unwrap();
    let mut command = in_container(root, &path, BWRAP_PROBE);
    if mask_proc {
        command.env("MASK_PROC", "1");
    }
    let output = command.stdin(Stdio::null()).output().unwrap();
    std::fs::remove_file(&path).unwrap();
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The server in the root: `unshare`'s child is PID 1 of the namespace, the server itself.
struct Container {
    unshare: Child,
    base: String,
    log: Arc<Mutex<String>>,
}

impl Container {
    fn start(root: &Path, profile: &Path, command: &[&str]) -> Container {
        let mut unshare = in_container(root, profile, command)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start unshare");
        let log = Arc::new(Mutex::new(String::new()));
        let mut lines = BufReader::new(unshare.stderr.take().unwrap()).lines();
        let base = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    log.lock().unwrap().push_str(&format!("{line}\n"));
                    if let Some(url) = line.strip_prefix("mcpgym: listening on ") {
                        break url.to_owned();
                    }
                }
                _ => panic!(
                    "the server exited before listening: {:?}\n{}",
                    unshare.wait(),
                    log.lock().unwrap()
                ),
            }
        };
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        Container { unshare, base, log }
    }

    /// Host pid of the namespace's PID 1 (the server), while it runs.
    fn init(&self) -> Option<i32> {
        let id = self.unshare.id();
        let children = std::fs::read_to_string(format!("/proc/{id}/task/{id}/children")).ok()?;
        children.split_whitespace().next()?.parse().ok()
    }

    /// Sends SIGTERM to the server, as a runtime stops a container; whether it ended, and
    /// with it everything in its namespace, within `grace`.
    fn stop(&mut self, grace: Duration) -> bool {
        if let Some(pid) = self.init() {
            // SAFETY: plain system call.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.unshare.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Container {
    /// Whatever happened: SIGKILL to the namespace's PID 1 takes every process in it along, and
    /// the mounts go with the last of them.
    fn drop(&mut self) {
        if let Some(pid) = self.init() {
            // SAFETY: plain system call.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = self.unshare.kill();
        let _ = self.unshare.wait();
    }
}

/// The text blocks of a step's observation.
fn text_of(content: &impl serde::Serialize) -> String {
    let content = serde_json::to_value(content).unwrap();
    content
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a cell reports about the jail it runs in.
const JAIL_REPORT: &str = r#"import json, os, socket
report = {"uid": os.getuid(), "hostname": socket.gethostname(),
          "binary": os.path.exists("/usr/local/bin/mcpgym"),
          "server_home": os.path.exists("/home/mcpgym"),
          "init": open("/proc/1/cmdline", "rb").read().split(b"\0")[0].decode(),
          "tmp": os.listdir("/tmp")}
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
    report["server_port"] = True
except OSError:
    report["server_port"] = False
print(json.dumps(report))"#;

#[tokio::test]
#[ignore = "full tier: builds a Debian root with debootstrap (minutes cold)"]
async fn the_image_steps_serve_and_jail_as_its_user() {
    if !running_as_root() {
        eprintln!("skipped: building the root and entering it need root (CI runs as root)");
        return;
    }
    let runtime = repo().join("target/runtime");
    assert!(
        runtime.join("bin/python").exists(),
        "no sandbox runtime at {}: run .ci/setup",
        runtime.display()
    );
    let root = tokio::task::spawn_blocking(image_root).await.unwrap();
    // Where the image has it.
    std::fs::copy(BIN, root.join("usr/local/bin/mcpgym")).unwrap();

    // bwrap works as the image's user under the profile, and needs each of the jails' calls
    // the profile adds to the default, and a /proc the runtime has not masked.
    let full = profile();
    probe(&root, &full, false).expect("a jail under the shipped profile");
    for name in JAIL_SYSCALLS {
        let mut without = full.clone();
        for rule in without["syscalls"].as_array_mut().unwrap() {
            rule["names"].as_array_mut().unwrap().retain(|n| n != name);
        }
        let refused = probe(&root, &without, false).expect_err(name);
        assert!(refused.contains("bwrap"), "without {name}: {refused}");
    }
    let masked = probe(&root, &full, true).expect_err("a jail under a masked /proc");
    assert!(masked.contains("proc"), "{masked}");

    // The image's command, on a loopback port.
    let profile_path = repo().join("manifests/container/seccomp.json");
    let mut container = Container::start(&root, &profile_path, &["/usr/local/bin/mcpgym", "serve"]);
    let base = container.base.clone();
    let health = http().get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    // Unprivileged user and mount namespaces are what bound the jails' homes.
    assert!(
        !container
            .log
            .lock()
            .unwrap()
            .contains("private mount namespace"),
        "{}",
        container.log.lock().unwrap()
    );

    let control = ControlClient::new(&base, None).unwrap();
    let wordle = control
        .create_episode(&NewEpisode::default().env("wordle"))
        .await
        .unwrap();
    let step = control
        .call(&wordle.id, "guess", json!({"word": "crane"}))
        .await
        .unwrap();
    assert!(!step.is_error, "{step:?}");
    assert_eq!(step.turn, 1);

    let jupyter = control
        .create_episode(&NewEpisode::default().env("jupyter").task("classic/0"))
        .await
        .unwrap();
    let port = base.rsplit(':').next().unwrap();
    let step = control
        .call(
            &jupyter.id,
            "add_and_execute_code_cell",
            json!({"code": JAIL_REPORT.replace("PORT", port)}),
        )
        .await
        .unwrap();
    let text = text_of(&step.content);
    assert!(!step.is_error, "{text}\n{}", container.log.lock().unwrap());
    let json_line = text.lines().find(|l| l.starts_with('{')).unwrap_or(&text);
    let report: Value = serde_json::from_str(json_line).unwrap_or_else(|_| panic!("{text}"));
    assert_eq!(report["uid"], 1000, "{report}");
    assert_eq!(report["hostname"], "sandbox", "{report}");
    assert_eq!(
        report["binary"], false,
        "the server's binary shows: {report}"
    );
    assert_eq!(report["server_home"], false, "{report}");
    assert!(
        !report["init"].as_str().unwrap().contains("mcpgym"),
        "the jail sees the server's processes: {report}"
    );
    assert!(
        !report["tmp"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.as_str().unwrap().starts_with("mcpgym")),
        "the jail sees the server's files: {report}"
    );
    assert_eq!(report["server_port"], false, "{report}");

    // Stopped as a runtime stops it, the server ends by itself, and everything with it.
    assert!(
        container.stop(Duration::from_secs(20)),
        "the server did not stop on SIGTERM\n{}",
        container.log.lock().unwrap()
    );
}
