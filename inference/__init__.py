"""Inference: `engines/` (the Engine interface, llama.cpp, off) and `next_edit/` (prompt
formats, filters, the predictor). Imports nothing from lsp, shadow_workspace, daemon.

Importing this package loads no native library: LlamaCppEngine (whose module loads
llama.cpp) is resolved on first use through the module `__getattr__`, so the CLI and the
language server stay light until a model is actually built."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .engines import create_engine
from .engines.api import (
    CacheInfo,
    Cancelled,
    Completion,
    Engine,
    EngineError,
    EngineNotReady,
    ModelLoadError,
    RequestStats,
)
from .engines.model_files import default_model_path
from .engines.off import OffEngine
from .engines.options import EngineOptions
from .engines.settings import EngineKind

if TYPE_CHECKING:
    from .engines.llama_cpp.engine import LlamaCppEngine

__all__ = [
    "CacheInfo",
    "Cancelled",
    "Completion",
    "Engine",
    "EngineError",
    "EngineKind",
    "EngineNotReady",
    "EngineOptions",
    "LlamaCppEngine",
    "ModelLoadError",
    "OffEngine",
    "RequestStats",
    "create_engine",
    "default_model_path",
]


def __getattr__(name: str) -> Any:
    if name == "LlamaCppEngine":
        from .engines.llama_cpp.engine import LlamaCppEngine

        return LlamaCppEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
