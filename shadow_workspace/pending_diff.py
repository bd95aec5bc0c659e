"""The pending change set of a document as a unified diff (disk text -> shadow text)."""

from __future__ import annotations

import difflib
from pathlib import Path

from .document import ShadowDocument


def relative_name(path: Path, root: Path) -> str:
    try:
        return str(path.absolute().relative_to(root))
    except ValueError:
        return str(path)


def unified_diff(doc: ShadowDocument, root: Path) -> str:
    name = relative_name(doc.path, root)
    before = doc.base_text.splitlines(keepends=True)
    after = doc.text.splitlines(keepends=True)
    lines = difflib.unified_diff(
        before,
        after,
        fromfile=f"a/{name}" if doc.base.exists else "/dev/null",
        tofile=f"b/{name}",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
