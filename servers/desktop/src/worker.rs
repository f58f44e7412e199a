//! The per-episode worker process: screenshots (xcap) and input (enigo) on one display.
//!
//! xcap reads `$DISPLAY` from the process environment at every capture, so two episodes
//! cannot share a process: each gets a worker started with its own `DISPLAY` (the binary's
//! hidden `desktop-worker` subcommand calls [`serve_stdio`]). The parent speaks to it with one
//! JSON line per request and per response over pipes ([`WorkerClient`]); a crash in a worker
//! (a display that died, say) ends only that episode.

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use base64::Engine;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::action::{MouseButton, Rect};
use crate::keyboard::{Keymap, Stroke};
use crate::keys::Key;

/// Time a request may take beyond its own pauses and typing before the worker is presumed
/// hung.
const REQUEST_MARGIN: Duration = Duration::from_secs(30);

/// How long clients get to reread the keyboard map after a spare keycode is bound.
const BIND_SETTLE: Duration = Duration::from_millis(100);

/// Which way a key or button goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Press {
    /// Down.
    Press,
    /// Up.
    Release,
    /// Down then up.
    Click,
}

/// One low-level input event, in screen pixels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum InputStep {
    /// Move the pointer to an absolute position.
    MoveTo {
        /// Pixels from the left.
        x: u32,
        /// Pixels from the top.
        y: u32,
    },
    /// A mouse button.
    Button {
        /// Which.
        button: MouseButton,
        /// Which way.
        press: Press,
    },
    /// A key, by X keysym.
    Key {
        /// The keysym.
        keysym: u32,
        /// Which way.
        press: Press,
    },
    /// Unicode text.
    Text {
        /// The text.
        text: String,
    },
    /// Wheel clicks: positive is down (or right when `horizontal`).
    Scroll {
        /// Signed clicks.
        clicks: i32,
        /// Horizontal wheel.
        horizontal: bool,
    },
    /// Pause between events.
    Sleep {
        /// Milliseconds.
        ms: u64,
    },
}

/// What the parent asks a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The screen's size.
    ScreenSize,
    /// A PNG screenshot of the screen or a region, optionally resized.
    Capture {
        /// A region in screen pixels; `None` for the whole screen.
        region: Option<Rect>,
        /// Resize to this width and height before encoding; `None` keeps the captured size.
        resize_to: Option<(u32, u32)>,
    },
    /// Input events, in order.
    Input {
        /// The events.
        steps: Vec<InputStep>,
    },
    /// The pointer's position.
    Cursor,
    /// The titles of the display's windows.
    Windows,
}

impl Request {
    /// How long the worker may take to answer: the request's own pauses, about 30 ms per
    /// typed character (XTEST delays each press and release), and a margin.
    pub fn budget(&self) -> Duration {
        let own = match self {
            Request::Input { steps } => steps
                .iter()
                .map(|step| match step {
                    InputStep::Sleep { ms } => Duration::from_millis(*ms),
                    InputStep::Text { text } => {
                        Duration::from_millis(30) * text.chars().count() as u32
                    }
                    _ => Duration::from_millis(50),
                })
                .sum(),
            _ => Duration::ZERO,
        };
        own + REQUEST_MARGIN
    }
}

/// What a worker answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// The screen's size.
    Size {
        /// Pixels.
        width: u32,
        /// Pixels.
        height: u32,
    },
    /// A PNG, base64-encoded (as MCP image content carries it).
    Png {
        /// The PNG's bytes in base64.
        base64: String,
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
    },
    /// Input done.
    Done,
    /// The pointer.
    Cursor {
        /// Pixels from the left.
        x: i32,
        /// Pixels from the top.
        y: i32,
    },
    /// Window titles, top-level windows only.
    Windows {
        /// Titles (empty titles left out).
        titles: Vec<String>,
        /// Whether keyboard input has a window to go to: a window has the focus, or there
        /// is no window manager to give it (input then follows the pointer).
        focused: bool,
        /// Whether a window manager runs (it publishes its client list).
        window_manager: bool,
        /// How many docks (the panel) the window manager lists.
        #[serde(default)]
        docks: usize,
    },
    /// The request failed; the display may be gone.
    Error {
        /// What went wrong.
        message: String,
    },
}

/// Why a request to a worker failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The worker could not be started.
    #[error("cannot start the desktop worker {program:?}: {source}")]
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The worker exited or closed its pipes (its display probably died).
    #[error("the desktop's worker stopped (the display is gone)")]
    Gone,
    /// The worker did not answer in time.
    #[error("the desktop's worker did not answer within {0:?}")]
    Timeout(Duration),
    /// The worker answered with an error.
    #[error("{0}")]
    Failed(String),
    /// The worker answered something unexpected.
    #[error("the desktop's worker answered {0}")]
    Protocol(String),
}

/// How to start a worker: a program and its arguments (by default this binary's hidden
/// `desktop-worker` subcommand).
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
}

impl WorkerCommand {
    /// This executable with the `desktop-worker` subcommand.
    pub fn current_exe() -> std::io::Result<Self> {
        Ok(Self {
            program: std::env::current_exe()?,
            args: vec!["desktop-worker".into()],
        })
    }
}

/// The parent's end of one worker.
#[derive(Debug)]
pub struct WorkerClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl WorkerClient {
    /// Starts a worker on `display` (e.g. `:7`).
    pub fn spawn(command: &WorkerCommand, display: &str) -> Result<Self, WorkerError> {
        let mut child = crate::display::die_with_parent(&mut Command::new(&command.program))
            .args(&command.args)
            .env("DISPLAY", display)
            // xcap would pick Wayland if these were set.
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("XDG_SESSION_TYPE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| WorkerError::Spawn {
                program: command.program.clone(),
                source,
            })?;
        let stdin = child.stdin.take().ok_or(WorkerError::Gone)?;
        let stdout =
            BufReader::with_capacity(256 * 1024, child.stdout.take().ok_or(WorkerError::Gone)?);
        Ok(Self {
            child,
            stdin,
            stdout,
            line: String::new(),
        })
    }

    /// Sends one request and waits for its reply. An `Error` reply becomes
    /// [`WorkerError::Failed`].
    pub async fn request(&mut self, request: &Request) -> Result<Reply, WorkerError> {
        let mut line =
            serde_json::to_vec(request).map_err(|e| WorkerError::Protocol(e.to_string()))?;
        line.push(b'\n');
        let exchange = async {
            self.stdin
                .write_all(&line)
                .await
                .map_err(|_| WorkerError::Gone)?;
            self.stdin.flush().await.map_err(|_| WorkerError::Gone)?;
            self.line.clear();
            let read = self
                .stdout
                .read_line(&mut self.line)
                .await
                .map_err(|_| WorkerError::Gone)?;
            if read == 0 {
                return Err(WorkerError::Gone);
            }
            serde_json::from_str::<Reply>(&self.line)
                .map_err(|e| WorkerError::Protocol(format!("an unreadable line: {e}")))
        };
        let budget = request.budget();
        match tokio::time::timeout(budget, exchange).await {
            Ok(Ok(Reply::Error { message })) => Err(WorkerError::Failed(message)),
            Ok(result) => result,
            Err(_) => Err(WorkerError::Timeout(budget)),
        }
    }

    /// Whether the worker process is still running.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Stops the worker.
    pub async fn stop(mut self) {
        drop(self.stdin);
        // Give it a moment to exit on EOF (releasing held keys), then make sure.
        if tokio::time::timeout(Duration::from_millis(500), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// The worker's main loop: one JSON request per stdin line, one JSON reply per stdout line,
/// until stdin closes. Runs in its own process with `DISPLAY` set to its episode's display.
pub fn serve_stdio() -> std::io::Result<()> {
    let display = std::env::var("DISPLAY").unwrap_or_default();
    let mut devices = Devices::new(display);
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::BufWriter::with_capacity(256 * 1024, std::io::stdout().lock());
    for line in stdin.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Request>(&line) {
            Ok(request) => devices.handle(request),
            Err(e) => Reply::Error {
                message: format!("unreadable request: {e}"),
            },
        };
        serde_json::to_writer(&mut stdout, &reply)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
    }
    Ok(())
}

/// The worker's connections to its display, opened on first use.
struct Devices {
    display: String,
    enigo: Option<enigo::Enigo>,
    typist: Option<Typist>,
    monitor: Option<xcap::Monitor>,
}

impl Devices {
    fn new(display: String) -> Self {
        Self {
            display,
            enigo: None,
            typist: None,
            monitor: None,
        }
    }

    fn handle(&mut self, request: Request) -> Reply {
        let result = match request {
            Request::ScreenSize => self
                .screen_size()
                .map(|(width, height)| Reply::Size { width, height }),
            Request::Capture { region, resize_to } => self.capture(region, resize_to),
            Request::Input { steps } => self.input(&steps).map(|()| Reply::Done),
            Request::Cursor => self.cursor(),
            Request::Windows => windows(&self.display),
        };
        result.unwrap_or_else(|message| Reply::Error { message })
    }

    fn monitor(&mut self) -> Result<&xcap::Monitor, String> {
        if self.monitor.is_none() {
            let monitors = xcap::Monitor::all()
                .map_err(|e| format!("cannot reach display {}: {e}", self.display))?;
            let monitor = monitors
                .into_iter()
                .next()
                .ok_or_else(|| format!("display {} has no screen", self.display))?;
            self.monitor = Some(monitor);
        }
        Ok(self.monitor.as_ref().expect("set above"))
    }

    fn screen_size(&mut self) -> Result<(u32, u32), String> {
        let monitor = self.monitor()?;
        let width = monitor.width().map_err(|e| e.to_string())?;
        let height = monitor.height().map_err(|e| e.to_string())?;
        Ok((width, height))
    }

    fn capture(
        &mut self,
        region: Option<Rect>,
        resize_to: Option<(u32, u32)>,
    ) -> Result<Reply, String> {
        let display = self.display.clone();
        let monitor = self.monitor()?;
        let captured = match region {
            None => monitor.capture_image(),
            Some(r) => monitor.capture_region(r.x1, r.y1, r.x2 - r.x1, r.y2 - r.y1),
        }
        .map_err(|e| format!("cannot capture display {display}: {e}"))?;
        let image = match resize_to {
            Some((width, height)) if (width, height) != captured.dimensions() => {
                image::imageops::resize(
                    &captured,
                    width,
                    height,
                    image::imageops::FilterType::Triangle,
                )
            }
            _ => captured,
        };
        let (width, height) = image.dimensions();
        let png = encode_png(image.as_raw(), width, height)?;
        Ok(Reply::Png {
            base64: base64::engine::general_purpose::STANDARD.encode(png),
            width,
            height,
        })
    }

    fn enigo(&mut self) -> Result<&mut enigo::Enigo, String> {
        if self.enigo.is_none() {
            let settings = enigo::Settings {
                x11_display: Some(self.display.clone()),
                ..enigo::Settings::default()
            };
            let enigo = enigo::Enigo::new(&settings)
                .map_err(|e| format!("cannot reach display {} for input: {e}", self.display))?;
            self.enigo = Some(enigo);
        }
        Ok(self.enigo.as_mut().expect("set above"))
    }

    fn input(&mut self, steps: &[InputStep]) -> Result<(), String> {
        use enigo::{Axis, Coordinate, Direction, Mouse};
        let direction = |press: Press| match press {
            Press::Press => Direction::Press,
            Press::Release => Direction::Release,
            Press::Click => Direction::Click,
        };
        let display = self.display.clone();
        if self.typist.is_none() {
            self.typist = Some(Typist::connect(&display)?);
        }
        self.enigo()?;
        let enigo = self.enigo.as_mut().expect("set above");
        let typist = self.typist.as_mut().expect("set above");
        for step in steps {
            let result = match step {
                InputStep::MoveTo { x, y } => {
                    enigo.move_mouse(*x as i32, *y as i32, Coordinate::Abs)
                }
                InputStep::Button { button, press } => {
                    let button = match button {
                        MouseButton::Left => enigo::Button::Left,
                        MouseButton::Right => enigo::Button::Right,
                        MouseButton::Middle => enigo::Button::Middle,
                        MouseButton::Back => enigo::Button::Back,
                        MouseButton::Forward => enigo::Button::Forward,
                    };
                    enigo.button(button, direction(*press))
                }
                InputStep::Key { keysym, press } => {
                    typist.key(enigo, *keysym, direction(*press))?;
                    Ok(())
                }
                InputStep::Text { text } => {
                    for c in text.chars() {
                        typist.key(enigo, Key::from_char(c).keysym, Direction::Click)?;
                    }
                    Ok(())
                }
                InputStep::Scroll { clicks, horizontal } => enigo.scroll(
                    *clicks,
                    if *horizontal {
                        Axis::Horizontal
                    } else {
                        Axis::Vertical
                    },
                ),
                InputStep::Sleep { ms } => {
                    std::thread::sleep(Duration::from_millis(*ms));
                    Ok(())
                }
            };
            result.map_err(|e| format!("input failed on display {display}: {e}"))?;
        }
        Ok(())
    }

    fn cursor(&mut self) -> Result<Reply, String> {
        use enigo::Mouse;
        let (x, y) = self
            .enigo()?
            .location()
            .map_err(|e| format!("cannot read the pointer: {e}"))?;
        Ok(Reply::Cursor { x, y })
    }
}

/// The display's keyboard map, and the keys the worker holds down on it.
struct Typist {
    conn: x11rb::rust_connection::RustConnection,
    map: Keymap,
    /// Keycodes pressed and not yet released.
    held: Vec<u8>,
    /// Keycodes pressed with a Shift the worker added for them, released with them.
    shifted: Vec<u8>,
}

impl Typist {
    fn connect(display: &str) -> Result<Self, String> {
        use x11rb::connection::Connection;
        use x11rb::protocol::xproto::ConnectionExt;
        let failed =
            |e: &dyn std::fmt::Display| format!("cannot read the keyboard map of {display}: {e}");
        let (conn, _) = x11rb::connect(Some(display)).map_err(|e| failed(&e))?;
        let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
        let reply = conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(|e| failed(&e))?
            .reply()
            .map_err(|e| failed(&e))?;
        let map = Keymap::new(min, reply.keysyms_per_keycode, reply.keysyms);
        Ok(Self {
            conn,
            map,
            held: Vec::new(),
            shifted: Vec::new(),
        })
    }

    /// Presses, releases or clicks the key typing `keysym`, holding Shift for it when the
    /// map has it on a key's second level, binding a spare keycode when the map lacks it.
    fn key(
        &mut self,
        enigo: &mut enigo::Enigo,
        keysym: u32,
        direction: enigo::Direction,
    ) -> Result<(), String> {
        use enigo::{Direction, Keyboard};
        let failed = |e: &dyn std::fmt::Display| format!("cannot press key 0x{keysym:x}: {e}");
        let stroke = self.map.stroke(keysym, &self.held).ok_or_else(|| {
            format!("cannot press key 0x{keysym:x}: every spare keycode is held down; release some keys first")
        })?;
        if let Stroke::Bind(keycode) = stroke {
            self.bind(keycode, keysym).map_err(|e| failed(&e))?;
        }
        let keycode = stroke.keycode();
        let shift = match (stroke, self.map.shift()) {
            (Stroke::Shifted(_), Some(shift)) if !self.held.contains(&shift) => Some(shift),
            _ => None,
        };
        let mut raw = |keycode: u8, direction| {
            enigo
                .raw(u16::from(keycode), direction)
                .map_err(|e| failed(&e))
        };
        match direction {
            Direction::Press => {
                if let Some(shift) = shift {
                    raw(shift, Direction::Press)?;
                    self.shifted.push(keycode);
                }
                raw(keycode, Direction::Press)?;
                self.held.push(keycode);
            }
            Direction::Release => {
                raw(keycode, Direction::Release)?;
                self.held.retain(|&k| k != keycode);
                if let Some(at) = self.shifted.iter().position(|&k| k == keycode) {
                    self.shifted.remove(at);
                    if let Some(shift) = self.map.shift() {
                        raw(shift, Direction::Release)?;
                    }
                }
            }
            Direction::Click => {
                if let Some(shift) = shift {
                    raw(shift, Direction::Press)?;
                }
                raw(keycode, Direction::Click)?;
                if let Some(shift) = shift {
                    raw(shift, Direction::Release)?;
                }
            }
        }
        Ok(())
    }

    /// Binds `keysym` to `keycode` on both levels, then gives clients a moment to reread the
    /// map before the key is pressed.
    fn bind(&self, keycode: u8, keysym: u32) -> Result<(), String> {
        use x11rb::protocol::xproto::ConnectionExt;
        use x11rb::wrapper::ConnectionExt as _;
        self.conn
            .change_keyboard_mapping(1, keycode, 2, &[keysym, keysym])
            .map_err(|e| e.to_string())?;
        self.conn.sync().map_err(|e| e.to_string())?;
        std::thread::sleep(BIND_SETTLE);
        Ok(())
    }
}

/// Titles of the display's managed windows, from the window manager's `_NET_CLIENT_LIST`
/// (or, with no window manager, the root's mapped children): `_NET_WM_NAME` (UTF-8) where
/// set, else `WM_NAME` whatever its encoding.
fn windows(display: &str) -> Result<Reply, String> {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{AtomEnum, ConnectionExt, MapState};
    let failed = |e: &dyn std::fmt::Display| format!("cannot list windows on {display}: {e}");
    let (conn, screen) = x11rb::connect(Some(display)).map_err(|e| failed(&e))?;
    let root = conn.setup().roots[screen].root;
    let atom = |name: &str| -> Result<u32, String> {
        Ok(conn
            .intern_atom(false, name.as_bytes())
            .map_err(|e| failed(&e))?
            .reply()
            .map_err(|e| failed(&e))?
            .atom)
    };
    let (client_list, net_wm_name, utf8) = (
        atom("_NET_CLIENT_LIST")?,
        atom("_NET_WM_NAME")?,
        atom("UTF8_STRING")?,
    );
    let property = |window: u32, name: u32, kind: u32| {
        conn.get_property(false, window, name, kind, 0, 4096)
            .ok()
            .and_then(|cookie| cookie.reply().ok())
    };
    let managed: Option<Vec<u32>> = property(root, client_list, AtomEnum::WINDOW.into())
        .filter(|reply| reply.type_ != u32::from(AtomEnum::NONE))
        .and_then(|reply| reply.value32().map(Iterator::collect));
    // The window manager names the window it gave the focus (openbox parks the focus on a
    // window of its own until then, so the X focus alone does not tell).
    let active = property(root, atom("_NET_ACTIVE_WINDOW")?, AtomEnum::WINDOW.into())
        .and_then(|reply| reply.value32().and_then(|mut v| v.next()));
    let focused = match (&managed, active) {
        (None, _) => true,
        (Some(windows), Some(active)) if windows.contains(&active) => {
            // And the X focus has really moved there (the property is set first).
            let mut window = conn
                .get_input_focus()
                .map_err(|e| failed(&e))?
                .reply()
                .map_err(|e| failed(&e))?
                .focus;
            let mut inside = false;
            for _ in 0..16 {
                if window == active {
                    inside = true;
                    break;
                }
                match conn.query_tree(window).ok().and_then(|c| c.reply().ok()) {
                    Some(tree) if tree.parent != 0 && tree.parent != root => window = tree.parent,
                    _ => break,
                }
            }
            inside
        }
        _ => false,
    };
    let window_manager = managed.is_some();
    // Without a window manager there is no client list: take the root's mapped children.
    let windows = match managed {
        Some(windows) => windows,
        None => {
            let children = conn
                .query_tree(root)
                .map_err(|e| failed(&e))?
                .reply()
                .map_err(|e| failed(&e))?
                .children;
            children
                .into_iter()
                .filter(|&window| {
                    conn.get_window_attributes(window)
                        .ok()
                        .and_then(|cookie| cookie.reply().ok())
                        .is_some_and(|a| a.map_state == MapState::VIEWABLE)
                })
                .collect()
        }
    };
    // The panel (a dock) and any desktop window are furniture, not the applications' windows.
    let (window_type, dock, desktop) = (
        atom("_NET_WM_WINDOW_TYPE")?,
        atom("_NET_WM_WINDOW_TYPE_DOCK")?,
        atom("_NET_WM_WINDOW_TYPE_DESKTOP")?,
    );
    let types = |window: u32| -> Vec<u32> {
        property(window, window_type, AtomEnum::ATOM.into())
            .and_then(|reply| reply.value32().map(Iterator::collect))
            .unwrap_or_default()
    };
    let mut titles = Vec::new();
    let mut docks = 0;
    for window in windows {
        let kinds = types(window);
        if kinds.contains(&dock) {
            docks += 1;
            continue;
        }
        if kinds.contains(&desktop) {
            continue;
        }
        let title = property(window, net_wm_name, utf8)
            .filter(|reply| !reply.value.is_empty())
            .or_else(|| property(window, AtomEnum::WM_NAME.into(), AtomEnum::ANY.into()))
            .map(|reply| String::from_utf8_lossy(&reply.value).into_owned())
            .unwrap_or_default();
        if !title.is_empty() {
            titles.push(title);
        }
    }
    Ok(Reply::Windows {
        titles,
        focused,
        window_manager,
        docks,
    })
}

/// Encodes RGBA pixels as PNG with the fastest compression (fdeflate): a 1280×800 desktop in
/// a few milliseconds instead of ~30 ms at the default level.
pub fn encode_png(rgba: &[u8], width: u32, height: u32) -> Result<Vec<u8>, String> {
    use image::ImageEncoder;
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    let mut png = Vec::with_capacity(rgba.len() / 8);
    PngEncoder::new_with_quality(&mut png, CompressionType::Fast, FilterType::Adaptive)
        .write_image(rgba, width, height, image::ExtendedColorType::Rgba8)
        .map_err(|e| format!("cannot encode the screenshot: {e}"))?;
    Ok(png)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_are_one_json_line() {
        let request = Request::Input {
            steps: vec![
                InputStep::MoveTo { x: 3, y: 4 },
                InputStep::Button {
                    button: MouseButton::Left,
                    press: Press::Click,
                },
                InputStep::Text {
                    text: "héllo\nworld".into(),
                },
            ],
        };
        let line = serde_json::to_string(&request).unwrap();
        assert!(!line.contains('\n'));
        assert_eq!(serde_json::from_str::<Request>(&line).unwrap(), request);
    }

    #[test]
    fn long_input_gets_a_longer_budget() {
        let short = Request::Input { steps: vec![] }.budget();
        let typing = Request::Input {
            steps: vec![
                InputStep::Text {
                    text: "x".repeat(10_000),
                },
                InputStep::Sleep { ms: 100_000 },
            ],
        };
        assert!(typing.budget() >= short + Duration::from_secs(100 + 300));
        assert_eq!(Request::Cursor.budget(), REQUEST_MARGIN);
    }

    #[test]
    fn png_encoding_round_trips() {
        let mut rgba = vec![255u8; 4 * 64 * 32];
        rgba[0] = 0;
        let png = encode_png(&rgba, 64, 32).unwrap();
        let decoded = image::load_from_memory_with_format(&png, image::ImageFormat::Png)
            .unwrap()
            .to_rgba8();
        assert_eq!(decoded.dimensions(), (64, 32));
        assert_eq!(decoded.as_raw(), &rgba);
    }
}
