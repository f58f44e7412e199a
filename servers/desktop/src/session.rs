//! One episode's desktop: its display, its worker, its home folder and its jailed
//! applications.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mcpgym_jail::{Bind, HostUser, Jail, JailConfig, Limits, Output, UidLease, UidPool};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use crate::apps::{self, AppContext};
use crate::display::{Display, DisplayError, DisplayPrograms};
use crate::pages::{PageRequest, PageServer};
use crate::scale::Size;
use crate::tasks::Page;
use crate::worker::{Reply, Request, WorkerClient, WorkerCommand, WorkerError};

/// Where the episode's home appears inside the application jail.
pub const JAIL_HOME: &str = mcpgym_jail::HOME;

/// How long a task's setup command may run.
const SETUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of the start and of the end of each `run_command` stream is kept.
const COMMAND_OUTPUT_KEEP: usize = 32 * 1024;

/// What the applications read of the host, besides `/usr`: the dynamic linker's cache,
/// fonts, X resources (xterm's app-defaults), GTK, XDG menus and MIME data (pcmanfm), the
/// time zone, locale aliases, paper sizes (gnumeric), terminal descriptions and the shell's
/// start-up files. Nothing else of `/etc`, and never `/` wholesale.
const SYSTEM_PATHS: &[&str] = &[
    "/usr",
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/locale.alias",
    "/etc/fonts",
    "/etc/X11",
    "/etc/xdg",
    "/etc/gtk-2.0",
    "/etc/gtk-3.0",
    "/etc/mime.types",
    "/etc/magic",
    "/etc/magic.mime",
    "/etc/papersize",
    "/etc/libpaper.d",
    "/etc/terminfo",
    "/etc/inputrc",
    "/etc/bash.bashrc",
    "/etc/profile",
    "/etc/shells",
    "/etc/nsswitch.conf",
];

/// Which display an episode uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisplayChoice {
    /// A private Xvfb display of this size per episode.
    Virtual(Size),
    /// An existing display (`:N`), one episode at a time.
    Existing(String),
}

/// How desktops are made.
#[derive(Debug, Clone)]
pub struct DesktopConfig {
    /// Which display.
    pub display: DisplayChoice,
    /// Xvfb and the window manager.
    pub programs: DisplayPrograms,
    /// How to start a worker.
    pub worker: WorkerCommand,
    /// The bubblewrap program that jails applications.
    pub bwrap: PathBuf,
    /// The folder under which episode homes are made.
    pub root: PathBuf,
    /// Resource limits and quotas of the application jail ([`DesktopConfig::default_limits`]
    /// for the defaults).
    pub limits: Limits,
}

impl DesktopConfig {
    /// The jail's defaults ([`Limits::default`]) with room for GTK: its applications map
    /// large address ranges they never touch, so the address-space limit is 4 GiB and the
    /// cgroup bounds the memory actually used.
    pub fn default_limits() -> Limits {
        Limits {
            memory_bytes: Some(4 << 30),
            ..Limits::default()
        }
    }
}

/// Why a desktop could not start or act.
#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    /// The display.
    #[error(transparent)]
    Display(#[from] DisplayError),
    /// The worker.
    #[error(transparent)]
    Worker(#[from] WorkerError),
    /// A file or folder of the episode.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// On what.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A task file path that is not a plain relative path.
    #[error("task file path {0:?} must be relative and stay inside the home")]
    BadPath(String),
    /// An application could not be started.
    #[error("cannot start {program}: {source}")]
    Launch {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The jail could not be prepared or started.
    #[error(transparent)]
    Jail(#[from] mcpgym_jail::Error),
    /// The task's setup command failed.
    #[error("the task's setup command {reason}")]
    Setup {
        /// What went wrong, with the command's output.
        reason: String,
    },
}

/// What an episode's desktop starts with.
#[derive(Debug, Clone, Copy, Default)]
pub struct Setup<'a> {
    /// Files written into the home, as (path relative to home, contents).
    pub files: &'a [(&'a str, &'a [u8])],
    /// Pages the episode's page server serves (none: no page server).
    pub pages: &'a [Page],
    /// A shell command run in the jail, in the home, before the applications start.
    pub command: Option<&'a str>,
    /// The applications to start, in order (see [`crate::apps`]).
    pub apps: &'a [Vec<String>],
}

/// What a command run in the desktop's jail printed.
#[derive(Debug, Clone)]
pub struct CommandOutput {
    /// Its exit code (`None` when killed by a signal or the timeout).
    pub exit_code: Option<i32>,
    /// Standard output: its first and last 32 KiB, with how much was cut between them.
    pub stdout: String,
    /// Standard error, cut the same way.
    pub stderr: String,
    /// Whether the timeout stopped it.
    pub timed_out: bool,
}

/// One episode's running desktop.
///
/// Applications and commands run in the [jail](mcpgym_jail) shared with the sandbox: a user
/// namespace (as a host uid leased for the episode when the server is root), no capability,
/// a seccomp filter, no-new-privileges, PID, network, IPC and UTS namespaces, rlimits and
/// cgroup limits, a size-limited home (when root), a `/tmp` holding only this display's
/// socket, a size-limited `/dev/shm`, and only the system paths the applications need. The X
/// server and the window manager run outside it (the worker, outside too, connects to them)
/// but as the leased user with no-new-privileges.
#[derive(Debug)]
pub struct Desktop {
    display: Display,
    worker: WorkerClient,
    apps: Vec<Jail>,
    folder: PathBuf,
    home: PathBuf,
    screen: Size,
    jail: JailConfig,
    pages: Option<PageServer>,
    // Released (dropped) only after everything running as the uid is gone.
    lease: Option<UidLease>,
}

impl Desktop {
    /// Makes the episode's folder (`<root>/<name>/home`), writes the setup's files into the
    /// home, starts its page server, the display and the worker, runs its command and
    /// launches its applications in the jail.
    pub async fn start(
        config: &DesktopConfig,
        name: &str,
        setup: Setup<'_>,
    ) -> Result<Self, DesktopError> {
        let lease = if mcpgym_jail::running_as_root() {
            let pool = UidPool::default();
            Some(
                tokio::task::spawn_blocking(move || pool.lease())
                    .await
                    .map_err(|e| DesktopError::Launch {
                        program: "a host uid lease".into(),
                        source: std::io::Error::other(e),
                    })??,
            )
        } else {
            None
        };
        let folder = config.root.join(name);
        let jail = jail_config(config, &folder, lease.as_ref().map(UidLease::user));
        let started = Self::start_in(config, jail, lease, setup).await;
        if started.is_err() {
            remove_folder(folder).await;
        }
        started
    }

    async fn start_in(
        config: &DesktopConfig,
        mut jail: JailConfig,
        lease: Option<UidLease>,
        setup: Setup<'_>,
    ) -> Result<Self, DesktopError> {
        let (folder, home) = (jail.root.clone(), jail.home_dir());
        let user = jail.run_as;
        // The home (a size-limited tmpfs when root), owned by the jail's user.
        jail.prepare().await?;
        let scratch = folder.join("wm");
        tokio::fs::create_dir_all(&scratch)
            .await
            .map_err(|source| DesktopError::Io {
                action: "create",
                path: scratch.clone(),
                source,
            })?;
        chown(&scratch, user)?;
        for (relative, contents) in setup.files {
            write_home_file(&home, relative, contents, user).await?;
        }
        let pages = if setup.pages.is_empty() {
            None
        } else {
            let socket = folder.join("page.sock");
            Some(
                PageServer::start(&socket, setup.pages, user)
                    .await
                    .map_err(|source| DesktopError::Io {
                        action: "serve pages on",
                        path: socket,
                        source,
                    })?,
            )
        };
        let started = std::time::Instant::now();
        let display = match &config.display {
            DisplayChoice::Virtual(size) => {
                Display::start_virtual(*size, &config.programs, &scratch, user).await?
            }
            DisplayChoice::Existing(name) => Display::existing(name).await?,
        };
        let socket = display.socket_path();
        jail.binds.push(Bind {
            source: socket.clone(),
            target: socket,
            writable: false,
        });
        jail.env.push(("DISPLAY".into(), display.name().into()));
        let mut desktop = Desktop {
            worker: WorkerClient::spawn(&config.worker, display.name())?,
            display,
            apps: Vec::new(),
            folder,
            home,
            screen: Size {
                width: 0,
                height: 0,
            },
            jail,
            pages,
            lease,
        };
        tracing::debug!(elapsed = ?started.elapsed(), "display and worker started");
        let size = desktop.worker.request(&Request::ScreenSize).await;
        tracing::debug!(elapsed = ?started.elapsed(), "worker answered");
        match size {
            Ok(Reply::Size { width, height }) => desktop.screen = Size { width, height },
            Ok(other) => {
                desktop.stop().await;
                return Err(WorkerError::Protocol(format!("{other:?} to a size request")).into());
            }
            Err(e) => {
                desktop.stop().await;
                return Err(e.into());
            }
        }
        // A window manager that starts after a window maps adopts it without focusing it, and
        // keys sent then are lost: launch the applications once it runs.
        if desktop.display.is_virtual() && config.programs.window_manager.is_some() {
            desktop
                .wait_for_window_manager(config.programs.panel.is_some())
                .await;
        }
        if let Some(command) = setup.command {
            let failure = match desktop.run_command(command, SETUP_TIMEOUT).await {
                Ok(out) if out.exit_code == Some(0) => None,
                Ok(out) if out.timed_out => Some(format!(
                    "did not finish within {} s",
                    SETUP_TIMEOUT.as_secs()
                )),
                Ok(out) => Some(format!(
                    "exited with {:?}: {}{}",
                    out.exit_code, out.stdout, out.stderr
                )),
                Err(e) => Some(format!("could not start: {e}")),
            };
            if let Some(reason) = failure {
                desktop.stop().await;
                return Err(DesktopError::Setup { reason });
            }
        }
        let apps = setup.apps;
        for (index, argv) in apps.iter().enumerate() {
            let windows_before = desktop.window_count().await;
            if let Err(e) = desktop.launch(argv).await {
                desktop.stop().await;
                return Err(e);
            }
            // Tasks rely on the application launched last having the focus: let each
            // earlier one map its window first, however long its start-up takes.
            if index + 1 < apps.len()
                && let Some(before) = windows_before
            {
                desktop.wait_for_windows(before + 1).await;
            }
        }
        Ok(desktop)
    }

    /// How many titled top-level windows the display has (`None` if the worker cannot say).
    async fn window_count(&mut self) -> Option<usize> {
        match self.worker.request(&Request::Windows).await {
            Ok(Reply::Windows { titles, .. }) => Some(titles.len()),
            _ => None,
        }
    }

    /// Waits (up to ten seconds) until the display has at least `count` titled windows.
    async fn wait_for_windows(&mut self, count: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while tokio::time::Instant::now() < deadline {
            match self.window_count().await {
                Some(n) if n < count => tokio::time::sleep(Duration::from_millis(20)).await,
                _ => return,
            }
        }
        tracing::warn!(
            display = self.display.name(),
            "an application did not open its window in time"
        );
    }

    /// Waits (up to five seconds) until a window manager publishes its client list and, with
    /// a panel, lists the panel: the first screenshot shows the whole desktop, and the
    /// applications' windows are placed beside the panel, not under it.
    async fn wait_for_window_manager(&mut self, panel: bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while tokio::time::Instant::now() < deadline {
            match self.worker.request(&Request::Windows).await {
                Ok(Reply::Windows {
                    window_manager: true,
                    docks,
                    ..
                }) if docks > 0 || !panel => return,
                Err(_) => return,
                Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
        tracing::warn!(
            display = self.display.name(),
            "the window manager or the panel did not start in time"
        );
    }

    /// The screen's size in pixels.
    pub fn screen(&self) -> Size {
        self.screen
    }

    /// The display's name (`:N`).
    pub fn display_name(&self) -> &str {
        self.display.name()
    }

    /// The episode's home folder on the host (what graders read).
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The X server's process id, for a display this process started.
    pub fn server_pid(&self) -> Option<u32> {
        self.display.server_pid()
    }

    /// Whether the display and the worker are still running.
    pub fn is_alive(&mut self) -> bool {
        self.display.is_alive() && self.worker.is_alive()
    }

    /// Sends one request to the worker.
    pub async fn request(&mut self, request: &Request) -> Result<Reply, WorkerError> {
        self.worker.request(request).await
    }

    /// What the episode's page server has received so far (empty without one).
    pub fn page_requests(&self) -> Vec<PageRequest> {
        self.pages
            .as_ref()
            .map(PageServer::requests)
            .unwrap_or_default()
    }

    /// Starts an application in the jail, in the background, set up as [`crate::apps`]
    /// says.
    pub async fn launch(&mut self, argv: &[String]) -> Result<(), DesktopError> {
        if argv.is_empty() {
            return Ok(());
        }
        let context = AppContext {
            folder: &self.folder,
            home: &self.home,
            user: self.jail.run_as,
            page_socket: self.pages.as_ref().map(PageServer::socket),
        };
        let prepared = apps::prepare(argv, &context).await?;
        let mut jail = self.jail.clone();
        jail.binds.extend(prepared.binds);
        jail.env.extend(prepared.env);
        jail.limits.unlimited_address_space |= prepared.unlimited_address_space;
        let argv: Vec<OsString> = prepared.argv.iter().map(OsString::from).collect();
        let jail = Jail::spawn_with(&jail, &argv, Output::Null).await?;
        self.apps.push(jail);
        Ok(())
    }

    /// Runs a shell command in the jail (as the applications see the desktop), with a
    /// timeout that kills the whole jail. Output is cut while it streams: the first and the
    /// last 32 KiB of each stream are kept, never more.
    pub async fn run_command(
        &self,
        command: &str,
        timeout: Duration,
    ) -> Result<CommandOutput, DesktopError> {
        let argv = ["/bin/sh", "-c", command].map(OsString::from);
        let mut jail = Jail::spawn_piped(&self.jail, &argv).await?;
        let (out, err) = jail.take_output().ok_or_else(|| DesktopError::Launch {
            program: "/bin/sh".into(),
            source: std::io::Error::other("no output pipes"),
        })?;
        let (mut stdout, mut stderr) = (HeadTail::default(), HeadTail::default());
        // The pipes close when the jail ends: its init takes every process with it once the
        // shell exits, background ones included.
        let read = async { tokio::join!(stdout.fill(out), stderr.fill(err)) };
        let finished = tokio::time::timeout(timeout, read).await.is_ok();
        let exit_code = if finished {
            match tokio::time::timeout(Duration::from_secs(5), jail.wait()).await {
                Ok(Ok(status)) => status.code(),
                _ => None,
            }
        } else {
            None
        };
        jail.kill().await;
        Ok(CommandOutput {
            exit_code,
            stdout: stdout.text(),
            stderr: stderr.text(),
            timed_out: !finished,
        })
    }

    /// The CLIPBOARD selection's text, read with `xclip` on the episode's display.
    pub async fn clipboard(&self) -> Option<String> {
        let output = Command::new("xclip")
            .args(["-o", "-selection", "clipboard"])
            .env("DISPLAY", self.display.name())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .output();
        match tokio::time::timeout(Duration::from_secs(3), output).await {
            Ok(Ok(output)) if output.status.success() && !output.stdout.is_empty() => {
                Some(String::from_utf8_lossy(&output.stdout).into_owned())
            }
            _ => None,
        }
    }

    /// Stops the applications, the worker and the display, removes the episode's folder
    /// (unmounting its home), then releases its host uid.
    pub async fn stop(self) {
        let Desktop {
            display,
            worker,
            apps,
            folder,
            pages,
            lease,
            ..
        } = self;
        for mut app in apps {
            app.kill().await;
        }
        if let Some(pages) = pages {
            pages.stop().await;
        }
        worker.stop().await;
        display.stop().await;
        remove_folder(folder).await;
        drop(lease);
    }
}

/// The application jail of an episode whose folder is `folder`.
fn jail_config(config: &DesktopConfig, folder: &Path, user: Option<HostUser>) -> JailConfig {
    let mut jail = JailConfig::new(folder);
    jail.bwrap = config.bwrap.clone();
    jail.home = Some(folder.join("home"));
    jail.system_paths = SYSTEM_PATHS.iter().map(PathBuf::from).collect();
    // Other episodes' folders and the server's state live under the root.
    jail.masked_paths.push(config.root.clone());
    jail.run_as = user;
    jail.limits = config.limits.clone();
    jail.env = [
        ("HOME", JAIL_HOME),
        ("USER", "user"),
        ("LOGNAME", "user"),
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("LANG", "C.UTF-8"),
        ("SHELL", "/bin/sh"),
        ("TMPDIR", "/tmp"),
        ("GSETTINGS_BACKEND", "memory"),
        ("NO_AT_BRIDGE", "1"),
        ("XDG_RUNTIME_DIR", "/tmp"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .to_vec();
    jail
}

/// Unmounts and removes an episode's folder, off the async threads.
async fn remove_folder(folder: PathBuf) {
    let removed = tokio::task::spawn_blocking(move || {
        mcpgym_jail::remove_root(&folder).map_err(|e| (folder, e))
    })
    .await;
    if let Ok(Err((folder, error))) = removed {
        tracing::warn!(folder = %folder.display(), %error, "cannot remove an episode's folder");
    }
}

/// Hands a path to the jail's user (when there is one).
pub(crate) fn chown(path: &Path, user: Option<HostUser>) -> Result<(), DesktopError> {
    let Some(user) = user else {
        return Ok(());
    };
    std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid)).map_err(|source| {
        DesktopError::Io {
            action: "chown",
            path: path.to_owned(),
            source,
        }
    })
}

/// Writes a task file under the home, refusing paths that are absolute or climb out; the
/// file and the folders made for it belong to `user`.
async fn write_home_file(
    home: &Path,
    relative: &str,
    contents: &[u8],
    user: Option<HostUser>,
) -> Result<(), DesktopError> {
    let path = Path::new(relative);
    if relative.is_empty()
        || !path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(DesktopError::BadPath(relative.to_owned()));
    }
    let target = home.join(path);
    let mut made = target.parent();
    if let Some(parent) = made {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|source| DesktopError::Io {
                action: "create",
                path: parent.to_owned(),
                source,
            })?;
    }
    tokio::fs::write(&target, contents)
        .await
        .map_err(|source| DesktopError::Io {
            action: "write",
            path: target.clone(),
            source,
        })?;
    chown(&target, user)?;
    while let Some(dir) = made.filter(|d| d.starts_with(home) && *d != home) {
        chown(dir, user)?;
        made = dir.parent();
    }
    Ok(())
}

/// The first and the last [`COMMAND_OUTPUT_KEEP`] bytes of a stream, and how many there were
/// in all: bounded memory however much is written.
#[derive(Debug, Default)]
struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl HeadTail {
    /// Takes in a chunk.
    fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = COMMAND_OUTPUT_KEEP - self.head.len();
        let (first, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(first);
        bytes = rest;
        if bytes.len() >= COMMAND_OUTPUT_KEEP {
            bytes = &bytes[bytes.len() - COMMAND_OUTPUT_KEEP..];
            self.tail.clear();
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(COMMAND_OUTPUT_KEEP);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Reads `stream` to its end (or until the read fails).
    async fn fill(&mut self, mut stream: impl AsyncRead + Unpin) {
        let mut buffer = vec![0; 16 * 1024];
        while let Ok(n @ 1..) = stream.read(&mut buffer).await {
            self.push(&buffer[..n]);
        }
    }

    /// Lossy UTF-8, with a marker where bytes were cut.
    fn text(&self) -> String {
        let cut = self.total - (self.head.len() + self.tail.len()) as u64;
        let (tail, _) = self.tail.as_slices();
        let tail = if tail.len() == self.tail.len() {
            String::from_utf8_lossy(tail).into_owned()
        } else {
            String::from_utf8_lossy(&self.tail.iter().copied().collect::<Vec<u8>>()).into_owned()
        };
        let head = String::from_utf8_lossy(&self.head);
        if cut == 0 {
            format!("{head}{tail}")
        } else {
            format!("{head}\n[… {cut} bytes cut …]\n{tail}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn task_files_stay_inside_the_home() {
        let dir = std::env::temp_dir().join(format!("mcpgym-desktop-test.{}", std::process::id()));
        let home = dir.join("home");
        write_home_file(&home, "a/b.txt", b"hi", None)
            .await
            .unwrap();
        assert_eq!(std::fs::read_to_string(home.join("a/b.txt")).unwrap(), "hi");
        for bad in ["", "/etc/passwd", "../x", "a/../../x"] {
            assert!(matches!(
                write_home_file(&home, bad, b"x", None).await,
                Err(DesktopError::BadPath(_))
            ));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_output_keeps_its_head_and_tail_and_says_the_cut() {
        let mut out = HeadTail::default();
        out.push(b"start ");
        for _ in 0..1000 {
            out.push(&[b'x'; 1000]);
        }
        out.push(b" end");
        assert!(out.head.len() + out.tail.len() <= 2 * COMMAND_OUTPUT_KEEP);
        let text = out.text();
        assert!(text.starts_with("start xx"));
        assert!(text.ends_with("xx end"));
        let cut = 1_000_010 - 2 * COMMAND_OUTPUT_KEEP;
        assert!(
            text.contains(&format!("[… {cut} bytes cut …]")),
            "{}",
            &text[..100]
        );
        let mut short = HeadTail::default();
        short.push("é".as_bytes());
        assert_eq!(short.text(), "é");
    }
}
