"""Torture: 8 editors x 1,000 keystrokes at once through a real daemon (its LSP socket,
real incremental didChange, the engine on with the packaged model in its worker), each
editor asking for ghost text (textDocument/inlineCompletion) after every keystroke and
cancelling the previous request ($/cancelRequest), as VS Code does.

"Shared files": the daemon keeps one shadow document per file for all its sessions, so
the clients work in pairs: both clients of a pair have the same file open and type at
the same time, each on lines of its own (typing_trace.py: no newline is typed, so
neither moves the other's positions). The daemon applies each keystroke to the shadow
once and forwards it to the other editor as workspace/applyEdit; the client applies
the push to its buffer and reports it back as its own didChange (the echo the daemon
must recognise, not apply twice). Pushes are applied whatever version they name (an
editor whose own typing made that version stale, as VS Code and Neovim do, would
refuse them: counted as `stale_pushes`).

When the traffic has settled the shadow is committed (lock take, mode commit) and read
from disk. Must be 0: `lines_wrong` (lines of the committed files that differ from the
reference: the initial text with each client's keystrokes replayed alone on its own
lines), `clients_wrong` (clients with such a line: a lost, doubled or reordered edit),
`buffers_diverged` (an editor's buffer differs from the shadow), `unanswered`
(completion requests never answered), `request_errors` (answered with an error other
than cancelled or content-modified), `diagnostics_missing`. A request that waited
longer than [limits] prediction_wait_s for a turn with the model is answered
ContentModified at once (`completions.expired`).

Latency, p50/p99 in ms: `keystroke_to_diagnostics_ms` from a keystroke after which the
person pauses to the first publishDiagnostics of the file for that editor's version or
later (the daemon lints a file once typing in it pauses, whoever types); and
`keystroke_to_ghost_text_ms` from a keystroke to the answer of the request it made,
when that answer has items and no later keystroke superseded it. The figures:

    {"clients": 8, "keystrokes": 8000, "lines_wrong": 0, "clients_wrong": 0, ...}

It fails when a must-be-0 figure is not 0 or the daemon or its worker restarted.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any

from torture_daemon import Editor, percentiles, project, start, status, stop, wait_ready
from typing_trace import Buffer, Keystroke, expected_text, replay, source, trace

READY_DEADLINE_S = 600.0  # the model's first load, niced under other work
ANSWER_DEADLINE_S = 600.0  # unanswered this long: a hang (8 queued ghost texts take minutes here)
DIAGNOSTICS_WAIT_S = 30.0
CANCELLED = (-32800, -32801)  # RequestCancelled, ContentModified (a newer keystroke)
CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
    "textDocument": {"inlineCompletion": {}, "synchronization": {}},
}


class Client(Editor):
    """An editor typing its trace into one shared file, applying the pushes of the
    others, timing diagnostics and ghost text."""

    def __init__(self, number: int, path: str, uri: str, text: str, keys: list[Keystroke]):
        super().__init__(path)
        self.number, self.uri, self.keys = number, uri, keys
        self.buffer = Buffer(text)
        self.counts: Counter[str] = Counter()
        self.error_samples: list[str] = []
        self.waiting_diagnostics: deque[tuple[int, float]] = deque()  # (version, sent at)
        self.diagnostics_ms: list[float] = []
        self.ghost_ms: list[float] = []
        self.completions: dict[int, float] = {}  # request id -> its keystroke's time
        self.latest: int | None = None  # the request of the last keystroke
        self.typed = 0

    def type_trace(self, start_at: float, until: float = float("inf")) -> None:
        """Type the trace from `start_at` (monotonic), stopping early at `until`."""
        due = start_at
        for key in self.keys:
            if due >= until:
                break
            while (wait := due - time.monotonic()) > 0:
                self.poll(min(wait, 0.05))
            self.poll(0)
            self.keystroke(key)
            due = max(due + key.pause_s, time.monotonic())
        self.finish_requests()

    def keystroke(self, key: Keystroke) -> None:
        self.typed += 1
        self.buffer.apply(key.change())
        document = {"uri": self.uri, "version": self.buffer.version}
        self.notify(
            "textDocument/didChange", {"textDocument": document, "contentChanges": [key.change()]}
        )
        sent = time.monotonic()
        if key.burst_end:
            self.waiting_diagnostics.append((self.buffer.version, sent))
        if self.latest is not None and self.latest in self.completions:
            self.notify("$/cancelRequest", {"id": self.latest})
        params = {
            "textDocument": {"uri": self.uri},
            "position": key.cursor(),
            "context": {"triggerKind": 2},  # automatic: typing
        }
        self.latest = self.request("textDocument/inlineCompletion", params)
        self.completions[self.latest] = sent

    def finish_requests(self) -> None:
        deadline = time.monotonic() + ANSWER_DEADLINE_S
        while self.completions and time.monotonic() < deadline:
            self.poll(0.05)
        self.counts["unanswered"] += len(self.completions)

    def on_server_message(self, message: dict[str, Any]) -> None:
        method = message["method"]
        if method == "workspace/applyEdit":
            self.apply_push(message)
        elif method == "textDocument/publishDiagnostics":
            self.diagnostics(message["params"])
        elif "id" in message:  # progress tokens
            self.send({"id": message["id"], "result": None})

    def apply_push(self, message: dict[str, Any]) -> None:
        for edit in message["params"]["edit"]["documentChanges"]:
            named = edit["textDocument"].get("version")
            if named is not None and named != self.buffer.version:
                self.counts["stale_pushes"] += 1
            for text_edit in edit["edits"]:
                change = {"range": text_edit["range"], "text": text_edit["newText"]}
                self.buffer.apply(change)
                self.counts["pushes"] += 1
                document = {"uri": self.uri, "version": self.buffer.version}
                self.notify(
                    "textDocument/didChange", {"textDocument": document, "contentChanges": [change]}
                )
        self.send({"id": message["id"], "result": {"applied": True}})

    def diagnostics(self, params: dict[str, Any]) -> None:
        if params["uri"] != self.uri or params.get("version") is None:
            return
        now = time.monotonic()
        while self.waiting_diagnostics and self.waiting_diagnostics[0][0] <= params["version"]:
            _, sent = self.waiting_diagnostics.popleft()
            self.diagnostics_ms.append((now - sent) * 1000)

    def on_reply(self, message: dict[str, Any]) -> None:
        sent = self.completions.pop(message.get("id", -1), None)
        if sent is None:
            super().on_reply(message)
            return
        if "error" in message:
            self.completion_error(message["error"])
            return
        result = message.get("result")
        items = result.get("items", []) if isinstance(result, dict) else result or []
        if not items:
            self.counts["empty"] += 1
        elif message["id"] != self.latest:
            self.counts["stale_items"] += 1  # a newer keystroke came first: not shown
        else:
            self.counts["shown"] += 1
            self.ghost_ms.append((time.monotonic() - sent) * 1000)

    def completion_error(self, error: dict[str, Any]) -> None:
        if error.get("code") in CANCELLED:
            # dropped after [limits] prediction_wait_s in the queue for the model, or
            # made stale by a newer keystroke
            expired = "waited" in str(error.get("message", ""))
            self.counts["expired" if expired else "superseded"] += 1
            return
        self.counts["request_errors"] += 1
        if len(self.error_samples) < 3:
            self.error_samples.append(str(error.get("message", error))[:200])


def make_files(clients: int, per_file: int, lines: int) -> dict[str, Any]:
    """{name: (text, owned lines by client)}: clients 0..per_file-1 share the first file."""
    files = {}
    for first in range(0, clients, per_file):
        typists = list(range(first, min(clients, first + per_file)))
        name = f"shared_{first // per_file}.py"
        title = f"Typed into by clients {', '.join(map(str, typists))} at once."
        files[name] = source(title, typists, lines)
    return files


def connect(
    lsp_path: str, root: Path, files: dict[str, Any], args: argparse.Namespace
) -> list[Client]:
    clients = []
    for number in range(args.clients):
        name = f"shared_{number // args.per_file}.py"
        text, owned = files[name]
        keys = trace(number, owned[number], args.keystrokes, args.seed)
        client = Client(number, lsp_path, (root / name).as_uri(), text, keys)
        client.initialize(root, CAPABILITIES)
        client.open(client.uri, text)
        clients.append(client)
    return clients


def warm_up(clients: list[Client]) -> None:
    """One completion per client before the clock runs: the first prompt of each file."""
    for client in clients:
        params = {
            "textDocument": {"uri": client.uri},
            "position": client.keys[0].cursor(),
            "context": {"triggerKind": 1},
        }
        client.call("textDocument/inlineCompletion", params, timeout=READY_DEADLINE_S)


def type_all(clients: list[Client]) -> float:
    """Every client types its trace in its own thread, all starting at once; seconds."""
    start_at = time.monotonic() + 0.5
    errors: list[BaseException] = []

    def typist(client: Client) -> None:
        try:
            client.type_trace(start_at)
        except BaseException as exc:  # a lost session: reported, never a hang
            errors.append(exc)

    threads = [threading.Thread(target=typist, args=(c,), daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    progress(clients, threads)
    if errors:
        raise RuntimeError(f"a client failed: {errors[0]!r}") from errors[0]
    return time.monotonic() - start_at


def progress(clients: list[Client], threads: list[threading.Thread]) -> None:
    """Wait for the typists, saying how far they are on stderr (a full run takes minutes)."""
    for thread in threads:
        while thread.is_alive():
            thread.join(timeout=15.0)
            counts = [c.buffer.version for c in clients]
            print(f"buffer versions (keystrokes + pushes): {counts}", file=sys.stderr, flush=True)


def settle(clients: list[Client]) -> None:
    """Three round trips per client: the daemon has read every keystroke (and sent its
    pushes), each client has read its pushes (and sent their echoes), the daemon has
    read the echoes. Then the last diagnostics."""
    for _ in range(3):
        for client in clients:
            client.command("shadowtab.lock.status")
    deadline = time.monotonic() + DIAGNOSTICS_WAIT_S
    while any(c.waiting_diagnostics for c in clients) and time.monotonic() < deadline:
        for client in clients:
            client.poll(0.02)


def check(clients: list[Client], root: Path, files: dict[str, Any]) -> dict[str, Any]:
    """Commit the shadow and compare each file with the reference replay."""
    taken = clients[0].command("shadowtab.lock.take", {"mode": "commit"})
    if taken is None or "result" not in taken:
        raise RuntimeError(f"the commit failed: {taken}")
    replays = {c.number: replay(files[Path(c.uri).name][0], c.keys) for c in clients}
    lines_wrong, wrong_clients = 0, set()
    for name, (text, owned) in files.items():
        committed = (root / name).read_text().split("\n")
        expected = expected_text(text, owned, replays).split("\n")
        lines_wrong += abs(len(committed) - len(expected))
        for number, (got, want) in enumerate(zip(committed, expected, strict=False)):
            if got != want:
                lines_wrong += 1
                wrong_clients |= {c for c, lines in owned.items() if number in lines}
    diverged = sum(c.buffer.text != (root / Path(c.uri).name).read_text() for c in clients)
    return {
        "lines_wrong": lines_wrong,
        "clients_wrong": len(wrong_clients),
        "buffers_diverged": diverged,
    }


def figures(clients: list[Client], seconds: float) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    for client in clients:
        counts.update(client.counts)
    diagnostics = [ms for c in clients for ms in c.diagnostics_ms]
    ghost = [ms for c in clients for ms in c.ghost_ms]
    return {
        "unanswered": counts["unanswered"],
        "request_errors": counts["request_errors"],
        "diagnostics_missing": sum(len(c.waiting_diagnostics) for c in clients),
        "keystroke_to_diagnostics_ms": {**percentiles(diagnostics), "n": len(diagnostics)},
        "keystroke_to_ghost_text_ms": {**percentiles(ghost), "n": len(ghost)},
        "completions": {
            k: counts[k] for k in ("shown", "empty", "superseded", "expired", "stale_items")
        },
        "pushes": counts["pushes"],
        "stale_pushes": counts["stale_pushes"],
        "typing_s": round(seconds, 1),
        "error_samples": [s for c in clients for s in c.error_samples][:3],
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="sttc-", dir="/tmp"))  # short: a socket path
    files = make_files(args.clients, args.per_file, args.lines)
    root = project(base, {name: text for name, (text, _) in files.items()})
    try:
        started = start(base, "llama.cpp", args.threads)
        if wait_ready(None, READY_DEADLINE_S) is None:
            raise RuntimeError("the model did not load")
        clients = connect(started["lsp_socket"], root, files, args)
        warm_up(clients)
        seconds = type_all(clients)
        settle(clients)
        stats = status()
        result = {
            "clients": args.clients,
            "keystrokes_per_client": args.keystrokes,
            "keystrokes": sum(c.typed for c in clients),
            "files": len(files),
            "clients_per_file": args.per_file,
            **check(clients, root, files),
            **figures(clients, seconds),
            "daemon_pid_unchanged": stats["pid"] == started["pid"],
            "worker_restarts": stats["engine"]["worker"]["restarts"],
        }
        return result
    finally:
        stop()
        shutil.rmtree(base, ignore_errors=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--keystrokes", type=int, default=1000, help="per client")
    parser.add_argument("--per-file", type=int, default=2, help="clients sharing a file")
    parser.add_argument("--lines", type=int, default=6, help="lines each client owns")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")


def failures(result: dict[str, Any]) -> list[str]:
    """The must-be-0 figures that are not 0; a daemon or worker that restarted."""
    zeros = (
        "lines_wrong",
        "clients_wrong",
        "buffers_diverged",
        "unanswered",
        "request_errors",
        "diagnostics_missing",
        "worker_restarts",
    )
    failed = [key for key in zeros if result[key]]
    return failed if result["daemon_pid_unchanged"] else [*failed, "daemon_pid_unchanged"]
