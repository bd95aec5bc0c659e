"""The pending change set of a document as a unified diff (disk text -> shadow text).
Identical leading and trailing lines are cut before difflib runs, so a small edit in a
10 MB file diffs in milliseconds; hunk headers are shifted back to file line numbers."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from .document import ShadowDocument

CONTEXT = 3
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def relative_name(path: Path, root: Path) -> str:
    try:
        return str(path.absolute().relative_to(root))
    except ValueError:
        return str(path)


def _common_prefix(a: list[str], b: list[str]) -> int:
    count, limit = 0, min(len(a), len(b))
    while count < limit and a[count] == b[count]:
        count += 1
    return count


def _common_suffix(a: list[str], b: list[str], prefix: int) -> int:
    count, limit = 0, min(len(a), len(b)) - prefix
    while count < limit and a[-1 - count] == b[-1 - count]:
        count += 1
    return count


def _shift_hunk(line: str, offset: int) -> str:
    match = _HUNK.match(line)
    if match is None or offset == 0:
        return line
    old_start, old_len, new_start, new_len = match.groups()
    old, new = int(old_start) + offset, int(new_start) + offset  # empty ranges too
    return f"@@ -{old}{old_len or ''} +{new}{new_len or ''} @@" + line[match.end() :]


def unified_diff(doc: ShadowDocument, root: Path) -> str:
    name = relative_name(doc.path, root)
    before = doc.base_text.splitlines(keepends=True)
    after = doc.text.splitlines(keepends=True)
    head = max(0, _common_prefix(before, after) - CONTEXT)
    tail = max(0, _common_suffix(before, after, head) - CONTEXT)
    lines = difflib.unified_diff(
        before[head : len(before) - tail],
        after[head : len(after) - tail],
        fromfile=f"a/{name}" if doc.base.exists else "/dev/null",
        tofile=f"b/{name}",
    )
    out = []
    for line in lines:
        line = _shift_hunk(line, head)
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
