"""A watchdog observer per workspace root: reports files changed, created, moved or
deleted by others (git checkout, a formatter, another editor) to a callback, which runs
in the observer's thread.

It watches only the folders that hold documents of the shadow, each non-recursively: a
file the shadow does not hold just follows the disk, and a root that turns out to be a
home folder (a file opened outside any project) must not cost a recursive watch of it.
"""

from __future__ import annotations

import logging
import threading
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
        self._handler = _Handler(callback)
        self._folders: set[Path] = set()
        self._lock = threading.Lock()
        self._observer = Observer()
        self._observer.daemon = True

    def start(self) -> None:
        self._observer.start()

    def watch_folder_of(self, path: Path) -> None:
        """Watch the folder holding `path` (once); a folder that does not exist yet is
        skipped: commits still compare with the disk."""
        folder = path.parent
        with self._lock:
            if folder in self._folders or not folder.is_dir():
                return
            try:
                self._observer.schedule(self._handler, str(folder), recursive=False)
            except OSError as exc:  # inotify limits: conflicts still show at commit
                log.warning("cannot watch %s: %s", folder, exc)
                return
            self._folders.add(folder)

    def stop(self) -> None:
        self._observer.stop()
        if self._observer.is_alive():
            self._observer.join(timeout=5)
