"""A TRL `environment_factory`: one mcpgym episode per rollout, its return as the reward.

    from trl import GRPOTrainer
    from mcpgym.adapters.trl import environment_factory

    Wordle = environment_factory("http://127.0.0.1:8000", "wordle")
    trainer = GRPOTrainer(model=..., train_dataset=dataset, environment_factory=Wordle)

The factory is a class: TRL builds instances with no arguments, pools them and calls
`reset(**row)` before each rollout. `reset` closes the previous episode and starts a new one
(the row's `task`, `seed`, `split` and `options` are used when present) and returns the episode's
prompt, which TRL appends to the last user message (unless that message already holds it, as a
row of `mcpgym tasks export` does). Every tool of the environment is a typed,
Google-docstringed method on the class, so TRL (through transformers' `get_json_schema`) shows
them to the model; `get_reward()` is the episode's return, which TRL takes as a reward function
named after the class.

No TRL import is needed to build the class.
"""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Callable, Mapping
from typing import Any

from mcpgym.adapters._toolcall import decode_image, function_parameters
from mcpgym.client import Client, Episode, Step

__all__ = ["environment_factory"]

_START_KEYS = ("task", "seed", "split", "options")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PY_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict,
}


def _annotation(prop: Mapping[str, Any]) -> Any:
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items")
        inner = (
            _PY_TYPES.get(items.get("type", "string"), str) if isinstance(items, Mapping) else str
        )
        return list[inner]  # type: ignore[valid-type]
    return _PY_TYPES.get(str(kind), str)


def _docstring(description: str, properties: Mapping[str, Mapping[str, Any]]) -> str:
    # transformers' parser wants one line per argument: "name: description".
    lines = [" ".join(description.split()) or "Call the tool."]
    if properties:
        lines += ["", "Args:"]
        for name, prop in properties.items():
            text = " ".join(str(prop.get("description") or name).split())
            lines.append(f"    {name}: {text}")
    lines += ["", "Returns:", "    The observation: what the environment shows after the call."]
    return "\n".join(lines)


def _tool_method(tool: Mapping[str, Any]) -> Callable[..., Any] | None:
    """A method calling `tool` in the instance's episode, typed from its input schema."""
    name = str(tool["name"])
    if not _IDENTIFIER.match(name) or keyword.iskeyword(name):
        return None
    parameters = function_parameters(tool.get("inputSchema"))
    properties: dict[str, dict[str, Any]] = parameters["properties"]
    required = set(parameters["required"])
    if any(not _IDENTIFIER.match(p) or keyword.iskeyword(p) for p in properties):
        return None
    ordered = [p for p in properties if p in required] + [
        p for p in properties if p not in required
    ]
    signature_params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for pname in ordered:
        kind = _annotation(properties[pname])
        if pname in required:
            annotations[pname] = kind
            default: Any = inspect.Parameter.empty
        else:
            annotations[pname] = kind | None
            default = None
        signature_params.append(
            inspect.Parameter(
                pname,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=default,
                annotation=annotations[pname],
            )
        )
    names = ordered

    def method(self: _Environment, *args: Any, **kwargs: Any) -> Any:
        arguments = dict(zip(names, args, strict=False))
        arguments.update(kwargs)
        return self._call(name, {k: v for k, v in arguments.items() if v is not None})

    annotations["return"] = Any
    method.__name__ = name
    method.__qualname__ = name
    method.__doc__ = _docstring(str(tool.get("description") or ""), properties)
    method.__annotations__ = annotations
    method.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        signature_params, return_annotation=Any
    )
    return method


def _carries(messages: Any, prompt: str) -> bool:
    """Whether the last message of a row's `prompt` already holds `prompt`."""
    if not isinstance(messages, list) or not messages:
        return False
    last = messages[-1]
    content = last.get("content") if isinstance(last, Mapping) else None
    if isinstance(content, list):
        content = "".join(
            str(part.get("text", "")) for part in content if isinstance(part, Mapping)
        )
    return isinstance(content, str) and prompt in content


class _Environment:
    """The base of every class `environment_factory` builds (its private half)."""

    _base_url: str = ""
    _env: str | None = None
    _token: str | None = None
    _timeout: float = 300.0
    _defaults: dict[str, Any] = {}  # noqa: RUF012
    _images: bool = False
    _prompt: bool = True

    def __init__(self) -> None:
        self._client = Client(self._base_url, token=self._token, timeout=self._timeout)
        self._episode: Episode | None = None
        self._last: Step | None = None
        self._return = 0.0

    def reset(self, **row: Any) -> str | None:
        """Starts this rollout's episode (closing the previous one) and returns its prompt."""
        self._close_episode()
        args = dict(self._defaults)
        args.update({k: row[k] for k in _START_KEYS if row.get(k) is not None})
        self._episode = self._client.start(self._env, **args)
        self._last = None
        self._return = 0.0
        if not self._prompt:
            return None
        prompt = self._episode.prompt()
        # A row from `mcpgym tasks export` already carries the prompt: TRL would append it
        # to that same message a second time.
        return None if _carries(row.get("prompt"), prompt) else prompt

    def get_reward(self) -> float:
        """The episode's return: the sum of its step rewards."""
        return self._return

    def _call(self, tool: str, arguments: dict[str, Any]) -> Any:
        if self._episode is None:
            raise RuntimeError("reset() starts the episode before any tool call")
        step = self._episode.call(tool, arguments)
        self._last = step
        self._return = step.return_
        text = step.text or "(no text output)"
        if self._images and step.images:
            parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
            parts += [{"type": "image", "image": decode_image(d)} for d, _m in step.images]
            return parts
        return text

    @property
    def _step(self) -> Step | None:
        """The last step of this rollout."""
        return self._last

    def _close_episode(self) -> None:
        if self._episode is not None:
            self._episode.close()
            self._episode = None

    def __del__(self) -> None:
        try:
            self._close_episode()
            self._client.close()
        except Exception:
            pass


def environment_factory(
    base_url: str,
    env: str | None = None,
    *,
    token: str | None = None,
    timeout: float = 300.0,
    images: bool = False,
    prompt: bool = True,
    task: str | None = None,
    seed: int | None = None,
    split: str | None = None,
    options: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> type[_Environment]:
    """The environment class for `GRPOTrainer(environment_factory=...)`.

    Reads `env`'s tools from the server at `base_url` and makes each a method. `images=True`
    returns a tool's images (screenshots, plots) as `{"type": "image", "image": PIL.Image}`
    parts for vision-language models; otherwise only the text is returned. `prompt=False`
    makes `reset` return None (the dataset's prompt carries the task). `task`, `seed`,
    `split` and `options` are defaults a dataset row's own columns override.
    """
    with Client(base_url, token=token, timeout=timeout) as client:
        tools = client.tools(env)
    defaults = {
        k: v
        for k, v in (("task", task), ("seed", seed), ("split", split), ("options", options))
        if v is not None
    }
    namespace: dict[str, Any] = {
        "_base_url": base_url,
        "_env": env,
        "_token": token,
        "_timeout": timeout,
        "_defaults": defaults,
        "_images": images,
        "_prompt": prompt,
        "__doc__": f"The mcpgym {env or 'environment'} at {base_url}, one episode per rollout.",
    }
    for tool in tools:
        method = _tool_method(tool)
        if method is not None and method.__name__ not in ("reset", "get_reward"):
            namespace[method.__name__] = method
    title = "".join(part.title() for part in re.split(r"[^A-Za-z0-9]+", env or "")) or "Env"
    cls = type(name or f"Mcpgym{title}", (_Environment,), namespace)
    for attr, value in namespace.items():
        if callable(value) and not attr.startswith("_"):
            value.__qualname__ = f"{cls.__name__}.{attr}"
    return cls
