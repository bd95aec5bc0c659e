"""Overlay documents and edits (UTF-16 positions), save lock, linters run on unsaved
text, disk watcher, atomic commit, journal. Imports nothing from lsp, inference, daemon."""

from .conflicts import Conflict, DiskEvent, ModelEditResult
from .diagnostics_delta import diagnostics_delta
from .disk import DiskBase, path_to_uri, uri_to_path
from .document import ShadowDocument
from .errors import (
    CommitConflict,
    PathOutsideRoot,
    ShadowError,
    StaleVersion,
    UnknownDocument,
    UnsupportedFile,
)
from .history import EditHistory
from .linting import DEFAULT_LINTERS, LinterSpec, LintReport, lint_text
from .model import Diagnostic, EditEvent, Position, Range, TextChange
from .registry import Workspaces
from .save_lock import LockEvent, SaveLock, TakeResult
from .workspace import ShadowWorkspace

__all__ = [
    "DEFAULT_LINTERS",
    "CommitConflict",
    "Conflict",
    "Diagnostic",
    "DiskBase",
    "DiskEvent",
    "EditEvent",
    "EditHistory",
    "LintReport",
    "LinterSpec",
    "LockEvent",
    "ModelEditResult",
    "PathOutsideRoot",
    "Position",
    "Range",
    "SaveLock",
    "ShadowDocument",
    "ShadowError",
    "ShadowWorkspace",
    "StaleVersion",
    "TakeResult",
    "TextChange",
    "UnknownDocument",
    "UnsupportedFile",
    "Workspaces",
    "diagnostics_delta",
    "lint_text",
    "path_to_uri",
    "uri_to_path",
]
