"""TorchEngine: the packaged model (or any Hugging Face model directory or GGUF file that
transformers loads) through torch, on CUDA when present, else the CPU, with a LoRA
adapter through peft. The llama.cpp engine's algorithms run on it unchanged: the prefix
cache (one DynamicCache per resident prefix, cropped to the common prefix, LRU under the
MB budget), preemptible warming, speculative edits with the original as the draft (k
draft tokens verified in one forward pass, the cache cropped on rejection), n
candidates, cancellation before every forward pass."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from .llama_cpp.engine import MB, RESIDENT_PREFIXES, LlamaCppEngine
from .llama_cpp.kv_cache import PrefixCache
from .llama_cpp.runtime import LlamaRuntime
from .torch_model import load_model, torch_adapter
from .torch_runtime import TorchRuntime
from .torch_threads import choose_threads


class TorchEngine(LlamaCppEngine):
    """The request handling is LlamaCppEngine's; loading and the runtime are torch's."""

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
    ) -> None:
        """With no model_path the packaged GGUF is dequantized once into data_dir. `device`:
        "cuda", "cpu" or None (CUDA when present). `adapter` (engine.adapter): a peft LoRA
        adapter directory, "none", or "default" (none: the packaged adapter is a GGUF LoRA
        for llama.cpp, which peft does not load)."""
        super().__init__(
            model_path,
            n_ctx,
            n_threads,
            kv_cache_mb,
            load=False,
            data_dir=data_dir,
            requantize_to=None,
        )
        self.device = device
        self._threads_setting = n_threads  # None: measured at load (torch_threads.py)
        self.thread_probe_s: dict[int, float] = {}
        self.adapter_setting = adapter or "default"
        self.adapter_path = torch_adapter(self.adapter_setting)
        if load:
            self.load(on_progress)

    def _open(
        self, on_progress: Callable[[float], None] | None
    ) -> tuple[LlamaRuntime, PrefixCache]:
        if on_progress is not None:
            on_progress(0.0)
        loaded = load_model(
            self.model_path, self.data_dir, self.device, self.adapter_path, self.n_threads
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
        # TorchRuntime has the operations the decoders and the cache use (duck-typed)
        return cast(LlamaRuntime, runtime), cache

    def stats(self) -> dict[str, Any]:
        return {
            **super().stats(),
            "engine": "torch",
            "device": self.device,
            "adapter": self.adapter_path,
            "adapter_setting": self.adapter_setting,
            "adapter_error": None,  # a torch adapter that cannot be used fails the load
            "thread_probe_ms": {n: round(t * 1000, 1) for n, t in self.thread_probe_s.items()},
        }
