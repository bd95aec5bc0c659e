"""Errors of the shadow workspace: each says clearly what was refused and why."""

from __future__ import annotations


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


class PathOutsideRoot(ShadowError):
    """The path resolves outside the workspace root (.., symlinks): refused."""


class CommitConflict(ShadowError):
    """The disk no longer holds the version the shadow was based on: nothing written."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"conflict on {path}: {reason}")
        self.path = path
        self.reason = reason
