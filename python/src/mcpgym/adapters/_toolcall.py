"""Tool schemas and text tool calls, shared by the adapters.

Trainers that see the model's raw text (SkyRL, GEM, RL-Factory) need its tool calls parsed;
trainers that render a tools list into the prompt need MCP tools as OpenAI functions. Both live
here, free of any framework import.
"""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Hermes / Qwen: <tool_call>{"name": ..., "arguments": {...}}</tool_call>
_HERMES = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
# GEM's MCP tool: <tool_call><tool_name>x</tool_name><arguments>{...}</arguments></tool_call>
_GEM = re.compile(
    r"<tool_call>\s*<tool_name>([^<]+)</tool_name>\s*<arguments>(.*?)</arguments>\s*</tool_call>",
    re.DOTALL,
)
_OPEN_TAG = "<tool_call>"

_JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object")


class ToolCallError(ValueError):
    """The model wrote a tool call that cannot be read; the message says what to fix."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call read from the model's text."""

    name: str
    """The tool's name."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """Its arguments."""


def _arguments(raw: Any, name: str) -> dict[str, Any]:
    # Some chat templates emit the arguments as a JSON string.
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as error:
            raise ToolCallError(f"the arguments of {name} are not JSON: {error}") from error
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ToolCallError(f"the arguments of {name} must be a JSON object")
    return dict(raw)


def parse_tool_calls(text: str) -> list[ToolCall]:
    """Every tool call in `text`, in order.

    Reads the Hermes/Qwen form `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` and
    GEM's `<tool_call><tool_name>...</tool_name><arguments>{...}</arguments></tool_call>`.
    Returns an empty list when the text has no tool call; raises `ToolCallError` when it opens
    one that cannot be read.
    """
    calls: list[ToolCall] = []
    for match in _GEM.finditer(text):
        calls.append(ToolCall(match.group(1).strip(), _arguments(match.group(2), "the call")))
    if calls:
        return calls
    for match in _HERMES.finditer(text):
        try:
            body = json.loads(match.group(1))
        except json.JSONDecodeError as error:
            raise ToolCallError(f"a <tool_call> is not valid JSON: {error}") from error
        if not isinstance(body, dict) or not isinstance(body.get("name"), str):
            raise ToolCallError('a <tool_call> must hold {"name": ..., "arguments": {...}}')
        name = body["name"]
        calls.append(
            ToolCall(name, _arguments(body.get("arguments", body.get("parameters")), name))
        )
    if not calls and _OPEN_TAG in text:
        raise ToolCallError(
            'a <tool_call> was opened but not read: write <tool_call>{"name": "TOOL", '
            '"arguments": {...}}</tool_call>'
        )
    return calls


def _flatten(prop: Mapping[str, Any]) -> dict[str, Any]:
    """One property, with a single `type` (a nullable or union type keeps its first real one)."""
    out = dict(prop)
    kind = out.get("type")
    if isinstance(kind, list):
        real = [k for k in kind if k != "null"]
        out["type"] = real[0] if real else "string"
    for key in ("anyOf", "oneOf"):
        variants = out.pop(key, None)
        if isinstance(variants, list) and "type" not in out:
            real = [v for v in variants if isinstance(v, dict) and v.get("type") != "null"]
            if real:
                out.update({k: v for k, v in real[0].items() if k not in out})
    if out.get("default", 0) is None:
        del out["default"]
    if out.get("type") not in _JSON_TYPES:
        out["type"] = "string"
    return out


def function_parameters(input_schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """An MCP `inputSchema` as OpenAI function parameters: exactly `type`, `properties` and
    `required`, every property with one `type`."""
    schema = dict(input_schema or {})
    properties = {
        str(name): _flatten(prop)
        for name, prop in (schema.get("properties") or {}).items()
        if isinstance(prop, Mapping)
    }
    required = [str(r) for r in schema.get("required") or [] if r in properties]
    return {"type": "object", "properties": properties, "required": required}


def openai_function(tool: Mapping[str, Any]) -> dict[str, Any]:
    """An MCP tool (`name`, `description`, `inputSchema`) as an OpenAI function tool:
    `{"type": "function", "function": {name, description, parameters}}`."""
    return {
        "type": "function",
        "function": {
            "name": str(tool["name"]),
            "description": str(tool.get("description") or tool["name"]),
            "parameters": function_parameters(tool.get("inputSchema")),
        },
    }


def tools_prompt(tools: Sequence[Mapping[str, Any]]) -> str:
    """A system prompt listing `tools` (MCP tools) and the Hermes/Qwen tool-call format."""
    listing = "\n".join(json.dumps(openai_function(t), ensure_ascii=False) for t in tools)
    return (
        "You may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{listing}\n</tools>\n\n"
        "For each function call, return a json object with function name and arguments within "
        "<tool_call></tool_call> XML tags:\n"
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )


def decode_image(data: str) -> Any:
    """A base64 image as a PIL image (PIL is imported only here)."""
    from PIL import Image

    image = Image.open(io.BytesIO(base64.b64decode(data)))
    image.load()
    return image


def data_url(data: str, mime: str) -> str:
    """A base64 image as a `data:` URL."""
    return f"data:{mime or 'image/png'};base64,{data}"
