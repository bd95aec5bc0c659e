"""The one debouncer of the server (lint, warm and prediction triggers): per key, an
action runs once triggers pause for the delay; a newer trigger restarts it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class Debouncer:
    def __init__(self, delay_s: float, action: Callable[..., None]) -> None:
        self.delay_s = delay_s
        self._action = action
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def trigger(self, key: str, *args: Any, delay_s: float | None = None) -> None:
        """Run `action(key, *args)` after the delay (on the running loop), unless
        triggered again for `key` first."""
        self.cancel(key)
        delay = self.delay_s if delay_s is None else delay_s
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(delay, self._run, key, args)

    def _run(self, key: str, args: tuple[Any, ...]) -> None:
        self._timers.pop(key, None)
        self._action(key, *args)

    def cancel(self, key: str) -> None:
        if (timer := self._timers.pop(key, None)) is not None:
            timer.cancel()

    def pending(self) -> list[str]:
        return list(self._timers)

    def close(self) -> None:
        for key in list(self._timers):
            self.cancel(key)
