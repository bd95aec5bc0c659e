"""Reliability of the shipped weights' token probabilities on held-back line
completions: per confidence bucket, how many tokens would be shown and how many of
them are right. Prints one JSON line.

    python -m training.calibration [--n 200] [--adapter PATH|none] [--model GGUF]

Each held-back commit's line completions (line_completion.py: ghost text's own
continuation prompt, the rest of the commit's line as the answer) are run through
llama.cpp, as the engine runs the model, teacher-forced: at every answer position the
model's most likely token and its probability are what ghost text would show with that
confidence, and it is right when it is the commit's token. The precision gate cuts a
suggestion at its first token below a threshold, so per-token calibration on a correct
prefix is what the gate relies on. Buckets are tenths of probability; `ece` is the
shown-weighted mean gap between confidence and accuracy.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from training.base_model import load_tokenizer, packaged_gguf
from training.commits import BadRecord, commit_from_record, read_records
from training.line_completion import line_completion
from training.mine import CORPUS, TRAIN_FILES
from training.situations import Example
from training.split import is_held_back

SHIPPED_ADAPTER = (
    Path(__file__).resolve().parent.parent
    / "inference"
    / "adapters"
    / "shadowtab-next-edit.lora.gguf"
)
BUCKETS = 10
N_CTX = 2048


def held_back_lines(corpus: Path, seed: int) -> Iterator[Example]:
    """Line completions of held-back commits only (split.py), in corpus order."""
    rng = random.Random(seed)
    for record in read_records(corpus / name for name in TRAIN_FILES):
        if not is_held_back(record):
            continue
        try:
            commit = commit_from_record(record)
        except BadRecord:
            continue
        for k in range(len(commit.hunks)):
            example = line_completion(commit, k, rng)
            if example is not None:
                yield example


def softmax_top(logits: Any) -> tuple[int, float]:
    import numpy as np

    shifted = np.asarray(logits, dtype=np.float64)
    shifted = shifted - shifted.max()
    probs = np.exp(shifted)
    top = int(probs.argmax())
    return top, float(probs[top] / probs.sum())


def token_outcomes(llm: Any, prompt: list[int], answer: list[int]) -> list[tuple[float, bool]]:
    """(confidence of the top token, top token == the commit's) at each answer position."""
    llm.reset()
    llm.eval(prompt + answer[:-1])
    scores = llm.scores
    return [
        (prob, top == want)
        for at, want in enumerate(answer)
        for top, prob in [softmax_top(scores[len(prompt) - 1 + at])]
    ]


def table(outcomes: list[tuple[float, bool]]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    gaps = 0.0
    for bucket in range(BUCKETS):
        low, high = bucket / BUCKETS, (bucket + 1) / BUCKETS
        inside = [(p, r) for p, r in outcomes if low <= p < high or (high == 1.0 and p == 1.0)]
        shown, right = len(inside), sum(r for _, r in inside)
        mean = sum(p for p, _ in inside) / shown if shown else None
        if mean is not None:
            gaps += shown * abs(right / shown - mean)
        rows.append(
            {
                "bucket": f"{low:.1f}-{high:.1f}",
                "shown": shown,
                "right": right,
                "accuracy": round(right / shown, 3) if shown else None,
                "mean_confidence": None if mean is None else round(mean, 3),
            }
        )
    ece = gaps / max(1, len(outcomes))
    return {"tokens": len(outcomes), "ece": round(ece, 4), "buckets": rows}


def main(argv: list[str] | None = None) -> None:
    import llama_cpp
    from shadowtab.inference.engines.llama_cpp.extra_buffers import (
        use_plain_buffers_in_llama_class,
    )

    use_plain_buffers_in_llama_class()

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="line completions")
    parser.add_argument("--adapter", default=str(SHIPPED_ADAPTER), help="a GGUF LoRA, or none")
    parser.add_argument("--model", type=Path, default=None, help="default: the packaged GGUF")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    adapter = None if args.adapter == "none" else args.adapter
    model = args.model or packaged_gguf()
    tokenizer = load_tokenizer()
    llm = llama_cpp.Llama(
        str(model), n_ctx=N_CTX, n_threads=args.threads, logits_all=True, verbose=False,
        lora_path=adapter,
    )  # fmt: skip
    outcomes: list[tuple[float, bool]] = []
    used = 0
    for example in held_back_lines(args.corpus, args.seed):
        if used >= args.n:
            break
        prompt, answer = tokenizer.prompt_ids(example.prompt), tokenizer.text_ids(example.answer)
        if len(prompt) + len(answer) > N_CTX:
            continue
        outcomes += token_outcomes(llm, prompt, answer)
        used += 1
    result = {"model": str(model), "adapter": adapter, "examples": used, **table(outcomes)}
    print(json.dumps(result), flush=True)
    if not math.isfinite(result["ece"]):
        raise SystemExit("no tokens scored")


if __name__ == "__main__":
    main()
