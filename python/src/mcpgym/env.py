"""Environments written in Python, served by `mcpgym serve --python module:Class`.

An environment is a class: its tasks by split, a `reset(task, seed)` that starts an episode,
and tools declared once with `@tool` on typed methods (each tool's name, description and input
schema are read from the method). A tool returns the observation's text, or an `Outcome` that
also pays a reward or ends the episode:

    from mcpgym.env import Environment, Outcome, tool

    class Coin(Environment):
        name = "coin"
        instructions = "Guess heads or tails."
        tasks = {"train": ["flip"], "test": ["flip-test"]}

        def reset(self, task: str, seed: int) -> str | None:
            self.side = "heads" if seed % 2 else "tails"
            return "A coin was flipped."

        @tool
        def choose(self, side: Literal["heads", "tails"]) -> Outcome:
            "Say which side the coin landed on."
            won = side == self.side
            return Outcome("right" if won else "wrong", reward=float(won), done=True)

The server starts one instance of the class per episode, in worker processes of its own (one
per core by default); a step that raises, hangs past its timeout or kills its worker ends that
episode as aborted, and the server goes on.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar, get_args, get_origin

__all__ = ["ArgumentError", "Environment", "Image", "Outcome", "tool"]

F = TypeVar("F", bound=Callable[..., Any])

_TOOL_MARK = "__mcpgym_tool__"


@dataclass(frozen=True)
class Image:
    """An image in an observation: its encoded bytes and media type."""

    data: bytes
    mime_type: str = "image/png"


@dataclass
class Outcome:
    """What a tool call did: the observation, what it paid, and whether the episode is over.

    `reward` is one number (paid as the component `reward`) or named components. `error`
    marks a refused call (a bad move): it is shown to the model as an error and pays what it
    pays. `data` is the observation's structured content (any JSON value), and `images` are
    shown after the text.
    """

    text: str = ""
    reward: float | dict[str, float] = 0.0
    done: bool = False
    error: bool = False
    data: Any = None
    images: list[Image] = field(default_factory=list)


class ArgumentError(ValueError):
    """Raised inside a tool for an argument that is well-typed but not allowed: the call is
    refused with this message, and the episode goes on."""


def tool(function: F | None = None, *, name: str | None = None) -> Any:
    """Declares a method as a tool. Its name is the method's (or `name`), its description the
    docstring's first paragraph, and its input schema follows from the parameters' type hints
    (`int`, `float`, `str`, `bool`, `list[...]`, `dict[str, ...]`, `Literal[...]`, `X | None`,
    and `Annotated[X, "description"]`); a parameter with a default is optional."""

    def mark(method: F) -> F:
        setattr(method, _TOOL_MARK, name or method.__name__)
        return method

    if function is not None:
        return mark(function)
    return mark


class Environment:
    """The base of a Python environment. Set the class attributes, write `reset`, and mark
    tools with `@tool`."""

    name: ClassVar[str] = ""
    """The environment's name: `POST /episodes {"env": name}` and `/<name>/mcp`."""
    instructions: ClassVar[str] = ""
    """A sentence or two for clients: what the game is and how to play it."""
    tasks: ClassVar[dict[str, list[str]]] = {}
    """Task ids by split: `{"train": [...], "test": [...]}`."""
    max_turns: ClassVar[int] = 30
    """The turn limit when the server's `--max-turns` does not set one."""
    deterministic: ClassVar[bool] = False
    """True when an episode follows from its task, seed and calls alone: a restarted server
    (or a restarted worker) then rebuilds it by replaying them."""

    def reset(self, task: str, seed: int) -> str | None:
        """Starts the episode (on a fresh instance); returns the task's prompt, or None when the
        instructions say everything."""
        raise NotImplementedError(f"{type(self).__name__} must define reset(task, seed)")

    def reveal(self) -> dict[str, Any]:
        """What becomes public once the episode is done (the answer, say)."""
        return {}

    def close(self) -> None:
        """Releases what the episode holds; called once when it ends or is closed."""


# --- describing a class ------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolInfo:
    """One tool of a class: its method and what clients see of it."""

    name: str
    method: str
    description: str
    schema: dict[str, Any]
    parameters: dict[str, tuple[Any, bool]]
    """Each parameter's type hint and whether it is required."""


def tools_of(cls: type[Environment]) -> list[ToolInfo]:
    """The tools `cls` declares with `@tool`, in definition order (bases first)."""
    found: dict[str, ToolInfo] = {}
    for klass in reversed(cls.__mro__):
        for attribute, method in vars(klass).items():
            name = getattr(method, _TOOL_MARK, None)
            if name is not None:
                found[name] = _describe(name, attribute, method)
    return list(found.values())


def _describe(name: str, attribute: str, method: Callable[..., Any]) -> ToolInfo:
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
        raise TypeError(f"tool name {name!r}: use 1 to 64 letters, digits, '_', '-' or '.'")
    hints = typing.get_type_hints(method, include_extras=True)
    doc = inspect.getdoc(method) or ""
    description = doc.split("\n\n", 1)[0].replace("\n", " ").strip() or name
    argument_docs = _argument_docs(doc)
    properties: dict[str, Any] = {}
    required: list[str] = []
    parameters: dict[str, tuple[Any, bool]] = {}
    for index, parameter in enumerate(inspect.signature(method).parameters.values()):
        if index == 0:
            continue  # self
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            raise TypeError(f"tool {name}: *args and **kwargs cannot be described; name each")
        if parameter.name not in hints:
            raise TypeError(f"tool {name}: give parameter {parameter.name!r} a type hint")
        hint = hints[parameter.name]
        schema = schema_of(hint, f"tool {name}, parameter {parameter.name!r}")
        if parameter.name in argument_docs and "description" not in schema:
            schema["description"] = argument_docs[parameter.name]
        is_required = parameter.default is inspect.Parameter.empty
        if not is_required and _jsonable(parameter.default):
            schema["default"] = parameter.default
        properties[parameter.name] = schema
        parameters[parameter.name] = (hint, is_required)
        if is_required:
            required.append(parameter.name)
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return ToolInfo(name, attribute, description, schema, parameters)


def _argument_docs(doc: str) -> dict[str, str]:
    """`name: text` lines under a docstring's `Args:` heading (Google style)."""
    found: dict[str, str] = {}
    section = re.search(r"^(?:Args|Arguments|Parameters):\s*\n((?:[ \t]+.*\n?)+)", doc, re.M)
    if section:
        for match in re.finditer(r"^\s+(\w+)(?:\s*\(.*?\))?:\s*(.+)$", section.group(1), re.M):
            found[match.group(1)] = match.group(2).strip()
    return found


def _jsonable(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def schema_of(hint: Any, where: str) -> dict[str, Any]:
    """The JSON Schema of a type hint; `where` names the parameter in the error."""
    origin = get_origin(hint)
    if origin is typing.Annotated:
        inner, *extras = get_args(hint)
        schema = schema_of(inner, where)
        text = next((extra for extra in extras if isinstance(extra, str)), None)
        if text:
            schema["description"] = text
        return schema
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if hint is Any:
        return {}
    if origin is Literal:
        values = list(get_args(hint))
        if not all(_jsonable(value) for value in values):
            raise TypeError(f"{where}: Literal values must be strings, numbers or booleans")
        return {"enum": values}
    if origin in (typing.Union, types.UnionType):
        members = [arg for arg in get_args(hint) if arg is not type(None)]
        schemas = [schema_of(member, where) for member in members]
        if len(get_args(hint)) != len(members):
            schemas.append({"type": "null"})
        return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    return _container_schema(hint, where)


def _container_schema(hint: Any, where: str) -> dict[str, Any]:
    """The schema of a list, tuple or dict hint."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (list, tuple) or hint in (list, tuple):
        schema: dict[str, Any] = {"type": "array"}
        if args and origin is list:
            schema["items"] = schema_of(args[0], where)
        return schema
    if origin is dict or hint is dict:
        schema = {"type": "object"}
        if args:
            if args[0] is not str:
                raise TypeError(f"{where}: dict keys must be str (JSON object keys)")
            schema["additionalProperties"] = schema_of(args[1], where)
        return schema
    raise TypeError(
        f"{where}: type {hint!r} has no JSON Schema here; use str, int, float, bool, list, "
        "dict, Literal or a union of them"
    )


# --- checking arguments ------------------------------------------------------------------------


def check_arguments(info: ToolInfo, arguments: dict[str, Any]) -> str | None:
    """Why `arguments` do not fit the tool, as a sentence for the model, or None when they do."""
    unknown = sorted(set(arguments) - set(info.parameters))
    if unknown:
        allowed = ", ".join(info.parameters) or "none"
        return f"unknown argument {unknown[0]!r} (arguments: {allowed})"
    for name, (hint, required) in info.parameters.items():
        if name not in arguments:
            if required:
                return f"missing argument {name!r}"
            continue
        problem = _mismatch(hint, arguments[name])
        if problem:
            return f"argument {name!r}: {problem}"
    return None


def _mismatch(hint: Any, value: Any) -> str | None:
    """Why `value` (decoded JSON) is not of `hint`, or None."""
    for matches, check in _CHECKS:
        if matches(hint):
            return check(hint, value)
    return None


def _scalar(hint: Any, value: Any) -> str | None:
    if hint is bool:
        ok = isinstance(value, bool)
        expected = "true or false"
    elif hint is str:
        ok = isinstance(value, str)
        expected = "a string"
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        expected = "a whole number"
    else:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        expected = "a number"
    return None if ok else f"expected {expected}, got {_show(value)}"


def _literal(hint: Any, value: Any) -> str | None:
    allowed = get_args(hint)
    if any(value == choice and type(value) is type(choice) for choice in allowed):
        return None
    choices = ", ".join(repr(choice) for choice in allowed)
    return f"expected one of {choices}, got {_show(value)}"


def _list(hint: Any, value: Any) -> str | None:
    if not isinstance(value, list):
        return f"expected a list, got {_show(value)}"
    args = get_args(hint)
    if args and get_origin(hint) is list:
        for index, item in enumerate(value):
            problem = _mismatch(args[0], item)
            if problem:
                return f"item {index}: {problem}"
    return None


def _dict(hint: Any, value: Any) -> str | None:
    if not isinstance(value, dict):
        return f"expected an object, got {_show(value)}"
    args = get_args(hint)
    for key, item in value.items() if args else ():
        problem = _mismatch(args[1], item)
        if problem:
            return f"key {key!r}: {problem}"
    return None


def _union(hint: Any, value: Any) -> str | None:
    members = get_args(hint)
    if value is None and type(None) in members:
        return None
    problems = [_mismatch(member, value) for member in members if member is not type(None)]
    return None if any(problem is None for problem in problems) else problems[0]


_CHECKS: list[tuple[Callable[[Any], bool], Callable[[Any, Any], str | None]]] = [
    (lambda h: get_origin(h) is typing.Annotated, lambda h, v: _mismatch(get_args(h)[0], v)),
    (lambda h: h is Any, lambda h, v: None),
    (lambda h: h in _SCALARS, _scalar),
    (lambda h: get_origin(h) is Literal, _literal),
    (lambda h: get_origin(h) in (list, tuple) or h in (list, tuple), _list),
    (lambda h: get_origin(h) is dict or h is dict, _dict),
    (lambda h: get_origin(h) in (typing.Union, types.UnionType), _union),
]


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
