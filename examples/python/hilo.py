"""Hi-Lo written in Python: find a hidden number; each guess is answered higher or lower.

The same game as the Rust example in examples/hilo, as a Python environment. Serve it with

    mcpgym python examples/python/hilo.py:HiLo                # stdio, one episode
    mcpgym serve --http 127.0.0.1:8000 --python examples/python/hilo.py:HiLo

and play it like any other environment (`POST /episodes {"env": "hilo-py"}`).
"""

from __future__ import annotations

import random
from typing import Annotated, ClassVar

from mcpgym.env import ArgumentError, Environment, Outcome, tool

TRAIN = [16, 100, 1000, 4096]
TEST = [50, 5000]


class HiLo(Environment):
    name = "hilo-py"
    instructions = (
        "Hi-Lo: find the hidden number. Call guess(number); each answer says higher, lower or "
        "correct. rules() shows the range and the guesses left. Fewer guesses pay more."
    )
    tasks: ClassVar[dict[str, list[str]]] = {
        "train": [f"1-to-{n}" for n in TRAIN],
        "test": [f"1-to-{n}" for n in TEST],
    }
    max_turns = 30
    # The seed picks the number and nothing else varies: a restart replays an episode.
    deterministic = True

    def reset(self, task: str, seed: int) -> str:
        self.high = int(task.removeprefix("1-to-"))
        self.number = random.Random(seed).randint(1, self.high)
        self.low, self.top = 1, self.high
        # Just enough guesses for a bisection.
        self.left = self.high.bit_length() + 1
        self.guesses = 0
        return f"The number is between 1 and {self.high}; you have {self.left} guesses."

    def report(self, hint: str) -> dict[str, object]:
        return {
            "hint": hint,
            "low": self.low,
            "high": self.top,
            "guesses_left": self.left,
        }

    @tool
    def guess(
        self, number: Annotated[int, "A whole number between 1 and the upper bound."]
    ) -> Outcome:
        """Guess the hidden number; the answer is higher, lower or correct."""
        if not 1 <= number <= self.high:
            raise ArgumentError(f"Guess a number from 1 to {self.high}.")
        self.left -= 1
        self.guesses += 1
        if number == self.number:
            bonus = self.left / (self.high.bit_length() + 1)
            return Outcome(
                f"Correct: {number}, in {self.guesses} guesses.",
                reward={"win": 1.0, "speed": round(bonus, 6)},
                done=True,
                data=self.report("correct"),
            )
        hint = "higher" if number < self.number else "lower"
        if hint == "higher":
            self.low = max(self.low, number + 1)
        else:
            self.top = min(self.top, number - 1)
        if self.left == 0:
            return Outcome(f"{hint}; no guesses left.", done=True, data=self.report(hint))
        return Outcome(f"{hint} ({self.left} left)", data=self.report(hint))

    @tool
    def rules(self) -> Outcome:
        """Show where the number can be, and the guesses left."""
        return Outcome(
            f"The number is between {self.low} and {self.top}; {self.left} guesses left.",
            data=self.report("none"),
        )

    def reveal(self) -> dict[str, object]:
        return {"number": self.number}
