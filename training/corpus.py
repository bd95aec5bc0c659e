"""The edit corpora: where they are, and their splits.

Held back (never used for tuning or training): the records of `edits-train*.jsonl` that
training/split.py holds back (one commit in ten, by a hash of `repo@commit`), so the
adapter is never evaluated on what it was trained on. Training and tuning use the rest
("train"); `edits-dev.jsonl` is for development. A second hash orders the records, so a
prefix of any split mixes the repositories instead of taking the first one's commits.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from training.split import is_held_back

# The corpora live beside the checkout (../shared/corpus), or where this variable says.
CORPUS_VARIABLE = "SHADOWTAB_EDIT_CORPUS"
DEFAULT_CORPUS = Path(
    os.environ.get(CORPUS_VARIABLE, Path(__file__).resolve().parents[2] / "shared" / "corpus")
)

Split = Literal["heldout", "train", "dev"]
SPLITS: tuple[Split, ...] = ("heldout", "train", "dev")
TRAIN_FILES = "edits-train*.jsonl"
DEV_FILE = "edits-dev.jsonl"


def record_hash(record: dict[str, Any]) -> int:
    key = f"{record['repo']}@{record['commit']}".encode()
    return int(hashlib.sha256(key).hexdigest()[:8], 16)


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
