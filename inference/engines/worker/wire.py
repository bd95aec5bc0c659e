"""What travels between the daemon and the engine worker: the engine options, the
results of each Engine method as plain maps, and errors as (type name, message) pairs
that come back as the same exception classes.

Daemon -> worker: {"op": "init", "options": {...}, "beat_s": float}, then
{"op": "call", "id": int, "method": str, "args": {...}}, {"op": "cancel", "id": int},
{"op": "close"}.
Worker -> daemon: {"op": "progress", "value": float} while loading, then {"op": "ready",
"stats": {...}} or {"op": "load_failed", "type": str, "message": str}; per call
{"op": "reply", "id", "result", "stats"}
or {"op": "error", "id", "type", "message"}; and {"op": "beat", "stalled_s": float}
every beat_s seconds."""

from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from ..api import (
    CacheInfo,
    Cancelled,
    Completion,
    EngineError,
    EngineNotReady,
    ModelLoadError,
    RequestStats,
)
from ..options import EngineOptions

# The Engine methods a worker serves.
CALLS = frozenset({"warm", "complete", "rewrite", "tokenize", "cache_info", "clear_cache", "stats"})
# Calls that run the model: their cancel event is watched for progress (see child.py).
GENERATING = frozenset({"warm", "complete", "rewrite"})
ERRORS: dict[str, type[EngineError]] = {
    cls.__name__: cls for cls in (EngineError, ModelLoadError, EngineNotReady, Cancelled)
}


class WorkerDied(EngineError):
    """The engine worker process died (crash, kill, OOM) or was killed for hanging while
    the request was in flight; the daemon restarts it, the request is lost."""


def options_to_wire(options: EngineOptions) -> dict[str, Any]:
    data = asdict(options)
    data["data_dir"] = str(options.data_dir) if options.data_dir is not None else None
    return data


def options_from_wire(data: dict[str, Any]) -> EngineOptions:
    known = {f.name for f in fields(EngineOptions)}
    unknown = set(data) - known
    if unknown:
        raise EngineError(f"unknown engine options: {', '.join(sorted(unknown))}")
    # msgpack has no tuples: the tuple fields (adapter_formats) come back as lists
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    if values.get("data_dir") is not None:
        values["data_dir"] = Path(values["data_dir"])
    return EngineOptions(**values)


def result_to_wire(value: Any) -> Any:
    """Completion, RequestStats, CacheInfo become maps; lists, dicts and None pass."""
    if isinstance(value, Completion | RequestStats | CacheInfo):
        return asdict(value)
    return value


def completion_from_wire(data: dict[str, Any]) -> Completion:
    values = dict(data)
    values["stats"] = RequestStats(**values["stats"])
    return Completion(**values)


def stats_from_wire(data: dict[str, Any]) -> RequestStats:
    return RequestStats(**data)


def cache_info_from_wire(data: dict[str, Any]) -> CacheInfo:
    return CacheInfo(**data)


def error_to_wire(exc: BaseException) -> tuple[str, str]:
    """(type, message): engine errors by class name, anything else as an EngineError
    that names the original type (a worker bug must reach the caller readably)."""
    name = type(exc).__name__
    if name in ERRORS and isinstance(exc, EngineError):
        return name, str(exc)
    return "EngineError", f"{name} in the engine worker: {exc}"


def error_from_wire(kind: Any, message: Any) -> EngineError:
    cls = ERRORS.get(str(kind), EngineError)
    return cls(str(message))
