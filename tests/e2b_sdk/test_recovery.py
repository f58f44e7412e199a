"""Recovery: a kernel killed from inside the sandbox comes back for the next execution while
the sandbox stays healthy; a cell cut off by the client's timeout leaves the context usable;
a sandbox killed while `run_code` is in flight makes the SDK raise E2B's TimeoutException."""

import threading
import time

import httpx
import pytest
from e2b import TimeoutException
from e2b_code_interpreter import Sandbox


def health(sandbox: Sandbox) -> int:
    """The status of the sandbox's code-interpreter health check."""
    url = sandbox._jupyter_url
    response = httpx.get(f"{url}/health", headers={"E2b-Sandbox-Id": sandbox.sandbox_id})
    return response.status_code


def test_killed_python_kernel_comes_back(sandbox: Sandbox) -> None:
    sandbox.run_code("x = 1")
    # Kill every process the kernel's jail holds, the kernel among them.
    died = sandbox.run_code("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert died.error is not None
    assert died.error.name == "KernelDied"
    assert health(sandbox) == 200
    again = sandbox.run_code("x = 1; x")
    assert again.error is None
    assert again.text == "1"


def test_kernel_killed_between_cells_is_replaced_before_the_next(sandbox: Sandbox) -> None:
    # A thread kills the kernel after the cell has ended.
    sandbox.run_code(
        "import os, signal, threading\n"
        "threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()"
    )
    time.sleep(1.5)
    assert health(sandbox) == 200
    after = sandbox.run_code("y = 2; y")
    assert after.error is None
    assert after.text == "2"
    assert any("restarted" in line for line in after.logs.stderr)


@pytest.mark.parametrize(
    ("language", "kill", "probe", "expected"),
    [
        ("javascript", "Deno.exit(9)", "1 + 1", "2"),
        ("r", "tools::pskill(Sys.getpid(), tools::SIGKILL)", "1 + 1", "[1] 2"),
        ("bash", "kill -9 $PPID", "echo alive", "alive"),
    ],
)
def test_other_kernels_come_back_after_dying(
    sandbox: Sandbox, language: str, kill: str, probe: str, expected: str
) -> None:
    assert sandbox.run_code(probe, language=language).error is None
    died = sandbox.run_code(kill, language=language)
    assert died.error is not None
    again = sandbox.run_code(probe, language=language)
    assert again.error is None, again.error
    shown = "".join(again.logs.stdout).strip() or again.results[0].text.strip()
    assert shown == expected


def test_client_timeout_leaves_the_context_usable(sandbox: Sandbox) -> None:
    sandbox.run_code("kept = 'still here'")
    with pytest.raises(TimeoutException):
        sandbox.run_code("import time; time.sleep(60)", timeout=2)
    after = sandbox.run_code("kept")
    assert after.text == "still here"
    with pytest.raises(TimeoutException):
        sandbox.run_code("while (true) {}", language="js", timeout=3)
    assert sandbox.run_code("6 * 7", language="js").text == "42"


def test_sandbox_killed_during_run_code_raises_timeout(sandbox: Sandbox) -> None:
    timer = threading.Timer(2.0, sandbox.kill)
    timer.start()
    try:
        with pytest.raises(
            TimeoutException, match="sandbox was killed while the request was in progress"
        ):
            sandbox.run_code("import time; time.sleep(120)", timeout=120)
    finally:
        timer.cancel()
