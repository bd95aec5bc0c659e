"""Minimal edits: a rewritten region diffed against the region as it is, as the few
smallest replacements that turn one into the other (so a completion at the cursor is
an insertion there, and the reversal check sees exactly what a candidate removes)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class TextEdit:
    """Replace text[start:end] (str offsets into the document) by new_text."""

    start: int
    end: int
    new_text: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.new_text + text[self.end :]


def apply_all(text: str, edits: tuple[TextEdit, ...]) -> str:
    """The edits (sorted, not overlapping) applied to text."""
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = edit.apply(text)
    return text


def minimal_edits(old: str, new: str, offset: int = 0) -> tuple[TextEdit, ...]:
    """Replacements turning `old` (at `offset` of the document) into `new`: changed
    lines from a line diff, then each trimmed to the characters that differ."""
    if old == new:
        return ()
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    old_at = _offsets(old_lines)
    new_at = _offsets(new_lines)
    edits = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        removed = old[old_at[i1] : old_at[i2]]
        added = new[new_at[j1] : new_at[j2]]
        edits.append(_trimmed(removed, added, offset + old_at[i1]))
    return tuple(edits)


def _offsets(lines: list[str]) -> list[int]:
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets


def _trimmed(removed: str, added: str, at: int) -> TextEdit:
    prefix = 0
    while prefix < min(len(removed), len(added)) and removed[prefix] == added[prefix]:
        prefix += 1
    suffix = 0
    limit = min(len(removed), len(added)) - prefix
    while suffix < limit and removed[-1 - suffix] == added[-1 - suffix]:
        suffix += 1
    return TextEdit(at + prefix, at + len(removed) - suffix, added[prefix : len(added) - suffix])
