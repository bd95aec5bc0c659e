"""The few services an LSP session and its collaborators are given, each as a small
protocol: the hub, the workspace registry, the publisher and the prediction service
implement them, and the session and its parts depend on these, never on the hub.

This module imports nothing else from lsp/, so any module there may depend on it without
closing a cycle (tests/packaging/test_layering.py checks, type-only imports included)."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from collections import Counter, deque

    from lsprotocol import types
    from pygls.protocol import LanguageServerProtocol
    from shadowtab.inference.next_edit.predictor import PredictionRequest, Predictor
    from shadowtab.shadow_workspace import Diagnostic, ShadowDocument, ShadowWorkspace, TextChange

T = TypeVar("T")

# A lock or shadow command: its arguments in, its reply out (the control socket's shape).
CommandHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
LintText = Callable[[str], Awaitable[list["Diagnostic"]]]


class Buffers(Protocol):
    """A session's text sync as others see it: its open documents and the echoes of the
    changes pushed into its editor's buffers."""

    def document(self, uri: str) -> ShadowDocument | None: ...

    def workspace_of(self, uri: str) -> ShadowWorkspace | None: ...

    def version_of(self, uri: str) -> int | None: ...

    def expect_echo(self, uri: str, change: TextChange) -> list[TextChange]: ...

    def drop_echo(self, uri: str, echo: object) -> None: ...


class Peer(Protocol):
    """One editor connection, as the shared services reach it."""

    @property
    def id(self) -> int: ...

    @property
    def sync(self) -> Buffers: ...

    @property
    def protocol(self) -> LanguageServerProtocol: ...

    def notify(self, method: str, params: Any) -> None: ...


class Peers(Protocol):
    """The sessions of one daemon."""

    def peers(self) -> list[Peer]: ...

    def peers_showing(self, document: ShadowDocument) -> list[Peer]: ...


class WorkspaceLookup(Protocol):
    """Which shadow workspace holds a file, and who shows its documents."""

    def for_uri(self, uri: str) -> ShadowWorkspace: ...

    def for_root(self, root: str) -> ShadowWorkspace: ...

    def existing_for_uri(self, uri: str) -> ShadowWorkspace | None: ...

    def containing(self, path: Path) -> ShadowWorkspace | None: ...

    def all(self) -> list[ShadowWorkspace]: ...

    def sessions_with(self, uri: str) -> list[Peer]: ...

    def announce_lock(self, workspace: ShadowWorkspace) -> None: ...


class Lints(Protocol):
    """Debounced linting and publishDiagnostics."""

    def schedule(self, uri: str, delay_s: float | None = None) -> None: ...

    def cancel(self, uri: str) -> None: ...

    def publish(
        self, uri: str, diagnostics: list[types.Diagnostic], version: int | None
    ) -> None: ...


class ChangeListener(Protocol):
    """What a keystroke tells the predictions: stale ones drop, warming restarts; and
    where the cursor rests (warming follows it), until the document closes."""

    def on_document_changed(self, uri: str) -> None: ...

    def schedule_warm(self, peer: Peer, uri: str) -> None: ...

    def note_cursor(self, peer: Peer, uri: str, line: int, character: int) -> None: ...

    def forget(self, uri: str) -> None: ...


class Predictions(ChangeListener, Protocol):
    """Predictor calls in worker threads, cancelled when their text goes stale."""

    async def run(self, uri: str, call: Callable[[threading.Event], T]) -> T: ...

    def request_for(
        self, peer: Peer, uri: str, line: int, character: int, max_candidates: int
    ) -> PredictionRequest: ...

    async def quiet(self, limit_s: float) -> bool: ...


class LintMemo(Protocol):
    """Diagnostics of recently linted texts, shared by every session."""

    async def lint(self, path: str, text: str, lint: LintText) -> list[Diagnostic]: ...

    def forget(self, path: str, text: str) -> None: ...


class PredictorSource(Protocol):
    """The predictor, built on first use (None: the engine is off)."""

    @property
    def predictor(self) -> Predictor | None: ...


class EngineState(PredictorSource, Protocol):
    """The engine's load state, for the editor's progress and failure messages."""

    @property
    def state(self) -> str: ...

    @property
    def progress(self) -> float: ...

    @property
    def error(self) -> str | None: ...

    def status(self) -> dict[str, Any]: ...


class EditorCommands(Protocol):
    """The lock and shadow commands editors run with workspace/executeCommand."""

    def editor_names(self) -> list[str]: ...

    async def for_editor(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]: ...


@dataclass(frozen=True)
class SessionServices:
    """Everything a session uses of what the sessions share; the hub builds it."""

    workspaces: WorkspaceLookup
    peers: Peers
    lints: Lints
    predictions: Predictions
    lint_cache: LintMemo
    engine: EngineState
    commands: EditorCommands
    client_events: Counter[str]  # didShowInlineEdit, accepted edits...
    text_sync_ms: deque[float]  # server time of each keystroke
