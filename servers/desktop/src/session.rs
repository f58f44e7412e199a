//! One episode's desktop: its display, its worker, its home folder and its jailed
//! applications.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::display::{Display, DisplayError, DisplayPrograms, stop_child};
use crate::scale::Size;
use crate::worker::{Reply, Request, WorkerClient, WorkerCommand, WorkerError};

/// Where the episode's home appears inside the application jail.
pub const JAIL_HOME: &str = "/home/user";

/// The most output `run_command` keeps from each stream.
const COMMAND_OUTPUT_LIMIT: usize = 64 * 1024;

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
}

/// What a command run in the desktop's jail printed.
#[derive(Debug, Clone)]
pub struct CommandOutput {
    /// Its exit code (`None` when killed by a signal or the timeout).
    pub exit_code: Option<i32>,
    /// Standard output (cut to 64 KiB).
    pub stdout: String,
    /// Standard error (cut to 64 KiB).
    pub stderr: String,
    /// Whether the timeout stopped it.
    pub timed_out: bool,
}

/// One episode's running desktop.
#[derive(Debug)]
pub struct Desktop {
    display: Display,
    worker: WorkerClient,
    apps: Vec<Child>,
    folder: PathBuf,
    home: PathBuf,
    screen: Size,
    bwrap: PathBuf,
}

impl Desktop {
    /// Makes the episode's folder (`<root>/<name>/home`), writes `files` into the home, starts
    /// the display and the worker, and launches `apps` in the jail.
    pub async fn start(
        config: &DesktopConfig,
        name: &str,
        files: &[(&str, &str)],
        apps: &[&[&str]],
    ) -> Result<Self, DesktopError> {
        let folder = config.root.join(name);
        let home = folder.join("home");
        let scratch = folder.join("wm");
        for dir in [&home, &scratch] {
            tokio::fs::create_dir_all(dir)
                .await
                .map_err(|source| DesktopError::Io {
                    action: "create",
                    path: dir.clone(),
                    source,
                })?;
        }
        let started = Self::start_in(config, &folder, &home, &scratch, files, apps).await;
        if started.is_err() {
            let _ = tokio::fs::remove_dir_all(&folder).await;
        }
        started
    }

    async fn start_in(
        config: &DesktopConfig,
        folder: &Path,
        home: &Path,
        scratch: &Path,
        files: &[(&str, &str)],
        apps: &[&[&str]],
    ) -> Result<Self, DesktopError> {
        for (relative, text) in files {
            write_home_file(home, relative, text).await?;
        }
        let started = std::time::Instant::now();
        let display = match &config.display {
            DisplayChoice::Virtual(size) => {
                Display::start_virtual(*size, &config.programs, scratch).await?
            }
            DisplayChoice::Existing(name) => Display::existing(name)?,
        };
        let mut desktop = Desktop {
            worker: WorkerClient::spawn(&config.worker, display.name())?,
            display,
            apps: Vec::new(),
            folder: folder.to_owned(),
            home: home.to_owned(),
            screen: Size {
                width: 0,
                height: 0,
            },
            bwrap: config.bwrap.clone(),
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
            desktop.wait_for_window_manager().await;
        }
        for argv in apps {
            if let Err(e) = desktop.launch(argv) {
                desktop.stop().await;
                return Err(e);
            }
        }
        Ok(desktop)
    }

    /// Waits (up to five seconds) until a window manager publishes its client list.
    async fn wait_for_window_manager(&mut self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while tokio::time::Instant::now() < deadline {
            match self.worker.request(&Request::Windows).await {
                Ok(Reply::Windows {
                    window_manager: true,
                    ..
                })
                | Err(_) => return,
                Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
        tracing::warn!(
            display = self.display.name(),
            "the window manager did not start in time"
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

    /// Starts an application in the jail, in the background.
    pub fn launch(&mut self, argv: &[&str]) -> Result<(), DesktopError> {
        let Some(program) = argv.first() else {
            return Ok(());
        };
        let child = self
            .jailed(argv.iter().map(OsString::from))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| DesktopError::Launch {
                program: (*program).to_owned(),
                source,
            })?;
        self.apps.push(child);
        Ok(())
    }

    /// Runs a shell command in the jail (as the applications see the desktop), with a
    /// timeout.
    pub async fn run_command(
        &self,
        command: &str,
        timeout: Duration,
    ) -> Result<CommandOutput, DesktopError> {
        let child = self
            .jailed(["/bin/sh".into(), "-c".into(), command.into()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| DesktopError::Launch {
                program: "/bin/sh".into(),
                source,
            })?;
        let pid = child.id();
        match tokio::time::timeout(timeout, child.wait_with_output()).await {
            Ok(Ok(output)) => Ok(CommandOutput {
                exit_code: output.status.code(),
                stdout: cut(&output.stdout),
                stderr: cut(&output.stderr),
                timed_out: false,
            }),
            Ok(Err(source)) => Err(DesktopError::Launch {
                program: "/bin/sh".into(),
                source,
            }),
            Err(_) => {
                // The future (and with it the child, kill_on_drop) is gone; make sure of the
                // whole jail.
                if let Some(pid) = pid {
                    // SAFETY: kill(2) on the process group the jail leads.
                    unsafe {
                        libc::kill(-(pid as i32), libc::SIGKILL);
                    }
                }
                Ok(CommandOutput {
                    exit_code: None,
                    stdout: String::new(),
                    stderr: String::new(),
                    timed_out: true,
                })
            }
        }
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

    /// A command for the application jail: the host's system read-only, the episode's home
    /// at [`JAIL_HOME`], a private `/tmp` holding only this display's socket, nothing of other
    /// episodes, no network, its own PID namespace, killed with the server.
    fn jailed(&self, argv: impl IntoIterator<Item = OsString>) -> Command {
        let socket = self.display.socket_path();
        let mut command = Command::new(&self.bwrap);
        command
            .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
            .args(["--tmpfs", "/tmp", "--tmpfs", "/home", "--tmpfs", "/root"])
            .args(["--dir", "/tmp/.X11-unix", "--ro-bind"])
            .arg(&socket)
            .arg(&socket)
            .arg("--bind")
            .arg(&self.home)
            .arg(JAIL_HOME);
        // Other episodes' folders live under the root; when it is not under /tmp, hide it.
        if let Some(root) = self.folder.parent()
            && !root.starts_with("/tmp")
        {
            command.arg("--tmpfs").arg(root);
        }
        command
            .args(["--unshare-pid", "--unshare-net", "--unshare-uts"])
            .args([
                "--die-with-parent",
                "--new-session",
                "--chdir",
                JAIL_HOME,
                "--",
            ])
            .args(argv)
            .env_clear()
            .env("DISPLAY", self.display.name())
            .env("HOME", JAIL_HOME)
            .env("USER", "user")
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LANG", "C.UTF-8")
            .env("GSETTINGS_BACKEND", "memory")
            .env("NO_AT_BRIDGE", "1")
            .env("XDG_RUNTIME_DIR", "/tmp")
            .process_group(0)
            .kill_on_drop(true);
        command
    }

    /// Stops the applications, the worker and the display, and removes the episode's folder.
    pub async fn stop(self) {
        let Desktop {
            display,
            worker,
            apps,
            folder,
            ..
        } = self;
        for app in apps {
            stop_child(app).await;
        }
        worker.stop().await;
        display.stop().await;
        let _ = tokio::fs::remove_dir_all(&folder).await;
    }
}

/// Writes a task file under the home, refusing paths that are absolute or climb out.
async fn write_home_file(home: &Path, relative: &str, text: &str) -> Result<(), DesktopError> {
    let path = Path::new(relative);
    if relative.is_empty()
        || !path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(DesktopError::BadPath(relative.to_owned()));
    }
    let target = home.join(path);
    if let Some(parent) = target.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|source| DesktopError::Io {
                action: "create",
                path: parent.to_owned(),
                source,
            })?;
    }
    tokio::fs::write(&target, text)
        .await
        .map_err(|source| DesktopError::Io {
            action: "write",
            path: target,
            source,
        })
}

/// Lossy UTF-8, cut to [`COMMAND_OUTPUT_LIMIT`] bytes on a character boundary.
fn cut(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.len() <= COMMAND_OUTPUT_LIMIT {
        return text.into_owned();
    }
    let mut end = COMMAND_OUTPUT_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[… {} more bytes cut]", &text[..end], text.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn task_files_stay_inside_the_home() {
        let dir = std::env::temp_dir().join(format!("mcpgym-desktop-test-{}", std::process::id()));
        let home = dir.join("home");
        write_home_file(&home, "a/b.txt", "hi").await.unwrap();
        assert_eq!(std::fs::read_to_string(home.join("a/b.txt")).unwrap(), "hi");
        for bad in ["", "/etc/passwd", "../x", "a/../../x"] {
            assert!(matches!(
                write_home_file(&home, bad, "x").await,
                Err(DesktopError::BadPath(_))
            ));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_output_is_cut_with_a_marker() {
        let long = "é".repeat(COMMAND_OUTPUT_LIMIT);
        let text = cut(long.as_bytes());
        assert!(text.len() < COMMAND_OUTPUT_LIMIT + 100);
        assert!(
            text.ends_with("more bytes cut]"),
            "{}",
            &text[text.len() - 40..]
        );
    }
}
