"""Fixtures: real mcpgym servers for the tests (the binary from `MCPGYM_BINARY`)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from helpers import REPO

from mcpgym import Server

# Without MCPGYM_BINARY, the checkout's debug build (what `cargo test` and `cargo build` make).
if not os.environ.get("MCPGYM_BINARY") and (REPO / "target" / "debug" / "mcpgym").is_file():
    os.environ["MCPGYM_BINARY"] = str(REPO / "target" / "debug" / "mcpgym")


@pytest.fixture
def wordle_server() -> Iterator[Server]:
    """A fresh `mcpgym wordle --http` server for one test."""
    with Server("wordle") as server:
        yield server


@pytest.fixture(scope="module")
def serve_server() -> Iterator[Server]:
    """One `mcpgym serve --http` server (wordle, jupyter, desktop) shared by a module's tests."""
    with Server("serve") as server:
        yield server
