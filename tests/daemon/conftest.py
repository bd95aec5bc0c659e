"""Fixtures for daemon tests: every test gets fresh runtime/state/config/data dirs
(several engineers run tests on one machine) and any daemon it starts is stopped."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import DaemonEnv
from shadowtab.daemon.runtime_files import RuntimeFiles, pid_alive


@pytest.fixture
def daemon_env(isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DaemonEnv]:
    workdir = isolated_dirs / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    env = DaemonEnv(base=isolated_dirs, workdir=workdir, files=RuntimeFiles.current())
    try:
        yield env
    finally:
        _stop_everything(env)


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
