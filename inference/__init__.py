"""Engines (llama.cpp default), KV cache manager, prompt formats, speculative edits,
predictors. Imports nothing from lsp, shadow_workspace, daemon."""

from .engine_api import CacheInfo, Completion, Engine, EngineKind, EngineOptions, RequestStats
from .errors import Cancelled, EngineError, EngineNotReady, ModelLoadError
from .factory import create_engine
from .llama_engine import LlamaCppEngine
from .model_files import default_model_path
from .off_engine import OffEngine

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
