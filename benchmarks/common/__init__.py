"""What several benchmarks share: their command line, the edit corpora and their split,
the next-edit evaluation (cases cut from commits, scoring, the LSP editor that replays
them, reports), the speculative-edit and typing workloads, starting a model server.

The benchmarks run from a checkout (`python benchmarks/X.py`): the repository root goes
on sys.path here so that `training` (a top-level folder, not installed) is found, for the
held-back split and the pause model the evaluation shares with training."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(1, ROOT)  # after the script's own folder
