"""The held-back split: commits that are never trained on (the benchmark's test set).

One commit in ten, chosen by a hash of `repo@commit`, so the split is the same on every
machine and for every consumer (mining, evaluation, benchmarks) without a file listing it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any


def is_held_back(record: Mapping[str, Any]) -> bool:
    """True for the commits kept out of training."""
    key = f"{record['repo']}@{record['commit']}".encode()
    return int(hashlib.sha1(key).hexdigest(), 16) % 10 == 0
