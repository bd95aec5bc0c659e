"""Workspaces: one ShadowWorkspace per root, shared by every editor session."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

from .disk import MAX_DOCUMENT_BYTES, uri_to_path
from .linting import DEFAULT_LINT_MAX_MB, LinterSpec
from .save_lock import Holder
from .workspace import ShadowWorkspace

ROOT_MARKERS = (
    ".git",
    ".hg",
    "pyproject.toml",
    "setup.cfg",
    "package.json",
    "Cargo.toml",
    "go.mod",
)


def discover_root(path: Path) -> Path:
    """The nearest folder above `path` holding a project marker, else its folder."""
    path = path.absolute()
    start = path if path.is_dir() else path.parent
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return folder
    return start


class Workspaces:
    def __init__(
        self,
        journal_dir: Path | str | None = None,
        linters: Mapping[str, LinterSpec] | None = None,
        *,
        holder: Holder = "user",
        watch: bool = True,
        max_document_bytes: int = MAX_DOCUMENT_BYTES,
        lint_max_mb: float = DEFAULT_LINT_MAX_MB,
    ) -> None:
        self.max_document_bytes = max_document_bytes
        self.lint_max_mb = lint_max_mb
        self.journal_dir = None if journal_dir is None else Path(journal_dir)
        self.linters = linters
        self.holder: Holder = holder
        self.watch = watch
        self._by_root: dict[Path, ShadowWorkspace] = {}
        self._mutex = threading.Lock()

    def for_root(self, path: Path | str) -> ShadowWorkspace:
        root = Path(path).resolve()
        with self._mutex:
            found = self._by_root.get(root)
            if found is None:
                found = ShadowWorkspace(
                    root,
                    self.journal_dir,
                    self.linters,
                    holder=self.holder,
                    watch=self.watch,
                    max_document_bytes=self.max_document_bytes,
                    lint_max_mb=self.lint_max_mb,
                )
                self._by_root[root] = found
            return found

    def for_uri(self, uri: str) -> ShadowWorkspace:
        """The innermost open workspace holding `uri`, else one for its discovered root."""
        path = uri_to_path(uri).absolute()
        real = path.resolve()
        with self._mutex:
            holding = [
                r for r in self._by_root if r == real or r in real.parents or r in path.parents
            ]
        if holding:
            return self._by_root[max(holding, key=lambda r: len(r.parts))]
        return self.for_root(discover_root(path))

    def close_root(self, path: Path | str) -> None:
        """Stop and forget the workspace of `path`, if open (its folder is done with)."""
        root = Path(path).resolve()
        with self._mutex:
            found = self._by_root.pop(root, None)
        if found is not None:
            found.close()

    def all(self) -> list[ShadowWorkspace]:
        with self._mutex:
            return list(self._by_root.values())

    def close(self) -> None:
        """Stop every workspace's watcher and flush its journal."""
        for ws in self.all():
            ws.close()
        with self._mutex:
            self._by_root.clear()
