"""Debounced publishDiagnostics from the shadow linters.

One lint per document however many sessions show it; the result goes to every session
that has the document open. While the model holds a lock, documents with pending shadow
edits that no editor shows get their diagnostics published too (to every session), so
the user sees what the model's edits broke before committing them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from shadowtab.lsp.convert import to_lsp_diagnostic
from shadowtab.lsp.debounce import Debouncer

if TYPE_CHECKING:
    from shadowtab.lsp.peer import Peer
    from shadowtab.lsp.predictions import PredictionService
    from shadowtab.shadow_workspace import Diagnostic, ShadowWorkspace

logger = logging.getLogger(__name__)
# A lint waits this long at most for the predictions in flight to answer. On a machine of
# a few cores the linter's processes and the model's threads slow each other: llama.cpp's
# threads meet at a barrier after every layer, so one descheduled thread stalls the pass.
# The user is waiting for the answer at the cursor; the squiggles can come a moment later.
LINT_YIELD_MAX_S = 2.0
# Where typing in a document never pauses (several people in one shared file), each
# keystroke would restart the debounce and stop the lint of the older text, and the
# squiggles would never come. Past this lag behind the text a lint starts without waiting
# for a pause or for the predictions, and keystrokes let it finish.
LINT_MAX_LAG_S = 3.0


def _to_lsp(diagnostics: list[Diagnostic]) -> list[types.Diagnostic]:
    return [to_lsp_diagnostic(d) for d in diagnostics]


class DiagnosticsPublisher:
    def __init__(
        self,
        workspace_for: Callable[[str], ShadowWorkspace],
        sessions_with: Callable[[str], list[Peer]],
        peers: Collection[Peer],
        predictions: PredictionService,
        debounce_s: float,
    ) -> None:
        # The workspace registry's lookups (the registry owns this publisher: handed its
        # two methods, not itself, so neither module names the other's class).
        self._workspace_for = workspace_for  # the workspace holding a uri
        self._sessions_with = sessions_with  # the sessions whose editors show a uri
        self._peers = peers
        self._predictions = predictions
        self._debouncer = Debouncer(debounce_s, self._start)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._pending_published: set[str] = set()
        # by document: since when its text has changes that no lint started after saw
        self._unlinted_since: dict[str, float] = {}
        self.lint_ms: deque[float] = deque(maxlen=256)  # each finished lint, end to end

    def schedule(self, uri: str, delay_s: float | None = None) -> None:
        """Lint `uri` after the debounce delay; a newer call restarts the delay. A lint
        running meanwhile is of an older text: it stops now (its linters are killed),
        unless the diagnostics already lag LINT_MAX_LAG_S behind the text."""
        self._unlinted_since.setdefault(uri, time.monotonic())
        due = self._lag_left(uri)
        if due <= 0 and uri in self._tasks:
            return  # it publishes soon, then lints what changed meanwhile
        if (running := self._tasks.pop(uri, None)) is not None:
            running.cancel()
        delay = self._debouncer.delay_s if delay_s is None else delay_s
        self._debouncer.trigger(uri, delay_s=max(0.0, min(delay, due)))

    def _lag_left(self, uri: str) -> float:
        """Seconds until the diagnostics of `uri` lag LINT_MAX_LAG_S behind its text (<= 0:
        they do; inf: nothing is waiting to be linted)."""
        since = self._unlinted_since.get(uri)
        return float("inf") if since is None else since + LINT_MAX_LAG_S - time.monotonic()

    def _start(self, uri: str) -> None:
        if (running := self._tasks.pop(uri, None)) is not None:
            running.cancel()  # an older lint of older text: its result is stale
        self._tasks[uri] = asyncio.ensure_future(self._lint_and_publish(uri))

    async def _lint_and_publish(self, uri: str) -> None:
        try:
            workspace = self._workspace_for(uri)
            document = workspace.document(uri)
            if document is None:
                return
            shown = bool(self._sessions_with(uri))
            if not shown and not (workspace.lock.holder == "model" and document.pending):
                self._unlinted_since.pop(uri, None)
                return  # no editor shows it and no pending model edit makes it matter
            if self._lag_left(uri) > 0:
                await self._predictions.quiet(LINT_YIELD_MAX_S)
            version = document.version
            seen_at = time.monotonic()
            started = time.perf_counter()
            report = await workspace.lint_report(uri)
            # Many diagnostics (tens of thousands in a big generated file) take a while
            # to convert: not on the event loop.
            converted = await asyncio.to_thread(_to_lsp, report.diagnostics)
            if report.skipped is None:
                self.lint_ms.append((time.perf_counter() - started) * 1000)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.warning("lint of %s failed: %s", uri, exc)
            self._unlinted_since[uri] = time.monotonic()  # no retry before the lag's bound
            return
        finally:
            if self._tasks.get(uri) is asyncio.current_task():
                del self._tasks[uri]
        self.publish(uri, converted, version)
        if document.version == version:
            self._unlinted_since.pop(uri, None)
        else:  # typed on while it ran, past the lag's bound: lint that too
            self._unlinted_since[uri] = seen_at
            self.schedule(uri)

    def stats(self) -> dict[str, Any]:
        times = list(self.lint_ms)
        if not times:
            return {"runs": 0}
        return {"runs": len(times), "max_ms": round(max(times), 1)}

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        sessions = self._sessions_with(uri)
        if not sessions:
            # Not shown by any editor: only a pending model edit makes it worth showing.
            sessions = list(self._peers)
            self._pending_published.add(uri)
        for session in sessions:
            session_version = session.sync.version_of(uri)
            params = types.PublishDiagnosticsParams(
                uri=uri,
                diagnostics=diagnostics,
                version=session_version if session_version is not None else None,
            )
            session.notify(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)
        del version  # the shadow version is not the editor's; each session gets its own

    def refresh_pending(self, workspace: ShadowWorkspace) -> None:
        """After a lock change: lint pending shadow documents (model holds the lock), or
        clear what was published for them (the user took it back)."""
        pending = set(workspace.pending_uris()) if workspace.lock.holder == "model" else set()
        for uri in pending:
            self.schedule(uri, delay_s=0)
        for uri in list(self._pending_published):
            if uri not in pending and not self._sessions_with(uri):
                self._pending_published.discard(uri)
                self.publish_to_all(uri, [])

    def publish_to_all(self, uri: str, diagnostics: list[types.Diagnostic]) -> None:
        params = types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        for session in list(self._peers):
            session.notify(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)

    def cancel(self, uri: str) -> None:
        self._unlinted_since.pop(uri, None)
        self._debouncer.cancel(uri)
        if (task := self._tasks.pop(uri, None)) is not None:
            task.cancel()

    def close(self) -> None:
        for uri in self._debouncer.pending() + list(self._tasks):
            self.cancel(uri)
