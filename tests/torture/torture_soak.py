"""Soak: an editor types a trace into a real daemon for N minutes (30 at full size) with
ghost text on: real incremental didChange on the daemon's LSP socket, an
inlineCompletion request after every keystroke (the previous one cancelled), the
packaged model in the engine worker (typing_trace.py, torture_clients.Client).

Measured after a warm-up (the first --warmup-s of typing) and at the end (the traffic
stopped and settled): the RSS, open file descriptors and threads of the daemon and of
its engine worker, and the RSS growth; the daemon's RSS itself (no model in it). LSP
responsiveness: a second session sends a cheap request (executeCommand
shadowtab.lock.status) every --probe-s and times the round trip, before the typing
starts (idle) and while the typist has a completion in flight (the model generating),
side by side. A third session comes and goes (its socket closed without shutdown, as
when an editor is killed), every --warmup-churn-s during the warm-up and every
--churn-s after it. At the end the shadow is committed and
must equal the typist's buffer. The figures:

    {"seconds": 1800, "daemon": {"rss_growth_pct": 0.4, ...}, "worker": {...},
     "lsp_round_trip_ms": {"idle": {...}, "generating": {...}}, "text_ok": true, ...}

It fails when an RSS grew by 5% or more, the daemon or the worker has more open
files at the end than at the start and halfway, the daemon more threads of its own or
more thread pools (its `status` tells them from the pools' workers, which start on
demand), the worker more threads than that plus what its pools may still start, the
text differs or a process restarted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from torture_clients import CAPABILITIES, Client, figures, settle, warm_up
from torture_daemon import (
    LEAK_CHECKED,
    Editor,
    daemon_thread_kinds,
    leak_slack,
    percentiles,
    process_figures,
    project,
    start,
    status,
    stop,
    wait_ready,
)
from typing_trace import source, trace

READY_DEADLINE_S = 600.0
RSS_GROWTH_LIMIT_PCT = 5.0
QUIET_S = 3.0  # after the typing: lints, cancelled generations and closed sessions end
FILE = "soak.py"


class Prober:
    """The second session: times cheap round trips; brings a third session and goes."""

    def __init__(self, lsp_path: str, root: Path, uri: str, text: str) -> None:
        self.lsp_path, self.root, self.uri, self.text = lsp_path, root, uri, text
        self.editor = Editor(lsp_path)
        self.editor.initialize(root)
        self.times: dict[str, list[float]] = {"idle": [], "generating": []}
        self.churned = 0

    def probe(self, kind: str) -> None:
        sent = time.monotonic()
        if self.editor.command("shadowtab.lock.status") is None:
            raise TimeoutError("the daemon did not answer a lock.status")
        self.times[kind].append((time.monotonic() - sent) * 1000)

    def churn(self) -> None:
        """An editor opens the file, asks one thing and vanishes without shutdown."""
        editor = Editor(self.lsp_path)
        editor.initialize(self.root, CAPABILITIES)
        editor.open(self.uri, self.text)
        editor.command("shadowtab.lock.status")
        editor.close()
        self.churned += 1


def pids() -> tuple[int, int]:
    state = status()
    return int(state["pid"]), int(state["engine"]["worker"]["pid"])


def sample(processes: dict[str, int]) -> dict[str, dict[str, float]]:
    """From /proc, then the daemon's threads by kind from its `status` (the request is
    one more open socket: it comes after /proc's figures)."""
    figures_now = {name: process_figures(pid) for name, pid in processes.items()}
    figures_now["daemon"].update(daemon_thread_kinds())
    return figures_now


def soak(
    prober: Prober, typist: Client, processes: dict[str, int], args: argparse.Namespace
) -> dict[str, Any]:
    """Type for --seconds while probing; the samples at warm-up's end and at the end."""
    start_at = time.monotonic() + 0.2
    until = start_at + args.seconds
    thread = threading.Thread(target=typist.type_trace, args=(start_at, until), daemon=True)
    thread.start()
    samples: dict[str, Any] = {"max_rss_mb": {"daemon": 0.0, "worker": 0.0}}
    samples["before"] = sample(processes)
    warm_until = start_at + args.warmup_s
    next_churn = start_at
    first_sample = next_sample = warm_until + 1.0  # once the warm-up's last churn ended
    mid_sample = first_sample + (until - first_sample) / 2
    while thread.is_alive():
        now = time.monotonic()
        if now >= next_sample:
            figures_now = sample(processes)
            samples.setdefault("start", figures_now)
            for name, max_rss in samples["max_rss_mb"].items():
                samples["max_rss_mb"][name] = max(max_rss, figures_now[name]["rss_mb"])
            next_sample = now + 60.0
            if now >= mid_sample and "mid" not in samples:
                samples["mid"] = figures_now
            next_sample = min(next_sample, mid_sample) if "mid" not in samples else next_sample
            progress(typist, figures_now)
        if now >= next_churn and not warm_until <= now < first_sample:
            prober.churn()
            # many sessions during the warm-up: the daemon's RSS rises over the first
            # ~150 sessions (allocator and caches), then stays flat (measured: 503)
            next_churn = now + (args.warmup_churn_s if now < warm_until else args.churn_s)
        if typist.completions:  # a completion in flight: the model is at work
            prober.probe("generating")
        time.sleep(args.probe_s)
    thread.join()
    return samples


def progress(typist: Client, figures_now: dict[str, Any]) -> None:
    line = f"typed {typist.typed}: {json.dumps(figures_now)}"
    print(line, file=sys.stderr, flush=True)


def growth(
    first: dict[str, float], mid: dict[str, float], last: dict[str, float]
) -> dict[str, float]:
    return {
        "rss_mb_start": first["rss_mb"],
        "rss_mb_end": last["rss_mb"],
        "rss_growth_pct": round(100 * (last["rss_mb"] - first["rss_mb"]) / first["rss_mb"], 2),
        **{
            f"{kind}_{at}": point[kind]
            for kind in ("fds", "threads", "own_threads", "pools")
            if kind in first
            for at, point in (("start", first), ("mid", mid), ("end", last))
        },
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="stts-", dir="/tmp"))  # short: a socket path
    text, owned = source("The soak's file.", [0], args.lines)
    root = project(base, {FILE: text})
    uri = (root / FILE).as_uri()
    try:
        started = start(base, "llama.cpp", args.threads)
        if wait_ready(None, READY_DEADLINE_S) is None:
            raise RuntimeError("the model did not load")
        daemon_pid, worker_pid = pids()
        processes = {"daemon": daemon_pid, "worker": worker_pid}
        keys = trace(0, owned[0], int(args.seconds / 0.1) + 100, args.seed)
        typist = Client(0, started["lsp_socket"], uri, text, keys)
        typist.initialize(root, CAPABILITIES)
        typist.open(uri, text)
        prober = Prober(started["lsp_socket"], root, uri, text)
        warm_up([typist])
        for _ in range(args.idle_probes):
            prober.probe("idle")
            time.sleep(args.probe_s)
        samples = soak(prober, typist, processes, args)
        settle([typist])
        time.sleep(QUIET_S)
        samples["end"] = sample(processes)
        taken = typist.command("shadowtab.lock.take", {"mode": "commit"})
        text_ok = taken is not None and (root / FILE).read_text() == typist.buffer.text
        daemon_now, worker_now = pids()
        typed = figures([typist], args.seconds)
        return {
            "seconds": args.seconds,
            "warmup_s": args.warmup_s,
            "keystrokes": typist.typed,
            "completions": typed["completions"],
            "keystroke_to_ghost_text_ms": typed["keystroke_to_ghost_text_ms"],
            "request_errors": typed["request_errors"],
            "unanswered": typed["unanswered"],
            **{
                name: {
                    **growth(
                        samples["start"][name],
                        samples.get("mid", samples["start"])[name],
                        samples["end"][name],
                    ),
                    "rss_mb_max": samples["max_rss_mb"][name],
                }
                for name in ("daemon", "worker")
            },
            "lsp_round_trip_ms": {
                kind: {**percentiles(times), "n": len(times)}
                for kind, times in prober.times.items()
            },
            "daemon_rss_mb_before_warmup": samples["before"]["daemon"]["rss_mb"],
            "churned_sessions": prober.churned,
            "text_ok": text_ok,
            "daemon_pid_unchanged": daemon_now == daemon_pid == started["pid"],
            "worker_pid_unchanged": worker_now == worker_pid,
        }
    finally:
        stop()
        shutil.rmtree(base, ignore_errors=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=1800.0, help="of typing")
    parser.add_argument("--warmup-s", type=float, default=120.0)
    parser.add_argument("--probe-s", type=float, default=0.2, help="between round trips")
    parser.add_argument("--idle-probes", type=int, default=100)
    parser.add_argument("--churn-s", type=float, default=60.0, help="after the warm-up")
    parser.add_argument("--warmup-churn-s", type=float, default=0.5)
    parser.add_argument("--lines", type=int, default=8, help="lines the typist owns")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")


def failures(result: dict[str, Any]) -> list[str]:
    """The leaks (RSS, open files, threads past what the pools may still start) and the
    losses (the text, a process, a request) of the docstring."""
    failed = []
    for name in ("daemon", "worker"):
        figures_of = result[name]
        if figures_of["rss_growth_pct"] >= RSS_GROWTH_LIMIT_PCT:
            failed.append(f"{name}.rss_growth_pct")
        for kind in LEAK_CHECKED[name]:
            before = max(figures_of[f"{kind}_start"], figures_of[f"{kind}_mid"])
            if figures_of[f"{kind}_end"] > before + leak_slack(kind):
                failed.append(f"{name}.{kind}_end")
    checks = ("text_ok", "daemon_pid_unchanged", "worker_pid_unchanged")
    failed += [key for key in checks if not result[key]]
    return failed + [key for key in ("request_errors", "unanswered") if result[key]]
