//! X displays: a private Xvfb server with a window manager per episode, or an existing display.

use std::io::BufRead;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mcpgym_jail::HostUser;
use tokio::process::{Child, Command};

use crate::scale::Size;

/// How long Xvfb may take to announce its display number.
const XVFB_START_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a display could not be had.
#[derive(Debug, thiserror::Error)]
pub enum DisplayError {
    /// A program could not be started (not installed?).
    #[error(
        "cannot start {program}: {source}; install it with the project's setup script (.ci/setup)"
    )]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// Xvfb started but never announced a display.
    #[error("Xvfb did not start: {0}")]
    Xvfb(String),
    /// The window manager's configuration could not be written to the episode's folder.
    #[error("cannot write the window manager's configuration {path}: {source}")]
    WindowManagerConfig {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A display name that is not `:N`.
    #[error("invalid display {0:?}: give it as :N (e.g. :0)")]
    BadName(String),
    /// An existing display that does not accept a connection.
    #[error(
        "cannot connect to display {name}: {reason}; is its X server running, and may this user connect to it?"
    )]
    Unreachable {
        /// The display, `:N`.
        name: String,
        /// Why.
        reason: String,
    },
}

/// The programs a virtual display runs.
#[derive(Debug, Clone)]
pub struct DisplayPrograms {
    /// The X server (`Xvfb`).
    pub xvfb: PathBuf,
    /// The window manager (`openbox`), or `None` for none.
    pub window_manager: Option<PathBuf>,
    /// The panel with a window list and a clock (`tint2`), or `None` for none.
    pub panel: Option<PathBuf>,
    /// The program that paints the wallpaper (`hsetroot`), or `None` for a black screen.
    pub wallpaper: Option<PathBuf>,
    /// Bubblewrap, to run the window manager under the jails' host name
    /// ([`mcpgym_jail::HOSTNAME`]); `None` runs it under the host's. Openbox appends
    /// "(hostname)" to the title of every window from another machine, and the applications'
    /// jails name another machine.
    pub hostname_wrapper: Option<PathBuf>,
}

impl Default for DisplayPrograms {
    fn default() -> Self {
        Self {
            xvfb: "Xvfb".into(),
            window_manager: Some("openbox".into()),
            panel: Some("tint2".into()),
            wallpaper: Some("hsetroot".into()),
            hostname_wrapper: Some("bwrap".into()),
        }
    }
}

/// The panel's configuration: a window list and a clock, and nothing that starts a program (no
/// launchers, no executors, no clock commands): it runs outside the jail.
const PANEL_RC: &str = include_str!("tint2rc");

/// The wallpaper: a vertical gradient, as `hsetroot` arguments.
const WALLPAPER: &[&str] = &["-add", "#1d3557", "-add", "#457b9d", "-gradient", "0"];

/// Openbox's configuration for an episode's display: it runs outside the jail, so it offers
/// no menu or key binding that starts a program (see the file's comment).
const OPENBOX_RC: &str = include_str!("openbox-rc.xml");
const OPENBOX_EMPTY_MENU: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<openbox_menu xmlns=\"http://openbox.org/3.4/menu\"/>\n";

/// Writes the window manager's configuration and its empty menu into `scratch`, returning the
/// configuration's path.
async fn write_window_manager_config(scratch: &Path) -> Result<PathBuf, DisplayError> {
    let menu = scratch.join("openbox-menu.xml");
    let rc = scratch.join("openbox-rc.xml");
    let rc_text = OPENBOX_RC.replace("@MENU@", &menu.to_string_lossy());
    for (path, text) in [(&menu, OPENBOX_EMPTY_MENU), (&rc, rc_text.as_str())] {
        tokio::fs::write(path, text)
            .await
            .map_err(|source| DisplayError::WindowManagerConfig {
                path: path.clone(),
                source,
            })?;
    }
    Ok(rc)
}

/// A running X display: either one this process started (and stops when dropped) or an
/// existing one it only connects to.
#[derive(Debug)]
pub struct Display {
    name: String,
    number: u32,
    // Held so dropping the display kills them (kill_on_drop).
    xvfb: Option<Child>,
    window_manager: Option<Child>,
    // The panel.
    furniture: Vec<Child>,
    // An existing display's X server resets (dropping every window and refusing connections
    // for a moment) whenever its last client leaves; between an episode's programs that can
    // happen at any time, so a connection is held open for the display's lifetime.
    _keep_alive: Option<KeepAlive>,
}

/// An idle X connection, held only so the server never sees its last client leave.
struct KeepAlive(#[allow(dead_code)] x11rb::rust_connection::RustConnection);

impl std::fmt::Debug for KeepAlive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeepAlive")
    }
}

impl Display {
    /// Starts a private Xvfb display of `size` (24-bit colour, listening only on its unix
    /// socket) and, if configured, a window manager on it. `scratch` is a folder the window
    /// manager may use as its home.
    ///
    /// With `run_as` (the episode's leased host user, when the server is root) both run as
    /// that unprivileged user with no-new-privileges, so nothing on the display side holds
    /// host root; `scratch` must then belong to it.
    pub async fn start_virtual(
        size: Size,
        programs: &DisplayPrograms,
        scratch: &Path,
        run_as: Option<HostUser>,
    ) -> Result<Self, DisplayError> {
        if run_as.is_some() {
            socket_dir()?;
        }
        let (number, xvfb) = start_xvfb(size, &programs.xvfb, run_as).await?;
        let name = format!(":{number}");
        let window_manager = match &programs.window_manager {
            Some(program) => Some(
                unprivileged(&mut with_jail_hostname(program, programs), run_as)
                    .arg("--sm-disable")
                    .arg("--config-file")
                    .arg(write_window_manager_config(scratch).await?)
                    .env_clear()
                    .env("DISPLAY", &name)
                    .env("HOME", scratch)
                    .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .process_group(0)
                    .kill_on_drop(true)
                    .spawn()
                    .map_err(|source| DisplayError::Spawn {
                        program: program.display().to_string(),
                        source,
                    })?,
            ),
            None => None,
        };
        let mut furniture = Vec::new();
        if let Some(program) = &programs.wallpaper {
            // Paints the root window and exits; the X server keeps the picture.
            if let Some(mut child) = spawn_furniture(program, WALLPAPER, &name, scratch, run_as) {
                let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            }
        }
        if let Some(program) = &programs.panel {
            let rc = scratch.join("tint2rc");
            match tokio::fs::write(&rc, PANEL_RC).await {
                Ok(()) => {
                    let rc = rc.to_string_lossy().into_owned();
                    furniture.extend(spawn_furniture(
                        program,
                        &["-c", &rc],
                        &name,
                        scratch,
                        run_as,
                    ));
                }
                Err(error) => tracing::warn!(%error, "cannot write the panel's configuration"),
            }
        }
        Ok(Self {
            name,
            number,
            xvfb: Some(xvfb),
            window_manager,
            furniture,
            _keep_alive: None,
        })
    }

    /// An existing display (`:N`), which this process neither starts nor stops; it holds a
    /// connection to it while it lives, so the X server does not reset between programs.
    pub async fn existing(name: &str) -> Result<Self, DisplayError> {
        let number = parse_display_name(name)?;
        let name = format!(":{number}");
        let target = name.clone();
        let connection = tokio::task::spawn_blocking(move || x11rb::connect(Some(&target)))
            .await
            .map_err(|e| e.to_string())
            .and_then(|connected| connected.map_err(|e| e.to_string()))
            .map_err(|reason| DisplayError::Unreachable {
                name: name.clone(),
                reason,
            })?;
        Ok(Self {
            name,
            number,
            xvfb: None,
            window_manager: None,
            furniture: Vec::new(),
            _keep_alive: Some(KeepAlive(connection.0)),
        })
    }

    /// The display's name, e.g. `:7`, as `DISPLAY` takes it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The path of the display's unix socket (bound into application jails).
    pub fn socket_path(&self) -> PathBuf {
        PathBuf::from(format!("/tmp/.X11-unix/X{}", self.number))
    }

    /// Whether this process started the display (and so owns it).
    pub fn is_virtual(&self) -> bool {
        self.xvfb.is_some()
    }

    /// Whether the X server is still running (always `true` for an existing display).
    pub fn is_alive(&mut self) -> bool {
        match &mut self.xvfb {
            Some(child) => matches!(child.try_wait(), Ok(None)),
            None => true,
        }
    }

    /// The X server's process id, for virtual displays.
    pub fn server_pid(&self) -> Option<u32> {
        self.xvfb.as_ref().and_then(Child::id)
    }

    /// Stops the window manager and the X server and waits for them.
    pub async fn stop(mut self) {
        for child in self.furniture.drain(..) {
            stop_child(child).await;
        }
        for child in [self.window_manager.take(), self.xvfb.take()]
            .into_iter()
            .flatten()
        {
            stop_child(child).await;
        }
    }
}

/// A command running `program` under the jails' host name when a wrapper is configured.
fn with_jail_hostname(program: &Path, programs: &DisplayPrograms) -> Command {
    match &programs.hostname_wrapper {
        Some(bwrap) => {
            let mut command = Command::new(bwrap);
            command
                .args(["--dev-bind", "/", "/", "--unshare-uts", "--hostname"])
                .arg(mcpgym_jail::HOSTNAME)
                .args(["--die-with-parent", "--"])
                .arg(program);
            command
        }
        None => Command::new(program),
    }
}

/// Starts a piece of the desktop's furniture (panel, wallpaper) on display `name`, like the
/// window manager: as the episode's user when there is one, in its own process group. A
/// missing program leaves the desktop plainer, not broken: it is logged and skipped.
fn spawn_furniture(
    program: &Path,
    args: &[&str],
    name: &str,
    scratch: &Path,
    run_as: Option<HostUser>,
) -> Option<Child> {
    let spawned = unprivileged(&mut Command::new(program), run_as)
        .args(args)
        .env_clear()
        .env("DISPLAY", name)
        .env("HOME", scratch)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn();
    match spawned {
        Ok(child) => Some(child),
        Err(error) => {
            tracing::warn!(program = %program.display(), %error, "cannot start part of the desktop (run .ci/setup to install it)");
            None
        }
    }
}

/// Kills a child's process group and reaps it.
pub(crate) async fn stop_child(mut child: Child) {
    if let Some(pid) = child.id() {
        // SAFETY: plain kill(2) on the group this child leads (spawned with process_group(0)).
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
    }
    let _ = child.kill().await;
}

/// Makes a child run as `run_as` (if any) with no-new-privileges, and get SIGKILL when this
/// process dies, however it dies (a crash or SIGKILL leaves no chance to clean up, and an X
/// server must not outlive its episode).
pub(crate) fn unprivileged(command: &mut Command, run_as: Option<HostUser>) -> &mut Command {
    // SAFETY: only async-signal-safe system calls.
    unsafe {
        command.pre_exec(move || drop_privileges(run_as).and_then(|()| die_with_parent_now()))
    }
}

/// Makes a child get SIGKILL when this process dies (see [`unprivileged`]).
pub(crate) fn die_with_parent(command: &mut Command) -> &mut Command {
    unprivileged(command, None)
}

/// Becomes `run_as` (groups, gid, then uid) and forbids gaining privileges on exec.
fn drop_privileges(run_as: Option<HostUser>) -> std::io::Result<()> {
    let Some(user) = run_as else {
        return Ok(());
    };
    // SAFETY: plain system calls, async-signal-safe.
    unsafe {
        if libc::setgroups(0, std::ptr::null()) != 0
            || libc::setgid(user.gid) != 0
            || libc::setuid(user.uid) != 0
            || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Makes sure `/tmp/.X11-unix` exists, owned by root and world-writable with the sticky bit,
/// before an unprivileged X server needs to make its socket there.
fn socket_dir() -> Result<(), DisplayError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = Path::new("/tmp/.X11-unix");
    let made = std::fs::DirBuilder::new().mode(0o1777).create(dir);
    let fix = || std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777));
    match made {
        // The umask took bits away from the mode.
        Ok(()) => fix(),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
    .map_err(|e| DisplayError::Xvfb(format!("cannot prepare {}: {e}", dir.display())))
}

/// Sets PR_SET_PDEATHSIG; after any change of user, which clears it.
fn die_with_parent_now() -> std::io::Result<()> {
    // SAFETY: prctl(PR_SET_PDEATHSIG) only changes this (child) process's own settings.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `:N` → N.
pub fn parse_display_name(name: &str) -> Result<u32, DisplayError> {
    name.strip_prefix(':')
        .and_then(|rest| rest.split('.').next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| DisplayError::BadName(name.to_owned()))
}

/// Starts Xvfb with `-displayfd`, so the server picks a free display number itself and
/// announces it once it accepts connections (no polling, no races between episodes).
async fn start_xvfb(
    size: Size,
    program: &Path,
    run_as: Option<HostUser>,
) -> Result<(u32, Child), DisplayError> {
    let (read_end, write_end) = pipe().map_err(|e| DisplayError::Xvfb(e.to_string()))?;
    let write_fd = write_end.as_raw_fd();
    let mut command = Command::new(program);
    command
        .args(["-displayfd", "3", "-screen", "0"])
        .arg(format!("{}x{}x24", size.width, size.height))
        // The abstract "local" socket stays on: binding it is what makes -displayfd skip
        // numbers in use (the filesystem socket would be silently replaced). Jails have no
        // network namespace in common with the host, so they reach only the socket bound in.
        .args(["-nolisten", "tcp", "-noreset"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    // SAFETY: dup2, setuid and prctl are async-signal-safe; dup2 puts the pipe's write end at fd 3 in the child
    // (without close-on-exec) for -displayfd.
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(write_fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            drop_privileges(run_as)?;
            die_with_parent_now()
        });
    }
    let child = command.spawn().map_err(|source| DisplayError::Spawn {
        program: program.display().to_string(),
        source,
    })?;
    drop(write_end);
    let read = tokio::task::spawn_blocking(move || {
        // One line, not EOF: the number is all we need.
        let mut reader = std::io::BufReader::new(std::fs::File::from(read_end));
        let mut text = String::new();
        reader.read_line(&mut text).map(|_| text)
    });
    let text = match tokio::time::timeout(XVFB_START_TIMEOUT, read).await {
        Ok(Ok(Ok(text))) => text,
        Ok(Ok(Err(e))) => return Err(DisplayError::Xvfb(e.to_string())),
        Ok(Err(e)) => return Err(DisplayError::Xvfb(e.to_string())),
        Err(_) => {
            stop_child(child).await;
            return Err(DisplayError::Xvfb(format!(
                "no display announced within {XVFB_START_TIMEOUT:?}"
            )));
        }
    };
    match text.trim().parse() {
        Ok(number) => Ok((number, child)),
        Err(_) => {
            stop_child(child).await;
            Err(DisplayError::Xvfb(
                "it exited before announcing a display (is another X server using every number, or is /tmp/.X11-unix not writable?)".into(),
            ))
        }
    }
}

/// A pipe whose both ends close on exec.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two new descriptors into `fds`, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names() {
        assert_eq!(parse_display_name(":0").unwrap(), 0);
        assert_eq!(parse_display_name(":12.0").unwrap(), 12);
        assert!(parse_display_name("12").is_err());
        assert!(parse_display_name(":x").is_err());
    }
}
