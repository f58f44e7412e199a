//! The MCP tools each action space lists.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

use mcpgym_env::schema::no_arguments;
use mcpgym_env::tools::{Effect, ToolSpec, ToolTable, tool};

use crate::action::Action;
use crate::env::DesktopEpisode;
use crate::spaces::{anthropic, openai, qwen3vl};

mcpgym_env::choices! {
    /// Which computer-use format the server speaks.
    pub enum ActionSpace: "action space" {
        /// Anthropic's: one tool per action (the reference desktop's 19, with Anthropic's
        /// parameter names), `zoom`, and `computer` taking `computer_20251124` input unchanged.
        Anthropic = "anthropic",
        /// Qwen3-VL's `computer_use` function with 0–1000 relative coordinates.
        Qwen3vl = "qwen3vl",
        /// OpenAI's `computer-use-preview` actions through one `computer` tool.
        Openai = "openai",
    }
}

/// The anthropic-space tools that are one action each (the reference desktop's), in order.
pub const ACTION_TOOLS: &[&str] = &[
    "screenshot",
    "cursor_position",
    "get_screen_size",
    "left_click",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "mouse_move",
    "left_click_drag",
    "left_mouse_down",
    "left_mouse_up",
    "scroll",
    "type",
    "key",
    "hold_key",
    "wait",
    "zoom",
    "terminate",
];

fn schema(properties: Value, required: &[&str]) -> Arc<JsonObject> {
    let mut object = JsonObject::new();
    object.insert("type".into(), "object".into());
    object.insert("properties".into(), properties);
    object.insert("required".into(), json!(required));
    Arc::new(object)
}

fn coordinate(what: &str) -> Value {
    json!({
        "type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
        "description": format!("{what} as [x, y] in screenshot pixels (the size get_screen_size reports)"),
    })
}

fn modifiers() -> Value {
    json!({"type": "string", "description": "Modifier keys held during the action, xdotool style: \"shift\", \"ctrl\", \"ctrl+shift\"."})
}

fn duration() -> Value {
    json!({"type": "number", "minimum": 0, "maximum": 100, "description": "Seconds (0–100)."})
}

/// A tool's declaration: its description, its input schema (as each vendor publishes it) and
/// whether it only looks.
fn spec(
    name: &'static str,
    description: impl Into<String>,
    input: Arc<JsonObject>,
    read_only: bool,
) -> ToolSpec {
    let effect = if read_only {
        Effect::ReadOnly
    } else {
        Effect::Destroys
    };
    tool(name, description.into())
        .input_schema(input)
        .effect(effect)
}

/// How a tool's arguments become an action (the vendor's own parser, or a refusal).
type Parse = dyn Fn(&DesktopEpisode, JsonObject) -> Result<Action, String> + Send + Sync;

/// Adds a tool that performs an action on the desktop.
fn action(table: Table, spec: ToolSpec, parse: Box<Parse>) -> Table {
    table.asynchronous(
        spec,
        move |episode: &mut DesktopEpisode, arguments: JsonObject| {
            let action = parse(episode, arguments);
            Box::pin(episode.act(action))
        },
    )
}

type Table = ToolTable<DesktopEpisode>;

/// `get_task`: the task's instruction (arguments are ignored, as they always were).
fn get_task(table: Table) -> Table {
    table.sync(
        spec(
            "get_task",
            "Show this episode's task: what the desktop must look like (files, windows, clipboard) when you call terminate.",
            no_arguments(),
            true,
        ),
        |episode: &mut DesktopEpisode, _: JsonObject| episode.get_task(),
    )
}

/// `terminate(status)`: ends the episode and grades the desktop.
fn terminate(table: Table) -> Table {
    action(
        table,
        spec(
            "terminate",
            "End the episode. The desktop's real state (files, window titles, the clipboard) is then graded; the status you give is recorded but never paid for.",
            schema(
                json!({"status": {"type": "string", "enum": ["success", "failure"], "description": "Whether you believe the task is done."}}),
                &["status"],
            ),
            false,
        ),
        Box::new(|episode, mut input| {
            input.insert("action".into(), "terminate".into());
            anthropic::parse(&input, episode.scaling()).map_err(|e| e.to_string())
        }),
    )
}

/// `screenshot()` outside Anthropic's space, where it takes no arguments at all.
fn plain_screenshot(table: Table) -> Table {
    action(
        table,
        spec(
            "screenshot",
            "Take a screenshot of the desktop.",
            no_arguments(),
            true,
        ),
        Box::new(|_, arguments| {
            if arguments.is_empty() {
                Ok(Action::Screenshot)
            } else {
                Err("screenshot takes no arguments; call it with {}".into())
            }
        }),
    )
}

fn run_command(table: Table) -> Table {
    table.asynchronous(
        spec(
            "run_command",
            "Run a shell command on the desktop's machine (in /home/user) and return its output and exit code.",
            schema(
                json!({"command": {"type": "string", "description": "A /bin/sh command line."}}),
                &["command"],
            ),
            false,
        ),
        |episode: &mut DesktopEpisode, arguments: JsonObject| Box::pin(episode.run_command(arguments)),
    )
}

/// The tools of `space`; `run_command` only when `allow_shell`.
pub(crate) fn table(space: ActionSpace, allow_shell: bool) -> ToolTable<DesktopEpisode> {
    let table = ToolTable::new();
    let table = match space {
        ActionSpace::Anthropic => anthropic_tools(table),
        ActionSpace::Qwen3vl => {
            let table = action(
                table,
                spec(
                    "computer_use",
                    "Use the mouse and keyboard on the desktop (Qwen3-VL's computer_use). Coordinates are relative, 0–1000 on each axis of the screen. Returns a screenshot after the action.",
                    Arc::new(qwen3vl::parameters_schema()),
                    false,
                ),
                Box::new(|episode, arguments| {
                    qwen3vl::parse(&arguments, episode.scaling().screen).map_err(|e| e.to_string())
                }),
            );
            get_task(plain_screenshot(table))
        }
        ActionSpace::Openai => {
            let table = action(
                table,
                spec(
                    "computer",
                    "Perform one OpenAI computer-use action on the desktop: {\"action\": {\"type\": \"click\", \"x\": 10, \"y\": 20, \"button\": \"left\"}}. Returns a screenshot after the action.",
                    schema(
                        json!({"action": Value::Object(openai::parameters_schema())}),
                        &["action"],
                    ),
                    false,
                ),
                Box::new(|episode, arguments| {
                    match arguments.get("action") {
                    Some(Value::Object(action)) => {
                        openai::parse(action, episode.scaling()).map_err(|e| e.to_string())
                    }
                    _ => Err("computer takes {\"action\": {...}}, an OpenAI computer-use action, e.g. {\"action\": {\"type\": \"click\", \"x\": 100, \"y\": 200, \"button\": \"left\"}}".into()),
                }
                }),
            );
            get_task(terminate(table))
        }
    };
    if allow_shell {
        run_command(table)
    } else {
        table
    }
}

/// An Anthropic action tool: the tool's name is the action, its arguments the action's input.
fn anthropic_action(
    table: Table,
    name: &'static str,
    description: impl Into<String>,
    input: Arc<JsonObject>,
    read_only: bool,
) -> Table {
    action(
        table,
        spec(name, description, input, read_only),
        Box::new(move |episode, mut input| {
            if input.contains_key("action") {
                return Err(format!(
                    "{name} takes no \"action\" argument (the tool's name is the action); to pass computer_20251124 input unchanged, call the computer tool"
                ));
            }
            input.insert("action".into(), name.into());
            anthropic::parse(&input, episode.scaling()).map_err(|e| e.to_string())
        }),
    )
}

fn anthropic_tools(table: Table) -> Table {
    let click = |table: Table, name: &'static str, what: &str| {
        anthropic_action(
            table,
            name,
            format!(
                "{what} at a coordinate (or where the pointer is), optionally holding modifier keys. Returns a screenshot."
            ),
            schema(
                json!({"coordinate": coordinate("Where to click"), "text": modifiers()}),
                &[],
            ),
            false,
        )
    };
    let keys_alias = json!({"type": "string", "description": "Alias of text."});
    let table = anthropic_action(
        table,
        "screenshot",
        "Take a screenshot of the desktop.",
        no_arguments(),
        true,
    );
    let table = anthropic_action(
        table,
        "cursor_position",
        "Report the pointer's position as X=<x>,Y=<y> in screenshot pixels.",
        no_arguments(),
        true,
    );
    let table = anthropic_action(
        table,
        "get_screen_size",
        "Report the screen's size as WIDTHxHEIGHT in screenshot pixels (the space every coordinate uses).",
        no_arguments(),
        true,
    );
    let table = click(table, "left_click", "Click the left button");
    let table = click(table, "right_click", "Click the right button");
    let table = click(table, "middle_click", "Click the middle button");
    let table = click(table, "double_click", "Double-click the left button");
    let table = click(
        table,
        "triple_click",
        "Triple-click the left button (selects a line or paragraph)",
    );
    let table = anthropic_action(
        table,
        "mouse_move",
        "Move the pointer. Returns a screenshot.",
        schema(
            json!({"coordinate": coordinate("Where to")}),
            &["coordinate"],
        ),
        false,
    );
    let table = anthropic_action(
        table,
        "left_click_drag",
        "Press the left button at start_coordinate, drag to coordinate, release. Returns a screenshot.",
        schema(
            json!({"start_coordinate": coordinate("Where to press"), "coordinate": coordinate("Where to release")}),
            &["start_coordinate", "coordinate"],
        ),
        false,
    );
    let table = anthropic_action(
        table,
        "left_mouse_down",
        "Press the left button and keep it down (optionally after moving to coordinate). Returns a screenshot.",
        schema(json!({"coordinate": coordinate("Where to press")}), &[]),
        false,
    );
    let table = anthropic_action(
        table,
        "left_mouse_up",
        "Release the left button (optionally after moving to coordinate). Returns a screenshot.",
        schema(json!({"coordinate": coordinate("Where to release")}), &[]),
        false,
    );
    let table = anthropic_action(
        table,
        "scroll",
        "Turn the mouse wheel at a coordinate. Returns a screenshot.",
        schema(
            json!({
                "coordinate": coordinate("Where to scroll"),
                "scroll_direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
                "scroll_amount": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Wheel clicks."},
                "text": modifiers(),
            }),
            &["scroll_direction", "scroll_amount"],
        ),
        false,
    );
    let table = anthropic_action(
        table,
        "type",
        "Type text (any Unicode) into the focused window. Returns a screenshot.",
        schema(
            json!({"text": {"type": "string", "description": "The text to type."}}),
            &["text"],
        ),
        false,
    );
    let table = anthropic_action(
        table,
        "key",
        "Press a key or chord, xdotool style: \"Return\", \"ctrl+s\", \"alt+Tab\", \"KP_0\"; several separated by spaces are pressed in turn. Returns a screenshot.",
        schema(
            json!({"text": {"type": "string", "description": "The key or chord, e.g. \"ctrl+s\"."}, "keys": keys_alias}),
            &[],
        ),
        false,
    );
    let table = anthropic_action(
        table,
        "hold_key",
        "Hold a key or chord down for a duration, then release it. Returns a screenshot.",
        schema(
            json!({"text": {"type": "string", "description": "The key or chord, e.g. \"shift\"."}, "keys": keys_alias, "duration": duration()}),
            &["duration"],
        ),
        false,
    );
    let table = anthropic_action(
        table,
        "wait",
        "Wait, then take a screenshot.",
        schema(json!({"duration": duration()}), &["duration"]),
        true,
    );
    let table = anthropic_action(
        table,
        "zoom",
        "Show a region [x1, y1, x2, y2] of the screen (screenshot pixels) at the screen's full resolution.",
        schema(
            json!({"region": {"type": "array", "items": {"type": "integer"}, "minItems": 4, "maxItems": 4, "description": "[x1, y1, x2, y2] with x1 < x2 and y1 < y2."}}),
            &["region"],
        ),
        true,
    );
    let table = terminate(table);
    let table = action(
        table,
        spec(
            "computer",
            "Anthropic's computer tool (computer_20251124): one action with its input unchanged, e.g. {\"action\": \"left_click\", \"coordinate\": [100, 200]}.",
            Arc::new(anthropic::input_schema()),
            false,
        ),
        Box::new(|episode, input| {
            anthropic::parse(&input, episode.scaling()).map_err(|e| e.to_string())
        }),
    );
    get_task(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpgym_env::Choice;

    #[test]
    fn action_space_names_read_back_and_unknown_ones_list_the_choices() {
        for &space in ActionSpace::ALL {
            assert_eq!(space.to_string().parse::<ActionSpace>(), Ok(space));
            let json = serde_json::Value::String(space.to_string());
            assert_eq!(serde_json::from_value::<ActionSpace>(json).unwrap(), space);
        }
        let error = "qwen".parse::<ActionSpace>().unwrap_err().to_string();
        assert!(
            error.contains("\"qwen\"") && error.contains("`qwen3vl`"),
            "{error}"
        );
    }

    #[test]
    fn every_space_lists_its_tools() {
        let names = |space, shell| -> Vec<String> {
            table(space, shell)
                .list()
                .iter()
                .map(|t| t.name.to_string())
                .collect()
        };
        let anthropic = names(ActionSpace::Anthropic, false);
        for name in ACTION_TOOLS {
            assert!(anthropic.contains(&name.to_string()), "{name}");
        }
        assert!(anthropic.contains(&"computer".to_string()));
        assert!(!anthropic.contains(&"run_command".to_string()));
        assert!(names(ActionSpace::Anthropic, true).contains(&"run_command".to_string()));
        assert_eq!(
            names(ActionSpace::Qwen3vl, false),
            ["computer_use", "screenshot", "get_task"]
        );
        assert_eq!(
            names(ActionSpace::Openai, false),
            ["computer", "terminate", "get_task"]
        );
    }
}
