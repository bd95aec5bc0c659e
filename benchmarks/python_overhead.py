"""The Python share of decoding: time outside llama.cpp's forward passes, per token.

The engine's decoding loops (inference/engines/local/decoding.py, speculative.py) run in Python
around `llama_decode`: it fills the batch, takes the argmax and the top-2 gap, the
log-probability of each kept token, the text of each token, the KV bookkeeping. Here
`llama_cpp.llama_decode` is timed in place (the runtime calls it through the module),
and the rest of each request's wall time is the Python overhead. Side by side in one
run: plain greedy decoding, speculative rewrites at copy fraction 1.0 and 0.9, and a
rewrite with n = 3 candidates (what a next-edit request runs). Target: under 5% of the
decode time (issue 12). Also the functions that take the most Python time (cProfile,
self time, llama_decode excluded). Prints one JSON line.

    python -m benchmarks.python_overhead [--quick] [--data-dir DIR]
"""

from __future__ import annotations

import contextlib
import cProfile
import pstats
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import llama_cpp
from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.engines.local.cpu_load import physical_cores

from benchmarks.common.cli import run_model_benchmark
from benchmarks.common.speculative import PROMPTS, make_draft

TARGET_SHARE = 0.05
TOP_FUNCTIONS = 6


class NativeClock:
    """Accumulates the seconds spent inside llama_decode while installed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        original = llama_cpp.llama_decode

        def timed(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1

        llama_cpp.llama_decode = timed
        try:
            yield
        finally:
            llama_cpp.llama_decode = original


Workload = Callable[[LlamaCppEngine, str, str, int], Any]


def workloads(reference: dict[str, str]) -> dict[str, Workload]:
    import random

    rng = random.Random(7)
    near = {prompt: make_draft(text, 0.9, rng) for prompt, text in reference.items()}
    return {
        "greedy": lambda e, p, d, m: e.rewrite(p, d, m, speculative=False),
        "speculative_p1.0": lambda e, p, d, m: e.rewrite(p, d, m),
        "speculative_p0.9": lambda e, p, d, m: e.rewrite(p, near[p], m),
        "rewrite_n3_p0.9": lambda e, p, d, m: e.rewrite(p, near[p], m, n=3),
    }


def measure(
    engine: LlamaCppEngine, work: Workload, reference: dict[str, str], max_tokens: int
) -> dict[str, float]:
    """Wall and native seconds of the decode (the prompt is warmed first and its
    prefill left out: it is one native pass either way)."""
    clock = NativeClock()
    wall, tokens = 0.0, 0
    for prompt, text in reference.items():
        engine.warm(prompt)
        with clock.installed():
            started = time.perf_counter()
            result = work(engine, prompt, text, max_tokens)
            wall += time.perf_counter() - started
        tokens += max(1, len(result.token_ids))
    python_s = max(0.0, wall - clock.seconds)
    return {
        "wall_s": round(wall, 4),
        "native_s": round(clock.seconds, 4),
        "passes": clock.calls,
        "tokens": tokens,
        "python_share": round(python_s / wall, 4) if wall else 0.0,
        "python_us_per_token": round(1e6 * python_s / tokens, 1),
    }


def profile(
    engine: LlamaCppEngine, work: Workload, reference: dict[str, str], n: int
) -> list[list[Any]]:
    """The Python functions with the most self time. llama_decode runs inside the
    clock's wrapper (`timed`), whose self time is the native pass: left out."""
    profiler = cProfile.Profile()
    with NativeClock().installed():
        profiler.enable()
        for prompt, text in reference.items():
            work(engine, prompt, text, n)
        profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    rows = [
        (f"{Path(file).name}:{line}:{name}", self_s)
        for (file, line, name), (_, _, self_s, _, _) in stats.items()
        if name != "timed" and "CFunctionType" not in name
    ]
    rows.sort(key=lambda row: -row[1])
    return [[label, round(1000 * s, 1)] for label, s in rows[:TOP_FUNCTIONS]]


def run(quick: bool, data_dir: Path) -> dict[str, Any]:
    max_tokens = 32 if quick else 128
    prompts = PROMPTS[:1] if quick else PROMPTS
    # a fixed thread count: the sides compared must not differ by the CPU's load
    engine = LlamaCppEngine(
        n_ctx=2048, kv_cache_mb=64, data_dir=data_dir, n_threads=physical_cores()
    )
    try:
        reference = {
            p: engine.rewrite(p, "x", max_tokens, speculative=False).texts[0] for p in prompts
        }
        kinds = workloads(reference)
        figures = {
            name: measure(engine, work, reference, max_tokens) for name, work in kinds.items()
        }
        top = profile(engine, kinds["rewrite_n3_p0.9"], reference, max_tokens)
        model = engine.loaded_model_path.name
    finally:
        engine.close()
    worst = max(f["python_share"] for f in figures.values())
    return {
        "benchmark": "python_overhead",
        "quick": quick,
        "model": model,
        "max_tokens": max_tokens,
        "prompts": len(prompts),
        **figures,
        "worst_python_share": worst,
        "target_share": TARGET_SHARE,
        "meets_target": worst < TARGET_SHARE,
        "top_python_ms_rewrite_n3": top,
    }


def main() -> int:
    return run_model_benchmark(__doc__.splitlines()[0], run)


if __name__ == "__main__":
    sys.exit(main())
