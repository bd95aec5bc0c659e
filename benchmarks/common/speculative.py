"""The speculative-edit workload several benchmarks share: code prompts, drafts that keep
a fraction of the model's own output (the rest replaced by unrelated code), and the
logit gap where two outputs of one prompt part (a near tie, or a changed answer)."""

from __future__ import annotations

import random
import re

from shadowtab.inference import Completion

PROMPTS = [
    'def fibonacci(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n',
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n",
    "def insertion_sort(items: list[int]) -> list[int]:\n"
    '    """Sort items in place with insertion sort and return them."""\n',
    "function debounce(fn, ms) {\n  let timer;\n  return function (...args) {\n",
    'import json\n\n\ndef load_config(path):\n    """Read a JSON config file, with defaults."""\n',
    "#include <stdio.h>\n\nint main(int argc, char **argv) {\n",
]
RUN_WORDS = 4
REPLACEMENT_WORDS = ["value", "offset", "compute()", "self.items", "return", "# note"]
FILLER = [
    "    value = compute_something_else(index, offset)\n",
    "    # this line was replaced by the benchmark\n",
    "    raise NotImplementedError('placeholder')\n",
    "    for key, item in sorted(mapping.items()):\n",
]


def make_draft(text: str, p: float, rng: random.Random) -> str:
    """Keep a fraction p of `text` (by characters); the rest is replaced in runs of a few
    words (an edit inside a line), at random places."""
    if p >= 1.0:
        return text
    if p <= 0.0:
        return "".join(rng.choice(FILLER) for _ in range(max(1, len(text) // 40)))
    words = re.findall(r"\S+\s*|\s+", text)
    budget = (1 - p) * len(text)
    replaced: set[int] = set()
    while budget > 0 and len(replaced) < len(words):
        start = rng.randrange(len(words))
        for index in range(start, min(start + RUN_WORDS, len(words))):
            if index not in replaced and budget > 0:
                replaced.add(index)
                budget -= len(words[index])
    return "".join(
        word.replace(word.strip(), rng.choice(REPLACEMENT_WORDS), 1)
        if i in replaced and word.strip()
        else word
        for i, word in enumerate(words)
    )


def first_difference_gap(plain: Completion, fast: Completion) -> float | None:
    """The plain run's top-2 logit gap at the first token where the outputs differ."""
    pairs = zip(plain.token_ids, fast.token_ids, strict=False)
    index = next((i for i, (a, b) in enumerate(pairs) if a != b), None)
    if index is None and len(plain.token_ids) != len(fast.token_ids):
        index = min(len(plain.token_ids), len(fast.token_ids))
    if index is None or index >= len(plain.margins):
        return None
    return plain.margins[index]
