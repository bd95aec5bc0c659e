"""One LSP session: one editor connection with its own pygls server object, sharing the
shadow workspaces, engine and predictor with every other session through the services
it is given (services.py), never through the hub.

Its pygls protocol and server classes: `exit` ends the session (not the process), text
sync goes to the shared shadow workspace instead of pygls' own copy, and positions are
always UTF-16 (what the shadow workspace speaks)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future as ConcurrentFuture
from functools import partial
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import to_fs_path
from shadowtab.lsp.dispatch import INVALID_REQUEST, MessageDispatcher, send_error
from shadowtab.lsp.in_flight import ROUTINE_ERRORS, finish_in_flight
from shadowtab.lsp.progress import EngineProgressReporter
from shadowtab.lsp.text_sync import TextSync
from shadowtab.lsp.transport import (
    AsyncLineReader,
    ByteWriter,
    FramingError,
    OversizedMessage,
    read_messages,
)

if TYPE_CHECKING:
    from pygls.server import ServerErrors
    from shadowtab.inference.next_edit.predictor import Predictor
    from shadowtab.lsp.services import SessionServices
    from shadowtab.shadow_workspace import ShadowWorkspace

logger = logging.getLogger(__name__)

SERVER_NAME = "shadowtab"


class SessionProtocol(LanguageServerProtocol):
    _server: SessionServer

    @property
    def session(self) -> Session:
        return self._server.session

    # pygls wraps these two in functools.lru_cache on the class: the cache keys hold
    # `self`, so up to 128 ended sessions stayed alive. Plain lookups, no cache.
    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        message_type: type[Any] | None = types.METHOD_TO_TYPES.get(method, (None,))[0]
        return message_type

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        result_type: type[Any] | None = types.METHOD_TO_TYPES.get(method, (None, None))[1]
        return result_type

    # pygls runs each step of a generator handler (its own executeCommand, initialize,
    # shutdown: the step that calls ours) under a fresh uuid in _request_futures and never
    # removes it, so a long-lived daemon would keep one per executeCommand and grow.
    # Every future filed there now leaves when it is done.
    def _execute_handler(
        self,
        msg_id: Any,
        handler: Callable[..., Any],
        callback: Callable[..., Any],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(partial(self._forget_future, msg_id))

    def _forget_future(
        self, msg_id: Any, future: asyncio.Future[Any] | ConcurrentFuture[Any]
    ) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """Cancel the requests in flight and answer each of them before the shutdown
        itself (pygls' own version iterates the futures while cancelling them). Requests
        that arrive meanwhile are refused as after a shutdown: it is flagged at once."""
        self._shutdown = True
        yield finish_in_flight, (self, self.msg_id), None

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """End this session only; pygls' default calls sys.exit()."""
        self.session.exit()
        yield from ()

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        general = params.capabilities.general
        if general is not None and general.position_encodings is not None:
            # The shadow workspace speaks UTF-16 (the LSP default): never negotiate another.
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        result = yield from super().lsp_initialize(params)
        return result

    # Text sync: pygls' built-ins keep a copy of every document, then call the handler
    # registered for the method. These only call it: the handler table (lsp/handlers.py)
    # registers text sync like every other method, and sends it into the shadow.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Any:
        yield from self._registered(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        yield from self._registered(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Any:
        yield from self._registered(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def _registered(self, method: str, params: Any) -> Generator[Any, Any, None]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None


class SessionServer(LanguageServer):
    """A pygls LanguageServer bound to one Session (one editor connection)."""

    protocol: SessionProtocol

    def __init__(self, session: Session, name: str, version: str) -> None:
        self.session = session
        super().__init__(name, version, protocol_cls=SessionProtocol)

    def report_server_error(self, error: Exception, source: ServerErrors) -> None:
        # pygls' default pops a window/showMessage per error: a flood of bad input would
        # flood the user. Errors of requests are already answered; log the rest.
        # Bad input (InvalidParams, MethodNotFound...) is the client's and a stale
        # prediction (ContentModified) is routine: DEBUG, one line per message; anything
        # else is ours and worth a warning.
        level = logging.DEBUG if isinstance(error, ROUTINE_ERRORS) else logging.WARNING
        logger.log(level, "session %d: %s: %s", self.session.id, type(error).__name__, error)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("shadowtab")
    except PackageNotFoundError:
        return "0"


class Session:
    """One editor connection; its methods are registered by handlers.register_features."""

    def __init__(self, session_id: int, services: SessionServices) -> None:
        self.id = session_id
        self.workspaces = services.workspaces
        self.lints = services.lints
        self.predictions = services.predictions
        self.lint_cache = services.lint_cache
        self.name_check = services.name_check
        self.commands = services.commands
        self.client_events = services.client_events
        self._engine = services.engine
        self.server = SessionServer(self, SERVER_NAME, _version())
        self.sync = TextSync(
            self,
            services.workspaces,
            services.peers,
            services.lints,
            services.predictions,
            services.text_sync_ms,
        )
        self.progress = EngineProgressReporter(session_id, self.server, services.engine)
        self.clean_exit = False
        self.exit_requested = False
        self._stopped = asyncio.Event()

    def __repr__(self) -> str:
        return f"Session({self.id})"

    @property
    def predictor(self) -> Predictor | None:
        return self._engine.predictor

    @property
    def protocol(self) -> SessionProtocol:
        return self.server.protocol

    @property
    def root(self) -> str | None:
        """The workspace root the editor opened (None before initialize or without one)."""
        workspace = self.protocol._workspace
        if workspace is None:
            return None
        root: str | None = workspace.root_path
        if root is None and workspace.folders:
            root = to_fs_path(next(iter(workspace.folders.values())).uri)
        return root

    def folder_roots(self) -> list[str]:
        """The root and workspace folders the editor opened (local paths, no repeats)."""
        workspace = self.protocol._workspace
        roots: list[str | None] = [self.root]
        if workspace is not None:
            roots += [to_fs_path(folder.uri) for folder in workspace.folders.values()]
        return list(dict.fromkeys(r for r in roots if r))

    def open_document_workspaces(self) -> list[ShadowWorkspace]:
        """The existing workspaces holding the documents this editor has open."""
        found = (self.workspaces.existing_for_uri(uri) for uri in self.sync.open_uris)
        return list({id(ws): ws for ws in found if ws is not None}.values())

    def open_root_workspace(self) -> None:
        """The editor's root folders become shadow workspaces, so each project's files
        share one lock (marker discovery could otherwise split a project)."""
        for root in self.folder_roots():
            try:
                self.workspaces.for_root(root)
            except Exception as exc:  # a root that is no directory: files find their own
                logger.info("session %d: no workspace for %s: %s", self.id, root, exc)

    @property
    def is_shut_down(self) -> bool:
        return bool(self.protocol._shutdown)

    async def run(self, reader: AsyncLineReader, writer: ByteWriter) -> None:
        """Serve until the client disconnects or sends `exit`."""
        self.protocol.set_writer(writer)
        dispatcher = MessageDispatcher(self.protocol, writer)
        reading = asyncio.ensure_future(self._read_loop(reader, dispatcher))
        stopping = asyncio.ensure_future(self._stopped.wait())
        try:
            await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            reading.cancel()
            stopping.cancel()

    async def _read_loop(self, reader: AsyncLineReader, dispatcher: MessageDispatcher) -> None:
        try:
            async for body in read_messages(reader):
                if isinstance(body, OversizedMessage):
                    logger.warning("session %d: %s", self.id, body.describe())
                    send_error(dispatcher.writer, None, INVALID_REQUEST, body.describe())
                else:
                    dispatcher.dispatch(body)
        except FramingError as exc:
            logger.warning("session %d: closing: %s", self.id, exc)
        except (ConnectionError, OSError) as exc:
            logger.info("session %d: connection lost: %s", self.id, exc)

    def stop(self, clean: bool = False) -> None:
        self.clean_exit = clean
        self._stopped.set()

    def exit(self) -> None:
        """The client sent `exit`: end this session (code 1 without a prior shutdown)."""
        self.exit_requested = True
        self.stop(clean=self.is_shut_down)

    def notify(self, method: str, params: Any) -> None:
        if not self._stopped.is_set():
            self.protocol.notify(method, params)

    def on_engine_progress(self) -> None:
        self.progress.update()

    async def cleanup(self) -> None:
        """Cancel this session's work and close the documents it had open."""
        self.stop(self.clean_exit)
        self.progress.close()
        self.predictions.session_ended(self)
        await self.sync.close_all()
