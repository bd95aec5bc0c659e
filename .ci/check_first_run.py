"""Checks what `shadowtab demo` printed in CI's bare-venv run: the model reported ready
and at least one model suggestion (ghost text or a next edit) was shown."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def problems(log: str) -> list[str]:
    found = []
    if not re.search(r"^model: ready\b", log, re.MULTILINE):
        found.append("the demo never printed 'model: ready'")
    ghost = re.search(r"^  ghost text \(\d+ ms\): (\[.*\])$", log, re.MULTILINE)
    edits = re.search(r"^  next edit \(\d+ ms\): (\d+) suggestion", log, re.MULTILINE)
    if ghost is None or edits is None:
        found.append("the demo printed no ghost text or next-edit line")
    elif ghost.group(1) == "[]" and edits.group(1) == "0":
        found.append("the model showed no suggestion (no ghost text, no next edit)")
    return found


def main() -> int:
    found = problems(Path(sys.argv[1]).read_text(encoding="utf-8", errors="replace"))
    for problem in found:
        print(f"first run: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
