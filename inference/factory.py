"""create_engine: the engine the configuration asks for."""

from __future__ import annotations

from collections.abc import Callable

from .engine_api import Engine, EngineOptions
from .errors import EngineError
from .llama_engine import LlamaCppEngine
from .off_engine import OffEngine


def create_engine(
    options: EngineOptions, on_progress: Callable[[float], None] | None = None
) -> Engine:
    """Build and load the engine (blocking: the daemon calls it in a background thread).
    Raises EngineError (ModelLoadError) with a clear message when the model cannot load."""
    if options.kind == "off":
        return OffEngine()
    if options.kind == "llama.cpp":
        return LlamaCppEngine(
            model_path=options.model_path,
            n_ctx=options.n_ctx,
            n_threads=options.n_threads,
            kv_cache_mb=options.kv_cache_mb,
            on_progress=on_progress,
            data_dir=options.data_dir,
        )
    raise EngineError(f'unknown engine kind {options.kind!r} (known: "llama.cpp", "off")')
