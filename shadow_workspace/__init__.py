"""Overlay documents and edits (UTF-16 positions), save lock, linters run on unsaved
text, disk watcher, atomic commit, journal. Imports nothing from lsp, inference, daemon."""

from .diagnostics_delta import diagnostics_delta
from .disk import DiskBase, path_to_uri, uri_to_path
from .disk_sync import DiskEvent
from .document import ShadowDocument
from .history import EditHistory
from .line_text import position_in
from .linting import DEFAULT_LINTERS, LinterSpec, LintReport, lint_text
from .model import (
    CommitConflict,
    Diagnostic,
    DiskWriteError,
    DocumentTooLarge,
    EditEvent,
    PathOutsideRoot,
    Position,
    Range,
    ShadowError,
    StaleVersion,
    TextChange,
    UnknownDocument,
    UnsupportedFile,
)
from .model_edit import ModelEditResult
from .model_spans import minimal_change
from .registry import Workspaces
from .save_lock import TAKE_MODES, LockEvent, SaveLock, TakeResult
from .store import Conflict, DocumentStore
from .workspace import ShadowWorkspace

__all__ = [
    "DEFAULT_LINTERS",
    "TAKE_MODES",
    "CommitConflict",
    "Conflict",
    "Diagnostic",
    "DiskBase",
    "DiskEvent",
    "DiskWriteError",
    "DocumentStore",
    "DocumentTooLarge",
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
    "minimal_change",
    "path_to_uri",
    "position_in",
    "uri_to_path",
]
