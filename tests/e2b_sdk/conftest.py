"""Fixtures for the E2B SDK suites: a fresh sandbox per test, killed afterwards.

The service is started by tests/sandbox_e2b_suites.rs, which sets E2B_API_URL,
E2B_SANDBOX_URL and E2B_API_KEY for the SDK.
"""

import contextlib
from collections.abc import Callable, Iterator

import pytest
from e2b_code_interpreter import Sandbox

SandboxFactory = Callable[..., Sandbox]


@pytest.fixture
def sandbox_factory() -> Iterator[SandboxFactory]:
    """Creates sandboxes with the given options; kills every one at the end of the test."""
    made: list[Sandbox] = []

    def create(**options: object) -> Sandbox:
        sandbox = Sandbox.create(**options)  # type: ignore[arg-type]
        made.append(sandbox)
        return sandbox

    yield create
    for sandbox in made:
        # A test may have killed it already.
        with contextlib.suppress(Exception):
            sandbox.kill()


@pytest.fixture
def sandbox(sandbox_factory: SandboxFactory) -> Sandbox:
    """A fresh sandbox with default options."""
    return sandbox_factory()
