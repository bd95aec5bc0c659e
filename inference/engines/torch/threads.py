"""How many CPU threads the torch engine's forward passes use: measured, not assumed.

torch runs a pass of two or more tokens as a GEMM split over its intra-op (OpenMP)
threads, and each operator waits for all of them. When other processes keep the cores
busy (a build, a training run: the usual neighbours of an editor daemon) one of those
threads is often off the CPU, and a verification pass of a few draft tokens can cost
many one-token decode steps, which makes speculative edits slower than greedy decoding.
One thread has no such cliff. So on the CPU the engine times a typical verification pass with one
thread and with every core, and keeps the faster (unless engine.threads is set)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

PROBE_TOKENS = 17  # a verification pass of a 16-token draft
PROBE_RUNS = 3
GIVE_UP_FACTOR = 2.0  # a candidate whose first run is this much slower is not run again


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    seconds: dict[int, float]  # median probe pass per thread count (the first run alone
    # for a candidate given up early)


def choose_threads(model: Any, candidates: Sequence[int]) -> ThreadChoice:
    """Set torch's intra-op thread count to the fastest of `candidates` for a probe pass."""
    import torch

    ids = torch.zeros((1, PROBE_TOKENS), dtype=torch.long)
    seconds: dict[int, float] = {}
    with torch.inference_mode():
        for index, threads in enumerate(dict.fromkeys(candidates)):
            torch.set_num_threads(threads)
            if index == 0:
                model(input_ids=ids, use_cache=False)  # first-call costs, once
            seconds[threads] = _median_pass(model, ids, min(seconds.values(), default=None))
    best = min(seconds, key=lambda n: seconds[n])
    torch.set_num_threads(best)
    return ThreadChoice(best, seconds)


def _median_pass(model: Any, ids: Any, best_so_far: float | None) -> float:
    runs: list[float] = []
    for _ in range(PROBE_RUNS):
        started = time.perf_counter()
        model(input_ids=ids, use_cache=False, logits_to_keep=PROBE_TOKENS)
        runs.append(time.perf_counter() - started)
        if best_so_far is not None and runs[0] > GIVE_UP_FACTOR * best_so_far:
            break
    return statistics.median(runs)
