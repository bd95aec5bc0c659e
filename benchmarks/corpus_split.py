"""The edit corpora and their held-back split.

Held back (never used for tuning or training): the records of `edits-train*.jsonl` whose

    int(sha1(f"{repo}@{commit}".encode()).hexdigest(), 16) % 10 == 0

(about 10%; the same rule as `training/split.py`, so the adapter is never evaluated on
what it was trained on). Training and tuning use the rest ("train"); `edits-dev.jsonl` is for
development. The same hash orders the records, so a prefix of any split mixes the
repositories instead of taking the first one's commits.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

Split = Literal["heldout", "train", "dev"]
SPLITS: tuple[Split, ...] = ("heldout", "train", "dev")
HELD_BACK_BUCKETS = 10  # one bucket of ten is held back
TRAIN_FILES = "edits-train*.jsonl"
DEV_FILE = "edits-dev.jsonl"


def record_hash(record: dict[str, Any]) -> int:
    key = f"{record['repo']}@{record['commit']}".encode()
    return int(hashlib.sha256(key).hexdigest()[:8], 16)


def is_held_back(record: dict[str, Any]) -> bool:
    key = f"{record['repo']}@{record['commit']}".encode()
    return int(hashlib.sha1(key).hexdigest(), 16) % HELD_BACK_BUCKETS == 0


def records(corpus: Path, split: Split) -> list[dict[str, Any]]:
    """The split's records, ordered by their hash (deterministic, repositories mixed)."""
    if split == "dev":
        chosen = list(_read(corpus / DEV_FILE))
    else:
        want_held_back = split == "heldout"
        chosen = [
            record
            for path in sorted(corpus.glob(TRAIN_FILES))
            for record in _read(path)
            if is_held_back(record) == want_held_back
        ]
    return sorted(chosen, key=record_hash)


def _read(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)
