"""WarmRunner: while a warm holds the thread (the model is busy), each pause of the
typist submits one more; only the newest per document may wait (the 30-minute soak
queued hundreds, each holding the document's text). A keystroke's follow waits behind a
full warm (the cursor's arrival, a pause) instead of stopping it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from lsp_helpers import eventually
from shadowtab.lsp.warming import Warm, WarmRunner


class Recorder:
    def __init__(self) -> None:
        self.ran: list[str] = []
        self.release = threading.Event()
        self.cancels: list[threading.Event] = []

    def warm(self, name: str, hold: bool = False) -> Warm:
        def run(cancel: threading.Event) -> None:
            self.ran.append(name)
            self.cancels.append(cancel)
            if hold:
                self.release.wait(10)

        return run

    async def ran_once_released(self, count: int) -> list[str]:
        """What ran, once the held warm is released and `count` warms have run (and a
        moment more, for one that should not)."""
        self.release.set()
        await eventually(lambda: len(self.ran) == count or None)
        time.sleep(0.1)
        return self.ran


@pytest.fixture
def warming() -> Iterator[tuple[WarmRunner, Recorder]]:
    runner, recorder = WarmRunner(lambda exc: False), Recorder()
    try:
        yield runner, recorder
    finally:
        recorder.release.set()
        runner.close()


async def test_a_busy_warm_thread_keeps_only_the_newest_warm_per_document(
    warming: tuple[WarmRunner, Recorder],
) -> None:
    runner, recorder = warming
    runner.submit("a.py", recorder.warm("first", hold=True))
    await eventually(lambda: recorder.ran)
    for number in range(50):  # the typist pauses 50 times while the thread is held
        runner.submit("a.py", recorder.warm(f"a{number}"))
        runner.submit("b.py", recorder.warm(f"b{number}"))
    assert runner.waiting() == 2  # one per document, not 100
    assert recorder.cancels[0].is_set()  # the running one is asked to stop
    assert await recorder.ran_once_released(3) == ["first", "a49", "b49"]
    assert runner.waiting() == 0


async def test_a_failing_warm_does_not_stop_the_next(
    warming: tuple[WarmRunner, Recorder],
) -> None:
    runner, recorder = warming

    def fails(cancel: threading.Event) -> None:
        raise RuntimeError("the engine is gone")

    runner.submit("a.py", fails)
    runner.submit("b.py", recorder.warm("after"))
    await eventually(lambda: recorder.ran)
    assert recorder.ran == ["after"]


async def test_keystrokes_follows_wait_behind_a_full_warm_without_stopping_it(
    warming: tuple[WarmRunner, Recorder],
) -> None:
    """The cursor came to rest at a new place (a full warm: hundreds of prompt tokens)
    and the first keys there arrive while it runs: it goes on, the newest follow after it."""
    runner, recorder = warming
    runner.submit("a.py", recorder.warm("place", hold=True))
    await eventually(lambda: recorder.ran)
    for number in range(5):
        runner.submit("a.py", recorder.warm(f"key{number}"), follow=True)
    assert runner.waiting() == 1
    assert not recorder.cancels[0].is_set()
    assert await recorder.ran_once_released(2) == ["place", "key4"]


async def test_a_newer_full_warm_stops_the_running_one_and_the_follows_behind_it(
    warming: tuple[WarmRunner, Recorder],
) -> None:
    runner, recorder = warming
    runner.submit("b.py", recorder.warm("other", hold=True))  # holds the thread
    await eventually(lambda: recorder.ran)
    runner.submit("a.py", recorder.warm("place"))
    runner.submit("a.py", recorder.warm("key"), follow=True)
    assert runner.waiting() == 2  # a follow queues behind a full warm that waits
    runner.submit("a.py", recorder.warm("pause"))  # typing paused: a newer full warm
    assert runner.waiting() == 1
    assert await recorder.ran_once_released(2) == ["other", "pause"]


async def test_a_follow_stops_a_running_follow(warming: tuple[WarmRunner, Recorder]) -> None:
    runner, recorder = warming
    runner.submit("a.py", recorder.warm("key0", hold=True), follow=True)
    await eventually(lambda: recorder.ran)
    runner.submit("a.py", recorder.warm("key1"), follow=True)
    assert recorder.cancels[0].is_set()
    assert await recorder.ran_once_released(2) == ["key0", "key1"]
