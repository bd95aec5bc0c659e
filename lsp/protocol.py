"""pygls protocol and server classes for one session: `exit` ends the session (not the
process), text sync goes to the shared shadow workspace instead of pygls' own copy, and
positions are always UTF-16 (what the shadow workspace speaks)."""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

if TYPE_CHECKING:
    from pygls.server import ServerErrors
    from shadowtab.lsp.session import Session

logger = logging.getLogger(__name__)


class SessionProtocol(LanguageServerProtocol):
    _server: SessionServer

    @property
    def session(self) -> Session:
        return self._server.session

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

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self.session.sync.did_open(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self.session.sync.did_change(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self.session.sync.did_close(params)


class SessionServer(LanguageServer):
    """A pygls LanguageServer bound to one Session (one editor connection)."""

    protocol: SessionProtocol

    def __init__(self, session: Session, name: str, version: str) -> None:
        self.session = session
        super().__init__(name, version, protocol_cls=SessionProtocol)

    def report_server_error(self, error: Exception, source: ServerErrors) -> None:
        # pygls' default pops a window/showMessage per error: a flood of bad input would
        # flood the user. Errors of requests are already answered; log the rest.
        logger.warning("session %d: %s: %s", self.session.id, type(error).__name__, error)
