"""A Python environment whose steps misbehave on request, for the server's fault tests."""

from __future__ import annotations

import os
import time
from typing import ClassVar

from mcpgym.env import Environment, Outcome, tool


class Faults(Environment):
    name = "faults"
    instructions = "Steps that count, raise, hang or kill their worker."
    tasks: ClassVar[dict[str, list[str]]] = {"train": ["one", "two"], "test": ["three"]}
    max_turns = 1000
    deterministic = True

    def reset(self, task: str, seed: int) -> str:
        self.task = task
        self.counter = seed
        return f"task {task}, counting from {seed}"

    @tool
    def count(self) -> str:
        """Adds one to the counter and shows it."""
        self.counter += 1
        return f"{self.task}: {self.counter}"

    @tool
    def finish(self, pay: float = 1.0) -> Outcome:
        """Ends the episode, paying `pay`."""
        return Outcome(f"finished at {self.counter}", reward=pay, done=True)

    @tool
    def fail(self) -> str:
        """Raises."""
        raise RuntimeError(f"failing on purpose at {self.counter}")

    @tool
    def hang(self, seconds: float = 3600.0) -> str:
        """Sleeps."""
        time.sleep(seconds)
        return "woke up"

    @tool
    def exit_worker(self, status: int = 3) -> str:
        """Ends the worker process."""
        os._exit(status)

    @tool
    def spawn_sleeper(self) -> str:
        """Starts a child process that outlives the step."""
        pid = os.fork()
        if pid == 0:
            time.sleep(3600)
            os._exit(0)
        return str(pid)
