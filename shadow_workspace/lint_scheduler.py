"""Debounced linting per document: a newer version cancels the run in flight (and kills
its linter processes); results arrive only for the version they were computed on."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .linting import LintReport

log = logging.getLogger(__name__)

LintResultCallback = Callable[[str, int, LintReport], Awaitable[Any] | None]
Snapshot = Callable[[], tuple[int, Awaitable[LintReport]] | None]


class LintScheduler:
    def __init__(self, debounce_s: float) -> None:
        self.debounce_s = debounce_s
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._requests: dict[
            str, tuple[Snapshot, LintResultCallback, asyncio.AbstractEventLoop]
        ] = {}

    def schedule(
        self, key: str, start: Snapshot, on_result: LintResultCallback
    ) -> asyncio.Task[None]:
        """Lint `key` after the debounce; `start()` gives (version, lint coroutine)."""
        previous = self._tasks.pop(key, None)
        if previous is not None:
            previous.cancel()
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._run(key, start, on_result))
        self._tasks[key] = task
        self._requests[key] = (start, on_result, loop)
        task.add_done_callback(lambda done: self._forget(key, done))
        return task

    def new_version(self, key: str) -> None:
        """A newer version of `key` arrived: a lint waiting or running for it starts over
        (the running linters are killed). Safe to call from any thread."""
        request = self._requests.get(key)
        task = self._tasks.get(key)
        if request is None or task is None or task.done():
            return
        start, on_result, loop = request

        def restart() -> None:
            if self._tasks.get(key) is task and not task.done():
                self.schedule(key, start, on_result)

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            restart()
        else:
            loop.call_soon_threadsafe(restart)

    async def _run(self, key: str, start: Snapshot, on_result: LintResultCallback) -> None:
        await asyncio.sleep(self.debounce_s)
        snapshot = start()
        if snapshot is None:
            return  # the document is gone
        version, lint = snapshot
        report = await lint
        outcome = on_result(key, version, report)
        if inspect.isawaitable(outcome):
            await outcome

    def _forget(self, key: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
            self._requests.pop(key, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("lint of %s failed", key, exc_info=task.exception())

    def cancel(self, key: str) -> None:
        task = self._tasks.pop(key, None)
        self._requests.pop(key, None)
        if task is not None:
            task.cancel()

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
