"""Fixtures for daemon tests: every test gets fresh runtime/state/config/data dirs
(several engineers run tests on one machine) and any daemon it starts is stopped."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import DaemonEnv
from shadowtab.daemon.runtime_files import RuntimeFiles, pid_alive


@pytest.fixture
def daemon_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[DaemonEnv]:
    # Short paths: a unix socket path must fit in 107 bytes.
    base = Path(tempfile.mkdtemp(prefix="stdmn-", dir="/tmp"))
    for name in list(os.environ):
        if name.startswith("SHADOWTAB_"):
            monkeypatch.delenv(name)
    for name, sub in (("RUNTIME", "run"), ("STATE", "state"), ("CONFIG", "cfg"), ("DATA", "data")):
        monkeypatch.setenv(f"SHADOWTAB_{name}_DIR", str(base / sub))
    monkeypatch.setenv("SHADOWTAB_ENGINE_KIND", "off")
    workdir = base / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    env = DaemonEnv(base=base, workdir=workdir, files=RuntimeFiles.current())
    try:
        yield env
    finally:
        _stop_everything(env)
        shutil.rmtree(base, ignore_errors=True)


def _stop_everything(env: DaemonEnv) -> None:
    from shadowtab.daemon.client import stop_daemon, wait_for_exit

    env.remember_pid()
    stop_daemon(timeout=5.0)
    for pid in env.seen_pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
            wait_for_exit(pid, 5.0)


@pytest.fixture
def running_daemon(daemon_env: DaemonEnv) -> dict[str, Any]:
    from shadowtab.daemon.client import start_daemon

    status = start_daemon(timeout=30.0)
    daemon_env.seen_pids.add(status["pid"])
    return status
