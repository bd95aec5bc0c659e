"""The engines behind the Engine interface (engines/api.py) and `create_engine`, which
builds the one the configuration asks for. Importing this package loads no native
library: an engine's module is imported when the engine is built."""

from __future__ import annotations

from collections.abc import Callable

from .api import Engine, EngineError
from .options import EngineOptions
from .settings import ENGINE_KINDS


def create_engine(
    options: EngineOptions, on_progress: Callable[[float], None] | None = None
) -> Engine:
    """Build and load the engine (blocking: the daemon calls it in a background thread).
    Raises EngineError (ModelLoadError) with a clear message when the model cannot load."""
    if options.kind == "off":
        from .off import OffEngine

        return OffEngine()
    if options.kind == "llama.cpp":
        from .llama_cpp.engine import LlamaCppEngine  # loads llama.cpp's native library

        return LlamaCppEngine(
            model_path=options.model_path,
            n_ctx=options.context_size,
            n_threads=options.threads,
            kv_cache_mb=options.kv_cache_mb,
            on_progress=on_progress,
            data_dir=options.data_dir,
            requantize_to=None if options.weights == "as-is" else options.weights,
            adapter=options.adapter,
            adapter_formats=options.adapter_formats,
            kv_type=options.kv_type,
            merge_adapter=options.merge_adapter,
        )
    if options.kind == "torch":
        return _torch_engine(options, on_progress)
    if options.kind == "openai":
        return _openai_engine(options)
    known = ", ".join(f'"{kind}"' for kind in ENGINE_KINDS)
    raise EngineError(f"unknown engine kind {options.kind!r} (known: {known})")


def _torch_engine(options: EngineOptions, on_progress: Callable[[float], None] | None) -> Engine:
    try:
        from .torch.engine import TorchEngine
    except ImportError as exc:
        raise EngineError(
            f"engine.kind = \"torch\" needs the torch extra (pip install 'shadowtab[torch]'): {exc}"
        ) from None
    return TorchEngine(
        model_path=options.model_path,
        n_ctx=options.context_size,
        n_threads=options.threads,
        kv_cache_mb=options.kv_cache_mb,
        on_progress=on_progress,
        data_dir=options.data_dir,
        device=options.device,
        adapter=options.adapter,
        adapter_formats=options.adapter_formats,
    )


def _openai_engine(options: EngineOptions) -> Engine:
    from .openai.client import ServerOptions
    from .openai.engine import OpenAIEngine

    if not options.base_url:
        raise EngineError('engine.kind = "openai" needs engine.base_url (e.g. http://host:8000/v1)')
    server = ServerOptions(
        base_url=options.base_url,
        model=options.model,
        api_key=options.api_key,
        timeout_s=options.timeout_s,
    )
    return OpenAIEngine(
        server,
        n_ctx=options.context_size,
        adapter=options.adapter,
        adapter_format=options.adapter_format,
        adapter_formats=options.adapter_formats,
    )
