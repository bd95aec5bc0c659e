"""WorkerEngine: the Engine interface in the daemon, every call forwarded to the engine
worker process (see supervisor.py for its life, process.py for the wire). The model
and its KV cache live in the worker; this object holds no model memory and runs no
decoding loop, so the daemon's GIL stays free for LSP traffic."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..api import CacheInfo, Completion, RequestStats
from ..options import EngineOptions
from .policy import WorkerPolicy
from .supervisor import WorkerSupervisor
from .wire import WorkerDied, cache_info_from_wire, completion_from_wire, stats_from_wire


class WorkerEngine:
    """Starts loading at once (in the worker); requests before the model is ready, or
    while a crashed worker restarts, get EngineNotReady saying which."""

    def __init__(
        self,
        options: EngineOptions,
        policy: WorkerPolicy | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.options = options
        self.supervisor = WorkerSupervisor(options, policy, on_change)
        self.supervisor.start()

    # what the host shows

    @property
    def state(self) -> str:
        return self.supervisor.state

    @property
    def progress(self) -> float:
        return self.supervisor.progress

    @property
    def error(self) -> str | None:
        return self.supervisor.error

    @property
    def pid(self) -> int | None:
        pid: int | None = self.supervisor.describe()["pid"]
        return pid

    def worker_status(self) -> dict[str, Any]:
        return self.supervisor.describe()

    # Engine

    def warm(self, prompt: str, cancel: threading.Event | None = None) -> RequestStats:
        return stats_from_wire(self._call("warm", {"prompt": prompt}, cancel))

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
        args = {
            "prompt": prompt,
            "max_tokens": max_tokens,
            "stop": list(stop),
            "n": n,
            "min_token_p": min_token_p,
            "heal": heal,
        }
        return completion_from_wire(self._call("complete", args, cancel))

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
        args = {
            "prompt": prompt,
            "draft": draft,
            "max_tokens": max_tokens,
            "stop": list(stop),
            "speculative": speculative,
            "n": n,
            "min_token_p": min_token_p,
        }
        return completion_from_wire(self._call("rewrite", args, cancel))

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return list(self._call("tokenize", {"text": text, "special": special}, None))

    def cache_info(self) -> CacheInfo:
        return cache_info_from_wire(self._call("cache_info", {}, None))

    def clear_cache(self) -> None:
        """Drop every resident prefix in the worker's engine (llama.cpp, torch)."""
        self._call("clear_cache", {}, None)

    def stats(self) -> dict[str, Any]:
        """Never blocks: the worker's stats() as of its last reply, plus the worker's
        pid, restarts and last crash."""
        process = self.supervisor.process
        described = dict(process.stats) if process is not None else {}
        described["state"] = self.state
        described["worker"] = self.supervisor.describe()
        return described

    def close(self) -> None:
        self.supervisor.close()

    # forwarding

    def _call(self, method: str, args: dict[str, Any], cancel: threading.Event | None) -> Any:
        process = self.supervisor.ready_process()
        try:
            return process.call(method, args, cancel)
        except WorkerDied:
            self.supervisor.count_failed_request()
            raise
