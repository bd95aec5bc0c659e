"""Torture: 8 editors x 1,000 keystrokes at once through a real daemon (its LSP socket,
real incremental didChange, the engine on with the packaged model in its worker), each
editor asking for ghost text (textDocument/inlineCompletion) after every keystroke and
cancelling the previous request ($/cancelRequest), as VS Code does. Each editor types
into a file of its own and into one of two shared files (clients 0-3 share the first,
4-7 the second), going from one to the other at pauses in its typing.

Side by side in the same run: first one editor types alone (client 0's trace, into
copies of its two files), the eight connected and idle; then the eight type at once.
Ghost text after a pause (`ghost_text_after_pause_ms`: a keystroke after which the
person pauses to the answer of the request it made, ghost text or none; a pause that
ended before the answer counts its length, as `late`) is compared per client with the
lone editor's: each p50 at most --max-ratio (2) times it.

"Shared files": the daemon keeps one shadow document per file for all its sessions, so
the clients of a shared file have it open and type at the same time, each on lines of
its own (typing_trace.py: no newline is typed, so neither moves the other's positions).
The daemon applies each keystroke to the shadow
once and forwards it to the other editors as workspace/applyEdit; the client applies
the push to its buffer and reports it back as its own didChange (the echo the daemon
must recognise, not apply twice). Pushes are applied whatever version they name (an
editor whose own typing made that version stale, as VS Code and Neovim do, would
refuse them: counted as `stale_pushes`).

When the traffic has settled the shadow is committed (lock take, mode commit) and read
from disk. Must be 0: `lines_wrong` (lines of the committed files that differ from the
reference: the initial text with each client's keystrokes in that file replayed alone
on its own lines), `clients_wrong` (clients with such a line: a lost, doubled or
reordered edit), `buffers_diverged` (an editor's buffer differs from the shadow),
`unanswered` (completion requests never answered), `request_errors` (answered with an
error other than cancelled or content-modified), `diagnostics_missing`,
`foreign_pushes` (a push of a file the editor never opened), and the same for the lone
editor. A request that waited longer than [limits] prediction_wait_s for a turn with
the model is answered ContentModified at once (`completions.expired`).

Latency, p50/p99 in ms: `keystroke_to_diagnostics_ms` from a keystroke after which the
person pauses to the first publishDiagnostics of the file for that editor's version or
later (the daemon lints a file once typing in it pauses, whoever types); and
`keystroke_to_ghost_text_ms` from a keystroke to the answer of the request it made,
when that answer has items and no later keystroke superseded it. The figures:

    {"clients": 8, "keystrokes": 8000, "lines_wrong": 0, "clients_wrong": 0, ...,
     "alone": {...}, "ghost_text_after_pause_vs_alone": {"ratio_max": 1.4, ...}}

It fails when a must-be-0 figure is not 0, the daemon or its worker restarted, or a
client's ghost text after a pause took more than --max-ratio times the lone editor's.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter, defaultdict, deque
from dataclasses import replace
from pathlib import Path
from typing import Any

from torture_daemon import (
    Editor,
    cpu_reading,
    engine,
    percentiles,
    project,
    start,
    stats,
    status,
    stop,
    wait_ready,
)
from typing_trace import (
    Buffer,
    Keystroke,
    expected_text,
    interleave,
    replay,
    source,
    trace,
)

READY_DEADLINE_S = 600.0  # the model's first load, niced under other work
ANSWER_DEADLINE_S = 600.0  # unanswered this long: a hang (8 queued ghost texts take minutes here)
DIAGNOSTICS_WAIT_S = 30.0
# Ghost text after a pause, each of the eight's p50 over the lone editor's: at most this
MAX_GHOST_RATIO = 2.0
FILE_SWITCH_P = 0.3  # at a pause in typing, the person goes to their other file
CANCELLED = (-32800, -32801)  # RequestCancelled, ContentModified (a newer keystroke)
# name -> (text, each typing client's own lines in it)
Files = dict[str, tuple[str, dict[int, list[int]]]]
CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
    "textDocument": {"inlineCompletion": {}, "synchronization": {}},
}


class Client(Editor):
    """An editor typing its trace into its files (`uri`, and `more` by uri), applying
    the pushes of the others, timing diagnostics and ghost text."""

    def __init__(
        self,
        number: int,
        path: str,
        uri: str,
        text: str,
        keys: list[Keystroke],
        more: dict[str, str] | None = None,
    ) -> None:
        super().__init__(path)
        self.number, self.uri, self.keys = number, uri, keys
        self.buffers = {uri: Buffer(text), **{u: Buffer(t) for u, t in (more or {}).items()}}
        self.counts: Counter[str] = Counter()
        self.error_samples: list[str] = []
        # by document: (version, sent at) of keystrokes the person paused after
        self.waiting_diagnostics: dict[str, deque[tuple[int, float]]] = defaultdict(deque)
        self.diagnostics_ms: list[float] = []
        self.ghost_ms: list[float] = []
        self.completions: dict[int, float] = {}  # request id -> its keystroke's time
        self.pauses: dict[int, float] = {}  # the same, of keystrokes the person paused after
        self.pause_ms: list[float] = []  # such a keystroke to the answer, items or none
        self.latest: int | None = None  # the request of the last keystroke
        self.typed = 0

    @property
    def buffer(self) -> Buffer:
        """The buffer of the first file (a one-file client's only one)."""
        return self.buffers[self.uri]

    def open_all(self) -> None:
        for uri, buffer in self.buffers.items():
            self.open(uri, buffer.text)

    def uri_of(self, key: Keystroke) -> str:
        return key.uri or self.uri

    def diagnostics_pending(self) -> int:
        return sum(map(len, self.waiting_diagnostics.values()))

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
        self.pauses_ended()
        uri = self.uri_of(key)
        buffer = self.buffers[uri]
        buffer.apply(key.change())
        document = {"uri": uri, "version": buffer.version}
        self.notify(
            "textDocument/didChange", {"textDocument": document, "contentChanges": [key.change()]}
        )
        sent = time.monotonic()
        if self.latest is not None and self.latest in self.completions:
            self.notify("$/cancelRequest", {"id": self.latest})
        params = {
            "textDocument": {"uri": uri},
            "position": key.cursor(),
            "context": {"triggerKind": 2},  # automatic: typing
        }
        self.latest = self.request("textDocument/inlineCompletion", params)
        self.completions[self.latest] = sent
        if key.burst_end:
            self.waiting_diagnostics[uri].append((buffer.version, sent))
            self.pauses[self.latest] = sent

    def pauses_ended(self) -> None:
        """The person types again: a pause's request still unanswered was too late to
        show anything; its latency is counted as the pause's length (at least that)."""
        now = time.monotonic()
        for sent in self.pauses.values():
            self.pause_ms.append((now - sent) * 1000)
            self.counts["late_after_pause"] += 1
        self.pauses.clear()

    def finish_requests(self) -> None:
        deadline = time.monotonic() + ANSWER_DEADLINE_S
        while self.completions and time.monotonic() < deadline:
            self.poll(0.05)
        self.counts["unanswered"] += len(self.completions)
        self.pauses.clear()  # the trace's last key: no pause of a known length after it

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
            uri = edit["textDocument"]["uri"]
            buffer = self.buffers.get(uri)
            if buffer is None:  # a file this editor never opened
                self.counts["foreign_pushes"] += 1
                continue
            named = edit["textDocument"].get("version")
            if named is not None and named != buffer.version:
                self.counts["stale_pushes"] += 1
            for text_edit in edit["edits"]:
                change = {"range": text_edit["range"], "text": text_edit["newText"]}
                buffer.apply(change)
                self.counts["pushes"] += 1
                document = {"uri": uri, "version": buffer.version}
                self.notify(
                    "textDocument/didChange", {"textDocument": document, "contentChanges": [change]}
                )
        self.send({"id": message["id"], "result": {"applied": True}})

    def diagnostics(self, params: dict[str, Any]) -> None:
        waiting = self.waiting_diagnostics.get(params["uri"])
        if waiting is None or params.get("version") is None:
            return
        now = time.monotonic()
        while waiting and waiting[0][0] <= params["version"]:
            _, sent = waiting.popleft()
            self.diagnostics_ms.append((now - sent) * 1000)

    def on_reply(self, message: dict[str, Any]) -> None:
        msg_id = message.get("id", -1)
        sent = self.completions.pop(msg_id, None)
        if sent is None:
            super().on_reply(message)
            return
        now = time.monotonic()
        paused = self.pauses.pop(msg_id, None)
        if paused is not None:  # the answer after a pause: ghost text, none, or expired
            self.pause_ms.append((now - paused) * 1000)
        if "error" in message:
            self.completion_error(message["error"])
            return
        result = message.get("result")
        items = result.get("items", []) if isinstance(result, dict) else result or []
        if not items:
            self.counts["empty"] += 1
        elif msg_id != self.latest:
            self.counts["stale_items"] += 1  # a newer keystroke came first: not shown
        else:
            self.counts["shown"] += 1
            self.ghost_ms.append((now - sent) * 1000)

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


def make_files(clients: int, shared: int, lines: int) -> Files:
    """Each client's own file, and `shared` files each typed into by a group of them."""
    files: Files = {}
    for number in range(clients):
        files[own_file(number)] = source(f"Client {number}'s own file.", [number], lines)
    for group in range(shared):
        typists = [n for n in range(clients) if shared_file(n, clients, shared) == group]
        title = f"Typed into by clients {', '.join(map(str, typists))} at once."
        files[f"shared_{group}.py"] = source(title, typists, lines)
    return files


def own_file(number: int) -> str:
    return f"own_{number}.py"


def shared_file(number: int, clients: int, shared: int) -> int:
    """The shared file client `number` types into: consecutive clients share one."""
    return number * shared // clients


def client_files(number: int, args: argparse.Namespace) -> list[str]:
    names = [own_file(number)]
    if args.shared_files:
        names.append(f"shared_{shared_file(number, args.clients, args.shared_files)}.py")
    return names


def client_keys(
    number: int, files: list[tuple[str, list[int]]], count: int, seed: int
) -> list[Keystroke]:
    """`count` keystrokes into `files` ((uri, owned lines)), a trace of each interleaved."""
    traces = []
    for index, (uri, lines) in enumerate(files):
        share = max(2, count // len(files) + (index < count % len(files)))
        keys = trace(number, lines, share, seed + 101 * index)
        traces.append([replace(key, uri=uri) for key in keys])
    return interleave(traces, FILE_SWITCH_P, seed * 1000 + number)[:count]


def connect(lsp_path: str, root: Path, files: Files, args: argparse.Namespace) -> list[Client]:
    clients = []
    for number in range(args.clients):
        names = client_files(number, args)
        owned = [((root / name).as_uri(), files[name][1][number]) for name in names]
        keys = client_keys(number, owned, args.keystrokes, args.seed)
        texts = {(root / name).as_uri(): files[name][0] for name in names}
        clients.append(open_client(number, lsp_path, root, texts, keys))
    return clients


def open_client(
    number: int, lsp_path: str, root: Path, texts: dict[str, str], keys: list[Keystroke]
) -> Client:
    """A client on the daemon with its files open: the first in `texts` is its own."""
    (uri, text), *more = texts.items()
    client = Client(number, lsp_path, uri, text, keys, dict(more))
    client.initialize(root, CAPABILITIES)
    client.open_all()
    return client


def alone_files(files: Files, number: int) -> tuple[Files, dict[str, str]]:
    """Copies of client `number`'s files for the editor alone (its lines only), and the
    name of each copy by original."""
    copies: Files = {}
    names = {}
    for name, (text, owned) in files.items():
        if number in owned:
            names[name] = f"alone_{name}"
            copies[names[name]] = (text, {number: owned[number]})
    return copies, names


def connect_alone(lsp_path: str, root: Path, eight: Client, copies: dict[str, str]) -> Client:
    """`eight`'s trace, typed alone into copies of its files: ghost text's reference."""
    uris = {(root / name).as_uri(): (root / copy).as_uri() for name, copy in copies.items()}
    keys = [replace(key, uri=uris[eight.uri_of(key)]) for key in eight.keys]
    texts = {uris[uri]: buffer.text for uri, buffer in eight.buffers.items()}
    return open_client(eight.number, lsp_path, root, texts, keys)


def warm_up(clients: list[Client]) -> None:
    """One completion per client and file before the clock runs: the first prompt of
    each."""
    for client in clients:
        for uri in client.buffers:
            first = next((k for k in client.keys if client.uri_of(k) == uri), None)
            if first is None:
                continue
            params = {
                "textDocument": {"uri": uri},
                "position": first.cursor(),
                "context": {"triggerKind": 1},
            }
            client.call("textDocument/inlineCompletion", params, timeout=READY_DEADLINE_S)


def type_all(clients: list[Client]) -> float:
    """Every client types its trace in its own thread, all starting at once; seconds.
    A client that is done keeps reading until all are, and then the last diagnostics
    are read: a publish is timed when it arrives, not when a later phase reads it."""
    start_at = time.monotonic() + 0.5
    errors: list[BaseException] = []
    typing = [len(clients)]
    all_typed = threading.Event()
    lock = threading.Lock()

    def typist(client: Client) -> None:
        try:
            client.type_trace(start_at)
            with lock:
                typing[0] -= 1
                if typing[0] == 0:
                    all_typed.set()
            while not all_typed.is_set():
                client.poll(0.05)
        except BaseException as exc:  # a lost session: reported, never a hang
            errors.append(exc)
            all_typed.set()

    threads = [threading.Thread(target=typist, args=(c,), daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    progress(clients, threads)
    if errors:
        raise RuntimeError(f"a client failed: {errors[0]!r}") from errors[0]
    seconds = time.monotonic() - start_at
    read_last_diagnostics(clients)
    return seconds


def read_last_diagnostics(clients: list[Client]) -> None:
    deadline = time.monotonic() + DIAGNOSTICS_WAIT_S
    while any(c.diagnostics_pending() for c in clients) and time.monotonic() < deadline:
        for client in clients:
            client.poll(0.02)


def progress(clients: list[Client], threads: list[threading.Thread]) -> None:
    """Wait for the typists, saying how far they are on stderr (a full run takes minutes)."""
    for thread in threads:
        while thread.is_alive():
            thread.join(timeout=15.0)
            counts = [c.typed for c in clients]
            print(f"keystrokes typed: {counts}", file=sys.stderr, flush=True)


def settle(clients: list[Client]) -> None:
    """Three round trips per client: the daemon has read every keystroke (and sent its
    pushes), each client has read its pushes (and sent their echoes), the daemon has
    read the echoes. Then the last diagnostics."""
    for _ in range(3):
        for client in clients:
            client.command("shadowtab.lock.status")
    read_last_diagnostics(clients)


def commit(client: Client) -> None:
    """The shadow to disk (lock take, mode commit), where check reads it."""
    taken = client.command("shadowtab.lock.take", {"mode": "commit"})
    if taken is None or "result" not in taken:
        raise RuntimeError(f"the commit failed: {taken}")


def check(clients: list[Client], root: Path, files: Files) -> Counter[str]:
    """Each committed file against the reference: its text with each typist's lines as
    that typist's keystrokes in it, replayed alone; each editor's buffers against them."""
    by_number = {c.number: c for c in clients}
    wrong: Counter[str] = Counter()
    wrong_clients: set[int] = set()
    for name, (text, owned) in files.items():
        uri = (root / name).as_uri()
        replays = {
            n: replay(text, [k for k in by_number[n].keys if by_number[n].uri_of(k) == uri])
            for n in owned
        }
        committed = (root / name).read_text().split("\n")
        expected = expected_text(text, owned, replays).split("\n")
        wrong["lines_wrong"] += abs(len(committed) - len(expected))
        for number, (got, want) in enumerate(zip(committed, expected, strict=False)):
            if got != want:
                wrong["lines_wrong"] += 1
                wrong_clients |= {c for c, lines in owned.items() if number in lines}
    wrong["clients_wrong"] = len(wrong_clients)
    wrong["buffers_diverged"] = sum(
        buffer.text != uri_to_path(uri).read_text()
        for c in clients
        for uri, buffer in c.buffers.items()
    )
    return wrong


def uri_to_path(uri: str) -> Path:
    return Path(urllib.parse.unquote(urllib.parse.urlparse(uri).path))


def figures(clients: list[Client], seconds: float) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    for client in clients:
        counts.update(client.counts)
    diagnostics = [ms for c in clients for ms in c.diagnostics_ms]
    ghost = [ms for c in clients for ms in c.ghost_ms]
    paused = [ms for c in clients for ms in c.pause_ms]
    return {
        "unanswered": counts["unanswered"],
        "request_errors": counts["request_errors"],
        "diagnostics_missing": sum(c.diagnostics_pending() for c in clients),
        "keystroke_to_diagnostics_ms": {**percentiles(diagnostics), "n": len(diagnostics)},
        "keystroke_to_ghost_text_ms": {**percentiles(ghost), "n": len(ghost)},
        "ghost_text_after_pause_ms": {
            **percentiles(paused),
            "n": len(paused),
            "late": counts["late_after_pause"],
        },
        "completions": {
            k: counts[k] for k in ("shown", "empty", "superseded", "expired", "stale_items")
        },
        "pushes": counts["pushes"],
        "stale_pushes": counts["stale_pushes"],
        "foreign_pushes": counts["foreign_pushes"],
        "typing_s": round(seconds, 1),
        "error_samples": [s for c in clients for s in c.error_samples][:3],
    }


def side_by_side(alone: Client, clients: list[Client]) -> dict[str, Any]:
    """Each of the eight's ghost text after a pause (p50) against the lone editor's."""
    reference = percentiles(alone.pause_ms)["p50"]
    each = [percentiles(c.pause_ms)["p50"] for c in clients]
    ratios = [round(p50 / reference, 2) if p50 is not None and reference else None for p50 in each]
    known = [r for r in ratios if r is not None]
    return {
        "alone_p50_ms": reference,
        "p50_ms_by_client": each,
        "ratio_by_client": ratios,
        "ratio_max": max(known) if len(known) == len(ratios) else None,
    }


def engine_time() -> dict[str, dict[str, float]]:
    """The engine's time so far by kind of call (warm, complete, rewrite)."""
    spent: dict[str, dict[str, float]] = stats()["hub"]["engine"]["engine_stats"]["time_by_kind"]
    return spent


def spent_between(
    before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    """What the engine spent between two engine_time() readings."""
    return {
        kind: {
            key: round(value - before.get(kind, {}).get(key, 0), 3) for key, value in now.items()
        }
        for kind, now in after.items()
    }


def cpu_spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds each process (and the machine's cores together) spent between two
    readings: with the engine's seconds, whether its thread computed or waited for a core."""
    return {name: round(after[name] - before[name], 1) for name in after}


def run(args: argparse.Namespace) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="sttc-", dir="/tmp"))  # short: a socket path
    files = make_files(args.clients, args.shared_files, args.lines)
    copies, copy_names = alone_files(files, args.alone_client)
    root = project(base, {name: text for name, (text, _) in {**files, **copies}.items()})
    try:
        started = start(base, "llama.cpp", args.threads)
        if wait_ready(None, READY_DEADLINE_S) is None:
            raise RuntimeError("the model did not load")
        clients = connect(started["lsp_socket"], root, files, args)
        alone = connect_alone(started["lsp_socket"], root, clients[args.alone_client], copy_names)
        # the lone editor first, the others connected and idle: then all eight type
        warm_up([alone, *clients])
        pids = {"daemon": started["pid"], "worker": engine()["worker"]["pid"]}
        before, cpu_before = engine_time(), cpu_reading(pids)
        alone_seconds = type_all([alone])
        after_alone, cpu_alone = engine_time(), cpu_reading(pids)
        seconds = type_all(clients)
        after_eight, cpu_eight = engine_time(), cpu_reading(pids)
        settle([alone, *clients])
        commit(clients[0])
        wrong = check([alone], root, copies) + check(clients, root, files)
        state = status()
        return {
            "clients": args.clients,
            "keystrokes_per_client": args.keystrokes,
            "keystrokes": sum(c.typed for c in clients),
            "files": len(files),
            "shared_files": args.shared_files,
            "clients_per_shared_file": args.clients // max(1, args.shared_files),
            **{key: wrong[key] for key in ("lines_wrong", "clients_wrong", "buffers_diverged")},
            **figures(clients, seconds),
            "engine_time": spent_between(after_alone, after_eight),
            "cpu_seconds": cpu_spent(cpu_alone, cpu_eight),
            "alone": {
                "keystrokes": alone.typed,
                **figures([alone], alone_seconds),
                "engine_time": spent_between(before, after_alone),
                "cpu_seconds": cpu_spent(cpu_before, cpu_alone),
            },
            "ghost_text_after_pause_vs_alone": {
                **side_by_side(alone, clients),
                "max_ratio": args.max_ratio,
            },
            "daemon_pid_unchanged": state["pid"] == started["pid"],
            "worker_restarts": state["engine"]["worker"]["restarts"],
        }
    finally:
        stop()
        shutil.rmtree(base, ignore_errors=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--keystrokes", type=int, default=1000, help="per client")
    parser.add_argument(
        "--shared-files", type=int, default=2, help="files the clients share, besides their own"
    )
    parser.add_argument("--lines", type=int, default=6, help="lines each client owns per file")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    parser.add_argument(
        "--alone-client", type=int, default=0, help="whose trace the lone editor types"
    )
    parser.add_argument(
        "--max-ratio",
        type=float,
        default=MAX_GHOST_RATIO,
        help="ghost text after a pause, each client's p50 over the lone editor's: at most",
    )


def failures(result: dict[str, Any]) -> list[str]:
    """The must-be-0 figures that are not 0; a daemon or worker that restarted; a
    client whose ghost text took more than --max-ratio times the lone editor's."""
    zeros = (
        "lines_wrong",
        "clients_wrong",
        "buffers_diverged",
        "unanswered",
        "request_errors",
        "diagnostics_missing",
        "foreign_pushes",
        "worker_restarts",
    )
    failed = [key for key in zeros if result[key]]
    failed += [f"alone.{key}" for key in zeros[3:7] if result["alone"][key]]
    ratio = result["ghost_text_after_pause_vs_alone"]
    if ratio["ratio_max"] is None or ratio["ratio_max"] > ratio["max_ratio"]:
        failed.append("ghost_text_after_pause_vs_alone")
    return failed if result["daemon_pid_unchanged"] else [*failed, "daemon_pid_unchanged"]
