"""The save lock of one workspace root: held by the user or by the model. While the
model holds it, model edits stay in the shadow; every change of holder is a LockEvent
sent to the listeners (the language server forwards it to editors)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Holder = Literal["user", "model"]
TakeMode = Literal["commit", "discard", "keep"]
HOLDERS: tuple[Holder, ...] = ("user", "model")
TAKE_MODES: tuple[TakeMode, ...] = ("commit", "discard", "keep")

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LockEvent:
    root: str
    holder: Holder
    previous: Holder
    time: float
    reason: str  # "take:commit", "take:discard", "take:keep", "release", "toggle"...

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class TakeResult:
    """What `take` did: files written, changes dropped, conflicts, what stays pending."""

    root: str
    mode: TakeMode
    holder: Holder = "user"
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # files deleted (or renamed away)
    discarded: list[str] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    # Documents where the user had edited inside the model's edits: those edits are the
    # user's now, so a discard kept them.
    kept: list[str] = field(default_factory=list)
    diff: str = ""

    @property
    def ok(self) -> bool:
        return not self.conflicts

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data


LockListener = Callable[[LockEvent], None]


def check_holder(value: str) -> Holder:
    if value not in HOLDERS:
        raise ValueError(f"lock holder must be one of {HOLDERS}, got {value!r}")
    return value


def check_mode(value: str) -> TakeMode:
    if value not in TAKE_MODES:
        raise ValueError(f"take mode must be one of {TAKE_MODES}, got {value!r}")
    return value


class SaveLock:
    def __init__(self, root: str, holder: Holder = "user") -> None:
        self.root = root
        self._holder: Holder = check_holder(holder)
        self._listeners: list[LockListener] = []
        self._mutex = threading.Lock()

    @property
    def holder(self) -> Holder:
        return self._holder

    @property
    def model_holds(self) -> bool:
        return self._holder == "model"

    def add_listener(self, listener: LockListener) -> Callable[[], None]:
        """Register a listener; returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def set_holder(self, holder: Holder, reason: str) -> LockEvent | None:
        """Change the holder; listeners hear of it. None when the holder stays."""
        check_holder(holder)
        with self._mutex:
            previous = self._holder
            if previous == holder:
                return None
            self._holder = holder
        event = LockEvent(self.root, holder, previous, time.time(), reason)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a broken listener must not block the lock
                log.exception("lock listener failed")
        return event

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "holder": self._holder}
