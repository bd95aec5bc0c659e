"""TorchEngine: the packaged model (or any Hugging Face model directory or GGUF file that
transformers loads) through torch, on CUDA when present, else the CPU, with a LoRA
adapter through peft. The shared local engine's algorithms (local/) run on it unchanged: the prefix
cache (one DynamicCache per resident prefix, cropped to the common prefix, LRU under the
MB budget), preemptible warming, speculative edits with the original as the draft (k
draft tokens verified in one forward pass, the cache cropped on rejection), n
candidates, cancellation before every forward pass. `engine.adapter` as on llama.cpp:
the packaged GGUF LoRA by default (on the packaged model), a GGUF LoRA file or a peft
directory, merged in through peft (lora.py); one that cannot be used is named in
stats() and the base model serves."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from ..adapter_files import AdapterError, resolve
from ..local.engine import MB, RESIDENT_PREFIXES, LocalEngine
from ..local.kv_cache import PrefixCache
from .lora import AdapterApplyError, attach
from .model import load_model
from .runtime import TorchRuntime
from .threads import choose_threads

logger = logging.getLogger(__name__)


class TorchEngine(LocalEngine[TorchRuntime]):
    """The request handling is LocalEngine's (shared with LlamaCppEngine); loading and
    the runtime are torch's."""

    kind = "torch"

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        kv_cache_mb: float = 256,
        on_progress: Callable[[float], None] | None = None,
        load: bool = True,
        data_dir: Path | None = None,
        device: str | None = None,
        adapter: str | None = "default",
        adapter_formats: Collection[str] | None = None,
    ) -> None:
        """With no model_path the packaged GGUF is dequantized once into data_dir. `device`:
        "cuda", "cpu" or None (CUDA when present). `adapter` (engine.adapter): "default"
        (the packaged GGUF LoRA, on the packaged model), "none", a GGUF LoRA file or a
        peft adapter directory; `adapter_formats` as for LlamaCppEngine."""
        super().__init__(
            model_path, n_ctx, n_threads, kv_cache_mb, data_dir, adapter, adapter_formats
        )
        self.device = device
        self._threads_setting = n_threads  # None: measured at load (threads.py)
        self.thread_probe_s: dict[int, float] = {}
        if load:
            self.load(on_progress)

    def _open(
        self, on_progress: Callable[[float], None] | None
    ) -> tuple[TorchRuntime, PrefixCache]:
        if on_progress is not None:
            on_progress(0.0)
        loaded = load_model(
            self.model_path, self.data_dir, self.device, self.n_threads, self._adapt
        )
        self.loaded_model_path = loaded.source
        runtime = TorchRuntime(loaded)
        self.device = loaded.device
        if self.device == "cpu" and self._threads_setting is None:
            choice = choose_threads(loaded.model, (1, self.n_threads))
            self.n_threads, self.thread_probe_s = choice.threads, choice.seconds
        capacity = int(self.kv_cache_mb * MB) // runtime.shape.kv_bytes_per_token()
        n_cells = max(self.n_ctx, capacity)
        cache = PrefixCache(runtime, RESIDENT_PREFIXES, max(capacity, 1), n_cells)
        if on_progress is not None:
            on_progress(1.0)
        return runtime, cache

    def _adapt(self, model: Any, reload: Callable[[], Any]) -> Any:
        """The model with engine.adapter merged in; a bad adapter costs the fine-tuning,
        never the engine: log it, say it in stats(), serve the base model."""
        choice = resolve(self.adapter_setting, self._custom_model)
        self.adapter_file, self.adapter_error, self.adapter_format = None, None, None
        if choice.path is None:
            return model
        try:
            attached = attach(model, choice.path, self.adapter_formats)
        except AdapterError as exc:
            self.adapter_error = f"{exc}; serving the base model without it"
            logger.warning("%s", self.adapter_error)
            return reload() if isinstance(exc, AdapterApplyError) else model
        self.adapter_file, self.adapter_format = choice.path, attached.prompt_format
        return attached.model

    def stats(self) -> dict[str, Any]:
        return {
            **super().stats(),
            "thread_probe_ms": {n: round(t * 1000, 1) for n, t in self.thread_probe_s.items()},
        }
