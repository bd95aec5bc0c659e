"""Mined examples packed as token ids in one small file, to travel with the working
tree to a GPU machine (the JSONL is ~5x larger and slower to read).

`.npz` (compressed) with `tokens` (uint16: the vocabulary has 49,152 ids), `starts`
(where each example's tokens begin, plus the end), `prompt_lens` (the prompt's share
of them: the loss is on the rest) and `kinds` (an index into `kind_names`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

VOCAB_LIMIT = 1 << 16


def write(path: Path, examples: list[dict[str, Any]]) -> Path:
    import numpy as np

    names = sorted({e["kind"] for e in examples})
    rows = [e["prompt_ids"] + e["answer_ids"] for e in examples]
    if any(max(row, default=0) >= VOCAB_LIMIT for row in rows):
        raise ValueError(f"a token id >= {VOCAB_LIMIT} does not fit uint16")
    starts = np.zeros(len(rows) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(row) for row in rows])
    tokens = np.fromiter((t for row in rows for t in row), dtype=np.uint16, count=int(starts[-1]))
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(
        temp,
        tokens=tokens,
        starts=starts,
        prompt_lens=np.array([len(e["prompt_ids"]) for e in examples], dtype=np.int32),
        kinds=np.array([names.index(e["kind"]) for e in examples], dtype=np.int16),
        kind_names=np.array(names),
    )
    temp.replace(path)
    return path


def read(path: Path) -> list[dict[str, Any]]:
    """The examples as `mine` wrote them (without repo and commit)."""
    import numpy as np

    with np.load(path) as data:
        tokens, starts = data["tokens"].astype(np.int64), data["starts"]
        prompt_lens, kinds = data["prompt_lens"], data["kinds"]
        names = [str(name) for name in data["kind_names"]]
    out = []
    for index in range(len(prompt_lens)):
        row = tokens[starts[index] : starts[index + 1]].tolist()
        cut = int(prompt_lens[index])
        out.append({"kind": names[kinds[index]], "prompt_ids": row[:cut], "answer_ids": row[cut:]})
    return out
