"""mcpgym: reinforcement-learning environments for LLM agents, from Python.

Start the server (`Server("wordle")`, or `mcpgym serve --http 127.0.0.1:8000` from the shell),
then play episodes through `Client` or `AsyncClient`:

    from mcpgym import Client, Server

    with Server("wordle") as server, Client(server.url) as client:
        with client.start(seed=7) as episode:
            step = episode.call("guess", word="crane")
            print(step.text, step.reward, step.done)

`McpgymEnv` (in `mcpgym.gym`) wraps an episode Gymnasium-style; `mcpgym.adapters` holds one
small module per trainer framework.
"""

from mcpgym.client import AsyncClient, AsyncEpisode, Client, Episode, McpgymError, Step
from mcpgym.server import Server, binary_path

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
