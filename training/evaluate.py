"""Quick evaluation through our own engine: the base model and the adapter side by side,
on held-back commits (never trained on). Prints one JSON line.

    python -m training.evaluate --adapter DIR/shadowtab-next-edit.lora.gguf [--n 20]

- copy fidelity: on windows where nothing should change, the share of outputs that equal
  the window exactly;
- typing: exact-match and mean similarity (difflib ratio) of the rewritten region with
  the commit's region, on half-typed edits;
- speculative edits: the share of draft tokens accepted (the region as the draft);
- latency: ms per generated token in plain greedy decoding, and the adapter's ratio.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shadowtab.inference.next_edit.formats.shadowtab import parse_answer, unescape

from training.commits import BadRecord, commit_from_record, read_records
from training.mine import CORPUS, NO_CHANGE_KINDS, TRAIN_FILES, commit_examples
from training.situations import Example
from training.split import is_held_back

POOL_PER_COUNT = 10  # held-back commits read from each corpus file, per example asked
SLACK_TOKENS = 48  # room beyond the draft's length for the answer to grow
LATENCY_EXAMPLES = 3


def held_back_examples(corpus: Path, seed: int, pool: int) -> Iterator[Example]:
    rng = random.Random(seed)
    for name in TRAIN_FILES:
        taken = 0
        for record in read_records([corpus / name]):
            if taken >= pool:
                break
            if is_held_back(record):
                taken += 1
                try:
                    commit = commit_from_record(record)
                except BadRecord:
                    continue  # bad input: mine.py counts these
                yield from commit_examples(commit, rng)


def pick(corpus: Path, count: int, seed: int) -> dict[str, list[Example]]:
    """`count` no-change and `count` typing examples, drawn evenly from the pool."""
    pool = list(held_back_examples(corpus, seed, POOL_PER_COUNT * count))
    rng = random.Random(seed)
    still = [e for e in pool if e.kind in NO_CHANGE_KINDS]
    typing = [e for e in pool if e.kind == "typing"]
    return {
        "no_change": rng.sample(still, min(count, len(still))),
        "typing": rng.sample(typing, min(count, len(typing))),
    }


def rewrite(engine: Any, example: Example, speculative: bool = True) -> tuple[str | None, Any]:
    limit = len(engine.tokenize(example.draft)) + SLACK_TOKENS
    done = engine.rewrite(example.prompt, example.draft, max_tokens=limit, speculative=speculative)
    ended = done.stats.generated_tokens < limit  # a cut-off answer is no answer
    return (parse_answer(done.texts[0]) if ended else None), done.stats


def score(engine: Any, examples: dict[str, list[Example]]) -> dict[str, Any]:
    copies, exact, similarity = [], [], []
    drafted = accepted = 0
    for kind, rows in examples.items():
        for example in rows:
            output, stats = rewrite(engine, example)
            drafted += stats.draft_tokens
            accepted += stats.accepted_draft_tokens
            target = unescape(example.answer)
            if kind == "no_change":
                copies.append(output == target)
            else:
                exact.append(output == target)
                similarity.append(difflib.SequenceMatcher(None, output or "", target).ratio())
    return {
        "copy_fidelity": round(statistics.fmean(copies), 3) if copies else None,
        "typing_exact": round(statistics.fmean(exact), 3) if exact else None,
        "typing_similarity": round(statistics.fmean(similarity), 3) if similarity else None,
        "draft_acceptance": round(accepted / drafted, 3) if drafted else None,
    }


def ms_per_token(engine: Any, examples: list[Example]) -> float:
    seconds = tokens = 0.0
    for example in examples:
        _, stats = rewrite(engine, example, speculative=False)
        seconds += stats.seconds
        tokens += stats.generated_tokens
    return round(1000 * seconds / max(tokens, 1.0), 2)


def evaluate(adapter: Path, count: int, seed: int, corpus: Path, threads: int) -> dict[str, Any]:
    from shadowtab.inference import LlamaCppEngine

    examples = pick(corpus, count, seed)
    engines = {
        "base": LlamaCppEngine(n_ctx=2048, kv_cache_mb=32, n_threads=threads, adapter="none"),
        "adapter": LlamaCppEngine(
            n_ctx=2048, kv_cache_mb=32, n_threads=threads, adapter=str(adapter)
        ),
    }
    try:
        if engines["adapter"].stats()["adapter_error"]:
            raise SystemExit(engines["adapter"].stats()["adapter_error"])
        result: dict[str, Any] = {"benchmark": "next_edit_adapter_quick", "adapter": str(adapter)}
        result["examples"] = {kind: len(rows) for kind, rows in examples.items()}
        for name, engine in engines.items():
            result[name] = score(engine, examples)
        timing = examples["typing"][:LATENCY_EXAMPLES]
        for name, engine in engines.items():
            result[name]["ms_per_token"] = ms_per_token(engine, timing)
        base_ms = result["base"]["ms_per_token"]
        result["adapter_latency_ratio"] = round(result["adapter"]["ms_per_token"] / base_ms, 3)
        return result
    finally:
        for engine in engines.values():
            engine.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", type=Path, required=True)
    parser.add_argument("--n", type=int, default=20, help="examples of each kind")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    result = evaluate(args.adapter, args.n, args.seed, args.corpus, args.threads)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
