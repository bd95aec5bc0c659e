"""Plain continuations (ghost text) that wait for the engine are served together: the one
that gets the engine takes the others waiting, up to BATCH_LIMIT, and decodes them with
its own in shared passes (batched_generation.py); their callers leave the gate's line
and get their answers as soon as theirs are done. While its own is not done, those that
start waiting join the batch between two passes. A call that finds no other waiting
runs alone, as any other call does. Several editors typing at once then wait for a pass
instead of each other's calls in turn."""

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
# Decodes the lanes, and those `join` gives between two passes (how many decode now).
ServeTogether = Callable[[Sequence[Lane], Callable[[int], list[Lane]]], None]


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
        """With the engine held: `job` leaves the waiting list, and up to limit - 1 others
        are taken with it."""
        with self._lock:
            self._waiting.remove(job)
        return self._take(self._limit - 1)

    def _take(self, room: int) -> list[Job]:
        """Up to `room` waiting jobs, first come first; their callers are told to wait
        for their answers, each told when its own is done."""
        with self._lock:
            taken = self._waiting[: max(room, 0)]
            del self._waiting[: len(taken)]
            for other in taken:
                other.lane.on_end = other.done.set
                other.claimed.set()
        if taken:
            self._gate.wake()
        return taken

    def _together(self, job: Job, others: list[Job], together: ServeTogether) -> Completion:
        taken = list(others)

        def join(decoding: int) -> list[Lane]:
            if not job.lane.open:  # the caller that computes is done: let the batch drain
                return []
            joined = self._take(self._limit - decoding)
            taken.extend(joined)
            return [each.lane for each in joined]

        try:
            together([job.lane, *(other.lane for other in others)], join)
        finally:
            for other in [job, *taken]:
                if other.lane.open:  # `together` failed before deciding it
                    other.lane.error = EngineError("the batch stopped before this request's answer")
                other.done.set()
            with self._lock:
                self._counts["batches"] += 1
                self._counts["batched_requests"] += 1 + len(taken)
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
