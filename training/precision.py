"""Which precision to train in, chosen by timing one small step each way.

bf16 autocast trained SmolLM2-135M 1.5x faster than fp32 on a CPU with AVX-512 BF16
(188 against 127 tok/s), but on an AVX2-only CPU torch has no fast bf16 matrix kernel
and falls back to a scalar one: a step ran at 4 tok/s, 40x slower than fp32. The CPU's
flags do not say which path torch takes, so measure: a forward and backward pass over
a batch as long as a training one in each precision, the better of two runs (the first
pays for kernel selection), and train in the faster one.

The length matters: on an AVX-512 BF16 EPYC a 32-token step ran 0.85 s in bf16 against
0.37 s in fp32 (casts dominate tiny matrices), while 2 x 512 tokens ran 3.6 s against
7.3 s. A short step first catches the scalar fallback cheaply (there a long bf16 step
would take minutes); only when bf16 is not hopeless is the long step timed.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

PRECISIONS = ("auto", "bf16", "fp32")
SHORT_PROBE_TOKENS = 32
PROBE_TOKENS = 512  # about one training example
SCALAR_FALLBACK = 4.0  # bf16 this many times slower than fp32 on the short step: no kernel


def autocast(precision: str, device: str = "cpu") -> contextlib.AbstractContextManager[Any]:
    """The context a forward pass runs in: bf16 autocast (on `device`'s kind), or fp32."""
    import torch

    if precision == "bf16":
        return torch.autocast(device.split(":")[0], dtype=torch.bfloat16)
    return contextlib.nullcontext()


def step_seconds(model: Any, precision: str, tokens: int = PROBE_TOKENS) -> float:
    """Seconds for one forward and backward pass over `tokens` tokens (gradients are
    cleared after, so the probe leaves training untouched)."""
    import torch

    ids = (torch.arange(tokens) % 50 + 1).unsqueeze(0)  # any ids: only the time counts
    best = float("inf")
    for _ in range(2):
        started = time.perf_counter()
        with autocast(precision):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        best = min(best, time.perf_counter() - started)
    model.zero_grad(set_to_none=True)
    return best


Timer = Callable[[Any, str, int], float]


def choose(model: Any, requested: str, timer: Timer = step_seconds) -> tuple[str, dict[str, float]]:
    """The precision to train in and the probe's timings (empty when not measured;
    keys "fp32"/"bf16" for the long step, with "_short" for the short one)."""
    if requested not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, not {requested!r}")
    if requested != "auto":
        return requested, {}
    short = {f"{p}_short": round(timer(model, p, SHORT_PROBE_TOKENS), 4) for p in ("fp32", "bf16")}
    if short["bf16_short"] > SCALAR_FALLBACK * short["fp32_short"]:
        return "fp32", short
    timings = {p: round(timer(model, p, PROBE_TOKENS), 4) for p in ("fp32", "bf16")}
    return min(timings, key=lambda p: timings[p]), {**short, **timings}
