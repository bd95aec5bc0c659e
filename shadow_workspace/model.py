"""Plain data shared by the shadow workspace and its callers: LSP-shaped positions,
ranges, changes, edit events and diagnostics, and the errors the workspace raises (each
says clearly what was refused and why). Positions count UTF-16 code units."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Author = Literal["user", "model"]


@dataclass(frozen=True, order=True, slots=True)
class Position:
    """Zero-based line and UTF-16 character offset, as in LSP."""

    line: int
    character: int

    def to_dict(self) -> dict[str, int]:
        return {"line": self.line, "character": self.character}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Position:
        return cls(int(data["line"]), int(data["character"]))


@dataclass(frozen=True, slots=True)
class Range:
    start: Position
    end: Position

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {"start": self.start.to_dict(), "end": self.end.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Range:
        return cls(Position.from_dict(data["start"]), Position.from_dict(data["end"]))

    @classmethod
    def of(cls, start_line: int, start_char: int, end_line: int, end_char: int) -> Range:
        return cls(Position(start_line, start_char), Position(end_line, end_char))


@dataclass(frozen=True, slots=True)
class TextChange:
    """One LSP content change: replace `range` by `text`; range None = the whole text."""

    range: Range | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"range": None if self.range is None else self.range.to_dict(), "text": self.text}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TextChange:
        rng = data.get("range")
        return cls(None if rng is None else Range.from_dict(rng), str(data["text"]))


@dataclass(frozen=True, slots=True)
class EditEvent:
    """One recorded change: `range` is where `old_text` was before the edit.

    `offset` is the str index of the range start (code points), used for coalescing."""

    uri: str
    time: float
    range: Range
    old_text: str
    new_text: str
    author: Author
    offset: int = field(default=0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["range"] = self.range.to_dict()
        return data


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """LSP-shaped: severity 1 error, 2 warning, 3 information, 4 hint."""

    range: Range
    message: str
    severity: int = 1
    source: str = ""
    code: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "range": self.range.to_dict(),
            "message": self.message,
            "severity": self.severity,
            "source": self.source,
            "code": self.code,
        }


# errors


class ShadowError(ValueError):
    """Base class: bad input or a refused operation (a ValueError: the daemon answers it as
    bad arguments and keeps running)."""


class UnknownDocument(ShadowError, KeyError):
    def __str__(self) -> str:
        return f"document not in the shadow workspace: {self.args[0]}"


class StaleVersion(ShadowError):
    """An edit was made against a version that no longer exists."""


class UnsupportedFile(ShadowError):
    """Not UTF-8 text (binary or another encoding): refused, never rewritten."""


class DocumentTooLarge(ShadowError):
    """Over the workspace's document size limit: refused before it is held in memory."""


class PathOutsideRoot(ShadowError):
    """The path resolves outside the workspace root (.., symlinks): refused."""


class DiskWriteError(ShadowError):
    """The OS refused a write (full disk, I/O error, read-only): nothing was replaced."""

    def __init__(self, path: str, exc: OSError) -> None:
        reason = exc.strerror or str(exc)
        super().__init__(
            f"cannot write {path}: {reason}; the file on disk is unchanged and the edits "
            "stay in the shadow"
        )
        self.path = path
        self.errno = exc.errno


class CommitConflict(ShadowError):
    """The disk no longer holds the version the shadow was based on: nothing written."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"conflict on {path}: {reason}")
        self.path = path
        self.reason = reason
