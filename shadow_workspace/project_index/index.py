"""ProjectIndex: one root's files indexed in a background thread and kept current.

The thread walks the root (walk.py), reads each file once, and keeps its windows and
definitions (store.py); it then re-indexes the files that change: a buffer's text handed
to update() (it wins over the disk until forget_buffer()), a disk change the workspace's
watcher reports, and every RESCAN_INTERVAL_S a re-walk that re-reads only files whose size
or mtime changed. Callers never wait for it: update() and on_disk_change() only enqueue,
queries read what is indexed so far under a lock held for a few milliseconds."""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from . import extract
from .extract import Definition, DefinitionRecord
from .limits import SKIPPED_FOLDERS, IndexLimits, broad_root
from .reading import Gone, read_indexable, read_lines
from .store import WindowMatch, WindowStore
from .walk import IgnoreRules, walk_files

log = logging.getLogger(__name__)
TextSource = str | Callable[[], str]
PYTHON_SUFFIXES = (".py", ".pyi")


class ProjectIndex:
    def __init__(self, root: Path | str, limits: IndexLimits | None = None) -> None:
        self.root = Path(root).resolve()
        self.limits = limits or IndexLimits()
        self.broad_root = broad_root(self.root)
        self._lock = threading.Lock()  # guards _store and _buffers
        self._store = WindowStore()
        self._buffers: set[str] = set()  # files whose indexed text is an editor's buffer
        self._wake = threading.Condition()  # guards _pending and _closed
        self._pending: dict[str, tuple[TextSource | None, float]] = {}
        self._closed = False
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._rules = IgnoreRules(self.root)
        self._state = "idle"
        self._skipped: Counter[str] = Counter()
        self._stopped: str | None = None  # why the last walk ended before the root's end
        self._build_s: float | None = None
        self._walks = 0
        self._busy = False  # the thread is indexing updates it took from _pending
        self._real_paths: dict[str, str] = {}  # a caller's path -> its resolved form
        self._skip_memo: dict[str, tuple[int, int, str]] = {}  # path -> mtime, size, why

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        if self.broad_root is not None:
            log.warning(
                "project index: %s is %s: indexed only up to %d files and %g s",
                self.root,
                self.broad_root,
                self.limits.max_files,
                self.limits.time_budget_s,
            )
        self._state = "building"
        self._thread = threading.Thread(target=self._run, name="project-index", daemon=True)
        self._thread.start()

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._state = "closed"

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the first walk has ended (for tests and benchmarks)."""
        return self._ready.wait(timeout)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until every update enqueued so far is indexed (for tests)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._wake:
                if not self._pending and not self._busy:
                    return True
            time.sleep(0.01)
        return False

    # -- keeping it current (cheap: these only enqueue) -------------------------------------
    def update(self, path: Path | str, text: TextSource | None = None) -> None:
        """`path`'s text is now `text` (a buffer's, or a callable that joins it in the
        index's thread); None: read it from the disk. Re-indexed once quiet."""
        self._enqueue(self._real_path(path), text)

    def forget_buffer(self, path: Path | str) -> None:
        """No editor holds `path` any more: index the disk's text again."""
        self._enqueue(self._real_path(path), None, forget=True)

    def on_disk_change(self, path: Path) -> None:
        """The watcher saw `path` change on disk (called in its thread)."""
        key = self._real_path(path)
        with self._lock:
            if key in self._buffers:
                return  # the buffer's text wins
        self._enqueue(key, None)

    def _real_path(self, path: Path | str) -> str:
        """The path as the walk names it (symbolic links resolved), cached: an editor's
        path may go through a link, and update() runs on every keystroke."""
        key = str(path)
        real = self._real_paths.get(key)
        if real is None:
            if len(self._real_paths) > 10_000:
                self._real_paths.clear()
            real = self._real_paths[key] = os.path.realpath(key)
        return real

    def _enqueue(self, key: str, text: TextSource | None, forget: bool = False) -> None:
        if forget:
            with self._lock:
                self._buffers.discard(key)
        with self._wake:
            previous = self._pending.get(key)
            if text is None and not forget and previous is not None:
                text = previous[0]  # a disk change does not drop a buffer's text not yet indexed
            self._pending[key] = (text, time.monotonic())
            self._wake.notify()

    # -- queries ---------------------------------------------------------------------------
    def similar_windows(
        self,
        query_text: str,
        k: int = 3,
        exclude: tuple[Path | str, tuple[int, int] | None] | None = None,
    ) -> list[WindowMatch]:
        """The k windows most similar to `query_text` (Jaccard similarity of identifier
        sets), best first, with their text; `exclude` = (path, (start, end)) leaves out
        that file's windows overlapping lines [start, end) (None: the whole file)."""
        query = extract.identifiers(query_text)
        excluded = None
        if exclude is not None:
            start, end = exclude[1] if exclude[1] is not None else (0, 2**31 - 1)
            excluded = (str(exclude[0]), start, end)
        with self._lock:
            matches = self._store.similar(query, k, excluded)
            texts = {m.path: self._store.files[m.path].text for m in matches}
        found = []
        for match in matches:
            text = texts[match.path]
            lines = extract.split_lines(text) if text is not None else read_lines(match.path)
            window = "\n".join(lines[match.start : match.end])
            found.append(WindowMatch(match.path, match.start, match.end, match.score, window))
        return found

    def definitions(self, names: Iterable[str]) -> dict[str, list[Definition]]:
        """Where each of `names` is defined (top level or in a class), by name."""
        with self._lock:
            by_name = self._store.by_name
            found = {name: by_name[name] for name in names if name in by_name}
        return {name: [Definition(*each) for each in records] for name, records in found.items()}

    def describe(self) -> dict[str, Any]:
        """What is indexed and what was skipped, for `daemon status`."""
        with self._lock:
            store = self._store
            described: dict[str, Any] = {
                "state": self._state,
                "files": len(store.files),
                "windows": store.live_windows,
                "definitions": store.definition_count,
                "buffers": len(self._buffers),
            }
        described |= {
            # dict() copies in one step under the GIL, while the thread may count a skip
            "skipped": dict(sorted(dict(self._skipped).items())),
            "build_s": self._build_s,
            "walks": self._walks,
            "stopped": self._stopped,
        }
        if self.broad_root is not None:
            described["note"] = f"the root is {self.broad_root}: indexed only up to the bounds"
        return described

    # -- the index's thread ----------------------------------------------------------------
    def _run(self) -> None:
        try:
            while not self._closed:
                self._walk()
                self._ready.set()
                # A root the walk could not finish within the time budget, or a home
                # folder, is not walked again: that would cost the budget every interval.
                out_of_time = (self._stopped or "").startswith("time budget")
                again = self.broad_root is None and not out_of_time
                self._serve_updates(
                    time.monotonic() + self.limits.rescan_interval_s if again else math.inf
                )
        except Exception:  # the daemon goes on without an index; status says so
            log.exception("project index of %s failed", self.root)
            self._state = "failed"
            self._ready.set()

    def _serve_updates(self, until: float) -> None:
        """Index the updates as they become due (quiet long enough), until `until`."""
        while True:
            with self._wake:
                if self._closed:
                    return
                now = time.monotonic()
                quiet = self.limits.update_quiet_s
                due = min((t + quiet for _, t in self._pending.values()), default=math.inf)
                if due > now:
                    if now >= until:
                        return
                    wake_at = min(due, until)
                    self._wake.wait(None if wake_at == math.inf else wake_at - now)
                    continue
            self._index_due()
            self._compact_if_sparse()

    def _index_due(self) -> None:
        now = time.monotonic()
        with self._wake:
            quiet = self.limits.update_quiet_s
            due = [key for key, (_, t) in self._pending.items() if t + quiet <= now]
            items = [(key, self._pending.pop(key)[0]) for key in due]
            self._busy = bool(items)
        try:
            for key, text in items:
                self._index_update(key, text)
        finally:
            with self._wake:
                self._busy = False

    def _walk(self) -> None:
        started = time.monotonic()
        limits = self.limits
        self._rules = rules = IgnoreRules(self.root)
        self._skipped = skipped = Counter[str]()
        seen: set[str] = set()
        stopped = None
        with self._lock:
            seen |= self._buffers
        for path, stat in walk_files(self.root, rules, limits.max_file_bytes, skipped):
            if self._closed:
                return
            if time.monotonic() - started > limits.time_budget_s:
                stopped = f"time budget of {limits.time_budget_s:g} s reached"
                break
            key = str(path)
            if key in seen:
                continue
            if len(seen) >= limits.max_files:
                stopped = f"file limit of {limits.max_files} reached"
                break
            entry = self._store.files.get(key)  # only this thread writes the store
            if entry is not None and (entry.mtime_ns, entry.size) == (
                stat.st_mtime_ns,
                stat.st_size,
            ):
                seen.add(key)
                continue
            memo = self._skip_memo.get(key)
            if memo is not None and memo[:2] == (stat.st_mtime_ns, stat.st_size):
                skipped[memo[2]] += 1  # skipped last walk, unchanged: not read again
                continue
            reason = self._index_disk_file(key)
            if reason is None:
                seen.add(key)
            else:
                skipped[reason] += 1
                if len(self._skip_memo) > 100_000:
                    self._skip_memo.clear()
                self._skip_memo[key] = (stat.st_mtime_ns, stat.st_size, reason)
            self._index_due()  # a buffer's update does not wait for the walk's end
            time.sleep(0)  # hand the GIL to the event loop's thread between files
        if stopped is None or stopped.startswith("file limit"):
            with self._lock:
                for gone in self._store.files.keys() - seen:
                    self._store.remove(gone)
        if stopped is not None:
            log.info("project index of %s: %s", self.root, stopped)
        self._stopped = stopped
        self._walks += 1
        if self._build_s is None:
            self._build_s = round(time.monotonic() - started, 3)
        self._state = "ready"

    # -- indexing one file -----------------------------------------------------------------
    def _index_update(self, key: str, source: TextSource | None) -> None:
        path = Path(key)
        reason = self._update_skip_reason(path)
        if reason is not None:
            with self._lock:
                self._store.remove(key)
                self._buffers.discard(key)
            self._skipped[reason] += 1
            return
        if source is None:
            with self._lock:
                from_buffer = key in self._buffers
            if not from_buffer:
                reason = self._index_disk_file(key)
        else:
            text = source if isinstance(source, str) else source()
            reason = self._index_text(key, text, buffer=True)
        if reason is not None:
            self._skipped[reason] += 1

    def _update_skip_reason(self, path: Path) -> str | None:
        """Why a path an update names is not indexed (the walk's rules, for one path)."""
        if self.root not in path.parents:
            return "outside_root"
        for part in path.relative_to(self.root).parts[:-1]:
            if part in SKIPPED_FOLDERS:
                return SKIPPED_FOLDERS[part]
        if self._rules.ignored(path, is_folder=False):
            return "ignored"
        with self._lock:
            known = str(path) in self._store.files
            full = len(self._store.files) >= self.limits.max_files
        return "file_limit" if full and not known else None

    def _index_disk_file(self, key: str) -> str | None:
        """Read and index the file at `key`; a skip's reason, or None (indexed, or gone)."""
        try:
            read = read_indexable(key, self.limits.max_file_bytes, self._rules)
        except Gone:
            with self._lock:
                self._store.remove(key)
            return None
        if isinstance(read, str):
            return read
        return self._index_text(key, read[0], buffer=False, stat=read[1])

    def _index_text(
        self, key: str, text: str, *, buffer: bool, stat: os.stat_result | None = None
    ) -> str | None:
        """Index `text` as the file at `key`; a skip's reason (its old entry dropped)."""
        limits = self.limits
        lines = extract.split_lines(text)
        reason = None
        if len(text) > limits.max_file_bytes:
            reason = "too_large"
        elif any(len(line) > limits.max_line_chars for line in lines):
            reason = "minified"
        elif extract.looks_generated(lines):
            reason = "generated"
        if reason is not None:
            with self._lock:
                self._store.remove(key)
            return reason
        windows = extract.windows(lines, limits.window_lines, limits.window_stride)
        definitions, parsed = self._definitions_of(key, text, lines)
        with self._lock:
            self._store.put(
                key,
                windows,
                definitions,
                parsed=parsed,
                mtime_ns=0 if stat is None else stat.st_mtime_ns,
                size=0 if stat is None else stat.st_size,
                text=text if buffer else None,
            )
            if buffer:
                self._buffers.add(key)
        return None

    def _definitions_of(
        self, key: str, text: str, lines: list[str]
    ) -> tuple[tuple[DefinitionRecord, ...], bool]:
        """ast's definitions; for a file that does not parse (mid-edit), the last good
        parse's, else the regex fallback's. Only Python files have definitions."""
        if not key.endswith(PYTHON_SUFFIXES):
            return (), False
        if len(text) <= self.limits.max_parse_bytes:
            parsed = extract.python_definitions(key, text, lines)
            if parsed is not None:
                return tuple(parsed), True
            previous = self._store.files.get(key)
            if previous is not None and previous.parsed:
                return previous.definitions, True
        return tuple(extract.regex_definitions(key, lines)), False

    def _compact_if_sparse(self) -> None:
        """Rebuild the postings once dead windows outnumber live ones (each re-indexed
        file leaves its old windows dead). Built outside the lock (only this thread writes
        the store), swapped in under it."""
        store = self._store
        if store.dead_windows <= max(10_000, store.live_windows):
            return
        fresh = store.compacted()
        with self._lock:
            self._store = fresh
