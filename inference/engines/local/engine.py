"""LocalEngine: the request handling of the engines that run the model in this process
(LlamaCppEngine, TorchEngine): the request gate (real requests first, warming preempted),
prompt truncation, generation over the prefix cache (greedy, speculative edits, n
candidates, streaming, cancellation), totals and stats. A subclass opens its runtime
and prefix cache (`_open`: llama.cpp's, or torch's runtime with the same operations) and
names itself (`kind`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from ..api import (
    CacheInfo,
    CancelFlag,
    Completion,
    EngineError,
    EngineNotReady,
    RequestLimits,
    RequestStats,
    check_request,
    truncate_prompt,
)
from ..model_files import default_model_path
from ..text_output import Emit
from .cpu_load import physical_cores
from .decoding import SequenceWriter, prefill_only
from .draft import DraftPolicy
from .engine_time import EngineTime
from .generation import (
    ALTERNATIVE_MIN_P,
    DRAFT_POLICY,
    GenerationRequest,
    RequestPrompt,
    request_prompt,
    run_generation,
)
from .healing import Vocabulary
from .kv_cache import PrefixCache
from .runtime import Interrupted, Runtime
from .scheduling import (
    Preempted,
    RequestGate,
    cancel_guard,
    not_stopped,
    stopped_when_cancelled,
    warm_guard,
)

# Sequences for cached prompt prefixes: eight editors in their own file and a shared one
# each keep their prompts (the KV budget, not this, bounds the tokens they hold).
RESIDENT_PREFIXES = 16
MAX_CANDIDATES = 8  # n limit of complete(); candidates beyond the first borrow sequences
PREFILL_CHUNK = 128  # real requests: a cancel waits for one such forward pass at most
WARM_CHUNK = 64  # warming passes (a real request stops one it does not need: WarmPass)
MB = 1024 * 1024
# RequestStats fields summed over requests in stats()
TOTALS = (
    "prompt_tokens", "reused_prompt_tokens", "evaluated_prompt_tokens", "generated_tokens",
    "draft_tokens", "accepted_draft_tokens", "near_ties", "near_tie_flips", "healed_tokens",
)  # fmt: skip


R = TypeVar("R", bound=Runtime)


@dataclass(frozen=True)
class WarmPass:
    """The warm that holds the engine: its prompt and the writer prefilling it."""

    tokens: list[int]
    writer: SequenceWriter

    def needed_by(self, needs: Sequence[int] | None) -> bool:
        """True when the request's prompt starts with all the sequence will hold once the
        pass in flight ends: stopping the pass would only make the request prefill the
        same tokens itself. Read from another thread: writer.tokens grows after each
        pass, so between two passes this judges the next one, which never starts
        (warm_guard)."""
        if needs is None:
            return False
        end = min(len(self.writer.tokens) + WARM_CHUNK, len(self.tokens))
        return len(needs) >= end and list(needs[:end]) == self.tokens[:end]


class LocalEngine(Generic[R]):
    """See docs/CONTRACTS.md. A subclass's constructor calls `load()` unless told not to;
    requests before it ends get EngineNotReady."""

    kind = "local"  # stats()["engine"]
    device: str | None = "cpu"  # where the model runs (a subclass may choose at load)

    def __init__(
        self,
        model_path: str | Path | None,
        n_ctx: int,
        n_threads: int | None,
        kv_cache_mb: float,
        data_dir: Path | None,
        adapter: str | None,
        adapter_formats: Collection[str] | None,
    ) -> None:
        """With no model_path the packaged model. `adapter` (the `engine.adapter`
        setting): "default" (the packaged LoRA adapter, on the packaged model, when the
        package has one), "none", or a path; one that cannot be used is reported in
        stats() and the base model serves, as does one trained on a prompt format not in
        `adapter_formats` (when given)."""
        if n_ctx < 64:
            raise EngineError(f"n_ctx must be at least 64, got {n_ctx}")
        if kv_cache_mb <= 0:
            raise EngineError(f"kv_cache_mb must be positive, got {kv_cache_mb}")
        self.model_path = Path(model_path) if model_path else default_model_path()
        self.data_dir = data_dir
        self.loaded_model_path = self.model_path
        self.adapter_setting = adapter or "default"
        self._custom_model = model_path is not None and bool(model_path)
        self.adapter_file: Path | None = None
        self.adapter_error: str | None = None
        # n > 1: alternatives only where the model is unsure (generation.py); 0.0: always
        self.alternative_min_p = ALTERNATIVE_MIN_P
        self.adapter_formats = adapter_formats
        self.adapter_format: str | None = None  # the prompt format the adapter names
        self.n_ctx = n_ctx
        self.n_threads = n_threads or physical_cores()
        self.kv_cache_mb = kv_cache_mb
        self._gate = RequestGate(interrupt_background=self._interrupt_warming)
        self._state = "idle"
        self._runtime: R | None = None
        self._cache: PrefixCache | None = None
        self._vocabulary: Vocabulary | None = None  # the runtime's, built at load
        self._warming: WarmPass | None = None  # set while a warm prefills
        self._totals: dict[str, float] = {}
        self._time = EngineTime()
        self._cache_snapshot: CacheInfo | None = None

    # lifecycle

    def load(self, on_progress: Callable[[float], None] | None = None) -> None:
        self._state = "loading"
        try:
            runtime, cache = self._open(on_progress)
        except BaseException:
            self._state = "failed"
            raise
        # built here, not at the first healed request: ghost text asked first after a
        # load would otherwise wait for it (0.3-0.8 s)
        self._runtime, self._cache, self._vocabulary = runtime, cache, Vocabulary(runtime)
        self._cache_snapshot = cache.info(runtime.kv_bytes_per_token())
        self._state = "ready"

    def _open(self, on_progress: Callable[[float], None] | None) -> tuple[R, PrefixCache]:
        """The runtime and its prefix cache, the model (and adapter) loaded."""
        raise NotImplementedError

    @property
    def state(self) -> str:
        return self._state

    def close(self) -> None:
        with self._gate.real():
            if self._runtime is not None:
                self._runtime.close()
            self._runtime, self._cache, self._vocabulary = None, None, None
            self._state = "closed"

    def _interrupt_warming(self, needs: Sequence[int] | None) -> None:
        """A real request that will prefill `needs` waits behind warming (RequestGate):
        stop the pass in flight unless the request needs its tokens."""
        runtime, warming = self._runtime, self._warming
        if runtime is not None and (warming is None or not warming.needed_by(needs)):
            runtime.interrupt()

    def _ready(self) -> tuple[R, PrefixCache]:
        if self._runtime is None or self._cache is None:
            raise EngineNotReady(f"the model is not ready (engine state: {self._state})")
        return self._runtime, self._cache

    # public requests

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        """`special`: parse control strings as control tokens, as prompts are parsed."""
        runtime, _ = self._ready()
        return runtime.tokenize(text, add_bos=False, special=special)

    def warm(self, prompt: str, cancel: threading.Event | None = None) -> RequestStats:
        """Prefill `prompt` into the cache at low priority; stops early (stats.preempted) as
        soon as a real request waits, keeping what it computed."""
        self._ready()
        with self._gate.background():
            runtime, cache = self._ready()
            self._before_request(runtime)
            stats = RequestStats()
            started = time.perf_counter()
            tokens = self._prompt_tokens(runtime, prompt, 0, stats)
            if cache.holds(tokens):  # placed, it would cut the answer after it (a draft)
                stats.reused_prompt_tokens = len(tokens)
                return stats
            # room for a padded pass's cells too (pass_plan.py)
            placement = cache.place(tokens, len(tokens) + runtime.pass_tile, need_logits=False)
            writer = SequenceWriter(
                runtime,
                placement.seq,
                tokens[: placement.reused],
                lambda: warm_guard(self._gate, cancel),
            )
            stats.reused_prompt_tokens = placement.reused
            self._warming = WarmPass(tokens, writer)
            try:
                with runtime.interruptible():
                    prefill_only(writer, tokens, WARM_CHUNK)
            except (Preempted, Interrupted):
                stats.preempted = True
            finally:
                self._warming = None
                cache.record(writer.seq, writer.tokens)
                self._finish(stats, writer, placement.reused, started)
                self._time.add("warm", stats, ended=not stats.preempted)
            return stats

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
        """`heal`: token healing (healing.py)."""
        check_request(self._limits(), max_tokens, n, min_token_p=min_token_p)
        return self._generate(
            prompt, None, max_tokens, stop, n, cancel, None, min_token_p, heal=heal
        )

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
        """n > 1: the alternatives leave the best rewrite where it starts editing (see
        generation.branch_position). `min_token_p` judges the best candidate's changes
        only, and only when speculative (the draft tells a change from a copy)."""
        check_request(self._limits(), max_tokens, n, draft=draft, min_token_p=min_token_p)
        mode = "speculative" if speculative else "greedy"
        judged = min_token_p if speculative else 0.0
        return self._generate(prompt, (draft, mode), max_tokens, stop, n, cancel, None, judged)

    def clear_cache(self) -> None:
        """Drop every resident prefix (the next request starts cold)."""
        with self._gate.real():
            _, cache = self._ready()
            cache.clear()

    def cache_info(self) -> CacheInfo:
        runtime, cache = self._ready()
        with self._gate.real():
            return cache.info(runtime.kv_bytes_per_token())

    def stats(self) -> dict[str, Any]:
        """Never blocks (the daemon may call it from its event loop): the cache figures are
        those after the last request."""
        info = self._cache_snapshot.to_dict() if self._cache_snapshot is not None else None
        return {
            "state": self._state,
            "engine": self.kind,
            "device": self.device,
            "model": str(self.loaded_model_path),
            "adapter": str(self.adapter_file) if self.adapter_file else None,
            "adapter_setting": self.adapter_setting,
            "adapter_error": self.adapter_error,
            "adapter_format": self.adapter_format,
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "cache": info,
            "totals": dict(self._totals),
            "time_by_kind": self._time.to_dict(),
        }

    # internals

    def _draft_policy(self) -> DraftPolicy:
        """Draft lengths by the pass costs of this engine's weights (llama.cpp: measured
        when engine.weights is "auto"; otherwise draft.py's Q8_0 table)."""
        return DRAFT_POLICY

    def _before_request(self, runtime: R) -> None:
        """Inside the gate, before a request computes (llama.cpp: choose its threads)."""

    def _tie_seq(self) -> int | None:
        """A scratch sequence for near-tie re-decisions (speculative.py), or None: off."""
        return None

    def _limits(self) -> RequestLimits:
        return RequestLimits(n_ctx=self.n_ctx, max_candidates=MAX_CANDIDATES)

    def _prompt_tokens(
        self, runtime: Runtime, prompt: str, reserve: int, stats: RequestStats
    ) -> list[int]:
        tokens = runtime.tokenize(prompt, add_bos=True, special=True)
        if not tokens:
            raise EngineError("empty prompt")
        tokens, dropped = truncate_prompt(tokens, self.n_ctx - reserve, runtime.add_bos)
        stats.prompt_tokens = len(tokens)
        stats.truncated_prompt_tokens = dropped
        return tokens

    def _generate(
        self,
        prompt: str,
        draft: tuple[str, str] | None,
        max_tokens: int,
        stop: Sequence[str],
        n: int,
        cancel: CancelFlag | None,
        emit: Emit | None,
        min_token_p: float = 0.0,
        heal: bool = False,
    ) -> Completion:
        runtime, _ = self._ready()
        request = GenerationRequest(
            prompt,
            draft,
            max_tokens,
            tuple(stop),
            n,
            emit,
            PREFILL_CHUNK,
            self._tie_seq(),
            self._draft_policy(),
            self.alternative_min_p,
            min_token_p,
            heal,
        )
        # tokenized before the wait (as tokenize() is): a warm in flight is judged by it
        prepared = request_prompt(runtime, request, self._prompt_tokens, self._vocabulary)
        urgent, needs = draft is None, prepared.healed.tokens
        with self._gate.real(urgent, needs, cancel) as turn:
            runtime, cache = self._ready()
            self._before_request(runtime)
            lend = turn.lend_to_urgent if draft is not None else None
            completion = self._timed_generation(runtime, cache, request, prepared, cancel, lend)
            self._add_totals(completion.stats)
            return completion

    def _timed_generation(
        self,
        runtime: R,
        cache: PrefixCache,
        request: GenerationRequest,
        prepared: RequestPrompt,
        cancel: CancelFlag | None,
        lend: Callable[[], bool] | None,
    ) -> Completion:
        """run_generation, its time counted (a cancelled call's too). A plain
        continuation stops in its pass when cancelled; a rewrite, which lends the engine
        between its passes (`lend`), only between them."""
        kind, stopping = (
            ("complete", stopped_when_cancelled) if lend is None else ("rewrite", not_stopped)
        )
        ended = False
        try:
            with stopping(runtime, cancel):
                completion = run_generation(
                    runtime, cache, request, prepared, lambda: cancel_guard(cancel), lend
                )
            ended = True
            return completion
        finally:
            self._time.add(kind, prepared.stats, ended)

    def _finish(
        self, stats: RequestStats, writer: SequenceWriter, reused: int, started: float
    ) -> None:
        stats.evaluated_prompt_tokens = len(writer.tokens) - reused
        stats.forward_passes = writer.passes
        stats.seconds = time.perf_counter() - started
        self._add_totals(stats)

    def _add_totals(self, stats: RequestStats) -> None:
        if self._runtime is not None and self._cache is not None:  # called inside the gate
            self._cache_snapshot = self._cache.info(self._runtime.kv_bytes_per_token())
        for key in TOTALS:
            self._totals[key] = self._totals.get(key, 0) + getattr(stats, key)
        self._totals["requests"] = self._totals.get("requests", 0) + 1
