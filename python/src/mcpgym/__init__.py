"""mcpgym: reinforcement-learning environments for LLM agents, from Python.

Start the server (`Server("wordle")`, or `mcpgym serve --http 127.0.0.1:8000` from the shell),
then play episodes through `Client` or `AsyncClient`:

    from mcpgym import Client, Server

    with Server("wordle") as server, Client(server.url) as client:
        with client.start(seed=7) as episode:
            step = episode.call("guess", word="crane")
            print(step.text, step.reward, step.done)

`McpgymEnv` (in `mcpgym.gym`) wraps an episode Gymnasium-style; `mcpgym.adapters` holds one
small module per trainer framework; `mcpgym.env` is for writing environments in Python.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpgym.client import AsyncClient, AsyncEpisode, Client, Episode, McpgymError, Step
    from mcpgym.server import Server, binary_path

# Imported when first used: a Python environment's worker imports `mcpgym.env` alone, without
# the HTTP client and its dependencies.
_LAZY = {
    "AsyncClient": "mcpgym.client",
    "AsyncEpisode": "mcpgym.client",
    "Client": "mcpgym.client",
    "Episode": "mcpgym.client",
    "McpgymError": "mcpgym.client",
    "Step": "mcpgym.client",
    "Server": "mcpgym.server",
    "binary_path": "mcpgym.server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpgym' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "AsyncClient",
    "AsyncEpisode",
    "Client",
    "Episode",
    "McpgymError",
    "Server",
    "Step",
    "binary_path",
]

__version__ = "0.1.0"
