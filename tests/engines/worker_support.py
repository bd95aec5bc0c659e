"""Helpers of the engine worker tests: small engines (one thread: the test machine has
two cores and other work), waiting for a state with a deadline, running a call in a
thread and timing how it ends."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shadowtab.inference import EngineOptions
from shadowtab.inference.engines.worker import WorkerEngine, WorkerPolicy

OPTIONS = EngineOptions(context_size=1024, kv_cache_mb=16, threads=1)
# The model loads in 1-2 s; niced under a training run on 2 cores it took over 120 s.
LOAD_TIMEOUT_S = 280.0
# Quick restarts; the default deadlines (a starved worker can be silent for seconds).
FAST = WorkerPolicy(restart_delay_s=0.05, max_restart_delay_s=0.2)
# A short silence deadline, for the test of a stopped worker only.
STOP_DEADLINE_S = 8.0


def wait_state(engine: WorkerEngine, wanted: set[str], timeout: float = LOAD_TIMEOUT_S) -> str:
    deadline = time.monotonic() + timeout
    while engine.state not in wanted:
        assert time.monotonic() < deadline, f"state {engine.state!r}, wanted {wanted}"
        time.sleep(0.02)
    return engine.state


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def ready_worker(policy: WorkerPolicy = FAST, options: EngineOptions = OPTIONS) -> WorkerEngine:
    engine = WorkerEngine(options, policy)
    assert wait_state(engine, {"ready", "failed"}) == "ready", engine.error
    return engine


@dataclass
class Outcome:
    """How a call run in a thread ended: its result or exception, and when."""

    result: Any = None
    error: BaseException | None = None
    ended_at: float = 0.0
    done: threading.Event = field(default_factory=threading.Event)


def in_thread(call: Callable[[], Any]) -> Outcome:
    outcome = Outcome()

    def run() -> None:
        try:
            outcome.result = call()
        except BaseException as exc:
            outcome.error = exc
        outcome.ended_at = time.monotonic()
        outcome.done.set()

    threading.Thread(target=run, daemon=True).start()
    return outcome
