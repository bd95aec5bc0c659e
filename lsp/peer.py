"""A session as the shared services reach it: `Peer` (one editor connection) and its
`Buffers` (the text sync's open documents and echoes). They are the services' only
protocols, and they are there to break one cycle, not to allow a second implementation
(Session is the only Peer, TextSync the only Buffers; no test double stands in for them).
(transport.py's reader and writer protocols are the other kind: socket and stdio.)

The cycle: a Session owns its TextSync and is given the shared services (workspace
registry, diagnostics, predictions, commands); each of those hands sessions their
changes and notifications (push an edit, publish diagnostics, warm at the cursor), so
naming the Session class there would close a cycle through session.py and every
service, modules then read and typed only together (tests/packaging/test_layering.py
forbids it, type-only imports included). The services need little of a session (its
id, its pygls protocol, notify, its buffers), so they name these protocols instead;
`Buffers` is a protocol too because TextSync itself names `Peer` (the session it
serves), so `Peer.sync: TextSync` would close the same cycle through text_sync.py.
This module imports nothing else from lsp/, so any module there may depend on it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pygls.protocol import LanguageServerProtocol
    from shadowtab.shadow_workspace import ShadowDocument, ShadowWorkspace, TextChange


class Buffers(Protocol):
    """A session's text sync as others see it: its open documents and the echoes of the
    changes pushed into its editor's buffers (lsp.text_sync.TextSync)."""

    def document(self, uri: str) -> ShadowDocument | None: ...

    def workspace_of(self, uri: str) -> ShadowWorkspace | None: ...

    def version_of(self, uri: str) -> int | None: ...

    def expect_echo(self, uri: str, change: TextChange) -> list[TextChange]: ...

    def drop_echo(self, uri: str, echo: object) -> None: ...


class Peer(Protocol):
    """One editor connection, as the shared services reach it (lsp.session.Session)."""

    @property
    def id(self) -> int: ...

    @property
    def sync(self) -> Buffers: ...

    @property
    def protocol(self) -> LanguageServerProtocol: ...

    def notify(self, method: str, params: Any) -> None: ...


def peers_showing(peers: Iterable[Peer], document: ShadowDocument) -> list[Peer]:
    """The sessions among `peers` whose editors show `document`."""
    return [peer for peer in peers if peer.id in document.editors]
