"""Conflicts and disk events: what the workspace reports when the disk changed under a
document with pending shadow edits (both versions are kept, nothing is merged)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

DiskEventKind = Literal["followed", "rebased", "changed", "conflict", "dropped"]


@dataclass(frozen=True, slots=True)
class Conflict:
    uri: str
    path: str
    reason: str
    time: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class DiskEvent:
    """followed: a document without pending edits took the disk text; rebased: the disk
    now holds the shadow text; changed: an open, clean document's file changed (the
    editor reloads it); conflict: pending edits and a different disk, both kept;
    dropped: a clean, closed document's file went away."""

    uri: str
    kind: DiskEventKind
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


DiskListener = Callable[[DiskEvent], None]


@dataclass(frozen=True, slots=True)
class ModelEditResult:
    """What apply_model_edit did: `written` when the user holds the lock and the file was
    committed; `conflict` when that commit was refused (the edit stays in the shadow)."""

    uri: str
    version: int
    holder: str
    written: bool
    pending: bool
    conflict: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
