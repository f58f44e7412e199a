"""Without the sandboxes' runtime, a Python user who starts a Jupyter episode is told the command
that installs it (`mcpgym runtime install`), and the other environments play on."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers import binary

from mcpgym import McpgymError, Server
from mcpgym.gym import McpgymEnv

INSTALL = "run `mcpgym runtime install`"


@pytest.fixture
def no_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, str]]:
    """A link to the binary away from the checkout's target/runtime, and an environment whose
    per-user cache is empty: nowhere to find a runtime."""
    monkeypatch.delenv("MCPGYM_RUNTIME", raising=False)
    (tmp_path / "bin").mkdir()
    linked = tmp_path / "bin" / "mcpgym"
    try:
        os.link(Path(binary()).resolve(), linked)
    except OSError:
        shutil.copy2(Path(binary()).resolve(), linked)
    return str(linked), {"XDG_CACHE_HOME": str(tmp_path / "cache")}


def test_a_jupyter_episode_without_a_runtime_says_how_to_install(
    no_runtime: tuple[str, dict[str, str]],
) -> None:
    linked, env = no_runtime
    with Server("serve", binary=linked, env=env) as server, server.client() as client:
        with client.start("wordle", seed=7) as episode:
            assert episode.call("guess", word="crane").turn == 1
        with pytest.raises(McpgymError) as refused:
            client.start("jupyter")
        assert INSTALL in str(refused.value)
        assert refused.value.status == 503
        # The Gymnasium-style wrapper's reset says the same.
        gym = McpgymEnv(client, "jupyter")
        with pytest.raises(McpgymError, match="mcpgym runtime install"):
            gym.reset()

    # Hosting Jupyter alone fails at start, with the sentence among the server's last lines.
    with pytest.raises(McpgymError) as failed:
        Server("jupyter", binary=linked, env=env)
    assert INSTALL in str(failed.value)
