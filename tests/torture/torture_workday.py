"""Soak with the traffic of a working day (issue 44, Build 3): two editors type into a
real daemon for N minutes (30 at full size) with ghost text on, an agent writes
through the shadow every --agent-every-s and the save lock moves every --lock-every-s.

- The editors (torture_clients.Client over the daemon's LSP socket): each types into a
  file of its own and into one both share (typing_trace.py's held-back-like lines),
  going from one file to the other at pauses; a keystroke every 100-300 ms within a
  burst, pauses between bursts and now and then a long one. After every keystroke an
  inlineCompletion request (the previous one cancelled). Ghost text shown after a pause
  is accepted (--accept-p: its text inserted as the editor would, didChange, and the
  `shadowtab.nextEdit.accepted` command) or rejected (`shadowtab/suggestionRejected`).
  An accepted text is undone before the next keystroke (Ctrl-Z), so the trace's
  positions still hold and a line does not grow for 30 minutes.
- The agent: `shadowtab shadow write` (a function more in agent_steps.py) and `shadowtab
  shadow apply` (a unified diff of agent_util.py) in turn, as child processes over the
  control socket, as a coding agent runs them.
- The lock: `shadowtab lock take --commit` (the user reviews: the pending edits reach the
  disk, where the agent's files must be what it wrote), then, --lock-hold-s later,
  `shadowtab lock release` (the agent goes on). The model holds it between.

Sampled every --sample-s (from /proc, never while a control request of ours is open):
RSS, open files and threads of the daemon and its engine worker, then the daemon's
threads by kind (its `status`: its own, and its thread pools), ghost text's latency
after a pause (p50/p90 in the minute: a keystroke the person paused after to the
answer; a pause that ended first counts its length), the daemon log's size (with its
rotated files) and the load average; printed as a table on stderr as it goes, and
at the end with the figures as one JSON line.

At the end the traffic settles and the shadow is committed: every file must equal what
its editors typed (torture_clients.check) and what the agent wrote. Fails when a
must-be-0 figure is not 0 (wrong lines, diverged buffers, unanswered or failed requests,
agent or lock commands that failed, agent files wrong after a commit, tracebacks in
the log, a restart), when an RSS at the end grew more than --max-rss-growth-pct over
its figure at --reference-s, when open files, the daemon's own threads or pools, or
the worker's threads at the end are more than their median over the samples from
--reference-s to the middle (the worker's threads: plus what its pools may still start;
the daemon's pools start workers on demand up to their sizes, so those are not counted),
or when ghost text's p90 over the last --reference-s is more than
--max-latency-ratio times its p90 over the first.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from torture_clients import (
    CAPABILITIES,
    Client,
    Files,
    check,
    client_keys,
    figures,
    make_files,
    settle,
    uri_to_path,
    warm_up,
)
from torture_daemon import (
    LEAK_CHECKED,
    daemon_thread_kinds,
    leak_slack,
    process_figures,
    project,
    start,
    stats,
    status,
    stop,
    wait_ready,
)
from typing_trace import THINK_S, Keystroke, offset_of, units

READY_DEADLINE_S = 600.0
QUIET_S = 3.0  # after the typing: lints, cancelled generations and closed sessions end
KEY_GAP_S = (0.1, 0.3)  # between the keys of a burst (the cadence)
# A control connection of ours is closed by the daemon a moment after the reply: no
# sample of its open files this soon after one
CONTROL_SETTLE_S = 1.0
CLI_TIMEOUT_S = 120.0  # a commit or an agent's write on a loaded machine
ACCEPTED_COMMAND = "shadowtab.nextEdit.accepted"  # lsp/prediction_handlers.py
REJECTED_NOTIFICATION = "shadowtab/suggestionRejected"
AGENT_STEPS, AGENT_UTIL = "agent_steps.py", "agent_util.py"
MUST_BE_ZERO = (
    "lines_wrong",
    "clients_wrong",
    "buffers_diverged",
    "unanswered",
    "request_errors",
    "feedback_errors",
    "agent_errors",
    "agent_files_wrong",
    "lock_errors",
    "commit_conflicts",
    "log_tracebacks",
    "worker_restarts",
)


class DayClient(Client):
    """An editor that also accepts or rejects the ghost text it is shown after a pause."""

    def __init__(self, *args: Any, accept_p: float, seed: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.accept_p = accept_p
        self.rng = random.Random(seed)
        self.last_key: Keystroke | None = None
        self.undo: tuple[str, dict[str, Any]] | None = None  # the accepted text taken out
        self.notes: set[int] = set()  # accepted commands: their replies are dropped
        self.accepted = self.rejected = 0

    def keystroke(self, key: Keystroke) -> None:
        self.take_back()
        self.last_key = key
        super().keystroke(key)

    def type_trace(self, start_at: float, until: float = float("inf")) -> None:
        super().type_trace(start_at, until)
        self.take_back()  # a ghost text accepted while the last answers came in

    def on_reply(self, message: dict[str, Any]) -> None:
        msg_id = message.get("id", -1)
        if msg_id in self.notes:
            self.notes.discard(msg_id)
            self.counts["feedback_errors"] += "error" in message
            return
        after_pause = msg_id in self.pauses
        shown = self.counts["shown"]
        super().on_reply(message)
        if after_pause and self.counts["shown"] > shown:  # the person sees it: decides
            self.react(message["result"])

    def react(self, result: Any) -> None:
        items = result.get("items", []) if isinstance(result, dict) else result
        key = self.last_key
        assert key is not None  # an answer follows a keystroke
        item = items[0]
        text, rng = item.get("insertText"), item.get("range")
        # one line, on the line typed: the other editor's lines never move
        fits = isinstance(text, str) and "\n" not in text and rng is not None
        fits = fits and rng["start"]["line"] == rng["end"]["line"] == key.line
        if fits and self.rng.random() < self.accept_p:
            self.accept(self.uri_of(key), text, rng)
        else:
            self.notify(REJECTED_NOTIFICATION, {"uri": self.uri_of(key)})
            self.rejected += 1

    def accept(self, uri: str, text: str, rng: dict[str, Any]) -> None:
        """As the editor does: the item's range replaced by its text; then the command
        the daemon counts acceptance by."""
        buffer = self.buffers[uri]
        start = offset_of(buffer.text, rng["start"])
        replaced = buffer.text[start : offset_of(buffer.text, rng["end"])]
        self.change(uri, {"range": rng, "text": text})
        inserted_end = {**rng["start"], "character": rng["start"]["character"] + units(text)}
        self.undo = (uri, {"range": {"start": rng["start"], "end": inserted_end}, "text": replaced})
        arguments = [{"uri": uri}]
        params = {"command": ACCEPTED_COMMAND, "arguments": arguments}
        self.notes.add(self.request("workspace/executeCommand", params))
        self.accepted += 1

    def take_back(self) -> None:
        if self.undo is not None:
            uri, change = self.undo
            self.undo = None
            self.change(uri, change)

    def change(self, uri: str, change: dict[str, Any]) -> None:
        buffer = self.buffers[uri]
        buffer.apply(change)
        document = {"uri": uri, "version": buffer.version}
        self.notify(
            "textDocument/didChange", {"textDocument": document, "contentChanges": [change]}
        )


def cli(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`shadowtab ARGS --root ROOT --json` in a child process, as an agent or the user
    runs it (the environment's SHADOWTAB_* dirs are the soak's daemon's)."""
    return subprocess.run(
        [sys.executable, "-m", "shadowtab.daemon.cli", *args, "--root", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        cwd=root,
        input=stdin,
    )


@dataclass
class Agent:
    """Writes through the shadow: a whole file, then a patch, in turn."""

    root: Path
    texts: dict[str, str] = field(default_factory=dict)  # what it wrote, by file
    actions: int = 0
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.texts = {AGENT_STEPS: '"""Steps an agent added."""\n', AGENT_UTIL: "VALUE = 0\n"}

    def act(self) -> None:
        self.actions += 1
        if self.actions % 2:
            self.write()
        else:
            self.apply()

    def write(self) -> None:
        text = self.texts[AGENT_STEPS] + f"\n\ndef step_{self.actions}(x):\n    return x + 1\n"
        self.run(cli(self.root, "shadow", "write", AGENT_STEPS, stdin=text), AGENT_STEPS, text)

    def apply(self) -> None:
        old = self.texts[AGENT_UTIL]
        new = f"VALUE = {self.actions}\n"
        patch = "".join(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                f"a/{AGENT_UTIL}",
                f"b/{AGENT_UTIL}",
            )
        )
        self.run(cli(self.root, "shadow", "apply", "-", stdin=patch), AGENT_UTIL, new)

    def run(self, done: subprocess.CompletedProcess[str], name: str, text: str) -> None:
        if done.returncode != 0:
            self.errors.append(f"{name}: {done.stderr.strip()[:200]}")
            return
        self.texts[name] = text

    def files_wrong(self) -> int:
        """The agent's files on disk that are not what it wrote (after a commit)."""
        return sum((self.root / name).read_text() != text for name, text in self.texts.items())


@dataclass
class Lock:
    """The user takes the lock with --commit, gives it back to the model later."""

    root: Path
    agent: Agent
    errors: list[str] = field(default_factory=list)
    conflicts: int = 0
    agent_files_wrong: int = 0
    moves: int = 0

    def release(self) -> None:
        self.run("release")

    def take_commit(self) -> None:
        reply = self.run("take", "--commit")
        if reply is not None:
            self.conflicts += len(reply.get("conflicts") or [])
            self.agent_files_wrong += self.agent.files_wrong()

    def run(self, *args: str) -> dict[str, Any] | None:
        self.moves += 1
        done = cli(self.root, "lock", *args)
        if done.returncode != 0:
            self.errors.append(f"lock {' '.join(args)}: {done.stderr.strip()[:200]}")
            return None
        reply: dict[str, Any] = json.loads(done.stdout)
        return reply


def retimed(keys: list[Keystroke], seed: int) -> list[Keystroke]:
    """The issue's cadence within a burst (a key every 100-300 ms); the pauses kept."""
    rng = random.Random(seed)
    return [
        key
        if key.burst_end or key.pause_s >= THINK_S[0]
        else replace(key, pause_s=rng.uniform(*KEY_GAP_S))
        for key in keys
    ]


def connect(lsp_path: str, root: Path, files: Files, args: argparse.Namespace) -> list[DayClient]:
    """Two editors (or --editors), each on its own file and the shared one."""
    clients = []
    count = int(args.seconds / 0.1) + 100  # more than the run can type
    for number in range(args.editors):
        names = [f"own_{number}.py", "shared_0.py"]
        owned = [((root / name).as_uri(), files[name][1][number]) for name in names]
        keys = retimed(client_keys(number, owned, count, args.seed), args.seed + number)
        texts = {(root / name).as_uri(): files[name][0] for name in names}
        (uri, text), *more = texts.items()
        client = DayClient(
            number,
            lsp_path,
            uri,
            text,
            keys,
            dict(more),
            accept_p=args.accept_p,
            seed=args.seed * 7 + number,
        )
        client.initialize(root, CAPABILITIES)
        client.open_all()
        clients.append(client)
    return clients


@dataclass
class Soak:
    """The run's clock: typists in threads; samples, the agent and the lock in turn on
    this one (so a sample never sees a control connection of ours open)."""

    clients: list[DayClient]
    agent: Agent
    lock: Lock
    processes: dict[str, int]
    log_file: Path
    args: argparse.Namespace
    rows: list[dict[str, Any]] = field(default_factory=list)
    marks: list[list[int]] = field(default_factory=list)  # pause_ms lengths at each row
    errors: list[BaseException] = field(default_factory=list)
    last_control: float = 0.0
    start_at: float = 0.0
    # --trace-memory: the daemon's allocations by line at the reference sample and the end
    allocations: dict[str, dict[str, float]] = field(default_factory=dict)

    def run(self) -> None:
        args = self.args
        self.start_at = time.monotonic() + 0.5
        until = self.start_at + args.seconds
        threads = [
            threading.Thread(target=self.type, args=(c, until), daemon=True) for c in self.clients
        ]
        for thread in threads:
            thread.start()
        due = {
            "sample": args.sample_s,
            "agent": args.agent_every_s / 2,
            "take": args.lock_every_s - args.lock_hold_s,
            "release": math.inf,
        }
        self.marks.append([0] * len(self.clients))
        while any(t.is_alive() for t in threads) or due["sample"] <= args.seconds:
            self.step(due)
            time.sleep(0.05)
        if self.errors:
            raise RuntimeError(f"an editor failed: {self.errors[0]!r}") from self.errors[0]

    def type(self, client: DayClient, until: float) -> None:
        try:
            client.type_trace(self.start_at, until)
        except BaseException as exc:  # a lost session: reported, never a hang
            self.errors.append(exc)

    def step(self, due: dict[str, float]) -> None:
        """The first due action, if any: the agent waits while the user holds the lock."""
        args, now = self.args, time.monotonic() - self.start_at
        if now >= due["sample"] and time.monotonic() - self.last_control >= CONTROL_SETTLE_S:
            self.sample(round(due["sample"]))
            due["sample"] += args.sample_s
        elif now >= due["take"]:
            self.control(self.lock.take_commit)
            due["take"] += args.lock_every_s
            due["release"] = now + args.lock_hold_s
        elif now >= due["release"]:
            self.control(self.lock.release)
            due["release"] = math.inf
        elif now >= due["agent"] and due["release"] == math.inf and now < args.seconds:
            self.control(self.agent.act)
            due["agent"] += args.agent_every_s

    def control(self, action: Any) -> None:
        action()
        self.last_control = time.monotonic()

    def sample(self, at_s: int | str) -> None:
        latency = windowed(
            [c.pause_ms[m:] for c, m in zip(self.clients, self.marks[-1], strict=True)]
        )
        self.marks.append([len(c.pause_ms) for c in self.clients])
        row = {"t_s": at_s, **self.figures_now(), **latency}
        if self.args.trace_memory and (at_s == "end" or at_s == round(self.args.reference_s)):
            # after the figures: a snapshot's own memory stays in the daemon's RSS, and
            # the request is one more open socket for a moment
            self.allocations[str(at_s)] = allocations_now()
        self.rows.append(row)
        print(table_line(row), file=sys.stderr, flush=True)

    def figures_now(self) -> dict[str, Any]:
        row: dict[str, Any] = {}
        for name, pid in self.processes.items():
            for key, value in process_figures(pid).items():
                row[f"{name}_{key}"] = value
        # after /proc's figures: the request is one more open socket in the daemon
        row.update({f"daemon_{kind}": n for kind, n in daemon_thread_kinds().items()})
        self.last_control = time.monotonic()
        row["log_kb"] = round(log_bytes(self.log_file) / 1024, 1)
        row["keys"] = sum(c.typed for c in self.clients)
        row["load1"] = round(os.getloadavg()[0], 2)
        return row


def p50_p90(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50_ms": None, "p90_ms": None}
    ordered = sorted(values)
    rank = lambda q: ordered[max(0, math.ceil(q * len(ordered)) - 1)]  # noqa: E731
    return {"p50_ms": round(rank(0.5), 1), "p90_ms": round(rank(0.9), 1)}


def windowed(parts: list[list[float]]) -> dict[str, Any]:
    values = [ms for part in parts for ms in part]
    return {**p50_p90(values), "n": len(values)}


def log_bytes(log_file: Path) -> int:
    """The daemon's log with its rotated files (daemon.log.1, ...)."""
    return sum(p.stat().st_size for p in log_file.parent.glob(log_file.name + "*") if p.is_file())


def log_tracebacks(log_file: Path) -> int:
    files = log_file.parent.glob(log_file.name + "*")
    return sum(p.read_text(errors="replace").count("Traceback") for p in files if p.is_file())


COLUMNS = (
    ("t_s", "t(s)", 6),
    ("daemon_rss_mb", "d.rss", 7),
    ("worker_rss_mb", "w.rss", 7),
    ("daemon_fds", "d.fd", 5),
    ("worker_fds", "w.fd", 5),
    ("daemon_threads", "d.thr", 6),
    ("worker_threads", "w.thr", 6),
    ("daemon_own_threads", "d.own", 6),
    ("daemon_pools", "d.pls", 6),
    ("p50_ms", "p50", 7),
    ("p90_ms", "p90", 7),
    ("n", "n", 5),
    ("log_kb", "log.kb", 7),
    ("keys", "keys", 7),
    ("load1", "load", 6),
)


def table_line(row: dict[str, Any] | None = None) -> str:
    """A row of the table (its header without one)."""
    if row is None:
        return " ".join(f"{title:>{width}}" for _, title, width in COLUMNS)
    return " ".join(f"{row.get(key, '-')!s:>{width}}" for key, _, width in COLUMNS)


def flatness(
    rows: list[dict[str, Any]],
    marks: list[list[int]],
    clients: list[DayClient],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """RSS at the end against --reference-s; open files and threads at the end against
    their median from --reference-s to the middle; ghost text p90, first window vs last."""
    timed = [r for r in rows if isinstance(r["t_s"], int)]
    reference = next((r for r in timed if r["t_s"] >= args.reference_s), timed[0])
    middle = [r for r in timed if args.reference_s <= r["t_s"] <= args.seconds / 2] or [reference]
    end = rows[-1]
    result: dict[str, Any] = {}
    for name in ("daemon", "worker"):
        before, after = reference[f"{name}_rss_mb"], end[f"{name}_rss_mb"]
        result[f"{name}_rss_growth_pct"] = round(100 * (after - before) / before, 2)
        for kind in LEAK_CHECKED[name]:
            # the median: a sample that caught the agent's lint processes would hide a leak
            result[f"{name}_{kind}_base"] = statistics.median_low(
                r[f"{name}_{kind}"] for r in middle
            )
            result[f"{name}_{kind}_end"] = end[f"{name}_{kind}"]
    result["latency_windows"] = latency_windows(timed, marks, clients, args)
    return result


def latency_windows(
    timed: list[dict[str, Any]],
    marks: list[list[int]],
    clients: list[DayClient],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Ghost text after a pause over the first --reference-s and the last."""
    at = [0, *(r["t_s"] for r in timed)]  # marks[i] is the pause_ms length at at[i]
    first_end = next(i for i, t in enumerate(at) if t >= args.reference_s or i == len(at) - 1)
    last_start = max(i for i, t in enumerate(at) if t <= args.seconds - args.reference_s)
    first = windowed([c.pause_ms[:m] for c, m in zip(clients, marks[first_end], strict=True)])
    last = windowed([c.pause_ms[m:] for c, m in zip(clients, marks[last_start], strict=True)])
    ratio = None
    if first["p90_ms"] and last["p90_ms"] is not None:
        ratio = round(last["p90_ms"] / first["p90_ms"], 2)
    return {"first": first, "last": last, "p90_ratio": ratio}


def feedback_recorded(state: dict[str, Any]) -> Counter[str]:
    """Accepted and rejected as the daemon counted them (`daemon status`'s next_edit)."""
    counts: Counter[str] = Counter()
    for outcomes in ((state.get("hub") or {}).get("next_edit") or {}).values():
        counts.update({k: outcomes.get(k, 0) for k in ("accepted", "rejected")})
    return counts


def run(args: argparse.Namespace) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="stwd-", dir="/tmp"))  # short: a socket path
    files = make_files(args.editors, 1, args.lines)
    root = project(base, {name: text for name, (text, _) in files.items()})
    agent = Agent(root)
    for name, text in agent.texts.items():
        (root / name).write_text(text)
    try:
        if args.trace_memory:
            os.environ["PYTHONTRACEMALLOC"] = "1"  # the daemon's (and its worker's) start
        started = start(base, "llama.cpp", args.threads)
        os.environ.pop("PYTHONTRACEMALLOC", None)
        if wait_ready(None, READY_DEADLINE_S) is None:
            raise RuntimeError("the model did not load")
        state = status()
        processes = {"daemon": int(state["pid"]), "worker": int(state["engine"]["worker"]["pid"])}
        clients = connect(started["lsp_socket"], root, files, args)
        warm_up(list[Client](clients))
        lock = Lock(root, agent)
        lock.release()  # the agent writes while the model holds the lock
        log_file = Path(started["log_file"])
        print(table_line(), file=sys.stderr, flush=True)
        soak = Soak(clients, agent, lock, processes, log_file, args)
        soak.run()
        settle(list[Client](clients))
        time.sleep(QUIET_S)
        soak.sample("end")
        return finish(soak, root, files, started, args)
    finally:
        stop()
        shutil.rmtree(base, ignore_errors=True)


def finish(
    soak: Soak, root: Path, files: Files, started: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    """The final commit and every figure."""
    soak.lock.take_commit()
    for client in soak.clients:  # the run ends before a trace does: its keys typed
        client.keys = client.keys[: client.typed]
    wrong = check(list(soak.clients), root, files)
    state = status()
    sent = {
        "accepted": sum(c.accepted for c in soak.clients),
        "rejected": sum(c.rejected for c in soak.clients),
    }
    recorded = feedback_recorded(state)
    typed = figures(list(soak.clients), args.seconds)
    return {
        "seconds": args.seconds,
        "editors": args.editors,
        "keystrokes": sum(c.typed for c in soak.clients),
        **{key: wrong[key] for key in ("lines_wrong", "clients_wrong", "buffers_diverged")},
        "unanswered": typed["unanswered"],
        "request_errors": typed["request_errors"],
        "error_samples": typed["error_samples"],
        "completions": typed["completions"],
        "ghost_text_after_pause_ms": typed["ghost_text_after_pause_ms"],
        "keystroke_to_ghost_text_ms": typed["keystroke_to_ghost_text_ms"],
        "ghost_text": {"sent": sent, "recorded": dict(recorded)},
        "feedback_errors": sum(c.counts["feedback_errors"] for c in soak.clients)
        + sum(max(0, sent[k] - recorded[k]) for k in sent),
        "agent_actions": soak.agent.actions,
        "agent_errors": len(soak.agent.errors),
        "agent_files_wrong": soak.lock.agent_files_wrong,
        "lock_moves": soak.lock.moves,
        "lock_errors": len(soak.lock.errors),
        "commit_conflicts": soak.lock.conflicts,
        "control_error_samples": (soak.agent.errors + soak.lock.errors)[:3],
        "diverged_samples": diverged(soak.clients)[:3],
        "log_tracebacks": log_tracebacks(soak.log_file),
        **flatness(soak.rows, soak.marks, soak.clients, args),
        "limits": {
            "rss_growth_pct": args.max_rss_growth_pct,
            "latency_p90_ratio": args.max_latency_ratio,
        },
        "daemon_pid_unchanged": state["pid"] == started["pid"] == soak.processes["daemon"],
        "worker_pid_unchanged": state["engine"]["worker"]["pid"] == soak.processes["worker"],
        "worker_restarts": state["engine"]["worker"]["restarts"],
        "name_check": state["hub"].get("name_check"),  # parso's modules held among them
        "rows": soak.rows,
        **({"allocations_grown": grown(soak.allocations)} if args.trace_memory else {}),
    }


def allocations_now() -> dict[str, float]:
    """The daemon's memory held by source line (KB), when it traces allocations."""
    return {site["where"]: site["kb"] for site in stats().get("allocations") or []}


def grown(allocations: dict[str, dict[str, float]], top: int = 15) -> list[tuple[str, float]]:
    """The lines whose memory grew most from the reference sample to the end (KB)."""
    before = next((held for at, held in allocations.items() if at != "end"), {})
    after = allocations.get("end", {})
    growth = {where: round(kb - before.get(where, 0.0), 1) for where, kb in after.items()}
    return sorted(growth.items(), key=lambda item: -item[1])[:top]


def diverged(clients: list[DayClient]) -> list[str]:
    """Each editor buffer that differs from its committed file: where, and both lines."""
    found = []
    for client in clients:
        for uri, buffer in client.buffers.items():
            path = uri_to_path(uri)
            pairs = zip(buffer.text.split("\n"), path.read_text().split("\n"), strict=False)
            differ = [(n, mine, disk) for n, (mine, disk) in enumerate(pairs) if mine != disk]
            if differ or buffer.text != path.read_text():
                where = f"{path.name}:{differ[0][0]}: {differ[0][1:]!r}" if differ else path.name
                found.append(f"editor {client.number} {where}")
    return found


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=1800.0, help="of typing")
    parser.add_argument("--editors", type=int, default=2)
    parser.add_argument("--agent-every-s", type=float, default=60.0)
    parser.add_argument("--lock-every-s", type=float, default=300.0)
    parser.add_argument("--lock-hold-s", type=float, default=10.0, help="the user holds it")
    parser.add_argument("--sample-s", type=float, default=60.0)
    parser.add_argument(
        "--reference-s", type=float, default=300.0, help="RSS's reference; latency's windows"
    )
    parser.add_argument("--accept-p", type=float, default=0.3, help="ghost text accepted")
    parser.add_argument("--max-rss-growth-pct", type=float, default=10.0)
    parser.add_argument("--max-latency-ratio", type=float, default=1.5)
    parser.add_argument("--lines", type=int, default=8, help="lines each editor owns per file")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    parser.add_argument(
        "--trace-memory",
        action="store_true",
        help="the daemon traces its allocations (slower): the lines whose memory grew most "
        "from the reference sample to the end",
    )


def failures(result: dict[str, Any]) -> list[str]:
    """The must-be-0 figures, a restart, RSS growth, open files and threads that grew,
    ghost text's p90 that grew (the docstring); nothing accepted or rejected, no agent
    action or no lock move."""
    failed = [key for key in MUST_BE_ZERO if result[key]]
    failed += [k for k in ("daemon_pid_unchanged", "worker_pid_unchanged") if not result[k]]
    limits = result["limits"]
    for name in ("daemon", "worker"):
        if result[f"{name}_rss_growth_pct"] > limits["rss_growth_pct"]:
            failed.append(f"{name}_rss_growth_pct")
        for kind in LEAK_CHECKED[name]:
            if result[f"{name}_{kind}_end"] > result[f"{name}_{kind}_base"] + leak_slack(kind):
                failed.append(f"{name}_{kind}_end")
    # a run that never decided on a ghost text, wrote as the agent or moved the lock
    # did not test what it says
    decided = sum(result["ghost_text"]["sent"].values())
    exercised = {
        "ghost_text_decided": decided,
        "agent_actions": result["agent_actions"],
        "lock_moves": result["lock_moves"],
    }
    failed += [name for name, count in exercised.items() if not count]
    ratio = result["latency_windows"]["p90_ratio"]
    if ratio is None or ratio > limits["latency_p90_ratio"]:
        failed.append("latency_windows.p90_ratio")
    return failed
