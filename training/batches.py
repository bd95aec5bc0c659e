"""Training batches from mined examples: answer-only labels, little padding,
deterministic by step so that a resumed run sees the same data order."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

IGNORE = -100  # label of prompt and padding positions: no loss there
PAD_ID = 2
BUCKET = 32  # examples sorted by length within a bucket, so a batch pads little


def read_examples(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


class BatchSchedule:
    """Step number -> batch, through epochs; within a bucket examples of similar length
    share a batch."""

    def __init__(self, examples: list[dict[str, Any]], batch_size: int, seed: int) -> None:
        self.examples = examples
        self.batch_size = batch_size
        self.seed = seed
        self._epoch = -1
        self._batches: list[list[int]] = []

    def _order(self, epoch: int) -> list[list[int]]:
        rng = random.Random(self.seed * 1_000_003 + epoch)
        order = list(range(len(self.examples)))
        rng.shuffle(order)
        batches: list[list[int]] = []
        for start in range(0, len(order), BUCKET):
            bucket = sorted(order[start : start + BUCKET], key=self._length)
            batches.extend(
                bucket[i : i + self.batch_size] for i in range(0, len(bucket), self.batch_size)
            )
        rng.shuffle(batches)
        return batches

    def _length(self, index: int) -> int:
        example = self.examples[index]
        return len(example["prompt_ids"]) + len(example["answer_ids"])

    def batch(self, step: int) -> list[dict[str, Any]]:
        per_epoch = -(-len(self.examples) // self.batch_size)
        epoch, at = divmod(step, per_epoch)
        if epoch != self._epoch:
            self._epoch, self._batches = epoch, self._order(epoch)
        return [self.examples[i] for i in self._batches[at % len(self._batches)]]


def collate(examples: list[dict[str, Any]]) -> dict[str, Any]:
    """input_ids, attention_mask, labels (right padded); labels only on the answer."""
    import torch

    rows = [e["prompt_ids"] + e["answer_ids"] for e in examples]
    width = max(map(len, rows))
    ids = torch.full((len(rows), width), PAD_ID, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), IGNORE, dtype=torch.long)
    for row, (example, tokens) in enumerate(zip(examples, rows, strict=True)):
        ids[row, : len(tokens)] = torch.tensor(tokens)
        mask[row, : len(tokens)] = 1
        start = len(example["prompt_ids"])
        labels[row, start : len(tokens)] = torch.tensor(example["answer_ids"])
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}
