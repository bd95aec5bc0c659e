"""Mine training examples for both tasks from the windowed edit corpora.

    python -m training.mine --out DIR [--limit N] [--seed S]

writes DIR/train.jsonl (commits not held back) and DIR/heldback.jsonl (the held-back
split, for evaluation), one example a line: kind, repo, commit, prompt and answer token
ids, and DIR/train.npz / heldback.npz, the same packed as uint16 token ids (packed.py).
Next-edit answers end with EOS; line completions (`line`) end on their newline, as the
engine's stop string ends them. Prompts are rendered only through the predictor's own
`shadowtab` format and its continuation prompt, so the model sees what the product sends.
A record whose texts do not match its hunks is skipped and counted (`bad_records`).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from training import packed, situations
from training.base_model import EOS_ID, LlamaTokenizer, load_tokenizer
from training.commits import BadRecord, Commit, commit_from_record, read_records
from training.line_completion import line_completion
from training.situations import Example
from training.split import is_held_back

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
TRAIN_FILES = ("edits-train.jsonl", "edits-train2.jsonl")  # edits-dev.jsonl: never
MAX_TOKENS = 700  # prompt + answer; longer ones cost too much time on CPU
NO_CHANGE_SHARE = 1 / 6
NO_CHANGE_KINDS = frozenset({"done", "untouched"})
TYPING_PER_COMMIT = 2
LINES_PER_COMMIT = 2


def commit_examples(commit: Commit, rng: random.Random) -> Iterator[Example]:
    """Several situations from one commit: typing at random hunks, line completions at
    random hunks, a typed hunk kept, the next hunk after a finished one, and the
    no-change cases."""
    count = len(commit.hunks)
    for _ in range(TYPING_PER_COMMIT):
        example = situations.typing(commit, rng.randrange(count), rng)
        if example is not None:
            yield example
    for _ in range(LINES_PER_COMMIT):
        example = line_completion(commit, rng.randrange(count), rng)
        if example is not None:
            yield example
    keep = situations.kept(commit, rng.randrange(count), rng)
    if keep is not None:
        yield keep
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
    answer_ids = tokenizer.text_ids(example.answer) + ([EOS_ID] if example.eos else [])
    if len(prompt_ids) + len(answer_ids) > MAX_TOKENS:
        return None
    return {
        "kind": example.kind,
        "repo": commit.repo,
        "commit": commit.commit,
        "prompt_ids": prompt_ids,
        "answer_ids": answer_ids,
    }


class Mined:
    """The examples of both splits and the records skipped as bad input."""

    def __init__(self) -> None:
        self.train: list[dict[str, Any]] = []
        self.held: list[dict[str, Any]] = []
        self.bad_records = 0


def mine_all(records: Iterable[dict[str, Any]], seed: int, limit: int | None = None) -> Mined:
    """Examples of both splits (split.py decides), deterministic for a seed and corpus;
    records whose texts do not match their hunks are counted, not mined."""
    rng = random.Random(seed)
    tokenizer = load_tokenizer()
    mined = Mined()
    for number, record in enumerate(records):
        if limit is not None and number >= limit:
            break
        try:
            commit = commit_from_record(record)
        except BadRecord:
            mined.bad_records += 1
            continue
        into = mined.held if is_held_back(record) else mined.train
        for example in commit_examples(commit, rng):
            encoded = encode(example, commit, tokenizer)
            if encoded is not None:
                into.append(encoded)
    mined.train, mined.held = balance(mined.train, rng), balance(mined.held, rng)
    return mined


def mine(
    records: Iterable[dict[str, Any]], seed: int, limit: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, held-back) examples, deterministic for a seed and corpus."""
    mined = mine_all(records, seed, limit)
    return mined.train, mined.held


def kind_counts(examples: list[dict[str, Any]]) -> dict[str, int]:
    kinds = sorted({e["kind"] for e in examples})
    return {kind: sum(e["kind"] == kind for e in examples) for kind in kinds}


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
    mined = mine_all(records, args.seed, args.limit)
    for name, rows in (("train", mined.train), ("heldback", mined.held)):
        write_jsonl(args.out / f"{name}.jsonl", rows)
        packed.write(args.out / f"{name}.npz", rows)
    summary = {
        "train": len(mined.train),
        "heldback": len(mined.held),
        "kinds": kind_counts(mined.train),
        "heldback_kinds": kind_counts(mined.held),
        "bad_records": mined.bad_records,
        "train_tokens": sum(len(e["prompt_ids"]) + len(e["answer_ids"]) for e in mined.train),
    }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
