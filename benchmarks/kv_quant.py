"""A quantized KV cache (engine.kv_type = "q8_0") against f16, side by side in one run.

One engine per configuration, all on the packaged model (requantized as the daemon
serves it, with its adapter): f16 as shipped (flash attention left to llama.cpp, which
turns it on for the CPU), f16 with flash attention off (to separate its effect from the
quantization's), and q8_0 K and V (which needs flash attention). Per configuration:

- KV bytes per token, as cache_info() reports it and as llama.cpp's own sequence state
  measures it; tokens and typical prompts resident per MB of budget, and the prefixes
  actually resident after the run's prompts under a small budget;
- prefill and decode speed (white box: 128-token passes, then single-token steps at that
  depth; rounds interleaved across the configurations so that other processes' noise
  hits all alike; medians);
- flips: greedy outputs on real code prompts (standard-library code up to a `def` line)
  that differ from shipped f16's, with f16's top-2 logit gap at the first differing token.

Prints one JSON line.

    python -m benchmarks.kv_quant [--quick] [--data-dir DIR]
"""

from __future__ import annotations

import importlib.util
import re
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from shadowtab.inference import Completion, LlamaCppEngine
from shadowtab.inference.engines.local.cpu_load import physical_cores
from shadowtab.inference.engines.local.engine import MB

from benchmarks.common.cli import run_model_benchmark
from benchmarks.common.speculative import first_difference_gap

# label -> (engine.kv_type, flash attention: None = the runtime's choice, off for f16 and
# on where the KV type needs it: a quantized V)
CONFIGS: dict[str, tuple[str, bool | None]] = {
    "f16": ("f16", None),
    "f16_fa_on": ("f16", True),
    "q8_0": ("q8_0", None),
}
BASELINE = "f16"
SOURCES = ("textwrap", "shlex", "heapq", "fnmatch", "json.decoder", "bisect")
DEF_LINE = re.compile(r"^[ \t]*def .*\n", re.MULTILINE)
NEAR_TIE = 0.15  # a flip at a smaller f16 gap is a near-tie, not a changed answer


@dataclass(frozen=True)
class Size:
    prompts: int
    prompt_chars: int  # each prompt: about this much code up to a def line
    max_tokens: int
    rounds: int
    depth: int  # tokens prefilled before the decode steps
    steps: int
    budget_mb: float  # the engines' kv_cache_mb: small, so that residency shows


QUICK = Size(prompts=3, prompt_chars=700, max_tokens=24, rounds=2, depth=256, steps=8, budget_mb=6)
FULL = Size(
    prompts=6, prompt_chars=1600, max_tokens=64, rounds=4, depth=512, steps=16, budget_mb=24
)


def code_prompts(size: Size) -> list[str]:
    """Real code: of each standard-library file, the prompt_chars (whole lines) before
    the end of its first `def` line past that offset (the model writes the body)."""
    prompts = []
    for name in SOURCES[: size.prompts]:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        text = Path(spec.origin).read_text()
        found = DEF_LINE.search(text, size.prompt_chars)
        assert found is not None, name
        start = text.rfind("\n", 0, found.start() - size.prompt_chars) + 1
        prompts.append(text[start : found.end()])
    return prompts


def open_engines(size: Size, data_dir: Path) -> dict[str, LlamaCppEngine]:
    # a fixed thread count: the sides compared must not differ by the CPU's load
    return {
        label: LlamaCppEngine(
            n_ctx=2048,
            kv_cache_mb=size.budget_mb,
            data_dir=data_dir,
            n_threads=physical_cores(),
            kv_type=kv_type,
            flash_attention=flash,
        )
        for label, (kv_type, flash) in CONFIGS.items()
    }


def speeds(engine: LlamaCppEngine, tokens: list[int], size: Size) -> dict[str, float]:
    """Prefill of `depth` tokens in 128-token passes, then single-token decode steps."""
    runtime, cache = engine._ready()  # white box: time bare forward passes
    cache.clear()
    started = time.perf_counter()
    for begin in range(0, size.depth, 128):
        runtime.decode(tokens[begin : begin + 128], 0, begin, [127])
    prefill = size.depth / (time.perf_counter() - started)
    token = tokens[size.depth]
    started = time.perf_counter()
    for pos in range(size.depth, size.depth + size.steps):
        token = int(np.argmax(runtime.decode([token], 0, pos, [0])[0]))
    decode = size.steps / (time.perf_counter() - started)
    runtime.seq_remove(0, 0, -1)
    return {"prefill": prefill, "decode": decode}


def median_speeds(
    engines: dict[str, LlamaCppEngine], text: str, size: Size
) -> dict[str, dict[str, float]]:
    samples: dict[str, list[dict[str, float]]] = {label: [] for label in engines}
    for round_no in range(size.rounds):
        for label, engine in engines.items():
            tokens = engine.tokenize(f"# round {round_no}\n{text}")
            samples[label].append(speeds(engine, tokens, size))
    return {
        label: {key: statistics.median(s[key] for s in runs) for key in runs[0]}
        for label, runs in samples.items()
    }


def greedy(engine: LlamaCppEngine, prompts: list[str], size: Size) -> list[Completion]:
    """Each prompt from an empty cache; what the last ones leave resident stays."""
    engine.clear_cache()
    return [engine.complete(prompt, size.max_tokens) for prompt in prompts]


def flips(baseline: list[Completion], outputs: list[Completion]) -> dict[str, Any]:
    gaps = []
    for plain, other in zip(baseline, outputs, strict=True):
        if other.token_ids != plain.token_ids:
            gap = first_difference_gap(plain, other)
            gaps.append(round(gap, 3) if gap is not None else None)
    beyond = [g for g in gaps if g is None or g >= NEAR_TIE]
    return {"flips": len(gaps), "flip_gaps": gaps, "flips_beyond_near_ties": len(beyond)}


def native_bytes_per_token(engine: LlamaCppEngine) -> float:
    """llama.cpp's own size of the largest resident sequence's state, per token."""
    runtime, cache = engine._ready()  # white box: the native state
    longest = max((p for p in cache._slots.values() if p.tokens), key=lambda p: len(p.tokens))
    return runtime.seq_state_bytes(longest.seq) / len(longest.tokens)


def residency(engine: LlamaCppEngine, typical_tokens: float) -> dict[str, Any]:
    info = engine.cache_info()
    tokens_per_mb = MB / info.bytes_per_token
    return {
        "bytes_per_token": info.bytes_per_token,
        "native_bytes_per_token": round(native_bytes_per_token(engine)),
        "tokens_per_mb": round(tokens_per_mb, 1),
        "prefixes_per_mb": round(tokens_per_mb / typical_tokens, 4),
        "resident_prefixes_in_budget": len(info.resident_prefixes),
    }


def side_by_side(size: Size, data_dir: Path) -> dict[str, Any]:
    engines = open_engines(size, data_dir)
    prompts = code_prompts(size)
    text = "".join(code_prompts(replace(size, prompts=len(SOURCES)))) * 2
    median = median_speeds(engines, text, size)
    outputs = {label: greedy(engine, prompts, size) for label, engine in engines.items()}
    typical = statistics.median(c.stats.prompt_tokens for c in outputs[BASELINE])
    per_config = {
        label: {
            **residency(engine, typical),
            "prefill_tok_s": round(median[label]["prefill"], 1),
            "decode_tok_s": round(median[label]["decode"], 1),
            **flips(outputs[BASELINE], outputs[label]),
        }
        for label, engine in engines.items()
    }
    model = engines[BASELINE].loaded_model_path.name
    for engine in engines.values():
        engine.close()
    return {"model": model, "typical_prompt_tokens": typical, "configs": per_config}


def ratios(configs: dict[str, dict[str, Any]]) -> dict[str, float]:
    """q8_0 (flash attention on, as a quantized V needs) against shipped f16 (off), and
    f16 with flash attention against f16 without (its own effect)."""
    q8, no_fa, f16 = configs["q8_0"], configs[BASELINE], configs["f16_fa_on"]
    return {
        "q8_0_tokens_per_mb_over_f16": round(q8["tokens_per_mb"] / f16["tokens_per_mb"], 3),
        "q8_0_prefill_over_f16": round(q8["prefill_tok_s"] / f16["prefill_tok_s"], 3),
        "q8_0_decode_over_f16": round(q8["decode_tok_s"] / f16["decode_tok_s"], 3),
        "fa_prefill_over_no_fa": round(f16["prefill_tok_s"] / no_fa["prefill_tok_s"], 3),
        "fa_decode_over_no_fa": round(f16["decode_tok_s"] / no_fa["decode_tok_s"], 3),
    }


def run(quick: bool, data_dir: Path) -> dict[str, object]:
    size = QUICK if quick else FULL
    measured = side_by_side(size, data_dir)
    return {
        "benchmark": "kv_quant",
        "quick": quick,
        "model": measured["model"],
        "prompts": size.prompts,
        "max_tokens": size.max_tokens,
        "typical_prompt_tokens": measured["typical_prompt_tokens"],
        "budget_mb": size.budget_mb,
        "decode_depth": size.depth,
        "rounds": size.rounds,
        "near_tie_gap": NEAR_TIE,
        **ratios(measured["configs"]),
        "configs": measured["configs"],
    }


def main() -> int:
    return run_model_benchmark(__doc__.splitlines()[0], run)


if __name__ == "__main__":
    sys.exit(main())
