"""The hub: the LSP sessions of one daemon (or of `lsp --standalone`) around the services
they share. It builds those services once (services.build_services, the composition root:
engine host, predictions, workspace registry with its diagnostics, lint cache, commands),
hands each new session the same SessionServices, serves each connection as a session
until it ends, and answers the daemon's control commands, status and stats. No session or
service holds the hub: the services see the sessions as the live set of Peers.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import sys
from typing import TYPE_CHECKING, Any

from shadowtab.lsp.handlers import register_features
from shadowtab.lsp.log_levels import demote_pygls_logging
from shadowtab.lsp.options import HubOptions
from shadowtab.lsp.services import build_services
from shadowtab.lsp.session import Session
from shadowtab.lsp.transport import StreamWriterAdapter, open_stdio

if TYPE_CHECKING:
    from shadowtab.inference.next_edit.predictor import Predictor

__all__ = ["Hub", "HubOptions"]

logger = logging.getLogger(__name__)


class Hub:
    """The sessions of one daemon (or of `lsp --standalone`) and the services they share."""

    def __init__(self, options: HubOptions) -> None:
        self.options = options
        demote_pygls_logging()
        self.sessions: set[Session] = set()
        self.services = build_services(options, self.sessions)
        # The services the hub itself drives, by name (the daemon and tests use them too).
        self.engine_host = self.services.engine
        self.predictions = self.services.predictions
        self.workspaces = self.services.workspaces
        self.commands = self.services.commands
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
        session = Session(self._next_session_id, self.services)
        register_features(session)
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
            "name_check": self._name_check_counts(),
        }

    def next_edit_feedback(self) -> dict[str, Any]:
        """Shown/accepted/rejected/typed-through counts per source and format."""
        predictor = self.engine_host.peek_predictor()
        return predictor.feedback_counts() if predictor is not None else {}

    def _name_check_counts(self) -> dict[str, Any] | None:
        """The name check's counters (None when it is off)."""
        name_check = self.services.name_check
        return name_check.counts() if name_check is not None else None

    def stats(self) -> dict[str, Any]:
        return {
            "sessions": len(self.sessions),
            "engine": self.engine_host.stats(),
            "workspaces": self.workspaces.describe(),
            "client_events": dict(self.services.client_events),
            "text_sync": self._text_sync_stats(),
            "lint": self.workspaces.diagnostics.stats(),
            "predictions_expired": self.predictions.expired,
        }

    def _text_sync_stats(self) -> dict[str, Any]:
        times = list(self.services.text_sync_ms)
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
        if self.services.name_check is not None:
            self.services.name_check.close()
        await self.workspaces.close()
        await asyncio.to_thread(self.engine_host.close)
