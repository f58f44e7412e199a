//! Anthropic's `computer_20251124` action space: the `computer` tool's input, unchanged.
//!
//! Coordinates are in the model's space ([`Scaling::model`], the size reported to Claude as
//! `display_width_px`/`display_height_px`) and are bounds-checked and mapped to screen pixels
//! here. Beyond Anthropic's actions this accepts mcpgym's `get_screen_size` and `terminate`
//! (the reference desktop environment's tools), `keys` as another name for `text` in `key` and
//! `hold_key` (that environment's name), and a coordinate on `left_mouse_down`/`left_mouse_up`
//! (that environment takes one; Anthropic's API would reject it): the pointer moves there first.

use serde_json::{Map, Value, json};

use super::{ActionError, Fields, MAX_SCROLL_AMOUNT, MAX_TYPE_CHARS, chord_of, describe, whole};
use crate::action::{Action, MAX_DURATION, MouseButton, Point, ScrollDirection, TerminateStatus};
use crate::keys::{self, Chord, Key};
use crate::scale::{Scaling, Size};

/// Every action name [`parse`] accepts, Anthropic's first, then mcpgym's two extensions.
pub const ACTIONS: &[&str] = &[
    "screenshot",
    "cursor_position",
    "mouse_move",
    "left_click",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "left_click_drag",
    "left_mouse_down",
    "left_mouse_up",
    "scroll",
    "type",
    "key",
    "hold_key",
    "wait",
    "zoom",
    "get_screen_size",
    "terminate",
];

/// A valid call of `action` for a model space of `model`'s size, for error messages. The
/// coordinates are the screen's centre, so the example is itself in range.
pub fn example(action: &str, model: Size) -> String {
    let (cx, cy) = (model.width / 2, model.height / 2);
    let value = match action {
        "mouse_move" | "left_click" | "right_click" | "middle_click" | "double_click"
        | "triple_click" => {
            json!({"action": action, "coordinate": [cx, cy]})
        }
        "left_click_drag" => json!({
            "action": action,
            "start_coordinate": [cx / 2, cy],
            "coordinate": [cx, cy]
        }),
        "scroll" => json!({
            "action": action,
            "coordinate": [cx, cy],
            "scroll_direction": "down",
            "scroll_amount": 3
        }),
        "type" => json!({"action": action, "text": "Hello, world"}),
        "key" => json!({"action": action, "text": "ctrl+s"}),
        "hold_key" => json!({"action": action, "text": "shift", "duration": 1}),
        "wait" => json!({"action": action, "duration": 1}),
        "zoom" => json!({"action": action, "region": [0, 0, cx, cy]}),
        "terminate" => json!({"action": action, "status": "success"}),
        "cursor_position" | "get_screen_size" | "left_mouse_down" | "left_mouse_up" => {
            json!({"action": action})
        }
        _ => json!({"action": "screenshot"}),
    };
    value.to_string()
}

/// Reads one `computer` tool input into an [`Action`] in screen pixels.
///
/// Unknown fields are ignored; missing or wrongly typed fields, coordinates off the model's
/// screen, unknown keys, scroll amounts outside 1–100, durations outside 0–100 s and texts
/// outside 1–10,000 characters are errors whose text shows a valid call.
pub fn parse(input: &Map<String, Value>, scaling: &Scaling) -> Result<Action, ActionError> {
    let model = scaling.model;
    let action = match input.get("action") {
        Some(Value::String(s)) => s.trim(),
        None | Some(Value::Null) => {
            return Err(ActionError::invalid(
                format!("the call needs `action`, one of: {}", ACTIONS.join(", ")),
                example("screenshot", model),
            ));
        }
        Some(other) => {
            return Err(ActionError::invalid(
                format!(
                    "`action` must be a string, but {} was given",
                    describe(other)
                ),
                example("screenshot", model),
            ));
        }
    };
    let f = Fields::new(input, example(action, model));
    let point = |name: &str| -> Result<Option<Point>, ActionError> {
        match f.pair(name)? {
            None => Ok(None),
            Some((x, y)) => scaling
                .to_screen(whole(x), whole(y))
                .map(Some)
                .map_err(|e| f.coordinate_error(e)),
        }
    };
    let required_point =
        |name: &str| -> Result<Point, ActionError> { f.require(action, name, point(name)?) };
    let click = |button: MouseButton, count: u8| -> Result<Action, ActionError> {
        Ok(Action::Click {
            at: point("coordinate")?,
            button,
            count,
            modifiers: f.modifiers("text")?,
        })
    };
    match action {
        "screenshot" => Ok(Action::Screenshot),
        "cursor_position" => Ok(Action::CursorPosition),
        "get_screen_size" => Ok(Action::ScreenSize),
        "mouse_move" => Ok(Action::MouseMove {
            to: required_point("coordinate")?,
        }),
        "left_click" => click(MouseButton::Left, 1),
        "right_click" => click(MouseButton::Right, 1),
        "middle_click" => click(MouseButton::Middle, 1),
        "double_click" => click(MouseButton::Left, 2),
        "triple_click" => click(MouseButton::Left, 3),
        "left_click_drag" => {
            let to = required_point("coordinate")?;
            // Without a start, drag from where the pointer is, as computer_20241022 did.
            Ok(match point("start_coordinate")? {
                Some(from) => Action::Drag {
                    path: vec![from, to],
                },
                None => Action::DragFromPointer { to },
            })
        }
        "left_mouse_down" => Ok(Action::MouseDown {
            button: MouseButton::Left,
            at: point("coordinate")?,
        }),
        "left_mouse_up" => Ok(Action::MouseUp {
            button: MouseButton::Left,
            at: point("coordinate")?,
        }),
        "scroll" => {
            let direction = scroll_direction(&f)?;
            let amount = scroll_amount(&f)?;
            Ok(Action::Scroll {
                at: point("coordinate")?,
                direction,
                amount,
                modifiers: f.modifiers("text")?,
            })
        }
        "type" => Ok(Action::Type {
            text: f.text_to_type(action, "text")?,
        }),
        "key" => {
            let chords = key_text(&f, action)?;
            Ok(Action::Key { chords })
        }
        "hold_key" => {
            let mut chords = key_text(&f, action)?;
            let duration = f.require(action, "duration", f.seconds("duration")?)?;
            if chords.len() != 1 {
                return Err(f.error(
                    "`hold_key` holds one key or chord (like \"shift\" or \"ctrl+alt\"), not a sequence separated by spaces",
                ));
            }
            let chord = chords.pop().ok_or_else(|| f.error("`text` names no key"))?;
            Ok(Action::HoldKey { chord, duration })
        }
        "wait" => Ok(Action::Wait {
            duration: f.require(action, "duration", f.seconds("duration")?)?,
        }),
        "zoom" => {
            let [x1, y1, x2, y2] = f.require(action, "region", f.quad("region")?)?;
            let region = scaling
                .region_to_screen([whole(x1), whole(y1), whole(x2), whole(y2)])
                .map_err(|e| f.coordinate_error(e))?;
            Ok(Action::Zoom { region })
        }
        "terminate" => Ok(Action::Terminate {
            status: f.status(action)?,
        }),
        other => Err(ActionError::invalid(
            format!(
                "\"{other}\" is not an action of this tool; the actions are: {}",
                ACTIONS.join(", ")
            ),
            example("screenshot", model),
        )),
    }
}

/// `scroll_direction`: required, one of the four.
fn scroll_direction(f: &Fields<'_>) -> Result<ScrollDirection, ActionError> {
    let text = f.require("scroll", "scroll_direction", f.str("scroll_direction")?)?;
    match text.trim().to_ascii_lowercase().as_str() {
        "up" => Ok(ScrollDirection::Up),
        "down" => Ok(ScrollDirection::Down),
        "left" => Ok(ScrollDirection::Left),
        "right" => Ok(ScrollDirection::Right),
        _ => Err(f.error(format!(
            "`scroll_direction` must be \"up\", \"down\", \"left\" or \"right\", but \"{text}\" was given"
        ))),
    }
}

/// `scroll_amount`: required, a whole number of wheel clicks from 1 to 100.
fn scroll_amount(f: &Fields<'_>) -> Result<u32, ActionError> {
    let amount = f.require("scroll", "scroll_amount", f.number("scroll_amount")?)?;
    if amount.fract() != 0.0 || amount < 1.0 || amount > f64::from(MAX_SCROLL_AMOUNT) {
        return Err(f.error(format!(
            "`scroll_amount` is the number of wheel clicks, a whole number from 1 to {MAX_SCROLL_AMOUNT}, but {amount} was given"
        )));
    }
    Ok(amount as u32)
}

/// The keys of `key`/`hold_key`: `text` (Anthropic) or `keys` (the reference environment), as
/// xdotool text; a list in `keys` is one chord pressed together (`["ctrl", "c"]`).
fn key_text(f: &Fields<'_>, action: &str) -> Result<Vec<Chord>, ActionError> {
    if let Some(text) = f.str("text")? {
        return keys::parse_key_sequence(text).map_err(|e| f.key_error(e));
    }
    match f.get("keys") {
        None => Err(f.error(format!(
            "the `{action}` action needs `text`, the key or chord in xdotool syntax such as \"Return\" or \"ctrl+s\""
        ))),
        Some(Value::String(text)) => keys::parse_key_sequence(text).map_err(|e| f.key_error(e)),
        Some(Value::Array(items)) => {
            let mut names = Vec::new();
            for item in items {
                match item {
                    Value::String(s) => names.push(s.as_str()),
                    other => {
                        return Err(f.error(format!(
                            "`keys` must be key names, but it holds {}",
                            describe(other)
                        )));
                    }
                }
            }
            chord_of(&names, keys::parse_chord).map(|c| vec![c]).map_err(|e| f.key_error(e))
        }
        Some(other) => Err(f.error(format!(
            "`text` must be a string of key names, but {} was given",
            describe(other)
        ))),
    }
}

/// The `computer` tool input for `action`, with coordinates written back in the model's space:
/// for harnesses that turn other formats (or recorded actions) into Anthropic's. `None` for
/// what the tool cannot express: a click other than Anthropic's five, a drag through more than
/// two points, mouse buttons other than the left one held or released, a key press of nothing,
/// Qwen's `answer`.
pub fn to_input(action: &Action, scaling: &Scaling) -> Option<Value> {
    let pt = |p: &Point| -> Value {
        let (x, y) = scaling.to_model(*p);
        json!([x, y])
    };
    let with_at = |mut value: Value, at: &Option<Point>| -> Value {
        if let (Some(p), Some(obj)) = (at, value.as_object_mut()) {
            obj.insert("coordinate".into(), pt(p));
        }
        value
    };
    let with_modifiers = |mut value: Value, modifiers: &[Key]| -> Value {
        if !modifiers.is_empty()
            && let Some(obj) = value.as_object_mut()
        {
            let text = modifiers
                .iter()
                .map(Key::name)
                .collect::<Vec<_>>()
                .join("+");
            obj.insert("text".into(), Value::String(text));
        }
        value
    };
    Some(match action {
        Action::Screenshot => json!({"action": "screenshot"}),
        Action::CursorPosition => json!({"action": "cursor_position"}),
        Action::ScreenSize => json!({"action": "get_screen_size"}),
        Action::MouseMove { to } => json!({"action": "mouse_move", "coordinate": pt(to)}),
        Action::Click {
            at,
            button,
            count,
            modifiers,
        } => {
            let name = match (button, count) {
                (MouseButton::Left, 1) => "left_click",
                (MouseButton::Left, 2) => "double_click",
                (MouseButton::Left, 3) => "triple_click",
                (MouseButton::Right, 1) => "right_click",
                (MouseButton::Middle, 1) => "middle_click",
                _ => return None,
            };
            with_modifiers(with_at(json!({"action": name}), at), modifiers)
        }
        Action::Drag { path } => match path.as_slice() {
            [from, to] => json!({
                "action": "left_click_drag",
                "start_coordinate": pt(from),
                "coordinate": pt(to)
            }),
            _ => return None,
        },
        Action::DragFromPointer { to } => {
            json!({"action": "left_click_drag", "coordinate": pt(to)})
        }
        Action::MouseDown {
            button: MouseButton::Left,
            at,
        } => with_at(json!({"action": "left_mouse_down"}), at),
        Action::MouseUp {
            button: MouseButton::Left,
            at,
        } => with_at(json!({"action": "left_mouse_up"}), at),
        Action::MouseDown { .. } | Action::MouseUp { .. } => return None,
        Action::Scroll {
            at,
            direction,
            amount,
            modifiers,
        } => {
            let direction = match direction {
                ScrollDirection::Up => "up",
                ScrollDirection::Down => "down",
                ScrollDirection::Left => "left",
                ScrollDirection::Right => "right",
            };
            let value = json!({
                "action": "scroll",
                "scroll_direction": direction,
                "scroll_amount": (*amount).clamp(1, MAX_SCROLL_AMOUNT)
            });
            with_modifiers(with_at(value, at), modifiers)
        }
        Action::Type { text } if !text.is_empty() && text.chars().count() <= MAX_TYPE_CHARS => {
            json!({"action": "type", "text": text})
        }
        Action::Type { .. } => return None,
        Action::Key { chords } if !chords.is_empty() => {
            let text = chords.iter().map(Chord::name).collect::<Vec<_>>().join(" ");
            json!({"action": "key", "text": text})
        }
        Action::Key { .. } => return None,
        Action::HoldKey { chord, duration } => json!({
            "action": "hold_key",
            "text": chord.name(),
            "duration": (*duration).min(MAX_DURATION).as_secs_f64()
        }),
        Action::Wait { duration } => json!({
            "action": "wait",
            "duration": (*duration).min(MAX_DURATION).as_secs_f64()
        }),
        Action::Zoom { region } => {
            json!({"action": "zoom", "region": scaling.region_to_model(*region)})
        }
        Action::Terminate { status } => json!({
            "action": "terminate",
            "status": match status {
                TerminateStatus::Success => "success",
                TerminateStatus::Failure => "failure",
            }
        }),
        Action::Answer { .. } => return None,
    })
}

/// The JSON Schema of the `computer` tool's input (for clients that get it as an ordinary
/// function rather than Anthropic's built-in tool type). Inline, with no `$ref`, as Qwen-Agent
/// and others need.
pub fn input_schema() -> Map<String, Value> {
    let coordinate = |description: &str| {
        json!({
            "type": "array",
            "items": {"type": "integer"},
            "minItems": 2,
            "maxItems": 2,
            "description": description
        })
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ACTIONS,
                "description": "The action to perform. screenshot: capture the screen. cursor_position: report the pointer's position. mouse_move: move the pointer to `coordinate`. left_click, right_click, middle_click, double_click, triple_click: click at `coordinate` (or where the pointer is), holding the modifier keys in `text`. left_click_drag: press at `start_coordinate`, drag to `coordinate`, release. left_mouse_down, left_mouse_up: press or release the left button (at `coordinate` if given). scroll: turn the wheel `scroll_amount` clicks in `scroll_direction` at `coordinate`. type: type `text`. key: press the keys in `text` (xdotool syntax, e.g. \"ctrl+s\", \"Return\", \"ctrl+a BackSpace\"). hold_key: hold the key in `text` for `duration` seconds. wait: wait `duration` seconds. zoom: view `region` at full resolution. get_screen_size: report the screen's size. terminate: end the task with `status`."
            },
            "coordinate": coordinate("[x, y] in screen pixels from the top-left corner: where to click, move, scroll or end a drag."),
            "start_coordinate": coordinate("[x, y] where left_click_drag starts."),
            "text": {
                "type": "string",
                "description": "For type: the text to type (at most 10000 characters). For key and hold_key: keys in xdotool syntax, e.g. \"Return\", \"ctrl+s\", \"alt+Tab\", \"KP_0\". For clicks and scroll: modifier keys to hold, e.g. \"shift\" or \"ctrl+shift\"."
            },
            "scroll_direction": {
                "type": "string",
                "enum": ["up", "down", "left", "right"],
                "description": "Which way to scroll."
            },
            "scroll_amount": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SCROLL_AMOUNT,
                "description": "How many wheel clicks to scroll."
            },
            "duration": {
                "type": "number",
                "minimum": 0,
                "maximum": MAX_DURATION.as_secs_f64(),
                "description": "Seconds to wait (wait) or to hold the key (hold_key)."
            },
            "region": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 4,
                "maxItems": 4,
                "description": "[x1, y1, x2, y2]: the rectangle zoom shows, from its top-left corner to its bottom-right corner."
            },
            "status": {
                "type": "string",
                "enum": ["success", "failure"],
                "description": "For terminate: whether the task was accomplished."
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
    use std::time::Duration;

    use super::*;
    use crate::action::Rect;
    use crate::scale::ScaleMode;

    fn identity() -> Scaling {
        Scaling::identity(Size::new(1280, 800))
    }

    fn call(value: Value, scaling: &Scaling) -> Result<Action, ActionError> {
        match value {
            Value::Object(map) => parse(&map, scaling),
            _ => panic!("test input must be an object"),
        }
    }

    fn ok(value: Value) -> Action {
        call(value.clone(), &identity()).unwrap_or_else(|e| panic!("{value}: {e}"))
    }

    fn err(value: Value) -> String {
        match call(value.clone(), &identity()) {
            Ok(action) => panic!("{value} parsed as {action:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn p(x: u32, y: u32) -> Point {
        Point { x, y }
    }

    fn key(name: &str) -> Key {
        keys::parse_key(name).expect("valid key")
    }

    #[test]
    fn every_action() {
        assert_eq!(ok(json!({"action": "screenshot"})), Action::Screenshot);
        assert_eq!(
            ok(json!({"action": "cursor_position"})),
            Action::CursorPosition
        );
        assert_eq!(ok(json!({"action": "get_screen_size"})), Action::ScreenSize);
        assert_eq!(
            ok(json!({"action": "mouse_move", "coordinate": [10, 20]})),
            Action::MouseMove { to: p(10, 20) }
        );
        for (name, button, count) in [
            ("left_click", MouseButton::Left, 1),
            ("right_click", MouseButton::Right, 1),
            ("middle_click", MouseButton::Middle, 1),
            ("double_click", MouseButton::Left, 2),
            ("triple_click", MouseButton::Left, 3),
        ] {
            assert_eq!(
                ok(json!({"action": name, "coordinate": [100, 200]})),
                Action::Click {
                    at: Some(p(100, 200)),
                    button,
                    count,
                    modifiers: vec![]
                }
            );
        }
        assert_eq!(
            ok(json!({"action": "left_click", "coordinate": [1, 2], "text": "ctrl+shift"})),
            Action::Click {
                at: Some(p(1, 2)),
                button: MouseButton::Left,
                count: 1,
                modifiers: vec![key("Control_L"), key("Shift_L")]
            }
        );
        assert_eq!(
            ok(json!({"action": "left_click"})),
            Action::Click {
                at: None,
                button: MouseButton::Left,
                count: 1,
                modifiers: vec![]
            }
        );
        assert_eq!(
            ok(
                json!({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [30, 40]})
            ),
            Action::Drag {
                path: vec![p(1, 2), p(30, 40)]
            }
        );
        assert_eq!(
            ok(json!({"action": "left_click_drag", "coordinate": [30, 40]})),
            Action::DragFromPointer { to: p(30, 40) }
        );
        assert_eq!(
            ok(json!({"action": "left_mouse_down"})),
            Action::MouseDown {
                button: MouseButton::Left,
                at: None
            }
        );
        assert_eq!(
            ok(json!({"action": "left_mouse_up", "coordinate": [5, 6]})),
            Action::MouseUp {
                button: MouseButton::Left,
                at: Some(p(5, 6))
            }
        );
        assert_eq!(
            ok(
                json!({"action": "scroll", "coordinate": [5, 6], "scroll_direction": "down", "scroll_amount": 3, "text": "shift"})
            ),
            Action::Scroll {
                at: Some(p(5, 6)),
                direction: ScrollDirection::Down,
                amount: 3,
                modifiers: vec![key("shift")]
            }
        );
        assert_eq!(
            ok(json!({"action": "type", "text": "héllo\n"})),
            Action::Type {
                text: "héllo\n".into()
            }
        );
        assert_eq!(
            ok(json!({"action": "key", "text": "ctrl+a BackSpace"})),
            Action::Key {
                chords: vec![
                    keys::parse_chord("ctrl+a").expect("valid"),
                    keys::parse_chord("BackSpace").expect("valid")
                ]
            }
        );
        assert_eq!(
            ok(json!({"action": "key", "keys": "Return"})),
            Action::Key {
                chords: vec![Chord::single(key("Return"))]
            }
        );
        assert_eq!(
            ok(json!({"action": "key", "keys": ["ctrl", "c"]})),
            Action::Key {
                chords: vec![keys::parse_chord("ctrl+c").expect("valid")]
            }
        );
        assert_eq!(
            ok(json!({"action": "hold_key", "text": "shift", "duration": 1.5})),
            Action::HoldKey {
                chord: Chord::single(key("Shift_L")),
                duration: Duration::from_millis(1500)
            }
        );
        assert_eq!(
            ok(json!({"action": "wait", "duration": 2})),
            Action::Wait {
                duration: Duration::from_secs(2)
            }
        );
        assert_eq!(
            ok(json!({"action": "zoom", "region": [0, 0, 640, 400]})),
            Action::Zoom {
                region: Rect {
                    x1: 0,
                    y1: 0,
                    x2: 640,
                    y2: 400
                }
            }
        );
        assert_eq!(
            ok(json!({"action": "terminate", "status": "failure"})),
            Action::Terminate {
                status: TerminateStatus::Failure
            }
        );
    }

    #[test]
    fn scaled_coordinates_map_to_screen_pixels() {
        let scaling = Scaling::new(Size::new(1920, 1080), ScaleMode::Wxga);
        let action = call(
            json!({"action": "left_click", "coordinate": [640, 400]}),
            &scaling,
        )
        .expect("in range");
        assert_eq!(
            action,
            Action::Click {
                at: Some(p(960, 540)),
                button: MouseButton::Left,
                count: 1,
                modifiers: vec![]
            }
        );
        let err = call(
            json!({"action": "left_click", "coordinate": [1300, 20]}),
            &scaling,
        )
        .expect_err("outside the model's 1280x800");
        let text = err.to_string();
        assert!(
            text.starts_with("Coordinate [1300, 20] is outside the screen"),
            "{text}"
        );
        assert!(
            text.contains("x must be 0–1279 and y 0–799 (the screen is 1280x800)"),
            "{text}"
        );
        assert!(text.contains("\"coordinate\":[640,400]"), "{text}");
    }

    #[test]
    fn bad_inputs_get_clear_sentences() {
        let text = err(json!({"action": "left_click", "coordinate": [1500, 20]}));
        assert!(
            text.contains("x must be 0–1279 and y 0–799 (the screen is 1280x800)"),
            "{text}"
        );
        let text = err(json!({"action": "key", "text": "ctrl+Enterr"}));
        assert!(text.contains("\"Enterr\" was not understood"), "{text}");
        assert!(text.contains("\"text\":\"ctrl+s\""), "{text}");
        let text = err(json!({"action": "wait", "duration": 500}));
        assert!(
            text.contains("the longest allowed is 100 seconds"),
            "{text}"
        );
        let text = err(json!({"action": "wait", "duration": -1}));
        assert!(text.contains("not negative"), "{text}");
        let text = err(json!({"action": "wait"}));
        assert!(
            text.contains("The `wait` action needs `duration`"),
            "{text}"
        );
        let text = err(json!({"action": "mouse_move"}));
        assert!(text.contains("needs `coordinate`"), "{text}");
        let text = err(json!({"action": "left_click", "coordinate": "here"}));
        assert!(
            text.contains("`coordinate` must be a list of two numbers [x, y]"),
            "{text}"
        );
        let text = err(json!({"action": "scroll", "scroll_direction": "down", "scroll_amount": 0}));
        assert!(text.contains("from 1 to 100"), "{text}");
        let text =
            err(json!({"action": "scroll", "scroll_direction": "down", "scroll_amount": 101}));
        assert!(text.contains("from 1 to 100"), "{text}");
        let text =
            err(json!({"action": "scroll", "scroll_direction": "sideways", "scroll_amount": 1}));
        assert!(
            text.contains("\"up\", \"down\", \"left\" or \"right\""),
            "{text}"
        );
        let text = err(json!({"action": "type", "text": ""}));
        assert!(text.contains("must not be empty"), "{text}");
        let long = "x".repeat(MAX_TYPE_CHARS + 1);
        let text = err(json!({"action": "type", "text": long}));
        assert!(text.contains("at most 10000"), "{text}");
        let text = err(json!({"action": "fly"}));
        assert!(
            text.contains("\"fly\" is not an action") && text.contains("left_click"),
            "{text}"
        );
        let text = err(json!({"coordinate": [1, 2]}));
        assert!(text.contains("needs `action`"), "{text}");
        let text = err(json!({"action": "left_click", "text": "a"}));
        assert!(text.contains("not a modifier"), "{text}");
        let text = err(json!({"action": "zoom", "region": [10, 10, 5, 20]}));
        assert!(text.contains("0 ≤ x1 < x2 ≤ 1280"), "{text}");
        let text = err(json!({"action": "hold_key", "text": "a b", "duration": 1}));
        assert!(text.contains("one key or chord"), "{text}");
        let text = err(json!({"action": "terminate", "status": "done"}));
        assert!(text.contains("\"success\" or \"failure\""), "{text}");
    }

    #[test]
    fn lenient_where_harmless() {
        // Unknown fields and nulls are ignored.
        assert_eq!(
            ok(json!({"action": "left_click", "coordinate": [1, 2], "text": null, "extra": 5})),
            Action::Click {
                at: Some(p(1, 2)),
                button: MouseButton::Left,
                count: 1,
                modifiers: vec![]
            }
        );
        assert_eq!(
            ok(json!({"action": "mouse_move", "coordinate": [10.4, 20.6]})),
            Action::MouseMove { to: p(10, 21) }
        );
    }

    #[test]
    fn to_input_inverts_parse() {
        let scaling = Scaling::new(Size::new(1920, 1080), ScaleMode::Wxga);
        let inputs = [
            json!({"action": "screenshot"}),
            json!({"action": "cursor_position"}),
            json!({"action": "get_screen_size"}),
            json!({"action": "mouse_move", "coordinate": [10, 20]}),
            json!({"action": "left_click", "coordinate": [100, 200]}),
            json!({"action": "triple_click", "coordinate": [100, 200], "text": "Shift_L"}),
            json!({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [3, 4]}),
            json!({"action": "left_click_drag", "coordinate": [3, 4]}),
            json!({"action": "left_mouse_down", "coordinate": [5, 6]}),
            json!({"action": "left_mouse_up"}),
            json!({"action": "scroll", "coordinate": [7, 8], "scroll_direction": "left", "scroll_amount": 4}),
            json!({"action": "type", "text": "hi"}),
            json!({"action": "key", "text": "Control_L+s Return"}),
            json!({"action": "hold_key", "text": "Shift_L", "duration": 0.5}),
            json!({"action": "wait", "duration": 2.0}),
            json!({"action": "zoom", "region": [100, 100, 200, 150]}),
            json!({"action": "terminate", "status": "success"}),
        ];
        for input in inputs {
            let action = call(input.clone(), &scaling).expect("valid");
            let back = to_input(&action, &scaling).expect("representable");
            let again = call(back.clone(), &scaling).expect("valid again");
            assert_eq!(again, action, "{input} → {back}");
        }
        let back = to_input(
            &Action::Scroll {
                at: Some(p(960, 540)),
                direction: ScrollDirection::Down,
                amount: 3,
                modifiers: vec![],
            },
            &scaling,
        )
        .expect("representable");
        assert_eq!(
            back,
            json!({"action": "scroll", "coordinate": [640, 400], "scroll_direction": "down", "scroll_amount": 3})
        );
        assert_eq!(
            to_input(&Action::Answer { text: "x".into() }, &scaling),
            None
        );
        assert_eq!(
            to_input(
                &Action::Click {
                    at: None,
                    button: MouseButton::Back,
                    count: 1,
                    modifiers: vec![]
                },
                &scaling
            ),
            None
        );
    }

    #[test]
    fn schema_lists_every_action() {
        let schema = input_schema();
        assert_eq!(schema["type"], "object");
        let actions = schema["properties"]["action"]["enum"]
            .as_array()
            .expect("enum")
            .len();
        assert_eq!(actions, ACTIONS.len());
        assert_eq!(schema["required"], json!(["action"]));
        for action in ACTIONS {
            let example: Value = serde_json::from_str(&example(action, Size::new(1280, 800)))
                .expect("examples are JSON");
            call(example.clone(), &identity()).unwrap_or_else(|e| panic!("{example}: {e}"));
        }
    }
}
