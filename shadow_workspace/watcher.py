"""A watchdog observer per workspace root: reports files changed, created, moved or
deleted by others (git checkout, a formatter, another editor) to a callback, which runs
in the observer's thread."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from .disk import TEMP_SUFFIX

log = logging.getLogger(__name__)
IGNORED_SUFFIXES = (TEMP_SUFFIX,)  # our own temp files during atomic writes


class _Handler(FileSystemEventHandler):
    def __init__(self, callback: Callable[[Path], None]) -> None:
        self._callback = callback

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = raw.decode() if isinstance(raw, bytes) else raw
            if path and not path.endswith(IGNORED_SUFFIXES):
                try:
                    self._callback(Path(path))
                except Exception:  # the observer thread must survive a bad file
                    log.exception("disk change handler failed for %s", path)


class DiskWatcher:
    def __init__(self, root: Path, callback: Callable[[Path], None]) -> None:
        self.root = root
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.schedule(_Handler(callback), str(root), recursive=True)

    def start(self) -> None:
        self._observer.start()

    def stop(self) -> None:
        self._observer.stop()
        if self._observer.is_alive():
            self._observer.join(timeout=5)
