"""A windowed commit of the edit corpus as hunks that can be applied in any subset.

A record holds a window of a file before and after a commit and its `git diff -U0`
hunks (1-based lines relative to the window). `text_with(applied)` gives the window
with just those hunks applied, which is what an editing session looks like part way
through the commit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Hunk:
    """Lines before[old:old + len(old_lines)] become new_lines (0-based)."""

    old: int
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]


@dataclass(frozen=True)
class Commit:
    repo: str
    commit: str
    path: str
    before_lines: tuple[str, ...]
    hunks: tuple[Hunk, ...]  # top to bottom

    def text_with(self, applied: Iterable[int]) -> str:
        """The window with the hunks whose indices are in `applied` done."""
        chosen = set(applied)
        out: list[str] = []
        at = 0
        for index, hunk in enumerate(self.hunks):
            out.extend(self.before_lines[at : hunk.old])
            out.extend(hunk.new_lines if index in chosen else hunk.old_lines)
            at = hunk.old + len(hunk.old_lines)
        out.extend(self.before_lines[at:])
        return "".join(out)


def _start(line: int, length: int) -> int:
    # -U0 names the line *after which* a pure insertion goes (length 0).
    return line if length == 0 else line - 1


class BadRecord(ValueError):
    """A corpus record whose texts do not match its hunks: skipped and counted, never
    mined (its situations would teach edits nobody made)."""


def commit_from_record(record: Mapping[str, Any]) -> Commit:
    """The record as a Commit; BadRecord when its hunks, applied to `before`, do not
    give `after` (or reach outside the texts)."""
    try:
        before = tuple(record["before"].splitlines(keepends=True))
        after = tuple(record["after"].splitlines(keepends=True))
        hunks = []
        for old_start, old_len, new_start, new_len in sorted(record["hunks"]):
            old = _start(old_start, old_len)
            new = _start(new_start, new_len)
            old_lines, new_lines = before[old : old + old_len], after[new : new + new_len]
            if old < 0 or new < 0 or len(old_lines) != old_len or len(new_lines) != new_len:
                raise BadRecord(f"hunk {old_start},{old_len} {new_start},{new_len} outside")
            hunks.append(Hunk(old, old_lines, new_lines))
        commit = Commit(record["repo"], record["commit"], record["path"], before, tuple(hunks))
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        if isinstance(error, BadRecord):
            raise
        raise BadRecord(f"malformed record: {error!r}") from error
    if not hunks:
        raise BadRecord("no hunks")
    if commit.text_with(range(len(hunks))) != record["after"]:
        raise BadRecord("before + hunks != after")
    return commit


def read_records(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    for path in paths:
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                yield json.loads(line)
