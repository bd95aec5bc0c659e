"""Torture: SIGKILL and SIGSEGV the engine worker of a real daemon, again and again,
during generation (an editor's inline completion in flight) and during the model load
that follows a crash, with one editor session connected over the daemon's LSP socket
throughout and the model holding the lock over a growing set of shadow edits.

After each fault: the request in flight is answered (an error or items, never a
hang), the session still answers, the worker is back (ready) and the daemon is the same
process. At the end every acknowledged shadow edit is still pending. The figures:

    {"trials": 100, "sessions_survived": 100, "inflight_failed_cleanly": 48, "hangs": 0,
     "back_to_ready_max_s": 2.1, "back_to_ready_median_s": 1.2, "shadow_edits_lost": 0, ...}

It fails when a must-be-0 figure is not 0 or a session, a request or the daemon was lost.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from torture_daemon import CONTROL_TIMEOUT_S, Editor, engine, project, start, stop, wait_ready

ANSWER_DEADLINE_S = 60.0  # a request in flight must be answered within this: else a hang
READY_DEADLINE_S = 300.0  # from the last kill to the worker serving again
SIGNALS = (signal.SIGKILL, signal.SIGSEGV)
FAULT_KINDS = ("generation_", "load_SIG")  # the counts named PHASE_SIGNAL
SOURCE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return "
EDIT_LINE = re.compile(r"^\+# edit (\d+)$", re.MULTILINE)


def wait_loading(old_pid: int, deadline_s: float) -> int | None:
    """The pid of the worker started after `old_pid` died, while it still loads."""
    started = time.monotonic()
    while time.monotonic() - started < deadline_s:
        status = engine()
        pid = status["worker"]["pid"]
        if pid not in (None, old_pid):
            return int(pid) if status["state"] == "loading" else None
        time.sleep(0.005)
    return None


def kill(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # it died already: no fault to add
        os.kill(pid, sig)


class Trials:
    def __init__(self, editor: Editor, uri: str, rng: random.Random) -> None:
        self.editor, self.uri, self.rng = editor, uri, rng
        self.counts: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.back_s: list[float] = []
        self.acked: set[int] = set()
        self.lines = SOURCE.count("\n")  # the cursor's line moves down with each edit

    def shadow_edit(self, number: int) -> None:
        start = {"line": 0, "character": 0}
        change = {"range": {"start": start, "end": start}, "newText": f"# edit {number}\n"}
        reply = self.editor.command("shadowtab.shadow.applyEdit", {"changes": {self.uri: [change]}})
        if reply is not None and "result" in reply:
            self.acked.add(number)
            self.lines += 1

    def run(self, number: int) -> None:
        self.shadow_edit(number)
        phase = "generation" if self.rng.random() < 0.5 else "load"
        sig = self.rng.choice(SIGNALS)
        self.counts[f"{phase}_{sig.name}"] += 1
        pid = int(engine()["worker"]["pid"])
        last_pid, killed_at = self.during_generation(pid, sig)
        if phase == "load":
            last_pid, killed_at = self.during_load(last_pid, sig, killed_at)
        ready_at = wait_ready(last_pid, READY_DEADLINE_S)
        if ready_at is None:
            self.counts["not_back"] += 1
        else:
            self.back_s.append(ready_at - killed_at)
        lock = self.editor.command("shadowtab.lock.status")
        if lock is not None and lock.get("result", {}).get("holder") == "model":
            self.counts["sessions_survived"] += 1

    def during_generation(self, pid: int, sig: signal.Signals) -> tuple[int, float]:
        position = {"line": self.lines, "character": len("    return ")}
        params = {
            "textDocument": {"uri": self.uri},
            "position": position,
            "context": {"triggerKind": 1},
        }
        msg_id = self.editor.request("textDocument/inlineCompletion", params)
        self.editor.poll(self.rng.uniform(0.05, 0.5))
        in_flight = msg_id not in self.editor.replies
        killed_at = time.monotonic()
        kill(pid, sig)
        reply = self.editor.answer(msg_id, ANSWER_DEADLINE_S)
        if reply is None:
            self.counts["hangs"] += 1
        elif in_flight:
            self.counts["inflight"] += 1
            self.counts["inflight_failed_cleanly"] += 1
            if "error" in reply:
                self.errors[str(reply["error"].get("message", ""))[:160]] += 1
        return pid, killed_at

    def during_load(self, old_pid: int, sig: signal.Signals, killed_at: float) -> tuple[int, float]:
        pid = wait_loading(old_pid, READY_DEADLINE_S)
        if pid is None:
            self.counts["load_missed"] += 1  # it loaded before we could look: no fault
            return old_pid, killed_at
        time.sleep(self.rng.uniform(0.0, 0.6))  # anywhere in the ~1 s load
        self.counts["load_kills"] += 1
        killed_at = time.monotonic()
        kill(pid, sig)
        return pid, killed_at


def lost_edits(editor: Editor, acked: set[int]) -> int:
    reply = editor.command("shadowtab.shadow.diff")
    diff = str((reply or {}).get("result", {}).get("diff", ""))
    found = {int(n) for n in EDIT_LINE.findall(diff)}
    return len(acked - found)


def run(args: argparse.Namespace) -> dict[str, Any]:
    trials, seed, threads = args.trials, args.seed, args.threads
    base = Path(tempfile.mkdtemp(prefix="sttw-", dir="/tmp"))  # short: a socket path
    root = project(base, {"calc.py": SOURCE})
    path = root / "calc.py"
    try:
        status = start(base, "llama.cpp", threads)
        if wait_ready(None, READY_DEADLINE_S) is None:
            raise RuntimeError("the model did not load")
        editor = Editor(status["lsp_socket"])
        editor.initialize(root)
        uri = path.as_uri()
        editor.open(uri, SOURCE)
        editor.command("shadowtab.lock.release")  # the model holds it: edits stay shadow
        runner = Trials(editor, uri, random.Random(seed))
        for number in range(trials):
            runner.run(number)
            if (number + 1) % 5 == 0:  # progress on stderr: a full run takes minutes
                back = [round(max(runner.back_s, default=0.0), 1), len(runner.acked)]
                print(
                    f"{number + 1} trials: {dict(runner.counts)} max back, acked: {back}",
                    file=sys.stderr,
                    flush=True,
                )
        return summary(runner, trials, status["pid"], lost_edits(editor, runner.acked), path)
    finally:
        stop()
        shutil.rmtree(base, ignore_errors=True)


def summary(runner: Trials, trials: int, daemon_pid: int, lost: int, path: Path) -> dict[str, Any]:
    from shadowtab.daemon.client import request

    status = request("status", timeout=CONTROL_TIMEOUT_S)
    counts = runner.counts
    return {
        "trials": trials,
        "sessions_survived": counts["sessions_survived"],
        "inflight": counts["inflight"],
        "inflight_failed_cleanly": counts["inflight_failed_cleanly"],
        "hangs": counts["hangs"] + counts["not_back"],
        "back_to_ready_max_s": round(max(runner.back_s, default=0.0), 3),
        "back_to_ready_median_s": round(statistics.median(runner.back_s or [0.0]), 3),
        "shadow_edits_acked": len(runner.acked),
        "shadow_edits_lost": lost,
        "disk_untouched": path.read_text() == SOURCE,  # the model held the lock
        "daemon_pid_unchanged": status["pid"] == daemon_pid,
        "worker_restarts": status["engine"]["worker"]["restarts"],
        "load_kills": counts["load_kills"],
        "faults": {k: v for k, v in sorted(counts.items()) if k.startswith(FAULT_KINDS)},
        "inflight_errors": dict(runner.errors.most_common(3)),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")


def failures(result: dict[str, Any]) -> list[str]:
    """What was lost: a request hung, a shadow edit, a session, a request's clean end,
    the daemon, the user's file untouched."""
    trials = result["trials"]
    checks = {
        "hangs": result["hangs"] == 0,
        "shadow_edits_lost": result["shadow_edits_lost"] == 0,
        "sessions_survived": result["sessions_survived"] == trials,
        "inflight_failed_cleanly": result["inflight_failed_cleanly"] == result["inflight"],
        "daemon_pid_unchanged": result["daemon_pid_unchanged"],
        "disk_untouched": result["disk_untouched"],
    }
    return [name for name, ok in checks.items() if not ok]
