"""WarmRunner: while a warm holds the thread (the model is busy), each pause of the
typist submits one more; only the newest per document may wait (the 30-minute soak
queued hundreds, each holding the document's text)."""

from __future__ import annotations

import threading
import time

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


async def test_a_busy_warm_thread_keeps_only_the_newest_warm_per_document() -> None:
    runner = WarmRunner(lambda exc: False)
    recorder = Recorder()
    try:
        runner.submit("a.py", recorder.warm("first", hold=True))
        await eventually(lambda: recorder.ran)
        for number in range(50):  # the typist pauses 50 times while the thread is held
            runner.submit("a.py", recorder.warm(f"a{number}"))
            runner.submit("b.py", recorder.warm(f"b{number}"))
        assert runner.waiting() == 2  # one per document, not 100
        assert recorder.cancels[0].is_set()  # the running one is asked to stop
        recorder.release.set()
        await eventually(lambda: len(recorder.ran) == 3 or None)
        time.sleep(0.1)
        assert recorder.ran == ["first", "a49", "b49"]
        assert runner.waiting() == 0
    finally:
        recorder.release.set()
        runner.close()


async def test_a_failing_warm_does_not_stop_the_next() -> None:
    runner = WarmRunner(lambda exc: False)
    recorder = Recorder()

    def fails(cancel: threading.Event) -> None:
        raise RuntimeError("the engine is gone")

    try:
        runner.submit("a.py", fails)
        runner.submit("b.py", recorder.warm("after"))
        await eventually(lambda: recorder.ran)
        assert recorder.ran == ["after"]
    finally:
        runner.close()
