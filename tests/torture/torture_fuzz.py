"""Torture: fuzzed messages against a live daemon on both of its sockets. Hypothesis
builds LSP messages (valid shapes with wrong types and extreme values, unknown methods,
documents never opened, wrong versions, out-of-range positions), raw bytes (bad
Content-Length, truncated and oversized frames, invalid UTF-8 and JSON) and msgpack
control frames of every wrong shape, and control requests naming one real folder after
another (each a project the daemon opens). A bystander editor session is open
throughout.
Afterwards: the daemon is alive with the same pid, answers well-formed requests, its
RSS grew less than 10%, and the bystander was not dropped.

RSS is sampled the same way every time (settled_rss_kb: a fixed quiet time, then the
median of a few samples): once the daemon is up, after a warm-up of a tenth of the
inputs (imports and caches filled), and after the run. `rss_growth_pct` is the run's,
against the warm-up's end; `rss_growth_from_start_pct` includes the warm-up; its
threads and open files at both ends of the run. The tracebacks in the daemon's log are
counted, by what logged them. `--by-kind N` then feeds N inputs of each kind alone and
prints the RSS growth and tracebacks of each (the bisection that finds which inputs
keep memory: with the bound on the workspaces the control socket opens taken off, 300
folders named kept 1.9 MB; with it, after 10,000 inputs, no kind kept 0.1 MB per 300).

The figures:

    {"messages": 10000, "alive": true, "rss_growth_pct": 1.2, "bystander_ok": true, ...}
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import msgpack
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from lsp_fuzzing import JSON, METHODS, LspWire, lsp_kinds, lsp_messages
from torture_daemon import open_files, rss_kb, threads

CLI = [sys.executable, "-m", "shadowtab.daemon.cli"]
RSS_GROWTH_LIMIT_PCT = 10
SETTLE_S = 3.0  # no input this long before RSS is sampled
RSS_SAMPLES = 5
RSS_SAMPLE_GAP_S = 0.2
FOLDERS = 500  # projects the control frames name, one after another


class LspConnection(LspWire):
    """A blocking LSP connection on the daemon's socket."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        super().__init__(self.sock.sendall, lambda: self.sock.recv(1 << 20), self.sock.fileno())

    def initialize(self, root: Path) -> None:
        folders = [{"uri": root.as_uri(), "name": root.name}]
        params = {"capabilities": {}, "rootUri": root.as_uri(), "workspaceFolders": folders}
        assert "result" in self.call("initialize", params)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def close(self) -> None:
        self.sock.close()


def control(path: str, frame: bytes, timeout: float = 10.0) -> dict[str, Any] | None:
    """Send one raw frame on a fresh control connection; the reply, or None if closed."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(frame)
        sock.shutdown(socket.SHUT_WR)  # a truncated frame ends here, not at the read timeout
        header = b""
        while len(header) < 4:
            chunk = sock.recv(4 - len(header))
            if not chunk:
                return None
            header += chunk
        (length,) = struct.unpack(">I", header)
        body = b""
        while len(body) < length:
            chunk = sock.recv(length - len(body))
            if not chunk:
                return None
            body += chunk
        reply: dict[str, Any] = msgpack.unpackb(body, raw=False)
        return reply


def control_frame(message: Any) -> bytes:
    body = msgpack.packb(message, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


def folder(root: Path, number: int) -> Path:
    """One of the FOLDERS projects beside `root` the fuzz names (make_folders)."""
    return root.parent / "folders" / f"f{number}"


def make_folders(root: Path) -> None:
    for number in range(FOLDERS):
        (folder(root, number) / ".git").mkdir(parents=True)


def messages(root: Path) -> st.SearchStrategy[tuple[str, Any]]:
    """LSP messages of every kind (shutdown and broken framing too) and control frames."""
    control_kinds = [v for k, v in kinds(root).items() if k.startswith("control")]
    return st.one_of(lsp_messages(root, [*METHODS, "shutdown"], raw=True), *control_kinds)


def kinds(root: Path) -> dict[str, st.SearchStrategy[tuple[str, Any]]]:
    """Each kind of input by name, LSP ("lsp_request", ...) and control: the bisection
    feeds them one at a time."""
    lsp = lsp_kinds(root, [*METHODS, "shutdown"], raw=True)
    return {
        **{f"lsp_{name}": strategy for name, strategy in lsp.items()},
        "control_json": JSON.map(lambda j: ("control", control_frame(j))),
        "control_command": st.fixed_dictionaries(
            {"cmd": JSON | st.sampled_from(["status", "lock.take", "stop!"])},
            optional={"root": JSON, "mode": JSON},
        ).map(lambda m: ("control", control_frame(m))),
        "control_bytes": st.binary(max_size=40).map(
            lambda b: ("control", struct.pack(">I", len(b)) + b)
        ),
        # a real folder, another each time: the daemon opens a workspace for each (a
        # watcher, an index thread), which it kept for good before issue 44
        "control_folder": st.tuples(
            st.sampled_from(["lock.status", "shadow.pending", "lock.take"]),
            st.integers(0, FOLDERS - 1),
        ).map(lambda c: ("control", control_frame({"cmd": c[0], "root": str(folder(root, c[1]))}))),
        "control_broken": st.sampled_from(
            [b"\xff\xff\xff\xff", b"\x00\x00", b"\x00\x00\x00\x10abc"]
        ).map(lambda b: ("control", b)),
    }


class Fuzzer:
    def __init__(self, lsp_path: str, control_path: str, root: Path) -> None:
        self.lsp_path, self.control_path, self.root = lsp_path, control_path, root
        self.connection = self._connect()
        self.bad_samples: list[str] = []
        self.counts = {
            "messages": 0,
            "lsp_messages": 0,
            "control_frames": 0,
            "fuzz_sessions": 1,
            "sessions_ended_by_batch": 0,
            "unanswered": 0,
            "bad_replies": 0,
        }

    def _connect(self) -> LspConnection:
        connection = LspConnection(self.lsp_path)
        connection.initialize(self.root)
        return connection

    def reconnect(self) -> None:
        self.connection.close()  # vanishes without shutdown, as editors do when killed
        self.connection = self._connect()
        self.counts["fuzz_sessions"] += 1

    def batch(self, batch: list[tuple[str, Any]]) -> None:
        expected: set[int] = set()
        ended = False
        for kind, message in batch:
            self.counts["messages"] += 1
            if kind == "control":
                self.counts["control_frames"] += 1
                control(self.control_path, message)
                continue
            self.counts["lsp_messages"] += 1
            if ended:
                continue
            if kind == "request":
                expected.add(self.connection.request(message["method"], message["params"]))
            elif kind == "notification":
                self.connection.send({"jsonrpc": "2.0", **message})
            elif kind == "body":
                self.connection.send_body(message)
            elif kind == "json":
                self.connection.send(message)
            else:  # raw framing errors: this session's stream is lost, the next one is new
                self.connection.sock.sendall(message)
                ended = True
        if ended:
            self.reconnect()
            return
        self._check(expected, batch)

    def _bad(self, reply: dict[str, Any], batch: list[tuple[str, Any]]) -> None:
        self.counts["bad_replies"] += 1
        if len(self.bad_samples) < 3:
            self.bad_samples.append(repr((reply, batch))[:600])

    def _check(self, expected: set[int], batch: list[tuple[str, Any]]) -> None:
        try:
            ping = self.connection.request(
                "workspace/executeCommand", {"command": "shadowtab.lock.status", "arguments": []}
            )
            replies = self.connection.answers(expected | {ping})
        except TimeoutError:  # a request left unanswered: a failure
            self.counts["unanswered"] += 1
            self.reconnect()
            return
        except (EOFError, OSError):  # the batch ended the session (a limit, a framing error)
            self.counts["sessions_ended_by_batch"] += 1
            self.reconnect()
            return
        for msg_id in expected:
            reply = replies[msg_id]
            if ("result" in reply) == ("error" in reply):
                self._bad(reply, batch)
        if "result" not in replies[ping] and not _after_shutdown(replies[ping]):
            self._bad(replies[ping], batch)
        if _after_shutdown(replies[ping]):
            self.reconnect()


def _after_shutdown(reply: dict[str, Any]) -> bool:
    return "shut down" in str(reply.get("error", {}).get("message", ""))


def start_daemon(base: Path) -> dict[str, Any]:
    for name, sub in (("RUNTIME", "run"), ("STATE", "state"), ("CONFIG", "cfg"), ("DATA", "data")):
        os.environ[f"SHADOWTAB_{name}_DIR"] = str(base / sub)
    os.environ["SHADOWTAB_ENGINE_KIND"] = "off"
    subprocess.run([*CLI, "daemon", "start"], check=True, capture_output=True, timeout=60)
    from shadowtab.daemon.client import read_status

    status = read_status()
    assert status is not None, "the daemon wrote no status file"
    return status


def run(args: argparse.Namespace) -> dict[str, Any]:
    count, seed = args.messages, args.seed
    base = Path(tempfile.mkdtemp(prefix="sttf-", dir="/tmp"))
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    make_folders(root)
    log = base / "state" / "daemon.log"
    try:
        status = start_daemon(base)
        pid, lsp_path, control_path = status["pid"], status["lsp_socket"], status["control_socket"]
        bystander = LspConnection(lsp_path)
        bystander.initialize(root)
        uri = (root / "a.py").as_uri()
        item = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
        bystander.send(
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}}
        )
        rss_started = settled_rss_kb(pid)
        fuzzer = Fuzzer(lsp_path, control_path, root)
        strategy = st.lists(messages(root), min_size=1, max_size=8)
        fuzz(fuzzer, strategy, max(100, count // 10), seed)  # warm-up: imports, caches
        rss_before = settled_rss_kb(pid)
        threads_before, fds_before = threads(pid), open_files(pid)
        fuzz(fuzzer, strategy, count, seed + 1)
        fuzzer.reconnect()  # the last fuzz session ends, as its editor would
        rss_after = settled_rss_kb(pid)
        threads_after, fds_after = threads(pid), open_files(pid)
        tracebacks = log_tracebacks(log)
        bisected = by_kind(fuzzer, pid, root, args.by_kind, seed + 2, log) if args.by_kind else {}
        fuzzer.connection.close()
        return {
            **fuzzer.counts,
            "alive": _alive(pid, control_path, lsp_path, root),
            "same_pid": control(control_path, control_frame({"cmd": "status"})) is not None
            and _pid_of(control_path) == pid,
            "rss_started_mb": round(rss_started / 1024, 1),
            "rss_before_mb": round(rss_before / 1024, 1),
            "rss_after_mb": round(rss_after / 1024, 1),
            "rss_growth_pct": round(100 * (rss_after - rss_before) / rss_before, 1),
            "rss_growth_from_start_pct": round(100 * (rss_after - rss_started) / rss_started, 1),
            "threads": [threads_before, threads_after],
            "open_files": [fds_before, fds_after],
            "log_tracebacks": sum(tracebacks.values()),
            "log_traceback_samples": [f"{n} x {what}" for what, n in tracebacks.most_common(3)],
            **({"by_kind": bisected} if bisected else {}),
            "bystander_ok": _bystander_ok(bystander),
            "bad_reply_samples": fuzzer.bad_samples,
        }
    finally:
        subprocess.run([*CLI, "daemon", "stop"], capture_output=True, timeout=60, check=False)
        shutil.rmtree(base, ignore_errors=True)


def settled_rss_kb(pid: int) -> int:
    """The daemon's RSS sampled the same way in every run: SETTLE_S without input (what
    the last inputs started, lints and ended sessions, is done), then the median of
    RSS_SAMPLES samples RSS_SAMPLE_GAP_S apart (one sample catches a passing peak)."""
    time.sleep(SETTLE_S)
    samples = []
    for _ in range(RSS_SAMPLES):
        samples.append(rss_kb(pid))
        time.sleep(RSS_SAMPLE_GAP_S)
    return int(statistics.median(samples))


def by_kind(
    fuzzer: Fuzzer, pid: int, root: Path, count: int, seed: int, log: Path
) -> dict[str, dict[str, int]]:
    """The bisection: `count` inputs of each kind alone, after the mixed run; the
    settled RSS growth (KB) and the log's new tracebacks of each."""
    found = {}
    for index, (name, strategy) in enumerate(kinds(root).items()):
        rss_before, logged_before = settled_rss_kb(pid), sum(log_tracebacks(log).values())
        fuzz(fuzzer, st.lists(strategy, min_size=1, max_size=8), count, seed * 100 + index)
        fuzzer.reconnect()
        found[name] = {
            "rss_growth_kb": settled_rss_kb(pid) - rss_before,
            "tracebacks": sum(log_tracebacks(log).values()) - logged_before,
        }
        print(f"fuzz by kind: {name} {found[name]}", file=sys.stderr, flush=True)
    return found


def log_tracebacks(log: Path) -> Counter[str]:
    """The tracebacks in the daemon's log, by the record that logged each (its logger and
    message, without the time) or, printed without one, by its last line."""
    found: Counter[str] = Counter()
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    for index, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last)"):
            record = lines[index - 1] if index else ""
            found[_record_text(record) or _last_line(lines, index)] += 1
    return found


def _record_text(record: str) -> str:
    """'<time> ERROR name [pid]: message' -> 'name: message'; '' for no log record."""
    parts = record.split(" ", 4)
    if len(parts) < 5 or parts[2] not in ("ERROR", "WARNING", "CRITICAL", "INFO"):
        return ""
    message = parts[4].partition(": ")[2]  # after "[pid]: "
    return f"{parts[3]}: {message}"[:160]


def _last_line(lines: list[str], start: int) -> str:
    """The exception line that ends the traceback starting at `start`."""
    for line in lines[start + 1 :]:
        if line and not line.startswith((" ", "Traceback")):
            return line[:160]
    return "?"


def fuzz(
    fuzzer: Fuzzer, strategy: st.SearchStrategy[list[tuple[str, Any]]], count: int, seed: int
) -> None:
    """Feed hypothesis-built batches until `count` more messages went out."""
    target = fuzzer.counts["messages"] + count
    for round_ in itertools.count():
        remaining = target - fuzzer.counts["messages"]
        if remaining <= 0:
            return

        @hypothesis_seed(seed * 1000 + round_)
        @settings(
            max_examples=max(1, min(200, remaining // 4)),
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
        )
        @given(batch=strategy)
        def exchange(batch: list[tuple[str, Any]]) -> None:
            if fuzzer.counts["messages"] < target:
                fuzzer.batch(batch)

        exchange()


def _pid_of(control_path: str) -> int:
    reply = control(control_path, control_frame({"cmd": "status"}))
    return int((reply or {}).get("pid", -1))


def _alive(pid: int, control_path: str, lsp_path: str, root: Path) -> bool:
    try:
        os.kill(pid, 0)
        reply = control(control_path, control_frame({"cmd": "lock.status", "root": str(root)}))
        fresh = LspConnection(lsp_path)
        fresh.initialize(root)
        answer = fresh.call(
            "workspace/executeCommand", {"command": "shadowtab.lock.status", "arguments": []}
        )
        fresh.close()
        return bool(reply and reply.get("ok")) and answer.get("result", {}).get("root") == str(root)
    except (OSError, EOFError, TimeoutError, AssertionError):
        return False


def _bystander_ok(bystander: LspConnection) -> bool:
    try:
        reply = bystander.call(
            "workspace/executeCommand", {"command": "shadowtab.lock.status", "arguments": []}
        )
    except (OSError, EOFError, TimeoutError):
        return False
    return "result" in reply


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument(
        "--by-kind",
        type=int,
        default=0,
        help="then this many inputs of each kind alone: RSS growth and tracebacks by kind",
    )


def failures(figures: dict[str, Any]) -> list[str]:
    """The checks of the docstring that failed."""
    checks = {
        "alive": figures["alive"],
        "same_pid": figures["same_pid"],
        "bystander_ok": figures["bystander_ok"],
        "rss_growth_pct": figures["rss_growth_pct"] < RSS_GROWTH_LIMIT_PCT,
        "bad_replies": not figures["bad_replies"],
        "unanswered": not figures["unanswered"],
    }
    return [name for name, ok in checks.items() if not ok]
