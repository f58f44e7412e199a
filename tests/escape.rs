//! The escape battery: a hostile agent's attempts to leave its jail, made the way an agent
//! makes them — as Python in a notebook cell, as a shell command, and as text typed into the
//! desktop's terminal — against the real binary installed under `/usr/local/bin`, run once as
//! root and once as an ordinary user. Each attempt must fail, and the host, the server and
//! the other episodes must be untouched.
//!
//! Every attempt prints `HELD <name>` when the jail held and `ESCAPE <name>` when it did not;
//! a script that stops early is caught by the list of names every report must hold.

use std::process::Command;
use std::time::Duration;

use crate::common::{Client, ControlClient, HttpServer, NewEpisode, act, is_error, text};
use base64::Engine;
use serde_json::json;

/// A line of a hidden grader compiled into the binary (task `jupyter-train-0xx`'s check): if
/// any file an agent can read holds it, the agent can read graders and answers.
const GRADER_SECRET: &str = "want_in, want_logs = set(), set()";
/// The token the servers run with; it must appear nowhere inside a jail.
const TOKEN: &str = "battery-token-7f3a9c0e5d";
/// Quotas the servers here run with (small, so filling them is quick).
const HOME_MB: u64 = 64;
const TMP_MB: u64 = 32;
const SHM_MB: u64 = 16;

/// Who the servers run as.
#[derive(Clone, Copy, Debug, PartialEq)]
enum RunAs {
    Root,
    /// An ordinary user (`nobody`), started with `setpriv`.
    User,
}

/// The binary, copied under `/usr/local/bin` as a package or an image installs it, so that
/// the jails' bind of `/usr` would expose it if it were not masked. Removed when dropped.
struct Installed {
    path: String,
}

impl Installed {
    fn new(tag: &str) -> Self {
        let path = format!("/usr/local/bin/mcpgym-battery-{tag}-{}", std::process::id());
        std::fs::copy(crate::common::BIN, &path).expect("copy the binary under /usr/local/bin");
        Installed { path }
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Starts the installed binary as root or as `nobody`, with the battery's token and quotas.
fn start_server(installed: &Installed, run_as: RunAs, args: &[&str]) -> HttpServer {
    let mut command = match run_as {
        RunAs::Root => Command::new(&installed.path),
        RunAs::User => {
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--",
                &installed.path,
            ]);
            c
        }
    };
    command
        .args(args)
        .arg(format!("--home-size={HOME_MB}M"))
        .arg(format!("--tmp-size={TMP_MB}M"))
        .arg(format!("--shm-size={SHM_MB}M"))
        .env("MCPGYM_TOKEN", TOKEN)
        // The runtime .ci/setup builds beside the binary under test (the copy would not find
        // it), so the battery also runs against its bind.
        .env(
            "MCPGYM_RUNTIME",
            std::path::Path::new(crate::common::BIN).with_file_name("../runtime"),
        )
        .env("RUST_LOG", "warn")
        .env("TMPDIR", "/tmp");
    HttpServer::spawn(command)
}

/// The server's resident memory.
fn rss_kib(server: &HttpServer) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", server.pid())).expect("server status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// A control-plane client that carries the token.
fn authorized(server: &HttpServer) -> ControlClient {
    ControlClient::new(&server.base, Some(TOKEN)).unwrap()
}

/// Starts an episode and connects a legacy-era MCP client to it.
async fn episode(server: &HttpServer, request: NewEpisode) -> (String, Client) {
    let id = authorized(server)
        .create_episode(&request)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", server.log.lock().unwrap()))
        .id;
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            server.url(&format!("/episodes/{id}/mcp")),
        )
        .auth_header(TOKEN),
    );
    let client = rmcp::ServiceExt::serve((), transport)
        .await
        .expect("MCP client connects");
    (id, client)
}

async fn delete(server: &HttpServer, id: &str) {
    authorized(server).close(id).await.unwrap();
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// What every attacker knows: values substituted into the attack scripts. Secrets travel
/// base64-encoded so that a script's own text (or a shell history) never holds them.
struct Target<'a> {
    server_port: u16,
    server_pid: u32,
    installed: &'a str,
    /// A string written only into another episode's files.
    marker: &'a str,
}

impl Target<'_> {
    fn fill(&self, script: &str) -> String {
        script
            .replace("@PORT@", &self.server_port.to_string())
            .replace("@SERVER_PID@", &self.server_pid.to_string())
            .replace("@INSTALLED@", self.installed)
            .replace("@SECRET_B64@", &b64(GRADER_SECRET))
            .replace("@MARKER_B64@", &b64(self.marker))
            .replace("@TOKEN_B64@", &b64(TOKEN))
            .replace("@HOME_MB@", &(HOME_MB + 16).to_string())
            .replace("@TMP_MB@", &(TMP_MB + 16).to_string())
            .replace("@SHM_MB@", &(SHM_MB + 16).to_string())
            .replace(
                "@FILL_WRITABLE_B64@",
                &b64(&FILL_WRITABLE.replace("@FILL_MB@", &(HOME_MB + 16).to_string())),
            )
    }
}

/// The attacks as a shell script (for `execute_shell_command` and `run_command`).
const SHELL_ATTACKS: &str = r#"S=$(echo @SECRET_B64@ | base64 -d); M=$(echo @MARKER_B64@ | base64 -d); T=$(echo @TOKEN_B64@ | base64 -d)
t() { n=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "ESCAPE $n"; else echo "HELD $n"; fi; }
fill() { dd if=/dev/zero of="$1" bs=1M count="$2" 2>/dev/null; r=$?; rm -f "$1"; return $r; }
search() { for d in /usr/local /opt /srv /var /etc /home /tmp /run /root /mnt /media /boot; do grep -rlsF -- "$1" "$d" 2>/dev/null; done | grep -q .; }
t umount_proc umount -l /proc
t mount_tmpfs mount -t tmpfs none /tmp
t remount_root_rw mount -o remount,rw /
t unshare_user unshare -r true
t unshare_mount unshare -m true
t nsenter_net nsenter --net=/proc/1/ns/net true
t nsenter_server nsenter --target @SERVER_PID@ --net --mount true
t read_shadow head -1 /etc/shadow
t write_usr touch /usr/escape-battery
t write_etc touch /etc/escape-battery
t write_root touch /escape-battery
t write_var touch /var/escape-battery
t token_in_environ sh -c 'cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n" | grep -qF -- "$0"' "$T"
t server_environ sh -c 'tr "\0" "\n" < /proc/@SERVER_PID@/environ | grep -qF -- "$0"' "$T"
t server_port bash -c 'exec 3<>/dev/tcp/127.0.0.1/@PORT@'
t grader_readable search "$S"
t other_episode_files search "$M"
t binary_readable test -s @INSTALLED@
t ptrace_pid1 python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).ptrace(16,1,0,0)==0 else 1)'
t vsock_bind python3 -c 'import socket; socket.socket(40, 1).bind((0xFFFFFFFF, 47011))'
t io_uring_setup python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).syscall(425, 4, ctypes.create_string_buffer(120)) >= 0 else 1)'
t fill_shm fill /dev/shm/battery @SHM_MB@
t fill_tmp fill /tmp/battery @TMP_MB@
t fill_root_home fill /root/battery @TMP_MB@
t fill_home fill "$HOME/battery" @HOME_MB@
t fill_writable python3 -c "$(echo @FILL_WRITABLE_B64@ | base64 -d)"
t server_pid_in_sight sh -c 'cat /proc/1/cmdline /proc/self/mountinfo /proc/self/cgroup | tr "\0" " " | grep -qE "mcpgym-([a-z]+-)?@SERVER_PID@"'
echo "END"
"#;

/// Names every report must hold.
const SHELL_NAMES: &[&str] = &[
    "umount_proc",
    "mount_tmpfs",
    "remount_root_rw",
    "unshare_user",
    "unshare_mount",
    "nsenter_net",
    "nsenter_server",
    "read_shadow",
    "write_usr",
    "write_etc",
    "write_root",
    "write_var",
    "token_in_environ",
    "server_environ",
    "server_port",
    "grader_readable",
    "other_episode_files",
    "binary_readable",
    "ptrace_pid1",
    "vsock_bind",
    "io_uring_setup",
    "fill_shm",
    "fill_tmp",
    "fill_root_home",
    "fill_home",
    "fill_writable",
    "server_pid_in_sight",
];

/// Fills every writable file system the jail sees, found from its own mount table rather
/// than from a list of known ones, each with more than the largest quota; exits 0 (an
/// escape) naming any that took it all.
const FILL_WRITABLE: &str = r#"
import os, sys
limit_mb = @FILL_MB@
virtual = {"proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2", "bpf", "debugfs"}
def writable_dir(top):
    if os.access(top, os.W_OK):
        return top
    for count, (d, dirs, _) in enumerate(os.walk(top)):
        if count > 500:
            break
        if os.access(d, os.W_OK):
            return d
    return None
def fill(directory):
    path = os.path.join(directory, ".battery-fill")
    written = 0
    try:
        with open(path, "wb") as f:
            chunk = b"\1" * (1 << 20)
            while written < limit_mb:
                f.write(chunk); f.flush(); written += 1
    except OSError:
        pass
    finally:
        try: os.remove(path)
        except OSError: pass
    return written >= limit_mb
took_it = []
seen = set()
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    point = fields[4].encode().decode("unicode_escape")
    fstype = fields[fields.index("-") + 1]
    if "rw" not in fields[5].split(",") or fstype in virtual or not os.path.isdir(point):
        continue
    directory = writable_dir(point)
    if directory and fields[2] not in seen:
        seen.add(fields[2])
        if fill(directory):
            took_it.append(point)
print("unbounded:", took_it, file=sys.stderr)
sys.exit(0 if took_it else 1)
"#;

/// The attacks as a notebook cell: raw system calls through ctypes, as a policy that knows
/// Linux would write them.
const CELL_ATTACKS: &str = r#"
import base64, ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
S = base64.b64decode("@SECRET_B64@"); M = base64.b64decode("@MARKER_B64@"); T = base64.b64decode("@TOKEN_B64@")
def t(name, attempt):
    try:
        escaped = bool(attempt())
    except Exception:
        escaped = False
    print(("ESCAPE " if escaped else "HELD ") + name)
def environ_has_token():
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if T in open(f"/proc/{pid}/environ", "rb").read():
                    return True
            except OSError:
                pass
    return False
def search(needle):
    for top in ["/usr/local", "/opt", "/srv", "/var", "/etc", "/home", "/tmp", "/run", "/root", "/mnt", "/media", "/boot"]:
        for d, _, files in os.walk(top):
            for f in files:
                try:
                    with open(os.path.join(d, f), "rb") as fh:
                        if needle in fh.read(64 << 20):
                            return True
                except OSError:
                    pass
    return False
def fill(path, mb):
    written = 0
    try:
        with open(path, "wb") as fh:
            chunk = b"\0" * (1 << 20)
            for _ in range(mb):
                fh.write(chunk); fh.flush(); written += 1
    except OSError:
        pass
    finally:
        try: os.remove(path)
        except OSError: pass
    return written >= mb
def vsock_bind():
    # AF_VSOCK, bound on any context id: a channel past the network namespace to the
    # hypervisor and, on a VM host, to other sandboxes.
    s = socket.socket(40, socket.SOCK_STREAM)
    try:
        s.bind((0xFFFFFFFF, 47010)); return True
    finally:
        s.close()
def connect(port):
    s = socket.socket(); s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port)); return True
    finally:
        s.close()
os.makedirs("/tmp/mnt", exist_ok=True)
t("mount_proc", lambda: libc.mount(b"proc", b"/tmp/mnt", b"proc", 0, None) == 0)
t("umount_proc", lambda: libc.umount2(b"/proc", 2) == 0)
t("remount_root_rw", lambda: libc.mount(None, b"/", None, 32 | 4096, None) == 0)
t("unshare_user", lambda: libc.unshare(0x10000000) == 0)
t("unshare_mount", lambda: libc.unshare(0x00020000) == 0)
t("setns_pid1_net", lambda: libc.setns(os.open("/proc/1/ns/net", os.O_RDONLY), 0) == 0)
t("ptrace_pid1", lambda: libc.ptrace(16, 1, 0, 0) == 0)
t("bpf", lambda: libc.syscall(321, 0, 0, 0) >= 0)
t("keyctl", lambda: libc.syscall(250, 0, 0, 0, 0, 0) >= 0)
t("vsock_bind", vsock_bind)
t("packet_socket", lambda: socket.socket(17, socket.SOCK_RAW).close() is None)
t("alg_socket", lambda: socket.socket(38, socket.SOCK_SEQPACKET).close() is None)
t("io_uring_setup", lambda: libc.syscall(425, 4, ctypes.create_string_buffer(120)) >= 0)
t("modify_ldt", lambda: libc.syscall(154, 0, ctypes.create_string_buffer(16), 16) >= 0)
t("read_shadow", lambda: open("/etc/shadow").read(1) is not None)
t("write_usr", lambda: open("/usr/escape-battery", "w"))
t("write_etc", lambda: open("/etc/escape-battery", "w"))
t("token_in_environ", environ_has_token)
t("server_environ", lambda: T in open("/proc/@SERVER_PID@/environ", "rb").read())
t("server_port", lambda: connect(@PORT@))
t("grader_readable", lambda: search(S))
t("other_episode_files", lambda: search(M))
t("binary_readable", lambda: os.path.getsize("@INSTALLED@") > 0)
t("fill_shm", lambda: fill("/dev/shm/battery", @SHM_MB@))
t("fill_tmp", lambda: fill("/tmp/battery", @TMP_MB@))
t("fill_root_home", lambda: fill("/root/battery", @TMP_MB@))
t("fill_home", lambda: fill(os.path.expanduser("~/battery"), @HOME_MB@))
def fill_writable():
    try:
        exec(base64.b64decode("@FILL_WRITABLE_B64@"), {"__name__": "fill"})
    except SystemExit as e:
        return e.code == 0
def server_pid_in_sight():
    import re
    seen = b"".join(open(f, "rb").read() for f in ["/proc/1/cmdline", "/proc/self/mountinfo", "/proc/self/cgroup"])
    return re.search(rb"mcpgym-([a-z]+-)?@SERVER_PID@", seen) is not None
t("fill_writable", fill_writable)
t("server_pid_in_sight", server_pid_in_sight)
print("END")
"#;

const CELL_NAMES: &[&str] = &[
    "mount_proc",
    "umount_proc",
    "remount_root_rw",
    "unshare_user",
    "unshare_mount",
    "setns_pid1_net",
    "ptrace_pid1",
    "bpf",
    "keyctl",
    "vsock_bind",
    "packet_socket",
    "alg_socket",
    "io_uring_setup",
    "modify_ldt",
    "read_shadow",
    "write_usr",
    "write_etc",
    "token_in_environ",
    "server_environ",
    "server_port",
    "grader_readable",
    "other_episode_files",
    "binary_readable",
    "fill_shm",
    "fill_tmp",
    "fill_root_home",
    "fill_home",
    "fill_writable",
    "server_pid_in_sight",
];

/// Asserts a report holds every name, each `HELD`, and that the script ran to its end.
fn assert_held(vector: &str, report: &str, names: &[&str]) {
    assert!(
        report.contains("END"),
        "{vector}: the attack script did not finish:\n{report}"
    );
    let escapes: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("ESCAPE "))
        .collect();
    assert!(
        escapes.is_empty(),
        "{vector}: the jail did not hold: {escapes:?}\n{report}"
    );
    for name in names {
        assert!(
            report.lines().any(|l| l == format!("HELD {name}")),
            "{vector}: no verdict for {name}:\n{report}"
        );
    }
}

/// Host paths the attacks try to create; none may exist afterwards.
fn assert_host_untouched() {
    for path in [
        "/usr/escape-battery",
        "/etc/escape-battery",
        "/escape-battery",
        "/var/escape-battery",
    ] {
        assert!(
            !std::path::Path::new(path).exists(),
            "{path} was written on the host"
        );
    }
}

async fn jupyter_battery(run_as: RunAs) {
    let installed = Installed::new(&format!("jupyter-{run_as:?}"));
    let server = start_server(
        &installed,
        run_as,
        &["jupyter", "--max-turns", "100", "--cell-timeout", "300"],
    );
    let (victim_id, victim) = episode(
        &server,
        NewEpisode::default().env("jupyter").task("classic/0"),
    )
    .await;
    let marker = format!("victim-marker-{}", uuid_like());
    let planted = act(
        &victim,
        "add_and_execute_code_cell",
        json!({"code": format!("open('notes.txt', 'w').write({marker:?})")}),
    )
    .await;
    assert!(!is_error(&planted), "{}", text(&planted));

    let (attacker_id, attacker) = episode(
        &server,
        NewEpisode::default().env("jupyter").task("classic/0"),
    )
    .await;
    let target = Target {
        server_port: server.base.rsplit(':').next().unwrap().parse().unwrap(),
        server_pid: server.pid(),
        installed: &installed.path,
        marker: &marker,
    };
    let cell = act(
        &attacker,
        "add_and_execute_code_cell",
        json!({ "code": target.fill(CELL_ATTACKS) }),
    )
    .await;
    assert_held(&format!("cell ({run_as:?})"), &text(&cell), CELL_NAMES);
    let shell = act(
        &attacker,
        "execute_shell_command",
        json!({ "command": target.fill(SHELL_ATTACKS) }),
    )
    .await;
    assert_held(&format!("shell ({run_as:?})"), &text(&shell), SHELL_NAMES);

    // Printing gigabytes leaves the server's memory where it was.
    let before = rss_kib(&server);
    for _ in 0..3 {
        let flood = act(
            &attacker,
            "execute_shell_command",
            json!({"command": "head -c 1000000000 /dev/zero | tr '\\0' a"}),
        )
        .await;
        assert!(text(&flood).len() < 100_000, "the observation is capped");
    }
    let value = act(
        &attacker,
        "add_and_execute_code_cell",
        json!({"code": "'y' * 100_000_000"}),
    )
    .await;
    assert!(text(&value).len() < 100_000, "the observation is capped");
    delete(&server, &attacker_id).await;
    let after = rss_kib(&server);
    assert!(
        after < before + 200 * 1024,
        "server RSS grew from {before} KiB to {after} KiB"
    );

    // The victim's kernel and files are as it left them.
    let check = act(
        &victim,
        "execute_shell_command",
        json!({"command": "cat notes.txt"}),
    )
    .await;
    assert!(text(&check).contains(&marker), "{}", text(&check));
    delete(&server, &victim_id).await;
    assert_host_untouched();
}

async fn desktop_battery(run_as: RunAs) {
    let installed = Installed::new(&format!("desktop-{run_as:?}"));
    let server = start_server(
        &installed,
        run_as,
        &["desktop", "--max-turns", "1000", "--allow-shell"],
    );
    let body = NewEpisode::default()
        .env("desktop")
        .task("desktop-train-000");
    let (victim_id, victim) = episode(&server, body.clone()).await;
    let marker = format!("victim-marker-{}", uuid_like());
    let planted = act(
        &victim,
        "run_command",
        json!({"command": format!("echo {marker} > notes.txt")}),
    )
    .await;
    assert!(!is_error(&planted), "{}", text(&planted));
    let (attacker_id, attacker) = episode(&server, body).await;
    let target = Target {
        server_port: server.base.rsplit(':').next().unwrap().parse().unwrap(),
        server_pid: server.pid(),
        installed: &installed.path,
        marker: &marker,
    };
    let other_display = "t other_display sh -c 'for n in $(seq 0 64); do [ \":$n\" = \"$DISPLAY\" ] && continue; \
         DISPLAY=:$n xdotool getmouselocation && exit 0; done; exit 1'\n";
    let script =
        target.fill(SHELL_ATTACKS).replace("echo \"END\"", "") + other_display + "echo END";
    let shell = act(&attacker, "run_command", json!({ "command": script })).await;
    let report = shell.structured_content.as_ref().map_or_else(
        || text(&shell),
        |s| s["stdout"].as_str().unwrap_or_default().to_owned(),
    );
    let mut names = SHELL_NAMES.to_vec();
    names.push("other_display");
    assert_held(&format!("run_command ({run_as:?})"), &report, &names);

    // The same attempts typed into the task's terminal, as an agent with no shell tool does.
    let typed = "for c in 'umount -l /proc' 'mount -o remount,rw /' 'unshare -r true' \
                 'nsenter --net=/proc/1/ns/net true' 'head -1 /etc/shadow' 'touch /usr/escape-battery' \
                 'for n in 0 1 2 3 4 5 6 7; do if [ :$n != $DISPLAY ] && DISPLAY=:$n xdotool mousemove 77 88; \
                 then exit 0; fi; done; exit 1'; do sh -c \"$c\" >/dev/null 2>&1 && echo \"ESCAPE $c\" || \
                 echo \"HELD $c\"; done > typed.txt; echo END >> typed.txt";
    let typing = act(&attacker, "type", json!({ "text": typed })).await;
    assert!(!is_error(&typing), "{}", text(&typing));
    let enter = act(&attacker, "key", json!({ "text": "Return" })).await;
    assert!(!is_error(&enter), "{}", text(&enter));
    let mut report = String::new();
    for _ in 0..100 {
        let read = act(
            &attacker,
            "run_command",
            json!({"command": "cat typed.txt"}),
        )
        .await;
        report = read.structured_content.as_ref().unwrap()["stdout"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if report.contains("END") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_held(&format!("typed ({run_as:?})"), &report, &[]);
    assert_eq!(report.lines().filter(|l| l.starts_with("HELD")).count(), 7);

    // Every process and inotify instance the terminal's jail can take, kept, while the
    // victim runs a command and a third desktop starts.
    let hog = format!(
        "python3 -c \"$(echo {} | base64 -d)\" > hog.txt &",
        b64(&format!("{HOG_CELL}\ntime.sleep(600)\n"))
    );
    let typing = act(&attacker, "type", json!({ "text": hog })).await;
    assert!(!is_error(&typing), "{}", text(&typing));
    act(&attacker, "key", json!({ "text": "Return" })).await;
    // Read from the host through the server's own view of its files (without root they
    // live in its private mount namespace): as root, the attacker's own commands share the
    // episode's host uid with the hog and fail now.
    let episodes = format!("/proc/{0}/root/tmp/mcpgym-desktop-{0}", server.pid());
    let mut report = String::new();
    for _ in 0..300 {
        let found = Command::new("find")
            .args([&episodes, "-name", "hog.txt", "-exec", "cat", "{}", ";"])
            .output()
            .expect("find runs");
        report = String::from_utf8_lossy(&found.stdout).into_owned();
        if report.contains("instances") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        report.contains("instances"),
        "the hog did not report: {report}"
    );
    let children: u64 = report
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_default();
    assert!(children >= 200, "the hog stopped early: {report}");
    let alive = act(&victim, "run_command", json!({"command": "echo alive"})).await;
    assert!(
        !is_error(&alive) && text(&alive).contains("alive"),
        "a neighbour's command failed beside the hog ({report}): {}",
        text(&alive)
    );
    let (third_id, third) = episode(
        &server,
        NewEpisode::default()
            .env("desktop")
            .task("desktop-train-000"),
    )
    .await;
    let shot = act(&third, "computer", json!({"action": "screenshot"})).await;
    assert!(!is_error(&shot), "{}", text(&shot));
    let works = act(&third, "run_command", json!({"command": "echo works"})).await;
    assert!(text(&works).contains("works"), "{}", text(&works));
    delete(&server, &third_id).await;

    // Printing gigabytes through run_command leaves the server's memory where it was.
    let before = rss_kib(&server);
    let flood = act(
        &attacker,
        "run_command",
        json!({"command": "head -c 1000000000 /dev/zero | tr '\\0' a"}),
    )
    .await;
    assert!(text(&flood).len() < 200_000, "the observation is capped");
    delete(&server, &attacker_id).await;
    let after = rss_kib(&server);
    assert!(
        after < before + 200 * 1024,
        "server RSS grew from {before} KiB to {after} KiB"
    );

    let check = act(&victim, "run_command", json!({"command": "cat notes.txt"})).await;
    assert!(text(&check).contains(&marker), "{}", text(&check));
    delete(&server, &victim_id).await;
    assert_host_untouched();
}

/// An episode taking every process and inotify instance it can (see the script).
const HOG_CELL: &str = include_str!("data/hog.py");

/// Children that together touch `@MEM_MB@` MiB, 256 MiB each, hold it for a moment and
/// exit 0; the script exits 0 (an escape) when every one of them did.
const MEMORY_FLOOD: &str = r#"python3 -c '
import os, time
pids = []
for _ in range(@MEM_MB@ // 256):
    pid = os.fork()
    if pid == 0:
        block = b"\1" * (256 << 20)
        time.sleep(3)
        os._exit(0)
    pids.append(pid)
survivors = sum(os.waitpid(p, 0)[1] == 0 for p in pids)
print("survivors", survivors, "of", len(pids))
raise SystemExit(0 if survivors == len(pids) else 1)
' && echo "ESCAPE memory_flood" || echo "HELD memory_flood"; echo END"#;

/// Eight processes that spin for a minute, each in a session of its own (so that a
/// scheduler grouping by session gives it no bound either).
const CPU_HOG_CELL: &str = r#"
import subprocess, sys
spin = "import time\nend = time.time() + 60\nwhile time.time() < end: pass"
hogs = [subprocess.Popen([sys.executable, "-c", spin], start_new_session=True) for _ in range(8)]
print("spinning", len(hogs))
"#;

/// Seconds a fixed loop takes in `client`'s kernel (the least of three runs).
async fn timed_loop(client: &Client) -> f64 {
    let cell = act(
        client,
        "add_and_execute_code_cell",
        json!({"code": "import time\nbest = 1e9\nfor _ in range(3):\n    t = time.perf_counter(); sum(range(5 * 10**7)); best = min(best, time.perf_counter() - t)\nprint(best)"}),
    )
    .await;
    let output = text(&cell);
    output
        .split_whitespace()
        .find_map(|word| word.parse().ok())
        .unwrap_or_else(|| panic!("no time in {output}"))
}

/// A jail's CPU cgroup: CPU time its processes have had so far, and whether it holds the
/// CPU hog.
struct JailCpu {
    dir: std::path::PathBuf,
    usage_us: u64,
    hog: bool,
}

/// The CPU time of every jail of the server with `pid`, summed over the processes in its CPU
/// cgroup (v1's `cpu` hierarchy keeps no usage of its own).
fn jail_cpu(pid: u32) -> Vec<JailCpu> {
    // SAFETY: sysconf only reads a system constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let found = Command::new("find")
        .args(["/sys/fs/cgroup", "-maxdepth", "8", "-type", "d", "-name"])
        .arg(format!("mcpgym-{pid}-*"))
        .output()
        .expect("find runs");
    String::from_utf8_lossy(&found.stdout)
        .lines()
        .map(std::path::PathBuf::from)
        .filter(|dir| dir.join("cpu.weight").exists() || dir.join("cpu.shares").exists())
        .map(|dir| {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            let (mut usage_us, mut hog) = (0, false);
            for process in procs.lines() {
                let cmdline = std::fs::read(format!("/proc/{process}/cmdline")).unwrap_or_default();
                hog |= String::from_utf8_lossy(&cmdline).contains("end = time.time() + 60");
                // utime and stime: the 12th and 13th fields after the command's closing paren.
                let stat =
                    std::fs::read_to_string(format!("/proc/{process}/stat")).unwrap_or_default();
                let after_command = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
                let field = |n: usize| -> u64 {
                    after_command
                        .split_whitespace()
                        .nth(n)
                        .and_then(|f| f.parse().ok())
                        .unwrap_or(0)
                };
                usage_us += (field(11) + field(12)) * 1_000_000 / ticks;
            }
            JailCpu { dir, usage_us, hog }
        })
        .collect()
}

/// Whether the server with `pid` put its jails in cgroups (it creates `mcpgym-<pid>-…`).
fn has_cgroups(pid: u32) -> bool {
    let found = Command::new("find")
        .args(["/sys/fs/cgroup", "-maxdepth", "8", "-name"])
        .arg(format!("mcpgym-{pid}-*"))
        .output()
        .expect("find runs");
    !found.stdout.is_empty()
}

/// One episode takes every process and inotify instance it can, floods memory and spins
/// the CPU; meanwhile a second episode runs commands and cells, and a third is created and
/// works. Process and inotify limits hold per episode with and without root; memory and CPU
/// are bounded where the server can make cgroups (root here, or a delegated subtree).
async fn jupyter_neighbours(run_as: RunAs) {
    let installed = Installed::new(&format!("neighbours-{run_as:?}"));
    let server = start_server(
        &installed,
        run_as,
        &["jupyter", "--max-turns", "100", "--cell-timeout", "120"],
    );
    let new = || NewEpisode::default().env("jupyter").task("classic/0");
    let (neighbour_id, neighbour) = episode(&server, new()).await;
    let (attacker_id, attacker) = episode(&server, new()).await;
    let hog = act(
        &attacker,
        "add_and_execute_code_cell",
        json!({ "code": HOG_CELL }),
    )
    .await;
    let report = text(&hog);
    let count = |name: &str| -> u64 {
        let words: Vec<&str> = report.split_whitespace().collect();
        let at = words.iter().position(|w| *w == name);
        at.and_then(|i| words.get(i + 1)?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} count in {report}"))
    };
    // The attacker hit its own limits: 256 tasks (a few are the kernel's threads), and its
    // inotify instances (32 in a namespace of its own; 128, the host's per-uid limit, for a
    // host uid of its own).
    assert!((200..256).contains(&count("children")), "{report}");
    let instances = count("instances");
    assert!(instances == 32 || instances == 128, "{report}");

    let alive = act(
        &neighbour,
        "execute_shell_command",
        json!({"command": "echo alive"}),
    )
    .await;
    assert!(
        !is_error(&alive) && text(&alive).contains("alive"),
        "a neighbour's command failed beside the hog: {}",
        text(&alive)
    );
    let forks = act(
        &neighbour,
        "add_and_execute_code_cell",
        json!({"code": "import ctypes, os\nlibc = ctypes.CDLL(None)\nassert all(libc.inotify_init() >= 0 for _ in range(8))\npids = [os.fork() or os._exit(0) for _ in range(32)]\nprint('forked', sum(os.waitpid(p, 0)[1] == 0 for p in pids))"}),
    )
    .await;
    assert!(
        text(&forks).contains("forked 32"),
        "a neighbour could not fork or watch beside the hog: {}",
        text(&forks)
    );
    let (third_id, third) = episode(&server, new()).await;
    let answer = act(
        &third,
        "add_and_execute_code_cell",
        json!({"code": "6 * 7"}),
    )
    .await;
    assert!(text(&answer).contains("42"), "{}", text(&answer));
    delete(&server, &third_id).await;
    delete(&server, &attacker_id).await;

    let cgroups = has_cgroups(server.pid());
    let (attacker_id, attacker) = episode(&server, new()).await;
    // Memory: 3 GiB across processes, over the 2 GiB limit of a jail.
    let flood = act(
        &attacker,
        "execute_shell_command",
        json!({"command": MEMORY_FLOOD.replace("@MEM_MB@", "3072")}),
    )
    .await;
    if cgroups {
        assert_held(
            &format!("memory ({run_as:?})"),
            &text(&flood),
            &["memory_flood"],
        );
    } else {
        eprintln!(
            "memory ({run_as:?}): no cgroup to bound a jail's memory as a whole (only per process): {}",
            text(&flood)
        );
    }

    // CPU: eight processes spin in the attacker's jail while the neighbour runs a loop. Each
    // jail is one weight among its siblings however many processes it runs, so the neighbour
    // gets as much of a core as the whole attacker does. Measured as CPU time each jail's
    // cgroup was given over the same window, not as wall time: other work on the machine
    // slows both alike, and would make a wall-time ratio say nothing.
    let spin = act(
        &attacker,
        "add_and_execute_code_cell",
        json!({ "code": CPU_HOG_CELL }),
    )
    .await;
    assert!(text(&spin).contains("spinning 8"), "{}", text(&spin));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = jail_cpu(server.pid());
    let started = std::time::Instant::now();
    let took = timed_loop(&neighbour).await;
    let wall = started.elapsed().as_secs_f64();
    let after = jail_cpu(server.pid());
    let given = |hog: bool| {
        after
            .iter()
            .filter(|jail| jail.hog == hog)
            .map(|jail| {
                let was = before
                    .iter()
                    .find(|b| b.dir == jail.dir)
                    .map_or(0, |b| b.usage_us);
                (jail.usage_us - was) as f64 / 1e6 / wall
            })
            .fold(0.0, f64::max)
    };
    let (hog, neighbour_share) = (given(true), given(false));
    if !cgroups {
        eprintln!(
            "cpu ({run_as:?}): no cgroups, so no CPU share per jail (its loop took {took:.3} s)"
        );
    } else {
        eprintln!(
            "cpu ({run_as:?}): over {wall:.2} s the hog's jail had {hog:.2} cores, the neighbour's {neighbour_share:.2} (its loop took {took:.3} s)"
        );
        assert!(
            after.iter().any(|jail| jail.hog),
            "no jail cgroup of server {} holds the spinning processes",
            server.pid()
        );
        assert!(
            neighbour_share >= 0.5 * hog.min(1.0),
            "beside eight spinning processes a neighbour had {neighbour_share:.2} cores to the hog's {hog:.2}"
        );
    }
    delete(&server, &attacker_id).await;
    delete(&server, &neighbour_id).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn jupyter_neighbours_hold_as_root() {
    if can_run() {
        jupyter_neighbours(RunAs::Root).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn jupyter_neighbours_hold_as_an_ordinary_user() {
    if can_run() {
        jupyter_neighbours(RunAs::User).await;
    }
}

/// A fresh random-looking string without another dependency.
fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{:x}{:x}", nanos, std::process::id())
}

/// Whether the battery can run here: it installs the binary under `/usr/local/bin` and
/// switches user with `setpriv`, both of which need root (CI runs as root).
fn can_run() -> bool {
    // SAFETY: plain system call.
    let root = unsafe { libc::geteuid() == 0 };
    if !root {
        eprintln!("skipped: the escape battery needs root");
    }
    root
}

#[tokio::test(flavor = "multi_thread")]
async fn jupyter_jail_holds_as_root() {
    if can_run() {
        jupyter_battery(RunAs::Root).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn jupyter_jail_holds_as_an_ordinary_user() {
    if can_run() {
        jupyter_battery(RunAs::User).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn desktop_jail_holds_as_root() {
    if can_run() {
        desktop_battery(RunAs::Root).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn desktop_jail_holds_as_an_ordinary_user() {
    if can_run() {
        desktop_battery(RunAs::User).await;
    }
}

/// A server killed outright (SIGKILL) leaves its jails' folders, size-limited home mounts and
/// cgroups behind; the next server to start removes them, and touches nothing of a server
/// that still runs.
#[tokio::test(flavor = "multi_thread")]
async fn what_a_killed_server_left_is_removed_at_the_next_start() {
    if !can_run() {
        return;
    }
    let installed = Installed::new("stale");
    let running = start_server(&installed, RunAs::Root, &["jupyter"]);
    let (_, _client) = episode(&running, NewEpisode::default().task("classic/0")).await;
    let killed = start_server(&installed, RunAs::Root, &["jupyter"]);
    let (_, _killed_client) = episode(&killed, NewEpisode::default().task("classic/0")).await;
    let folder = format!("/tmp/mcpgym-sandbox-{}", killed.pid());
    let mounts_of = |folder: &str| {
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .filter(|l| l.contains(&format!("{folder}/")))
            .count()
    };
    assert!(
        mounts_of(&folder) > 0,
        "the killed server's homes are mounted"
    );
    // SAFETY: plain system call on our own child.
    unsafe { libc::kill(killed.pid() as i32, libc::SIGKILL) };
    std::thread::sleep(Duration::from_millis(500));
    assert!(std::path::Path::new(&folder).exists());

    let mut wordle = Command::new(&installed.path);
    wordle.arg("wordle").env("MCPGYM_TOKEN", TOKEN);
    let next = HttpServer::spawn(wordle);
    assert!(
        !std::path::Path::new(&folder).exists(),
        "the killed server's folder is still there"
    );
    assert_eq!(
        mounts_of(&folder),
        0,
        "the killed server's mounts are still there"
    );
    let cgroups = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ls -d /sys/fs/cgroup/*/mcpgym-{}-* 2>/dev/null",
            killed.pid()
        ))
        .output()
        .unwrap();
    assert!(
        cgroups.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&cgroups.stdout)
    );
    // The server that still runs kept everything.
    let alive = format!("/tmp/mcpgym-sandbox-{}", running.pid());
    assert!(std::path::Path::new(&alive).exists());
    assert!(mounts_of(&alive) > 0);
    drop(next);
}
