"""`training/` is a top-level folder of the repository, not an installed package: put the
repository root first on sys.path so `import training` finds it, and not a folder of the
same name elsewhere on the path, such as this one (`tests/training/`: pytest puts `tests/`
on the path for its conftest)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
sys.modules.pop("training", None)  # a namespace package picked up before this ran
