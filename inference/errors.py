"""Errors raised by the inference engines."""

from __future__ import annotations


class EngineError(Exception):
    """A request or a model load failed; the message says why and the engine stays usable."""


class ModelLoadError(EngineError):
    """The model file is missing, not GGUF, or could not be loaded."""


class EngineNotReady(EngineError):
    """A request arrived while the model is still loading (or after close)."""


class Cancelled(EngineError):
    """The request's cancel event was set; it stopped within one forward pass."""
