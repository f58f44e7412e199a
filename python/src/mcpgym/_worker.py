"""The worker process behind `mcpgym serve --python module:Class`.

The server starts `python -m mcpgym._worker SPEC` (one per core by default) and speaks JSON
lines with it: one request per line on stdin, one answer per line on stdout, in order. Each
episode is a fresh instance of the class, keyed by the server's episode key. Whatever the
environment prints goes to stderr (the server's log), so it can never be taken for an answer.

`python -m mcpgym._worker SPEC --describe` prints the class's description (name, tasks, tools)
and exits: the server reads it once at start.
"""

from __future__ import annotations

import base64
import importlib
import importlib.util
import inspect
import json
import math
import os
import sys
import traceback
from pathlib import Path
from typing import IO, Any

from mcpgym.env import (
    ArgumentError,
    Environment,
    Outcome,
    ToolInfo,
    check_arguments,
    tools_of,
)


class SpecError(Exception):
    """The SPEC names no usable environment class; the message says why and what to do."""


def load(spec: str) -> type[Environment]:
    """The class `module:Class` (or `path/to/file.py:Class`) names, checked."""
    module_name, sep, class_name = spec.rpartition(":")
    if not sep or not module_name or not class_name:
        raise SpecError(f"{spec!r} is not module:Class (e.g. my_env:Coin or envs/coin.py:Coin)")
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise SpecError(f"{module_name} is not a file")
        sys.path.insert(0, str(path.resolve().parent))
        loaded = importlib.util.spec_from_file_location(path.stem, path)
        if loaded is None or loaded.loader is None:
            raise SpecError(f"{module_name} cannot be imported as a module")
        module = importlib.util.module_from_spec(loaded)
        sys.modules[path.stem] = module
        loaded.loader.exec_module(module)
    else:
        # Like `python -m`: modules in the working folder are found.
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            raise SpecError(
                f"cannot import {module_name!r} ({error}); run from the folder that holds it "
                "or put it on PYTHONPATH"
            ) from None
    cls = getattr(module, class_name, None)
    if not (inspect.isclass(cls) and issubclass(cls, Environment)):
        raise SpecError(f"{module_name} has no class {class_name} deriving mcpgym.env.Environment")
    return cls


def describe(cls: type[Environment]) -> dict[str, Any]:
    """What the server needs of the class: its name, instructions, tasks and tools."""
    import re

    name = cls.name
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9-]{0,31}", name):
        raise SpecError(
            f"{cls.__name__}.name must be 1 to 32 lowercase letters, digits or '-', "
            f"starting with a letter (it is {name!r})"
        )
    tasks = cls.tasks
    if not isinstance(tasks, dict) or set(tasks) - {"train", "test"}:
        raise SpecError(f"{cls.__name__}.tasks must be {{'train': [...], 'test': [...]}}")
    for split, ids in tasks.items():
        if not isinstance(ids, list | tuple) or not all(isinstance(i, str) and i for i in ids):
            raise SpecError(f"{cls.__name__}.tasks[{split!r}] must be a list of task ids")
    if not tasks.get("train") and not tasks.get("test"):
        raise SpecError(f"{cls.__name__}.tasks lists no task")
    tools = tools_of(cls)
    if not tools:
        raise SpecError(f"{cls.__name__} declares no tool: mark methods with @tool")
    if not isinstance(cls.max_turns, int) or not 1 <= cls.max_turns <= 100_000:
        raise SpecError(f"{cls.__name__}.max_turns must be a whole number from 1 to 100000")
    return {
        "name": name,
        "instructions": cls.instructions or f"The {name} environment.",
        "tasks": {"train": list(tasks.get("train", [])), "test": list(tasks.get("test", []))},
        "tools": [
            {"name": t.name, "description": t.description, "inputSchema": t.schema} for t in tools
        ],
        "max_turns": cls.max_turns,
        "deterministic": bool(cls.deterministic),
    }


class Worker:
    """The episodes of one worker process, and what each request does to them."""

    def __init__(self, cls: type[Environment]) -> None:
        self.cls = cls
        self.tools = {info.name: info for info in tools_of(cls)}
        self.episodes: dict[str, Environment] = {}
        self.reset_takes_options = "options" in inspect.signature(cls.reset).parameters

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        key = str(request.get("episode"))
        if op == "reset":
            return self.reset(key, request)
        if op == "call":
            return self.call(key, str(request.get("tool")), request.get("arguments") or {})
        if op == "close":
            self.close(key)
            return {}
        return {"error": f"unknown request {op!r}", "kind": "protocol"}

    def reset(self, key: str, request: dict[str, Any]) -> dict[str, Any]:
        options = request.get("options") or {}
        if options and not self.reset_takes_options:
            return {
                "error": f"{self.cls.name} takes no options (its reset has no options parameter)",
                "kind": "options",
            }
        self.close(key)
        try:
            instance = self.cls()
            task, seed = str(request["task"]), int(request["seed"])
            if self.reset_takes_options:
                prompt = instance.reset(task, seed, options=options)  # type: ignore[call-arg]
            else:
                prompt = instance.reset(task, seed)
        except ValueError as error:
            if options:
                return {"error": f"invalid {self.cls.name} options: {error}", "kind": "options"}
            return raised(error)
        except Exception as error:
            return raised(error)
        self.episodes[key] = instance
        return {"prompt": prompt if isinstance(prompt, str) else None}

    def call(self, key: str, name: str, arguments: Any) -> dict[str, Any]:
        instance = self.episodes.get(key)
        if instance is None:
            return {"error": f"no episode {key} in this worker", "kind": "protocol"}
        info = self.tools.get(name)
        problem = self.refusal(info, name, arguments)
        if problem is not None or info is None:
            return refused(problem or f"Unknown tool {name}.")
        try:
            # Through the class: an instance attribute of the same name cannot hide the tool.
            method = getattr(type(instance), info.method)
            answer = outcome(info, method(instance, **arguments))
            if answer.get("done"):
                answer["reveal"] = instance.reveal()
            json.dumps(answer, allow_nan=False)
        except ArgumentError as error:
            return refused(str(error))
        except Exception as error:
            return raised(error)
        return answer

    @staticmethod
    def refusal(info: ToolInfo | None, name: str, arguments: Any) -> str | None:
        """Why the call is refused before the tool runs, or None."""
        if info is None:
            return f"Unknown tool {name}."
        if not isinstance(arguments, dict):
            return f"Invalid arguments for {name}: give an object."
        problem = check_arguments(info, arguments)
        return f"Invalid arguments for {name}: {problem}." if problem else None

    def close(self, key: str) -> None:
        instance = self.episodes.pop(key, None)
        if instance is not None:
            try:
                instance.close()
            except Exception:
                traceback.print_exc()


def outcome(info: ToolInfo, result: Any) -> dict[str, Any]:
    """A tool's return value as the answer the server reads."""
    if result is None:
        result = Outcome()
    elif isinstance(result, str):
        result = Outcome(result)
    elif not isinstance(result, Outcome):
        raise TypeError(
            f"tool {info.name} returned {type(result).__name__}; return a str or an Outcome"
        )
    rewards = result.reward if isinstance(result.reward, dict) else {"reward": result.reward}
    paid: dict[str, float] = {}
    for component, value in rewards.items():
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise TypeError(f"tool {info.name}: reward {component!r} is not a number")
        if math.isfinite(value) and value != 0:
            paid[str(component)] = float(value)
    content: list[dict[str, Any]] = [{"type": "text", "text": str(result.text)}]
    for image in result.images:
        content.append(
            {
                "type": "image",
                "data": base64.b64encode(image.data).decode(),
                "mimeType": image.mime_type,
            }
        )
    answer: dict[str, Any] = {
        "content": content,
        "rewards": paid,
        "done": bool(result.done),
        "is_error": bool(result.error),
    }
    if result.data is not None:
        answer["structured"] = result.data
    return answer


def refused(text: str) -> dict[str, Any]:
    """A call the model got wrong: an error observation, the episode goes on."""
    return {
        "content": [{"type": "text", "text": text}],
        "rewards": {},
        "done": False,
        "is_error": True,
    }


def raised(error: BaseException) -> dict[str, Any]:
    """The environment's own code failed: the traceback goes to the log, the episode aborts."""
    traceback.print_exception(error, file=sys.stderr)
    return {"error": f"{type(error).__name__}: {error}", "kind": "raised"}


def serve(cls: type[Environment], answers: IO[str]) -> None:
    """Answers requests from stdin until it closes."""
    worker = Worker(cls)
    answers.write('{"ready": true}\n')
    answers.flush()
    for line in sys.stdin:
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("not an object")
        except ValueError as error:
            answers.write(json.dumps({"error": f"bad request: {error}", "kind": "protocol"}))
            answers.write("\n")
            answers.flush()
            continue
        answer = worker.handle(request)
        answer["id"] = request.get("id")
        answers.write(json.dumps(answer, allow_nan=False))
        answers.write("\n")
        answers.flush()


def main() -> None:
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print("usage: python -m mcpgym._worker module:Class [--describe]", file=sys.stderr)
        raise SystemExit(2)
    # Answers go to the real stdout; anything the environment prints goes to stderr.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        cls = load(args[0])
        description = describe(cls)
    except SpecError as error:
        print(f"mcpgym: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    if "--describe" in args[1:]:
        answers.write(json.dumps(description) + "\n")
        answers.flush()
        return
    serve(cls, answers)


if __name__ == "__main__":
    main()
