//! The MCP tools each action space lists.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use mcpgym_env::schema::no_arguments;

use crate::spaces::{anthropic, openai, qwen3vl};

/// Which computer-use format the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionSpace {
    /// Anthropic's: one tool per action (the reference desktop's 19, with Anthropic's
    /// parameter names), `zoom`, and `computer` taking `computer_20251124` input unchanged.
    #[default]
    Anthropic,
    /// Qwen3-VL's `computer_use` function with 0–1000 relative coordinates.
    Qwen3vl,
    /// OpenAI's `computer-use-preview` actions through one `computer` tool.
    Openai,
}

impl ActionSpace {
    /// Every action space, in the order they are listed.
    pub const ALL: [Self; 3] = [Self::Anthropic, Self::Qwen3vl, Self::Openai];

    /// The action space's name in flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Qwen3vl => "qwen3vl",
            Self::Openai => "openai",
        }
    }

    /// One sentence on the tools the action space lists.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Anthropic => {
                "Anthropic's: one tool per action (the reference desktop's 19, with Anthropic's \
                 parameter names), `zoom`, and `computer` taking `computer_20251124` input \
                 unchanged."
            }
            Self::Qwen3vl => "Qwen3-VL's `computer_use` function with 0–1000 relative coordinates.",
            Self::Openai => "OpenAI's `computer-use-preview` actions through one `computer` tool.",
        }
    }
}

impl std::fmt::Display for ActionSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An action space name that is not one of [`ActionSpace::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown action space {0:?}: expected `anthropic`, `qwen3vl` or `openai`")]
pub struct UnknownActionSpace(pub String);

impl std::str::FromStr for ActionSpace {
    type Err = UnknownActionSpace;

    /// Reads a name of [`ActionSpace::as_str`], exactly.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|space| space.as_str() == text)
            .ok_or_else(|| UnknownActionSpace(text.to_owned()))
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

fn annotations(title: &str, read_only: bool) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(read_only)
        .destructive(!read_only)
        .idempotent(read_only)
        .open_world(false)
}

fn tool(name: &'static str, description: &str, input: Arc<JsonObject>, read_only: bool) -> Tool {
    Tool::new_with_raw(name, Some(description.to_owned().into()), input)
        .with_annotations(annotations(name, read_only))
}

fn get_task() -> Tool {
    tool(
        "get_task",
        "Show this episode's task: what the desktop must look like (files, windows, clipboard) when you call terminate.",
        no_arguments(),
        true,
    )
}

fn terminate() -> Tool {
    tool(
        "terminate",
        "End the episode. The desktop's real state (files, window titles, the clipboard) is then graded; the status you give is recorded but never paid for.",
        schema(
            json!({"status": {"type": "string", "enum": ["success", "failure"], "description": "Whether you believe the task is done."}}),
            &["status"],
        ),
        false,
    )
}

fn run_command() -> Tool {
    tool(
        "run_command",
        "Run a shell command on the desktop's machine (in /home/user) and return its output and exit code.",
        schema(
            json!({"command": {"type": "string", "description": "A /bin/sh command line."}}),
            &["command"],
        ),
        false,
    )
}

/// The tools of `space`; `run_command` only when `allow_shell`.
pub fn tools(space: ActionSpace, allow_shell: bool) -> Vec<Tool> {
    let mut tools = match space {
        ActionSpace::Anthropic => anthropic_tools(),
        ActionSpace::Qwen3vl => vec![
            tool(
                "computer_use",
                "Use the mouse and keyboard on the desktop (Qwen3-VL's computer_use). Coordinates are relative, 0–1000 on each axis of the screen. Returns a screenshot after the action.",
                Arc::new(qwen3vl::parameters_schema()),
                false,
            ),
            tool(
                "screenshot",
                "Take a screenshot of the desktop.",
                no_arguments(),
                true,
            ),
            get_task(),
        ],
        ActionSpace::Openai => vec![
            tool(
                "computer",
                "Perform one OpenAI computer-use action on the desktop: {\"action\": {\"type\": \"click\", \"x\": 10, \"y\": 20, \"button\": \"left\"}}. Returns a screenshot after the action.",
                schema(
                    json!({"action": Value::Object(openai::parameters_schema())}),
                    &["action"],
                ),
                false,
            ),
            terminate(),
            get_task(),
        ],
    };
    if allow_shell {
        tools.push(run_command());
    }
    tools
}

fn anthropic_tools() -> Vec<Tool> {
    let click = |name: &'static str, what: &str| {
        tool(
            name,
            &format!(
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
    vec![
        tool(
            "screenshot",
            "Take a screenshot of the desktop.",
            no_arguments(),
            true,
        ),
        tool(
            "cursor_position",
            "Report the pointer's position as X=<x>,Y=<y> in screenshot pixels.",
            no_arguments(),
            true,
        ),
        tool(
            "get_screen_size",
            "Report the screen's size as WIDTHxHEIGHT in screenshot pixels (the space every coordinate uses).",
            no_arguments(),
            true,
        ),
        click("left_click", "Click the left button"),
        click("right_click", "Click the right button"),
        click("middle_click", "Click the middle button"),
        click("double_click", "Double-click the left button"),
        click(
            "triple_click",
            "Triple-click the left button (selects a line or paragraph)",
        ),
        tool(
            "mouse_move",
            "Move the pointer. Returns a screenshot.",
            schema(
                json!({"coordinate": coordinate("Where to")}),
                &["coordinate"],
            ),
            false,
        ),
        tool(
            "left_click_drag",
            "Press the left button at start_coordinate, drag to coordinate, release. Returns a screenshot.",
            schema(
                json!({"start_coordinate": coordinate("Where to press"), "coordinate": coordinate("Where to release")}),
                &["start_coordinate", "coordinate"],
            ),
            false,
        ),
        tool(
            "left_mouse_down",
            "Press the left button and keep it down (optionally after moving to coordinate). Returns a screenshot.",
            schema(json!({"coordinate": coordinate("Where to press")}), &[]),
            false,
        ),
        tool(
            "left_mouse_up",
            "Release the left button (optionally after moving to coordinate). Returns a screenshot.",
            schema(json!({"coordinate": coordinate("Where to release")}), &[]),
            false,
        ),
        tool(
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
        ),
        tool(
            "type",
            "Type text (any Unicode) into the focused window. Returns a screenshot.",
            schema(
                json!({"text": {"type": "string", "description": "The text to type."}}),
                &["text"],
            ),
            false,
        ),
        tool(
            "key",
            "Press a key or chord, xdotool style: \"Return\", \"ctrl+s\", \"alt+Tab\", \"KP_0\"; several separated by spaces are pressed in turn. Returns a screenshot.",
            schema(
                json!({"text": {"type": "string", "description": "The key or chord, e.g. \"ctrl+s\"."}, "keys": keys_alias}),
                &[],
            ),
            false,
        ),
        tool(
            "hold_key",
            "Hold a key or chord down for a duration, then release it. Returns a screenshot.",
            schema(
                json!({"text": {"type": "string", "description": "The key or chord, e.g. \"shift\"."}, "keys": keys_alias, "duration": duration()}),
                &["duration"],
            ),
            false,
        ),
        tool(
            "wait",
            "Wait, then take a screenshot.",
            schema(json!({"duration": duration()}), &["duration"]),
            true,
        ),
        tool(
            "zoom",
            "Show a region [x1, y1, x2, y2] of the screen (screenshot pixels) at the screen's full resolution.",
            schema(
                json!({"region": {"type": "array", "items": {"type": "integer"}, "minItems": 4, "maxItems": 4, "description": "[x1, y1, x2, y2] with x1 < x2 and y1 < y2."}}),
                &["region"],
            ),
            true,
        ),
        terminate(),
        tool(
            "computer",
            "Anthropic's computer tool (computer_20251124): one action with its input unchanged, e.g. {\"action\": \"left_click\", \"coordinate\": [100, 200]}.",
            Arc::new(anthropic::input_schema()),
            false,
        ),
        get_task(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_space_names_read_back_and_unknown_ones_list_the_choices() {
        for space in ActionSpace::ALL {
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
            tools(space, shell)
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
