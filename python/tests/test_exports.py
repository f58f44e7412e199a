"""`mcpgym tasks export` and `mcpgym trajectories export` files, loaded the way trainers load
them (`datasets.load_dataset("parquet"|"json")`, pyarrow), with a row played through the TRL,
SkyRL and verl adapters (each must start the row's task), and exported chats checked against
OpenAI's message types."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from helpers import binary, episode_status, play_wordle
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter
from test_adapters_verl import AgentData, call_tool

from mcpgym import Server
from mcpgym.adapters.skyrl import McpgymTextEnv
from mcpgym.adapters.trl import environment_factory
from mcpgym.adapters.verl import McpgymTool

_RANGE = re.compile(r"in (\d+)\.\.=(\d+)")


def export(*args: str) -> str:
    """Runs `mcpgym ARGS`; returns its stderr."""
    done = subprocess.run(
        [binary(), *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def bisect(guess: Any, high: int) -> str:
    """Plays Hi-Lo through `guess(number) -> text` until the number is found."""
    low = 1
    for _ in range(64):
        text = str(guess((low + high) // 2))
        if text.startswith("correct"):
            return text
        found = _RANGE.search(text)
        assert found, text
        low, high = int(found[1]), int(found[2])
    raise AssertionError("bisection did not end")


def test_parquet_and_jsonl_rows_load_alike(tmp_path: Path) -> None:
    parquet, jsonl = tmp_path / "hilo.parquet", tmp_path / "hilo.jsonl"
    for path, fmt in ((parquet, "parquet"), (jsonl, "jsonl")):
        export("tasks", "export", "--env", "hilo", "--count", "8", "--format", fmt, "-o", str(path))
    table = pq.read_table(parquet)
    text = pa.string()
    message = pa.struct([pa.field("role", text, False), pa.field("content", text, False)])
    assert table.schema.field("prompt").type.value_type == message
    assert table.schema.field("seed").type == pa.int64()
    from_json = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert table.to_pylist() == from_json
    # What verl's RLHFDataset and SkyRL's PromptDataset do with each file.
    for kind, path in (("parquet", parquet), ("json", jsonl)):
        rows = datasets.load_dataset(kind, data_files=str(path))["train"]
        assert len(rows) == 8
        row = rows[3]
        assert row["prompt"][0]["role"] == "user"
        assert row["extra_info"]["tools_kwargs"]["guess"]["create_kwargs"]["task"] == row["task"]


def test_a_row_starts_its_task_through_each_adapter(tmp_path: Path) -> None:
    path = tmp_path / "hilo.parquet"
    export(
        "tasks", "export", "--env", "hilo", "--count", "4", "--seed", "21",
        "--format", "parquet", "-o", str(path),
    )  # fmt: skip
    rows = datasets.load_dataset("parquet", data_files=str(path))["train"]
    row = dict(rows[2])
    high = int(row["task"].removeprefix("1-to-"))
    with Server("hilo") as server:
        # TRL: reset(**row) with every column; the row's prompt already holds the task.
        HiLo = environment_factory(server.url, "hilo")
        trl = HiLo()
        assert trl.reset(**row) is None
        episode = trl._episode
        assert episode is not None
        assert (episode.task, episode.seed) == (row["task"], row["seed"])
        assert bisect(lambda n: trl.guess(number=n), high).startswith("correct")
        assert trl.get_reward() >= 1.0

        # SkyRL: PromptDataset hands the row but prompt and env_class over as env_extras.
        extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
        skyrl = McpgymTextEnv({"base_url": server.url, "env": "hilo"}, extras)
        messages, info = skyrl.init(row["prompt"])
        assert (info["task"], info["seed"]) == (row["task"], row["seed"])
        assert messages[0]["role"] == "system" and messages[1:] == row["prompt"]
        skyrl.close()

        # verl: ToolAgentLoop passes extra_info.tools_kwargs[tool].create_kwargs to create.
        tools = {
            name: McpgymTool({"base_url": server.url, "env": "hilo", "tool": name})
            for name in ("guess", "rules")
        }
        data = AgentData(row["extra_info"]["tools_kwargs"])
        loop = asyncio.new_event_loop()

        def call(name: str, args: dict[str, Any]) -> str:
            response = loop.run_until_complete(call_tool(tools, data, name, args))
            return str(response.text)

        try:
            call("rules", {})
            # The episode closes when it ends: read what it started while it is live.
            status = episode_status(server, data.extra_fields["mcpgym"]["hilo"]["episode"])
            assert (status["task"], status["seed"]) == (row["task"], row["seed"])
            text = bisect(lambda n: call("guess", {"number": n}), high)
        finally:
            loop.close()
        assert text.startswith("correct")
        assert sum(data.tool_rewards) == data.extra_fields["mcpgym"]["hilo"]["return"] >= 1.0


def test_recorded_episodes_export_as_openai_chats(tmp_path: Path) -> None:
    recordings = tmp_path / "trajectories"
    with Server("wordle", "--trajectory-dir", str(recordings)) as server, server.client() as client:
        returns = {}
        for seed in range(3):
            episode = client.start("wordle", seed=seed, split="test")
            steps = play_wordle(episode)
            returns[episode.id] = steps[-1].return_
            episode.close()
    out = tmp_path / "chats.jsonl"
    export("trajectories", "export", str(recordings), "-o", str(out))
    chats = datasets.load_dataset("json", data_files=str(out))["train"]
    assert sorted(chats["episode"]) == sorted(returns)
    messages_type = TypeAdapter(list[ChatCompletionMessageParam])
    for chat in chats:
        assert chat["reward"] == returns[chat["episode"]]
        # datasets fills keys a message lacks with None; OpenAI's types want them absent.
        messages = [{k: v for k, v in m.items() if v is not None} for m in chat["messages"]]
        messages_type.validate_python(messages)
        calls = [m for m in messages if m["role"] == "assistant"]
        results = [m for m in messages if m["role"] == "tool"]
        assert [c["tool_calls"][0]["id"] for c in calls] == [r["tool_call_id"] for r in results]
        for call in calls:
            assert set(json.loads(call["tool_calls"][0]["function"]["arguments"])) == {"word"}
    best = max(returns.values())
    export("trajectories", "export", str(recordings), "-o", str(out), "--min-reward", str(best))
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert {c["episode"] for c in kept} == {e for e, r in returns.items() if r >= best}
