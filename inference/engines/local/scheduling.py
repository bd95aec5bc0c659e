"""Serializing engine calls: real requests go first, warming yields to them (the warming
pass in flight is interrupted unless the waiting request's prompt starts with its
tokens), a rewrite lends the engine to a waiting plain continuation between two passes;
cancel events are checked before every forward pass, and a plain continuation's
CancelEvent also stops the pass in flight."""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from ..api import CancelEvent, CancelFlag, Cancelled
from .runtime import Interrupted, Runtime


class Preempted(Exception):
    """A warm-up stopped because a real request is waiting."""


Ticket = tuple[int, int]  # (priority: 0 urgent, 1 not; arrival)
# Called when a real request starts waiting first in line behind warming, with the prompt
# tokens it will prefill (None: not known, or it prefills nothing).
InterruptBackground = Callable[[Sequence[int] | None], None]


class Turn:
    """A real call's hold on the engine."""

    def __init__(self, gate: RequestGate, ticket: Ticket) -> None:
        self._gate = gate
        self.ticket = ticket

    def lend_to_urgent(self) -> bool:
        """Between two forward passes of a call that is not urgent (a rewrite): when an
        urgent call waits (a plain continuation: ghost text's fallback, a few tokens), let
        it run now and take the engine back after it, ahead of calls that came later.
        The caller keeps its KV sequence untouched meanwhile (PrefixCache.pin). True when
        it lent the engine."""
        return self._gate.lend(self.ticket)


class RequestGate:
    """One engine call at a time. Waiting real requests go in order of priority, then
    arrival: a plain continuation (ghost text's fallback, a few tokens) before a rewrite
    (a window), so it does not queue behind other editors' rewrites that came first; a
    rewrite already running lends the engine to it between two passes
    (Turn.lend_to_urgent). Warming runs only while no real request waits;
    `interrupt_background` is called when one starts waiting first in line behind it,
    with the tokens it will prefill (the engine stops the warming pass in flight unless
    the request needs that pass's tokens)."""

    def __init__(self, interrupt_background: InterruptBackground | None = None) -> None:
        self._turns = threading.Condition()
        self._busy = False
        self._background = False  # the engine's holder is warming
        self._interrupt_background = interrupt_background
        self._waiting: list[Ticket] = []  # a heap
        self._arrivals = itertools.count()

    @contextmanager
    def real(
        self,
        urgent: bool = False,
        needs: Sequence[int] | None = None,
        cancel: CancelFlag | None = None,
    ) -> Iterator[Turn]:
        """`needs`: the prompt tokens the call will prefill, when known. Cancelled while
        it waits (`cancel` a CancelEvent), the call leaves the line at once (Cancelled)."""
        ticket = (0 if urgent else 1, next(self._arrivals))
        self._acquire(ticket, needs, cancel)
        try:
            yield Turn(self, ticket)
        finally:
            self._release()

    def lend(self, ticket: Ticket) -> bool:
        """See Turn.lend_to_urgent: the holder of `ticket` waits again with its ticket."""
        with self._turns:
            if ticket[0] == 0 or not self._waiting or self._waiting[0][0] != 0:
                return False
            self._busy = False
            self._turns.notify_all()
            self._wait_for_turn(ticket)
        return True

    def _acquire(
        self, ticket: Ticket, needs: Sequence[int] | None, cancel: CancelFlag | None
    ) -> None:
        stop_watching = cancel.when_set(self._wake) if isinstance(cancel, CancelEvent) else None
        try:
            with self._turns:
                self._wait_for_turn(ticket, needs, cancel)
        finally:
            if stop_watching is not None:
                stop_watching()

    def _wake(self) -> None:
        with self._turns:
            self._turns.notify_all()

    def _wait_for_turn(
        self,
        ticket: Ticket,
        needs: Sequence[int] | None = None,
        cancel: CancelFlag | None = None,
    ) -> None:
        """With the condition's lock held: queue `ticket`, wait until it is first and the
        engine free (or `cancel` is set: Cancelled), take the engine."""
        heapq.heappush(self._waiting, ticket)
        # judged by the request that runs next: one queued behind it got judged by it
        first = self._waiting[0] == ticket
        if first and self._background and self._interrupt_background is not None:
            self._interrupt_background(needs)
        try:
            while self._busy or self._waiting[0] != ticket:
                cancel_guard(cancel)
                self._turns.wait()
        finally:
            self._waiting.remove(ticket)
            heapq.heapify(self._waiting)
            self._turns.notify_all()  # one behind it may be first now
        self._busy = True

    @contextmanager
    def background(self) -> Iterator[None]:
        """Low priority: waits while real requests are queued."""
        with self._turns:
            while self._busy or self._waiting:
                self._turns.wait()
            self._busy = self._background = True
        try:
            yield
        finally:
            self._release()

    def real_waiting(self) -> bool:
        return bool(self._waiting)

    def busy(self) -> bool:
        """A call (real or warming) holds the engine now."""
        return self._busy

    def waiting(self) -> int:
        """Real requests waiting for their turn now."""
        return len(self._waiting)

    def _release(self) -> None:
        with self._turns:
            self._busy = self._background = False
            self._turns.notify_all()


def cancel_guard(cancel: CancelFlag | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled("request cancelled")


def warm_guard(gate: RequestGate, cancel: CancelFlag | None) -> None:
    cancel_guard(cancel)
    if gate.real_waiting():
        raise Preempted()


@contextmanager
def stopped_when_cancelled(runtime: Runtime, cancel: CancelFlag | None) -> Iterator[None]:
    """The request's forward pass in flight stops the moment `cancel` is set (when it is
    a CancelEvent: the worker's and the daemon's are): a superseded keystroke's
    prefill does not hold the engine for the rest of a prefill chunk while other
    editors' requests wait. What the stopped pass computed is lost; the passes before
    it stay cached."""
    if not isinstance(cancel, CancelEvent):
        yield
        return
    owner = object()
    stop_watching = cancel.when_set(lambda: runtime.interrupt(owner))
    try:
        with runtime.interruptible(owner):
            yield
    except Interrupted as exc:
        raise Cancelled("request cancelled during a forward pass") from exc
    finally:
        stop_watching()


@contextmanager
def not_stopped(runtime: Runtime, cancel: CancelFlag | None) -> Iterator[None]:
    """A call that lends the engine between its passes (a rewrite): its passes are not
    armed, since one it lends to may arm and run its own meanwhile."""
    yield
