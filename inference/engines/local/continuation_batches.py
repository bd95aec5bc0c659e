"""Plain continuations (ghost text) that wait for the engine are served together: the one
that gets the engine takes the others waiting, up to BATCH_LIMIT, and decodes them with
its own in shared passes (batched_generation.py); their callers leave the gate's line
and wait for the answer it computes. A call that finds no other waiting runs alone, as
any other call does. Several editors typing at once then wait for one batch instead of
each other's calls in turn."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..api import Cancelled, Completion, EngineError
from .batched_generation import Lane
from .scheduling import Claimed, RequestGate, Turn

# Each request of a batch pins a resident prefix meanwhile (PrefixCache.pin): at most
# half of the engine's resident sequences, so others stay evictable for placements.
BATCH_LIMIT = 4

ServeAlone = Callable[[Turn], Completion]
ServeTogether = Callable[[Sequence[Lane]], None]


@dataclass(eq=False)
class Job:
    lane: Lane
    claimed: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)

    def answer(self) -> Completion:
        if self.lane.error is not None:
            raise self.lane.error
        if self.lane.completion is None:
            raise EngineError("a batched request ended without an answer")
        return self.lane.completion


class ContinuationBatches:
    def __init__(self, gate: RequestGate, limit: int = BATCH_LIMIT) -> None:
        self._gate = gate
        self._limit = limit
        self._lock = threading.Lock()
        self._waiting: list[Job] = []
        self._counts = {"batches": 0, "batched_requests": 0}

    def counts(self) -> dict[str, int]:
        """Batches served and the requests in them (stats())."""
        return dict(self._counts)

    def serve(
        self, lane: Lane, needs: Sequence[int], alone: ServeAlone, together: ServeTogether
    ) -> Completion:
        """The lane's answer: computed by `alone` when this call gets the engine and no
        other waits, by `together` with the others waiting when some do, or by the call
        that took it."""
        job = Job(lane)
        with self._lock:
            self._waiting.append(job)
        holding = False
        try:
            with self._gate.real(True, needs, lane.cancel, job.claimed) as turn:
                holding = True
                others = self._claim(job)
                if not others:
                    return alone(turn)
                return self._together(job, others, together)
        except Claimed:
            return self._taken(job)
        except Cancelled:
            if holding or self._withdraw(job):
                raise
            return self._taken(job)  # cancelled just as another call took it
        finally:
            self._withdraw(job)

    def _claim(self, job: Job) -> list[Job]:
        """With the engine held: `job` and up to limit - 1 others leave the waiting list;
        the others' callers are told to wait for their answers."""
        with self._lock:
            self._waiting.remove(job)
            others, self._waiting = (
                self._waiting[: self._limit - 1],
                self._waiting[self._limit - 1 :],
            )
            for other in others:
                other.claimed.set()
        if others:
            self._gate.wake()
        return others

    def _together(self, job: Job, others: list[Job], together: ServeTogether) -> Completion:
        lanes = [job.lane, *(other.lane for other in others)]
        try:
            together(lanes)
        finally:
            for lane in lanes:
                if lane.open:  # `together` failed before deciding it
                    lane.error = EngineError("the batch stopped before this request's answer")
            for other in others:
                other.done.set()
            with self._lock:
                self._counts["batches"] += 1
                self._counts["batched_requests"] += len(lanes)
        return job.answer()

    def _withdraw(self, job: Job) -> bool:
        """`job` leaves the waiting list; False when it was not on it (taken)."""
        with self._lock:
            if job in self._waiting:
                self._waiting.remove(job)
                return True
            return False

    @staticmethod
    def _taken(job: Job) -> Completion:
        """The answer of a job another call took: that call sets `done` whatever happens."""
        job.done.wait()
        return job.answer()
