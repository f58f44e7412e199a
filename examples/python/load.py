"""Load on an environment written in Python: N episodes started and stepped at once, then the
server's and workers' CPU time and the workers' memory with every episode live.

    python examples/python/load.py target/release/mcpgym [N]

It serves tests/data/python_faults.py (its `count` step is a few lines of Python); the wall
time is the client's (httpx spends more CPU than the server), so read the CPU figures.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]


def cpu_seconds(pid: str) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[str]:
    tasks = Path(f"/proc/{pid}/task")
    return [kid for task in tasks.iterdir() for kid in (task / "children").read_text().split()]


async def load(url: str, episodes: int) -> None:
    gate = asyncio.Semaphore(32)
    limits = httpx.Limits(max_connections=32)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=600) as client:

        async def one(seed: int) -> None:
            async with gate:
                created = await client.post("/episodes", json={"task": "one", "seed": seed})
                episode = created.json()["id"]
                await client.post(f"/episodes/{episode}/call", json={"tool": "count"})

        started = time.monotonic()
        await asyncio.gather(*(one(seed) for seed in range(episodes)))
        print(f"{episodes} episodes started and stepped in {time.monotonic() - started:.1f} s")


def main() -> None:
    binary, episodes = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    env = {**os.environ, "PYTHONPATH": str(REPO / "python" / "src")}
    env.setdefault("MCPGYM_PYTHON", sys.executable)
    spec = f"{REPO}/tests/data/python_faults.py:Faults"
    command = [binary, "python", spec, "--http", "127.0.0.1:0", "--max-episodes", "100000"]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    assert server.stderr is not None
    url = next(
        m.group(1) for line in server.stderr if (m := re.search(r"listening on (\S+)", line))
    )
    try:
        asyncio.run(load(url, episodes))
        live = next(
            line
            for line in httpx.get(f"{url}/metrics").text.splitlines()
            if line.startswith("mcpgym_episodes_live")
        )
        workers = children(server.pid)
        rss = sum(
            int(Path(f"/proc/{kid}/status").read_text().split("VmRSS:")[1].split()[0])
            for kid in workers
        )
        print(live)
        print(f"server CPU {cpu_seconds(str(server.pid)):.2f} s")
        print(
            f"{len(workers)} workers: CPU {sum(cpu_seconds(k) for k in workers):.2f} s, "
            f"resident {rss / 1024:.1f} MiB"
        )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
