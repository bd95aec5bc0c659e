"""The engine of kind "off": every request fails with a clear EngineError (the daemon
runs without a model; its tests use it)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from .api import CacheInfo, Completion, EngineError, RequestStats

OFF_MESSAGE = 'the inference engine is off (engine kind "off" in the configuration)'


class OffEngine:
    state = "off"

    def _fail(self) -> NoReturn:
        raise EngineError(OFF_MESSAGE)

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        self._fail()

    def warm(self, prompt: str, cancel: threading.Event | None = None) -> RequestStats:
        self._fail()

    def complete(
        self,
        prompt: str,
        max_tokens: int,
        stop: Sequence[str] = (),
        n: int = 1,
        cancel: threading.Event | None = None,
        min_token_p: float = 0.0,
        heal: bool = False,
    ) -> Completion:
        self._fail()

    def rewrite(
        self,
        prompt: str,
        draft: str,
        max_tokens: int,
        stop: Sequence[str] = (),
        speculative: bool = True,
        cancel: threading.Event | None = None,
        n: int = 1,
        min_token_p: float = 0.0,
    ) -> Completion:
        self._fail()

    def cache_info(self) -> CacheInfo:
        return CacheInfo(bytes_per_token=0, capacity_tokens=0, used_tokens=0, resident_prefixes=[])

    def stats(self) -> dict[str, Any]:
        return {"state": "off", "model": None}

    def close(self) -> None:
        return None
