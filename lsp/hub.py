"""The hub: what all LSP sessions of one daemon share (shadow workspaces, the engine, the
predictor, the save locks), plus the control commands the daemon exposes over its socket.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import sys
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shadowtab.inference.next_edit.token_confidence import DEFAULT_TOKEN_THRESHOLD
from shadowtab.lsp.commands import CommandRunner
from shadowtab.lsp.engine_host import EngineHost
from shadowtab.lsp.log_levels import demote_pygls_logging
from shadowtab.lsp.prediction_check import LintCache
from shadowtab.lsp.predictions import PredictionService
from shadowtab.lsp.session import Session
from shadowtab.lsp.transport import StreamWriterAdapter, open_stdio
from shadowtab.lsp.workspace_registry import WorkspaceRegistry
from shadowtab.shadow_workspace.linting import DEFAULT_LINT_MAX_MB

if TYPE_CHECKING:
    from shadowtab.inference import EngineOptions
    from shadowtab.inference.engines.worker import WorkerPolicy
    from shadowtab.inference.next_edit.predictor import Predictor
    from shadowtab.shadow_workspace import LinterSpec

logger = logging.getLogger(__name__)


@dataclass
class HubOptions:
    state_dir: Path
    engine: EngineOptions
    linters: dict[str, LinterSpec] = field(default_factory=dict)
    lint_debounce_ms: int = 150
    warm_debounce_ms: int = 100
    predictor: Predictor | None = None
    max_document_mb: float = 50  # larger documents are refused with a message
    lint_max_mb: float = DEFAULT_LINT_MAX_MB  # larger documents are not linted
    # a prediction still waiting for the model after this long is dropped (ContentModified)
    prediction_wait_s: float = 10.0
    next_edit_format: str = "auto"
    min_confidence: float = 0.0
    token_threshold: float = DEFAULT_TOKEN_THRESHOLD
    worker_policy: WorkerPolicy | None = None  # None: the defaults (tests shorten them)


class Hub:
    """Shared state of every session; one per daemon (or per `lsp --standalone`)."""

    def __init__(self, options: HubOptions) -> None:
        self.options = options
        demote_pygls_logging()
        self.engine_host = EngineHost(
            options.engine,
            options.predictor,
            options.next_edit_format,
            options.min_confidence,
            options.worker_policy,
            options.token_threshold,
        )
        self.workspaces = WorkspaceRegistry(self, options)
        self.sessions: set[Session] = set()
        self.commands = CommandRunner(self)
        self.predictions = PredictionService(
            self, options.warm_debounce_ms / 1000, options.prediction_wait_s
        )
        self.client_events: Counter[str] = Counter()  # didShowInlineEdit, accepted edits...
        # server time of each keystroke (shadow edit + forwarding it; echoes not counted)
        self.text_sync_ms: deque[float] = deque(maxlen=4096)
        self.lint_cache = LintCache()  # the unchanged text's lint, between two keystrokes
        self._next_session_id = 1
        self._closed = False

    @property
    def predictor(self) -> Predictor | None:
        return self.engine_host.predictor

    async def start(self) -> None:
        """Start loading the engine in a background thread; returns at once."""
        self.engine_host.start(asyncio.get_running_loop(), self._on_engine_progress)

    def _on_engine_progress(self) -> None:
        for session in list(self.sessions):
            session.on_engine_progress()

    def _new_session(self) -> Session:
        session = Session(self, self._next_session_id)
        self._next_session_id += 1
        self.sessions.add(session)
        return session

    async def serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Run one LSP session over one socket connection, until it ends."""
        session = self._new_session()
        try:
            await session.run(reader, StreamWriterAdapter(writer))
        finally:
            await self._end_session(session)
            writer.close()

    async def serve_stdio(self) -> bool:
        """`shadowtab lsp --standalone`: one session on this process's stdin/stdout.
        False when the client sent `exit` without `shutdown` (exit code 1 per LSP)."""
        reader, writer = await open_stdio(sys.stdin.buffer, sys.stdout.buffer)
        session = self._new_session()
        try:
            await session.run(reader, writer)
        finally:
            await self._end_session(session)
        return session.clean_exit or not session.exit_requested

    async def _end_session(self, session: Session) -> None:
        self.sessions.discard(session)
        await session.cleanup()

    def control_commands(self) -> set[str]:
        return set(self.commands.control_names())

    async def control(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        """A control-socket command. KeyError: unknown cmd; ValueError: bad args."""
        return await self.commands.control(cmd, args)

    def status(self) -> dict[str, Any]:
        return {
            "sessions": len(self.sessions),
            "engine": self.engine_host.status(),
            "workspaces": self.workspaces.describe(),
            "next_edit": self.next_edit_feedback(),
        }

    def next_edit_feedback(self) -> dict[str, Any]:
        """Shown/accepted/rejected/typed-through counts per source and format."""
        counts = getattr(self.engine_host.peek_predictor(), "feedback", None)
        return counts.to_dict() if counts is not None else {}

    def stats(self) -> dict[str, Any]:
        return {
            "sessions": len(self.sessions),
            "engine": self.engine_host.stats(),
            "workspaces": self.workspaces.describe(),
            "client_events": dict(self.client_events),
            "text_sync": self._text_sync_stats(),
            "lint": self.workspaces.diagnostics.stats(),
            "predictions_expired": self.predictions.expired,
        }

    def _text_sync_stats(self) -> dict[str, Any]:
        times = list(self.text_sync_ms)
        if not times:
            return {"changes": 0}
        return {"changes": len(times), "p50_ms": round(statistics.median(times), 3)}

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for session in list(self.sessions):
            session.stop()
        for session in list(self.sessions):
            await self._end_session(session)
        self.predictions.close()
        await self.workspaces.close()
        await asyncio.to_thread(self.engine_host.close)
