"""Starting real servers for the tests: a free loopback port, waiting until /models answers."""

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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_models(url: str, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/models", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server at {url} did not come up in {timeout_s:g}s")


@contextmanager
def serving(
    command: Sequence[str], port: int, log: Path, start_s: float, stop_s: float
) -> Iterator[str]:
    """Run a server command (its output to `log`) in its own process group until /models
    answers on `port`; yield its base URL; then stop the whole group (vLLM's engine and
    workers are child processes that outlive a terminated parent)."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            list(command), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_for_models(url, process, start_s)
        yield url
    finally:
        _stop_group(process, stop_s)


def _stop_group(process: subprocess.Popen[bytes], stop_s: float) -> None:
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


@contextmanager
def llama_cpp_server(model: Path, log: Path, extra: Sequence[str] = ()) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on loopback (logits_all for the
    logprobs that rank n > 1 candidates), stopped after. Yields its base URL."""
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
        "--logits_all", "true", "--n_threads", str(min(2, os.cpu_count() or 1)), *extra,
    ]  # fmt: skip
    with serving(command, port, log, start_s=120, stop_s=10) as url:
        yield url
