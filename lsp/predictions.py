"""Runs predictor calls for sessions: in worker threads (they block), cancellable by
$/cancelRequest and by the next keystroke in the same document, with debounced warming.

Warming runs in its own thread (warming.py), at low priority inside the engine (a real
request interrupts its pass in flight), and is not cancelled by keystrokes: what it
prefilled for the last keystroke's prompt is the prefix of the next one's (the formats
put the part that changes while typing last), so it carries on until a newer warm of
the same document takes over where it stopped. The cursor's arrival at a new place
starts a full warm at once, and the first keys there queue behind it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from pygls.exceptions import JsonRpcContentModified
from shadowtab.inference.engines.api import CancelEvent
from shadowtab.inference.next_edit.events import Edit
from shadowtab.inference.next_edit.predictor import PredictionRequest
from shadowtab.lsp.debounce import Debouncer
from shadowtab.lsp.project_context import StableContext
from shadowtab.lsp.warming import WarmRunner
from shadowtab.shadow_workspace import Position

if TYPE_CHECKING:
    from shadowtab.lsp.engine_host import EngineHost
    from shadowtab.lsp.peer import Peer

T = TypeVar("T")
RECENT_EDITS = 16


class PredictionCancelled(JsonRpcContentModified):
    """A newer keystroke made the prediction stale (LSP: ContentModified)."""


class PredictionExpired(JsonRpcContentModified):
    """The prediction waited too long for a turn with the model (other editors' requests
    ahead of it): by then the user has moved on, so it is dropped unanswered by the model
    rather than queued without bound (LSP: ContentModified, which editors drop quietly)."""


@dataclass(frozen=True)
class CursorHint:
    """Where an editor said its cursor rests (shadowtab/cursorMoved), and when (the edit
    history's clock)."""

    time: float
    line: int
    character: int


class PredictionService:
    def __init__(
        self,
        engine: EngineHost,
        warm_debounce_s: float,
        max_wait_s: float = 10.0,
        context_tokens: int = 0,
    ) -> None:
        self._engine = engine  # its predictor is built on first use
        self.max_wait_s = max_wait_s
        self.context = StableContext(context_tokens)  # the project's code in the prompts
        self.expired = 0  # predictions dropped after waiting max_wait_s for a worker
        self._cancels: dict[str, set[threading.Event]] = defaultdict(set)
        self._warming = Debouncer(warm_debounce_s, self._start_warm)
        self._cursor_hints: dict[str, CursorHint] = {}  # by document, the newest
        self._next_edit_sessions: set[int] = set()  # see note_next_edit_client
        self.warms = WarmRunner(_is_warm_cancellation)
        # Engine calls are serialized inside the engine; two workers let a cheap call
        # (a FixedPredictor, a cancelled one) pass a long one, or wait for the same one
        # (ghost text and next edit of one keystroke share a computation).
        self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="shadowtab-predict")
        self._running = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def on_document_changed(self, uri: str) -> None:
        """A keystroke: every prediction in flight for `uri` is stale."""
        for event in self._cancels.pop(uri, ()):
            event.set()

    async def run(self, uri: str, call: Callable[[threading.Event], T]) -> T:
        """Run `call(cancel)` in a worker; ContentModified when a keystroke cancelled it,
        CancelledError (answered RequestCancelled by pygls) on $/cancelRequest."""
        cancel = CancelEvent()  # an inline engine stops the pass in flight when it is set
        self._cancels[uri].add(cancel)
        loop = asyncio.get_running_loop()
        self._started()
        try:
            result = await loop.run_in_executor(
                self._executor, self._in_time(call, time.monotonic()), cancel
            )
        except asyncio.CancelledError:
            cancel.set()
            raise
        except Exception as exc:
            self.expired += isinstance(exc, PredictionExpired)
            if cancel.is_set() and _is_cancellation(exc):
                raise PredictionCancelled(f"{uri} changed; prediction dropped") from exc
            raise
        finally:
            self._cancels.get(uri, set()).discard(cancel)
            self._finished()
        if cancel.is_set():
            raise PredictionCancelled(f"{uri} changed; prediction dropped")
        return result

    def _started(self) -> None:
        self._running += 1
        self._idle.clear()

    def _finished(self) -> None:
        self._running -= 1
        if self._running == 0:
            self._idle.set()

    async def quiet(self, limit_s: float) -> bool:
        """Wait until no prediction runs, `limit_s` at most; True when none runs."""
        try:
            await asyncio.wait_for(self._idle.wait(), limit_s)
        except TimeoutError:
            return False
        return True

    def _in_time(
        self, call: Callable[[threading.Event], T], queued_at: float
    ) -> Callable[[threading.Event], T]:
        """`call`, unless it waited more than max_wait_s for a worker thread."""

        def run_or_expire(cancel: threading.Event) -> T:
            if cancel.is_set():  # a newer keystroke while it queued: nothing to compute
                raise PredictionCancelled("superseded before it ran")
            waited = time.monotonic() - queued_at
            if waited > self.max_wait_s:
                raise PredictionExpired(
                    f"prediction dropped: it waited {waited:.1f} s for the model "
                    f"(limit {self.max_wait_s:g} s, [limits] prediction_wait_s)"
                )
            return call(cancel)

        return run_or_expire

    def request_for(
        self, session: Peer, uri: str, line: int, character: int, max_candidates: int
    ) -> PredictionRequest:
        """A PredictionRequest from the shadow text (ValueError: not open in the session)."""
        return self._request_maker(session, uri, line, character, max_candidates)()

    def _request_maker(
        self,
        session: Peer,
        uri: str,
        line: int,
        character: int,
        max_candidates: int,
    ) -> Callable[[], PredictionRequest]:
        """What request_for gives, taken now; the text (O(file) to join) and the
        project's snippets (an index query) are made when it is called, which a worker
        thread can do."""
        document = session.sync.document(uri)
        workspace = session.sync.workspace_of(uri)
        if document is None or workspace is None:
            raise ValueError(f"document not open: {uri}")
        history = workspace.history.recent(uri, limit=RECENT_EDITS)
        path = str(document.path)
        language_id = document.language_id
        cursor = document.offset_at(Position(line, character))
        events = [Edit(path, e.time, e.offset, e.old_text, e.new_text) for e in history]
        text = document.snapshot()
        asked_at = time.time()  # the events' clock: a pause since the last edit is seen
        index = workspace.index

        def make() -> PredictionRequest:
            joined = text()
            return PredictionRequest(
                path=path,
                language_id=language_id,
                text=joined,
                cursor=cursor,
                events=events,
                max_candidates=max_candidates,
                asked_at=asked_at,
                context=self.context.snippets(index, path, joined, cursor),
            )

        return make

    def schedule_warm(self, session: Peer, uri: str) -> None:
        """At a keystroke in `uri`: ghost text's prompt follows the cursor in the KV cache
        now (a few tokens a keystroke); the full warm starts once typing pauses. Either
        stops the warm of `uri` running before it after its current batch."""
        if self._engine.predictor is None:
            return
        self._submit_warm(uri, session, follow=True)
        self._warming.trigger(uri, session)

    def note_cursor(self, session: Peer, uri: str, line: int, character: int) -> None:
        """The editor's cursor moved without an edit (shadowtab/cursorMoved): once it
        rests, warm the prompt at the new place, so that the first keystrokes there
        find the region around them prefilled."""
        if self._engine.predictor is None:
            return
        self._cursor_hints[uri] = CursorHint(time.time(), line, character)
        # at once: the editor sends the hint once the cursor has rested, and the first
        # keys there (each resetting the pause's debounce) must not hold this warm back
        self._warming.cancel(uri)
        self._submit_warm(uri, session, follow=False)

    def note_next_edit_client(self, session: Peer) -> None:
        """`session`'s editor speaks shadowtab's next-edit protocol (it asked a next edit,
        or said where its cursor rests, as the editor integrations that ask next edits
        do): warms in its documents prefill the next-edit prompt too."""
        self._next_edit_sessions.add(session.id)

    def session_ended(self, session: Peer) -> None:
        self._next_edit_sessions.discard(session.id)

    def _next_edits_wanted(self, session: Peer, uri: str) -> bool:
        """Whether an editor showing `uri` speaks the next-edit protocol. One that only
        asks ghost text (inlineCompletion) never sends the next-edit prompt: prefilling
        it would cost the engine a long pass at every pause and a resident prefix."""
        document = session.sync.document(uri)
        editors = document.editors if document is not None else (session.id,)
        return not self._next_edit_sessions.isdisjoint(editors)

    def forget(self, uri: str) -> None:
        """`uri` was closed: its cursor hint goes."""
        self._cursor_hints.pop(uri, None)

    def _start_warm(self, uri: str, session: Peer) -> None:
        self._submit_warm(uri, session, follow=False)

    def _submit_warm(self, uri: str, session: Peer, follow: bool) -> None:
        predictor = self._engine.predictor
        if predictor is None:
            return
        try:
            make_request = self._warm_request(session, uri)
        except Exception:
            return
        if make_request is None:
            return
        full = not follow and self._next_edits_wanted(session, uri)
        warm = predictor.warm if full else predictor.follow
        # The request's text is joined in the warm thread: not on the event loop.
        self.warms.submit(uri, lambda cancel: warm(make_request(), cancel), follow=follow)

    def _warm_request(self, session: Peer, uri: str) -> Callable[[], PredictionRequest] | None:
        document = session.sync.document(uri)
        workspace = session.sync.workspace_of(uri)
        if document is None or workspace is None:
            return None
        history = workspace.history.recent(uri, limit=1)
        hint = self._cursor_hints.get(uri)
        if hint is not None and (not history or hint.time >= history[-1].time):
            # the cursor moved after the last edit: the user is about to type there
            return self._request_maker(session, uri, hint.line, hint.character, 1)
        cursor = history[-1].offset + len(history[-1].new_text) if history else 0
        cursor = max(0, min(cursor, document.length))
        position = document.position_at(cursor)
        return self._request_maker(session, uri, position.line, position.character, 1)

    def close(self) -> None:
        self._warming.close()
        for events in self._cancels.values():
            for event in events:
                event.set()
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.warms.close()


def _is_cancellation(exc: BaseException) -> bool:
    from shadowtab.inference.engines.api import Cancelled

    return isinstance(exc, Cancelled)


def _is_warm_cancellation(exc: BaseException) -> bool:
    return isinstance(exc, PredictionCancelled) or _is_cancellation(exc)
