"""What batched decoding would give several editors: N sequences, each a different
file's prompt in the KV cache, decoded greedily step by step, one llama_decode per
sequence and step (as the engine serves its requests today, one after another) or one
llama_decode per step for all N (LlamaRuntime.decode_steps), side by side in one run.

    python -m benchmarks.batched_decode [--prompt-tokens 400] [--steps 8] [--rounds 3]
        [--weights auto|q8_0|f16|bf16] [--data-dir DIR]

The engine's own context (its KV cells shared by all sequences, its threads, the
converted weights with the adapter merged). The prompts are the tails of eight modules of
this repository. Prints per N: the milliseconds of one step for all N sequences each
way, the ratio, and whether the greedy outputs are equal (a batch of another size may
flip a near tie). One JSON line.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from shadowtab.inference import EngineOptions, LlamaCppEngine, create_engine
from shadowtab.inference.engines.llama_cpp.runtime import LlamaRuntime

from benchmarks.common.cli import print_run

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (
    "lsp/predictions.py",
    "lsp/session.py",
    "lsp/text_sync.py",
    "lsp/diagnostics.py",
    "shadow_workspace/workspace.py",
    "shadow_workspace/document.py",
    "daemon/service.py",
    "daemon/client.py",
)
SEQUENCE_COUNTS = (1, 2, 4, 8)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt-tokens", type=int, default=400)
    parser.add_argument("--steps", type=int, default=8, help="tokens decoded per sequence")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--weights", default="auto")
    parser.add_argument("--data-dir", type=Path, help="cache of the converted model")
    return parser.parse_args(argv)


def prefill(runtime: LlamaRuntime, prompts: list[list[int]]) -> list[int]:
    """Each prompt into its own sequence; the first token each would write."""
    first = []
    chunk = runtime.config.n_batch
    for seq, prompt in enumerate(prompts):
        runtime.seq_remove(seq, 0, -1)
        for start in range(0, len(prompt), chunk):
            part = prompt[start : start + chunk]
            logits = runtime.decode(part, seq, start, [len(part) - 1])
        first.append(int(np.argmax(logits[-1])))
    return first


def one_by_one(runtime: LlamaRuntime, first: list[int], pos0: int, steps: int) -> list[list[int]]:
    """Each step, each sequence in a pass of its own."""
    written = [[token] for token in first]
    for step in range(steps):
        for seq, tokens in enumerate(written):
            logits = runtime.decode([tokens[-1]], seq, pos0 + step, [0])
            tokens.append(int(np.argmax(logits[0])))
    return written


def batched(runtime: LlamaRuntime, first: list[int], pos0: int, steps: int) -> list[list[int]]:
    """Each step, every sequence in one pass."""
    written = [[token] for token in first]
    for step in range(steps):
        entries = [(tokens[-1], seq, pos0 + step) for seq, tokens in enumerate(written)]
        logits = runtime.decode_steps(entries)
        for row, tokens in enumerate(written):
            tokens.append(int(np.argmax(logits[row])))
    return written


def measure(
    runtime: LlamaRuntime, prompts: list[list[int]], args: argparse.Namespace
) -> dict[str, object]:
    """Per sequence count: ms per step for all of them, each way; outputs equal or not."""
    result: dict[str, object] = {}
    pos0 = args.prompt_tokens
    for count in SEQUENCE_COUNTS:
        seconds: dict[str, list[float]] = {"one_by_one": [], "batched": []}
        equal = True
        for round_ in range(args.rounds):
            outputs = {}
            ways = (one_by_one, batched) if round_ % 2 == 0 else (batched, one_by_one)
            for way in ways:
                first = prefill(runtime, prompts[:count])
                started = time.perf_counter()
                outputs[way.__name__] = way(runtime, first, pos0, args.steps)
                seconds[way.__name__].append(time.perf_counter() - started)
            equal = equal and outputs["one_by_one"] == outputs["batched"]
        step_ms = {
            way: round(1000 * statistics.median(times) / args.steps, 2)
            for way, times in seconds.items()
        }
        result[str(count)] = {
            "step_ms": step_ms,
            "one_by_one_over_batched": round(step_ms["one_by_one"] / step_ms["batched"], 2),
            "equal_outputs": equal,
        }
    return result


def run(args: argparse.Namespace, data_dir: Path) -> dict[str, object]:
    options = EngineOptions(
        threads=2, weights=args.weights, merge_adapter=True, data_dir=data_dir, process="inline"
    )
    engine = create_engine(options)
    assert isinstance(engine, LlamaCppEngine)
    try:
        engine.clear_cache()
        runtime = engine._runtime
        assert runtime is not None
        texts = [(ROOT / source).read_text() for source in SOURCES]
        prompts = [runtime.tokenize(text, add_bos=True)[-args.prompt_tokens :] for text in texts]
        sequences = measure(runtime, prompts, args)
        weights = engine.stats().get("weights")
        cells = runtime.n_cells
    finally:
        engine.close()
    return {
        "benchmark": "batched_decode",
        "weights": weights,
        "threads": 2,
        "context_cells": cells,
        "prompt_tokens": args.prompt_tokens,
        "steps": args.steps,
        "sequences": sequences,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    return print_run(run, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
