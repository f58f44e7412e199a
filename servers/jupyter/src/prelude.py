# Prelude of every task setup and hidden check (mcpgym-jupyter): the modules setups use, and a
# seeded generator whose numbers are fixed by this file alone, so a task's files, and therefore
# its expected answer, never depend on the Python version's `random` module.
import csv
import json
import math
import os


class _Lcg:
    """A fixed 64-bit LCG: the same numbers on every Python version."""

    def __init__(self, seed):
        self.state = (seed * 2654435761 + 12345) & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        return self.state >> 11

    def random(self):
        return self.next() / float(1 << 53)

    def randint(self, low, high):
        return low + self.next() % (high - low + 1)

    def choice(self, items):
        return items[self.next() % len(items)]

    def uniform(self, low, high):
        return low + (high - low) * self.random()


def rng(seed):
    return _Lcg(seed)
