//! OpenAI's `computer-use-preview` actions: the `action` object of a `computer_call`.
//!
//! Coordinates are in the model's space (the tool's `display_width`/`display_height`, i.e.
//! [`Scaling::model`]). Choices where OpenAI's format leaves room:
//!
//! - `scroll` gives pixel deltas `scroll_x`/`scroll_y` (positive: right/down). They become
//!   wheel clicks by [`pixels_to_clicks`] (`round(|delta| / 100)`, at least 1, at most 100),
//!   on one axis: the one with the larger delta, vertical on a tie. Both zero is an error. Only
//!   `scroll_x`/`scroll_y` are read, never `scrollX`/`scrollY` (a known port fault).
//! - `wait` has no parameters in OpenAI's format; it waits [`DEFAULT_WAIT`] (1 s, as OpenAI's
//!   sample computers do), or `ms` milliseconds if given (their `wait(ms=1000)`).
//! - `keypress` presses all its keys together as one chord, the last while the others are
//!   held (`["CTRL", "c"]`); names go through [`keys::openai_key`].
//! - `click` and `scroll` accept an optional `keys` list of modifiers to hold.
//! - `terminate` (`status`: success|failure) is mcpgym's addition, to end an episode.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{ActionError, Fields, chord_of, describe, pixels_to_clicks, whole};
use crate::action::{Action, MouseButton, Point, ScrollDirection};
use crate::keys::{self, Chord, Key};
use crate::scale::{Scaling, Size};

/// Every action type [`parse`] accepts: OpenAI's nine and mcpgym's `terminate`.
pub const ACTIONS: &[&str] = &[
    "click",
    "double_click",
    "drag",
    "keypress",
    "move",
    "screenshot",
    "scroll",
    "type",
    "wait",
    "terminate",
];

/// How long `wait` lasts without `ms`.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(1);

/// A valid action object of type `kind` for a model space of `model`'s size, for errors.
pub fn example(kind: &str, model: Size) -> String {
    let (cx, cy) = (model.width / 2, model.height / 2);
    let value = match kind {
        "click" => json!({"type": "click", "x": cx, "y": cy, "button": "left"}),
        "double_click" | "move" => json!({"type": kind, "x": cx, "y": cy}),
        "drag" => json!({"type": "drag", "path": [{"x": cx / 2, "y": cy}, {"x": cx, "y": cy}]}),
        "keypress" => json!({"type": "keypress", "keys": ["CTRL", "s"]}),
        "scroll" => json!({"type": "scroll", "x": cx, "y": cy, "scroll_x": 0, "scroll_y": 300}),
        "type" => json!({"type": "type", "text": "Hello, world"}),
        "wait" => json!({"type": "wait"}),
        "terminate" => json!({"type": "terminate", "status": "success"}),
        _ => json!({"type": "screenshot"}),
    };
    value.to_string()
}

/// Reads one `computer_call` action object into an [`Action`] in screen pixels.
pub fn parse(action: &Map<String, Value>, scaling: &Scaling) -> Result<Action, ActionError> {
    let model = scaling.model;
    let kind = match action.get("type") {
        Some(Value::String(s)) => s.trim(),
        None | Some(Value::Null) => {
            return Err(ActionError::invalid(
                format!("the action needs `type`, one of: {}", ACTIONS.join(", ")),
                example("screenshot", model),
            ));
        }
        Some(other) => {
            return Err(ActionError::invalid(
                format!("`type` must be a string, but {} was given", describe(other)),
                example("screenshot", model),
            ));
        }
    };
    let f = Fields::new(action, example(kind, model));
    let to_screen = |x: f64, y: f64| -> Result<Point, ActionError> {
        scaling
            .to_screen(whole(x), whole(y))
            .map_err(|e| f.coordinate_error(e))
    };
    let xy = || -> Result<Point, ActionError> {
        let x = f.require(kind, "x", f.number("x")?)?;
        let y = f.require(kind, "y", f.number("y")?)?;
        to_screen(x, y)
    };
    match kind {
        "click" => {
            let button = match f.str("button")?.map(|b| b.trim().to_ascii_lowercase()) {
                None => MouseButton::Left,
                Some(b) => match b.as_str() {
                    "left" => MouseButton::Left,
                    "right" => MouseButton::Right,
                    "wheel" | "middle" => MouseButton::Middle,
                    "back" => MouseButton::Back,
                    "forward" => MouseButton::Forward,
                    _ => {
                        return Err(f.error(format!(
                            "`button` must be \"left\", \"right\", \"wheel\", \"back\" or \"forward\", but \"{b}\" was given"
                        )));
                    }
                },
            };
            Ok(Action::Click {
                at: Some(xy()?),
                button,
                count: 1,
                modifiers: held_keys(&f)?,
            })
        }
        "double_click" => Ok(Action::Click {
            at: Some(xy()?),
            button: MouseButton::Left,
            count: 2,
            modifiers: held_keys(&f)?,
        }),
        "drag" => {
            let path = f.require(kind, "path", f.get("path"))?;
            let Value::Array(points) = path else {
                return Err(f.error(format!(
                    "`path` must be a list of points like {{\"x\": 10, \"y\": 20}}, but {} was given",
                    describe(path)
                )));
            };
            if points.len() < 2 {
                return Err(f.error(format!(
                    "`path` needs at least two points (where the drag starts and where it ends), but {} was given",
                    points.len()
                )));
            }
            let path = points
                .iter()
                .map(|p| path_point(&f, p).and_then(|(x, y)| to_screen(x, y)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Action::Drag { path })
        }
        "keypress" => {
            let chord = keypress(&f)?;
            Ok(Action::Key {
                chords: vec![chord],
            })
        }
        "move" => Ok(Action::MouseMove { to: xy()? }),
        "screenshot" => Ok(Action::Screenshot),
        "scroll" => {
            let at = xy()?;
            let dx = f.number("scroll_x")?.unwrap_or(0.0);
            let dy = f.number("scroll_y")?.unwrap_or(0.0);
            if dx == 0.0 && dy == 0.0 {
                return Err(f.error(
                    "`scroll_x` and `scroll_y` are both 0, so there is nothing to scroll: give `scroll_y` (positive scrolls down) or `scroll_x` (positive scrolls right) in pixels",
                ));
            }
            let (direction, pixels) = if dy.abs() >= dx.abs() {
                (
                    if dy > 0.0 {
                        ScrollDirection::Down
                    } else {
                        ScrollDirection::Up
                    },
                    dy,
                )
            } else {
                (
                    if dx > 0.0 {
                        ScrollDirection::Right
                    } else {
                        ScrollDirection::Left
                    },
                    dx,
                )
            };
            Ok(Action::Scroll {
                at: Some(at),
                direction,
                amount: pixels_to_clicks(pixels),
                modifiers: held_keys(&f)?,
            })
        }
        "type" => Ok(Action::Type {
            text: f.text_to_type(kind, "text")?,
        }),
        "wait" => {
            let duration = match f.number("ms")? {
                None => DEFAULT_WAIT,
                Some(ms) => {
                    super::duration(ms / 1000.0, "ms", "milliseconds").map_err(|p| f.error(p))?
                }
            };
            Ok(Action::Wait { duration })
        }
        "terminate" => Ok(Action::Terminate {
            status: f.status(kind)?,
        }),
        other => Err(ActionError::invalid(
            format!(
                "\"{other}\" is not a computer action; the types are: {}",
                ACTIONS.join(", ")
            ),
            example("screenshot", model),
        )),
    }
}

/// One point of a drag path: `{"x": .., "y": ..}` (or `[x, y]`).
fn path_point(f: &Fields<'_>, value: &Value) -> Result<(f64, f64), ActionError> {
    let number = |v: Option<&Value>| v.and_then(Value::as_f64).filter(|n| n.is_finite());
    let xy = match value {
        Value::Object(obj) => number(obj.get("x")).zip(number(obj.get("y"))),
        Value::Array(items) if items.len() == 2 => number(items.first()).zip(number(items.get(1))),
        _ => None,
    };
    xy.ok_or_else(|| {
        f.error(format!(
            "each point of `path` must be an object like {{\"x\": 10, \"y\": 20}}, but {} was given",
            describe(value)
        ))
    })
}

/// The key names of `keypress`'s `keys`, as one chord.
fn keypress(f: &Fields<'_>) -> Result<Chord, ActionError> {
    let names =
        key_list(f, "keys")?.ok_or_else(|| f.error("the `keypress` action needs `keys`"))?;
    if names.is_empty() {
        return Err(f.error("`keys` must name at least one key"));
    }
    chord_of(&names, openai_chord).map_err(|e| f.key_error(e))
}

/// One OpenAI key name (or `CTRL+C`-style chord) as a chord.
fn openai_chord(name: &str) -> Result<Chord, keys::KeyError> {
    // A name that is itself "+" is the plus key, not a separator.
    if name.chars().count() > 1 && name.contains('+') {
        let mut all = name
            .split('+')
            .map(|part| openai_key_part(part, name))
            .collect::<Result<Vec<Key>, _>>()?;
        let key = all.pop().ok_or(keys::KeyError::Empty)?;
        return Ok(Chord {
            modifiers: all,
            key,
        });
    }
    keys::openai_key(name).map(Chord::single)
}

/// One part of an OpenAI chord; an empty part is reported with the whole chord.
fn openai_key_part(part: &str, chord: &str) -> Result<Key, keys::KeyError> {
    if part.trim().is_empty() {
        return Err(keys::KeyError::EmptyPart {
            chord: chord.to_string(),
        });
    }
    keys::openai_key(part.trim())
}

/// Optional modifier keys held during a click or scroll (`keys`: `["SHIFT"]`).
fn held_keys(f: &Fields<'_>) -> Result<Vec<Key>, ActionError> {
    let Some(names) = key_list(f, "keys")? else {
        return Ok(Vec::new());
    };
    let mut held = Vec::with_capacity(names.len());
    for name in names {
        let key = keys::openai_key(name).map_err(|e| f.key_error(e))?;
        if !key.is_modifier() {
            return Err(f.key_error(keys::KeyError::NotModifier {
                name: name.to_string(),
            }));
        }
        held.push(key);
    }
    Ok(held)
}

/// An optional list of key names.
fn key_list<'a>(f: &Fields<'a>, name: &str) -> Result<Option<Vec<&'a str>>, ActionError> {
    let Some(value) = f.get(name) else {
        return Ok(None);
    };
    let wrong = || {
        f.error(format!(
            "`{name}` must be a list of key names like [\"CTRL\", \"c\"], but {} was given",
            describe(value)
        ))
    };
    let Value::Array(items) = value else {
        return Err(wrong());
    };
    items
        .iter()
        .map(|v| v.as_str().ok_or_else(wrong))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The JSON Schema of one action object (for harnesses that offer OpenAI's actions as an
/// ordinary function). Inline, no `$ref`.
pub fn parameters_schema() -> Map<String, Value> {
    let schema = json!({
        "type": "object",
        "properties": {
            "type": {
                "type": "string",
                "enum": ACTIONS,
                "description": "The action. click: click `button` at (x, y). double_click: double-click at (x, y). drag: press at the first point of `path`, move through the others, release at the last. keypress: press `keys` together, e.g. [\"CTRL\", \"c\"]. move: move the pointer to (x, y). screenshot: capture the screen. scroll: scroll at (x, y) by `scroll_x`/`scroll_y` pixels. type: type `text`. wait: wait a second (or `ms` milliseconds). terminate: end the task with `status`."
            },
            "x": {"type": "integer", "description": "Pixels from the left edge."},
            "y": {"type": "integer", "description": "Pixels from the top edge."},
            "button": {
                "type": "string",
                "enum": ["left", "right", "wheel", "back", "forward"],
                "description": "For click: which mouse button (default left)."
            },
            "path": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                    "required": ["x", "y"]
                },
                "minItems": 2,
                "description": "For drag: the points, start first."
            },
            "keys": {
                "type": "array",
                "items": {"type": "string"},
                "description": "For keypress: the keys pressed together, e.g. [\"CTRL\", \"c\"] or [\"ENTER\"]. For click and scroll: modifier keys to hold, e.g. [\"SHIFT\"]."
            },
            "scroll_x": {"type": "integer", "description": "For scroll: horizontal pixels, positive to the right (100 px is one wheel click)."},
            "scroll_y": {"type": "integer", "description": "For scroll: vertical pixels, positive downwards (100 px is one wheel click)."},
            "text": {"type": "string", "description": "For type: the text to type."},
            "ms": {"type": "integer", "minimum": 0, "maximum": 100_000, "description": "For wait: milliseconds (default 1000)."},
            "status": {"type": "string", "enum": ["success", "failure"], "description": "For terminate: whether the task was accomplished."}
        },
        "required": ["type"]
    });
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        for (name, button) in [
            ("left", MouseButton::Left),
            ("right", MouseButton::Right),
            ("wheel", MouseButton::Middle),
            ("back", MouseButton::Back),
            ("forward", MouseButton::Forward),
        ] {
            assert_eq!(
                ok(json!({"type": "click", "x": 10, "y": 20, "button": name})),
                Action::Click {
                    at: Some(p(10, 20)),
                    button,
                    count: 1,
                    modifiers: vec![]
                }
            );
        }
        assert_eq!(
            ok(json!({"type": "double_click", "x": 10, "y": 20})),
            Action::Click {
                at: Some(p(10, 20)),
                button: MouseButton::Left,
                count: 2,
                modifiers: vec![]
            }
        );
        assert_eq!(
            ok(
                json!({"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}]})
            ),
            Action::Drag {
                path: vec![p(1, 2), p(3, 4), p(5, 6)]
            }
        );
        assert_eq!(
            ok(json!({"type": "keypress", "keys": ["CTRL", "c"]})),
            Action::Key {
                chords: vec![Chord {
                    modifiers: vec![key("Control_L")],
                    key: key("c")
                }]
            }
        );
        assert_eq!(
            ok(json!({"type": "keypress", "keys": ["ENTER"]})),
            Action::Key {
                chords: vec![Chord::single(key("Return"))]
            }
        );
        assert_eq!(
            ok(json!({"type": "keypress", "keys": ["CTRL+SHIFT+T"]})),
            Action::Key {
                chords: vec![keys::parse_chord("ctrl+shift+t").expect("valid")]
            }
        );
        assert_eq!(
            ok(json!({"type": "move", "x": 7, "y": 8})),
            Action::MouseMove { to: p(7, 8) }
        );
        assert_eq!(ok(json!({"type": "screenshot"})), Action::Screenshot);
        assert_eq!(
            ok(json!({"type": "scroll", "x": 100, "y": 200, "scroll_x": 0, "scroll_y": 300})),
            Action::Scroll {
                at: Some(p(100, 200)),
                direction: ScrollDirection::Down,
                amount: 3,
                modifiers: vec![]
            }
        );
        assert_eq!(
            ok(json!({"type": "scroll", "x": 100, "y": 200, "scroll_x": -250, "scroll_y": 40})),
            Action::Scroll {
                at: Some(p(100, 200)),
                direction: ScrollDirection::Left,
                amount: 3,
                modifiers: vec![]
            }
        );
        assert_eq!(
            ok(json!({"type": "scroll", "x": 1, "y": 1, "scroll_y": -100, "keys": ["SHIFT"]})),
            Action::Scroll {
                at: Some(p(1, 1)),
                direction: ScrollDirection::Up,
                amount: 1,
                modifiers: vec![key("Shift_L")]
            }
        );
        assert_eq!(
            ok(json!({"type": "type", "text": "hello"})),
            Action::Type {
                text: "hello".into()
            }
        );
        assert_eq!(
            ok(json!({"type": "wait"})),
            Action::Wait {
                duration: DEFAULT_WAIT
            }
        );
        assert_eq!(
            ok(json!({"type": "wait", "ms": 250})),
            Action::Wait {
                duration: Duration::from_millis(250)
            }
        );
        assert_eq!(
            ok(json!({"type": "terminate", "status": "success"})),
            Action::Terminate {
                status: crate::action::TerminateStatus::Success
            }
        );
    }

    #[test]
    fn never_reads_camel_case_scroll() {
        let text = err(json!({"type": "scroll", "x": 1, "y": 1, "scrollX": 0, "scrollY": 300}));
        assert!(text.contains("nothing to scroll"), "{text}");
    }

    #[test]
    fn scaled_and_bad_inputs() {
        let scaling = Scaling::new(Size::new(1920, 1080), ScaleMode::Wxga);
        assert_eq!(
            call(json!({"type": "move", "x": 640, "y": 400}), &scaling),
            Ok(Action::MouseMove { to: p(960, 540) })
        );
        let text = call(json!({"type": "click", "x": 1280, "y": 0}), &scaling)
            .expect_err("off the model's screen")
            .to_string();
        assert!(
            text.contains("x must be 0–1279 and y 0–799 (the screen is 1280x800)"),
            "{text}"
        );
        let text = err(json!({"type": "click", "x": 1}));
        assert!(text.contains("The `click` action needs `y`"), "{text}");
        let text = err(json!({"type": "click", "x": 1, "y": 1, "button": "thumb"}));
        assert!(text.contains("\"wheel\""), "{text}");
        let text = err(json!({"type": "drag", "path": [{"x": 1, "y": 2}]}));
        assert!(text.contains("at least two points"), "{text}");
        let text = err(json!({"type": "drag", "path": [{"x": 1}, {"x": 3, "y": 4}]}));
        assert!(text.contains("Each point of `path`"), "{text}");
        let text = err(json!({"type": "keypress", "keys": ["CTRL", "NOPE"]}));
        assert!(text.contains("\"NOPE\" was not understood"), "{text}");
        assert!(text.contains("\"keys\":[\"CTRL\",\"s\"]"), "{text}");
        let text = err(json!({"type": "keypress", "keys": []}));
        assert!(text.contains("at least one key"), "{text}");
        let text = err(json!({"type": "keypress", "keys": "CTRL"}));
        assert!(text.contains("must be a list of key names"), "{text}");
        let text = err(json!({"type": "wait", "ms": 200_000}));
        assert!(text.contains("longest allowed is 100 seconds"), "{text}");
        let text = err(json!({"type": "click", "x": 1, "y": 1, "keys": ["a"]}));
        assert!(text.contains("not a modifier"), "{text}");
        let text = err(json!({"type": "jump"}));
        assert!(text.contains("\"jump\" is not a computer action"), "{text}");
        let text = err(json!({"x": 1}));
        assert!(text.contains("needs `type`"), "{text}");
    }

    #[test]
    fn schema_and_examples() {
        let schema = parameters_schema();
        assert_eq!(schema["required"], json!(["type"]));
        for kind in ACTIONS {
            let example: Value =
                serde_json::from_str(&example(kind, Size::new(1280, 800))).expect("JSON");
            call(example.clone(), &identity()).unwrap_or_else(|e| panic!("{example}: {e}"));
        }
    }
}
