"""The daemon's log stays bounded (issue 44, Build 6): log records, and output that
bypasses logging (its stderr, where a C library, a traceback Python prints,
faulthandler and the engine worker write), together stay under the size limit x
(backups + 1), all in the file `daemon status` names.

The log used to be a RotatingFileHandler while the launcher pointed the daemon's fds 1
and 2 at the same file: after a rotation they wrote into the renamed backup, and from
the fourth on into a deleted file that grew without bound, invisible, until the daemon
exited. The limits are module constants (daemon_logging), set small here: the real
daemon is started through the real launch (client._launch) with them changed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import DaemonEnv
from shadowtab.daemon import client, daemon_logging

LIMIT = 16 * 1024
CHECK_S = 0.05
BACKUPS = daemon_logging.LOG_BACKUPS
SLACK = 4 * 1024  # one check's worth of paced stderr, and the note a rotation adds
SETTLE_S = 1.0
BAD_INPUT_LOGGED = "message of 999999999999 bytes refused"
PRELUDE = f"""
import os, sys
from shadowtab.daemon import daemon_logging
daemon_logging.MAX_LOG_BYTES = {LIMIT}
daemon_logging.LOG_CHECK_S = {CHECK_S}
"""
RUN_LAUNCHER = "from shadowtab.daemon.launcher import main\nos._exit(main(sys.argv[1:]))\n"


def log_files(log: Path) -> dict[str, int]:
    """Every file of the log (it and its backups): name -> size."""
    return {p.name: p.stat().st_size for p in log.parent.glob(log.name + "*")}


def deleted_but_open(pid: int) -> list[str]:
    """The files `pid` writes that no longer have a name (they fill the disk unseen)."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.endswith(" (deleted)"):
            found.append(f"fd {fd}: {target}")
    return found


def same_file(a: str | Path, b: str | Path) -> bool:
    sa, sb = os.stat(a), os.stat(b)
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def oversized_lsp_message(lsp_socket: str) -> None:
    """One bad input: a message too large to read (the daemon logs a warning)."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(5.0)
        sock.connect(lsp_socket)
        sock.sendall(b"Content-Length: 999999999999\r\n\r\n")
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(65536):
            pass


class Peak:
    """The largest total size the log's files had when sampled."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.bytes = 0

    def sample(self) -> None:
        self.bytes = max(self.bytes, sum(log_files(self.log).values()))


def write_stderr_and_records(pid: int, status: dict[str, Any], peak: Peak) -> tuple[int, str]:
    """Write 12x the limit through the daemon's stderr (its fd 2, opened by path, paced
    as a chatty library would be) between bad LSP inputs that it logs; the total
    written and the last stderr line."""
    fd = os.open(f"/proc/{pid}/fd/2", os.O_WRONLY | os.O_APPEND)
    written, line = 0, ""
    try:
        for i in range(12 * LIMIT // 2048):
            line = f"stderr {i}: " + "e" * 100 + "\n"
            chunk = (line * (2048 // len(line))).encode()
            written += os.write(fd, chunk)
            if i % 4 == 0:
                oversized_lsp_message(status["lsp_socket"])
            time.sleep(0.005)
            peak.sample()
    finally:
        os.close(fd)
    return written, line.strip()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads the daemon's fds in /proc")
def test_the_daemon_log_stays_bounded(
    daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch, record_property: Any
) -> None:
    launch = [sys.executable, "-c", PRELUDE + RUN_LAUNCHER, "--detach", "--config-root"]
    monkeypatch.setattr(client, "launcher_command", lambda root: [*launch, str(root)])
    status = client.start_daemon(timeout=30.0)
    pid = status["pid"]
    daemon_env.seen_pids.add(pid)
    log = daemon_env.files.log_file
    assert status["log_file"] == str(log)
    peak = Peak(log)
    written, last_line = write_stderr_and_records(pid, status, peak)
    time.sleep(SETTLE_S)  # the size check runs every CHECK_S
    files = log_files(log)
    total = sum(files.values())
    line = json.dumps(
        {
            "log": "daemon (stderr + records)",
            "written_bytes": written,
            "limit_bytes": LIMIT,
            "backups": BACKUPS,
            "files_bytes": total,
            "peak_bytes": peak.bytes,
            "deleted_but_open": len(deleted_but_open(pid)),
        }
    )
    print(line)
    record_property("benchmark_line", line)  # printed at the end of the run
    assert set(files) <= {log.name, *(f"{log.name}.{n}" for n in range(1, BACKUPS + 1))}
    assert total <= LIMIT * (BACKUPS + 1) + SLACK, files
    assert all(size <= LIMIT + SLACK for size in files.values()), files
    assert not deleted_but_open(pid)
    assert same_file(f"/proc/{pid}/fd/1", log) and same_file(f"/proc/{pid}/fd/2", log)
    recent = log.read_text() + Path(f"{log}.1").read_text()
    assert last_line in recent and BAD_INPUT_LOGGED in recent  # the newest of both kept
    assert daemon_env.cli("daemon", "status").returncode == 0


CHILD = """
import logging, os, subprocess, sys, time
log = sys.argv[1]
from shadowtab.daemon.daemon_logging import setup_logging
from pathlib import Path
handler = setup_logging(Path(log), foreground=False)
worker = subprocess.Popen(  # like the engine worker: inherits fd 2, never logs
    [sys.executable, "-c", WORKER, log], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
)
for i in range(200):
    logging.getLogger("daemon").warning("record %d %s", i, "r" * 100)
    time.sleep(0.002)
worker.wait()
time.sleep(SETTLE_S)
result = {"rotations": handler.rotations, "worker_code": worker.returncode}
Path(sys.argv[2]).write_text(json.dumps(result))  # not stdout: fd 1 is the log now
"""
WORKER = """
import os, sys, time
for i in range(1000):
    os.write(2, b"worker %d %s\\n" % (i, b"w" * 100))
    time.sleep(0.001)
os.write(2, b"worker done\\n")
at_path, ours = os.stat(sys.argv[1]), os.fstat(2)
sys.exit(0 if (at_path.st_dev, at_path.st_ino) == (ours.st_dev, ours.st_ino) else 3)
"""


def test_a_child_inheriting_stderr_stays_in_the_log(tmp_path: Path, record_property: Any) -> None:
    """A process started by the daemon before the log rotates (the engine worker) writes
    to the inherited fd 2: its output stays in the live log and within the limit."""
    log = tmp_path / "state" / "daemon.log"
    log.parent.mkdir(parents=True)
    script = PRELUDE + f"import json\nSETTLE_S = {SETTLE_S}\nWORKER = {WORKER!r}\n" + CHILD
    with log.open("ab") as out:  # as client._launch gives the daemon its fds 1 and 2
        done = subprocess.run(
            [sys.executable, "-c", script, str(log), str(tmp_path / "result.json")],
            stdout=out,
            stderr=out,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, log.read_text()[-2000:]
    result = json.loads((tmp_path / "result.json").read_text())
    files = log_files(log)
    total = sum(files.values())
    line = json.dumps(
        {"log": "worker's inherited stderr", "limit_bytes": LIMIT, "files_bytes": total, **result}
    )
    print(line)
    record_property("benchmark_line", line)
    assert result["rotations"] >= 4 and result["worker_code"] == 0
    assert total <= LIMIT * (BACKUPS + 1) + SLACK, files
    assert "worker done" in log.read_text() + Path(f"{log}.1").read_text()
