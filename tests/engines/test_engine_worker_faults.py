"""Faults of the engine worker, caused for real: SIGKILL and SIGSEGV during a
generation, crashes during every load, a stopped (hung) worker. The caller never
hangs: calls in flight fail with WorkerDied at once, the worker comes back, and after
repeated crashes during loads the engine says it gave up and why."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest
from inference_samples import FIB
from shadowtab.inference import EngineNotReady
from shadowtab.inference.engines.worker import WorkerDied, WorkerEngine, WorkerPolicy
from worker_support import (
    FAST,
    OPTIONS,
    STOP_DEADLINE_S,
    in_thread,
    ready_worker,
    wait_for,
    wait_state,
)

# Model loads niced under other work on 2 cores have taken minutes; a hang still fails.
pytestmark = pytest.mark.timeout(900)

FAIL_WITHIN_S = 30.0  # from the kill to the failed call: EOF is immediate, a starved CPU is not


@pytest.fixture
def worker() -> Iterator[WorkerEngine]:
    engine = ready_worker(FAST)
    yield engine
    engine.close()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV])
def test_a_crash_during_generation_fails_the_call_and_the_worker_restarts(
    worker: WorkerEngine, sig: signal.Signals
) -> None:
    first_pid = worker.pid
    assert first_pid is not None
    outcome = in_thread(lambda: worker.complete(FIB, max_tokens=900))
    time.sleep(0.5)  # the generation runs in the worker
    killed_at = time.monotonic()
    os.kill(first_pid, sig)
    assert outcome.done.wait(FAIL_WITHIN_S), "the call in flight hung after the crash"
    assert isinstance(outcome.error, WorkerDied), outcome
    assert sig.name in str(outcome.error)  # "the engine worker was killed by SIGSEGV ..."
    assert outcome.ended_at - killed_at < FAIL_WITHIN_S
    assert wait_state(worker, {"ready", "failed"}) == "ready"
    assert worker.pid != first_pid
    status = worker.worker_status()
    assert status["restarts"] == 1 and status["crashes"] == 1
    assert status["failed_requests"] == 1
    assert status["last_crash"] == f"was killed by {sig.name}"
    assert worker.complete(FIB, max_tokens=4).texts  # the next request is served


def test_requests_while_restarting_say_so(worker: WorkerEngine) -> None:
    assert worker.pid is not None
    os.kill(worker.pid, signal.SIGKILL)
    wait_for(lambda: worker.state == "loading", FAIL_WITHIN_S, "the restart")
    with pytest.raises(EngineNotReady, match=r"restarting .*SIGKILL"):
        worker.complete(FIB, max_tokens=4)
    assert wait_state(worker, {"ready"}) == "ready"


def test_repeated_crashes_during_loads_give_up_and_say_why() -> None:
    policy = WorkerPolicy(restart_delay_s=0.05, max_restart_delay_s=0.2, max_load_crashes=3)
    engine = WorkerEngine(OPTIONS, policy)
    stop = threading.Event()

    def kill_every_loading_worker() -> None:
        killed: set[int] = set()
        while not stop.is_set():
            pid = engine.pid
            if pid is not None and pid not in killed and engine.state == "loading":
                os.kill(pid, signal.SIGSEGV)
                killed.add(pid)
            time.sleep(0.005)

    killer = threading.Thread(target=kill_every_loading_worker, daemon=True)
    killer.start()
    try:
        assert wait_state(engine, {"failed", "ready"}) == "failed"
        assert engine.error is not None
        assert "crashed 3 times in a row while loading" in engine.error
        assert "SIGSEGV" in engine.error
        assert engine.supervisor.restarts == 2
        with pytest.raises(EngineNotReady, match="crashed 3 times"):
            engine.complete(FIB, max_tokens=4)
    finally:
        stop.set()
        killer.join()
        engine.close()


def test_a_stopped_worker_is_killed_after_the_deadline() -> None:
    policy = WorkerPolicy(restart_delay_s=0.05, silence_deadline_s=STOP_DEADLINE_S)
    worker = ready_worker(policy)
    try:
        stop_and_expect_a_kill(worker)
    finally:
        worker.close()


def stop_and_expect_a_kill(worker: WorkerEngine) -> None:
    pid = worker.pid
    assert pid is not None
    outcome = in_thread(lambda: worker.complete(FIB, max_tokens=900))
    time.sleep(0.3)
    stopped_at = time.monotonic()
    os.kill(pid, signal.SIGSTOP)  # as hung native code holding the GIL looks from outside
    deadline = STOP_DEADLINE_S
    assert outcome.done.wait(deadline + FAIL_WITHIN_S), "the call hung with the worker"
    assert isinstance(outcome.error, WorkerDied)
    assert "stopped answering" in str(outcome.error)
    assert outcome.ended_at - stopped_at >= deadline - 1.0  # not killed before the deadline
    assert wait_state(worker, {"ready"}) == "ready"
    assert worker.pid != pid
    assert worker.complete(FIB, max_tokens=4).texts


def test_a_worker_stopped_while_loading_is_killed_after_the_load_deadline() -> None:
    policy = WorkerPolicy(restart_delay_s=0.05, load_silence_deadline_s=2.0)
    engine = WorkerEngine(OPTIONS, policy)
    try:
        wait_for(lambda: engine.pid is not None, FAIL_WITHIN_S, "the first worker")
        first = engine.pid
        assert first is not None
        os.kill(first, signal.SIGSTOP)
        assert wait_state(engine, {"ready", "failed"}) == "ready"
        assert engine.pid != first
        status = engine.worker_status()
        assert status["restarts"] == 1 and "stopped answering" in status["last_crash"]
    finally:
        engine.close()


def test_closing_ends_the_worker_process(worker: WorkerEngine) -> None:
    pid = worker.pid
    assert pid is not None
    worker.close()
    assert worker.state == "closed"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped, not a zombie left behind


def test_a_stall_is_measured_from_the_last_forward_pass_of_any_generation() -> None:
    """The worker's stall figure (a worker that beats but whose generations reach no
    forward pass is killed after stall_deadline_s): engines look at their cancel event
    before every pass, so the time since the freshest look is how long it is stuck."""
    from shadowtab.inference.engines.worker.child import Requests

    requests = Requests()
    assert requests.stalled_s() == 0.0  # nothing runs: nothing is stuck
    running = requests.add(1, generating=True)
    requests.add(2, generating=False)  # tokenize, stats: not watched
    time.sleep(0.2)
    assert requests.stalled_s() >= 0.2
    running.is_set()  # the engine reached a forward pass
    assert requests.stalled_s() < 0.1
    waiting = requests.add(3, generating=True)  # queued behind 1: never looks meanwhile
    time.sleep(0.2)
    running.is_set()  # but 1 progresses: the worker is not stuck
    assert requests.stalled_s() < 0.1
    requests.cancel(3)
    assert waiting.is_set()
    requests.remove(1)
    requests.remove(3)
    assert requests.stalled_s() == 0.0
