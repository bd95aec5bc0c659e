"""Speculative edits vs plain greedy decoding, side by side in one run.

Drafts are the model's own greedy output with a copy fraction p kept (1.0, 0.9, 0.7, 0.0;
the rest replaced in runs of a few words by unrelated code). Per p: the speedup of rewrite() over
plain greedy, the hardware ceiling S_max(p) = 1 / ((1 - p) + p / r) with r = prefill speed
/ decode speed measured in the same run, their ratio, and the flip rate (outputs that
differ from greedy: near-ties in llama.cpp's batched arithmetic). Also r_verify, tokens
checked per decode step of time by a 33-token verification pass, and the ceiling that gives
(draft lengths: inference/engines/local/draft.py). Prints one JSON line.

    python -m benchmarks.speculative_edits [--quick] [--weights q8_0|bf16|auto]
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

from shadowtab.inference import Completion, LlamaCppEngine
from shadowtab.inference.engines.local.cpu_load import physical_cores

from benchmarks.common.cli import run_weights_benchmark
from benchmarks.common.speculative import PROMPTS, first_difference_gap, make_draft

COPY_FRACTIONS = (1.0, 0.9, 0.7, 0.0)


def measure_r(engine: LlamaCppEngine, prompt_chars: int) -> tuple[float, float]:
    """Prefill and decode speed (tokens/s) on a cold prompt, in this run."""
    source = (Path(__file__).resolve().parents[1] / "daemon" / "cli" / "main.py").read_text()
    prompt = f"# cold {time.time()}\n" + (source * 4)[:prompt_chars]
    result = engine.rewrite(prompt, "x", 32, speculative=False)
    stats = result.stats
    prefill = stats.evaluated_prompt_tokens / stats.first_token_seconds
    decode = (stats.generated_tokens - 1) / (stats.seconds - stats.first_token_seconds)
    return prefill, decode


def measure_verify_r(engine: LlamaCppEngine, k: int = 32) -> float:
    """Tokens a (1 + k)-token verification pass checks per decode step of time: the r that
    bounds speculative edits with passes of that length (draft lengths:
    inference/engines/local/draft.py)."""
    runtime, cache = engine._ready()  # white box: time bare forward passes
    cache.clear()
    tokens = runtime.tokenize(PROMPTS[0] * 20, add_bos=True)[: 64 + k + 1]
    runtime.decode(tokens[:64], 0, 0, [63])
    steps, passes = [], []
    for _ in range(5):
        started = time.perf_counter()
        runtime.decode(tokens[64:65], 0, 64, [0])
        steps.append(time.perf_counter() - started)
        runtime.seq_remove(0, 64, -1)
        started = time.perf_counter()
        runtime.decode(tokens[64 : 65 + k], 0, 64, list(range(k + 1)))
        passes.append(time.perf_counter() - started)
        runtime.seq_remove(0, 64, -1)
    runtime.seq_remove(0, 0, -1)
    return (k + 1) / (statistics.median(passes) / statistics.median(steps))


def timed_rewrite(
    engine: LlamaCppEngine, prompt: str, draft: str, n: int, spec: bool
) -> tuple[Completion, float]:
    engine.warm(prompt)  # both modes start from a cached prompt
    result = engine.rewrite(prompt, draft, n, speculative=spec)
    return result, result.stats.seconds - result.stats.first_token_seconds


def run(quick: bool, data_dir: Path, weights: str) -> dict[str, object]:
    max_tokens = 40 if quick else 96
    prompts = PROMPTS[:3] if quick else PROMPTS
    repeats = 1
    # a fixed thread count: the sides compared must not differ by the CPU's load
    engine = LlamaCppEngine(
        n_ctx=2048,
        kv_cache_mb=64,
        data_dir=data_dir,
        n_threads=physical_cores(),
        requantize_to=weights,
    )
    rng = random.Random(7)
    prefill, decode = measure_r(engine, 600 if quick else 1500)
    r = prefill / decode
    r_verify = measure_verify_r(engine)
    per_p: dict[float, dict[str, list[float]]] = {
        p: {"plain": [], "spec": [], "flips": [], "gaps": []} for p in COPY_FRACTIONS
    }
    for prompt in prompts:
        reference = engine.rewrite(prompt, "x", max_tokens, speculative=False)
        for p in COPY_FRACTIONS:
            draft = make_draft(reference.texts[0], p, rng)
            for _ in range(repeats):  # alternate plain and speculative: same noise for both
                plain, plain_s = timed_rewrite(engine, prompt, draft, max_tokens, False)
                fast, fast_s = timed_rewrite(engine, prompt, draft, max_tokens, True)
                per_p[p]["plain"].append(plain_s)
                per_p[p]["spec"].append(fast_s)
                differs = fast.token_ids != plain.token_ids
                per_p[p]["flips"].append(float(differs))
                gap = first_difference_gap(plain, fast)
                if gap is not None:
                    per_p[p]["gaps"].append(gap)
    results = {}
    for p, runs in per_p.items():
        speedup = sum(runs["plain"]) / sum(runs["spec"])
        ceiling = 1 / ((1 - p) + p / r)
        verify_ceiling = 1 / ((1 - p) + p / r_verify)
        results[str(p)] = {
            "speedup": round(speedup, 3),
            "s_max": round(ceiling, 3),
            "ratio": round(speedup / ceiling, 3),
            "s_max_verify": round(verify_ceiling, 3),
            "ratio_verify": round(speedup / verify_ceiling, 3),
            "flip_rate": round(statistics.mean(runs["flips"]), 3),
            "flip_gaps": [round(g, 3) for g in runs["gaps"]],
        }
    engine.close()
    return {
        "model": engine.loaded_model_path.name,
        "benchmark": "speculative_edits",
        "quick": quick,
        "max_tokens": max_tokens,
        "prompts": len(prompts),
        "prefill_tok_s": round(prefill, 1),
        "decode_tok_s": round(decode, 1),
        "r": round(r, 2),
        "r_verify": round(r_verify, 2),
        "per_p": results,
    }


def main() -> int:
    return run_weights_benchmark(__doc__.splitlines()[0], run)


if __name__ == "__main__":
    sys.exit(main())
