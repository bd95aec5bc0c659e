"""Keeps one engine worker running: starts it, watches it (EOF, silence, stuck
generation, a load that takes too long), restarts it with backoff after a crash, and
gives up after repeated crashes during loads, saying why. One thread does all of it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ..api import EngineError, EngineNotReady
from ..options import EngineOptions
from .policy import WorkerPolicy
from .process import WorkerProcess

logger = logging.getLogger(__name__)
WATCH_INTERVAL_S = 0.1


class WorkerSupervisor:
    """state: "loading" | "ready" | "failed" | "closed"."""

    def __init__(
        self,
        options: EngineOptions,
        policy: WorkerPolicy | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.options = options
        self.policy = policy or WorkerPolicy()
        self._on_change = on_change or (lambda: None)
        self._state = "loading"
        self.error: str | None = None
        self.restarts = 0  # workers started after the first
        self.crashes = 0
        self.load_crashes = 0  # in a row, before a worker became ready
        self.last_crash: str | None = None
        self.failed_requests = 0  # calls in flight when a worker died
        self.process: WorkerProcess | None = None
        self._closed = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="shadowtab-engine-worker", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    @property
    def state(self) -> str:
        """A worker that just died reads "loading" at once, before this thread has
        noticed (it looks every WATCH_INTERVAL_S)."""
        process = self.process
        if self._state == "ready" and process is not None and not process.alive:
            return "loading"
        return self._state

    @property
    def progress(self) -> float:
        process = self.process
        if self.state == "ready":
            return 1.0
        return process.progress if process is not None and process.alive else 0.0

    def ready_process(self) -> WorkerProcess:
        """The serving worker; EngineNotReady (saying why) while there is none."""
        process = self.process
        if self.state == "ready" and process is not None and process.ready.is_set():
            return process
        if self.state == "failed":
            raise EngineNotReady(f"the engine failed: {self.error}")
        if self.state == "closed":
            raise EngineNotReady("the engine is closed")
        crash = self.current_crash()
        if crash is not None:
            raise EngineNotReady(f"the engine worker is restarting (it {crash})")
        raise EngineNotReady("the model is still loading")

    def describe(self) -> dict[str, Any]:
        process = self.process
        return {
            "pid": process.pid if process is not None and process.alive else None,
            "restarts": self.restarts,
            "crashes": self.crashes,
            "last_crash": self.current_crash(),
            "failed_requests": self.failed_requests,
        }

    def current_crash(self) -> str | None:
        """Why the last worker ended, also in the moment after it died and before this
        thread has recorded it: listeners told of the death read the reason at once."""
        process = self.process
        if process is not None and not process.alive and process.load_error is None:
            return process.exit_description or self.last_crash
        return self.last_crash

    def count_failed_request(self) -> None:
        self.failed_requests += 1

    # the supervising thread

    def _run(self) -> None:
        try:
            self._supervise()
        except Exception as exc:  # a bug here must show as a failed engine, not a hang
            logger.exception("the engine worker's supervisor failed")
            self._fail(f"the engine worker's supervisor failed: {type(exc).__name__}: {exc}")

    def _supervise(self) -> None:
        while not self._closed.is_set():
            try:
                process = WorkerProcess(self.options, self.policy.beat_s, self._changed)
            except EngineError as exc:
                self._fail(str(exc))
                return
            self.process = process
            self._set_state("loading")
            self._watch(process)
            if self._closed.is_set():
                return
            if not self._after_exit(process):
                return
            self.restarts += 1
            self._closed.wait(self.policy.restart_delay(self.load_crashes))

    def _watch(self, process: WorkerProcess) -> None:
        while not process.exited.wait(WATCH_INTERVAL_S):
            if self._closed.is_set():
                return
            if process.ready.is_set() and self._state == "loading":
                self.load_crashes = 0
                self._set_state("ready")
            reason = self._hung(process) if process.kill_reason is None else None
            if reason is not None:  # once: a starved machine may take seconds to reap it
                logger.error("engine worker %d %s: killing it", process.pid, reason)
                process.kill(reason)

    def _hung(self, process: WorkerProcess) -> str | None:
        policy, now = self.policy, time.monotonic()
        ready = process.ready.is_set()
        silence = policy.silence_deadline_s if ready else policy.load_silence_deadline_s
        if now - process.last_frame > silence:
            return f"stopped answering for {now - process.last_frame:.1f} s (hung or stopped)"
        if process.stalled_s > policy.stall_deadline_s:
            return f"stalled in a generation for {process.stalled_s:.1f} s"
        if not ready and now - process.started > policy.load_deadline_s:
            return f"did not load the model within {policy.load_deadline_s:.0f} s"
        return None

    def _after_exit(self, process: WorkerProcess) -> bool:
        """Record why the worker ended; False when it is not to be restarted."""
        if process.load_error is not None:  # a clean "cannot load": restarting won't help
            self._fail(str(process.load_error))
            return False
        self.crashes += 1
        self.last_crash = process.exit_description
        was_ready = process.ready.is_set()
        self.load_crashes = 0 if was_ready else self.load_crashes + 1
        logger.error("engine worker %d %s; restarting it", process.pid, self.last_crash)
        if self.load_crashes >= self.policy.max_load_crashes:
            self._fail(
                f"the engine worker crashed {self.load_crashes} times in a row while loading "
                f"the model (last: it {self.last_crash}); not restarting it. "
                "Fix the cause (see the daemon log) and restart the daemon"
            )
            return False
        self._set_state("loading")
        return True

    def _fail(self, error: str) -> None:
        self.error = error
        self._set_state("failed")

    def _set_state(self, state: str) -> None:
        if self._state == "closed":
            return
        changed = state != self._state
        self._state = state
        if changed:
            self._changed()

    def _changed(self) -> None:
        try:
            self._on_change()
        except Exception:  # a listener's bug must not stop the supervision
            logger.exception("engine state listener failed")

    def close(self) -> None:
        self._closed.set()
        self._state = "closed"
        process = self.process
        if process is not None and process.alive:
            process.close(self.policy.close_grace_s)
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(self.policy.close_grace_s + 6)
