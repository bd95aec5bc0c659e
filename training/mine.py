"""Mine next-edit training examples from the windowed edit corpora.

    python -m training.mine --out DIR [--limit N] [--seed S]

writes DIR/train.jsonl (commits not held back) and DIR/heldback.jsonl (the held-back
split, for evaluation), one example a line: kind, repo, commit, prompt and answer token
ids (the answer ends with EOS). Prompts are rendered only through the predictor's own
`shadowtab` format, so the adapter sees what the predictor sends.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from training import situations
from training.base_model import EOS_ID, LlamaTokenizer, load_tokenizer
from training.commits import Commit, commit_from_record, read_records
from training.situations import Example
from training.split import is_held_back

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
TRAIN_FILES = ("edits-train.jsonl", "edits-train2.jsonl")  # edits-dev.jsonl: never
MAX_TOKENS = 700  # prompt + answer; longer ones cost too much time on CPU
NO_CHANGE_SHARE = 1 / 6
NO_CHANGE_KINDS = frozenset({"done", "untouched"})
TYPING_PER_COMMIT = 2


def commit_examples(commit: Commit, rng: random.Random) -> Iterator[Example]:
    """Several situations from one commit: typing at random hunks, the next hunk after
    a finished one, and the no-change cases."""
    count = len(commit.hunks)
    for _ in range(TYPING_PER_COMMIT):
        example = situations.typing(commit, rng.randrange(count), rng)
        if example is not None:
            yield example
    nexts = [e for k in range(1, count) if (e := situations.next_hunk(commit, k)) is not None]
    if nexts:
        yield rng.choice(nexts)
    for example in (situations.finished(commit), situations.untouched(commit, rng)):
        if example is not None:
            yield example


def balance(examples: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Keep about NO_CHANGE_SHARE of the examples as no-change ones, then shuffle."""
    changing = [e for e in examples if e["kind"] not in NO_CHANGE_KINDS]
    still = [e for e in examples if e["kind"] in NO_CHANGE_KINDS]
    wanted = round(len(changing) * NO_CHANGE_SHARE / (1 - NO_CHANGE_SHARE))
    kept = changing + rng.sample(still, min(wanted, len(still)))
    rng.shuffle(kept)
    return kept


def encode(example: Example, commit: Commit, tokenizer: LlamaTokenizer) -> dict[str, Any] | None:
    prompt_ids = tokenizer.prompt_ids(example.prompt)
    answer_ids = [*tokenizer.text_ids(example.answer), EOS_ID]
    if len(prompt_ids) + len(answer_ids) > MAX_TOKENS:
        return None
    return {
        "kind": example.kind,
        "repo": commit.repo,
        "commit": commit.commit,
        "prompt_ids": prompt_ids,
        "answer_ids": answer_ids,
    }


def mine(
    records: Iterable[dict[str, Any]], seed: int, limit: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, held-back) examples, deterministic for a seed and corpus."""
    rng = random.Random(seed)
    tokenizer = load_tokenizer()
    train: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for number, record in enumerate(records):
        if limit is not None and number >= limit:
            break
        commit = commit_from_record(record)
        into = held if is_held_back(record) else train
        for example in commit_examples(commit, rng):
            encoded = encode(example, commit, tokenizer)
            if encoded is not None:
                into.append(encoded)
    return balance(train, rng), balance(held, rng)


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, separators=(",", ":")) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--limit", type=int, default=None, help="commits to read")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    records = read_records(args.corpus / name for name in TRAIN_FILES)
    train, held = mine(records, args.seed, args.limit)
    write_jsonl(args.out / "train.jsonl", train)
    write_jsonl(args.out / "heldback.jsonl", held)
    kinds = {
        kind: sum(e["kind"] == kind for e in train) for kind in sorted({e["kind"] for e in train})
    }
    print(json.dumps({"train": len(train), "heldback": len(held), "kinds": kinds}), flush=True)


if __name__ == "__main__":
    main()
