"""The daemon with the real model in its engine worker: the model's native library and
weights are mapped in the worker, not in the daemon, and a daemon that dies (SIGKILL)
leaves no worker behind (the worker exits on its socket's EOF)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import DaemonEnv
from shadowtab.daemon.client import request, start_daemon
from shadowtab.daemon.runtime_files import pid_alive

# Model loads niced under other work on 2 cores have taken minutes; a hang still fails.
pytestmark = pytest.mark.timeout(900)

LOAD_TIMEOUT_S = 400  # minutes when niced under other work on 2 cores
EXIT_TIMEOUT_S = 60  # a worker in the middle of a load finishes it before it sees EOF


def ready_engine() -> dict[str, Any]:
    deadline = time.monotonic() + LOAD_TIMEOUT_S
    while (engine := request("status", timeout=10)["engine"])["state"] != "ready":
        assert engine["state"] != "failed", engine
        assert time.monotonic() < deadline, engine
        time.sleep(0.2)
    return engine


def maps(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


def test_the_model_lives_in_the_worker_and_dies_with_the_daemon(
    daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHADOWTAB_ENGINE_KIND", "llama.cpp")
    monkeypatch.setenv("SHADOWTAB_ENGINE_WEIGHTS", "q8_0")  # not measured: not tested here
    monkeypatch.setenv("SHADOWTAB_ENGINE_MERGE_ADAPTER", "0")  # nor merged: the adapter attaches
    monkeypatch.setenv("SHADOWTAB_ENGINE_THREADS", "1")
    status = start_daemon(timeout=30)
    daemon_env.seen_pids.add(status["pid"])
    worker_pid = ready_engine()["worker"]["pid"]
    daemon_env.seen_pids.add(worker_pid)  # killed by the fixture if this test fails
    assert "libllama" in maps(worker_pid) and ".gguf" in maps(worker_pid)
    assert "libllama" not in maps(status["pid"]) and ".gguf" not in maps(status["pid"])

    os.kill(status["pid"], signal.SIGKILL)
    deadline = time.monotonic() + EXIT_TIMEOUT_S
    while pid_alive(worker_pid):
        assert time.monotonic() < deadline, "the worker outlived its daemon"
        time.sleep(0.05)
