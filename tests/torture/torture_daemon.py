"""What the torture scripts that drive a real daemon share: starting it in a private
directory (its sockets, state and config there, the engine chosen by environment),
waiting for its engine, an LSP session on its socket that can leave requests in flight,
and what /proc says of a process (RSS, open files, threads). Used by torture_worker.py,
torture_clients.py, torture_soak.py and torture_fuzz.py."""

from __future__ import annotations

import itertools
import json
import math
import os
import resource
import select
import socket
import sys
import time
from pathlib import Path
from typing import Any

# A starved machine (the run is niced under other work) answers slowly, not never.
CONTROL_TIMEOUT_S = 60.0
# What the soaks check does not grow: open files; the daemon's own threads and its thread
# pools (its `status` tells them from the pools' workers, which start on demand up to
# each pool's size); the worker's threads, plus THREAD_POOL_SLACK for its pools filling
# (a leak goes on growing)
LEAK_CHECKED = {"daemon": ("fds", "own_threads", "pools"), "worker": ("fds", "threads")}
THREAD_POOL_SLACK = 2


class Editor:
    """One LSP session on the daemon's socket that can leave requests in flight. The
    server's own messages go to `on_server_message`: by default its requests (applyEdit,
    progress tokens) are accepted without applying anything, its notifications dropped."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.ids = itertools.count(1)
        self.received = b""
        self.replies: dict[int, dict[str, Any]] = {}

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> int:
        msg_id = next(self.ids)
        self.send({"id": msg_id, "method": method, "params": params})
        return msg_id

    def poll(self, timeout: float) -> None:
        """Read what arrives within `timeout` s and hand each message on."""
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if ready:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("the daemon closed the session")
            self.received += chunk
        while (message := self._next_message()) is not None:
            if "method" in message:
                self.on_server_message(message)
            else:
                self.on_reply(message)

    def on_server_message(self, message: dict[str, Any]) -> None:
        if "id" in message:  # workspace/applyEdit, progress tokens: accept
            self.send({"id": message["id"], "result": {"applied": True}})

    def on_reply(self, message: dict[str, Any]) -> None:
        self.replies[message.get("id", -1)] = message

    def _next_message(self) -> dict[str, Any] | None:
        header, found, rest = self.received.partition(b"\r\n\r\n")
        if not found:
            return None
        length = next(
            int(line.split(b":")[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        if len(rest) < length:
            return None
        self.received = rest[length:]
        message: dict[str, Any] = json.loads(rest[:length])
        return message

    def answer(self, msg_id: int, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while msg_id not in self.replies and time.monotonic() < deadline:
            self.poll(min(0.05, max(0.0, deadline - time.monotonic())))
        return self.replies.pop(msg_id, None)

    def call(self, method: str, params: Any, timeout: float = 30.0) -> dict[str, Any] | None:
        return self.answer(self.request(method, params), timeout)

    def command(self, name: str, *arguments: Any) -> dict[str, Any] | None:
        return self.call("workspace/executeCommand", {"command": name, "arguments": [*arguments]})

    def initialize(self, root: Path, capabilities: dict[str, Any] | None = None) -> None:
        folders = [{"uri": root.as_uri(), "name": root.name}]
        params = {
            "capabilities": capabilities or {},
            "rootUri": root.as_uri(),
            "workspaceFolders": folders,
        }
        if self.call("initialize", params, timeout=CONTROL_TIMEOUT_S) is None:
            raise TimeoutError("initialize was not answered")
        self.notify("initialized", {})

    def open(self, uri: str, text: str, version: int = 1) -> None:
        document = {"uri": uri, "languageId": "python", "version": version, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": document})

    def close(self) -> None:
        self.sock.close()


def start(base: Path, engine_kind: str, threads: int = 1, **settings: str) -> dict[str, Any]:
    """Start a daemon whose files all live under `base`; `settings` are more SHADOWTAB_
    variables, by key with `_` for `.` (debounce_lint_ms="50": SHADOWTAB_DEBOUNCE_LINT_MS).
    Its status record."""
    # A SIGSEGV torture must not leave core files: the daemon and its workers inherit this
    # (the soft limit only: the test process can raise it back afterwards)
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    for name, sub in (("RUNTIME", "run"), ("STATE", "state"), ("CONFIG", "cfg"), ("DATA", "data")):
        os.environ[f"SHADOWTAB_{name}_DIR"] = str(base / sub)
    os.environ["SHADOWTAB_ENGINE_KIND"] = engine_kind
    os.environ["SHADOWTAB_ENGINE_THREADS"] = str(threads)
    # weights = "auto" would measure them in every fresh data dir: not what is tortured
    os.environ.setdefault("SHADOWTAB_ENGINE_WEIGHTS", "q8_0")
    os.environ.setdefault("SHADOWTAB_ENGINE_MERGE_ADAPTER", "0")  # nor merged: seconds per data dir
    for key, value in settings.items():
        os.environ[f"SHADOWTAB_{key.upper()}"] = value
    from shadowtab.daemon.client import start_daemon

    return start_daemon(timeout=60)


def status() -> dict[str, Any]:
    return control("status")


def stats() -> dict[str, Any]:
    """The daemon's `stats`: the hub's figures (the engine's time by kind), and the
    lines holding its memory when it traces allocations."""
    return control("stats")


def control(cmd: str) -> dict[str, Any]:
    from shadowtab.daemon.client import request

    reply: dict[str, Any] = request(cmd, timeout=CONTROL_TIMEOUT_S)
    return reply


def leak_slack(kind: str) -> int:
    """How much a LEAK_CHECKED figure may grow."""
    return THREAD_POOL_SLACK if kind == "threads" else 0


def daemon_thread_kinds() -> dict[str, int]:
    """The daemon's own threads and its pools (thread_census): a control request, so one
    more open socket in the daemon for a moment: ask after reading its open files."""
    census = status()["threads"]
    return {"own_threads": int(census["own"]), "pools": int(census["pools"])}


def engine() -> dict[str, Any]:
    state: dict[str, Any] = status()["engine"]
    return state


def wait_ready(after_pid: int | None, deadline_s: float) -> float | None:
    """When (monotonic) a worker other than `after_pid` serves; None past the deadline."""
    started = time.monotonic()
    while time.monotonic() - started < deadline_s:
        state = engine()
        if state["state"] == "ready" and state["worker"]["pid"] not in (None, after_pid):
            return time.monotonic()
        if state["state"] == "failed":
            raise RuntimeError(f"the engine gave up: {state['error']}")
        time.sleep(0.02)
    return None


def stop() -> None:
    from shadowtab.daemon.client import stop_daemon

    try:
        stop_daemon(timeout=10)
    except Exception as exc:  # the figures matter more than a tidy stop
        print(f"stopping the daemon failed: {exc}", file=sys.stderr)


def project(base: Path, files: dict[str, str]) -> Path:
    """A git project under `base` holding `files` (name -> text); its root."""
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def process_figures(pid: int) -> dict[str, float]:
    """RSS (MB), open file descriptors and threads of `pid` now."""
    return {"rss_mb": round(rss_kb(pid) / 1024, 1), "fds": open_files(pid), "threads": threads(pid)}


def cpu_seconds(pid: int) -> float:
    """CPU time of `pid` so far, its children that ended included (the linters' runs)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return (utime + stime + cutime + cstime) / os.sysconf("SC_CLK_TCK")


def cpu_reading(pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each named process, this one (`harness`) and the machine."""
    from shadowtab.inference.engines.local.cpu_load import read_times

    reading = {name: cpu_seconds(pid) for name, pid in pids.items()}
    machine = read_times(nice_weight=1.0)  # every process's time, niced ones included
    busy = machine.busy_all if machine is not None else float("nan")
    return {**reading, "harness": time.process_time(), "machine": busy}


def percentiles(values: list[float]) -> dict[str, float | None]:
    """p50 and p99 (nearest rank), in the unit of `values`; None when there are none."""
    if not values:
        return {"p50": None, "p99": None}
    ordered = sorted(values)
    return {"p50": round(_rank(ordered, 0.50), 1), "p99": round(_rank(ordered, 0.99), 1)}


def _rank(ordered: list[float], quantile: float) -> float:
    return ordered[max(0, math.ceil(quantile * len(ordered)) - 1)]
