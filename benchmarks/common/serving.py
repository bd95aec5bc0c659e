"""Starting a model server for a benchmark or a test: in its own process group on a free
loopback port, ready when a URL answers 200, the whole group stopped after
(tests/engines/server_helpers.py builds on it)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

# llama-cpp-python's server, started the way our engine loads weights (llama_cpp_server.py)
LLAMA_CPP_SERVER = [sys.executable, str(Path(__file__).with_name("llama_cpp_server.py"))]


def exit_on_sigterm() -> None:
    """SIGTERM raises SystemExit, so that `finally` blocks stop the servers started
    (Python's default would end the process and leave them running)."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_ready(url: str, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer in {timeout_s:g}s")


@contextmanager
def serving(
    command: Sequence[str], ready_url: str, log: Path, start_s: float = 120, stop_s: float = 10
) -> Iterator[subprocess.Popen[bytes]]:
    """Run `command` (its output to `log`) until `ready_url` answers 200; then stop its
    process group."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            list(command), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        try:
            wait_until_ready(ready_url, process, start_s)
        except RuntimeError as exc:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{exc}: {' '.join(command)}\n{tail}") from exc
        yield process
    finally:
        stop_group(process, stop_s)


def stop_group(process: subprocess.Popen[bytes], stop_s: float) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(stop_s)
    except subprocess.TimeoutExpired:
        pass
    except ProcessLookupError:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # whatever of the group is left
    process.wait()
