"""A rewrite's first draft tokens verified in the prefill's last pass wherever they fit,
or only in rows a pass padded to the attention tile computes anyway and otherwise in a
pass of their own (inference/engines/local/draft.py `verify_in_prefill` on and off),
side by side in one run.

    python -m benchmarks.verify_in_prefill [--reps 6] [--weights auto|q8_0|bf16]
        [--data-dir DIR]

Each request is a rewrite as the daemon makes one while the user types: the prompt's
stem is in the KV cache (warmed), the last ~30 tokens (a line just typed) are not, and
the draft is the model's own answer (the original copied: what rewrites mostly do), up
to 24 tokens. The two ways alternate request by request on the same prompts. Prints
the p50 and mean request times, the forward passes per request, and how many outputs
are equal (a batched pass of another length may flip a near tie). One JSON line.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

from shadowtab.inference import EngineOptions, LlamaCppEngine, create_engine

from benchmarks.common.cli import print_run
from benchmarks.common.speculative import PROMPTS

ROOT = Path(__file__).resolve().parents[1]
STEM_SOURCE = ROOT / "daemon" / "cli" / "main.py"
STEM_CHARS = 2400  # ~700 tokens of real code before the prompt's own
MAX_TOKENS = 24
WAYS = ("in_prefill", "own_pass")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=6, help="requests per prompt and way")
    parser.add_argument("--weights", default="auto")
    parser.add_argument("--data-dir", type=Path, help="cache of the converted model")
    return parser.parse_args(argv)


def timed(
    engine: LlamaCppEngine, way: str, stem: str, prompt: str, draft: str
) -> tuple[float, int, str]:
    """One rewrite with the stem warmed and the rest of the prompt not: (seconds, passes,
    text)."""
    engine._policy = replace(engine._policy, verify_in_prefill=way == "in_prefill")
    engine.clear_cache()
    engine.warm(stem)
    started = time.perf_counter()
    out = engine.rewrite(prompt, draft, MAX_TOKENS)
    return time.perf_counter() - started, out.stats.forward_passes, out.texts[0]


def run(args: argparse.Namespace, data_dir: Path) -> dict[str, object]:
    options = EngineOptions(
        threads=2, weights=args.weights, merge_adapter=True, data_dir=data_dir, process="inline"
    )
    engine = create_engine(options)
    assert isinstance(engine, LlamaCppEngine)
    seconds: dict[str, list[float]] = {way: [] for way in WAYS}
    passes: dict[str, list[int]] = {way: [] for way in WAYS}
    equal = total = 0
    source = STEM_SOURCE.read_text()[:STEM_CHARS]
    try:
        for rep in range(args.reps):
            for index, code in enumerate(PROMPTS[:5]):
                stem = f"{source}\n\n{code}"
                words = " ".join(f"w{rep}{index}{j}" for j in range(12))
                prompt = f"{stem}    # step {rep}: {words}\n"
                engine.clear_cache()
                draft = engine.rewrite(prompt, "x", MAX_TOKENS, speculative=False).texts[0]
                texts = {}
                order = WAYS if (rep + index) % 2 == 0 else WAYS[::-1]
                for way in order:
                    s, n, texts[way] = timed(engine, way, stem, prompt, draft)
                    seconds[way].append(s)
                    passes[way].append(n)
                total += 1
                equal += texts["in_prefill"] == texts["own_pass"]
        weights = engine.stats().get("weights")
    finally:
        engine.close()
    result: dict[str, object] = {"benchmark": "verify_in_prefill", "weights": weights}
    for way in WAYS:
        result[way] = {
            "p50_ms": round(1000 * statistics.median(seconds[way]), 1),
            "mean_ms": round(1000 * statistics.mean(seconds[way]), 1),
            "passes_mean": round(statistics.mean(passes[way]), 2),
        }
    result["equal_outputs"] = f"{equal}/{total}"
    result["load_avg_1m"] = round(os.getloadavg()[0], 2)
    return result


def main(argv: list[str] | None = None) -> int:
    return print_run(run, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
