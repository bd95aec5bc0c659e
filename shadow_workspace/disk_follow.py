"""Following the disk under a workspace: a watcher on the folders of its documents, each
outside change followed in the shadow (disk_sync.follow_disk) and told to listeners (the
language server shows conflicts). The watcher calls in from its own thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from . import disk_sync
from .disk import path_to_uri
from .disk_sync import DiskEvent, DiskListener
from .store import DocumentStore
from .watcher import DiskWatcher

log = logging.getLogger(__name__)


class DiskFollower:
    def __init__(self, root: Path, store: DocumentStore, mutex: threading.RLock) -> None:
        self.root = root
        self.store = store
        self._mutex = mutex  # the workspace's: a change is followed as one step
        self._listeners: list[DiskListener] = []
        self._path_listeners: list[Callable[[Path], None]] = []
        self._watcher: DiskWatcher | None = None

    def start(self) -> None:
        """Without a watcher (inotify limits) outside changes are still caught at commit
        time, where the disk is always compared with the base."""
        try:
            watcher = DiskWatcher(self.root, self.on_disk_change)
            watcher.start()
        except OSError as exc:
            log.warning("no disk watcher for %s (%s): conflicts show at commit", self.root, exc)
            return
        self._watcher = watcher
        for doc in self.store.documents.values():  # restored from the journal
            watcher.watch_folder_of(doc.path)

    def watch_folder_of(self, path: Path) -> None:
        if self._watcher is not None:
            self._watcher.watch_folder_of(path)

    def add_listener(self, listener: DiskListener) -> Callable[[], None]:
        """Hear of disk events (called in the watcher's thread); returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def add_path_listener(self, listener: Callable[[Path], None]) -> None:
        """Hear of every path the watcher reports, held in the shadow or not (the
        project index); called in the watcher's thread, so it must only enqueue."""
        self._path_listeners.append(listener)

    def on_disk_change(self, path: Path) -> None:
        """A file under the root changed on disk (called by the watcher)."""
        for listener in self._path_listeners:
            try:
                listener(path)
            except Exception:
                log.exception("disk path listener failed")
        with self._mutex:
            key = path_to_uri(path.absolute())
            documents = self.store.documents
            doc = documents.get(key)
            if doc is None:
                doc = next((d for d in documents.values() if d.path.resolve() == path), None)
            if doc is not None:
                event = disk_sync.follow_disk(self.store, doc)
                if event is not None:
                    self._emit(event)

    def _emit(self, event: DiskEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("disk listener failed")

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
