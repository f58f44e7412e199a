//! The desktop environment through the real binary and rmcp's client over HTTP: real Xvfb
//! displays, real input events, real applications. Every action is checked by its effect:
//! the pointer where it was sent (read back with xdotool inside the episode), text typed into
//! a real terminal and read back from a file, screenshots that change.

use std::time::Duration;

use crate::common::*;
use crate::desktop_tasks::wait_for;
use base64::Engine;
use mcpgym_desktop::tasks::DemoCondition;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// A task whose desktop is one xterm in the home folder.
const XTERM_TASK: &str = "desktop-train-000";

/// The PNG images of a result, decoded.
fn images(result: &CallToolResult) -> Vec<image::RgbaImage> {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Image(image) => {
                assert_eq!(image.mime_type, "image/png");
                let png = base64::engine::general_purpose::STANDARD
                    .decode(&image.data)
                    .expect("base64");
                Some(
                    image::load_from_memory_with_format(&png, image::ImageFormat::Png)
                        .expect("a PNG")
                        .to_rgba8(),
                )
            }
            _ => None,
        })
        .collect()
}

async fn screenshot(client: &Client) -> image::RgbaImage {
    let result = act(client, "screenshot", json!({})).await;
    assert!(!is_error(&result), "{}", text(&result));
    images(&result).pop().expect("a screenshot")
}

/// Runs a command inside the episode's desktop (servers here run with --allow-shell).
async fn shell(client: &Client, command: &str) -> String {
    let result = act(client, "run_command", json!({ "command": command })).await;
    assert!(!is_error(&result), "{}", text(&result));
    result.structured_content.as_ref().unwrap()["stdout"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The pointer's position on the screen as xdotool (not mcpgym) reads it.
async fn pointer(client: &Client) -> (u32, u32) {
    let out = shell(client, "xdotool getmouselocation --shell").await;
    let get = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {out}"))
    };
    (get("X="), get("Y="))
}

/// Polls a file in the episode's home until it holds something (typing takes a moment to
/// reach the shell), up to five seconds. Each poll is a turn: servers here allow many.
async fn read_file(client: &Client, path: &str) -> String {
    for _ in 0..50 {
        let out = shell(client, &format!("cat {path} 2>/dev/null")).await;
        if !out.is_empty() {
            return out;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    String::new()
}

/// A request for a desktop episode of `task`.
fn desktop(task: &str) -> NewEpisode {
    NewEpisode::default().env("desktop").task(task)
}

async fn episode(server: &HttpServer, task: &str) -> (String, Client) {
    let id = server.create(desktop(task)).await.id;
    let client = server.legacy_client(&format!("/episodes/{id}/mcp")).await;
    // Reading the task first keeps it off the top of the next observation.
    let task = act(&client, "get_task", json!({})).await;
    assert!(!is_error(&task), "{}", text(&task));
    (id, client)
}

fn differing_pixels(a: &image::RgbaImage, b: &image::RgbaImage) -> usize {
    a.pixels().zip(b.pixels()).filter(|(x, y)| x != y).count()
}

#[tokio::test]
async fn actions_have_their_effects_on_a_real_desktop() {
    let server = HttpServer::start(&["desktop", "--max-turns", "1000", "--allow-shell"]);
    let (_, client) = episode(&server, XTERM_TASK).await;

    let size = act(&client, "get_screen_size", json!({})).await;
    assert_eq!(text(&size).trim_end(), "1280x800");
    let before = screenshot(&client).await;
    assert_eq!(before.dimensions(), (1280, 800));

    // mouse_move puts the X pointer exactly there; cursor_position agrees.
    let moved = act(&client, "mouse_move", json!({"coordinate": [321, 234]})).await;
    assert!(!is_error(&moved), "{}", text(&moved));
    assert_eq!(images(&moved).len(), 1, "action tools return a screenshot");
    assert_eq!(pointer(&client).await, (321, 234));
    let position = act(&client, "cursor_position", json!({})).await;
    assert!(
        text(&position).contains("X=321,Y=234"),
        "{}",
        text(&position)
    );

    // Typing (with Unicode) and a key reach the terminal's shell, which writes a file.
    let typed = act(
        &client,
        "type",
        json!({"text": "printf 'héllo ✓' > typed.txt"}),
    )
    .await;
    assert!(!is_error(&typed), "{}", text(&typed));
    let enter = act(&client, "key", json!({"text": "Return"})).await;
    assert!(!is_error(&enter), "{}", text(&enter));
    assert_eq!(read_file(&client, "typed.txt").await, "héllo ✓");

    // Every printable ASCII character arrives, capitals and shifted symbols with Shift held
    // on their own keys: typing them rebinds no key (é and ✓ above did, on spare keycodes).
    let keymap = shell(&client, "xmodmap -pke").await;
    let ascii: String = (' '..='~').collect();
    act(&client, "type", json!({"text": "cat > ascii.txt\n"})).await;
    act(&client, "type", json!({ "text": format!("{ascii}\n") })).await;
    act(&client, "key", json!({"text": "ctrl+d"})).await;
    assert_eq!(read_file(&client, "ascii.txt").await, format!("{ascii}\n"));
    assert_eq!(shell(&client, "xmodmap -pke").await, keymap);
    let after = screenshot(&client).await;
    assert!(
        differing_pixels(&before, &after) > 100,
        "the terminal's text changed the screen"
    );

    // `keys` is accepted as an alias; chords work (ctrl+u clears the shell's line).
    act(&client, "type", json!({"text": "echo wrong"})).await;
    let chord = act(&client, "key", json!({"keys": "ctrl+u"})).await;
    assert!(!is_error(&chord), "{}", text(&chord));
    act(&client, "type", json!({"text": "echo right > chord.txt\n"})).await;
    assert_eq!(read_file(&client, "chord.txt").await.trim(), "right");

    // hold_key holds: the key auto-repeats while down.
    act(&client, "type", json!({"text": "cat > held.txt\n"})).await;
    let held = act(&client, "hold_key", json!({"text": "x", "duration": 1.2})).await;
    assert!(!is_error(&held), "{}", text(&held));
    act(&client, "key", json!({"text": "Return ctrl+d"})).await;
    let xs = read_file(&client, "held.txt").await;
    assert!(
        xs.trim().len() > 3 && xs.trim().chars().all(|c| c == 'x'),
        "{xs:?}"
    );

    // triple_click is one gesture: xterm selects the whole line into PRIMARY. Rows are 13
    // pixels high in xterm's default font; find the window with xdotool and xwininfo.
    act(&client, "type", json!({"text": "clear\n"})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    act(&client, "type", json!({"text": "echo selectme-line-one\n"})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let geometry = shell(
        &client,
        "xwininfo -id $(xdotool getactivewindow) | awk '/Absolute upper-left X/{print \"X=\"$4} /Absolute upper-left Y/{print \"Y=\"$4}'",
    )
    .await;
    let field = |key: &str| -> u32 {
        geometry
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {geometry}"))
    };
    let (left, top) = (field("X="), field("Y="));
    let row = |r: u32| top + 2 + 13 * r + 6;
    let triple = act(
        &client,
        "triple_click",
        json!({"coordinate": [left + 30, row(1)]}),
    )
    .await;
    assert!(!is_error(&triple), "{}", text(&triple));
    let primary = shell(&client, "xclip -o -selection primary").await;
    assert_eq!(primary.trim_end(), "selectme-line-one");

    // left_mouse_down / up really press and release: a drag selects part of a row. (Past
    // xterm's multi-click interval first, or the press would count as a fourth click.)
    tokio::time::sleep(Duration::from_millis(600)).await;
    act(
        &client,
        "left_mouse_down",
        json!({"coordinate": [left + 2, row(1)]}),
    )
    .await;
    act(
        &client,
        "mouse_move",
        json!({"coordinate": [left + 20, row(1)]}),
    )
    .await;
    let up = act(
        &client,
        "left_mouse_up",
        json!({"coordinate": [left + 38, row(1)]}),
    )
    .await;
    assert!(!is_error(&up), "{}", text(&up));
    let primary = shell(&client, "xclip -o -selection primary").await;
    assert!(
        "selectme-line-one".starts_with(&primary) && primary.len() >= 4,
        "{primary:?}"
    );

    // scroll moves xterm's scrollback; the screen changes, and back again.
    act(&client, "type", json!({"text": "seq 1 300\n"})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let bottom = screenshot(&client).await;
    let scrolled = act(
        &client,
        "scroll",
        json!({"coordinate": [640, 400], "scroll_direction": "up", "scroll_amount": 5}),
    )
    .await;
    assert!(!is_error(&scrolled), "{}", text(&scrolled));
    let up_image = images(&scrolled).pop().unwrap();
    assert!(differing_pixels(&bottom, &up_image) > 100);

    // zoom returns the region at full resolution; the computer tool takes Anthropic input.
    let zoom = act(&client, "zoom", json!({"region": [0, 0, 200, 100]})).await;
    assert_eq!(images(&zoom).pop().unwrap().dimensions(), (200, 100));
    let computer = act(
        &client,
        "computer",
        json!({"action": "mouse_move", "coordinate": [10, 700]}),
    )
    .await;
    assert!(!is_error(&computer), "{}", text(&computer));
    assert_eq!(pointer(&client).await, (10, 700));

    // Clear errors for bad input; the episode goes on.
    let outside = act(&client, "left_click", json!({"coordinate": [1280, 10]})).await;
    assert!(is_error(&outside));
    assert!(text(&outside).contains("1280x800"), "{}", text(&outside));
    let key = act(&client, "key", json!({"text": "ctrl+nosuchkey"})).await;
    assert!(is_error(&key));
    assert!(text(&key).contains("nosuchkey"), "{}", text(&key));
    let wait = act(&client, "wait", json!({"duration": 101})).await;
    assert!(is_error(&wait));
    assert!(text(&wait).contains("100"), "{}", text(&wait));
    let fine = act(&client, "wait", json!({"duration": 0.1})).await;
    assert!(!is_error(&fine), "{}", text(&fine));
    assert_eq!(images(&fine).len(), 1);
}

#[tokio::test]
async fn two_desktops_typing_at_once_see_only_their_own() {
    let server = HttpServer::start(&["desktop", "--max-turns", "1000", "--allow-shell"]);
    let (_, a) = episode(&server, XTERM_TASK).await;
    let (_, b) = episode(&server, XTERM_TASK).await;
    let line = |who: &str| format!("printf {who}-{who}-{who} > mine.txt\n");
    let (ra, rb) = tokio::join!(
        act(&a, "type", json!({"text": line("alpha")})),
        act(&b, "type", json!({"text": line("bravo")})),
    );
    assert!(!is_error(&ra) && !is_error(&rb));
    assert_eq!(read_file(&a, "mine.txt").await, "alpha-alpha-alpha");
    assert_eq!(read_file(&b, "mine.txt").await, "bravo-bravo-bravo");
    // Each sees one display socket (its own) and none of the other's files.
    assert_eq!(shell(&a, "ls /tmp/.X11-unix | wc -l").await.trim(), "1");
    let other = shell(
        &a,
        "ls /tmp /home; find / -name mine.txt -not -path '/proc/*' 2>/dev/null",
    )
    .await;
    assert_eq!(other.matches("mine.txt").count(), 1, "{other}");
    // The pointers are independent too.
    act(&a, "mouse_move", json!({"coordinate": [100, 100]})).await;
    act(&b, "mouse_move", json!({"coordinate": [900, 600]})).await;
    assert_eq!(pointer(&a).await, (100, 100));
    assert_eq!(pointer(&b).await, (900, 600));
}

#[tokio::test]
async fn scaled_coordinates_land_on_the_right_screen_pixel() {
    let server = HttpServer::start(&[
        "desktop",
        "--max-turns",
        "1000",
        "--allow-shell",
        "--size",
        "1920x1080",
    ]);
    let (_, client) = episode(&server, XTERM_TASK).await;
    let size = text(&act(&client, "get_screen_size", json!({})).await);
    let (w, h): (u32, u32) = {
        let (w, h) = size.trim().split_once('x').unwrap();
        (w.parse().unwrap(), h.parse().unwrap())
    };
    assert!(w <= 1568 && h < 1080, "scaled for the model: {size}");
    let shot = screenshot(&client).await;
    assert_eq!(
        shot.dimensions(),
        (w, h),
        "screenshots come in the model's size"
    );
    for (x, y) in [(0, 0), (w / 2, h / 3), (w - 1, h - 1), (123, 456)] {
        act(&client, "mouse_move", json!({"coordinate": [x, y]})).await;
        let (sx, sy) = pointer(&client).await;
        let expect = |v: u32, model: u32, screen: u32| {
            (((f64::from(v) + 0.5) * f64::from(screen) / f64::from(model)) as u32).min(screen - 1)
        };
        assert_eq!(
            (sx, sy),
            (expect(x, w, 1920), expect(y, h, 1080)),
            "model [{x}, {y}]"
        );
        let back = text(&act(&client, "cursor_position", json!({})).await);
        assert!(
            back.contains(&format!("X={x},Y={y}")),
            "{back} for [{x}, {y}]"
        );
    }
    let outside = act(&client, "mouse_move", json!({"coordinate": [w, 5]})).await;
    assert!(is_error(&outside));
    assert!(
        text(&outside).contains(&format!("{w}x{h}")),
        "{}",
        text(&outside)
    );
}

#[tokio::test]
async fn qwen3vl_actions_use_relative_coordinates() {
    let server = HttpServer::start(&[
        "desktop",
        "--max-turns",
        "1000",
        "--allow-shell",
        "--action-space",
        "qwen3vl",
    ]);
    let (_, client) = episode(&server, XTERM_TASK).await;
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(tools.contains(&"computer_use".to_string()), "{tools:?}");
    let moved = act(
        &client,
        "computer_use",
        json!({"action": "mouse_move", "coordinate": [500, 500]}),
    )
    .await;
    assert!(!is_error(&moved), "{}", text(&moved));
    assert_eq!(pointer(&client).await, (640, 400));
    let corner = act(
        &client,
        "computer_use",
        json!({"action": "mouse_move", "coordinate": [1000, 0]}),
    )
    .await;
    assert!(!is_error(&corner), "{}", text(&corner));
    assert_eq!(pointer(&client).await, (1279, 0));
    act(
        &client,
        "computer_use",
        json!({"action": "type", "text": "printf qwen > q.txt"}),
    )
    .await;
    act(
        &client,
        "computer_use",
        json!({"action": "key", "keys": ["Return"]}),
    )
    .await;
    assert_eq!(read_file(&client, "q.txt").await, "qwen");
    let bad = act(
        &client,
        "computer_use",
        json!({"action": "left_click", "coordinate": [1001, 5]}),
    )
    .await;
    assert!(is_error(&bad), "{}", text(&bad));
    let done = act(
        &client,
        "computer_use",
        json!({"action": "terminate", "status": "success"}),
    )
    .await;
    assert_eq!(step(&done)["done"], true, "{}", text(&done));
}

#[tokio::test]
async fn openai_actions_are_translated() {
    let server = HttpServer::start(&[
        "desktop",
        "--max-turns",
        "1000",
        "--allow-shell",
        "--action-space",
        "openai",
    ]);
    let (_, client) = episode(&server, XTERM_TASK).await;
    let computer = |action: Value| json!({ "action": action });
    let moved = act(
        &client,
        "computer",
        computer(json!({"type": "move", "x": 77, "y": 88})),
    )
    .await;
    assert!(!is_error(&moved), "{}", text(&moved));
    assert_eq!(pointer(&client).await, (77, 88));
    act(
        &client,
        "computer",
        computer(json!({"type": "type", "text": "echo wrong"})),
    )
    .await;
    let keys = act(
        &client,
        "computer",
        computer(json!({"type": "keypress", "keys": ["CTRL", "U"]})),
    )
    .await;
    assert!(!is_error(&keys), "{}", text(&keys));
    act(
        &client,
        "computer",
        computer(json!({"type": "type", "text": "printf openai > o.txt"})),
    )
    .await;
    act(
        &client,
        "computer",
        computer(json!({"type": "keypress", "keys": ["ENTER"]})),
    )
    .await;
    assert_eq!(read_file(&client, "o.txt").await, "openai");
    let click = act(
        &client,
        "computer",
        computer(json!({"type": "click", "x": 300, "y": 200, "button": "left"})),
    )
    .await;
    assert!(!is_error(&click), "{}", text(&click));
    assert_eq!(pointer(&client).await, (300, 200));
    let scroll = act(
        &client,
        "computer",
        computer(json!({"type": "scroll", "x": 300, "y": 200, "scroll_x": 0, "scroll_y": 300})),
    )
    .await;
    assert!(!is_error(&scroll), "{}", text(&scroll));
    let bad = act(
        &client,
        "computer",
        computer(json!({"type": "click", "x": 5000, "y": 1})),
    )
    .await;
    assert!(is_error(&bad), "{}", text(&bad));
}

/// The Xvfb processes that are children of `server`.
fn xvfb_children(server: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ..."
        let Some((comm, rest)) = stat.split_once(") ") else {
            continue;
        };
        let ppid: u32 = rest
            .split(' ')
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if comm.ends_with("(Xvfb") && ppid == server {
            found.push(pid);
        }
    }
    found
}

#[tokio::test]
async fn a_display_that_dies_ends_its_episode_and_others_go_on() {
    let server = HttpServer::start(&["desktop"]);
    let (a, client_a) = episode(&server, XTERM_TASK).await;
    let before = xvfb_children(server.pid());
    let (_, client_b) = episode(&server, XTERM_TASK).await;
    let b_display: Vec<u32> = xvfb_children(server.pid())
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(b_display.len(), 1);
    // Kill A's display (every Xvfb that is not B's).
    for pid in xvfb_children(server.pid()) {
        if !b_display.contains(&pid) {
            std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .unwrap();
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let broken = act(&client_a, "left_click", json!({"coordinate": [10, 10]})).await;
    assert!(is_error(&broken));
    assert!(text(&broken).contains("display"), "{}", text(&broken));
    assert_eq!(step(&broken)["done"], true);
    // The environment failed, not the agent: aborted, with no grade paid.
    assert_eq!(step(&broken)["aborted"], true);
    assert_eq!(step(&broken)["reward_components"], json!({}));
    let status = server.status(&a).await;
    assert_eq!((status.done, status.aborted), (true, true));
    let trajectory = server.trajectory(&a).await;
    let last: Value = serde_json::from_str(trajectory.lines().last().unwrap()).unwrap();
    assert_eq!(last["aborted"], true);
    // B is untouched.
    assert_eq!(screenshot(&client_b).await.dimensions(), (1280, 800));
}

/// An Xvfb display of the test's own, stopped when dropped.
struct OwnDisplay(std::process::Child, u32);

impl OwnDisplay {
    fn start() -> Self {
        use std::io::Read;
        let (mut reader, writer) = std::io::pipe().unwrap();
        let mut child = std::process::Command::new("Xvfb")
            .args([
                "-displayfd",
                "3",
                "-screen",
                "0",
                "1024x768x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn_with_fd3(writer);
        let mut number = String::new();
        let mut byte = [0u8; 1];
        while reader.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            number.push(byte[0] as char);
        }
        let number = number.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("Xvfb did not start")
        });
        Self(child, number)
    }
}

impl Drop for OwnDisplay {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Spawning with a pipe at fd 3 (for Xvfb's -displayfd).
trait SpawnWithFd3 {
    fn spawn_with_fd3(&mut self, fd: std::io::PipeWriter) -> std::process::Child;
}

impl SpawnWithFd3 for std::process::Command {
    fn spawn_with_fd3(&mut self, fd: std::io::PipeWriter) -> std::process::Child {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let raw = fd.as_raw_fd();
        // SAFETY: dup2 is async-signal-safe.
        unsafe {
            self.pre_exec(move || {
                if libc::dup2(raw, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = self.spawn().expect("start Xvfb");
        drop(fd);
        child
    }
}

#[tokio::test]
async fn an_existing_display_serves_one_episode_at_a_time() {
    let display = OwnDisplay::start();
    let name = format!(":{}", display.1);
    let server = HttpServer::start(&["desktop", "--display", &name]);
    let (first, client) = episode(&server, XTERM_TASK).await;
    assert_eq!(screenshot(&client).await.dimensions(), (1024, 768));
    let busy = server
        .control()
        .create_episode(&desktop(XTERM_TASK))
        .await
        .unwrap_err();
    assert_eq!(busy.status().map(|s| s.as_u16()), Some(503));
    assert!(
        busy.to_string().contains("in use by another episode"),
        "{busy}"
    );
    // Once the first episode is gone, the display takes the next.
    server.close(&first).await;
    let (_, next) = episode(&server, XTERM_TASK).await;
    assert_eq!(screenshot(&next).await.dimensions(), (1024, 768));
}

/// The window manager runs outside the jail: the desktop's background must offer no menu
/// (Debian's root menu opens where the pointer is, its first entries a terminal and a browser
/// started outside the jail).
#[tokio::test]
async fn the_background_offers_no_menu_that_starts_programs() {
    let server = HttpServer::start(&["desktop", "--max-turns", "1000"]);
    let (_, client) = episode(&server, XTERM_TASK).await;
    let before = screenshot(&client).await;
    // A corner of the background, away from the task's centred window. A menu, or a window
    // it started, covers thousands of pixels; the screenshot each action returns shows it.
    for button in ["right_click", "middle_click"] {
        let clicked = act(&client, button, json!({"coordinate": [4, 640]})).await;
        assert!(!is_error(&clicked), "{}", text(&clicked));
        let changed = differing_pixels(&before, &images(&clicked)[0]);
        assert!(
            changed < 2_000,
            "{button}: {changed} pixels changed: a menu appeared"
        );
        // Where the menu's first entry ("Terminal emulator") would be.
        act(&client, "left_click", json!({"coordinate": [40, 650]})).await;
    }
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let changed = differing_pixels(&before, &screenshot(&client).await);
    assert!(
        changed < 2_000,
        "{changed} pixels changed: a window appeared"
    );
}

/// The processes named `name` (their `comm`) that descend from `root`.
fn descendants_named(root: u32, name: &str) -> Vec<u32> {
    let mut parent = std::collections::HashMap::new();
    let mut comm = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let (Some(open), Some((head, rest))) = (stat.find('('), stat.rsplit_once(") ")) else {
            continue;
        };
        let ppid: u32 = rest
            .split(' ')
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        parent.insert(pid, ppid);
        comm.insert(pid, head[open + 1..].to_owned());
    }
    let descends = |mut pid: u32| {
        for _ in 0..64 {
            match parent.get(&pid) {
                Some(&p) if p == root => return true,
                Some(&p) if p > 1 => pid = p,
                _ => return false,
            }
        }
        false
    };
    comm.iter()
        .filter(|(pid, c)| c.as_str() == name && descends(**pid))
        .map(|(pid, _)| *pid)
        .collect()
}

/// The network interfaces a process sees (its network namespace's).
fn interfaces(pid: u32) -> Vec<String> {
    let dev = std::fs::read_to_string(format!("/proc/{pid}/net/dev")).unwrap_or_default();
    dev.lines()
        .skip(2)
        .filter_map(|line| Some(line.split_once(':')?.0.trim().to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_and_the_office_suite_run_jailed_with_only_the_tasks_pages() {
    let folder = std::env::temp_dir().join(format!("mcpgym-app-jail-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("tasks.jsonl");
    let tasks = [
        json!({"id": "web", "prompt": "Look at the page.", "apps": ["browser"],
               "pages": [{"path": "index.html", "body": "<title>Local page</title><p>hello"}],
               "checks": [{"kind": "page_request", "method": "GET", "path": "/"},
                          {"kind": "window_title_contains", "text": "Local page"}]}),
        json!({"id": "sheet", "prompt": "Look at the sheet.", "apps": ["calc"],
               "checks": [{"kind": "window_title_contains", "text": "LibreOffice Calc"}]}),
    ];
    let lines: Vec<String> = tasks.iter().map(Value::to_string).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let server = HttpServer::start(&[
        "desktop",
        "--tasks",
        file.to_str().unwrap(),
        "--allow-shell",
    ]);
    let host_net = std::fs::read_link("/proc/self/ns/net").unwrap();
    for (task, program, title) in [
        ("web", "chromium", "Local page"),
        ("sheet", "soffice.bin", "LibreOffice Calc"),
    ] {
        let (_, client) = episode(&server, task).await;
        // Once the window shows the page (or the sheet), every process that loaded it runs.
        wait_for(&client, &DemoCondition::Focused(title.into()))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let pids = descendants_named(server.pid(), program);
        assert!(!pids.is_empty(), "no {program} process under the server");
        for pid in pids {
            assert_eq!(
                interfaces(pid),
                ["lo"],
                "{program} {pid} sees more than loopback"
            );
            let net = std::fs::read_link(format!("/proc/{pid}/ns/net")).unwrap();
            assert_ne!(
                net, host_net,
                "{program} {pid} shares the host's network namespace"
            );
        }
        let done = act(&client, "terminate", json!({"status": "success"})).await;
        assert_eq!(step(&done)["reward"], 1.0, "{task}: {}", text(&done));
    }
    let _ = std::fs::remove_dir_all(&folder);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_reaches_the_page_server_and_nothing_else() {
    // The page probes from inside the browser's jail and reports to the page server. Port
    // 8001 on loopback: Chromium refuses low ports outright, which would prove nothing.
    let probe = r#"<title>Probe</title><script>
async function probe(url) {
  try { await fetch(url, {mode: 'no-cors', cache: 'no-store'}); return 'reached'; }
  catch (e) { return 'blocked'; }
}
(async () => {
  const local = await probe('/probe.txt');
  const outside = await probe('http://1.1.1.1/');
  const named = await probe('http://example.com/');
  const loopback = await probe('http://127.0.0.1:8001/');
  location.href = '/report.html?local=' + local + '&outside=' + outside +
    '&named=' + named + '&loopback=' + loopback;
})();
</script>"#;
    let folder = std::env::temp_dir().join(format!("mcpgym-net-probe-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("tasks.jsonl");
    let task = json!({"id": "probe", "prompt": "Look at the page.", "apps": ["browser"],
        "pages": [{"path": "index.html", "body": probe},
                  {"path": "probe.txt", "body": "ok"},
                  {"path": "report.html", "body": "<title>Reported</title>"}],
        "checks": [{"kind": "page_request", "method": "GET", "path": "/report.html",
                    "fields": {"local": "reached", "outside": "blocked",
                               "named": "blocked", "loopback": "blocked"}}]});
    std::fs::write(&file, task.to_string()).unwrap();
    let server = HttpServer::start(&[
        "desktop",
        "--tasks",
        file.to_str().unwrap(),
        "--allow-shell",
    ]);
    let (_, client) = episode(&server, "probe").await;
    // Chromium starts, loads the page, probes and reports: the report page's title shows.
    wait_for(&client, &DemoCondition::Focused("Reported".into()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let done = act(&client, "terminate", json!({"status": "success"})).await;
    assert_eq!(step(&done)["reward"], 1.0, "{}", text(&done));
    let _ = std::fs::remove_dir_all(&folder);
}
