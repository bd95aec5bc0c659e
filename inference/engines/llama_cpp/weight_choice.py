"""engine.weights = "auto": the packaged model's weight type chosen by measurement.

Which type answers a next edit fastest depends on the CPU (BF16 where the CPU has BF16
kernels, F16 or Q8_0 elsewhere: docs/MEASUREMENTS.md), so at first start, and again when
the CPU or llama.cpp's build changes, each candidate is made from the packaged Q4_1
(requantized once, cached beside the others), loaded and timed: a decode step and passes
of PASS_SIZES tokens.
The one with the lowest expected next-edit time (a cold prompt prefilled, then a rewrite
that copies most of its draft) wins. The choice, the timings and the CPU they were
measured on are kept in the data dir; `daemon status` shows them. Candidates are the
types the Q4_1 weights convert to losslessly or nearly: Q4_0 is left out (it rounds every
weight again; benchmarks/requantize.py).

Other processes distort the timings even as minima over rounds (a busy machine times a
decode step several times slower than an idle one, and the pass-cost curve then sets
the draft lengths). A measurement while others kept more than BUSY_LIMIT cores busy is
provisional: used, and measured again at the next start, up to MAX_ATTEMPTS times, after
which the last one stands. When others already keep more than BUSY_LIMIT cores busy
before it starts, timing is deferred to a later start (the passes of a starved llama.cpp
crawl: a first start would wait minutes for figures that would not be kept) and
FALLBACK, or the last provisional choice, serves meanwhile."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import llama_cpp

from ..local.cpu_load import CPUINFO, CpuTimes, others_busy, physical_cores, read_times
from .requantize import requantize
from .runtime import ContextConfig, LlamaRuntime

logger = logging.getLogger(__name__)

AUTO = "auto"
CANDIDATES = ("q8_0", "bf16", "f16")
FALLBACK = "q8_0"
CHOICE_FILE = "weights-choice.json"
# passes of k + 1 tokens for draft.py's ladder of draft lengths (the pending token + k)
PASS_SIZES = (9, 17, 33, 64, 128)
# Tokens in the KV before each timed pass: a next-edit prompt's length. Attention's cost
# grows with it, and unevenly: where llama.cpp's tiled kernel starts (64 rows), a pass of
# 33 after 512 tokens costs more than one of 64, and after 128 less.
PROMPT = 512
# How the timed passes attend (runtime.py's defaults): a saved choice timed another way
# is measured again.
ATTENTION = "a KV stream per sequence, flash attention off"
REPEATS = 5
# The next edit the estimate stands for: a prompt's cold part prefilled, then a rewrite
# of the editable window whose tokens are mostly copied from the draft (verified in
# passes of 64) and the rest decoded one at a time.
COLD_PROMPT_TOKENS = 256
REWRITE_TOKENS = 96
COPY_FRACTION = 0.9
SAMPLE = Path(__file__)  # real code to time passes over (this very file)
BUSY_LIMIT = 0.25  # cores other processes may use during a measurement that is kept
MAX_ATTEMPTS = 3  # provisional measurements before one is kept anyway
BUSY_PROBE_S = 0.5  # how long other processes' load is watched before timing begins


@dataclass(frozen=True)
class WeightTiming:
    weights: str
    step_s: float  # one single-token decode step
    pass_s: dict[int, float]  # a pass of k tokens (logits on every position), seconds

    def cost_curve(self) -> tuple[tuple[int, float], ...]:
        """A pass of k tokens in decode steps (draft.PASS_COST's shape)."""
        return ((1, 1.0), *((k, self.pass_s[k] / self.step_s) for k in sorted(self.pass_s)))

    def expected_next_edit_s(self) -> float:
        prefill = COLD_PROMPT_TOKENS / 128 * self.pass_s[128]
        copied = REWRITE_TOKENS * COPY_FRACTION
        return prefill + copied / 63 * self.pass_s[64] + (REWRITE_TOKENS - copied) * self.step_s


@dataclass(frozen=True)
class WeightChoice:
    weights: str
    cpu: str  # the CPU signature the timings were measured on
    timings: tuple[WeightTiming, ...]
    measured_now: bool = False  # False: read from the data dir
    others_busy: float = 0.0  # cores other processes used while it was measured
    attempts: int = 1  # measurements so far, the provisional ones included
    deferred: bool = False  # not timed at this start: the machine was busy

    @property
    def provisional(self) -> bool:
        """Measured on a busy machine, or not yet: measured again at the next start."""
        if self.deferred:
            return True
        return self.others_busy > BUSY_LIMIT and self.attempts < MAX_ATTEMPTS

    def describe(self) -> dict[str, Any]:
        return {
            "choice": self.weights,
            "cpu": self.cpu,
            "others_busy_cores": round(self.others_busy, 2),
            "provisional": self.provisional,
            "deferred": self.deferred,
            "expected_next_edit_ms": {
                t.weights: round(1000 * t.expected_next_edit_s(), 1) for t in self.timings
            },
            "pass_cost_steps": {
                t.weights: {str(k): round(c, 2) for k, c in t.cost_curve()} for t in self.timings
            },
        }

    def curve(self, weights: str | None = None) -> tuple[tuple[int, float], ...] | None:
        """The pass-cost curve measured for `weights` (None: the chosen type)."""
        for timing in self.timings:
            if timing.weights == (weights or self.weights):
                return timing.cost_curve()
        return None


def cpu_signature(cpuinfo: str | None = None, kernels: str | None = None) -> str:
    """The CPU's model name, feature flags and core count, and the kernels llama.cpp
    was built with (built_kernels()), hashed: the timings hold for this CPU and this
    build only (a build without AVX-512 kernels on the same CPU is another machine)."""
    try:
        text = CPUINFO.read_text() if cpuinfo is None else cpuinfo
    except OSError:
        text = ""
    kernels = built_kernels() if kernels is None else kernels
    first = text.split("\n\n")[0]
    fields = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in first.splitlines())
    )
    flags = " ".join(sorted(fields.get("flags", "").split()))
    raw = f"{fields.get('model name', '?')}|{flags}|{physical_cores(text)}|{kernels}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def built_kernels() -> str:
    """llama.cpp's CPU features line ("CPU : SSE3 = 1 | AVX2 = 1 | ...")."""
    info = llama_cpp.llama_print_system_info().decode(errors="replace")
    return next((part for part in info.split("\n") if part.startswith("CPU")), info).strip()


def choose_weights(
    source: Path,
    cache_dir: Path,
    n_threads: int,
    on_progress: Callable[[float], None] | None = None,
    candidates: Sequence[str] | None = None,
) -> WeightChoice:
    """The cached choice for this CPU, else a new measurement (saved). Raises what
    requantizing or loading raises; the caller falls back to FALLBACK."""
    candidates = candidates or CANDIDATES
    signature = cpu_signature()
    cached = load_choice(cache_dir / CHOICE_FILE, signature)
    if cached is not None and cached.weights in candidates and not cached.provisional:
        return cached
    busy = busy_now()
    if busy > BUSY_LIMIT:
        weights = cached.weights if cached is not None else FALLBACK
        requantize(source, weights, cache_dir, n_threads)
        logger.info("engine.weights auto: timing deferred (others busy %.2f cores)", busy)
        return WeightChoice(
            weights,
            signature,
            cached.timings if cached is not None else (),
            False,
            busy,
            cached.attempts if cached is not None else 0,
            deferred=True,
        )
    paths = []
    for index, weights in enumerate(candidates):
        paths.append(requantize(source, weights, cache_dir, n_threads))
        if on_progress is not None:
            on_progress((index + 1) / (len(candidates) + 1))
    before = read_times(nice_weight=1.0)
    timings = time_side_by_side(dict(zip(candidates, paths, strict=True)), n_threads, on_progress)
    busy = _busy_since(before)
    best = min(timings, key=lambda t: t.expected_next_edit_s())
    attempts = cached.attempts + 1 if cached is not None and cached.provisional else 1
    choice = WeightChoice(best.weights, signature, tuple(timings), True, busy, attempts)
    save_choice(cache_dir / CHOICE_FILE, choice)
    logger.info("engine.weights auto: %s", json.dumps(choice.describe()))
    return choice


def busy_now() -> float:
    """Cores other processes keep busy, watched for BUSY_PROBE_S."""
    before = read_times(nice_weight=1.0)
    time.sleep(BUSY_PROBE_S)
    return _busy_since(before)


def _busy_since(before: CpuTimes | None) -> float:
    after = read_times(nice_weight=1.0)
    return 0.0 if before is None or after is None else others_busy(before, after)


def time_side_by_side(
    paths: dict[str, Path], n_threads: int, on_progress: Callable[[float], None] | None = None
) -> list[WeightTiming]:
    """A decode step and passes of PASS_SIZES tokens after a PROMPT-token prompt, for every
    candidate in turn, REPEATS rounds: the fastest of each (a busy machine slows single
    runs; interleaving and the minimum keep that from choosing)."""
    runtimes: dict[str, LlamaRuntime] = {}
    try:
        for weights, path in paths.items():
            runtimes[weights] = _timing_runtime(path, n_threads)
        best: dict[str, dict[int, float]] = {w: {} for w in runtimes}
        tokens = next(iter(runtimes.values())).tokenize(SAMPLE.read_text(), add_bos=True)
        for repeat in range(REPEATS):
            if on_progress is not None:  # the last share of the load, after the conversions
                on_progress((len(paths) + repeat / REPEATS) / (len(paths) + 1))
            for weights, runtime in runtimes.items():
                for k in (1, *PASS_SIZES):
                    seconds = _timed_pass(runtime, tokens, k)
                    best[weights][k] = min(best[weights].get(k, seconds), seconds)
    finally:
        for runtime in runtimes.values():
            runtime.close()
    return [WeightTiming(w, times.pop(1), times) for w, times in best.items()]


def _timing_runtime(path: Path, n_threads: int) -> LlamaRuntime:
    runtime = LlamaRuntime(path, None)
    try:
        top = max(PASS_SIZES)
        config = ContextConfig(PROMPT + top, n_seq_max=1, n_threads=n_threads, n_batch=top)
        runtime.open_context(config)
        prompt = runtime.tokenize(SAMPLE.read_text(), add_bos=True)[:PROMPT]
        for start in range(0, PROMPT, top):
            runtime.decode(prompt[start : start + top], 0, start, [])
    except BaseException:
        runtime.close()
        raise
    return runtime


def _timed_pass(runtime: LlamaRuntime, tokens: list[int], k: int) -> float:
    """k tokens after the prompt, logits on each (as a verification pass); then undone."""
    started = time.perf_counter()
    runtime.decode(tokens[PROMPT : PROMPT + k], 0, PROMPT, list(range(k)))
    seconds = time.perf_counter() - started
    runtime.seq_remove(0, PROMPT, -1)
    return seconds


def load_choice(path: Path, signature: str) -> WeightChoice | None:
    """The saved choice when it was measured on this CPU, as PROMPT and ATTENTION say;
    None otherwise or unreadable."""
    try:
        data = json.loads(path.read_text())
        same_timing = data.get("prompt_tokens") == PROMPT and data.get("attention") == ATTENTION
        if data.get("cpu") != signature or not same_timing:
            return None  # another CPU, or timed after a prompt of another length or so
        timings = tuple(
            WeightTiming(
                t["weights"], float(t["step_s"]), {int(k): float(v) for k, v in t["pass_s"].items()}
            )
            for t in data["timings"]
        )
        busy, attempts = float(data.get("others_busy", 0.0)), int(data.get("attempts", 1))
        return WeightChoice(str(data["weights"]), signature, timings, False, busy, attempts)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def saved_curve(cache_dir: Path, weights: str) -> tuple[tuple[int, float], ...] | None:
    """The pass-cost curve of `weights` from the choice saved for this CPU, where "auto"
    measured one: a type set by hand then drafts by its measured costs too."""
    saved = load_choice(cache_dir / CHOICE_FILE, cpu_signature())
    return saved.curve(weights) if saved is not None else None


def save_choice(path: Path, choice: WeightChoice) -> None:
    """Atomically (temp file, rename): a crash mid-write leaves the old file or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "weights": choice.weights,
        "cpu": choice.cpu,
        "prompt_tokens": PROMPT,
        "attention": ATTENTION,
        "timings": [asdict(t) for t in choice.timings],
        "others_busy": choice.others_busy,
        "attempts": choice.attempts,
    }
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(data, indent=1))
    os.replace(partial, path)
