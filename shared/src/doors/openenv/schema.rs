//! What `/<env>/schema` and `/<env>/metadata` describe: the actions an environment takes
//! (MCP's `list_tools` and `call_tool`, one `call_tool` form per tool with its argument
//! schema), the observations it answers, and its state.

use serde_json::{Value, json};

use crate::env::Environment;

/// `GET /<env>/schema`: `{action, observation, reset_observation, state}` JSON Schemas.
pub fn schemas(env: &dyn Environment) -> Value {
    let names: Vec<&str> = env.tools().iter().map(|t| t.name.as_ref()).collect();
    let mut actions = vec![json!({
        "title": "ListToolsAction",
        "type": "object",
        "properties": {
            "type": { "const": "list_tools", "type": "string" },
            "metadata": { "type": "object" },
        },
        "required": ["type"],
        "additionalProperties": false,
    })];
    for tool in env.tools() {
        actions.push(json!({
            "title": format!("CallToolAction[{}]", tool.name),
            "description": tool.description.as_deref().unwrap_or_default(),
            "type": "object",
            "properties": {
                "type": { "const": "call_tool", "type": "string" },
                "tool_name": { "const": tool.name, "type": "string" },
                "arguments": Value::Object((*tool.input_schema).clone()),
                "metadata": { "type": "object" },
            },
            "required": ["type", "tool_name"],
            "additionalProperties": false,
        }));
    }
    let metadata = json!({ "type": "object", "additionalProperties": true });
    let tool_error = json!({
        "anyOf": [
            { "type": "null" },
            {
                "type": "object",
                "properties": {
                    "error_type": {
                        "type": "string",
                        "enum": ["execution_error", "invalid_args", "transport_error", "tool_not_found", "timeout"],
                    },
                    "message": { "type": "string" },
                },
                "required": ["error_type", "message"],
            },
        ],
    });
    json!({
        "action": {
            "title": "MCPAction",
            "description": format!(
                "An MCP action: list the tools, or call one of {}.",
                names.join(", ")
            ),
            "oneOf": actions,
        },
        "observation": {
            "title": "MCPObservation",
            "oneOf": [
                {
                    "title": "ListToolsObservation",
                    "type": "object",
                    "properties": {
                        "tools": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "name": { "type": "string", "enum": names },
                                    "description": { "type": "string" },
                                    "input_schema": { "type": "object" },
                                },
                                "required": ["name", "description", "input_schema"],
                            },
                        },
                        "metadata": metadata,
                    },
                    "required": ["tools"],
                },
                {
                    "title": "CallToolObservation",
                    "type": "object",
                    "properties": {
                        "tool_name": { "type": "string", "enum": names },
                        "result": {
                            "description": "The tool's result: MCP content blocks (text, and images as {type: \"image\", data: base64, mimeType}); is_error marks a refused call, which the model must see.",
                            "anyOf": [
                                { "type": "null" },
                                {
                                    "type": "object",
                                    "properties": {
                                        "content": { "type": "array", "items": { "type": "object" } },
                                        "structured_content": {},
                                        "data": {},
                                        "meta": {},
                                        "is_error": { "type": "boolean" },
                                    },
                                    "required": ["content", "is_error"],
                                },
                            ],
                        },
                        "error": tool_error,
                        "metadata": {
                            "type": "object",
                            "description": "episode_id, turn, reward_components, return, truncated",
                        },
                    },
                    "required": ["tool_name", "result", "error"],
                },
            ],
        },
        "reset_observation": {
            "title": "ResetObservation",
            "type": "object",
            "properties": {
                "prompt": { "type": "string", "description": "The environment's instructions and the task." },
                "episode_id": { "type": "string", "description": "The episode, as GET /episodes/{id} names it." },
                "env": { "type": "string" },
                "task": { "type": "string" },
                "seed": { "type": "integer", "minimum": 0 },
                "metadata": metadata,
            },
            "required": ["prompt", "episode_id", "env", "task", "seed"],
        },
        "state": {
            "title": "State",
            "type": "object",
            "properties": {
                "episode_id": { "type": ["string", "null"] },
                "step_count": { "type": "integer", "minimum": 0 },
                "env": { "type": "string" },
                "task": { "type": "string" },
                "seed": { "type": "integer" },
                "turn": { "type": "integer" },
                "max_turns": { "type": "integer" },
                "return": { "type": "number" },
                "reward_components": { "type": "object" },
                "done": { "type": "boolean" },
                "truncated": { "type": "boolean" },
            },
            "required": ["episode_id", "step_count"],
            "additionalProperties": true,
        },
    })
}

/// `GET /<env>/metadata`: OpenEnv's `EnvironmentMetadata`.
pub fn metadata(env: &dyn Environment) -> Value {
    json!({
        "name": env.name(),
        "description": env.instructions(),
        "readme_content": null,
        "version": env!("CARGO_PKG_VERSION"),
        "author": null,
        "documentation_url": env!("CARGO_PKG_REPOSITORY"),
    })
}
