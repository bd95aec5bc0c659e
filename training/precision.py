"""Which precision to train in, chosen by timing one small step each way.

bf16 autocast trained SmolLM2-135M 1.5x faster than fp32 on a CPU with AVX-512 BF16
(188 against 127 tok/s), but on an AVX2-only CPU torch has no fast bf16 matrix kernel
and falls back to a scalar one: a step ran at 4 tok/s, 40x slower than fp32. The CPU's
flags do not say which path torch takes, so measure: a forward and backward pass over
a few dozen tokens in each precision, the second of two runs (the first pays for
kernel selection), and train in the faster one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

PRECISIONS = ("auto", "bf16", "fp32")
PROBE_TOKENS = 32


def autocast(precision: str) -> contextlib.AbstractContextManager[Any]:
    """The context a forward pass runs in: bf16 autocast, or plain fp32."""
    import torch

    if precision == "bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def step_seconds(model: Any, precision: str, tokens: int = PROBE_TOKENS) -> float:
    """Seconds for one forward and backward pass over `tokens` tokens (gradients are
    cleared after, so the probe leaves training untouched)."""
    import torch

    ids = torch.arange(1, tokens + 1).unsqueeze(0)
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        with autocast(precision):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        best = min(best, time.perf_counter() - started)
    model.zero_grad(set_to_none=True)
    return best


def choose(
    model: Any, requested: str, timer: Callable[[Any, str], float] = step_seconds
) -> tuple[str, dict[str, float]]:
    """The precision to train in and the probe's timings (empty when not measured)."""
    if requested not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, not {requested!r}")
    if requested != "auto":
        return requested, {}
    timings = {p: round(timer(model, p), 4) for p in ("fp32", "bf16")}
    return min(timings, key=lambda p: timings[p]), timings
