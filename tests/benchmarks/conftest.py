"""`benchmarks/` and `training/` are top-level folders of the repository, not installed
packages: put the repository root first on sys.path so `import benchmarks` finds them
(as `python -m benchmarks.X` from the root does), and not a folder of the same name
elsewhere on the path, such as this one (`tests/benchmarks/`: pytest puts `tests/` on
the path for its conftest)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
for package in ("benchmarks", "training"):
    sys.modules.pop(package, None)  # a namespace package picked up before this ran
