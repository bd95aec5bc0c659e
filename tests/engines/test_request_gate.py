"""The engine's request gate: one call at a time; waiting real requests by priority
(plain continuations before rewrites), then arrival; warming only when none waits."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from shadowtab.inference.engines.local.scheduling import RequestGate


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.002)


def waiting_count_is(gate: RequestGate, count: int) -> Callable[[], bool]:
    return lambda: gate.waiting() == count


def held(gate: RequestGate, warming: bool = False) -> tuple[threading.Thread, threading.Event]:
    """A thread holding the gate as a real call (or as warming) until the returned event
    is set."""
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with gate.background() if warming else gate.real():
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(10)
    return holder, release


def queue_behind_holder(gate: RequestGate, requests: list[tuple[str, bool]]) -> list[str]:
    """The order in which `requests` (name, urgent) get the gate when all of them arrive,
    one after the other, while another call holds it."""
    order: list[str] = []

    def request(name: str, urgent: bool) -> None:
        with gate.real(urgent=urgent):
            order.append(name)

    holder, release = held(gate)
    threads = []
    for count, (name, urgent) in enumerate(requests, start=1):
        thread = threading.Thread(target=request, args=(name, urgent))
        thread.start()
        threads.append(thread)
        wait_until(waiting_count_is(gate, count))  # fixes the order of arrival
    release.set()
    for thread in [holder, *threads]:
        thread.join(10)
    return order


def test_a_continuation_waiting_goes_before_a_rewrite_that_came_first() -> None:
    order = queue_behind_holder(RequestGate(), [("rewrite", False), ("ghost", True)])
    assert order == ["ghost", "rewrite"]


def test_equal_priority_in_order_of_arrival() -> None:
    requests = [(f"r{i}", False) for i in range(4)] + [(f"c{i}", True) for i in range(2)]
    order = queue_behind_holder(RequestGate(), requests)
    assert order == ["c0", "c1", "r0", "r1", "r2", "r3"]


def test_warming_waits_while_a_real_request_waits() -> None:
    gate = RequestGate()
    order: list[str] = []

    def warm() -> None:
        with gate.background():
            order.append("warm")

    def real() -> None:
        with gate.real():
            order.append("real")

    holder, release = held(gate)
    warmer = threading.Thread(target=warm)
    warmer.start()
    requester = threading.Thread(target=real)
    requester.start()
    wait_until(gate.real_waiting)
    release.set()
    for thread in (holder, warmer, requester):
        thread.join(10)
    assert order == ["real", "warm"] and not gate.real_waiting()


def test_a_rewrite_lends_the_engine_to_a_waiting_continuation_and_keeps_its_place() -> None:
    """Between two passes a rewrite lets a waiting plain continuation run, then takes the
    engine back ahead of a rewrite that came later; warming still waits."""
    gate = RequestGate()
    order: list[str] = []
    holding, go_on = threading.Event(), threading.Event()

    def rewrite() -> None:
        with gate.real() as turn:
            holding.set()
            go_on.wait(10)
            order.append("pass 1")
            assert turn.lend_to_urgent()
            order.append("pass 2")
            assert not turn.lend_to_urgent()  # nobody urgent waits now

    def request(name: str, urgent: bool) -> None:
        with gate.real(urgent=urgent):
            order.append(name)

    def warm() -> None:
        with gate.background():
            order.append("warm")

    first = threading.Thread(target=rewrite)
    first.start()
    assert holding.wait(10)
    later = threading.Thread(target=request, args=("later rewrite", False))
    later.start()
    wait_until(waiting_count_is(gate, 1))
    warmer = threading.Thread(target=warm)
    warmer.start()
    ghost = threading.Thread(target=request, args=("continuation", True))
    ghost.start()
    wait_until(waiting_count_is(gate, 2))
    go_on.set()
    for thread in (first, later, warmer, ghost):
        thread.join(10)
    assert order == ["pass 1", "continuation", "pass 2", "later rewrite", "warm"]


def test_an_urgent_call_never_lends() -> None:
    gate = RequestGate()
    with gate.real(urgent=True) as turn:
        assert not turn.lend_to_urgent()


def test_a_real_request_interrupts_warming_but_not_another_real_call() -> None:
    """The engine is told what the waiting request will prefill (it judges the pass)."""
    interrupts: list[Sequence[int] | None] = []
    gate = RequestGate(interrupt_background=interrupts.append)

    def request() -> None:
        with gate.real(urgent=True, needs=[1, 2, 3]):
            pass

    for warming, expected in ((True, [[1, 2, 3]]), (False, [])):
        interrupts.clear()
        holder, release = held(gate, warming)
        requester = threading.Thread(target=request)
        requester.start()
        wait_until(gate.real_waiting)
        assert interrupts == expected  # a real holder is not interrupted
        release.set()
        for thread in (holder, requester):
            thread.join(10)


def test_warming_is_judged_by_the_request_that_runs_next() -> None:
    """A continuation that queues ahead of a rewrite waiting for warming judges the
    warming pass again (it runs first); one queued behind another continuation does not."""
    interrupts: list[Sequence[int] | None] = []
    gate = RequestGate(interrupt_background=interrupts.append)

    def request(urgent: bool, needs: list[int]) -> threading.Thread:
        def run() -> None:
            with gate.real(urgent=urgent, needs=needs):
                pass

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    holder, release = held(gate, warming=True)
    threads = [request(False, [1])]
    wait_until(waiting_count_is(gate, 1))
    threads.append(request(True, [2]))
    wait_until(waiting_count_is(gate, 2))
    threads.append(request(True, [3]))
    wait_until(waiting_count_is(gate, 3))
    assert interrupts == [[1], [2]]  # [3] queued behind [2]
    release.set()
    for thread in [holder, *threads]:
        thread.join(10)


def test_a_request_cancelled_while_it_waits_leaves_the_line_at_once() -> None:
    """A keystroke's request superseded while another call holds the engine does not
    wait for its turn to find out: the thread that asked is free again, and the
    request behind it keeps its place."""
    from shadowtab.inference.engines.api import CancelEvent, Cancelled

    gate = RequestGate()
    holder, release = held(gate)
    cancel = CancelEvent()
    outcomes: list[str] = []
    order: list[str] = []

    def superseded() -> None:
        try:
            with gate.real(urgent=True, cancel=cancel):
                outcomes.append("ran")
        except Cancelled:
            outcomes.append("cancelled")

    def behind() -> None:
        with gate.real(urgent=True):
            order.append("behind")

    first = threading.Thread(target=superseded)
    first.start()
    wait_until(waiting_count_is(gate, 1))
    second = threading.Thread(target=behind)
    second.start()
    wait_until(waiting_count_is(gate, 2))
    cancel.set()
    first.join(10)
    assert outcomes == ["cancelled"] and gate.waiting() == 1 and gate.busy()
    release.set()
    for thread in (holder, second):
        thread.join(10)
    assert order == ["behind"] and gate.waiting() == 0 and not gate.busy()
