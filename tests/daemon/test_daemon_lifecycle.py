"""Start, status, stop, restart, stale files, SIGKILL, racing starts: real processes."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from typing import Any

import pytest
from daemon_helpers import DaemonEnv
from shadowtab.daemon.client import (
    ensure_running,
    read_status,
    request,
    start_daemon,
    stop_daemon,
    wait_for_exit,
)
from shadowtab.daemon.runtime_files import pid_alive, socket_accepts


def _status_json(env: DaemonEnv) -> tuple[int, dict[str, Any]]:
    done = env.cli("daemon", "status", "--json")
    return done.returncode, json.loads(done.stdout)


def test_start_status_stop_chain_from_another_directory(daemon_env: DaemonEnv) -> None:
    chain = "shadowtab daemon start && shadowtab daemon status --json && shadowtab daemon stop"
    bin_dir = os.path.dirname(sys.executable)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(
        chain, shell=True, capture_output=True, text=True, cwd="/", env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("shadowtab daemon started (pid ")
    status = json.loads(lines[1])
    assert status["running"] is True
    for key in ("pid", "control_socket", "lsp_socket", "version", "uptime_s", "log_file"):
        assert key in status, key
    assert {"state", "progress", "error", "model"} <= set(status["engine"])
    assert lines[2] == "shadowtab daemon stopped"
    daemon_env.seen_pids.add(status["pid"])
    assert not pid_alive(status["pid"])
    assert not daemon_env.files.status_file.exists()
    assert not daemon_env.files.control_socket.exists()
    assert not daemon_env.files.lsp_socket.exists()


def test_status_when_not_running_exits_2_and_names_the_log(daemon_env: DaemonEnv) -> None:
    code, status = _status_json(daemon_env)
    assert code == 2
    assert status == {
        "running": False,
        "reason": "not running",
        "log_file": str(daemon_env.files.log_file),
    }
    plain = daemon_env.cli("daemon", "status")
    assert plain.returncode == 2
    assert str(daemon_env.files.log_file) in plain.stdout


def test_human_status_shows_pid_sockets_and_log(
    daemon_env: DaemonEnv, running_daemon: dict[str, Any]
) -> None:
    done = daemon_env.cli("daemon", "status")
    assert done.returncode == 0
    assert f"pid {running_daemon['pid']}" in done.stdout
    assert running_daemon["control_socket"] in done.stdout
    assert running_daemon["log_file"] in done.stdout
    assert "\nmodel:          " in done.stdout


def test_stop_when_not_running_exits_2(daemon_env: DaemonEnv) -> None:
    done = daemon_env.cli("daemon", "stop")
    assert done.returncode == 2
    assert "not running" in done.stderr


def test_second_start_reuses_the_running_daemon(
    daemon_env: DaemonEnv, running_daemon: dict[str, Any]
) -> None:
    done = daemon_env.cli("daemon", "start")
    assert done.returncode == 0
    assert f"already running (pid {running_daemon['pid']})" in done.stdout
    assert ensure_running(timeout=10)["pid"] == running_daemon["pid"]


def test_ensure_running_starts_a_daemon(daemon_env: DaemonEnv) -> None:
    status = ensure_running(timeout=30)
    daemon_env.seen_pids.add(status["pid"])
    assert pid_alive(status["pid"])
    assert socket_accepts(daemon_env.files.lsp_socket)
    assert read_status() == status


def test_restart_gives_a_new_daemon(daemon_env: DaemonEnv, running_daemon: dict[str, Any]) -> None:
    done = daemon_env.cli("daemon", "restart")
    assert done.returncode == 0, done.stderr
    new = read_status()
    assert new is not None
    daemon_env.seen_pids.add(new["pid"])
    assert new["pid"] != running_daemon["pid"]
    assert not pid_alive(running_daemon["pid"])
    assert request("status")["pid"] == new["pid"]


def test_stop_removes_the_status_file_before_it_replies(
    daemon_env: DaemonEnv, running_daemon: dict[str, Any]
) -> None:
    reply = request("stop")
    assert reply["stopping"] is True
    assert not daemon_env.files.status_file.exists()
    assert wait_for_exit(running_daemon["pid"], 10)


def test_sigterm_is_a_graceful_stop(daemon_env: DaemonEnv, running_daemon: dict[str, Any]) -> None:
    os.kill(running_daemon["pid"], signal.SIGTERM)
    assert wait_for_exit(running_daemon["pid"], 10)
    assert not daemon_env.files.status_file.exists()
    assert not daemon_env.files.control_socket.exists()
    assert "stopping: SIGTERM" in daemon_env.files.log_file.read_text()


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_status_file_means_not_running_and_start_cleans_up(daemon_env: DaemonEnv) -> None:
    from shadowtab.daemon.runtime_files import write_status

    dead = _dead_pid()
    files = daemon_env.files
    stale = {
        "pid": dead,
        "control_socket": str(files.control_socket),
        "lsp_socket": str(files.lsp_socket),
        "version": "0.0.1",
        "started_at": "2020-01-01T00:00:00+00:00",
        "log_file": str(files.log_file),
    }
    write_status(files.status_file, stale)
    files.control_socket.write_text("not a socket")
    code, status = _status_json(daemon_env)
    assert code == 2
    assert status["reason"] == f"not running (stale status file: pid {dead} is gone)"
    started = start_daemon(timeout=30)
    daemon_env.seen_pids.add(started["pid"])
    assert started["pid"] != dead
    assert request("status")["pid"] == started["pid"]


def test_daemon_killed_with_sigkill_is_started_again(
    daemon_env: DaemonEnv, running_daemon: dict[str, Any]
) -> None:
    os.kill(running_daemon["pid"], signal.SIGKILL)
    assert wait_for_exit(running_daemon["pid"], 10)
    assert daemon_env.files.status_file.exists()  # a crash leaves it behind
    code, status = _status_json(daemon_env)
    assert code == 2
    assert "stale status file" in status["reason"]
    done = daemon_env.cli("daemon", "start")
    assert done.returncode == 0, done.stderr
    new = read_status()
    assert new is not None and new["pid"] != running_daemon["pid"]
    assert request("status")["pid"] == new["pid"]


def test_two_racing_starts_give_one_daemon(daemon_env: DaemonEnv) -> None:
    command = [sys.executable, "-m", "shadowtab.daemon.cli", "daemon", "start"]
    starters = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [starter.communicate(timeout=60) for starter in starters]
    daemon_env.remember_pid()
    assert [starter.returncode for starter in starters] == [0] * 4, outputs
    status = read_status()
    assert status is not None
    pids = {out.split("(pid ")[1].split(")")[0] for out, _ in outputs}
    assert pids == {str(status["pid"])}
    started = [out for out, _ in outputs if "daemon started" in out]
    assert len(started) >= 1
    log = daemon_env.files.log_file.read_text()
    assert log.count(" ready (pid ") == 1


def test_runtime_dir_is_0700_and_sockets_0600(
    daemon_env: DaemonEnv, running_daemon: dict[str, Any]
) -> None:
    files = daemon_env.files
    assert stat.S_IMODE(files.status_file.parent.stat().st_mode) == 0o700
    for path in (files.control_socket, files.lsp_socket):
        mode = path.stat().st_mode
        assert stat.S_ISSOCK(mode)
        assert stat.S_IMODE(mode) == 0o600
    assert stat.S_IMODE(files.status_file.stat().st_mode) == 0o600


def test_foreground_daemon_logs_to_stderr_and_stops_on_sigterm(daemon_env: DaemonEnv) -> None:
    command = [sys.executable, "-m", "shadowtab.daemon.cli", "daemon", "start", "--foreground"]
    daemon = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    daemon_env.seen_pids.add(daemon.pid)
    deadline = time.monotonic() + 30
    while read_status() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert request("status")["pid"] == daemon.pid
    second = daemon_env.cli("daemon", "start", "--foreground")
    assert second.returncode == 1
    assert "already running" in second.stderr
    daemon.send_signal(signal.SIGTERM)
    _, stderr = daemon.communicate(timeout=15)
    assert daemon.returncode == 0
    assert "ready (pid" in stderr and "daemon stopped" in stderr


def test_bad_config_in_workspace_stops_start(daemon_env: DaemonEnv) -> None:
    config = daemon_env.workdir / "shadowtab.toml"
    config.write_text('[engine]\ncontext_size = "big"\n')
    done = daemon_env.cli("daemon", "start")
    assert done.returncode == 1
    assert str(config) in done.stderr
    assert "engine.context_size" in done.stderr
    assert read_status() is None
    assert not stop_daemon(timeout=1)


def test_help_everywhere(daemon_env: DaemonEnv) -> None:
    for args in (
        ("--help",),
        ("daemon", "--help"),
        ("daemon", "start", "--help"),
        ("daemon", "stop", "--help"),
        ("daemon", "status", "--help"),
        ("daemon", "restart", "--help"),
    ):
        done = daemon_env.cli(*args)
        assert done.returncode == 0, args
        assert "usage:" in done.stdout
    assert daemon_env.cli("daemon").returncode == 2
    assert daemon_env.cli("daemon", "status", "--bogus").returncode == 2


def test_stop_kills_a_daemon_that_does_not_answer(
    daemon_env: DaemonEnv, running_daemon: dict[str, Any]
) -> None:
    pid = running_daemon["pid"]
    os.kill(pid, signal.SIGSTOP)  # hung: accepts connections (backlog), never replies
    try:
        started = time.monotonic()
        done = daemon_env.cli("daemon", "stop", "--timeout", "2")
        assert done.returncode == 0, done.stderr
        assert time.monotonic() - started < 20
        assert not pid_alive(pid)
    finally:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert not daemon_env.files.status_file.exists()
    assert read_status() is None


def test_too_long_runtime_dir_is_a_clear_error(
    daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = daemon_env.base / ("d" * 100)
    monkeypatch.setenv("SHADOWTAB_RUNTIME_DIR", str(deep))
    for args in (("daemon", "start"), ("daemon", "start", "--foreground")):
        done = daemon_env.cli(*args)
        assert done.returncode == 1
        assert "socket path too long" in done.stderr
        assert "SHADOWTAB_RUNTIME_DIR" in done.stderr


def test_daemon_that_dies_during_start_up_fails_the_start_at_once(
    daemon_env: DaemonEnv,
) -> None:
    blocker = daemon_env.files.control_socket
    blocker.mkdir()
    (blocker / "keep").write_text("a directory where the socket goes")
    started = time.monotonic()
    done = daemon_env.cli("daemon", "start")
    assert done.returncode == 1
    assert "exited during start-up" in done.stderr
    assert "IsADirectoryError" in done.stderr  # the log's tail
    assert time.monotonic() - started < 15  # not the 30 s start timeout
    assert read_status() is None


def test_start_right_after_a_stop_request_waits_for_the_old_daemon(
    daemon_env: DaemonEnv, running_daemon: dict[str, Any]
) -> None:
    os.kill(running_daemon["pid"], signal.SIGSTOP)  # the old daemon still holds the lock
    daemon_env.files.status_file.unlink()  # ... after it replied to `stop`
    starter = subprocess.Popen(
        [sys.executable, "-m", "shadowtab.daemon.cli", "daemon", "start"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)  # the starter finds the lock taken and keeps trying
    assert starter.poll() is None
    os.kill(running_daemon["pid"], signal.SIGKILL)
    out, err = starter.communicate(timeout=60)
    assert starter.returncode == 0, err
    daemon_env.remember_pid()
    new = read_status()
    assert new is not None and new["pid"] != running_daemon["pid"]
    assert f"started (pid {new['pid']})" in out
