"""The wheel: built from the checkout, installed into a fresh venv, run with no Rust around.

Slow (it builds two wheels, one carrying the binary, and a venv, and the wheel's binary builds
the sandboxes' runtime: about 2 minutes the first time, nothing once target/wheel-cache holds
it); CI runs it. Deselect it locally with `-m "not slow"`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REPO, binary

pytestmark = pytest.mark.slow

PACKAGE = REPO / "python"


def run(command: list[str | Path], env: dict[str, str], **kwargs: object) -> str:
    """Runs `command`, failing the test with its output when it fails."""
    done = subprocess.run(
        [str(part) for part in command],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        **kwargs,  # type: ignore[call-overload]
    )
    assert done.returncode == 0, (
        f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout + done.stderr


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without MCPGYM_BINARY or any venv, with `extra` added."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"MCPGYM_BINARY", "MCPGYM_RUNTIME", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}
    }
    env.update(extra)
    return env


def build(source: Path, out: Path, env: dict[str, str]) -> Path:
    """`pip wheel` of the package at `source` into `out`; the one wheel it made."""
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", out, source], env)
    [wheel] = out.glob("mcpgym-*.whl")
    return wheel


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A plain venv (no system site packages) with httpx from the package index."""
    root = tmp_path_factory.mktemp("venv")
    run([sys.executable, "-m", "venv", root], clean_env())
    run([root / "bin" / "python", "-m", "pip", "install", "--quiet", "httpx"], clean_env())
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_pure_wheel_finds_no_binary_then_the_one_named(venv: Path, tmp_path: Path) -> None:
    # A copy of the package away from the checkout's target/: nothing to bundle.
    source = tmp_path / "src"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    wheel = build(source, tmp_path / "dist", clean_env())
    assert wheel.name == "mcpgym-0.1.0-py3-none-any.whl"
    assert not any("_bin" in name for name in zipfile.ZipFile(wheel).namelist())

    run(
        [venv / "bin" / "pip", "install", "--quiet", "--no-deps", "--force-reinstall", wheel],
        clean_env(),
    )
    # Only the venv on PATH: its own `mcpgym` is the console script, which must not run itself.
    bare = clean_env(PATH=str(venv / "bin"))
    done = subprocess.run(
        [venv / "bin" / "mcpgym", "--version"],
        check=False,
        env=bare,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 127
    assert "no mcpgym binary found" in done.stderr
    assert "MCPGYM_BINARY" in done.stderr

    named = clean_env(PATH=str(venv / "bin"), MCPGYM_BINARY=binary())
    assert run([venv / "bin" / "mcpgym", "--version"], named).strip() == "mcpgym 0.1.0"


def test_platform_wheel_carries_the_stripped_binary(venv: Path, tmp_path: Path) -> None:
    source_binary = Path(binary()).resolve()
    wheel = build(PACKAGE, tmp_path / "dist", clean_env(MCPGYM_BINARY=str(source_binary)))
    assert wheel.name == "mcpgym-0.1.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo("mcpgym/_bin/mcpgym")
        assert info.external_attr >> 16 & 0o111, "the bundled binary must be executable"
        entry_points = next(n for n in archive.namelist() if n.endswith("entry_points.txt"))
        assert "mcpgym = mcpgym._cli:main" in archive.read(entry_points).decode()
        wheel_info = next(n for n in archive.namelist() if n.endswith(".dist-info/WHEEL"))
        assert "Root-Is-Purelib: false" in archive.read(wheel_info).decode()
        archive.extract(info, tmp_path / "unpacked")
    bundled = tmp_path / "unpacked" / "mcpgym" / "_bin" / "mcpgym"
    sections = run(["objdump", "-h", bundled], clean_env())
    assert ".text" in sections
    assert ".debug_info" not in sections and ".debug_line" not in sections
    assert bundled.stat().st_size < source_binary.stat().st_size

    run(
        [venv / "bin" / "pip", "install", "--quiet", "--no-deps", "--force-reinstall", wheel],
        clean_env(),
    )
    # No MCPGYM_BINARY, no cargo, nothing but the venv on PATH: the wheel's own binary runs.
    bare = clean_env(PATH=str(venv / "bin"))
    assert run([venv / "bin" / "mcpgym", "--version"], bare).strip() == "mcpgym 0.1.0"
    assert "Usage: mcpgym" in run([venv / "bin" / "mcpgym", "--help"], bare)

    server = subprocess.Popen(
        [venv / "bin" / "mcpgym", "wordle", "--http", "127.0.0.1:0"],
        env=bare,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        url = None
        for line in server.stderr:
            if line.startswith("mcpgym: listening on "):
                url = line.removeprefix("mcpgym: listening on ").strip()
                break
        assert url, "the installed mcpgym did not start listening"
        # The console script replaced itself with the bundled binary.
        exe = Path(os.readlink(f"/proc/{server.pid}/exe"))
        assert exe.parts[-3:] == ("mcpgym", "_bin", "mcpgym")
        assert str(exe).startswith(str(venv))

        play = (
            "import json, sys, mcpgym\n"
            "from mcpgym import Client, binary_path\n"
            "with Client(sys.argv[1]) as client, client.start(seed=7) as episode:\n"
            "    step = episode.call('guess', word='crane')\n"
            "print(json.dumps({'module': mcpgym.__file__, 'binary': binary_path(),\n"
            "                  'turn': step.turn, 'text': step.text}))\n"
        )
        # Run away from the checkout so only the installed package can be imported.
        out = run([venv / "bin" / "python", "-c", play, url], bare, cwd=tmp_path)
        played = json.loads(out.strip().splitlines()[-1])
        assert played["module"].startswith(str(venv))
        assert played["binary"] == str(exe)
        assert played["turn"] == 1
        assert played["text"].startswith("CRANE ")
    finally:
        server.terminate()
        server.wait(60)


def test_a_relative_binary_path_is_read_from_where_pip_runs(tmp_path: Path) -> None:
    # `MCPGYM_BINARY=target/debug/mcpgym pip wheel ./python` from the checkout's root: pip
    # builds in python/ (or a copy), and the path means the directory pip was run from.
    workdir = tmp_path / "work"
    (workdir / "bin").mkdir(parents=True)
    (workdir / "bin" / "mcpgym").symlink_to(Path(binary()).resolve())
    env = clean_env(MCPGYM_BINARY="bin/mcpgym", PWD=str(workdir))
    out = tmp_path / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", out, PACKAGE], env, cwd=workdir)
    [wheel] = out.glob("mcpgym-*.whl")
    assert wheel.name == "mcpgym-0.1.0-py3-none-linux_x86_64.whl"
    assert "mcpgym/_bin/mcpgym" in zipfile.ZipFile(wheel).namelist()


# The first classic task (North's revenue in sales.csv), solved with pandas, which only the
# runtime has; the kernel's prefix comes first, to show which Python ran it.
SOLVE_WITH_PANDAS = (
    "import sys\n"
    "import pandas as pd\n"
    "sales = pd.read_csv('sales.csv')\n"
    "north = sales[sales.region == 'North']\n"
    "print(sys.prefix)\n"
    "print(f'{(north.units * north.unit_price).sum():.2f}')\n"
)


def test_the_wheel_installs_the_runtime_and_serves_a_jupyter_episode(
    venv: Path, tmp_path: Path
) -> None:
    wheel = build(PACKAGE, tmp_path / "dist", clean_env(MCPGYM_BINARY=str(Path(binary()))))
    run(
        [venv / "bin" / "pip", "install", "--quiet", "--no-deps", "--force-reinstall", wheel],
        clean_env(),
    )
    # The per-user cache under target/, so a warm target keeps the runtime; pip keeps its own
    # cache where it was, so a cold build still reuses the wheels pip has downloaded before.
    cache = REPO / "target" / "wheel-cache"
    pip_cache = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "dir"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    user = clean_env(PATH=f"{venv / 'bin'}:{os.environ.get('PATH', '')}", XDG_CACHE_HOME=str(cache))
    if pip_cache:
        user["PIP_CACHE_DIR"] = pip_cache
    out = run([venv / "bin" / "mcpgym", "runtime", "install"], user, cwd=tmp_path)
    # Its stdout, which `run` puts first, is the runtime's folder; the progress is on stderr.
    runtime = Path(out.splitlines()[0])
    assert runtime.parent == cache / "mcpgym" / "runtime", out
    assert (runtime / "bin" / "python").exists() and (runtime / "bin" / "deno").exists()
    # Again: found complete, nothing done.
    again = run([venv / "bin" / "mcpgym", "runtime", "install"], user, cwd=tmp_path)
    assert "already installed" in again
    assert run([venv / "bin" / "mcpgym", "runtime", "path"], user).strip() == str(runtime)

    # Only the venv on PATH, no MCPGYM_RUNTIME: `serve` finds the runtime in the cache.
    bare = clean_env(PATH=str(venv / "bin"), XDG_CACHE_HOME=str(cache))
    play = (
        "import json, sys\n"
        "from mcpgym import Server\n"
        "with Server('serve') as server, server.client() as client:\n"
        "    with client.start('jupyter', task='classic/0') as episode:\n"
        "        cell = episode.call('add_and_execute_code_cell', code=sys.argv[1])\n"
        "        prefix, answer = cell.text.strip().splitlines()[-2:]\n"
        "        step = episode.call('final_answer', answer=answer)\n"
        "print(json.dumps({'prefix': prefix, 'answer': answer, 'done': step.done,\n"
        "                  'reward': step.reward, 'text': step.text}))\n"
    )
    out = run([venv / "bin" / "python", "-c", play, SOLVE_WITH_PANDAS], bare, cwd=tmp_path)
    played = json.loads(out.strip().splitlines()[-1])
    assert played["prefix"] == str(runtime), played
    assert played["done"] and played["reward"] == 1.0, played
