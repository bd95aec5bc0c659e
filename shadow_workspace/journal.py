"""Journal of pending shadow edits: msgpack records appended to one file per root under
the state directory. A record is written with one write() before the edit is
acknowledged, so a killed daemon loses none; a torn last record is ignored on replay."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from .model import Range, TextChange

log = logging.getLogger(__name__)
COMPACT_BYTES = 32 * 1024 * 1024  # rewrite the journal from snapshots past this size


def journal_path(journal_dir: Path, root: Path) -> Path:
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return journal_dir / f"{root.name or 'root'}-{digest}.journal"


def encode_change(change: TextChange) -> list[Any]:
    if change.range is None:
        return [change.text]
    rng = change.range
    return [rng.start.line, rng.start.character, rng.end.line, rng.end.character, change.text]


def decode_change(data: list[Any]) -> TextChange:
    if len(data) == 1:
        return TextChange(None, str(data[0]))
    start_line, start_char, end_line, end_char, text = data
    return TextChange(Range.of(start_line, start_char, end_line, end_char), str(text))


@dataclass
class JournalEntry:
    """A snapshot of one pending document plus the edits after it."""

    snapshot: dict[str, Any]
    edits: list[dict[str, Any]] = field(default_factory=list)


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Records in order; stops at a torn or corrupt tail (a crash mid-write)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(data)
    try:
        for record in unpacker:
            if isinstance(record, dict) and "t" in record:
                yield record
    except (ValueError, msgpack.UnpackException) as exc:
        log.warning("journal %s: corrupt tail ignored (%s)", path, exc)


@dataclass
class JournalState:
    entries: dict[str, JournalEntry] = field(default_factory=dict)
    holder: str | None = None  # the last lock holder recorded


def replay(path: Path) -> JournalState:
    """The pending documents the journal describes, by key, and the lock holder."""
    state = JournalState()
    entries = state.entries
    for record in read_records(path):
        key = str(record.get("key", ""))
        kind = record["t"]
        if kind == "snap":
            entries[key] = JournalEntry(record)
        elif kind == "edit" and key in entries:
            entries[key].edits.append(record)
        elif kind == "drop":
            entries.pop(key, None)
        elif kind == "lock":
            state.holder = str(record.get("holder"))
    return state


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = self._open()
        self.journaled: set[str] = set()  # keys with a snapshot in the file
        self.error: str | None = None  # the last write failure, if any
        # After a failed write the file misses a record: appending more would replay
        # wrong, so nothing is appended until a rewrite from snapshots succeeds.
        self.stale = False

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def _append(self, record: dict[str, Any]) -> None:
        """One write() per record. A failing disk (full, gone) is logged and reported by
        `error`, never raised: the edit itself already landed in the shadow. A torn
        record is cut off again, so the file replays to the state before it."""
        if self.stale:
            return
        data = msgpack.packb(record, use_bin_type=True)
        view = memoryview(data)
        start = -1
        try:
            start = os.fstat(self._fd).st_size
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            self._failed(exc, start)

    def _failed(self, exc: OSError, start: int) -> None:
        if self.error is None:
            log.error("journal %s: cannot write (%s): edits are not journaled", self.path, exc)
        self.error = f"journal not written: {exc}"
        self.stale = True
        if start >= 0:
            try:
                os.ftruncate(self._fd, start)
            except OSError as cut:
                log.error("journal %s: torn record not cut off (%s)", self.path, cut)

    def snapshot(self, key: str, snapshot: dict[str, Any]) -> None:
        self._append({"t": "snap", "key": key, **snapshot})
        self.journaled.add(key)

    def edit(self, key: str, version: int, author: str, changes: list[TextChange]) -> None:
        record = {
            "t": "edit",
            "key": key,
            "version": version,
            "author": author,
            "changes": [encode_change(change) for change in changes],
        }
        self._append(record)

    def lock(self, holder: str) -> None:
        self._append({"t": "lock", "holder": holder})

    def drop(self, key: str) -> None:
        if key in self.journaled:
            self._append({"t": "drop", "key": key})
            self.journaled.discard(key)

    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def rewrite(self, snapshots: dict[str, dict[str, Any]], holder: str) -> None:
        """Replace the file by the lock holder and these snapshots (atomic rename)."""
        temp = self.path.with_suffix(".compact")
        try:
            self._write_compacted(temp, snapshots, holder)
            os.replace(temp, self.path)
        except BaseException:
            temp.unlink(missing_ok=True)  # a full disk keeps no half-written copy
            raise
        os.close(self._fd)
        self._fd = self._open()
        self.journaled = set(snapshots)
        if self.stale:
            log.warning("journal %s: writable again, rewritten from the shadow", self.path)
        self.stale, self.error = False, None

    @staticmethod
    def _write_compacted(temp: Path, snapshots: dict[str, dict[str, Any]], holder: str) -> None:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            records = [{"t": "lock", "holder": holder}]
            records += [{"t": "snap", "key": key, **snap} for key, snap in snapshots.items()]
            view = memoryview(b"".join(msgpack.packb(r, use_bin_type=True) for r in records))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    def sync(self) -> None:
        try:
            os.fsync(self._fd)
        except OSError as exc:
            self.error = f"journal not synced: {exc}"

    def close(self) -> None:
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1
