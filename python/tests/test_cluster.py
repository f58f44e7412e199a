"""The Python clients behind a proxy: one base URL, three replicas behind nginx configured from
`manifests/nginx/`. Episodes spread over the replicas, every request of an episode reaches the
replica holding it (the package's clients and OpenEnv's own), and a replica that is gone answers
with a sentence naming the episode."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers import REPO
from openenv.core.mcp_client import MCPToolClient

from mcpgym import AsyncClient, Client, McpgymError, Server

REPLICAS = 3
NGINX = REPO / "manifests" / "nginx"

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed")


def owner(episode_id: str) -> str:
    """The replica an episode id names: everything before its last 32 hex digits."""
    name, _, tail = episode_id.rpartition("-")
    assert len(tail) == 32 and name, episode_id
    return name


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Proxy:
    """nginx with the shipped routing and location files and the shipped deployment file, its
    replica and listen addresses put in."""

    def __init__(self, replicas: list[str]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="mcpgym-nginx-"))
        (self.dir / "mcpgym").mkdir()
        for name in ("routing.conf", "locations.conf"):
            shutil.copy(NGINX / name, self.dir / "mcpgym" / name)
        port = free_port()
        deployment = (NGINX / "mcpgym.conf").read_text()
        for index, url in enumerate(replicas):
            shipped = f"10.0.0.{index + 1}:8080"
            assert shipped in deployment
            deployment = deployment.replace(shipped, url.removeprefix("http://"))
        deployment = deployment.replace("listen 8000;", f"listen 127.0.0.1:{port};")
        (self.dir / "mcpgym.conf").write_text(deployment)
        (self.dir / "nginx.conf").write_text(
            f"daemon off;\nmaster_process off;\npid {self.dir}/nginx.pid;\n"
            f"error_log {self.dir}/error.log warn;\nevents {{ worker_connections 1024; }}\n"
            f"http {{ access_log off; client_body_temp_path {self.dir}/body;\n"
            f"  proxy_temp_path {self.dir}/proxy; include mcpgym.conf; }}\n"
        )
        self.process = subprocess.Popen(
            ["nginx", "-p", str(self.dir), "-c", str(self.dir / "nginx.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                if (
                    httpx.get(f"{self.url}/healthz", timeout=5)
                    .headers.get("server", "")
                    .startswith("nginx")
                ):
                    break
            except httpx.TransportError:
                pass
            assert self.process.poll() is None, (self.dir / "error.log").read_text()
            assert time.monotonic() < deadline, "nginx did not answer"
            time.sleep(0.05)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def cluster() -> Iterator[tuple[Proxy, list[Server]]]:
    replicas = [
        Server("wordle", "--replica", f"mcpgym-{index}", "--max-turns", "1000")
        for index in range(REPLICAS)
    ]
    proxy = Proxy([replica.url for replica in replicas])
    try:
        yield proxy, replicas
    finally:
        proxy.stop()
        for replica in replicas:
            replica.stop()


def test_the_client_reaches_every_replica_through_one_url(
    cluster: tuple[Proxy, list[Server]],
) -> None:
    proxy, _ = cluster
    with Client(proxy.url) as client:
        episodes = client.start_many(30, env="wordle")
        assert Counter(owner(e.id) for e in episodes).keys() == {
            f"mcpgym-{i}" for i in range(REPLICAS)
        }
        for episode in episodes:
            for turn in (1, 2):
                step = episode.call("guess", word="zzzzz")
                assert (step.episode, step.turn, step.is_error) == (episode.id, turn, True)
            assert episode.status()["turn"] == 2
            assert len(episode.trajectory()) == 2
            assert "Wordle" in episode.prompt()


def test_the_async_client_and_openenv_follow_the_same_routing(
    cluster: tuple[Proxy, list[Server]],
) -> None:
    proxy, _ = cluster

    async def play() -> None:
        async with AsyncClient(proxy.url) as client:
            episodes = await asyncio.gather(*(client.start(env="wordle") for _ in range(9)))
            steps = await asyncio.gather(*(e.call("guess", word="zzzzz") for e in episodes))
            assert [s.episode for s in steps] == [e.id for e in episodes]
        # OpenEnv's own client: a WebSocket per session, so the session stays on one replica.
        owners = set()
        for _ in range(REPLICAS * 2):
            async with MCPToolClient(base_url=f"{proxy.url}/wordle") as env:
                reset = await env.reset(seed=4)
                episode = reset.metadata["episode_id"]
                for _ in range(2):
                    await env.call_tool("guess", word="zzzzz")
                state = httpx.get(f"{proxy.url}/wordle/state", params={"episode_id": episode})
                assert state.status_code == 200, state.text
                assert state.json()["step_count"] == 2
                owners.add(owner(episode))
        assert len(owners) > 1, owners

    asyncio.run(play())


def test_a_replica_that_is_gone_answers_with_a_sentence(
    cluster: tuple[Proxy, list[Server]],
) -> None:
    proxy, replicas = cluster
    with Client(proxy.url) as client:
        episodes = client.start_many(6, env="wordle")
        os.kill(replicas[0].pid, signal.SIGKILL)
        lost = [e for e in episodes if owner(e.id) == "mcpgym-0"]
        kept = [e for e in episodes if owner(e.id) != "mcpgym-0"]
        assert lost and kept
        for episode in lost:
            with pytest.raises(McpgymError) as refused:
                episode.call("guess", word="zzzzz")
            assert refused.value.status == 503
            assert f"episode {episode.id} lives on replica mcpgym-0" in str(refused.value)
            assert "not answering" in str(refused.value)
        for episode in kept:
            assert episode.call("guess", word="zzzzz").turn == 1
        # New episodes go to the replicas that answer.
        fresh = client.start_many(6, env="wordle")
        assert all(owner(e.id) != "mcpgym-0" for e in fresh)
