"""LlamaCppEngine: the embedded default engine (llama-cpp-python, low-level API); the
request handling is LocalEngine's (local/engine.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from ..adapter_files import AdapterError, resolve
from ..api import EngineError, ModelLoadError
from ..kv_types import DEFAULT_KV_TYPE, KvType, kv_type_named
from ..local.cpu_load import ThreadChooser
from ..local.draft import DraftPolicy
from ..local.engine import MB, RESIDENT_PREFIXES, LocalEngine
from ..local.kv_cache import PrefixCache
from ..settings import ENGINE_DEFAULTS
from .merged_adapter import adapter_format_of, merged_and_converted
from .requantize import requantize
from .runtime import ContextConfig, LlamaRuntime, ModelShape
from .weight_choice import AUTO, FALLBACK, WeightChoice, choose_weights, saved_curve

# Each sequence has its own stream of KV cells (runtime.py), allocated whole: as many as
# engine.kv_cache_mb holds, at least MIN_SEQUENCES (ghost text's and the next edit's
# prompts here and at the place just left), at most RESIDENT_PREFIXES (eight editors'
# prompts in their own file and a shared one).
MIN_SEQUENCES = 4
# Off: re-deciding near ties with single-token steps does not make speculative output
# equal greedy's, whatever the pass length: the difference comes from the KV the batched
# passes wrote, not from the last logits, so the re-decisions would only cost passes.
NEAR_TIE_CHECK = False
BATCH_TOKENS = 256
# engine.weights and engine.merge_adapter as the settings table defaults them, so that a
# direct caller runs what the daemon runs ("auto": the type measured fastest on this CPU;
# benchmarks/requantize.py and weight_choice.py)
DEFAULT_REQUANTIZATION: str | None = ENGINE_DEFAULTS["weights"]
DEFAULT_MERGE_ADAPTER: bool = ENGINE_DEFAULTS["merge_adapter"]
logger = logging.getLogger(__name__)


class LlamaCppEngine(LocalEngine[LlamaRuntime]):
    """See docs/CONTRACTS.md. Loads the model in the constructor unless `load=False`; then
    `load()` (e.g. in a background thread) and requests before it ends get EngineNotReady."""

    kind = "llama.cpp"

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_ctx: int = ENGINE_DEFAULTS["context_size"],
        n_threads: int | None = None,
        kv_cache_mb: float = ENGINE_DEFAULTS["kv_cache_mb"],
        on_progress: Callable[[float], None] | None = None,
        load: bool = True,
        data_dir: Path | None = None,
        requantize_to: str | None = DEFAULT_REQUANTIZATION,
        adapter: str | None = "default",
        adapter_formats: Collection[str] | None = None,
        kv_type: str = DEFAULT_KV_TYPE,
        flash_attention: bool | None = None,
        merge_adapter: bool = DEFAULT_MERGE_ADAPTER,
    ) -> None:
        """With no model_path the packaged model is used; with a data_dir it is first
        requantized to `requantize_to` (once, cached there): measured faster, see
        benchmarks/requantize.py. A configured model is used as it is. `adapter`: a GGUF
        LoRA file, "default" or "none" (see LocalEngine). `kv_type`: the KV cache's
        element type (engine.kv_type; kv_types.py). `flash_attention`: None lets llama.cpp
        choose, on where the KV type needs it (benchmarks/kv_quant.py pins it).
        `merge_adapter`: when the packaged model is converted (requantize_to), the adapter
        is merged into the converted weights (merged_adapter.py) instead of attached."""
        self.kv: KvType = kv_type_named(kv_type)  # before loading: a bad value fails fast
        self.flash_attention = flash_attention
        super().__init__(
            model_path, n_ctx, n_threads, kv_cache_mb, data_dir, adapter, adapter_formats
        )
        self._requantize_to = None if model_path else requantize_to
        self.weight_choice: WeightChoice | None = None  # engine.weights = "auto": measured
        self.merge_adapter = merge_adapter
        self._merged: tuple[Path, str | None] | None = None  # (adapter, its format) merged in
        self._policy = DraftPolicy()
        # set threads stay as set; by default fewer while other processes keep cores busy
        self._threads = ThreadChooser(self.n_threads, adaptive=not n_threads)
        if load:
            self.load(on_progress)

    def _open(
        self, on_progress: Callable[[float], None] | None
    ) -> tuple[LlamaRuntime, PrefixCache]:
        self.loaded_model_path = self._model_file(on_progress)
        runtime = LlamaRuntime(self.loaded_model_path, on_progress)
        # room after the longest prompt for a padded pass's rows (pass_plan.py)
        tile = ContextConfig(0, 1, 1, 1, self.kv, self.flash_attention).attention_tile()
        cells = sequence_cells(self.n_ctx + tile, runtime.shape.n_ctx_train)
        sequences = kv_sequences(self.kv_cache_mb, cells, runtime.shape.kv_bytes_per_token(self.kv))
        config = ContextConfig(
            cells_per_sequence=cells,
            n_seq_max=sequences + NEAR_TIE_CHECK,  # the last: near ties' scratch
            n_threads=self.n_threads,
            n_batch=BATCH_TOKENS,
            kv=self.kv,
            flash_attention=self.flash_attention,
        )
        try:
            check_kv_type(runtime.shape, self.kv)
            runtime.open_context(config)
        except BaseException:
            runtime.close()
            raise
        self._attach_adapter(runtime)
        if runtime.n_cells < self.n_ctx + runtime.pass_tile:
            runtime.pass_tile = 0  # no cells for padding rows after the longest prompt
        # each sequence's cells are its own: a request truncated to n_ctx always fits
        total = sequences * runtime.n_cells
        cache = PrefixCache(runtime, sequences, total, total)
        return runtime, cache

    def stats(self) -> dict[str, Any]:
        return {
            **super().stats(),
            "weights": self._weights_in_use(),
            **({"weights_choice": self.weight_choice.describe()} if self.weight_choice else {}),
            "kv_type": self.kv.name,
            **self._context_sizes(),
            "adapter_merged": self._merged is not None,
            "threads_now": self._threads.current,  # fewer while other processes are busy
            "threads_adaptive": self._threads.adaptive,  # False: engine.threads set
            "other_processes_busy_cores": round(self._threads.others_busy, 2),
        }

    def _context_sizes(self) -> dict[str, int]:
        """KV cells in use and the model's trained context (the cells never exceed it)."""
        runtime = self._runtime
        if runtime is None:
            return {}
        return {
            "context_cells": runtime.n_cells,  # each sequence's
            "kv_sequences": runtime.config.n_seq_max - NEAR_TIE_CHECK,
            "trained_context": runtime.shape.n_ctx_train,
        }

    def _before_request(self, runtime: LlamaRuntime) -> None:
        runtime.set_threads(self._threads.choose())

    def _tie_seq(self) -> int | None:
        runtime = self._runtime
        return runtime.config.n_seq_max - 1 if NEAR_TIE_CHECK and runtime else None

    def _draft_policy(self) -> DraftPolicy:
        return self._policy

    def _weights_in_use(self) -> str:
        """The engine.weights in effect: the converted type, or "as-is"."""
        if self.loaded_model_path == self.model_path:
            return "as-is"
        if self.weight_choice is not None:
            return self.weight_choice.weights
        return self._requantize_to or "as-is"

    def _attach_adapter(self, runtime: LlamaRuntime) -> None:
        """A bad adapter costs the fine-tuning, never the engine: log it, say it in
        stats(), serve with the base model."""
        if self._merged is not None:  # in the weights already: nothing to attach
            self.adapter_file, self.adapter_format = self._merged
            return
        if self.adapter_error is not None:  # merging it failed: the base model serves
            return
        choice = resolve(self.adapter_setting, self._custom_model)
        self.adapter_file, self.adapter_format = None, None
        if choice.path is None:
            return
        try:
            self.adapter_format = runtime.attach_adapter(choice.path, formats=self.adapter_formats)
        except AdapterError as exc:
            self.adapter_error = f"{exc}; serving the base model without it"
            logger.warning("%s", self.adapter_error)
        else:
            self.adapter_file = choice.path

    def _model_file(self, on_progress: Callable[[float], None] | None = None) -> Path:
        self.adapter_error, self._merged = None, None  # this load decides them again
        if self._requantize_to is None or self.data_dir is None:
            return self.model_path
        weights = self._requantize_to
        if weights == AUTO:
            weights = self._measured_weights(on_progress)
        self._draft_by_measured_costs(weights)
        merged = self._merged_file(weights) if self.merge_adapter else None
        if merged is not None:
            return merged
        try:
            return requantize(self.model_path, weights, self.data_dir / "models", self.n_threads)
        except (EngineError, OSError) as exc:  # a slower model beats no model
            logger.warning("using %s as it is: %s", self.model_path, exc)
            return self.model_path

    def _merged_file(self, weights: str) -> Path | None:
        """The packaged model converted to `weights` with the adapter merged in (made
        once in the data dir); None without an adapter. A bad adapter is reported in
        stats() and the base model serves, as with an attached one."""
        assert self.data_dir is not None
        choice = resolve(self.adapter_setting, self._custom_model)
        if choice.path is None:
            return None
        try:
            prompt_format = adapter_format_of(choice.path, self.adapter_formats)
            merged = merged_and_converted(
                self.model_path, choice.path, weights, self.data_dir / "models", self.n_threads
            )
        except (AdapterError, EngineError, OSError, ValueError) as exc:
            self.adapter_error = f"{exc}; serving the base model without it"
            logger.warning("%s", self.adapter_error)
            return None
        self._merged = (choice.path, prompt_format)
        return merged

    def _measured_weights(self, on_progress: Callable[[float], None] | None) -> str:
        """engine.weights = "auto": the type measured fastest on this CPU; FALLBACK when
        measuring fails."""
        assert self.data_dir is not None
        try:
            self.weight_choice = choose_weights(
                self.model_path, self.data_dir / "models", self.n_threads, on_progress
            )
        except (EngineError, OSError) as exc:
            logger.warning("engine.weights auto: measuring failed (%s); using %s", exc, FALLBACK)
            return FALLBACK
        return self.weight_choice.weights

    def _draft_by_measured_costs(self, weights: str) -> None:
        """Draft lengths follow the pass costs measured for `weights` on this CPU (this
        start's measurement, else the one saved by an earlier "auto"), where there is one;
        a type set by hand too."""
        assert self.data_dir is not None
        measured = self.weight_choice.curve(weights) if self.weight_choice is not None else None
        curve = measured or saved_curve(self.data_dir / "models", weights)
        if curve is not None:
            self._policy = DraftPolicy(cost_curve=curve)


def sequence_cells(n_ctx: int, n_ctx_train: int) -> int:
    """Each sequence's KV cells: the context, but no more than the model was trained on."""
    return min(n_ctx, n_ctx_train) if n_ctx_train > 0 else n_ctx


def kv_sequences(kv_cache_mb: float, cells: int, bytes_per_token: int) -> int:
    """How many sequences (streams of `cells` each) the KV memory budget holds, within
    MIN_SEQUENCES..RESIDENT_PREFIXES."""
    fits = int(kv_cache_mb * MB) // max(cells * bytes_per_token, 1)
    return max(MIN_SEQUENCES, min(fits, RESIDENT_PREFIXES))


def check_kv_type(shape: ModelShape, kv: KvType) -> None:
    """llama.cpp quantizes a KV row per head: the head sizes must be whole blocks."""
    dims = {shape.head_dim_k, shape.head_dim_v}
    if any(dim % kv.block_elements for dim in dims):
        raise ModelLoadError(
            f"engine.kv_type = {kv.name!r} needs head sizes that are multiples of "
            f"{kv.block_elements}; this model's are {sorted(dims)}: use 'f16'"
        )
