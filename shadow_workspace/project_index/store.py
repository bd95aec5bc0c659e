"""The index's data: every window's line range and identifier count, an inverted index
from identifier to windows (growable int32 arrays, read by numpy without a copy), and the
definitions by name. Not thread-safe: ProjectIndex guards it with its lock.

Replacing a file's entry marks its old windows dead (identifier count -1) rather than
rewriting the postings; compact() rebuilds them once the dead outnumber the living."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np

from .extract import DefinitionRecord, LineWindow


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One indexed file: its windows are ids [first_window, first_window + window_count);
    `text` is kept only for a buffer's text (the disk is read again for a disk file)."""

    path: str
    first_window: int
    window_count: int
    definitions: tuple[DefinitionRecord, ...]
    parsed: bool  # the definitions come from ast (now, or its last good parse); else regex
    mtime_ns: int = 0
    size: int = 0
    text: str | None = None


@dataclass(frozen=True, slots=True)
class WindowMatch:
    """A window similar to a query: lines [start, end) of `path` (0-based), its Jaccard
    similarity with the query's identifiers, and its text."""

    path: str
    start: int
    end: int
    score: float
    text: str = ""


@dataclass
class WindowStore:
    files: dict[str, FileEntry] = field(default_factory=dict)
    window_path: list[str] = field(default_factory=list)
    window_start: array[int] = field(default_factory=lambda: array("i"))
    window_end: array[int] = field(default_factory=lambda: array("i"))
    window_size: array[int] = field(default_factory=lambda: array("i"))  # -1: dead
    postings: dict[str, array[int]] = field(default_factory=dict)
    # tuples, not lists: a tuple of untracked records is itself untracked by the collector
    by_name: dict[str, tuple[DefinitionRecord, ...]] = field(default_factory=dict)
    dead_windows: int = 0

    @property
    def live_windows(self) -> int:
        return len(self.window_size) - self.dead_windows

    @property
    def definition_count(self) -> int:
        return sum(len(entry.definitions) for entry in self.files.values())

    def put(
        self,
        path: str,
        windows: list[LineWindow],
        definitions: tuple[DefinitionRecord, ...],
        *,
        parsed: bool,
        mtime_ns: int = 0,
        size: int = 0,
        text: str | None = None,
    ) -> None:
        self.remove(path)
        first = len(self.window_size)
        for offset, window in enumerate(windows):
            self.window_path.append(path)
            self.window_start.append(window.start)
            self.window_end.append(window.end)
            self.window_size.append(len(window.identifiers))
            for name in window.identifiers:
                posting = self.postings.get(name)
                if posting is None:
                    posting = self.postings[name] = array("i")
                posting.append(first + offset)
        for definition in definitions:
            self.by_name[definition[0]] = (*self.by_name.get(definition[0], ()), definition)
        self.files[path] = FileEntry(
            path, first, len(windows), definitions, parsed, mtime_ns, size, text
        )

    def remove(self, path: str) -> FileEntry | None:
        entry = self.files.pop(path, None)
        if entry is None:
            return None
        for window in range(entry.first_window, entry.first_window + entry.window_count):
            self.window_size[window] = -1
        self.dead_windows += entry.window_count
        for name in {definition[0] for definition in entry.definitions}:
            kept = tuple(d for d in self.by_name.get(name, ()) if d[2] != path)
            if kept:
                self.by_name[name] = kept
            else:
                self.by_name.pop(name, None)
        return entry

    def similar(
        self, query: frozenset[str], k: int, exclude: tuple[str, int, int] | None
    ) -> list[WindowMatch]:
        """The k windows of highest Jaccard similarity with `query` (none without a
        shared identifier), but none overlapping lines [start, end) of the excluded path."""
        postings = [self.postings[name] for name in query if name in self.postings]
        if not postings or k <= 0:
            return []
        count = len(self.window_size)
        # frombuffer views the arrays without copying; they are dropped with the list
        # before the lock is released (an array cannot grow while a view exists)
        hits = np.concatenate([np.frombuffer(p, dtype=np.int32) for p in postings])
        shared = np.bincount(hits, minlength=count).astype(np.float64)
        sizes = np.frombuffer(self.window_size, dtype=np.int32).astype(np.float64)
        score = np.where(sizes > 0, shared / (len(query) + sizes - shared + 1e-9), 0.0)
        if exclude is not None and exclude[0] in self.files:
            entry = self.files[exclude[0]]
            first, last = entry.first_window, entry.first_window + entry.window_count
            starts = np.frombuffer(self.window_start, dtype=np.int32)[first:last]
            ends = np.frombuffer(self.window_end, dtype=np.int32)[first:last]
            overlapping = (starts < exclude[2]) & (ends > exclude[1])
            score[first:last][overlapping] = 0.0
            del starts, ends
        k = min(k, count)
        kth = np.partition(score, count - k)[count - k]
        # every window tied with the k-th best, so that ties break by window id (the
        # order files were indexed in), whatever the partition chose
        candidates = np.flatnonzero((score >= kth) & (score > 0))
        ranked = candidates[np.lexsort((candidates, -score[candidates]))][:k].tolist()
        return [
            WindowMatch(
                self.window_path[w],
                self.window_start[w],
                self.window_end[w],
                round(float(score[w]), 4),
            )
            for w in ranked
        ]

    def compacted(self) -> WindowStore:
        """A copy without dead windows (the postings rebuilt from the live ones)."""
        fresh = WindowStore()
        order = sorted(self.files.values(), key=lambda entry: entry.first_window)
        alive = np.frombuffer(self.window_size, dtype=np.int32).copy()
        reverse: dict[int, list[str]] = {}
        for name, posting in self.postings.items():
            for window in posting:
                if alive[window] >= 0:
                    reverse.setdefault(window, []).append(name)
        for entry in order:
            windows = [
                LineWindow(
                    self.window_start[w],
                    self.window_end[w],
                    frozenset(reverse.get(w, ())),
                )
                for w in range(entry.first_window, entry.first_window + entry.window_count)
            ]
            fresh.put(
                entry.path,
                windows,
                entry.definitions,
                parsed=entry.parsed,
                mtime_ns=entry.mtime_ns,
                size=entry.size,
                text=entry.text,
            )
        return fresh
