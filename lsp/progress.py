"""Work-done progress ($/progress) shown in the editor while the model loads, and again
each time a crashed engine worker reloads it; a failed load is shown once per session as
an error message with its reason (editors would otherwise only see empty suggestions)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer
    from shadowtab.lsp.engine_host import EngineHost

logger = logging.getLogger(__name__)

PROGRESS_TITLE = "shadowtab: loading model"


class EngineProgressReporter:
    """Begins a progress when the session is initialized and the engine still loads,
    reports percentages, ends it when the engine is ready or failed."""

    def __init__(self, session_id: int, server: LanguageServer, engine: EngineHost) -> None:
        self.session_id = session_id
        self.server = server
        self.engine = engine
        self.token = f"shadowtab-engine-load-{session_id}"
        self._loads = 0  # pygls keeps ended tokens registered: each reload takes a new one
        self._active = False
        self._last_percent = -1
        self._task: asyncio.Task[None] | None = None
        self._initialized = False
        self._failure_shown: str | None = None  # the error last shown, once per failure

    def on_initialized(self) -> None:
        self._initialized = True
        self.begin_if_loading()
        self.show_failure()

    def show_failure(self) -> None:
        """window/showMessage with the load failure's reason, once per distinct failure."""
        host = self.engine
        if not self._initialized or host.state != "failed" or host.error == self._failure_shown:
            return
        self._failure_shown = host.error
        self.server.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Error, message=f"shadowtab: model failed: {host.error}"
            )
        )

    def begin_if_loading(self) -> None:
        if not self._initialized or self._task is not None:
            return
        if self.engine.state != "loading" or not self._client_supports():
            return
        self._task = asyncio.ensure_future(self._begin())

    def _client_supports(self) -> bool:
        caps = self.server.protocol.client_capabilities
        window = getattr(caps, "window", None)
        return bool(window is not None and window.work_done_progress)

    async def _begin(self) -> None:
        self._loads += 1
        if self._loads > 1:
            self.token = f"shadowtab-engine-load-{self.session_id}-{self._loads}"
        try:
            await self.server.work_done_progress.create_async(self.token)
        except Exception as exc:  # the client refused the token: no progress, no harm
            logger.info("session %d: no progress token: %s", self.session_id, exc)
            return
        self._active = True
        self.server.work_done_progress.begin(
            self.token,
            types.WorkDoneProgressBegin(
                title=PROGRESS_TITLE, message=self._reload_reason(), percentage=0, cancellable=False
            ),
        )
        self.update()

    def _reload_reason(self) -> str | None:
        worker = self.engine.status().get("worker") or {}
        crash = worker.get("last_crash")
        return f"reloading: the engine worker {crash}" if crash else None

    def update(self) -> None:
        self.show_failure()
        if not self._active:
            self.begin_if_loading()  # the engine started loading after initialize
            return
        host = self.engine
        if host.state == "loading":
            percent = int(host.progress * 100)
            if percent != self._last_percent:
                self._last_percent = percent
                self.server.work_done_progress.report(
                    self.token, types.WorkDoneProgressReport(percentage=percent)
                )
            return
        message = "model ready" if host.state == "ready" else f"model failed: {host.error}"
        self._end(message)

    def _end(self, message: str) -> None:
        self._active = False
        self._task = None  # a later reload (a restarted worker) begins a new progress
        self._last_percent = -1
        self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))

    def close(self) -> None:
        self._active = False
        if self._task is not None:
            self._task.cancel()
