//! Qwen3-VL's `computer_use` function: its `arguments`, unchanged.
//!
//! Coordinates are relative, 0–1000 on each axis whatever the screen's size (see
//! [`relative_1000_to_screen`]). Choices where Qwen's description leaves room:
//!
//! - `left_click_drag` names only the end (`coordinate`); Qwen's own harness presses where the
//!   pointer is and drags there, so it becomes [`Action::DragFromPointer`]. If the call also
//!   has `start_coordinate` (some harnesses add it) it is an [`Action::Drag`] from there.
//! - `scroll`/`hscroll` take `pixels`, signed: for `scroll` positive is up (as Qwen's
//!   description says), for `hscroll` positive is right (pyautogui's `hscroll`). Pixels become
//!   wheel clicks by [`pixels_to_clicks`]: `round(|pixels| / 100)`, at least 1, at most 100.
//!   Zero is an error (it would do nothing). An optional `coordinate` scrolls there.
//! - Clicks may omit `coordinate` (click where the pointer is); `mouse_move` needs it.
//! - `wait` without `time` waits 1 second (Qwen's harnesses ignore `time` and wait a fixed
//!   while); with it, 0–100 seconds.
//! - `keys` are pressed together as one chord, the last while the others are held; each name
//!   may be a keysym name, a pyautogui name (`ctrl`, `enter`, `pagedown`, `win`) or itself a
//!   chord (`ctrl+c`). A single string instead of a list is read as an xdotool key sequence.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{
    ActionError, Fields, MAX_TYPE_CHARS, chord_of, clicks_to_pixels, describe, pixels_to_clicks,
};
use crate::action::{Action, MAX_DURATION, MouseButton, Point, ScrollDirection, TerminateStatus};
use crate::keys::{self, Chord, Key};
use crate::scale::{Size, relative_1000_to_screen, screen_to_relative_1000};

/// Every action name [`parse`] accepts (Qwen3-VL's fourteen).
pub const ACTIONS: &[&str] = &[
    "key",
    "type",
    "mouse_move",
    "left_click",
    "left_click_drag",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "scroll",
    "hscroll",
    "wait",
    "terminate",
    "answer",
];

/// How long `wait` lasts when the call gives no `time`.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(1);

/// A valid `computer_use` call of `action`, for error messages.
pub fn example(action: &str) -> String {
    let arguments = match action {
        "key" => json!({"action": "key", "keys": ["ctrl", "s"]}),
        "type" => json!({"action": "type", "text": "Hello, world"}),
        "mouse_move" | "left_click" | "left_click_drag" | "right_click" | "middle_click"
        | "double_click" | "triple_click" => json!({"action": action, "coordinate": [500, 500]}),
        "scroll" => json!({"action": "scroll", "pixels": -300}),
        "hscroll" => json!({"action": "hscroll", "pixels": 300}),
        "wait" => json!({"action": "wait", "time": 1}),
        "terminate" => json!({"action": "terminate", "status": "success"}),
        "answer" => json!({"action": "answer", "text": "42"}),
        _ => json!({"action": "left_click", "coordinate": [500, 500]}),
    };
    json!({"name": "computer_use", "arguments": arguments}).to_string()
}

/// Reads one `computer_use` call's `arguments` into an [`Action`] in pixels of a screen of
/// `screen`'s size.
pub fn parse(arguments: &Map<String, Value>, screen: Size) -> Result<Action, ActionError> {
    let action = match arguments.get("action") {
        Some(Value::String(s)) => s.trim(),
        None | Some(Value::Null) => {
            return Err(ActionError::invalid(
                format!("the call needs `action`, one of: {}", ACTIONS.join(", ")),
                example("left_click"),
            ));
        }
        Some(other) => {
            return Err(ActionError::invalid(
                format!(
                    "`action` must be a string, but {} was given",
                    describe(other)
                ),
                example("left_click"),
            ));
        }
    };
    let f = Fields::new(arguments, example(action));
    let point = |name: &str| -> Result<Option<Point>, ActionError> {
        match f.pair(name)? {
            None => Ok(None),
            Some((x, y)) => relative_1000_to_screen(x, y, screen)
                .map(Some)
                .map_err(|e| f.coordinate_error(e)),
        }
    };
    let click = |button: MouseButton, count: u8| -> Result<Action, ActionError> {
        Ok(Action::Click {
            at: point("coordinate")?,
            button,
            count,
            modifiers: Vec::new(),
        })
    };
    let scroll =
        |positive: ScrollDirection, negative: ScrollDirection| -> Result<Action, ActionError> {
            let pixels = f.require(action, "pixels", f.number("pixels")?)?;
            if pixels == 0.0 {
                return Err(f.error(format!(
                    "`pixels` must not be 0: give a signed amount, e.g. {} or {}",
                    if action == "scroll" {
                        "-300 to scroll down"
                    } else {
                        "300 to scroll right"
                    },
                    if action == "scroll" {
                        "300 to scroll up"
                    } else {
                        "-300 to scroll left"
                    },
                )));
            }
            Ok(Action::Scroll {
                at: point("coordinate")?,
                direction: if pixels > 0.0 { positive } else { negative },
                amount: pixels_to_clicks(pixels),
                modifiers: Vec::new(),
            })
        };
    match action {
        "key" => Ok(Action::Key {
            chords: key_names(&f)?,
        }),
        "type" => Ok(Action::Type {
            text: f.text_to_type(action, "text")?,
        }),
        "mouse_move" => Ok(Action::MouseMove {
            to: f.require(action, "coordinate", point("coordinate")?)?,
        }),
        "left_click" => click(MouseButton::Left, 1),
        "right_click" => click(MouseButton::Right, 1),
        "middle_click" => click(MouseButton::Middle, 1),
        "double_click" => click(MouseButton::Left, 2),
        "triple_click" => click(MouseButton::Left, 3),
        "left_click_drag" => {
            let to = f.require(action, "coordinate", point("coordinate")?)?;
            Ok(match point("start_coordinate")? {
                Some(from) => Action::Drag {
                    path: vec![from, to],
                },
                None => Action::DragFromPointer { to },
            })
        }
        "scroll" => scroll(ScrollDirection::Up, ScrollDirection::Down),
        "hscroll" => scroll(ScrollDirection::Right, ScrollDirection::Left),
        "wait" => Ok(Action::Wait {
            duration: f.seconds("time")?.unwrap_or(DEFAULT_WAIT),
        }),
        "terminate" => Ok(Action::Terminate {
            status: f.status(action)?,
        }),
        "answer" => {
            let text = f.require(action, "text", f.str("text")?)?;
            Ok(Action::Answer {
                text: text.to_string(),
            })
        }
        other => Err(ActionError::invalid(
            format!(
                "\"{other}\" is not an action of computer_use; the actions are: {}",
                ACTIONS.join(", ")
            ),
            example("left_click"),
        )),
    }
}

/// `keys`: a list of names pressed together (one chord), or a string read as xdotool keys.
fn key_names(f: &Fields<'_>) -> Result<Vec<Chord>, ActionError> {
    let value = f.require("key", "keys", f.get("keys"))?;
    match value {
        Value::String(text) => keys::parse_key_sequence(text).map_err(|e| f.key_error(e)),
        Value::Array(items) => {
            let mut names = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) => names.push(s.as_str()),
                    other => {
                        return Err(f.error(format!(
                            "`keys` must be a list of key names, but it holds {}",
                            describe(other)
                        )));
                    }
                }
            }
            if names.is_empty() {
                return Err(f.error("`keys` must name at least one key"));
            }
            chord_of(&names, keys::parse_chord)
                .map(|chord| vec![chord])
                .map_err(|e| f.key_error(e))
        }
        other => Err(f.error(format!(
            "`keys` must be a list of key names, but {} was given",
            describe(other)
        ))),
    }
}

/// The name Qwen (trained on pyautogui's names) is used to for `key`.
fn qwen_key_name(key: Key) -> String {
    let name = key.name();
    let short = match name.as_str() {
        "Control_L" | "Control_R" => "ctrl",
        "Shift_L" | "Shift_R" => "shift",
        "Alt_L" | "Alt_R" => "alt",
        "Super_L" | "Super_R" => "super",
        "Return" => "enter",
        "Escape" => "esc",
        "BackSpace" => "backspace",
        "Delete" => "delete",
        "Tab" => "tab",
        "Page_Up" => "pageup",
        "Page_Down" => "pagedown",
        "Up" => "up",
        "Down" => "down",
        "Left" => "left",
        "Right" => "right",
        "Home" => "home",
        "End" => "end",
        "Insert" => "insert",
        "Caps_Lock" => "capslock",
        _ => return name,
    };
    short.to_string()
}

/// The `computer_use` arguments for `action` on a screen of `screen`'s size, with coordinates
/// written back as 0–1000 relative ones. `None` for what Qwen's function cannot express:
/// clicks with modifiers or other buttons, drags through more than two points, pressing or
/// releasing a button alone, key sequences of more than one chord, held keys, zoom,
/// screenshots and the screen-size and pointer queries. A two-point drag becomes
/// `left_click_drag` with `start_coordinate` (which [`parse`] reads).
pub fn to_arguments(action: &Action, screen: Size) -> Option<Value> {
    let pt = |p: &Point| -> Value {
        let (x, y) = screen_to_relative_1000(*p, screen);
        json!([x, y])
    };
    let with_at = |mut value: Value, at: &Option<Point>| -> Value {
        if let (Some(p), Some(obj)) = (at, value.as_object_mut()) {
            obj.insert("coordinate".into(), pt(p));
        }
        value
    };
    Some(match action {
        Action::MouseMove { to } => json!({"action": "mouse_move", "coordinate": pt(to)}),
        Action::Click {
            at,
            button,
            count,
            modifiers,
        } if modifiers.is_empty() => {
            let name = match (button, count) {
                (MouseButton::Left, 1) => "left_click",
                (MouseButton::Left, 2) => "double_click",
                (MouseButton::Left, 3) => "triple_click",
                (MouseButton::Right, 1) => "right_click",
                (MouseButton::Middle, 1) => "middle_click",
                _ => return None,
            };
            with_at(json!({"action": name}), at)
        }
        Action::DragFromPointer { to } => {
            json!({"action": "left_click_drag", "coordinate": pt(to)})
        }
        Action::Drag { path } => match path.as_slice() {
            [from, to] => json!({
                "action": "left_click_drag",
                "start_coordinate": pt(from),
                "coordinate": pt(to)
            }),
            _ => return None,
        },
        Action::Scroll {
            at,
            direction,
            amount,
            modifiers,
        } if modifiers.is_empty() => {
            let pixels = clicks_to_pixels(*amount);
            let (name, pixels) = match direction {
                ScrollDirection::Up => ("scroll", pixels),
                ScrollDirection::Down => ("scroll", -pixels),
                ScrollDirection::Right => ("hscroll", pixels),
                ScrollDirection::Left => ("hscroll", -pixels),
            };
            with_at(json!({"action": name, "pixels": pixels}), at)
        }
        Action::Type { text } if !text.is_empty() && text.chars().count() <= MAX_TYPE_CHARS => {
            json!({"action": "type", "text": text})
        }
        Action::Key { chords } => match chords.as_slice() {
            [chord] => {
                let mut names: Vec<String> =
                    chord.modifiers.iter().map(|k| qwen_key_name(*k)).collect();
                names.push(qwen_key_name(chord.key));
                json!({"action": "key", "keys": names})
            }
            _ => return None,
        },
        Action::Wait { duration } => {
            json!({"action": "wait", "time": (*duration).min(MAX_DURATION).as_secs_f64()})
        }
        Action::Terminate { status } => json!({
            "action": "terminate",
            "status": match status {
                TerminateStatus::Success => "success",
                TerminateStatus::Failure => "failure",
            }
        }),
        Action::Answer { text } => json!({"action": "answer", "text": text}),
        _ => return None,
    })
}

/// The `computer_use` function's parameters as Qwen-Agent defines them, with the coordinate
/// description saying what the space is (0–1000 relative on each axis). Inline, no `$ref`.
pub fn parameters_schema() -> Map<String, Value> {
    let schema = json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ACTIONS,
                "description": "The action to perform. The available actions are:\n* `key`: Performs key down presses on the arguments passed in order, then performs key releases in reverse order.\n* `type`: Type a string of text on the keyboard.\n* `mouse_move`: Move the cursor to a specified (x, y) coordinate on the screen.\n* `left_click`: Click the left mouse button at a specified (x, y) coordinate on the screen.\n* `left_click_drag`: Click and drag the cursor to a specified (x, y) coordinate on the screen.\n* `right_click`: Click the right mouse button at a specified (x, y) coordinate on the screen.\n* `middle_click`: Click the middle mouse button at a specified (x, y) coordinate on the screen.\n* `double_click`: Double-click the left mouse button at a specified (x, y) coordinate on the screen.\n* `triple_click`: Triple-click the left mouse button at a specified (x, y) coordinate on the screen.\n* `scroll`: Performs a scroll of the mouse scroll wheel.\n* `hscroll`: Performs a horizontal scroll.\n* `wait`: Wait specified seconds for the change to happen.\n* `terminate`: Terminate the current task and report its completion status.\n* `answer`: Answer a question."
            },
            "keys": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Required only by `action=key`. Keys pressed together, e.g. [\"ctrl\", \"c\"] or [\"enter\"]."
            },
            "text": {
                "type": "string",
                "description": "Required only by `action=type` and `action=answer`."
            },
            "coordinate": {
                "type": "array",
                "items": {"type": "number"},
                "description": "(x, y): The x (from the left edge) and y (from the top edge) coordinates to move the mouse to, relative to the screen on a 0-1000 scale: [0, 0] is the top-left corner and [1000, 1000] the bottom-right, whatever the screen's resolution."
            },
            "pixels": {
                "type": "number",
                "description": "The amount of scrolling to perform. Positive values scroll up, negative values scroll down (for hscroll: positive right, negative left); 100 pixels is one wheel click. Required only by `action=scroll` and `action=hscroll`."
            },
            "time": {
                "type": "number",
                "description": "The seconds to wait. Required only by `action=wait`."
            },
            "status": {
                "type": "string",
                "enum": ["success", "failure"],
                "description": "The status of the task. Required only by `action=terminate`."
            }
        },
        "required": ["action"]
    });
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Size = Size::new(1280, 800);

    fn call(value: Value) -> Result<Action, ActionError> {
        match value {
            Value::Object(map) => parse(&map, SCREEN),
            _ => panic!("test input must be an object"),
        }
    }

    fn ok(value: Value) -> Action {
        call(value.clone()).unwrap_or_else(|e| panic!("{value}: {e}"))
    }

    fn err(value: Value) -> String {
        match call(value.clone()) {
            Ok(action) => panic!("{value} parsed as {action:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn p(x: u32, y: u32) -> Point {
        Point { x, y }
    }

    #[test]
    fn every_action() {
        assert_eq!(
            ok(json!({"action": "key", "keys": ["ctrl", "c"]})),
            Action::Key {
                chords: vec![keys::parse_chord("ctrl+c").expect("valid")]
            }
        );
        assert_eq!(
            ok(json!({"action": "key", "keys": ["enter"]})),
            Action::Key {
                chords: vec![keys::parse_chord("Return").expect("valid")]
            }
        );
        assert_eq!(
            ok(json!({"action": "type", "text": "hello"})),
            Action::Type {
                text: "hello".into()
            }
        );
        assert_eq!(
            ok(json!({"action": "mouse_move", "coordinate": [500, 500]})),
            Action::MouseMove { to: p(640, 400) }
        );
        for (name, button, count) in [
            ("left_click", MouseButton::Left, 1),
            ("right_click", MouseButton::Right, 1),
            ("middle_click", MouseButton::Middle, 1),
            ("double_click", MouseButton::Left, 2),
            ("triple_click", MouseButton::Left, 3),
        ] {
            assert_eq!(
                ok(json!({"action": name, "coordinate": [1000, 1000]})),
                Action::Click {
                    at: Some(p(1279, 799)),
                    button,
                    count,
                    modifiers: vec![]
                }
            );
        }
        assert_eq!(
            ok(json!({"action": "left_click_drag", "coordinate": [250, 500]})),
            Action::DragFromPointer { to: p(320, 400) }
        );
        assert_eq!(
            ok(
                json!({"action": "left_click_drag", "start_coordinate": [0, 0], "coordinate": [250, 500]})
            ),
            Action::Drag {
                path: vec![p(0, 0), p(320, 400)]
            }
        );
        assert_eq!(
            ok(json!({"action": "scroll", "pixels": 300})),
            Action::Scroll {
                at: None,
                direction: ScrollDirection::Up,
                amount: 3,
                modifiers: vec![]
            }
        );
        assert_eq!(
            ok(json!({"action": "scroll", "pixels": -5, "coordinate": [500, 500]})),
            Action::Scroll {
                at: Some(p(640, 400)),
                direction: ScrollDirection::Down,
                amount: 1,
                modifiers: vec![]
            }
        );
        assert_eq!(
            ok(json!({"action": "hscroll", "pixels": -200})),
            Action::Scroll {
                at: None,
                direction: ScrollDirection::Left,
                amount: 2,
                modifiers: vec![]
            }
        );
        assert_eq!(
            ok(json!({"action": "wait", "time": 2})),
            Action::Wait {
                duration: Duration::from_secs(2)
            }
        );
        assert_eq!(
            ok(json!({"action": "wait"})),
            Action::Wait {
                duration: DEFAULT_WAIT
            }
        );
        assert_eq!(
            ok(json!({"action": "terminate", "status": "success"})),
            Action::Terminate {
                status: TerminateStatus::Success
            }
        );
        assert_eq!(
            ok(json!({"action": "answer", "text": "Paris"})),
            Action::Answer {
                text: "Paris".into()
            }
        );
    }

    #[test]
    fn bad_inputs() {
        let text = err(json!({"action": "left_click", "coordinate": [1200, 20]}));
        assert!(
            text.contains("0–1000") && text.contains("1280x800"),
            "{text}"
        );
        assert!(text.contains("\"coordinate\":[500,500]"), "{text}");
        let text = err(json!({"action": "key", "keys": ["ctrl", "kc"]}));
        assert!(text.contains("\"kc\" was not understood"), "{text}");
        let text = err(json!({"action": "key"}));
        assert!(text.contains("needs `keys`"), "{text}");
        let text = err(json!({"action": "key", "keys": []}));
        assert!(text.contains("at least one key"), "{text}");
        let text = err(json!({"action": "scroll", "pixels": 0}));
        assert!(text.contains("must not be 0"), "{text}");
        let text = err(json!({"action": "scroll"}));
        assert!(text.contains("needs `pixels`"), "{text}");
        let text = err(json!({"action": "wait", "time": 1000}));
        assert!(text.contains("longest allowed is 100 seconds"), "{text}");
        let text = err(json!({"action": "screenshot"}));
        assert!(text.contains("not an action of computer_use"), "{text}");
        let text = err(json!({"action": "mouse_move"}));
        assert!(text.contains("needs `coordinate`"), "{text}");
    }

    #[test]
    fn to_arguments_inverts_parse() {
        let inputs = [
            json!({"action": "key", "keys": ["ctrl", "shift", "t"]}),
            json!({"action": "key", "keys": ["enter"]}),
            json!({"action": "type", "text": "hi"}),
            json!({"action": "mouse_move", "coordinate": [500, 500]}),
            json!({"action": "left_click", "coordinate": [10, 990]}),
            json!({"action": "triple_click"}),
            json!({"action": "left_click_drag", "coordinate": [300, 300]}),
            json!({"action": "left_click_drag", "start_coordinate": [100, 100], "coordinate": [300, 300]}),
            json!({"action": "scroll", "pixels": -300}),
            json!({"action": "hscroll", "pixels": 200, "coordinate": [500, 500]}),
            json!({"action": "wait", "time": 1.5}),
            json!({"action": "terminate", "status": "failure"}),
            json!({"action": "answer", "text": "yes"}),
        ];
        for input in inputs {
            let action = call(input.clone()).expect("valid");
            let back = to_arguments(&action, SCREEN).expect("representable");
            let again = call(back.clone()).expect("valid again");
            assert_eq!(again, action, "{input} → {back}");
        }
        assert_eq!(
            to_arguments(&ok(json!({"action": "key", "keys": ["ctrl", "c"]})), SCREEN),
            Some(json!({"action": "key", "keys": ["ctrl", "c"]}))
        );
        assert_eq!(to_arguments(&Action::Screenshot, SCREEN), None);
    }

    #[test]
    fn schema() {
        let schema = parameters_schema();
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["properties"]["action"]["enum"]
                .as_array()
                .map(Vec::len),
            Some(ACTIONS.len())
        );
        assert!(
            schema["properties"]["coordinate"]["description"]
                .as_str()
                .is_some_and(|d| d.contains("0-1000"))
        );
        for action in ACTIONS {
            let example: Value = serde_json::from_str(&example(action)).expect("JSON");
            call(example["arguments"].clone()).unwrap_or_else(|e| panic!("{example}: {e}"));
        }
    }
}
