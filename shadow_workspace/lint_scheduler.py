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

    def schedule(
        self, key: str, start: Snapshot, on_result: LintResultCallback
    ) -> asyncio.Task[None]:
        """Lint `key` after the debounce; `start()` gives (version, lint coroutine)."""
        previous = self._tasks.pop(key, None)
        if previous is not None:
            previous.cancel()
        task = asyncio.get_running_loop().create_task(self._run(key, start, on_result))
        self._tasks[key] = task
        task.add_done_callback(lambda done: self._forget(key, done))
        return task

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
        if not task.cancelled() and task.exception() is not None:
            log.error("lint of %s failed", key, exc_info=task.exception())

    def cancel(self, key: str) -> None:
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
